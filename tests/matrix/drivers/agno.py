"""Agno cells: an ``Agent`` with one tool over the scripted ``Model`` subclass of ``tests/agno/fakes.py``,
answering from the matrix's script (usage on the last stream chunk; Agno's ``ModelResponse`` carries no
finish reason, so none is expected). Stops: ``guardrail``: a post-hook rejects the answer (``OutputCheckError``;
the agent's, or for a team the team's); Agno returns the run failed, with the rejected answer as its content. ``caller_cancel``: ``Agent.cancel_run(run_id)``
(a team's or a workflow's: ``cancel_run`` of the run id given to ``run``/``arun``, which Agno cascades to the
agent's run)
from another thread while the tool runs (:class:`_Canceller`)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterator

from agno.agent import Agent
from agno.team import Team
from agno.team.mode import TeamMode
from agno.workflow import Step, Workflow
from agno.exceptions import CheckTrigger, OutputCheckError
from agno.metrics import MessageMetrics
from agno.models.response import ModelResponse
from agno.run.base import RunContext
from agno.run.cancel import is_cancelled

from otel_agents.instrumentors.agno import AgnoInstrumentor
from tests.agno.fakes import ScriptedModel
from tests.matrix.truth import ANSWER, CITY, TOOL, TOOL_RESULT, Call, ToolRun, Truth

INSTRUMENTOR = AgnoInstrumentor


@dataclass
class TruthModel(ScriptedModel):
    truth: Any = None
    agent: str = ""  # a multi-agent run's member: its own calls count
    delegate: Any = None  # a team leader's first call: ``(tool, args)``
    plan: Any = None  # a team leader's calls before its answer: ``fn(truth, messages) -> Call | None``

    def _call(self, messages: list) -> Call:
        if self.plan is not None:
            call = self.plan(self.truth, messages)
            if call is not None:
                return call
        if self.delegate is not None and self.truth.delegates(self.agent):
            return self.truth.delegate(self.agent, *self.delegate)
        if self.agent:
            return self.truth.reply(self.agent)
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


def _agent(truth: Truth, aio: bool, agent: str = "") -> Agent:
    truth.agents = [("weather_agent", None)]
    cancel = _Canceller(truth) if truth.ending == "caller_cancel" else None
    _CANCELLERS[id(truth)] = cancel

    def get_weather(city: str, run_context: RunContext) -> str:
        """Get the weather for a city."""
        if cancel is not None:
            return cancel.tool(run_context.run_id, city)
        return truth.tool(city=city)

    async def aget_weather(city: str, run_context: RunContext) -> str:
        """Get the weather for a city."""
        if cancel is not None:
            return await cancel.atool(run_context.run_id, city)
        return await truth.atool(city=city)

    aget_weather.__name__ = TOOL
    hooks = {"post_hooks": [_no_answer]} if truth.ending == "guardrail" and not agent else {}
    return Agent(name="weather_agent", id="weather-agent", model=TruthModel(truth=truth, agent=agent),
                 tools=[aget_weather if aio else get_weather], telemetry=False, **hooks)


_CANCELLERS: dict[int, Any] = {}  # id(truth) → its run's _Canceller (the last agent built for it)


class _Canceller:
    """``caller_cancel``: the caller cancels the run with Agno's own handle (``Agent.cancel_run(run_id)``, from
    another thread, as a server's cancel endpoint does) while the tool runs. Agno's cancellation is cooperative:
    the tool is not interrupted (it returns once the run is marked cancelled), the run stops at its next check,
    before the next model call, and returns (or streams) a run with status ``cancelled``."""

    def __init__(self, truth: Truth) -> None:
        self.truth = truth
        self.outer: tuple[Any, str] | None = None  # a team's or workflow's ``(cancel_run, run id)``: the caller
        # cancels that run, and Agno cascades to the agent's

    def _start(self, run_id: str, city: str) -> ToolRun:
        run = ToolRun(TOOL, {"city": city})
        self.truth.tools.append(run)
        cancel = self.outer or (Agent.cancel_run, run_id)
        threading.Thread(target=cancel[0], args=cancel[1:]).start()  # the caller's cancel, meanwhile
        return run

    def tool(self, run_id: str, city: str) -> str:
        run, deadline = self._start(run_id, city), time.monotonic() + 10  # (a bound: a cancel that never lands
        while not is_cancelled(run_id) and time.monotonic() < deadline:  # fails the cell, never hangs it)
            time.sleep(0.002)
        run.outcome = "ok"
        return TOOL_RESULT

    async def atool(self, run_id: str, city: str) -> str:
        run, deadline = self._start(run_id, city), time.monotonic() + 10
        while not is_cancelled(run_id) and time.monotonic() < deadline:
            await asyncio.sleep(0.002)
        run.outcome = "ok"
        return TOOL_RESULT


def _team(truth: Truth, aio: bool, mode: TeamMode = TeamMode.coordinate) -> Team:
    """Multi-agent (coordinate mode): the leader delegates (``delegate_task_to_member``, a tool span the member's
    run is under) to ``weather_agent``, then answers: the team's answer is the run's."""
    member = _agent(truth, aio, "weather_agent")
    truth.agents = [("weather_agent", None)]  # (the team is a workflow span: no agent delegates)
    if mode is TeamMode.coordinate or truth.ending in ("break_close", "break_drop"):
        # (route mode: the member's answer is the team's, the leader does not answer again; but a member that
        # answers after the caller left the team's stream answered no one)
        truth.top = "desk"
    leader = TruthModel(truth=truth, agent="desk", delegate=("delegate_task_to_member",
                                                             {"member_id": "weather-agent", "task": CITY}))
    hooks = {"post_hooks": [_no_answer]} if truth.ending == "guardrail" else {}  # the team's, not the member's
    return Team(name="desk", members=[member], model=leader, mode=mode, telemetry=False, **hooks)


def _broadcast(truth: Truth, aio: bool) -> Team:
    """``TeamMode.broadcast``: the leader gives the task to every member (``delegate_task_to_members``, one tool
    span the members' runs are under: the weather agent's, and ``planner``'s, which only says something; ``run``
    runs them in turn, ``arun`` at once), then answers."""
    team = _team(truth, aio, TeamMode.broadcast)
    team.model.delegate = ("delegate_task_to_members", {"task": CITY})
    planner = Agent(name="planner", id="planner", telemetry=False, model=TruthModel(
        truth=truth, agent="planner", plan=lambda t, messages: t.say("planner", "Ask the weather agent.")))
    team.members = [*team.members, planner]
    truth.agents = [("weather_agent", None), ("planner", None)]
    return team


def _tasks_plan(truth: Truth, messages: list) -> Call | None:
    """``TeamMode.tasks``, the leader's calls before its answer: ``create_task`` (assigned to the weather agent),
    ``execute_task`` with the id Agno gave it (the member's run is under that tool span), ``mark_all_complete``."""
    made = [c for c in truth.calls if c.agent == "desk"]
    if len(made) == 0:
        return truth.delegate("desk", "create_task", {"title": "weather", "assignee": "weather-agent"},
                              as_tool="returns")
    if len(made) == 1:
        created = [str(m.content) for m in messages if m.role == "tool" and "Task created" in str(m.content)]
        task_id = re.search(r"\[([^\]]+)\]", created[-1]).group(1) if created else "?"
        return truth.delegate("desk", "execute_task", {"task_id": task_id, "member_id": "weather-agent"})
    if len(made) == 2:
        return truth.delegate("desk", "mark_all_complete", {"summary": "done"}, as_tool="returns")
    return None  # the answer (the script's second turn)


def _tasks(truth: Truth, aio: bool) -> Team:
    team = _team(truth, aio, TeamMode.tasks)
    team.model.plan = _tasks_plan
    return team


def _workflow(truth: Truth, aio: bool) -> Workflow:
    """A ``Workflow`` of one ``Step`` running the weather agent: the step's output (the agent's answer) is the
    workflow's."""
    agent = _agent(truth, aio, "weather_agent")
    return Workflow(name="weather_flow", steps=[Step(name="weather", agent=agent)], telemetry=False)


def _run_id(truth: Truth, outer: Team | Workflow) -> dict:
    """``caller_cancel`` of a team or a workflow: its run id (given to ``run``/``arun``), which the caller cancels
    (``Team.cancel_run``, ``workflow.cancel_run``)."""
    cancel = _CANCELLERS.pop(id(truth), None)
    if cancel is None:
        return {}
    cancel.outer = (outer.cancel_run, f"outer-{uuid.uuid4()}")
    return {"run_id": cancel.outer[1]}


def _start(truth: Truth, outer: Team | Workflow, method: str, **kw: Any) -> Any:
    """``outer.run``/``arun``(city, ``**kw``), with the run id a ``caller_cancel`` cell cancels."""
    return getattr(outer, method)(CITY, **kw, **_run_id(truth, outer))


def _no_answer(run_output: Any) -> None:
    """The ``guardrail`` cell's output guardrail (a post-hook): it rejects the answer."""
    if ANSWER in str(run_output.content or ""):
        raise OutputCheckError("answers about the weather are blocked", check_trigger=CheckTrigger.OUTPUT_NOT_ALLOWED)


def _content(truth: Truth) -> Any:
    def norm(result: Any) -> Any:
        if str(getattr(result, "status", "")).lower().endswith("error"):  # Agno returns a failed run, with its error
            truth.error_output = result.content
        if str(getattr(result, "status", "")).lower().endswith("cancelled"):
            truth.withheld = True  # (a run cancelled after its model answered returns Agno's notice instead)
        return _out(result)
    return norm


def _flow_content(truth: Truth) -> Any:
    """A workflow's result: Agno passes a step's failure on as the workflow's content (a failed agent run's error
    message, or "Step skipped due to error: ..." once the step's retries are spent) and completes the workflow."""
    norm = _content(truth)

    def flow(result: Any) -> Any:
        if any(_status_of(r).endswith("error") for r in getattr(result, "step_executor_runs", None) or ()):
            truth.error_output = result.content
        return norm(result)
    return flow


def _flow_event(truth: Truth) -> Any:
    """A workflow's events: after a member's ``RunError``, the ``WorkflowCompleted`` content is the failure's. A
    streamed step whose agent run failed runs it again (``Step.max_retries``): one agent run per ``RunError``."""
    failed: list[bool] = []
    # a workflow cancelled from another thread: whether its agent's RunCancelled/RunCompleted reach the caller
    # depends on whether the agent's or the workflow's own cancellation check sees the cancel first
    truth.events_race = truth.ending == "caller_cancel"

    def flow(event: Any) -> Any:
        name = str(getattr(event, "event", ""))
        if name.endswith("RunError"):
            failed.append(True)
            truth.agents = [("weather_agent", None)] * len(failed)
        elif name == "WorkflowCompleted" and failed:
            truth.error_output = getattr(event, "content", None)
        elif name == "WorkflowCancelled":
            truth.withheld = True  # (the agent's answer, if it came before the cancel, is not the caller's)
        return _event(event)
    return flow


def _status_of(run: Any) -> str:
    return str(getattr(run, "status", "")).lower()


def _out(result: Any) -> Any:
    content = getattr(result, "content", None)
    if isinstance(content, str):  # a cancelled run's content names it: "Run <run id> was cancelled"
        content = re.sub(r"Run \S+ was cancelled", "Run was cancelled", content)
    return (type(result).__name__, content, str(getattr(result, "status", "")))


def _event(event: Any) -> Any:
    content = getattr(event, "content", None)
    if isinstance(content, str):  # a member's ToolCallCompleted says how long the tool took; a cancelled run its id
        content = re.sub(r" completed in [0-9.e-]+s", " completed", content)
        content = re.sub(r"Run \S+ was cancelled", "Run was cancelled", content)
    return (getattr(event, "event", type(event).__name__), content)


ENTRIES = {
    "Agent.run": lambda t: (lambda: _agent(t, False).run(CITY), _content(t)),
    "Agent.run(stream=True)": lambda t: (lambda: _agent(t, False).run(CITY, stream=True), _event),
    "Agent.arun": lambda t: (lambda: _agent(t, True).arun(CITY), _content(t)),
    "Agent.arun(stream=True)": lambda t: (lambda: _agent(t, True).arun(CITY, stream=True), _event),
    "Team.run": lambda t: (lambda: _start(t, _team(t, False), "run"), _content(t)),
    "Team.run(stream=True)": lambda t: (lambda: _start(t, _team(t, False), "run", stream=True), _event),
    "Team.arun": lambda t: (lambda: _start(t, _team(t, True), "arun"), _content(t)),
    "Team.arun(stream=True)": lambda t: (lambda: _start(t, _team(t, True), "arun", stream=True), _event),
    "Workflow.run": lambda t: (lambda: _start(t, _workflow(t, False), "run"), _flow_content(t)),
    "Workflow.run(stream=True)": lambda t: (lambda: _start(t, _workflow(t, False), "run", stream=True),
                                            _flow_event(t)),
    "Workflow.arun": lambda t: (lambda: _start(t, _workflow(t, True), "arun"), _flow_content(t)),
    "Workflow.arun(stream=True)": lambda t: (lambda: _start(t, _workflow(t, True), "arun", stream=True),
                                             _flow_event(t)),
    "broadcast Team.run": lambda t: (lambda: _broadcast(t, False).run(CITY), _content(t)),
    "broadcast Team.arun(stream=True)": lambda t: (lambda: _broadcast(t, True).arun(CITY, stream=True), _event),
    "tasks Team.run": lambda t: (lambda: _tasks(t, False).run(CITY), _content(t)),
    "tasks Team.arun(stream=True)": lambda t: (lambda: _tasks(t, True).arun(CITY, stream=True), _event),
    "route Team.run": lambda t: (lambda: _team(t, False, TeamMode.route).run(CITY), _content(t)),
    "route Team.arun(stream=True)": lambda t: (
        lambda: _team(t, True, TeamMode.route).arun(CITY, stream=True), _event),
}
