"""AutoGen AgentChat cells: an ``AssistantAgent`` with one tool (reflecting on its result, so the model answers
after it) over a ``ChatCompletionClient`` subclass (the shape of ``tests/autogen_agentchat/fakes.py``'s
``ScriptedClient``) answering from the matrix's script with each ``CreateResult``'s usage and finish reason.

Stops: ``caller_cancel`` cancels the run's ``CancellationToken`` while the tool runs; the team rows (a
``RoundRobinGroupChat`` of that one agent) stop by ``TextMentionTermination`` on the answer (``termination``),
by the team's ``max_turns=2`` (``run``) or ``MaxMessageTermination(3)`` (``run_stream``) while the model asks
for the tool every turn (``max_turns``; the agent then does not reflect, so a turn is one model call), or by
``TokenUsageTermination(30)`` on the usage of those turns (``budget``, 18 tokens a turn).

Multi-agent rows: ``RoundRobinGroupChat``, ``SelectorGroupChat``, ``Swarm``, ``MagenticOneGroupChat`` (its
orchestrator's model plans, picks the weather agent and gives the final answer), ``GraphFlow`` (a
``DiGraphBuilder`` graph ``planner → weather_agent``), ``AgentTool`` and ``TeamTool`` (an agent, a team, used as
a tool by ``orchestrator``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Sequence

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination, TokenUsageTermination
from autogen_agentchat.messages import TextMessage
from autogen_agentchat.teams import (DiGraphBuilder, GraphFlow, MagenticOneGroupChat, RoundRobinGroupChat,
                                     SelectorGroupChat, Swarm)
from autogen_agentchat.tools import AgentTool, TeamTool
from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import CreateResult, RequestUsage

from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
from tests.autogen_agentchat.fakes import ScriptedClient
from tests.matrix.truth import ANSWER, CITY, TOOL, USAGE, Call, Truth, Turn, _until

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
            call = self.truth.reply(has_tool_result=after_tool and self.truth.ending != "budget")  # (budget: the
            # model asks for the tool every turn, as in max_turns, until the token cap stops the run)
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
                          reflect_on_tool_use=truth.ending not in ("max_turns", "budget"), **kw)


# -- teams (multi-agent): the weather agent's answer ends the run (a text mention) --------------------
def _done(truth: Truth) -> Any:
    truth.ends_by = "termination"  # an AutoGen team ends by a termination condition, even when its task is done
    return TextMentionTermination(ANSWER, sources=["weather_agent"])


def _planner(truth: Truth) -> AssistantAgent:
    return AssistantAgent("planner", model_client=TruthClient(truth, "planner", lambda t: t.say("planner", PLAN)),
                          description="Plans the work.")


def _round_robin(truth: Truth) -> RoundRobinGroupChat:
    """``planner`` speaks (a message), then ``weather_agent`` (tool, answer); its answer ends the run."""
    team = RoundRobinGroupChat([_planner(truth), _agent(truth, "weather_agent")], termination_condition=_done(truth))
    truth.agents = [("planner", None), ("weather_agent", None)]  # (a team's turns: nobody delegates)
    return team


def _selector(truth: Truth) -> SelectorGroupChat:
    """The selector's model picks ``weather_agent`` (a model call of the team's own), which answers."""
    team = SelectorGroupChat([_planner(truth), _agent(truth, "weather_agent", description="Knows the weather.")],
                             model_client=TruthClient(truth, "selector", lambda t: t.say("selector", "weather_agent")),
                             termination_condition=_done(truth))
    truth.agents = [("weather_agent", None)]
    return team


def _swarm(truth: Truth) -> Swarm:
    """``triage`` hands off (``transfer_to_weather_agent``, a tool that returns at once) to ``weather_agent``."""
    triage = AssistantAgent("triage", handoffs=["weather_agent"], model_client=TruthClient(
        truth, "triage", lambda t: t.delegate("triage", "transfer_to_weather_agent", as_tool="returns")))
    team = Swarm([triage, _agent(truth, "weather_agent")], termination_condition=_done(truth))
    truth.agents = [("triage", None), ("weather_agent", "triage")]
    return team


def _graph_flow(truth: Truth) -> GraphFlow:
    """``GraphFlow`` over ``planner → weather_agent`` (``DiGraphBuilder``): the graph completes after the weather
    agent's answer (no termination condition: the run ends by finishing, no stop reason). Stops: the flow's
    ``max_turns=1`` after the planner's turn; a ``TextMentionTermination`` on the weather agent's answer in a
    graph ``weather_agent → planner``."""
    planner, weather = _planner(truth), _agent(truth, "weather_agent")
    builder = DiGraphBuilder()
    stop: dict = {}
    if truth.ending == "termination":  # ``weather_agent → planner``: its answer ends the run before the planner's turn
        builder.add_node(weather).add_node(planner).add_edge(weather, planner)
        truth.agents = [("weather_agent", None), ("planner", None)]
        stop = {"termination_condition": TextMentionTermination(ANSWER, sources=["weather_agent"])}
    else:
        builder.add_node(planner).add_node(weather).add_edge(planner, weather)
        truth.agents = [("planner", None), ("weather_agent", None)]
        if truth.ending == "max_turns":  # the flow's cap: one turn (a later one would be the graph's end, first)
            stop = {"max_turns": 1}
    return GraphFlow(builder.get_participants(), graph=builder.build(), **stop)


LEDGER = {"is_request_satisfied": False, "is_in_loop": False, "is_progress_being_made": True,
          "next_speaker": "weather_agent", "instruction_or_question": CITY}


class OrchestratorClient(TruthClient):
    """MagenticOne's orchestrator model: the task ledger's facts and plan, a progress ledger naming
    ``weather_agent``, then (once the weather agent answered) a ledger saying the request is satisfied, and the
    final answer (the script's answer: the run's output)."""

    def _answer(self, messages: Sequence[Any]) -> CreateResult:
        mine = [c for c in self.truth.calls if c.agent == "orchestrator"]
        answered = any(c.agent == "weather_agent" and c.answered and c.turn and not c.turn.is_tool_call
                       for c in self.truth.calls)
        prompt = str(getattr(messages[-1], "content", ""))
        if len(mine) < 2:
            call = self.truth.say("orchestrator", ("Facts: none.", "Plan: ask the weather agent.")[len(mine)])
        elif "is_request_satisfied" in prompt:  # the progress ledger
            ledger = {k: {"reason": "-", "answer": v} for k, v in LEDGER.items()}
            ledger["is_request_satisfied"]["answer"] = answered
            call = self.truth.say("orchestrator", json.dumps(ledger))
        elif self.truth.ending == "max_turns":  # past its max_turns: the final answer it is asked for anyway
            with self.truth._lock:
                call = Call(Turn(ANSWER, [], USAGE[1]), "orchestrator")
                self.truth.calls.append(call)
        else:
            call = self.truth.reply("orchestrator")  # (it called before: the script's answer)
        call.sent(finish="stop")
        return CreateResult(finish_reason="stop", content=call.turn.text, usage=RequestUsage(*call.turn.usage),
                            cached=False)


def _magentic_one(truth: Truth) -> MagenticOneGroupChat:
    """``MagenticOneGroupChat`` of the weather agent: the orchestrator's model plans, names the weather agent,
    which answers; the orchestrator's final answer (a model call of the team's own) is the run's output and
    ends it (no termination condition: no stop reason). Stops: a ``TextMentionTermination`` on the weather
    agent's answer; the team's ``max_turns=1`` (two rounds of the weather agent asking for the tool, then the
    orchestrator's final answer, still the run's output, with stop reason ``max_turns``)."""
    weather = _agent(truth, "weather_agent", description="Knows the weather.")
    truth.agents = [("weather_agent", None)]
    stop: dict = {}
    if truth.ending == "termination":  # the weather agent's answer ends the run, before the orchestrator's
        stop = {"termination_condition": TextMentionTermination(ANSWER, sources=["weather_agent"])}
    elif truth.ending == "max_turns":  # two rounds (the weather agent asks for the tool), then its final answer
        stop = {"max_turns": 1}
        truth.agents = [("weather_agent", None)] * 2
    return MagenticOneGroupChat([weather], model_client=OrchestratorClient(truth, "orchestrator"), **stop)


def _team_tool(truth: Truth) -> AssistantAgent:
    """A team used as a tool (``TeamTool``): ``orchestrator``'s first call asks for tool ``weather_team`` (a
    ``RoundRobinGroupChat`` of the weather agent, ended by its answer), then reflects on its result and answers."""
    team = RoundRobinGroupChat([_agent(truth, "weather_agent")], name="weather_team",
                               termination_condition=TextMentionTermination(ANSWER, sources=["weather_agent"]))
    truth.agents = [("orchestrator", None), ("weather_agent", "orchestrator")]
    truth.top = "orchestrator"
    client = TruthClient(truth, "orchestrator", lambda t: t.delegate("orchestrator", "weather_team", {"task": CITY}))
    tool = TeamTool(team, name="weather_team", description="The weather team.", return_value_as_last_message=True)
    return AssistantAgent("orchestrator", model_client=client, tools=[tool], reflect_on_tool_use=True)


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


def _team(truth: Truth, stream: bool) -> RoundRobinGroupChat:
    agent = _agent(truth)
    truth.agents = [("weather_agent", None)] * (2 if truth.ending in ("max_turns", "budget") else 1)  # one per turn
    if truth.ending == "budget":  # 18 tokens a turn: the second turn passes 30
        return RoundRobinGroupChat([agent], name="weather_team", termination_condition=TokenUsageTermination(30))
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
    "agent.on_messages_stream": lambda t: (lambda: _on_messages_stream(t), _message),
    "AgentTool agent.run": lambda t: (lambda: _orchestrator(t).run(task=CITY), _result),
    "AgentTool agent.run_stream": lambda t: (lambda: _orchestrator(t).run_stream(task=CITY), _message),
    **{f"{name}.{method}": (lambda build, method: lambda t: (
        lambda: getattr(build(t), method)(task=CITY), _result if method == "run" else _message))(build, method)
       for name, build in (("RoundRobinGroupChat", _round_robin), ("SelectorGroupChat", _selector),
                           ("Swarm", _swarm), ("MagenticOneGroupChat", _magentic_one), ("GraphFlow", _graph_flow))
       for method in ("run", "run_stream")},
    "TeamTool agent.run": lambda t: (lambda: _team_tool(t).run(task=CITY), _result),
    "TeamTool agent.run_stream": lambda t: (lambda: _team_tool(t).run_stream(task=CITY), _message),
    "RoundRobinGroupChat.run (one agent)": lambda t: (lambda: _run(t, _team(t, False).run), _stopped),
    "RoundRobinGroupChat.run_stream (one agent)": lambda t: (lambda: _run_stream(t, _team(t, True).run_stream),
                                                              _team_message),
}
