"""``SmolagentsInstrumentor``: the ``BaseInstrumentor`` entry point (imports smolagents only in ``_install``)."""

from __future__ import annotations

from .._base import OtelAgentsInstrumentor


class SmolagentsInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``smolagents`` 1.x (>= 1.26); see :mod:`otel_agents.instrumentors.smolagents`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` puts smolagents' functions back.
    """

    framework = "smolagents"
