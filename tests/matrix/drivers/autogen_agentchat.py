"""AutoGen AgentChat cells: an ``AssistantAgent`` with one tool (reflecting on its result, so the model answers
after it) over a ``ChatCompletionClient`` subclass (the shape of ``tests/autogen_agentchat/fakes.py``'s
``ScriptedClient``) answering from the matrix's script with each ``CreateResult``'s usage and finish reason."""

from __future__ import annotations

import json
from typing import Any, Sequence

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import TextMentionTermination
from autogen_agentchat.messages import TextMessage
from autogen_agentchat.teams import RoundRobinGroupChat, SelectorGroupChat, Swarm
from autogen_agentchat.tools import AgentTool
from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import CreateResult, RequestUsage

from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
from tests.autogen_agentchat.fakes import ScriptedClient
from tests.matrix.truth import ANSWER, CITY, TOOL, Truth

INSTRUMENTOR = AutoGenAgentChatInstrumentor
PLAN = "Ask the weather agent."


class TruthClient(ScriptedClient):
    def __init__(self, truth: Truth, agent: str = "", role: Any = None) -> None:
        super().__init__(self._answer)
        self.truth = truth
        self.agent = agent
        self.role = role  # a multi-agent member's own turn: ``truth -> Call`` (a handoff, a message, a choice)

    def _answer(self, messages: Sequence[Any]) -> CreateResult:
        if self.role is not None and self.truth.delegates(self.agent):
            call = self.role(self.truth)
        elif self.agent:  # a team's member: its own calls count (the transcript holds the others' turns)
            call = self.truth.reply(self.agent)
        else:
            after_tool = any(type(m).__name__ == "FunctionExecutionResultMessage" for m in messages)
            call = self.truth.reply(has_tool_result=after_tool)
        turn = call.turn
        finish = "function_calls" if turn.is_tool_call else "stop"
        call.sent(finish=finish)
        content: Any = [FunctionCall(id=f"call_{i}", name=n, arguments=json.dumps(a))
                        for i, (n, a) in enumerate(turn.tool_calls)] or turn.text
        return CreateResult(finish_reason=finish, content=content, usage=RequestUsage(*turn.usage), cached=False)


def _agent(truth: Truth, agent: str = "", **kw: Any) -> AssistantAgent:
    truth.agents = [("weather_agent", None)]

    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    get_weather.__name__ = TOOL
    return AssistantAgent("weather_agent", model_client=TruthClient(truth, agent), tools=[get_weather],
                          reflect_on_tool_use=True, **kw)


# -- teams (multi-agent): the weather agent's answer ends the run (a text mention) --------------------
def _done() -> Any:
    return TextMentionTermination(ANSWER, sources=["weather_agent"])


def _planner(truth: Truth) -> AssistantAgent:
    return AssistantAgent("planner", model_client=TruthClient(truth, "planner", lambda t: t.say("planner", PLAN)),
                          description="Plans the work.")


def _round_robin(truth: Truth) -> RoundRobinGroupChat:
    """``planner`` speaks (a message), then ``weather_agent`` (tool, answer); its answer ends the run."""
    team = RoundRobinGroupChat([_planner(truth), _agent(truth, "weather_agent")], termination_condition=_done())
    truth.agents = [("planner", None), ("weather_agent", None)]  # (a team's turns: nobody delegates)
    return team


def _selector(truth: Truth) -> SelectorGroupChat:
    """The selector's model picks ``weather_agent`` (a model call of the team's own), which answers."""
    team = SelectorGroupChat([_planner(truth), _agent(truth, "weather_agent", description="Knows the weather.")],
                             model_client=TruthClient(truth, "selector", lambda t: t.say("selector", "weather_agent")),
                             termination_condition=_done())
    truth.agents = [("weather_agent", None)]
    return team


def _swarm(truth: Truth) -> Swarm:
    """``triage`` hands off (``transfer_to_weather_agent``, a tool that returns at once) to ``weather_agent``."""
    triage = AssistantAgent("triage", handoffs=["weather_agent"], model_client=TruthClient(
        truth, "triage", lambda t: t.delegate("triage", "transfer_to_weather_agent", as_tool="returns")))
    team = Swarm([triage, _agent(truth, "weather_agent")], termination_condition=_done())
    truth.agents = [("triage", None), ("weather_agent", "triage")]
    return team


def _orchestrator(truth: Truth) -> AssistantAgent:
    """An agent used as a tool (``AgentTool``): ``orchestrator``'s first call asks for tool ``weather_agent``,
    which runs the weather agent's task; the orchestrator reflects on its result and answers."""
    member = _agent(truth, "weather_agent", description="Knows the weather.")
    truth.agents = [("orchestrator", None), ("weather_agent", "orchestrator")]
    truth.top = "orchestrator"
    client = TruthClient(truth, "orchestrator", lambda t: t.delegate("orchestrator", "weather_agent", {"task": CITY}))
    tool = AgentTool(member, return_value_as_last_message=True)
    return AssistantAgent("orchestrator", model_client=client, tools=[tool], reflect_on_tool_use=True)


def _on_messages_stream(truth: Truth) -> Any:
    return _agent(truth).on_messages_stream([TextMessage(content=CITY, source="user")], CancellationToken())


def _result(result: Any) -> Any:
    return [(type(m).__name__, str(getattr(m, "content", ""))) for m in result.messages]


def _message(item: Any) -> Any:
    return (type(item).__name__, str(getattr(item, "content", "")) if not hasattr(item, "messages") else None)


ENTRIES = {
    "agent.run": lambda t: (lambda: _agent(t).run(task=CITY), _result),
    "agent.run_stream": lambda t: (lambda: _agent(t).run_stream(task=CITY), _message),
    "agent.on_messages_stream": lambda t: (lambda: _on_messages_stream(t), _message),
    "AgentTool agent.run": lambda t: (lambda: _orchestrator(t).run(task=CITY), _result),
    "AgentTool agent.run_stream": lambda t: (lambda: _orchestrator(t).run_stream(task=CITY), _message),
    **{f"{name}.{method}": (lambda build, method: lambda t: (
        lambda: getattr(build(t), method)(task=CITY), _result if method == "run" else _message))(build, method)
       for name, build in (("RoundRobinGroupChat", _round_robin), ("SelectorGroupChat", _selector),
                           ("Swarm", _swarm)) for method in ("run", "run_stream")},
}
