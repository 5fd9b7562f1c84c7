"""LlamaIndex: a ``FunctionAgent`` over ``MockFunctionCallingLLM`` that calls one tool, then answers.

The agent is the test suite's offline ``calculator`` (tool ``add``) with a model
scripted by the conversation (a tool call until a tool result is in it, then the
answer), so one agent serves every run. One run = one ``agent.run`` in a fresh
event loop with an in-process memory: two model calls and one tool call.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from . import instrumentor_variant

NAME = "llama_index"
FRAMEWORK_DISTS = ("llama-index-core",)
PEERS = {
    "openinference": "openinference-instrumentation-llama-index",
    "openllmetry": "opentelemetry-instrumentation-llamaindex",
    "otel_genai": "opentelemetry-instrumentation-genai-llama-index",
}
# each variant's instrumentor, "module:Class" (tests/peers runs them side by side)
CLASSES = {
    "ours": "otel_agents.instrumentors.llama_index:LlamaIndexInstrumentor",
    "openinference": "openinference.instrumentation.llama_index:LlamaIndexInstrumentor",
    "openllmetry": "opentelemetry.instrumentation.llamaindex:LlamaIndexInstrumentor",
    "otel_genai": "opentelemetry.instrumentation.genai.llama_index:LlamaIndexInstrumentor",
}


def workload() -> Callable[[], Any]:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    from tests.llama_index.fakes import calculator, cheap_memory, tool_call

    def respond(messages: Any, **_: Any) -> ChatMessage:
        if any(m.role == MessageRole.TOOL for m in messages):
            return ChatMessage(role=MessageRole.ASSISTANT, content="The answer is 5.")
        return tool_call("add", {"a": 2, "b": 3})

    agent = calculator(MockFunctionCallingLLM(response_generator=respond))

    async def go() -> Any:
        return await agent.run(user_msg="What is 2+3?", memory=cheap_memory())

    def run() -> Any:
        return asyncio.run(go())

    return run


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)
    if variant == "openllmetry":
        # Its uninstrument() does nothing (0.62.4): the span and event handlers it added to LlamaIndex's
        # root dispatcher would stay for every later run. Put the dispatcher's handlers back ourselves.
        from llama_index.core.instrumentation import get_dispatcher

        root = get_dispatcher()
        before: dict[str, list[Any]] = {}

        def install_llm() -> None:
            before["span"], before["event"] = list(root.span_handlers), list(root.event_handlers)
            install_()

        def remove_llm() -> None:
            instrumentor.uninstrument()
            root.span_handlers[:] = before["span"]
            root.event_handlers[:] = before["event"]

        return install_llm, remove_llm
    return install_, instrumentor.uninstrument
