"""``AgnoInstrumentor``: the ``BaseInstrumentor`` entry point (imports Agno only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry
from .._base import OtelAgentsInstrumentor


class AgnoInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``agno`` 3.x; see :mod:`otel_agents.instrumentors.agno`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores Agno exactly.
    """

    framework = "agno"
    _installation: Any = None

    def _install(self, telemetry: Telemetry) -> None:
        from ._wiring import Installation  # imports agno

        self._installation = Installation(telemetry)

    def _remove(self) -> None:
        if self._installation is not None:
            self._installation.remove()
            self._installation = None

    def open_runs(self) -> int:
        """How many agent/team/workflow/step spans are open now."""
        return len(self._installation.runs.open) if self._installation is not None else 0
