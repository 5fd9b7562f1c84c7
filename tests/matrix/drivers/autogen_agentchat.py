"""AutoGen AgentChat cells: an ``AssistantAgent`` with one tool (reflecting on its result, so the model answers
after it) over a ``ChatCompletionClient`` subclass (the shape of ``tests/autogen_agentchat/fakes.py``'s
``ScriptedClient``) answering from the matrix's script with each ``CreateResult``'s usage and finish reason."""

from __future__ import annotations

import json
from typing import Any, Sequence

from autogen_agentchat.agents import AssistantAgent
from autogen_core import FunctionCall
from autogen_core.models import CreateResult, RequestUsage

from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
from tests.autogen_agentchat.fakes import ScriptedClient
from tests.matrix.truth import CITY, TOOL, Truth

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
                          reflect_on_tool_use=True)


def _result(result: Any) -> Any:
    return [(type(m).__name__, str(getattr(m, "content", ""))) for m in result.messages]


def _message(item: Any) -> Any:
    return (type(item).__name__, str(getattr(item, "content", "")) if not hasattr(item, "messages") else None)


ENTRIES = {
    "agent.run": lambda t: (lambda: _agent(t).run(task=CITY), _result),
    "agent.run_stream": lambda t: (lambda: _agent(t).run_stream(task=CITY), _message),
}
