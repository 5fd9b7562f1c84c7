"""smolagents cells: a ``ToolCallingAgent`` with one tool over a ``Model`` subclass written here (the shape of
``tests/smolagents/fakes.py``'s ``ScriptedModel``, plus ``generate_stream``) answering from the matrix's
script; the answer is the ``final_answer`` tool call, as smolagents asks. smolagents' ``ChatMessage`` has
no finish reason, so none is expected; a stream's usage comes on its last delta.

Stops: ``max_turns`` runs with ``max_steps=2``; smolagents then asks the model (offering no tools) for a last
answer and returns it: the fake gives :data:`GIVE_UP`, and that is the run's output. ``caller_cancel``: the
caller calls ``agent.interrupt()`` while the tool runs (the tool finishes; smolagents stops before the next step)."""

from __future__ import annotations

import os
from typing import Any, Iterator

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from smolagents import Model, ToolCallingAgent, tool  # noqa: E402
from smolagents.models import (ChatMessage, ChatMessageStreamDelta, ChatMessageToolCall,  # noqa: E402
                               ChatMessageToolCallFunction, ChatMessageToolCallStreamDelta, MessageRole)
from smolagents.monitoring import TokenUsage  # noqa: E402

from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor  # noqa: E402
from tests.matrix.truth import CITY, TOOL, Call, Truth  # noqa: E402

INSTRUMENTOR = SmolagentsInstrumentor
GIVE_UP = "I could not find out in time"


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
        if tools_to_call_from is None and self.truth.ending == "max_turns":  # max_steps reached: a last answer
            return ChatMessage(role=MessageRole.ASSISTANT, content=GIVE_UP, token_usage=TokenUsage(u[0], u[1]))
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
        if truth.ending == "caller_cancel":
            agent.interrupt()  # as a caller on another thread would, while the tool runs
        return truth.tool(city=city)

    get_weather.name = TOOL
    agent = ToolCallingAgent(tools=[get_weather], model=TruthModel(truth), name="weather_agent",
                            max_steps=2 if truth.ending == "max_turns" else 4, verbosity_level=0)
    return agent


def _gave_up(truth: Truth, result: Any) -> Any:
    """``max_turns``: what smolagents returned is the run's output."""
    if truth.ending == "max_turns":
        truth.output = result
    return result


def _steps(truth: Truth, steps: Any) -> Any:
    if truth.ending != "max_turns":
        return steps

    def gave_up() -> Any:
        for step in steps:
            if type(step).__name__ == "FinalAnswerStep":
                truth.output = step.output
            yield step
    return gave_up()


def _step(event: Any) -> Any:
    return type(event).__name__


ENTRIES = {
    "agent.run": lambda t: (lambda: _gave_up(t, _agent(t).run(CITY)), lambda r: r),
    "agent.run(stream=True)": lambda t: (lambda: _steps(t, _agent(t).run(CITY, stream=True)), _step),
}
