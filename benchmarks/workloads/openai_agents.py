"""OpenAI Agents SDK: the customer-support ``Agent`` over a scripted ``Model``, answering a refund question.

``examples/customer_support/openai_agents_agent.py`` (the SDK's own export to OpenAI is off:
``set_trace_processors([])``): one run = ``Runner.run`` of a refund question in a fresh event
loop (three model calls, two tool calls). Every instrumentation of the SDK, ours included, is a
processor of the SDK's own tracing (its ``TracingProcessor`` interface), so there is no separate
"native" row: the SDK's tracing is what each of them listens to.
"""

from __future__ import annotations

from typing import Any, Callable

from . import instrumentor_variant
from ._support import QUESTION, example, runner

NAME = "openai_agents"
FRAMEWORK_DISTS = ("openai-agents",)
PEERS = {
    "openinference": "openinference-instrumentation-openai-agents",
    "openllmetry": "opentelemetry-instrumentation-openai-agents",
    "otel_genai": "opentelemetry-instrumentation-genai-openai-agents",
}
# each variant's instrumentor, "module:Class" (tests/peers runs them side by side)
CLASSES = {
    "ours": "otel_agents.instrumentors.openai_agents:OpenAIAgentsInstrumentor",
    "openinference": "openinference.instrumentation.openai_agents:OpenAIAgentsInstrumentor",
    "openllmetry": "opentelemetry.instrumentation.openai_agents:OpenAIAgentsInstrumentor",
    "otel_genai": "opentelemetry.instrumentation.genai.openai_agents:OpenAIAgentsInstrumentor",
}


def workload() -> Callable[[], Any]:
    module = example("openai_agents_agent")
    return runner(lambda: module.agent(QUESTION))


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    if variant == "openllmetry":
        # Its uninstrument() leaves its tracing processor registered with the SDK (0.62.4): every later
        # run would pay for it. Put the SDK's processors back as they were before it was installed.
        from agents.tracing import get_trace_provider

        instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)
        multi = get_trace_provider()._multi_processor
        before: list[Any] = []

        def install_llm() -> None:
            before[:] = multi._processors
            install_()

        def remove_llm() -> None:
            instrumentor.uninstrument()
            multi.set_processors(list(before))

        return install_llm, remove_llm
    instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)
    return install_, instrumentor.uninstrument
