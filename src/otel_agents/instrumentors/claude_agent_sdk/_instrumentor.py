"""``ClaudeAgentSDKInstrumentor``: the ``BaseInstrumentor`` entry point (``_wiring.Installation`` imports the SDK)."""

from __future__ import annotations

import importlib
from typing import Any

from ..._spans import Telemetry
from .._base import OtelAgentsInstrumentor


class ClaudeAgentSDKInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``claude-agent-sdk`` 0.2; see :mod:`otel_agents.instrumentors.claude_agent_sdk`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None, settings=None,
    stream_usage=True)``. ``stream_usage=False`` leaves ``include_partial_messages`` as the user set
    it: model spans then report no output tokens unless the user turned partial messages on.
    ``uninstrument()`` restores the SDK exactly.
    """

    framework = "claude_agent_sdk"
    _stream_usage = True

    def _instrument(self, **kwargs: Any) -> None:
        self._stream_usage = kwargs.get("stream_usage", True) is not False
        super()._instrument(**kwargs)

    def _install(self, telemetry: Telemetry) -> None:
        wiring = importlib.import_module(f"{__package__}._wiring")  # imports the SDK
        self._installation = wiring.Installation(telemetry, stream_usage=self._stream_usage)

    def open_runs(self) -> int:
        """How many turns (agent runs) are open now, over the live CLI sessions."""
        installation = self._installation
        if installation is None:
            return 0
        return sum(1 for tracker in list(installation.trackers.values()) if tracker.turn is not None)
