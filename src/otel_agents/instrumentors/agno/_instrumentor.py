"""``AgnoInstrumentor``: the ``BaseInstrumentor`` entry point (imports Agno only in ``_install``)."""

from __future__ import annotations

from .._base import OtelAgentsInstrumentor


class AgnoInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``agno`` 3.x; see :mod:`otel_agents.instrumentors.agno`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores Agno exactly.
    """

    framework = "agno"

    def open_runs(self) -> int:
        """How many agent/team/workflow/step spans are open now."""
        return len(self._installation.runs.open) if self._installation is not None else 0
