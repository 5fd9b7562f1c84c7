"""PydanticAI cells: an ``Agent`` over a model class written here (a ``pydantic_ai.models.Model``
subclass, as users write for their own providers) that answers from the matrix's script: whole
responses with their usage and finish reason, streams word by word with usage and finish reason on the
last event. Stops: ``max_turns`` runs with ``UsageLimits(request_limit=2)`` (``UsageLimitExceeded``); ``budget`` with
a token limit the second call's usage crosses (``total_tokens_limit=20``: 18 tokens a call), or, in the variants,
``input_tokens_limit``, ``output_tokens_limit`` or ``cost_limit`` (the model reports each call's cost, as
``RequestUsage.cost``)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, AsyncIterator

from pydantic_ai import Agent, ModelRetry, RunContext, SkipModelRequest
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import Model, StreamedResponse
from pydantic_ai.usage import RequestUsage, UsageLimits

from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor
from tests.matrix.truth import CITY, REJECTED, TOOL, Call, Truth

INSTRUMENTOR = PydanticAIInstrumentor
NAME = "truth-model"


def _after_tool(messages: list) -> bool:  # (a retry prompt after an output rejected is not the last message)
    return any(isinstance(p, (ToolReturnPart, RetryPromptPart)) for m in messages for p in getattr(m, "parts", []))


def _finish(call: Call) -> str:
    return "tool_call" if call.turn.is_tool_call else "stop"


@dataclass
class TruthStream(StreamedResponse):
    call: Call = None
    _timestamp: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    async def _get_event_iterator(self) -> AsyncIterator[Any]:
        turn = self.call.turn
        for i, (name, args) in enumerate(turn.tool_calls):
            yield self._parts_manager.handle_tool_call_part(vendor_part_id=i, tool_name=name, args=args,
                                                            tool_call_id=f"call_{i}")
        words = turn.text.split(" ") if turn.text else []
        for i, word in enumerate(words):
            for event in self._parts_manager.handle_text_delta(vendor_part_id=0, content=word if i == 0 else " " + word):
                yield event
        # usage and finish reason come last, as providers send them (reached only when the stream is read on)
        self._usage = RequestUsage(input_tokens=turn.usage[0], output_tokens=turn.usage[1])
        self.finish_reason = _finish(self.call)
        self.call.sent(finish=self.finish_reason)

    @property
    def model_name(self) -> str:
        return NAME

    @property
    def provider_name(self) -> str:
        return "fake"

    @property
    def provider_url(self) -> None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp


class TruthModel(Model):
    """A user-written model class (see the module docstring)."""

    def __init__(self, truth: Truth, agent: str = "", delegate: tuple[str, dict] | None = None,
                 cost: Decimal | None = None) -> None:
        super().__init__()
        self.truth = truth
        self.cost = cost  # USD a call, reported on its usage (as a provider's pricing gives it)
        self.agent = agent  # a multi-agent run's member: its own calls count
        self.delegate = delegate  # the delegating agent's first call: ``(tool, args)``

    def _call(self, messages: list) -> Call:
        if self.delegate is not None and self.truth.delegates(self.agent):
            return self.truth.delegate(self.agent, *self.delegate)
        if self.agent:
            return self.truth.reply(self.agent)
        return self.truth.reply(has_tool_result=_after_tool(messages))

    @property
    def model_name(self) -> str:
        return NAME

    @property
    def system(self) -> str:
        return "fake"

    async def request(self, messages: list, model_settings: Any, model_request_parameters: Any) -> ModelResponse:
        call = self._call(messages)
        turn = call.turn
        parts = [ToolCallPart(n, a, tool_call_id=f"call_{i}") for i, (n, a) in enumerate(turn.tool_calls)] \
            or [TextPart(turn.text)]
        call.sent(finish=_finish(call))
        return ModelResponse(parts=parts, usage=RequestUsage(input_tokens=turn.usage[0], output_tokens=turn.usage[1],
                                                             cost=self.cost),
                             model_name=NAME, finish_reason=_finish(call))

    @asynccontextmanager
    async def request_stream(self, messages: list, model_settings: Any, model_request_parameters: Any,
                             run_context: Any = None) -> AsyncIterator[StreamedResponse]:
        call = self._call(messages)
        yield TruthStream(model_request_parameters=model_request_parameters, call=call)


@dataclass(eq=False)
class AnswerFromCache(AbstractCapability[Any]):
    """skip_model: the user's capability answers the request after the tool ran in the model's place
    (PydanticAI's ``SkipModelRequest`` from ``before_model_request``)."""

    truth: Any = None

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        if _after_tool(request_context.messages):
            raise SkipModelRequest(ModelResponse(parts=[TextPart(self.truth.skip())], model_name="cache"))
        return request_context


def _agent(truth: Truth, *, sync_tool: bool = False, member: str = "", cost: Decimal | None = None) -> Agent:
    truth.agents = [("weather_agent", None)]
    caps = [AnswerFromCache(truth=truth)] if truth.ending == "skip_model" else []
    agent = Agent(TruthModel(truth, member, cost=cost), name="weather_agent", capabilities=caps)
    if truth.ending == "output_retry":
        @agent.output_validator
        def whole_sentence(output: str) -> str:
            """output_retry: a bare word is rejected (``ModelRetry``): the model is asked again."""
            if output == REJECTED:
                raise ModelRetry("Answer in a sentence.")
            return output
    if sync_tool:
        @agent.tool_plain(name=TOOL)
        def get_weather(city: str) -> str:
            """Get the weather for a city."""
            return truth.tool(city=city)
    else:
        @agent.tool_plain(name=TOOL)
        async def aget_weather(city: str) -> str:
            """Get the weather for a city."""
            return await truth.atool(city=city)
    return agent


def _kw(truth: Truth, **budget: Any) -> dict:
    """``max_turns``: ``UsageLimits(request_limit=2)``, which the model asking for the tool every turn reaches;
    ``budget``: ``budget`` (default ``total_tokens_limit=20``), which the second call's usage crosses."""
    if truth.ending == "max_turns":
        return {"usage_limits": UsageLimits(request_limit=2)}
    if truth.ending == "budget":
        return {"usage_limits": UsageLimits(**(budget or {"total_tokens_limit": 20}))}
    return {}


def _run_stream_sync(truth: Truth) -> Any:
    """``run_stream_sync`` as PydanticAI's docs show it (no ``with``): the result's ``stream_output()`` iterator."""
    return _agent(truth, sync_tool=True).run_stream_sync(CITY, **_kw(truth)).stream_output(debounce_by=None)


def _delegating(truth: Truth) -> Agent:
    """Multi-agent (agent delegation, as PydanticAI's docs show it): ``orchestrator``'s tool ``ask_weather`` runs
    ``weather_agent`` with the run's usage (``usage=ctx.usage``); the orchestrator answers from its answer."""
    member = _agent(truth, member="weather_agent")
    truth.agents = [("orchestrator", None), ("weather_agent", "orchestrator")]
    truth.top = "orchestrator"
    agent = Agent(TruthModel(truth, "orchestrator", ("ask_weather", {"question": CITY})), name="orchestrator")

    @agent.tool
    async def ask_weather(ctx: RunContext[None], question: str) -> str:
        """Ask the weather agent."""
        result = await member.run(question, usage=ctx.usage)
        return result.output
    return agent


def _run_stream(truth: Truth, build: Any = _agent) -> AsyncIterator[str]:
    async def gen() -> AsyncIterator[str]:
        async with build(truth).run_stream(CITY, **_kw(truth)) as result:
            async for text in result.stream_output(debounce_by=None):
                yield text
    return gen()


def _run_stream_events(truth: Truth) -> AsyncIterator[Any]:
    async def gen() -> AsyncIterator[Any]:
        async with _agent(truth).run_stream_events(CITY, **_kw(truth)) as events:
            async for event in events:
                yield event
    return gen()


def _iter(truth: Truth, build: Any = _agent) -> AsyncIterator[str]:
    async def gen() -> AsyncIterator[str]:
        async with build(truth).iter(CITY, **_kw(truth)) as run:
            async for node in run:
                yield type(node).__name__
    return gen()


def _event(event: Any) -> Any:
    return (type(event).__name__, getattr(getattr(event, "result", None), "output", None))


def _output(result: Any) -> Any:
    return result.output


ENTRIES = {
    "run_sync": lambda t: (lambda: _agent(t, sync_tool=True).run_sync(CITY, **_kw(t)), _output),
    "run": lambda t: (lambda: _agent(t).run(CITY, **_kw(t)), _output),
    "run_stream": lambda t: (lambda: _run_stream(t), lambda x: x),
    "run_stream_events": lambda t: (lambda: _run_stream_events(t), _event),
    "iter": lambda t: (lambda: _iter(t), lambda x: x),
    "delegation run": lambda t: (lambda: _delegating(t).run(CITY), _output),
    "delegation run_stream": lambda t: (lambda: _run_stream(t, _delegating), lambda x: x),
    "delegation iter": lambda t: (lambda: _iter(t, _delegating), lambda x: x),
    "run_stream_sync": lambda t: (lambda: _run_stream_sync(t), lambda x: x),
    "run (UsageLimits(input_tokens_limit))": lambda t: (
        lambda: _agent(t).run(CITY, **_kw(t, input_tokens_limit=20)), _output),
    "run (UsageLimits(output_tokens_limit))": lambda t: (
        lambda: _agent(t).run(CITY, **_kw(t, output_tokens_limit=10)), _output),
    "run (UsageLimits(cost_limit))": lambda t: (
        lambda: _agent(t, cost=Decimal("0.01")).run(CITY, **_kw(t, cost_limit=Decimal("0.015"))), _output),
}
