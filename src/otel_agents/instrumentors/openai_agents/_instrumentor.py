"""``OpenAIAgentsInstrumentor``: the ``BaseInstrumentor`` entry point (imports the SDK only in ``_install``)."""

from __future__ import annotations

from .._base import OtelAgentsInstrumentor


class OpenAIAgentsInstrumentor(OtelAgentsInstrumentor):
    """Instruments the OpenAI Agents SDK (``openai-agents``); see :mod:`otel_agents.instrumentors.openai_agents`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None, settings=None)``;
    ``uninstrument()`` removes our processor and wrappers and nothing else.
    """

    framework = "openai_agents"

    def open_spans(self) -> int:
        """How many SDK spans and traces our processor is tracking now (bounded; 0 between runs)."""
        return len(self._installation.processor) if self._installation is not None else 0
