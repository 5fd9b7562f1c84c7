"""LangChain: ``prompt | fake chat model | parser``, then one tool call.

The chat model is the test suite's offline ``ToolCallingChatModel`` (answers
without tools here); the tool is invoked with a model-style tool call, as an
agent loop would. One run = two top-level LangChain invocations.
"""

from __future__ import annotations

from typing import Any, Callable

NAME = "langchain"
FRAMEWORK_DISTS = ("langchain-core", "langgraph")
PEERS = {
    "openinference": "openinference-instrumentation-langchain",
    "openllmetry": "opentelemetry-instrumentation-langchain",
}


def workload() -> Callable[[], Any]:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    from tests.langchain.fakes import ToolCallingChatModel, get_weather

    prompt = ChatPromptTemplate.from_messages([("system", "You are a terse weather assistant."), ("human", "{q}")])
    chain = prompt | ToolCallingChatModel(tool=None, answer="Sunny, 21 degrees.") | StrOutputParser()
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}

    def run() -> None:
        chain.invoke({"q": "What is the weather in Paris?"})
        get_weather.invoke(call)

    return run


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    if variant in ("ours", "ours_no_content"):
        from otel_agents.instrumentors.langchain import LangChainInstrumentor as inst
        kwargs = {"capture_content": False} if variant == "ours_no_content" else {}
    elif variant == "openinference":
        from openinference.instrumentation.langchain import LangChainInstrumentor as inst
        kwargs = {}
    elif variant == "openllmetry":
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor as inst
        kwargs = {}
    else:
        raise ValueError(variant)
    instrumentor = inst()
    return (lambda: instrumentor.instrument(tracer_provider=provider, **kwargs)), instrumentor.uninstrument
