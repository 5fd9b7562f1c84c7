"""AutoGen AgentChat: the customer-support ``AssistantAgent`` over a scripted model client, answering a refund question.

``examples/customer_support/autogen_agentchat_agent.py``: one run = a fresh ``AssistantAgent``'s
``run`` of a refund question in a fresh event loop (three model calls, two tool calls).
Peers: AutoGen's **native** tracing (``autogen-core``'s GenAI spans, ``invoke_agent`` and
``execute_tool``, written to the global tracer provider, which the benchmark switches: see
``_native``) and OpenInference's AgentChat package.
"""

from __future__ import annotations

from typing import Any, Callable

from . import instrumentor_variant
from ._native import global_switch, native
from ._support import QUESTION, example, runner

NAME = "autogen_agentchat"
FRAMEWORK_DISTS = ("autogen-agentchat", "autogen-core")
PEERS = {
    "native": "autogen-core",
    "openinference": "openinference-instrumentation-autogen-agentchat",
}
# each variant's instrumentor, "module:Class" (tests/peers runs them side by side)
CLASSES = {
    "ours": "otel_agents.instrumentors.autogen_agentchat:AutoGenAgentChatInstrumentor",
    "openinference": "openinference.instrumentation.autogen_agentchat:AutogenAgentChatInstrumentor",
}


def workload() -> Callable[[], Any]:
    global_switch()  # off: autogen-core's tracers are no-ops, as with no provider configured
    module = example("autogen_agentchat_agent")
    return runner(lambda: module.agent(QUESTION))


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    if variant == "native":
        return native(provider)
    instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)
    return install_, instrumentor.uninstrument
