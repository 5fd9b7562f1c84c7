"""smolagents: the customer-support ``ToolCallingAgent`` over a scripted ``Model``, answering a refund question.

``examples/customer_support/smolagents_agent.py``: one run = ``agent.run`` of a refund
question (three model calls, two tool calls, the ``final_answer`` tool).
"""

from __future__ import annotations

from typing import Any, Callable

from . import instrumentor_variant
from ._support import QUESTION, example, runner

NAME = "smolagents"
FRAMEWORK_DISTS = ("smolagents",)
PEERS = {
    "openinference": "openinference-instrumentation-smolagents",
    "otel_genai": "opentelemetry-instrumentation-genai-smolagents",
}
# each variant's instrumentor, "module:Class" (tests/peers runs them side by side)
CLASSES = {
    "ours": "otel_agents.instrumentors.smolagents:SmolagentsInstrumentor",
    "openinference": "openinference.instrumentation.smolagents:SmolagentsInstrumentor",
    "otel_genai": "opentelemetry.instrumentation.genai.smolagents:SmolagentsInstrumentor",
}


def workload() -> Callable[[], Any]:
    module = example("smolagents_agent")
    return runner(lambda: module.agent(QUESTION))


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)
    return install_, instrumentor.uninstrument
