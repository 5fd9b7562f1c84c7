"""``AnthropicInstrumentor``: the ``BaseInstrumentor`` entry point (imports ``anthropic`` only in ``_install``)."""

from __future__ import annotations

from .._base import OtelAgentsInstrumentor


class AnthropicInstrumentor(OtelAgentsInstrumentor):
    """Instruments the ``anthropic`` Python SDK; see :mod:`otel_agents.instrumentors.anthropic`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores the SDK (its own request spans included).
    """

    framework = "anthropic"
