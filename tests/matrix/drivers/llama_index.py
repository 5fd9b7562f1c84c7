"""LlamaIndex cells: a ``FunctionAgent`` and a ``ReActAgent`` with one tool over ``tests/llama_index/fakes.py``'s
``scripted_llm`` (the core's ``MockFunctionCallingLLM``) answering from the matrix's script (the mock reports no
usage and no finish reason, so none is expected on those model spans), an ``AgentWorkflow`` handing off between
two ``FunctionAgent``s, and a query engine (``index.as_query_engine()`` over an in-memory index with
``MockEmbedding``) answering with :class:`TruthLLM`, a ``CustomLLM`` of the user's own that sends usage and a
finish reason.

Stops: ``max_turns`` runs with ``max_iterations=2``: with the default ``early_stopping_method="force"``
LlamaIndex raises ``WorkflowRuntimeError``; the ``early_stopping_method='generate'`` entries ask the model for a
last answer, which the fake gives (:func:`_forced`). ``caller_cancel`` calls the run handler's ``cancel_run()``
while the tool runs. ``output_retry`` (``ReActAgent``): the rejected answer is a thought with neither action nor
answer, which ReAct's parser cannot read; LlamaIndex sends it back with its feedback and the model answers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.tools import FunctionTool

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
from tests.llama_index.fakes import cheap_memory, index, scripted_llm, tool_call
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


class TruthLLM(CustomLLM):
    """A model class of the user's own (``CustomLLM``) answering a query engine's one request from the script:
    the answer, with usage and finish reason in ``raw`` as providers send them (in a stream, on its last
    chunk)."""

    truth: Any = None

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="truth-llm")

    def _call(self) -> tuple[Call, dict]:
        call = self.truth.reply(has_tool_result=True)  # (raises ModelFailure in model_raises cells)
        (inp, out), turn = call.turn.usage, call.turn
        return call, {"usage": {"prompt_tokens": inp, "completion_tokens": out}, "stop_reason": "stop",
                      "text": turn.text}

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        call, raw = self._call()
        call.sent(finish="stop")
        return CompletionResponse(text=raw.pop("text"), raw=raw)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        call, raw = self._call()
        text = raw.pop("text")
        words = text.split(" ")
        for i in range(len(words)):
            last = i == len(words) - 1
            if last:
                call.sent(finish="stop")
            yield CompletionResponse(text=" ".join(words[:i + 1]), delta=(" " if i else "") + words[i],
                                     raw=raw if last else None)


def _query_engine(truth: Truth, streaming: bool = False) -> Any:
    """``index.as_query_engine()`` (a ``RetrieverQueryEngine``) over an in-memory index embedded with LlamaIndex's
    ``MockEmbedding`` (no network), answering with :class:`TruthLLM`: a retriever span, then one model call."""
    return index([f"{CITY} is sunny today.", "Berlin is rainy today."]).as_query_engine(
        llm=TruthLLM(truth=truth), streaming=streaming, similarity_top_k=1)


async def _streamed_aquery(truth: Truth) -> Any:
    """``await query_engine.aquery()`` with ``streaming=True``: its ``AsyncStreamingResponse``'s ``response_gen``."""
    return (await _query_engine(truth, streaming=True).aquery(CITY)).response_gen


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
    "query_engine.query": lambda t: (lambda: _query_engine(t).query(CITY), lambda r: str(r)),
    "query_engine.aquery": lambda t: (lambda: _query_engine(t).aquery(CITY), lambda r: str(r)),
    "query_engine(streaming=True).query().response_gen": lambda t: (
        lambda: _query_engine(t, streaming=True).query(CITY).response_gen, lambda x: x),
    "query_engine(streaming=True).aquery().response_gen": lambda t: (lambda: _streamed_aquery(t), lambda x: x),
    "AgentWorkflow.run(early_stopping_method='generate')": lambda t: (
        lambda: _run(t, _workflow, generate=True), lambda r: str(r)),
    "AgentWorkflow.run().stream_events": lambda t: (lambda: _events(t, _workflow), _event),
}
