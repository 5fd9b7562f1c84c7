"""``AutoGenAgentChatInstrumentor``: the ``BaseInstrumentor`` entry point (the base's ``_install`` builds
``_wiring.Installation``, which imports AutoGen)."""

from __future__ import annotations

from .._base import OtelAgentsInstrumentor


class AutoGenAgentChatInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``autogen-agentchat`` 0.7; see :mod:`otel_agents.instrumentors.autogen_agentchat`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores AutoGen exactly (autogen-core's own spans included).
    """

    framework = "autogen_agentchat"

    def open_runs(self) -> int:
        """How many agent/team spans are open now."""
        return self._installation.runs.open if self._installation is not None else 0
