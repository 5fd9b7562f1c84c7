"""LangChain / LangGraph cells: a hand-built LangGraph agent loop (``tests/langchain/fakes.py``) over the
``ToolCallingChatModel`` fake, answering from the matrix's script and recording what it sent.

``stream_mode="custom"`` entries run a tool that first writes ``{"looking_up": city}`` to LangGraph's stream
writer (the mode yields only what nodes write); ``stream_mode="debug"`` events are compared without their ids
and timestamps, ``"tasks"`` events without their ids, ``"checkpoints"`` (over LangGraph's ``InMemorySaver``) as step,
next nodes and messages.

Stops: ``max_turns`` binds ``recursion_limit=4`` to the graph (``with_config``): the model asks for the tool
every turn until LangGraph raises ``GraphRecursionError``.

``create_agent`` entries (LangChain 1.x, ``langchain.agents``) run the agent graph ``create_agent`` builds over the
same fake, named ``weather_agent``. Their stops are its agent middleware: ``skip_model`` a ``wrap_model_call``
middleware that answers from a cache once the tool ran (the handler, so the model, is not called);
``max_turns`` LangChain's ``ModelCallLimitMiddleware(run_limit=2)`` (its default ``exit_behavior="end"``: the
run ends with the middleware's own message; with :data:`LIMITS`' ``ToolCallLimitMiddleware`` the call past the limit
is refused, a failed tool call of the truth); ``output_retry`` ``response_format=ToolStrategy(Forecast)``, whose
validator rejects the bare word: LangChain answers the output tool call with the error and asks again;
``guardrail`` LangChain's ``PIIMiddleware`` (a custom detector for the answer, ``strategy="block"``,
``apply_to_output=True``): the answer is blocked, the run raises ``PIIDetectionError``."""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Iterator

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.output_parsers import JsonOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command
from pydantic import BaseModel, field_validator
from langchain.agents import create_agent
from langchain.agents.middleware import (AgentMiddleware, ModelCallLimitMiddleware, PIIMiddleware,
                                         ToolCallLimitMiddleware)
from langchain.agents.structured_output import ToolStrategy

from otel_agents.instrumentors.langchain import LangChainInstrumentor
from tests.langchain.fakes import ToolCallingChatModel, build_agent_graph
from tests.matrix.truth import CITY, REJECTED, TOOL, TOOL_RESULT, Call, ToolRun, Truth

INSTRUMENTOR = LangChainInstrumentor


class TruthChatModel(ToolCallingChatModel):
    """The shared fake, answering from :class:`Truth` (usage on the last stream chunk, as providers send it)."""

    truth: Any = None
    json_answers: bool = False  # an accepted answer as JSON ({"answer": text}): the structured output entry
    agent: str = ""  # a multi-agent run's member: its own calls count
    delegate: Any = None  # a supervisor's first call: ``(handoff tool, args)``
    answer_tool: str | None = None  # an answer given as a call of this tool (``{"answer": text}``): ToolStrategy

    def _answer(self, messages: list) -> tuple[Call, AIMessage]:
        last = messages[-1] if messages else None
        if self.delegate is not None and self.truth.delegates(self.agent):
            call = self.truth.delegate(self.agent, *self.delegate, as_tool=None)  # routed by the graph, not run
        elif self.agent:
            call = self.truth.reply(self.agent)
        else:
            call = self.truth.reply(has_tool_result=last is not None and last.type == "tool")
        turn = call.turn
        text = turn.text or ""
        if self.json_answers and text and text != REJECTED:
            text = json.dumps({"answer": text})
        calls = list(turn.tool_calls)
        if self.answer_tool and text and not calls:
            text, calls = "", [(self.answer_tool, {"answer": text})]
        msg = AIMessage(content=text, id=f"resp-{len(messages)}",
                        tool_calls=[{"name": n, "args": a, "id": f"call_{len(messages)}_{i}", "type": "tool_call"}
                                    for i, (n, a) in enumerate(calls)])
        msg.response_metadata = {"model_name": self.model_name,
                                 "finish_reason": "tool_calls" if calls else "stop"}
        msg.usage_metadata = {"input_tokens": turn.usage[0], "output_tokens": turn.usage[1],
                              "total_tokens": sum(turn.usage)}
        return call, msg

    def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        call, msg = self._answer(messages)
        call.sent(finish=msg.response_metadata["finish_reason"])
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _stream_of(self, messages: list) -> Iterator[ChatGenerationChunk]:
        call, msg = self._answer(messages)
        for chunk in self._chunks(msg):
            if chunk.usage_metadata:  # the last chunk: usage and finish reason
                call.sent(finish=msg.response_metadata["finish_reason"])
            yield ChatGenerationChunk(message=chunk)

    def _stream(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Iterator:
        yield from self._stream_of(messages)

    async def _astream(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> AsyncIterator:
        for chunk in self._stream_of(messages):
            yield chunk


def _tool(truth: Truth, writes: bool = False) -> StructuredTool:
    """The script's tool; ``writes``: it first writes ``{"looking_up": city}`` to LangGraph's stream writer
    (``get_stream_writer()``: what ``stream_mode="custom"`` yields)."""
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        if writes:
            get_stream_writer()({"looking_up": city})
        return truth.tool(city=city)

    async def aget_weather(city: str) -> str:
        """Get the weather for a city."""
        if writes:
            get_stream_writer()({"looking_up": city})
        return await truth.atool(city=city)

    return StructuredTool.from_function(func=get_weather, coroutine=aget_weather, name=TOOL)


def _graph(truth: Truth, writes: bool = False) -> Any:
    truth.agents = [("weather_agent", None)]
    if truth.ending == "skip_model":
        return _answering_graph(truth)
    graph = build_agent_graph(TruthChatModel(truth=truth), [_tool(truth, writes)], name="weather_agent")
    return graph.with_config(recursion_limit=4) if truth.ending == "max_turns" else graph


def _answering_graph(truth: Truth) -> Any:
    """skip_model: ``build_agent_graph`` whose ``agent`` node answers after the tool itself (from a cache)
    instead of calling the model."""
    tools = [_tool(truth)]
    bound = TruthChatModel(truth=truth).bind_tools(tools)

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        if isinstance(state["messages"][-1], ToolMessage):
            return {"messages": [AIMessage(truth.skip(), id="cached")]}
        return {"messages": [bound.invoke(state["messages"], config)]}

    def route(state: MessagesState) -> str:
        return "tools" if getattr(state["messages"][-1], "tool_calls", None) else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(name="weather_agent")
def _supervisor(truth: Truth) -> Any:
    """Multi-agent: a supervisor graph. Its ``supervisor`` node's model hands off (a
    ``transfer_to_weather_agent`` tool call the graph routes on, answered by a ``ToolMessage``, as
    ``langgraph-supervisor`` does) to the ``weather_agent`` node (an agent graph: tool, answer), which returns
    to the supervisor, whose answer ends the run."""
    member = build_agent_graph(TruthChatModel(truth=truth, agent="weather_agent"), [_tool(truth)],
                               name="weather_agent")
    model = TruthChatModel(truth=truth, agent="supervisor", delegate=("transfer_to_weather_agent", {}))

    def supervisor(state: MessagesState, config: RunnableConfig) -> Command:
        reply = model.invoke(state["messages"], config)
        if not reply.tool_calls:
            return Command(goto=END, update={"messages": [reply]})
        done = ToolMessage("Transferred to weather_agent", tool_call_id=reply.tool_calls[0]["id"])
        return Command(goto="weather_agent", update={"messages": [reply, done]})

    graph = StateGraph(MessagesState)
    graph.add_node("supervisor", supervisor, destinations=("weather_agent", END))
    graph.add_node("weather_agent", member)
    graph.add_edge(START, "supervisor")
    graph.add_edge("weather_agent", "supervisor")
    truth.agents = [("supervisor", None), ("weather_agent", "supervisor")]
    truth.top = "supervisor"
    return graph.compile(name="supervisor")


class Forecast(BaseModel):
    """output_retry: the structured output of a ``create_agent`` run (``ToolStrategy``): a whole sentence."""

    answer: str

    @field_validator("answer")
    @classmethod
    def whole_sentence(cls, value: str) -> str:
        if " " not in value.strip():
            raise ValueError("answer with a whole sentence")
        return value


class _Cache(AgentMiddleware):
    """skip_model: a ``wrap_model_call`` middleware that answers from a cache once the tool ran, without calling
    its handler (the model)."""

    def __init__(self, truth: Truth) -> None:
        super().__init__()
        self.truth = truth

    def _cached(self, request: Any) -> Any:
        return AIMessage(self.truth.skip(), id="cached") if isinstance(request.messages[-1], ToolMessage) else None

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return self._cached(request) or handler(request)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return self._cached(request) or await handler(request)


LIMITS = {"ToolCallLimitMiddleware(run_limit=1, exit_behavior='end')":
          lambda: ToolCallLimitMiddleware(run_limit=1, exit_behavior="end"),
          "ModelCallLimitMiddleware(run_limit=2, exit_behavior='error')":
          lambda: ModelCallLimitMiddleware(run_limit=2, exit_behavior="error")}
"""max_turns variants: LangChain's other call-limit middleware, and the limit that raises instead of ending."""


def _agent(truth: Truth, limit: str | None = None) -> Any:
    """A LangChain 1.x ``create_agent`` agent over the fake, with the middleware of ``truth.ending`` (``limit``: a
    :data:`LIMITS` middleware in place of the default cap)."""
    truth.agents = [("weather_agent", None)]
    model, kw = TruthChatModel(truth=truth), {}
    if limit is not None:
        kw["middleware"] = [LIMITS[limit]()]
    elif truth.ending == "skip_model":
        kw["middleware"] = [_Cache(truth)]
    elif truth.ending == "max_turns":
        kw["middleware"] = [ModelCallLimitMiddleware(run_limit=2)]
    elif truth.ending == "output_retry":
        model.answer_tool = "Forecast"
        kw["response_format"] = ToolStrategy(Forecast)
    elif truth.ending == "guardrail":
        kw["middleware"] = [PIIMiddleware("forecast", detector=r"sunny in \w+", strategy="block",
                                          apply_to_input=False, apply_to_output=True)]
    return create_agent(model, [_tool(truth)], name="weather_agent", **kw)


def _given(truth: Truth, update: Any) -> None:
    """What the user got in place of the model's answer, from a state or a node's update: the structured response
    (as JSON) or, at a call-limit middleware's cap, the message it ends the run with."""
    if not isinstance(update, dict):
        return
    if update.get("structured_response") is not None:
        truth.output = json.dumps(update["structured_response"].model_dump(), separators=(",", ":"))
    elif truth.ending == "max_turns" and update.get("messages"):
        truth.output = update["messages"][-1].content
        _refused(truth, update["messages"])


def _refused(truth: Truth, messages: list) -> None:
    """The calls a ``ToolCallLimitMiddleware`` refused (answered with its error ``ToolMessage``, the tool not run),
    from the final state: failed tool calls after those that ran (the limit refuses the calls past it)."""
    asked = {c["id"]: c for m in messages if m.type == "ai" for c in m.tool_calls}
    for m in messages:
        if m.type == "tool" and m.status == "error" and m.tool_call_id in asked:
            truth.tools.append(ToolRun(m.name, dict(asked[m.tool_call_id]["args"]), outcome="error"))


def _agent_final(truth: Truth) -> Any:
    """What an agent run gave: its last message, or the structured response when it has one."""
    def norm(state: Any) -> Any:
        _given(truth, state)
        return state["structured_response"] if state.get("structured_response") is not None else _final(state)
    return norm


def _agent_update(truth: Truth) -> Any:
    """A streamed agent run's node update (:func:`_update`), noting what the user got (:func:`_given`)."""
    def norm(event: dict) -> Any:
        for node, update in event.items():
            if node == "model" or node.endswith("before_model"):
                _given(truth, update)
        return _update(event)
    return norm


INPUT = {"messages": [HumanMessage(CITY)]}
# A bare model call after the tool ran: the script's second turn, the answer.
AFTER_TOOL = [HumanMessage(CITY), AIMessage("", tool_calls=[{"name": TOOL, "args": {"city": CITY}, "id": "call_0"}]),
              ToolMessage(TOOL_RESULT, tool_call_id="call_0")]


async def _abatch(graph: Any) -> Any:
    return [_final(s) for s in await graph.abatch([INPUT])]


def _final(state: Any) -> Any:
    return state["messages"][-1].content


def _content(msg: Any) -> Any:
    return (type(msg).__name__, msg.content if isinstance(msg.content, str) else json.dumps(msg.content),
            [(c["name"], c["args"]) for c in getattr(msg, "tool_calls", None) or []])


def _debug(event: dict) -> Any:
    """A ``stream_mode="debug"`` event without its ids and timestamp (new in every run)."""
    payload = event.get("payload") or {}
    return event["type"], event.get("step"), payload.get("name"), bool(payload.get("error"))


def _task(event: dict) -> Any:
    """A ``stream_mode="tasks"`` event (a task started, or its result or error) without its id."""
    return event.get("name"), "result" in event, bool(event.get("error"))


def _checkpoint(event: dict) -> Any:
    """A ``stream_mode="checkpoints"`` event without its ids: the step, the nodes to run next, the messages."""
    return ((event.get("metadata") or {}).get("step"), tuple(event.get("next") or ()),
            [_content(m) for m in (event.get("values") or {}).get("messages", [])])


def _checkpointed(truth: Truth) -> Any:
    """The graph with LangGraph's in-memory checkpointer (``checkpoints`` mode yields what it saves)."""
    truth.agents = [("weather_agent", None)]
    return build_agent_graph(TruthChatModel(truth=truth), [_tool(truth)], name="weather_agent",
                             checkpointer=InMemorySaver())


def _update(event: dict) -> Any:
    return {node: [_content(m) for m in (upd or {}).get("messages", [])] for node, upd in event.items()}


def _structured(truth: Truth) -> Any:
    """output_retry: the model's answer parsed as JSON (``JsonOutputParser``), the pair retried by LangChain's own
    ``with_retry`` when the parser rejects it (``OutputParserException``): the rejected bare word, then the
    answer as JSON."""
    model = TruthChatModel(truth=truth, json_answers=True)
    return (model | JsonOutputParser()).with_retry(retry_if_exception_type=(OutputParserException,),
                                                   stop_after_attempt=2, wait_exponential_jitter=False)


def _json_output(truth: Truth) -> Any:
    def norm(result: Any) -> Any:
        truth.output = json.dumps(result, separators=(",", ":"))  # what the chain gave: the parsed answer
        return result
    return norm


ENTRIES = {
    "create_agent agent.invoke": lambda t: (lambda: _agent(t).invoke(INPUT), _agent_final(t)),
    "create_agent agent.ainvoke": lambda t: (lambda: _agent(t).ainvoke(INPUT), _agent_final(t)),
    "create_agent agent.stream": lambda t: (lambda: _agent(t).stream(INPUT), _agent_update(t)),
    "create_agent agent.astream": lambda t: (lambda: _agent(t).astream(INPUT), _agent_update(t)),
    **{f"create_agent(middleware=[{limit}]) agent.invoke": (
        lambda t, limit=limit: (lambda: _agent(t, limit).invoke(INPUT), _agent_final(t))) for limit in LIMITS},
    "graph.invoke": lambda t: (lambda: _graph(t).invoke(INPUT), _final),
    "graph.ainvoke": lambda t: (lambda: _graph(t).ainvoke(INPUT), _final),
    "graph.stream": lambda t: (lambda: _graph(t).stream(INPUT), _update),
    "graph.astream": lambda t: (lambda: _graph(t).astream(INPUT), _update),
    "graph.stream(stream_mode='messages')": lambda t: (
        lambda: _graph(t).stream(INPUT, stream_mode="messages"),
        lambda e: (_content(e[0]), e[1]["langgraph_node"])),
    "graph.astream(stream_mode='updates')": lambda t: (
        lambda: _graph(t).astream(INPUT, stream_mode="updates"), _update),
    "graph.astream_events": lambda t: (
        lambda: _graph(t).astream_events(INPUT, version="v2"), lambda e: (e["event"], e["name"])),
    "graph.batch": lambda t: (lambda: [_final(s) for s in _graph(t).batch([INPUT])], lambda x: x),
    "graph.stream(stream_mode='values')": lambda t: (
        lambda: _graph(t).stream(INPUT, stream_mode="values"), lambda st: [_content(m) for m in st["messages"]]),
    "graph.abatch": lambda t: (lambda: _abatch(_graph(t)), lambda x: x),
    "graph.stream(stream_mode='custom')": lambda t: (
        lambda: _graph(t, writes=True).stream(INPUT, stream_mode="custom"), lambda x: x),
    "graph.astream(stream_mode='custom')": lambda t: (
        lambda: _graph(t, writes=True).astream(INPUT, stream_mode="custom"), lambda x: x),
    "graph.stream(stream_mode='debug')": lambda t: (
        lambda: _graph(t).stream(INPUT, stream_mode="debug"), _debug),
    "graph.astream(stream_mode='debug')": lambda t: (
        lambda: _graph(t).astream(INPUT, stream_mode="debug"), _debug),
    "graph.stream(stream_mode='tasks')": lambda t: (
        lambda: _graph(t).stream(INPUT, stream_mode="tasks"), _task),
    "graph.astream(stream_mode='checkpoints')": lambda t: (
        lambda: _checkpointed(t).astream(INPUT, {"configurable": {"thread_id": "t1"}}, stream_mode="checkpoints"),
        _checkpoint),
    "supervisor graph.invoke": lambda t: (lambda: _supervisor(t).invoke(INPUT), _final),
    "supervisor graph.stream": lambda t: (lambda: _supervisor(t).stream(INPUT), _update),
    "supervisor graph.astream(stream_mode='messages')": lambda t: (
        lambda: _supervisor(t).astream(INPUT, stream_mode="messages"),
        lambda e: (_content(e[0]), e[1]["langgraph_node"])),
    "supervisor graph.astream(stream_mode='values')": lambda t: (
        lambda: _supervisor(t).astream(INPUT, stream_mode="values"),
        lambda st: [_content(m) for m in st["messages"]]),
    "model.invoke": lambda t: (lambda: TruthChatModel(truth=t).invoke(AFTER_TOOL), _content),
    "model.stream": lambda t: (lambda: TruthChatModel(truth=t).stream(AFTER_TOOL), _content),
    "model.astream": lambda t: (lambda: TruthChatModel(truth=t).astream(AFTER_TOOL), _content),
    "(model | JsonOutputParser()).with_retry().invoke": lambda t: (lambda: _structured(t).invoke(AFTER_TOOL),
                                                                  _json_output(t)),
}
