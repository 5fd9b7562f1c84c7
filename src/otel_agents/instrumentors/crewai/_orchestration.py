"""Spans for CrewAI's orchestration: crews, task executions by agents, standalone agents, flows.

* ``Crew.kickoff`` / ``akickoff`` / ``replay`` → ``chain`` ``invoke_workflow {crew name}``
  (``kickoff_async`` runs ``kickoff`` in a thread, so it is covered; ``replay(task_id)``
  runs the crew again from that task on, its tasks under the crew span as a kickoff's). A
  streaming kickoff (``Crew(stream=True)``) hands back a chunk iterator and
  runs a second, non-streaming ``kickoff`` underneath: that inner call gets the
  span.
* ``Task._execute_core`` / ``_aexecute_core`` → ``agent`` span named by the
  executing agent's role, with ``otel_agents.task.name`` / ``.task.id``; it
  covers the agent's work plus guardrails and callbacks. ``Agent.execute_task``
  adds a span only when no task execution opened one for that agent and task —
  a coworker running delegated work, which therefore nests under the
  delegating agent's tool span.
* ``Agent.kickoff`` / ``kickoff_async`` / ``akickoff`` → ``agent`` (no crew).
* ``process_guardrail`` (each check of a task's or an agent's guardrail, as
  ``crewai.task``, ``crewai.agent.core`` and ``crewai.lite_agent`` call it) → ``chain``
  ``guardrail {function name}``, ERROR (``error.type`` ``guardrail_rejected``,
  the guardrail's error as description) when it rejects the task's output and
  CrewAI has the agent execute the task again.
* ``Flow.kickoff_async`` (``kickoff`` and ``akickoff`` go through it) and ``resume_async``
  (``resume`` runs it: a flow paused for a human's feedback, resumed) →
  ``chain`` named by the flow, and ``Flow._execute_method`` → one ``chain``
  per flow method. CrewAI's agent executor is itself a ``Flow``; it is skipped. A flow
  method whose feedback provider raises ``HumanFeedbackPending`` (CrewAI's signal to wait
  for the human) is paused (``otel_agents.run.paused``; the exception control flow, not an
  error), and so is the flow run that returns it, without output.
* An agent that reached ``max_iter`` (CrewAI then forces a final answer from one more model call,
  ``AgentExecutor.ensure_force_final_answer``) has ``otel_agents.run.stop_reason`` ``max_turns`` on
  its agent span; its output is that forced answer, as CrewAI returns it.
* A task whose guardrail (``Task(guardrail=...)`` / ``guardrails=[...]``) rejected the answer on every
  attempt CrewAI allows (``guardrail_max_retries`` + 1; each retry re-runs the agent in the same span)
  ends its agent span with CrewAI's exception and the stop reason ``guardrail``; the rejected answer is
  no span's output.

The crew's input is its kickoff ``inputs``, or, when it got none, its tasks
(description and expected output of each, at most 100): the run's question.
Task descriptions, expected outputs, agent goals and kickoff inputs are content
(recorded only when the content switch is on); task names and roles are names.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any, Callable

from ..._spans import guard
from ...semconv import Kind, attributes as A
from . import _scope
from ._scope import arg
from ._steps import Hooks, Step


def install(hooks: Hooks) -> None:
    """Wrap CrewAI's crew, task, agent and flow entry points."""
    from crewai import Agent, Crew, Task
    from crewai.agents.agent_executor import AgentExecutor
    from crewai.flow.runtime import Flow

    def crew_kickoff(crew: Any, args: tuple, kwargs: dict) -> Step | None:
        if getattr(crew, "stream", False) or id(crew) in _scope.KICKOFF.get():
            return None
        return _crew_step(crew, arg(args, kwargs, 0, "inputs"))

    def crew_replay(crew: Any, args: tuple, kwargs: dict) -> Step | None:
        return None if id(crew) in _scope.KICKOFF.get() else _crew_step(crew, arg(args, kwargs, 1, "inputs"))

    def task_execution(task: Any, args: tuple, kwargs: dict) -> Step | None:
        agent = arg(args, kwargs, 0, "agent") or task.agent
        return _agent_step(agent, task=task, context=arg(args, kwargs, 1, "context"))

    def agent_execute_task(agent: Any, args: tuple, kwargs: dict) -> Step | None:
        task = arg(args, kwargs, 0, "task")
        if _scope.TASK_RUN.get() == (id(agent), id(task)):
            return None  # the task execution around this call already opened the agent's span
        return _agent_step(agent, task=task, context=arg(args, kwargs, 1, "context"))

    def agent_kickoff(agent: Any, args: tuple, kwargs: dict) -> Step | None:
        if _loop_running():
            return None  # CrewAI returns kickoff_async()'s coroutine here; that call gets the span
        return agent_kickoff_async(agent, args, kwargs)

    def agent_kickoff_async(agent: Any, args: tuple, kwargs: dict) -> Step | None:
        if id(agent) in _scope.KICKOFF.get():
            return None  # akickoff() -> kickoff_async() of the same agent
        step = _agent_step(agent, messages=arg(args, kwargs, 0, "messages"))
        step.scope.append((_scope.KICKOFF, _scope.KICKOFF.get() + (id(agent),)))
        return step

    def flow_kickoff(flow: Any, args: tuple, kwargs: dict) -> Step | None:
        if isinstance(flow, AgentExecutor):
            return None
        return _flow_step(flow, arg(args, kwargs, 0, "inputs"))

    def flow_resume(flow: Any, args: tuple, kwargs: dict) -> Step | None:
        return None if isinstance(flow, AgentExecutor) else _flow_step(flow, arg(args, kwargs, 0, "feedback"))

    def flow_method(flow: Any, args: tuple, kwargs: dict) -> Step | None:
        if isinstance(flow, AgentExecutor):
            return None
        method_name = arg(args, kwargs, 0, "method_name")
        params = list(args[2:]) + [v for k, v in kwargs.items() if k not in ("method_name", "method")]
        return Step(Kind.CHAIN, str(method_name),
                    setup=_input(lambda: params or None), finish=_output(_first), pauses=_pending)

    hooks.span(Crew, "kickoff", crew_kickoff, "crewai.crew")
    hooks.span(Crew, "akickoff", crew_kickoff, "crewai.crew")
    hooks.span(Crew, "replay", crew_replay, "crewai.crew")  # runs the tasks from one on, without kickoff
    hooks.span(Task, "_execute_core", task_execution, "crewai.task")
    hooks.span(Task, "_aexecute_core", task_execution, "crewai.task")
    hooks.span(Agent, "execute_task", agent_execute_task, "crewai.agent")
    hooks.span(Agent, "aexecute_task", agent_execute_task, "crewai.agent")
    hooks.span(Agent, "kickoff", agent_kickoff, "crewai.agent")
    hooks.span(Agent, "kickoff_async", agent_kickoff_async, "crewai.agent")
    hooks.span(Agent, "akickoff", agent_kickoff_async, "crewai.agent")
    import importlib

    for module in ("crewai.task", "crewai.agent.core", "crewai.lite_agent"):  # task and agent guardrails
        try:
            owner = importlib.import_module(module)
        except ImportError:  # a release that moved it: those guardrails' checks get no span
            continue
        if "process_guardrail" in vars(owner):
            hooks.span(owner, "process_guardrail", guardrail_check, "crewai.guardrail")
    hooks.span(Flow, "kickoff_async", flow_kickoff, "crewai.flow")
    hooks.span(Flow, "resume_async", flow_resume, "crewai.flow")  # (resume runs it) a paused flow's rest: a run
    hooks.span(Flow, "_execute_method", flow_method, "crewai.flow")
    hooks.after(AgentExecutor, "ensure_force_final_answer", _forced_final_answer, "crewai.max_iter")
    from crewai.utilities.guardrail import GuardrailResult

    hooks.after(GuardrailResult, "from_tuple", _guardrail_checked, "crewai.guardrail")  # each check's verdict
    hooks.patches.wrap(Task, "_invoke_guardrail_function", _guardrails_sync)
    hooks.patches.wrap(Task, "_ainvoke_guardrail_function", _guardrails_async)


_GUARDRAIL_RESULTS: ContextVar[list | None] = ContextVar("otel_agents_crewai_guardrail_results", default=None)


def _guardrail_checked(_module: Any, args: tuple, kwargs: dict, result: Any) -> None:
    results = _GUARDRAIL_RESULTS.get()
    if results is not None and len(results) < 1000:
        results.append(getattr(result, "success", None))


def _guardrail_stop(task: Any, results: list, exc: BaseException) -> None:
    """A task's guardrail validation raised: when every attempt CrewAI allows (``guardrail_max_retries`` + 1)
    was checked and failed, the guardrail stopped the run (CrewAI raises then), not the agent re-running: the
    agent span gets the stop reason ``guardrail``."""
    with guard("crewai.guardrail_stop"):
        retries = getattr(task, "guardrail_max_retries", None)
        if isinstance(exc, Exception) and isinstance(retries, int) and len(results) == retries + 1 \
                and results and not any(results):
            span = _scope.SPAN.get()
            if span is not None and span.kind is Kind.AGENT:
                span.set_stop_reason("guardrail")


def _guardrails_sync(wrapped: Any, task: Any, args: tuple, kwargs: dict) -> Any:
    results: list = []
    token = _GUARDRAIL_RESULTS.set(results)
    try:
        return wrapped(*args, **kwargs)
    except BaseException as exc:
        _guardrail_stop(task, results, exc)
        raise
    finally:
        _GUARDRAIL_RESULTS.reset(token)


async def _guardrails_async(wrapped: Any, task: Any, args: tuple, kwargs: dict) -> Any:
    results: list = []
    token = _GUARDRAIL_RESULTS.set(results)
    try:
        return await wrapped(*args, **kwargs)
    except BaseException as exc:
        _guardrail_stop(task, results, exc)
        raise
    finally:
        _GUARDRAIL_RESULTS.reset(token)


def _forced_final_answer(executor: Any, args: tuple, kwargs: dict, result: Any) -> None:
    """CrewAI's agent executor routes here only when the agent reached ``max_iter``
    (``check_max_iterations``), then asks the model once more for a final answer, which becomes the
    agent's output: the agent span (the innermost span of ours) gets the stop reason ``max_turns``."""
    span = _scope.SPAN.get()
    if span is not None and span.kind is Kind.AGENT:
        span.set_stop_reason("max_turns")


def guardrail_check(_: Any, args: tuple, kwargs: dict) -> Step:
    """A task guardrail's check of the task's output: a ``chain`` step, ERROR when it rejects the output
    (CrewAI then has the agent execute the task again, up to ``guardrail_max_retries``)."""
    guardrail = kwargs.get("guardrail")
    name = getattr(guardrail, "__name__", None) or type(guardrail).__name__ if guardrail is not None else None
    return Step(Kind.CHAIN, f"guardrail {name}" if name else "guardrail", finish=_guardrail_result)


def _guardrail_result(span: Any, result: Any) -> None:
    if getattr(result, "success", True) is False:
        span.set_error(GUARDRAIL_REJECTED, str(getattr(result, "error", None) or "") or None)


GUARDRAIL_REJECTED = "guardrail_rejected"
"""``error.type`` of a guardrail check that rejected the task's output (a ``GuardrailResult`` with
``success=False``: CrewAI returns, it does not raise)."""


def _agent_step(agent: Any, *, task: Any = None, context: Any = None, messages: Any = None) -> Step:
    """The ``agent`` span of ``agent`` working on ``task``, or on ``messages`` (a standalone kickoff)."""
    role = getattr(agent, "role", None)
    attributes = {A.OTEL_AGENTS_PARENT_AGENT: _scope.AGENT_ROLE.get()}
    scope: list = [(_scope.AGENT_ROLE, role)]
    if task is not None:
        attributes[A.OTEL_AGENTS_TASK_NAME] = getattr(task, "name", None)  # never the description
        attributes[A.OTEL_AGENTS_TASK_ID] = str(task.id) if getattr(task, "id", None) else None
        scope.append((_scope.TASK_RUN, (id(agent), id(task))))

    def setup(span: Any) -> None:
        span.set_agent(role, id=str(getattr(agent, "id", "") or "") or None, description=getattr(agent, "goal", None))
        if span.records_value:
            span.set_input(_task_input(task, context) if task is not None else messages)

    return Step(Kind.AGENT, role, attributes={k: v for k, v in attributes.items() if v is not None},
                setup=setup, finish=_output(_raw), scope=scope)


def _input(build: Callable[[], Any]) -> Callable[[Any], None]:
    """A step's ``setup`` recording its input ``build()``, built only when the span writes it
    (``records_value``: content off, or a chain in OTel GenAI alone, writes none)."""
    def setup(span: Any) -> None:
        if span.records_value:
            span.set_input(build())

    return setup


def _output(convert: Callable[[Any], Any]) -> Callable[[Any, Any], None]:
    """A step's ``finish`` recording ``convert(result)`` as its output, converted only when the span writes it
    (``records_value``)."""
    def finish(span: Any, result: Any) -> None:
        if span.records_value:
            span.set_output(convert(result))

    return finish


def _first(result: Any) -> Any:
    """A flow method's result (``_execute_method`` returns ``(result, ...)``)."""
    return result[0] if isinstance(result, tuple) else result


def _crew_tasks(crew: Any) -> dict[str, Any] | None:
    """The input of a crew kicked off without ``inputs``: its tasks (``{"tasks": [{"description",
    "expected_output"}, ...]}``), where the run's question lives; ``None`` without tasks."""
    tasks = [_task_input(task, None) for task in list(getattr(crew, "tasks", None) or ())[:100]]
    return {"tasks": tasks} if tasks else None


def _task_input(task: Any, context: Any) -> dict[str, Any]:
    """The task as the agent receives it (content): description, expected output, context."""
    fields = {"description": getattr(task, "description", None),
              "expected_output": getattr(task, "expected_output", None),
              "context": context}
    return {k: v for k, v in fields.items() if v}


def _raw(result: Any) -> Any:
    """The text of a CrewAI output object (``CrewOutput``, ``TaskOutput``, ``LiteAgentOutput``), else the value."""
    raw = getattr(result, "raw", None)
    return raw if isinstance(raw, str) else result


def _flow_step(flow: Any, inputs: Any) -> Step:
    """The ``chain`` step of a run of ``flow`` (a kickoff given ``inputs``, or a resume given the human's feedback).
    A run that stops for the human's feedback (CrewAI returns its ``HumanFeedbackPending``) is paused, with no
    output."""
    def finish(span: Any, result: Any) -> None:
        if _pending(result):
            span.mark_paused()
        elif span.records_value:
            span.set_output(result)

    return Step(Kind.CHAIN, getattr(flow, "name", None) or type(flow).__name__,
                setup=_input(lambda: inputs or None), finish=finish)


def _pending(value: Any) -> bool:
    """Whether ``value`` is CrewAI's ``HumanFeedbackPending`` (a flow method's provider raises it, the flow returns
    it: "not an error, a control flow signal", its docstring says): the run waits for a human."""
    return type(value).__name__ == "HumanFeedbackPending"


def _crew_step(crew: Any, inputs: Any) -> Step:
    """The ``chain`` step of a run of ``crew`` given ``inputs`` (its tasks are the input when it got none)."""
    # workflow=True: gen_ai.workflow.name, the span layer's, as for every workflow
    return Step(Kind.CHAIN, getattr(crew, "name", None) or "crew", workflow=True,
                setup=_input(lambda: inputs or _crew_tasks(crew)), finish=_output(_raw),
                scope=[(_scope.KICKOFF, _scope.KICKOFF.get() + (id(crew),))])


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False
