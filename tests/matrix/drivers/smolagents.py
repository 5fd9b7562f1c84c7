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
from tests.matrix.truth import CITY, REJECTED, TOOL, Call, Truth  # noqa: E402

INSTRUMENTOR = SmolagentsInstrumentor
GIVE_UP = "I could not find out in time"


def _calls(call: Call) -> list[tuple[str, dict]]:
    turn = call.turn
    return turn.tool_calls or [("final_answer", {"answer": turn.text})]


class TruthModel(Model):
    def __init__(self, truth: Truth, agent: str = "", delegate: tuple[str, dict] | None = None,
                 as_tool: str | None = "spans") -> None:
        super().__init__(model_id="scripted-1")
        self.truth = truth
        self.as_tool = as_tool
        self.agent = agent  # a multi-agent run's member: its own calls count
        self.delegate = delegate  # the manager's first call: ``(managed agent, arguments)``

    def _call(self, messages: list) -> Call:
        if self.delegate is not None and self.truth.delegates(self.agent):
            return self.truth.delegate(self.agent, *self.delegate, as_tool=self.as_tool)
        if self.agent:
            return self.truth.reply(self.agent)
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


def _agent(truth: Truth, member: str = "") -> ToolCallingAgent:
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

    def whole_sentence(answer: Any, memory: Any, agent: Any = None) -> bool:
        """output_retry: a bare word is not accepted as the final answer (the agent steps on)."""
        return answer != REJECTED

    get_weather.name = TOOL
    cls = ToolCallingAgent if not member else _Member
    checks = [whole_sentence] if truth.ending == "output_retry" else None
    agent = cls(tools=[get_weather], model=TruthModel(truth, member), name="weather_agent",
                max_steps=2 if truth.ending == "max_turns" else 4, verbosity_level=0, description="Knows the weather.",
                final_answer_checks=checks)
    agent.truth = truth
    return agent


class _Member(ToolCallingAgent):
    """A managed agent that records its delegation when the manager's tool call really starts it."""

    truth: Any = None

    def __call__(self, task: str, **kwargs: Any) -> Any:
        self.truth.delegation_started(self.name, {"task": task, **kwargs}, by="manager")
        return super().__call__(task, **kwargs)


def _manager(truth: Truth) -> ToolCallingAgent:
    """Multi-agent: ``manager`` calls its managed agent ``weather_agent`` (a tool call named after it, which runs
    the agent) and answers from its report."""
    member = _agent(truth, "weather_agent")
    truth.agents = [("manager", None), ("weather_agent", "manager")]
    truth.top = "manager"
    return ToolCallingAgent(tools=[], managed_agents=[member], name="manager", max_steps=4, verbosity_level=0,
                            model=TruthModel(truth, "manager", ("weather_agent", {"task": CITY}, ), as_tool=None))


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
    "managed_agents agent.run": lambda t: (lambda: _manager(t).run(CITY), lambda r: r),
    "managed_agents agent.run(stream=True)": lambda t: (lambda: _manager(t).run(CITY, stream=True), _step),
}
