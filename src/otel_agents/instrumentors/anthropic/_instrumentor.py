"""``AnthropicInstrumentor``: the ``BaseInstrumentor`` entry point (imports ``anthropic`` only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry
from .._base import OtelAgentsInstrumentor


class AnthropicInstrumentor(OtelAgentsInstrumentor):
    """Instruments the ``anthropic`` Python SDK; see :mod:`otel_agents.instrumentors.anthropic`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores the SDK (its own request spans included).
    """

    framework = "anthropic"
    _installation: Any = None

    def _install(self, telemetry: Telemetry) -> None:
        from ._wiring import Installation  # imports anthropic

        self._installation = Installation(telemetry)

    def _remove(self) -> None:
        if self._installation is not None:
            self._installation.remove()
            self._installation = None
