"""PydanticAI: an ``Agent`` over a ``FunctionModel`` that calls one tool, then answers.

The agent is the test suite's offline ``lookup_agent`` (``FunctionModel``: first
request asks for ``lookup``, the second says its result). One run = one
``run_sync``: two model requests and one tool call.

Peers: OpenInference's PydanticAI package is a span processor that rewrites the
spans of pydantic-ai's own instrumentation, so its variant is pydantic-ai's
native instrumentation with that processor in front of the exporter; pydantic-ai's
native instrumentation alone (``Agent.instrument_all``) is measured too.
"""

from __future__ import annotations

from typing import Any, Callable

NAME = "pydantic_ai"
# Against its native instrumentation the ratio is near 1 (two runs of 40 rounds gave 1.01 and 2.65 by
# fastest batches): three times the rounds, so the bootstrap interval can resolve it.
ROUNDS_FACTOR = 3
FRAMEWORK_DISTS = ("pydantic-ai-slim",)
PEERS = {
    "native": "pydantic-ai-slim",
    "openinference": "openinference-instrumentation-pydantic-ai",
}


def workload() -> Callable[[], Any]:
    from tests.pydantic_ai.agents import Deps, lookup_agent

    agent = lookup_agent()

    def run() -> None:
        agent.run_sync("Where is order A100?", deps=Deps(marker="A100"))

    return run


def _native(provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings

    settings = InstrumentationSettings(tracer_provider=provider)
    return (lambda: Agent.instrument_all(settings)), (lambda: Agent.instrument_all(False))


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    if variant in ("ours", "ours_no_content"):
        from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor

        instrumentor = PydanticAIInstrumentor()
        kwargs = {"capture_content": False} if variant == "ours_no_content" else {}
        return (lambda: instrumentor.instrument(tracer_provider=provider, **kwargs)), instrumentor.uninstrument
    if variant == "native":
        return _native(provider)
    if variant == "openinference":
        from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        # A provider of its own (an SDK provider cannot drop a processor), exporting to the same
        # counting exporter: OpenInference's processor first, as its documentation sets it up.
        own = TracerProvider()
        own.add_span_processor(OpenInferenceSpanProcessor())
        for processor in provider._active_span_processor._span_processors:  # the counting exporter's
            if isinstance(processor, SimpleSpanProcessor):
                own.add_span_processor(processor)
        return _native(own)
    raise ValueError(variant)


def dispatch() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """An observer whose hooks only call through, added the way ours is (a wrapper on ``Agent.iter`` putting the
    agent's capabilities, with its hooks on their combination, in place of the agent's own on its first run:
    our ``AgentLevel``): pydantic-ai's own cost of running one observer's ``wrap_run``/``wrap_model_request``/
    ``wrap_tool_execute``/output hooks."""
    from dataclasses import dataclass

    import wrapt
    from pydantic_ai import Agent

    from otel_agents.instrumentors.pydantic_ai._capability import OtelAgentsCapability
    from otel_agents.instrumentors.pydantic_ai._wiring import AgentLevel

    @dataclass(eq=False)
    class Nothing(OtelAgentsCapability):
        async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
            return await handler()

        async def wrap_model_request(self, ctx: Any, *, request_context: Any, handler: Any) -> Any:
            return await handler(request_context)

        async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any) -> Any:
            return await handler(args)

        def answered(self, request_context: Any) -> None:
            pass

        def rejected(self, call: Any, tool_def: Any, error: BaseException) -> None:
            pass

        async def _validating(self, ctx: Any, output: Any, handler: Any) -> Any:
            return await handler(output)

    original = Agent.__dict__["iter"]
    nothing = Nothing()
    agents = AgentLevel(nothing)

    def add_nothing(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if agents.holds(instance, kwargs):
            return wrapped(*args, **kwargs)
        return wrapped(*args, **{**kwargs, "capabilities": [*(kwargs.get("capabilities") or ()), nothing]})

    def install() -> None:
        Agent.iter = wrapt.FunctionWrapper(original, add_nothing)

    def remove() -> None:
        Agent.iter = original
        agents.detach_all()

    return install, remove
