"""smolagents cells: a ``ToolCallingAgent`` with one tool over a ``Model`` subclass written here (the shape of
``tests/smolagents/fakes.py``'s ``ScriptedModel``, plus ``generate_stream``) answering from the matrix's
script; the answer is the ``final_answer`` tool call, as smolagents asks. smolagents' ``ChatMessage`` has
no finish reason, so none is expected; a stream's usage comes on its last delta."""

from __future__ import annotations

import os
from typing import Any, Iterator

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from smolagents import Model, ToolCallingAgent, tool  # noqa: E402
from smolagents.models import (ChatMessage, ChatMessageStreamDelta, ChatMessageToolCall,  # noqa: E402
                               ChatMessageToolCallFunction, ChatMessageToolCallStreamDelta, MessageRole)
from smolagents.monitoring import TokenUsage  # noqa: E402

from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor  # noqa: E402
from tests.matrix.truth import CITY, REJECTED, TOOL, Call, Truth  # noqa: E402

INSTRUMENTOR = SmolagentsInstrumentor


def _calls(call: Call) -> list[tuple[str, dict]]:
    turn = call.turn
    return turn.tool_calls or [("final_answer", {"answer": turn.text})]


class TruthModel(Model):
    def __init__(self, truth: Truth) -> None:
        super().__init__(model_id="scripted-1")
        self.truth = truth

    def _call(self, messages: list) -> Call:
        roles = [m.get("role") if isinstance(m, dict) else getattr(m, "role", None) for m in messages]
        return self.truth.reply(has_tool_result=any(getattr(r, "value", r) == "tool-response" for r in roles))

    def generate(self, messages: list, stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
        call = self._call(messages)
        u = call.turn.usage
        call.sent()
        return ChatMessage(role=MessageRole.ASSISTANT, content="", token_usage=TokenUsage(u[0], u[1]),
                           tool_calls=[ChatMessageToolCall(function=ChatMessageToolCallFunction(name=n, arguments=a),
                                                           id=f"call_{i}", type="function")
                                       for i, (n, a) in enumerate(_calls(call))])

    def generate_stream(self, messages: list, stop_sequences: Any = None, response_format: Any = None,
                        tools_to_call_from: Any = None, **kwargs: Any) -> Iterator[ChatMessageStreamDelta]:
        call = self._call(messages)
        u = call.turn.usage
        for i, (n, a) in enumerate(_calls(call)):
            yield ChatMessageStreamDelta(tool_calls=[ChatMessageToolCallStreamDelta(
                index=i, id=f"call_{i}", type="function", function=ChatMessageToolCallFunction(name=n, arguments=a))])
        call.sent()
        yield ChatMessageStreamDelta(content="", token_usage=TokenUsage(u[0], u[1]))


def _agent(truth: Truth) -> ToolCallingAgent:
    truth.agents = [("weather_agent", None)]

    @tool
    def get_weather(city: str) -> str:
        """Get the weather for a city.

        Args:
            city: the city.
        """
        return truth.tool(city=city)

    def whole_sentence(answer: Any, memory: Any, agent: Any = None) -> bool:
        """output_retry: a bare word is not accepted as the final answer (the agent steps on)."""
        return answer != REJECTED

    get_weather.name = TOOL
    checks = [whole_sentence] if truth.ending == "output_retry" else None
    return ToolCallingAgent(tools=[get_weather], model=TruthModel(truth), name="weather_agent", max_steps=4,
                            verbosity_level=0, final_answer_checks=checks)


def _step(event: Any) -> Any:
    return type(event).__name__


ENTRIES = {
    "agent.run": lambda t: (lambda: _agent(t).run(CITY), lambda r: r),
    "agent.run(stream=True)": lambda t: (lambda: _agent(t).run(CITY, stream=True), _step),
}
