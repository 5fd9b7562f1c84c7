"""LangChain: ``prompt | fake chat model | parser``, then one tool call.

The chat model is the test suite's offline ``ToolCallingChatModel`` (answers
without tools here); the tool is invoked with a model-style tool call, as an
agent loop would. One run = two top-level LangChain invocations.
"""

from __future__ import annotations

from typing import Any, Callable

from . import instrumentor_variant, restoring

NAME = "langchain"
FRAMEWORK_DISTS = ("langchain-core", "langgraph")
PEERS = {
    "openinference": "openinference-instrumentation-langchain",
    "openllmetry": "opentelemetry-instrumentation-langchain",
    "otel_genai": "opentelemetry-instrumentation-genai-langchain",
}
# each variant's instrumentor, "module:Class" (tests/peers runs them side by side)
CLASSES = {
    "ours": "otel_agents.instrumentors.langchain:LangChainInstrumentor",
    "openinference": "openinference.instrumentation.langchain:LangChainInstrumentor",
    "openllmetry": "opentelemetry.instrumentation.langchain:LangchainInstrumentor",
    "otel_genai": "opentelemetry.instrumentation.genai.langchain:LangChainInstrumentor",
}


def workload() -> Callable[[], Any]:
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    from tests.langchain.fakes import ToolCallingChatModel, get_weather

    prompt = ChatPromptTemplate.from_messages([("system", "You are a terse weather assistant."), ("human", "{q}")])
    chain = prompt | ToolCallingChatModel(tool=None, answer="Sunny, 21 degrees.") | StrOutputParser()
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}

    def run() -> tuple[Any, Any]:
        return chain.invoke({"q": "What is the weather in Paris?"}), get_weather.invoke(call)

    return run


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)

    def remove() -> None:
        instrumentor.uninstrument()
        if variant == "openllmetry":
            # Its uninstrument() calls unwrap("langchain_core.callbacks", "BaseCallbackManager.__init__"),
            # which resolves the dotted string wrongly and unwraps nothing: its handler would stay in
            # every later run. Take the wrapper off ourselves.
            from langchain_core.callbacks.base import BaseCallbackManager
            from opentelemetry.instrumentation.utils import unwrap

            unwrap(BaseCallbackManager, "__init__")

    if variant == "openllmetry":
        # It also leaves LangGraph's `Pregel.stream` wrapped, one layer more each round; a later
        # instrumentor's `inspect.signature` of it (the OTel GenAI one's) then walks the whole growing chain,
        # which took the comparison from 2 minutes to over 15. Put back what it left.
        return restoring(("langchain_core", "langgraph", "langchain"), install_, remove)
    return install_, remove


def dispatch() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """A handler that does nothing, registered like ours (a configure hook with an inheritable
    default): LangChain's own cost of dispatching every event to one callback handler."""
    import contextvars

    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.tracers import context as hooks

    class Nothing(BaseCallbackHandler):
        run_inline = True

    var: contextvars.ContextVar = contextvars.ContextVar("benchmarks_noop_handler", default=Nothing())

    def install() -> None:
        hooks.register_configure_hook(var, True)

    def remove() -> None:
        hooks._configure_hooks[:] = [entry for entry in hooks._configure_hooks if entry[0] is not var]

    return install, remove
