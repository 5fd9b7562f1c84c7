"""``OpenAIInstrumentor``: the ``BaseInstrumentor`` entry point (imports ``openai`` only in ``_install``)."""

from __future__ import annotations

from .._base import OtelAgentsInstrumentor


class OpenAIInstrumentor(OtelAgentsInstrumentor):
    """Instruments the ``openai`` Python SDK; see :mod:`otel_agents.instrumentors.openai`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores the SDK.
    """

    framework = "openai"
