"""``SmolagentsInstrumentor``: the ``BaseInstrumentor`` entry point (imports smolagents only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry
from .._base import OtelAgentsInstrumentor


class SmolagentsInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``smolagents`` 1.x (>= 1.26); see :mod:`otel_agents.instrumentors.smolagents`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` puts smolagents' functions back.
    """

    framework = "smolagents"
    _installation: Any = None

    def _install(self, telemetry: Telemetry) -> None:
        from ._wiring import Installation  # imports smolagents

        self._installation = Installation(telemetry)

    def _remove(self) -> None:
        if self._installation is not None:
            self._installation.remove()
            self._installation = None
