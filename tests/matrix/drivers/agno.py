"""Agno cells: an ``Agent`` with one tool over the scripted ``Model`` subclass of ``tests/agno/fakes.py``,
answering from the matrix's script (usage on the last stream chunk; Agno's ``ModelResponse`` carries no
finish reason, so none is expected). Stops: ``guardrail``: a post-hook rejects the answer (``OutputCheckError``);
Agno returns the run failed, with the rejected answer as its content."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterator

from agno.agent import Agent
from agno.exceptions import CheckTrigger, OutputCheckError
from agno.metrics import MessageMetrics
from agno.models.response import ModelResponse

from otel_agents.instrumentors.agno import AgnoInstrumentor
from tests.agno.fakes import ScriptedModel
from tests.matrix.truth import ANSWER, CITY, TOOL, Call, Truth

INSTRUMENTOR = AgnoInstrumentor


@dataclass
class TruthModel(ScriptedModel):
    truth: Any = None

    def _call(self, messages: list) -> Call:
        return self.truth.reply(has_tool_result=any(m.role == "tool" for m in messages))

    def _tool_calls(self, call: Call) -> list[dict]:
        return [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for i, (n, a) in enumerate(call.turn.tool_calls)]

    def _metrics(self, call: Call) -> MessageMetrics:
        u = call.turn.usage
        return MessageMetrics(input_tokens=u[0], output_tokens=u[1], total_tokens=sum(u))

    def invoke(self, messages: list, **kwargs: Any) -> ModelResponse:
        call = self._call(messages)
        call.sent()
        return ModelResponse(role="assistant", content=call.turn.text, tool_calls=self._tool_calls(call),
                             response_usage=self._metrics(call))

    async def ainvoke(self, messages: list, **kwargs: Any) -> ModelResponse:
        return self.invoke(messages, **kwargs)

    def invoke_stream(self, messages: list, **kwargs: Any) -> Iterator[ModelResponse]:
        call = self._call(messages)
        if call.turn.tool_calls:
            yield ModelResponse(role="assistant", tool_calls=self._tool_calls(call))
        for i, word in enumerate((call.turn.text or "").split(" ") if call.turn.text else []):
            yield ModelResponse(role="assistant", content=word if i == 0 else " " + word)
        call.sent()
        yield ModelResponse(response_usage=self._metrics(call))

    async def ainvoke_stream(self, messages: list, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        for chunk in self.invoke_stream(messages, **kwargs):
            yield chunk


def _agent(truth: Truth, aio: bool) -> Agent:
    truth.agents = [("weather_agent", None)]

    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return truth.tool(city=city)

    async def aget_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    aget_weather.__name__ = TOOL
    hooks = {"post_hooks": [_no_answer]} if truth.ending == "guardrail" else {}
    return Agent(name="weather_agent", model=TruthModel(truth=truth), tools=[aget_weather if aio else get_weather],
                 telemetry=False, **hooks)


def _no_answer(run_output: Any) -> None:
    """The ``guardrail`` cell's output guardrail (a post-hook): it rejects the answer."""
    if ANSWER in str(run_output.content or ""):
        raise OutputCheckError("answers about the weather are blocked", check_trigger=CheckTrigger.OUTPUT_NOT_ALLOWED)


def _content(truth: Truth) -> Any:
    def norm(result: Any) -> Any:
        if str(getattr(result, "status", "")).lower().endswith("error"):  # Agno returns a failed run, with its error
            truth.error_output = result.content
        return _out(result)
    return norm


def _out(result: Any) -> Any:
    return (type(result).__name__, getattr(result, "content", None), str(getattr(result, "status", "")))


def _event(event: Any) -> Any:
    return (getattr(event, "event", type(event).__name__), getattr(event, "content", None))


ENTRIES = {
    "Agent.run": lambda t: (lambda: _agent(t, False).run(CITY), _content(t)),
    "Agent.run(stream=True)": lambda t: (lambda: _agent(t, False).run(CITY, stream=True), _event),
    "Agent.arun": lambda t: (lambda: _agent(t, True).arun(CITY), _content(t)),
    "Agent.arun(stream=True)": lambda t: (lambda: _agent(t, True).arun(CITY, stream=True), _event),
}
