"""LlamaIndex cells: a ``FunctionAgent`` with one tool over ``tests/llama_index/fakes.py``'s
``scripted_llm`` (the core's ``MockFunctionCallingLLM``) answering from the matrix's script. The mock
reports no usage and no finish reason, so none is expected on the model spans. Stops: ``max_turns`` runs with
``max_iterations=2`` (the default ``early_stopping_method="force"``: LlamaIndex raises ``WorkflowRuntimeError``);
``caller_cancel`` calls the run handler's ``cancel_run()`` while the tool runs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.tools import FunctionTool

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
from tests.llama_index.fakes import cheap_memory, scripted_llm, tool_call
from tests.matrix.truth import ANSWER, CITY, REJECTED, TOOL, USAGE, Call, ToolRun, Truth, Turn, _until

INSTRUMENTOR = LlamaIndexInstrumentor
HANDOFF = {"to_agent": "weather_agent", "reason": "a weather question"}


def _agent(truth: Truth, member: str = "") -> FunctionAgent:
    truth.agents = [("weather_agent", None)]

    def respond(messages: Any) -> ChatMessage:
        forced = _forced(truth, messages, member)
        if forced is not None:
            return ChatMessage(role=MessageRole.ASSISTANT, content=forced.turn.text)
        if member:  # a multi-agent run's member: its own calls count
            if truth.delegates(member):  # it took over: the handoff tool ran (and returned at once)
                truth.tools.append(ToolRun("handoff", dict(HANDOFF), outcome="ok"))
            call = truth.reply(member)
        else:
            call = truth.reply(has_tool_result=any(m.role == MessageRole.TOOL for m in messages))
        call.usage, call.answered = None, True  # the mock sends no usage, no finish reason
        turn = call.turn
        if turn.is_tool_call:
            name, args = turn.tool_calls[0]
            return tool_call(name, args, call_id="call_0")
        return ChatMessage(role=MessageRole.ASSISTANT, content=turn.text)

    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    return FunctionAgent(name="weather_agent", description="Weather.", llm=scripted_llm(respond),
                         tools=[FunctionTool.from_defaults(async_fn=get_weather, name=TOOL)])


def _react_text(call: Call) -> str:
    """A turn as ReAct text (``ReActOutputParser``'s format); the rejected answer of ``output_retry`` as a
    thought with neither action nor answer, which the parser cannot parse."""
    turn = call.turn
    if turn.is_tool_call:
        name, args = turn.tool_calls[0]
        return f"Thought: I need the weather.\nAction: {name}\nAction Input: {json.dumps(args)}"
    if turn.text == REJECTED:
        return f"Thought: {REJECTED}"
    return f"Thought: I can answer.\nAnswer: {turn.text}"


def _react(truth: Truth) -> ReActAgent:
    """A ``ReActAgent`` (text in ReAct's format, parsed by LlamaIndex, over the same mock)."""
    truth.agents = [("weather_agent", None)]

    def respond(messages: Any) -> ChatMessage:
        call = truth.reply()
        call.usage, call.answered = None, True  # the mock sends no usage, no finish reason
        return ChatMessage(role=MessageRole.ASSISTANT, content=_react_text(call))

    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    return ReActAgent(name="weather_agent", description="Weather.", llm=scripted_llm(respond),
                      tools=[FunctionTool.from_defaults(async_fn=get_weather, name=TOOL)])


def _workflow(truth: Truth) -> AgentWorkflow:
    """Multi-agent: ``triage`` hands off (the workflow's ``handoff`` tool, which returns at once) to
    ``weather_agent``, whose answer is the workflow's."""
    member = _agent(truth, "weather_agent")

    def respond(messages: Any) -> ChatMessage:
        forced = _forced(truth, messages, "triage")
        if forced is not None:
            return ChatMessage(role=MessageRole.ASSISTANT, content=forced.turn.text)
        call = truth.delegate("triage", "handoff", HANDOFF, as_tool=None) if truth.delegates("triage") \
            else truth.reply("triage")
        call.usage, call.answered = None, True  # the mock sends no usage, no finish reason
        if call.turn.is_tool_call:
            return tool_call("handoff", HANDOFF, call_id="call_h")
        return ChatMessage(role=MessageRole.ASSISTANT, content=call.turn.text)

    triage = FunctionAgent(name="triage", description="Routes questions.", llm=scripted_llm(respond),
                           can_handoff_to=["weather_agent"])
    truth.agents = [("triage", None), ("weather_agent", "triage")]
    return AgentWorkflow(agents=[triage, member], root_agent="triage")


FORCED = "You have reached the maximum number of iterations"  # LlamaIndex's DEFAULT_EARLY_STOPPING_PROMPT


def _forced(truth: Truth, messages: Any, agent: str = "") -> Call | None:
    """``early_stopping_method="generate"``: the request for a last answer (LlamaIndex's early stopping prompt
    last, no tools) is answered, as a model would, with the script's answer (recorded: a call the run made)."""
    last = messages[-1] if messages else None
    if last is None or last.role != MessageRole.SYSTEM or FORCED not in (last.content or ""):
        return None
    call = Call(Turn(ANSWER, [], USAGE[1]), agent, answered=True)
    truth.calls.append(call)
    return call


def _kw(truth: Truth, generate: bool = False) -> dict:
    if truth.ending != "max_turns":
        return {}
    return {"max_iterations": 2, "early_stopping_method": "generate"} if generate else {"max_iterations": 2}


async def _run(truth: Truth, build: Any = _agent, generate: bool = False) -> Any:
    handler = build(truth).run(user_msg=CITY, memory=cheap_memory(), **_kw(truth, generate))
    if truth.ending == "caller_cancel":  # the caller's own handle: the run's handler, cancel_run()
        async def cancel() -> None:
            await _until(lambda: truth.tool_running or handler.done())
            await handler.cancel_run()
        asyncio.ensure_future(cancel())
    return await handler


def _events(truth: Truth, build: Any = _agent) -> Any:
    async def gen() -> Any:
        handler = build(truth).run(user_msg=CITY, memory=cheap_memory(), **_kw(truth))
        async for event in handler.stream_events():
            yield event
        await handler
    return gen()


def _event(event: Any) -> Any:
    return type(event).__name__


ENTRIES = {
    "FunctionAgent.run": lambda t: (lambda: _run(t), lambda r: str(r)),
    "FunctionAgent.run().stream_events": lambda t: (lambda: _events(t), _event),
    "ReActAgent.run": lambda t: (lambda: _run(t, _react), lambda r: str(r)),
    "ReActAgent.run().stream_events": lambda t: (lambda: _events(t, _react), _event),
    "FunctionAgent.run(early_stopping_method='generate')": lambda t: (lambda: _run(t, generate=True),
                                                                      lambda r: str(r)),
    "AgentWorkflow.run": lambda t: (lambda: _run(t, _workflow), lambda r: str(r)),
    "AgentWorkflow.run(early_stopping_method='generate')": lambda t: (
        lambda: _run(t, _workflow, generate=True), lambda r: str(r)),
    "AgentWorkflow.run().stream_events": lambda t: (lambda: _events(t, _workflow), _event),
}
