"""``OpenAIInstrumentor``: the ``BaseInstrumentor`` entry point (imports ``openai`` only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry
from .._base import OtelAgentsInstrumentor


class OpenAIInstrumentor(OtelAgentsInstrumentor):
    """Instruments the ``openai`` Python SDK; see :mod:`otel_agents.instrumentors.openai`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores the SDK.
    """

    framework = "openai"
    _installation: Any = None

    def _install(self, telemetry: Telemetry) -> None:
        from ._wiring import Installation  # imports openai

        self._installation = Installation(telemetry)

    def _remove(self) -> None:
        if self._installation is not None:
            self._installation.remove()
            self._installation = None
