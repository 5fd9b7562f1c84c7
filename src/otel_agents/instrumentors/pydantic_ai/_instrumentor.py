"""``PydanticAIInstrumentor``: the ``BaseInstrumentor`` entry point (imports pydantic-ai only in ``_install``)."""

from __future__ import annotations

from .._base import OtelAgentsInstrumentor


class PydanticAIInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``pydantic-ai-slim`` 2.x; see :mod:`otel_agents.instrumentors.pydantic_ai`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores pydantic-ai exactly.
    """

    framework = "pydantic_ai"

    def open_runs(self) -> int:
        """How many runs' agent spans are open now (the run-id index; bounded)."""
        return len(self._installation.tracker) if self._installation is not None else 0
