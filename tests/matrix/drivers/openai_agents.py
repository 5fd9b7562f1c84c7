"""OpenAI Agents SDK cells: an ``Agent`` with one function tool over a model class of the user's own (an
``agents.Model`` subclass, as the SDK's docs show) answering from the matrix's script. A whole response
has no finish reason (``ModelResponse`` has no field for one); a stream's terminal ``response.completed``
carries the usage and ``status="completed"`` (``tool_call`` or ``stop``).

Stops: ``max_turns`` runs with ``max_turns=2`` (``MaxTurnsExceeded``), ``guardrail`` with an output guardrail
that trips on the answer (``OutputGuardrailTripwireTriggered``), ``caller_cancel`` calls the streamed result's
own ``cancel()`` while the tool runs."""

from __future__ import annotations

import itertools
import json
from typing import Any

import asyncio

from agents import (Agent, GuardrailFunctionOutput, Model, ModelResponse, Runner, ToolsToFinalOutputResult, Usage,
                    function_tool, input_guardrail, output_guardrail)
from openai.types.responses import (Response, ResponseCompletedEvent, ResponseCreatedEvent, ResponseOutputItem,
                                    ResponseOutputItemDoneEvent, ResponseUsage)
from pydantic import TypeAdapter

from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
from tests.matrix.truth import ANSWER, CITY, TOOL, Call, Truth, _until

INSTRUMENTOR = OpenAIAgentsInstrumentor
_items = TypeAdapter(ResponseOutputItem)
_ids = itertools.count(1)


def _after_tool(input: Any) -> bool:
    return isinstance(input, list) and bool(input) and isinstance(input[-1], dict) \
        and input[-1].get("type") == "function_call_output"


def _output(call: Call) -> list[Any]:
    turn = call.turn
    if turn.is_tool_call:
        return [_items.validate_python({"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": n,
                                        "arguments": json.dumps(a), "status": "completed"})
                for i, (n, a) in zip(_ids, turn.tool_calls)]  # (call ids unique in a run: the SDK checks)
    return [_items.validate_python({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                                    "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})]


def _usage(call: Call) -> ResponseUsage:
    details = ResponseUsage.model_fields
    u = call.turn.usage
    return ResponseUsage.model_construct(
        input_tokens=u[0], output_tokens=u[1], total_tokens=sum(u),
        input_tokens_details=details["input_tokens_details"].annotation.model_construct(cached_tokens=0),
        output_tokens_details=details["output_tokens_details"].annotation.model_construct(reasoning_tokens=0))


class TruthModel(Model):
    """The user's own model class (see the module docstring)."""

    def __init__(self, truth: Truth, agent: str = "", delegate: tuple[str, dict] | None = None) -> None:
        self.truth = truth
        self.agent = agent
        self.delegate = delegate  # a multi-agent run's top agent: its first call asks for this tool

    def _call(self, input: Any) -> Call:
        if self.delegate is not None and self.truth.delegates(self.agent):
            return self.truth.delegate(self.agent, *self.delegate)
        # (a member of a multi-agent run sees its delegator's tool result first: its own calls count)
        return self.truth.reply(self.agent, has_tool_result=None if self.agent else _after_tool(input))

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id=None, conversation_id=None, prompt=None):
        call = self._call(input)
        u = call.turn.usage
        call.sent()
        return ModelResponse(output=_output(call), usage=Usage(requests=1, input_tokens=u[0], output_tokens=u[1],
                                                               total_tokens=sum(u)), response_id=None)

    async def stream_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                              tracing, *, previous_response_id=None, conversation_id=None, prompt=None):
        call = self._call(input)
        items = _output(call)
        response = Response.model_construct(id=f"resp_{next(_ids)}", object="response", created_at=1,
                                            model="in-house-1", status="completed", output=[],
                                            parallel_tool_calls=True, tool_choice="auto", tools=[], usage=None)
        yield ResponseCreatedEvent.model_construct(type="response.created", response=response, sequence_number=0)
        for i, item in enumerate(items):
            yield ResponseOutputItemDoneEvent.model_construct(type="response.output_item.done", item=item,
                                                              output_index=i, sequence_number=i + 1)
        call.sent(finish="tool_call" if call.turn.is_tool_call else "stop")
        yield ResponseCompletedEvent.model_construct(type="response.completed", sequence_number=len(items) + 1,
                                                     response=response.model_copy(update={"output": items,
                                                                                          "usage": _usage(call)}))


def _agent(truth: Truth, agent: str = "", guard: str = "output", blocking_tool: bool = True) -> Agent:
    """``guard``: which guardrail trips in a ``guardrail`` cell, ``"output"`` (on the answer), ``"input"`` (an
    input guardrail run in parallel with the first model request, the SDK's default) or ``"input-first"``
    (``run_in_parallel=False``: before it). ``blocking_tool=False``: the tool answers at once even in a
    ``caller_cancel`` cell (a run cancelled ``after_turn`` lets it finish)."""
    truth.agents = [("weather_agent", None)]

    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city) if blocking_tool else truth.tool(city=city)

    def answer_from_the_tool(context: Any, results: Any) -> ToolsToFinalOutputResult:
        """skip_model: the SDK's ``tool_use_behavior`` hook answers after the tool instead of the model."""
        return ToolsToFinalOutputResult(is_final_output=True, final_output=truth.skip())

    tool = function_tool(get_weather, name_override=TOOL, failure_error_function=None)
    behavior = {"tool_use_behavior": answer_from_the_tool} if truth.ending == "skip_model" else {}
    guarded = truth.ending == "guardrail"
    outputs = [output_guardrail(_no_answer, name="no_answer")] if guarded and guard == "output" else []
    inputs = [input_guardrail(_no_input, name="no_input", run_in_parallel=guard == "input")] \
        if guarded and guard.startswith("input") else []
    return Agent(name="weather_agent", instructions="Answer about the weather.", model=TruthModel(truth, agent),
                 tools=[tool], output_guardrails=outputs, input_guardrails=inputs, **behavior)


async def _no_input(ctx: Any, agent: Any, input: Any) -> GuardrailFunctionOutput:
    """The input guardrail of the ``input_guardrail`` entries: it blocks the user's question."""
    return GuardrailFunctionOutput(output_info="blocked", tripwire_triggered=True)


async def _no_answer(ctx: Any, agent: Any, output: Any) -> GuardrailFunctionOutput:
    """The ``guardrail`` cell's output guardrail: it blocks the model's answer."""
    return GuardrailFunctionOutput(output_info="blocked", tripwire_triggered=output == ANSWER)


def _kw(truth: Truth) -> dict:
    return {"max_turns": 2} if truth.ending == "max_turns" else {}


def _handoff(truth: Truth) -> Agent:
    """Multi-agent: ``triage`` hands off (its first call asks for ``transfer_to_weather_agent``) to
    ``weather_agent``, whose answer is the run's final output."""
    specialist = _agent(truth, "weather_agent")
    truth.agents = [("triage", None), ("weather_agent", "triage")]
    return Agent(name="triage", instructions="Hand weather questions off.", handoffs=[specialist],
                 model=TruthModel(truth, "triage", ("transfer_to_weather_agent", {})))


def _orchestrator(truth: Truth) -> Agent:
    """Multi-agent: ``orchestrator`` calls ``weather_agent`` as a tool (``Agent.as_tool``: a function tool
    ``ask_weather`` running the agent) and answers from its answer."""
    specialist = _agent(truth, "weather_agent")
    truth.agents = [("orchestrator", None), ("weather_agent", "orchestrator")]
    truth.top = "orchestrator"
    return Agent(name="orchestrator", instructions="Ask the weather agent.",
                 tools=[specialist.as_tool(tool_name="ask_weather", tool_description="Ask about the weather.")],
                 model=TruthModel(truth, "orchestrator", ("ask_weather", {"input": CITY})))


def _streamed(truth: Truth, build: Any = _agent) -> Any:
    async def gen() -> Any:
        result = Runner.run_streamed(build(truth), CITY, **_kw(truth))
        watcher = None
        if truth.ending == "caller_cancel":  # the caller's own handle: the streamed result's cancel()
            async def cancel() -> None:
                await _until(lambda: truth.tool_running or result.is_complete)
                result.cancel()
            watcher = asyncio.ensure_future(cancel())
        try:
            async for event in result.stream_events():
                yield event
        finally:
            if watcher is not None:
                watcher.cancel()
    return gen()


def _after_turn(truth: Truth, build: Any = None) -> Any:
    """``cancel(mode="after_turn")`` at the first event: the SDK finishes the turn in flight (the model's tool
    call and the tool, which answers at once; or the handoff) and stops before the next request, without
    raising."""
    async def gen() -> Any:
        agent = build(truth) if build is not None else _agent(truth, blocking_tool=False)
        result = Runner.run_streamed(agent, CITY)
        async for event in result.stream_events():
            if truth.ending == "caller_cancel" and result._cancel_mode == "none":  # (the SDK's own record of it)
                result.cancel(mode="after_turn")
            yield event
    return gen()


def _event(event: Any) -> Any:
    return (event.type, getattr(event, "name", None))


ENTRIES = {
    "Runner.run": lambda t: (lambda: Runner.run(_agent(t), CITY, **_kw(t)), lambda r: r.final_output),
    "Runner.run_sync": lambda t: (lambda: Runner.run_sync(_agent(t), CITY, **_kw(t)), lambda r: r.final_output),
    "Runner.run_streamed": lambda t: (lambda: _streamed(t), _event),
    "handoff Runner.run": lambda t: (lambda: Runner.run(_handoff(t), CITY), lambda r: r.final_output),
    "handoff Runner.run_sync": lambda t: (lambda: Runner.run_sync(_handoff(t), CITY), lambda r: r.final_output),
    "handoff Runner.run_streamed": lambda t: (lambda: _streamed(t, _handoff), _event),
    "agent.as_tool Runner.run": lambda t: (lambda: Runner.run(_orchestrator(t), CITY), lambda r: r.final_output),
    "agent.as_tool Runner.run_streamed": lambda t: (lambda: _streamed(t, _orchestrator), _event),
    "Runner.run_streamed cancel(mode='after_turn')": lambda t: (lambda: _after_turn(t), _event),
    "handoff Runner.run_streamed cancel(mode='after_turn')": lambda t: (lambda: _after_turn(t, _handoff), _event),
    "input_guardrail Runner.run": lambda t: (lambda: Runner.run(_agent(t, guard="input"), CITY),
                                             lambda r: r.final_output),
    "input_guardrail Runner.run_sync": lambda t: (lambda: Runner.run_sync(_agent(t, guard="input"), CITY),
                                                  lambda r: r.final_output),
    "input_guardrail Runner.run_streamed": lambda t: (lambda: _streamed(t, lambda t: _agent(t, guard="input")),
                                                      _event),
    "input_guardrail(run_in_parallel=False) Runner.run": lambda t: (
        lambda: Runner.run(_agent(t, guard="input-first"), CITY), lambda r: r.final_output),
}
