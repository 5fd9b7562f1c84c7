"""``AutoGenAgentChatInstrumentor``: the ``BaseInstrumentor`` entry point (imports AutoGen only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry
from .._base import OtelAgentsInstrumentor


class AutoGenAgentChatInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``autogen-agentchat`` 0.7; see :mod:`otel_agents.instrumentors.autogen_agentchat`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None)``; ``uninstrument()`` restores AutoGen exactly (autogen-core's own spans included).
    """

    framework = "autogen_agentchat"
    _installation: Any = None

    def _install(self, telemetry: Telemetry) -> None:
        from ._wiring import Installation  # imports autogen_agentchat

        self._installation = Installation(telemetry)

    def _remove(self) -> None:
        if self._installation is not None:
            self._installation.remove()
            self._installation = None

    def open_runs(self) -> int:
        """How many agent/team spans are open now."""
        return self._installation.runs.open if self._installation is not None else 0
