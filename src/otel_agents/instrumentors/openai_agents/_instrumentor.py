"""``OpenAIAgentsInstrumentor``: the ``BaseInstrumentor`` entry point (imports the SDK only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry
from .._base import OtelAgentsInstrumentor


class OpenAIAgentsInstrumentor(OtelAgentsInstrumentor):
    """Instruments the OpenAI Agents SDK (``openai-agents``); see :mod:`otel_agents.instrumentors.openai_agents`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None, settings=None)``;
    ``uninstrument()`` removes our processor and wrappers and nothing else.
    """

    framework = "openai_agents"
    _installation: Any = None

    def _install(self, telemetry: Telemetry) -> None:
        from ._wiring import Installation  # imports the SDK

        self._installation = Installation(telemetry)

    def _remove(self) -> None:
        if self._installation is not None:
            self._installation.remove()
            self._installation = None

    def open_spans(self) -> int:
        """How many SDK spans and traces our processor is tracking now (bounded; 0 between runs)."""
        return len(self._installation.processor) if self._installation is not None else 0
