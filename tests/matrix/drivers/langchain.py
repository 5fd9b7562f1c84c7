"""LangChain / LangGraph cells: a hand-built LangGraph agent loop (``tests/langchain/fakes.py``) over the
``ToolCallingChatModel`` fake, answering from the matrix's script and recording what it sent.

Stops: ``max_turns`` binds ``recursion_limit=4`` to the graph (``with_config``): the model asks for the tool
every turn until LangGraph raises ``GraphRecursionError``."""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Iterator

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import StructuredTool

from otel_agents.instrumentors.langchain import LangChainInstrumentor
from tests.langchain.fakes import ToolCallingChatModel, build_agent_graph
from tests.matrix.truth import CITY, TOOL, TOOL_RESULT, Call, Truth

INSTRUMENTOR = LangChainInstrumentor


class TruthChatModel(ToolCallingChatModel):
    """The shared fake, answering from :class:`Truth` (usage on the last stream chunk, as providers send it)."""

    truth: Any = None

    def _answer(self, messages: list) -> tuple[Call, AIMessage]:
        last = messages[-1] if messages else None
        call = self.truth.reply(has_tool_result=last is not None and last.type == "tool")
        turn = call.turn
        msg = AIMessage(content=turn.text or "", id=f"resp-{len(messages)}",
                        tool_calls=[{"name": n, "args": a, "id": f"call_{i}", "type": "tool_call"}
                                    for i, (n, a) in enumerate(turn.tool_calls)])
        msg.response_metadata = {"model_name": self.model_name,
                                 "finish_reason": "tool_calls" if turn.tool_calls else "stop"}
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


def _tool(truth: Truth) -> StructuredTool:
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return truth.tool(city=city)

    async def aget_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    return StructuredTool.from_function(func=get_weather, coroutine=aget_weather, name=TOOL)


def _graph(truth: Truth) -> Any:
    truth.agents = [("weather_agent", None)]
    graph = build_agent_graph(TruthChatModel(truth=truth), [_tool(truth)], name="weather_agent")
    return graph.with_config(recursion_limit=4) if truth.ending == "max_turns" else graph


INPUT = {"messages": [HumanMessage(CITY)]}
# A bare model call after the tool ran: the script's second turn, the answer.
AFTER_TOOL = [HumanMessage(CITY), AIMessage("", tool_calls=[{"name": TOOL, "args": {"city": CITY}, "id": "call_0"}]),
              ToolMessage(TOOL_RESULT, tool_call_id="call_0")]


def _final(state: Any) -> Any:
    return state["messages"][-1].content


def _content(msg: Any) -> Any:
    return (type(msg).__name__, msg.content if isinstance(msg.content, str) else json.dumps(msg.content),
            [(c["name"], c["args"]) for c in getattr(msg, "tool_calls", None) or []])


def _update(event: dict) -> Any:
    return {node: [_content(m) for m in (upd or {}).get("messages", [])] for node, upd in event.items()}


ENTRIES = {
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
    "model.invoke": lambda t: (lambda: TruthChatModel(truth=t).invoke(AFTER_TOOL), _content),
    "model.stream": lambda t: (lambda: TruthChatModel(truth=t).stream(AFTER_TOOL), _content),
    "model.astream": lambda t: (lambda: TruthChatModel(truth=t).astream(AFTER_TOOL), _content),
}
