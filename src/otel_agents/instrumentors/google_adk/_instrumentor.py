"""``GoogleADKInstrumentor``: the ``BaseInstrumentor`` entry point (imports ADK only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry
from .._base import OtelAgentsInstrumentor


class GoogleADKInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``google-adk`` 2.x; see :mod:`otel_agents.instrumentors.google_adk`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` takes our plugin out of ADK.
    """

    framework = "google_adk"
    _installation: Any = None

    def _install(self, telemetry: Telemetry) -> None:
        from ._wiring import Installation  # imports google.adk

        self._installation = Installation(telemetry)

    def _remove(self) -> None:
        if self._installation is not None:
            self._installation.remove()
            self._installation = None

    def open_runs(self) -> int:
        """How many ADK invocations have spans open now."""
        return len(self._installation.hooks.invocations) if self._installation is not None else 0
