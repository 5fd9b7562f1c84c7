"""AutoGen AgentChat cells: an ``AssistantAgent`` with one tool (reflecting on its result, so the model answers
after it) over a ``ChatCompletionClient`` subclass (the shape of ``tests/autogen_agentchat/fakes.py``'s
``ScriptedClient``) answering from the matrix's script with each ``CreateResult``'s usage and finish reason.

Stops: ``caller_cancel`` cancels the run's ``CancellationToken`` while the tool runs; the team rows (a
``RoundRobinGroupChat`` of that one agent) stop by ``TextMentionTermination`` on the answer (``termination``),
by the team's ``max_turns=2`` (``run``) or ``MaxMessageTermination(3)`` (``run_stream``) while the model asks
for the tool every turn (``max_turns``; the agent then does not reflect, so a turn is one model call)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Sequence

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import CreateResult, RequestUsage

from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
from tests.autogen_agentchat.fakes import ScriptedClient
from tests.matrix.truth import CITY, TOOL, Truth, _until

INSTRUMENTOR = AutoGenAgentChatInstrumentor


class TruthClient(ScriptedClient):
    def __init__(self, truth: Truth) -> None:
        super().__init__(self._answer)
        self.truth = truth

    def _answer(self, messages: Sequence[Any]) -> CreateResult:
        after_tool = any(type(m).__name__ == "FunctionExecutionResultMessage" for m in messages)
        call = self.truth.reply(has_tool_result=after_tool)
        turn = call.turn
        finish = "function_calls" if turn.is_tool_call else "stop"
        call.sent(finish=finish)
        content: Any = [FunctionCall(id=f"call_{i}", name=n, arguments=json.dumps(a))
                        for i, (n, a) in enumerate(turn.tool_calls)] or turn.text
        return CreateResult(finish_reason=finish, content=content, usage=RequestUsage(*turn.usage), cached=False)


def _agent(truth: Truth) -> AssistantAgent:
    truth.agents = [("weather_agent", None)]

    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    get_weather.__name__ = TOOL
    return AssistantAgent("weather_agent", model_client=TruthClient(truth), tools=[get_weather],
                          reflect_on_tool_use=truth.ending != "max_turns")


def _team(truth: Truth, stream: bool) -> RoundRobinGroupChat:
    agent = _agent(truth)
    truth.agents = [("weather_agent", None)] * (2 if truth.ending == "max_turns" else 1)  # one per turn
    if truth.ending == "max_turns":
        return RoundRobinGroupChat([agent], name="weather_team", **(
            {"termination_condition": MaxMessageTermination(3)} if stream else {"max_turns": 2}))
    return RoundRobinGroupChat([agent], name="weather_team", termination_condition=TextMentionTermination("sunny"))


def _token(truth: Truth) -> dict:
    """``caller_cancel``: a ``CancellationToken`` cancelled (by a task of the caller's) once the tool runs."""
    if truth.ending != "caller_cancel":
        return {}
    token = CancellationToken()

    async def cancel() -> None:
        await _until(lambda: truth.tool_running)
        token.cancel()
    asyncio.get_running_loop().create_task(cancel())
    return {"cancellation_token": token}


async def _run(truth: Truth, run: Any) -> Any:
    return await run(task=CITY, **_token(truth))


async def _run_stream(truth: Truth, run_stream: Any) -> Any:
    async for item in run_stream(task=CITY, **_token(truth)):
        yield item


def _result(result: Any) -> Any:
    return [(type(m).__name__, str(getattr(m, "content", ""))) for m in result.messages]


def _message(item: Any) -> Any:
    return (type(item).__name__, str(getattr(item, "content", "")) if not hasattr(item, "messages") else None)


def _stopped(result: Any) -> Any:
    return (_result(result), result.stop_reason)


def _team_message(item: Any) -> Any:
    return _stopped(item) if hasattr(item, "stop_reason") else _message(item)


ENTRIES = {
    "agent.run": lambda t: (lambda: _run(t, _agent(t).run), _result),
    "agent.run_stream": lambda t: (lambda: _run_stream(t, _agent(t).run_stream), _message),
    "RoundRobinGroupChat.run (one agent)": lambda t: (lambda: _run(t, _team(t, False).run), _stopped),
    "RoundRobinGroupChat.run_stream (one agent)": lambda t: (lambda: _run_stream(t, _team(t, True).run_stream),
                                                              _team_message),
}
