"""CrewAI: a one-agent crew over a scripted ``BaseLLM`` that calls one tool, then answers.

The crew is the test suite's offline ``one_agent_crew`` (ReAct text path: one
``lookup_order`` action, then the final answer), built anew for each run. One
run = one ``kickoff``: crew, task, agent, two model calls and one tool call.
CrewAI writes under ``$HOME``, so HOME is a temporary directory, and its
telemetry and tracing are off (``CREWAI_DISABLE_TELEMETRY``, ``CREWAI_TRACING_ENABLED``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import Any, Callable

from . import instrumentor_variant

NAME = "crewai"
FRAMEWORK_DISTS = ("crewai",)
PEERS = {
    "openinference": "openinference-instrumentation-crewai",
    "openllmetry": "opentelemetry-instrumentation-crewai",
}
# each variant's instrumentor, "module:Class" (tests/peers runs them side by side)
CLASSES = {
    "ours": "otel_agents.instrumentors.crewai:CrewAIInstrumentor",
    "openinference": "openinference.instrumentation.crewai:CrewAIInstrumentor",
    "openllmetry": "opentelemetry.instrumentation.crewai:CrewAIInstrumentor",
}
BATCH_DIVISOR = 5  # a kickoff is ~45 ms: batches of 4 runs (not 20) keep the comparison to ~2 minutes


def _quiet_home() -> None:
    """Before CrewAI is imported (it computes paths under HOME at import): a throw-away HOME."""
    home = tempfile.mkdtemp(prefix="otel-agents-bench-crewai-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    os.environ["HOME"] = home
    for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ.pop(key, None)
    os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
    os.environ["CREWAI_TRACING_ENABLED"] = "false"


def workload() -> Callable[[], Any]:
    _quiet_home()
    from tests.crewai.fakes import one_agent_crew

    def run() -> Any:
        return one_agent_crew().kickoff()

    return run


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)
    return install_, instrumentor.uninstrument
