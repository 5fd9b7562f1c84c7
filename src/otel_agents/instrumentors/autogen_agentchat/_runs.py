"""Agent and team spans.

* ``BaseChatAgent.run``/``run_stream`` and every agent class's ``on_messages``/
  ``on_messages_stream`` → ``invoke_agent {agent}`` (``agent``). One call chain of one
  agent (``run`` → ``on_messages`` → ``on_messages_stream``, a subclass calling
  ``super()``) is one span: a call on the agent whose span is already current passes through.
* ``BaseGroupChat.run``/``run_stream`` (``RoundRobinGroupChat``, ``SelectorGroupChat``,
  ``Swarm``, ``MagenticOneGroupChat``, ``GraphFlow``…) → ``invoke_workflow {team}``
  (``chain``). While a team runs, its participants' turns (``on_messages_stream``,
  called by the team's runtime) are parented to the team span explicitly, so they nest
  under it whichever context the runtime's tasks were started in. A turn records who
  delegated to it (``otel_agents.agent.parent``): the agent that handed off to it
  (a ``HandoffMessage`` addressed to it, Swarm) or else the team (its speaker choice).
* How a team run stopped (``otel_agents.run.stop_reason`` on its span), from the ``StopMessage``
  the group chat manager signals (``BaseGroupChatManager._signal_termination``): one a termination
  condition made names it in its ``source`` (``MaxMessageTermination`` → ``max_turns``,
  ``TokenUsageTermination`` → ``budget``, any other → ``termination``; an ``OrTerminationCondition``
  joins the names of those that fired, the first decides); one the manager made itself inside
  ``_apply_termination_condition`` is its cap, the team's ``max_turns`` → ``max_turns``; so is one
  ``MagenticOneGroupChat``'s orchestrator makes past its ``max_turns`` rounds. A team run cut off by a cap
  (``max_turns``, ``budget``) has no output: its last message is whatever the last turn produced (a tool
  call's summary), not an answer; but the final answer MagenticOne's orchestrator writes when it stops is.
* A team's ``run_stream`` its caller left before the ``TaskResult`` (closed, dropped) goes on to its end:
  AutoGen's ``run_stream`` waits, as it closes, for its runtime to go idle. The team span's output is then
  the last message of the manager's thread when it signalled the end (after a turn of this run), not the
  last item the caller took.
"""

from __future__ import annotations

import contextvars
from typing import Any

from ..._spans.finalisers import in_forked_child, new_lock
from ..._spans import ChatMessage, SemanticSpan, Telemetry, guard, instrumentation_enabled, probes
from ...semconv import Kind
from ...semconv import attributes as A
from ._context import AGENT, context_of, current_owner
from ._models import chat_messages
from ._streams import SpanStream, run_coroutine


class RunningTeams:
    """Participants of the teams running now → the team's span (bounded by the running teams; none in a forked
    child: the parent's teams are the parent's)."""

    def __init__(self) -> None:
        self._lock = new_lock()
        self._forget()
        in_forked_child(RunningTeams._forget, self)

    def _forget(self) -> None:
        self._by_member: dict[int, list[tuple[SemanticSpan, str]]] = {}
        # the team's output message queue (its manager's too) → its runs' spans, the latest last: a run of a team
        # already running (AutoGen refuses it at once) comes and goes without taking the running one's place
        self._by_queue: dict[int, list[tuple[SemanticSpan, str]]] = {}
        self.stops: dict[int, str | None] = {}  # id(team span) → its stop reason once its manager signalled the end
        self.turns: dict[int, int] = {}  # id(team span) → its members' turns ended so far
        self.answers: dict[int, Any] = {}  # id(team span) → the team's last message when its manager signalled the end

    def enter(self, team: Any, span: SemanticSpan) -> None:
        with self._lock:
            entry = (span, _name(team, "team"))
            self._by_queue.setdefault(id(getattr(team, "_output_message_queue", None)), []).append(entry)
            for member in getattr(team, "_participants", None) or ():
                self._by_member.setdefault(id(member), []).append(entry)

    def leave(self, team: Any, span: SemanticSpan) -> None:
        with self._lock:
            _discard(self._by_queue, id(getattr(team, "_output_message_queue", None)), span)
            self.stops.pop(id(span), None)
            self.turns.pop(id(span), None)
            self.answers.pop(id(span), None)
            for member in getattr(team, "_participants", None) or ():
                _discard(self._by_member, id(member), span)

    def team_of_manager(self, manager: Any) -> SemanticSpan | None:
        """The span of the running team whose group chat manager is ``manager`` (they share the output queue)."""
        entries = self._by_queue.get(id(getattr(manager, "_output_message_queue", None)))
        return entries[-1][0] if entries else None

    def team_of(self, member: Any) -> tuple[SemanticSpan, str] | None:
        entries = self._by_member.get(id(member))
        return entries[-1] if entries else None

    def turn_ended(self, member: Any) -> None:
        """A turn of ``member`` (an agent or a team, a participant of a running team) ended."""
        team = self.team_of(member)
        if team is not None:
            with self._lock:
                self.turns[id(team[0])] = self.turns.get(id(team[0]), 0) + 1

    def __len__(self) -> int:
        return len(self._by_member)


def _discard(index: dict[int, list[tuple[SemanticSpan, str]]], key: int, span: SemanticSpan) -> None:
    """Take ``span``'s entry out of ``index[key]``, and the key once it has none left."""
    entries = index.get(key)
    if entries:
        entries[:] = [e for e in entries if e[0] is not span]
        if not entries:
            del index[key]


def _name(instance: Any, default: str) -> str:
    with guard("autogen.name"):
        return str(getattr(instance, "name", None) or default)
    return default


def message_text(message: Any) -> Any:
    """An AgentChat message (or a string) as text."""
    if isinstance(message, str):
        return message
    to_text = getattr(message, "to_text", None)
    if callable(to_text):
        return to_text()
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else str(message)


def task_value(task: Any) -> Any:
    """A ``task``/``messages`` argument as the span's input: its text, or ``[{source, content}]``."""
    if task is None or isinstance(task, str):
        return task
    if not isinstance(task, (list, tuple)):
        return message_text(task)
    items = [{"role": getattr(m, "source", None) or "user", "content": message_text(m)} for m in task]
    return items[0]["content"] if len(items) == 1 else items


def task_messages(task: Any) -> list[ChatMessage] | None:
    """A ``task``/``messages`` argument of AgentChat messages as the model messages AgentChat makes of them
    (each one's ``to_model_message()``: what an ``AssistantAgent`` adds to its model context, the sender its
    ``name``), converted as a model span's input is; ``None`` for a text task, or a message AgentChat cannot
    convert (the value is then the input)."""
    if task is None or isinstance(task, str):
        return None
    items = task if isinstance(task, (list, tuple)) else [task]
    try:
        model = [m.to_model_message() for m in items]
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        return None
    out = chat_messages(model)
    return out if out and len(out) == len(model) else None


def result_text(result: Any) -> Any:
    """The answer text of a ``Response`` or a ``TaskResult`` (its last message)."""
    message = probes.attr(result, "chat_message")  # a TaskResult (pydantic) has none: no raise for the miss
    if message is not None:
        return message_text(message)
    messages = getattr(result, "messages", None)
    if messages:
        return message_text(messages[-1])
    return None


class RunHooks:
    """Wrappers for AgentChat's agent and team entry points (one set per ``instrument()``)."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry
        self.teams = RunningTeams()
        self.open = 0  # the runs open in this process: none in a forked child
        in_forked_child(lambda hooks: setattr(hooks, "open", 0), self)

    # -- opening ----------------------------------------------------------------------
    def _opener(self, what: str, instance: Any, args: tuple, kwargs: dict, method: str) -> Any:
        def start() -> tuple[SemanticSpan, Any] | None:
            owner = current_owner()
            if owner is not None and owner[0] == id(instance) and not owner[1].ended:
                return None  # the same agent's call chain (run → on_messages → on_messages_stream)
            return self._start(what, instance, args, kwargs, method)

        return start

    def _start(self, what: str, instance: Any, args: tuple, kwargs: dict, method: str) -> tuple[SemanticSpan, Any]:
        name = _name(instance, what)
        team = self.teams.team_of(instance)
        parent = team[0] if team is not None and not team[0].ended else None
        if what == "agent":
            span = self.telemetry.start_span(Kind.AGENT, name, parent=parent)
        else:
            span = self.telemetry.start_span(Kind.CHAIN, name, workflow=True, parent=parent)
        with guard("autogen.run.attributes"):
            if what == "agent":
                span.set_agent(name, description=getattr(instance, "description", None))
            messages = kwargs.get("messages", args[0] if args else None) if method.startswith("on_messages") \
                else kwargs.get("task")
            if what == "agent":
                delegator = _handed_off_by(messages, name) or (team[1] if team is not None else None)
                span.set_attribute(A.OTEL_AGENTS_PARENT_AGENT, delegator)
            if span.records_content and messages is not None:
                span.set_input(task_value(messages),
                               messages=task_messages(messages) if span.input_as_messages else None)
        if what == "team":
            self.teams.enter(instance, span)
        self.open += 1
        return span, context_of(span, AGENT, (id(instance), span, instance))

    def _finisher(self, what: str, instance: Any) -> Any:
        def finish(span: SemanticSpan, result: Any, error: BaseException | None) -> None:
            self.open -= 1
            in_team = what == "agent" and self.teams.team_of(instance) is not None
            if error is None:
                self.teams.turn_ended(instance)
            cut_off = False
            if what == "team":
                answer = self.teams.answers.get(id(span))
                cut_off = self.teams.stops.get(id(span)) in ("max_turns", "budget") and \
                    not _manager_answered(answer, instance)
                self.teams.leave(instance, span)
                if error is None and not _is_task_result(result):  # its caller left run_stream; the team went on
                    result = None if answer is None else _Ended(answer)
            if result is not None and not in_team and _waits_for_human(instance, result):
                span.mark_paused()
            if span.records_content and result is not None and not cut_off:
                text = result_text(result)
                if text is not None:
                    span.set_output(text)

        return finish

    # -- the wrappers ---------------------------------------------------------------
    def coroutine(self, what: str, method: str) -> Any:
        """A wrapt wrapper for a coroutine method (``run``, ``on_messages``) of an agent (``what="agent"``) or a team."""

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            if not instrumentation_enabled():
                return wrapped(*args, **kwargs)
            return run_coroutine(lambda: wrapped(*args, **kwargs), self._opener(what, instance, args, kwargs, method),
                                 self._finisher(what, instance))

        return wrapper

    def stream(self, what: str, method: str) -> Any:
        """A wrapt wrapper for an async-generator method (``run_stream``, ``on_messages_stream``)."""

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            if not instrumentation_enabled():
                return wrapped(*args, **kwargs)
            return SpanStream(lambda: wrapped(*args, **kwargs), self._opener(what, instance, args, kwargs, method),
                              self._finisher(what, instance), final=_is_final)

        return wrapper


_APPLYING: contextvars.ContextVar[Any] = contextvars.ContextVar("otel_agents_autogen_applying", default=None)
"""The group chat manager running the base ``_apply_termination_condition`` in this task (its cap's stop)."""
_CAPS = {"MaxMessageTermination": "max_turns", "TokenUsageTermination": "budget"}


class StopHooks:
    """Wrappers for ``BaseGroupChatManager``: the stop reason of a team run (see the module docstring)."""

    def __init__(self, teams: RunningTeams):
        self.teams = teams

    async def apply_termination(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        token = _APPLYING.set(instance)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            _APPLYING.reset(token)

    async def signal_termination(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        with guard("autogen.stop_reason"):
            message = kwargs.get("message", args[0] if args else None)
            span = self.teams.team_of_manager(instance)
            reason = stop_reason(message, instance, _APPLYING.get() is instance)
            if span is not None:
                if reason is not None:
                    span.set_stop_reason(reason)
                self.teams.stops[id(span)] = reason
                thread = getattr(instance, "_message_thread", None)
                if self.teams.turns.get(id(span)) and thread:  # (none: stopped before a turn, the thread is stale)
                    self.teams.answers[id(span)] = thread[-1]
        return await wrapped(*args, **kwargs)


def stop_reason(message: Any, manager: Any, applying: bool) -> str | None:
    """The stop reason of a team run ended by ``message`` (a ``StopMessage``) from ``manager``; ``None`` when
    the manager stopped the run for another reason (a graph completed, the conversation already terminated)."""
    if getattr(message, "error", None) is not None:
        return None
    source = getattr(message, "source", None)
    if not isinstance(source, str) or not source:
        return None
    if source == getattr(manager, "_name", None):
        if applying:
            return "max_turns"  # the only stop the base manager makes there: its max_turns
        rounds, cap = getattr(manager, "_n_rounds", None), getattr(manager, "_max_turns", None)
        if isinstance(rounds, int) and isinstance(cap, int) and rounds > cap:
            return "max_turns"  # MagenticOne's orchestrator past its max_turns (its final answer then is forced)
        return None
    return _CAPS.get(source.split(", ")[0], "termination")


class _Ended:
    """The team's last message when its manager signalled the end, for a run whose caller left ``run_stream``
    before the ``TaskResult`` (AutoGen's ``run_stream`` waits for its runtime to go idle as it closes)."""

    def __init__(self, message: Any) -> None:
        self.chat_message = message


def _manager_answered(message: Any, team: Any) -> bool:
    """Whether a team's last message is its manager's own final answer (``MagenticOneGroupChat``'s orchestrator
    answers the task when it stops, its ``max_turns`` included), not a member's cut-off turn."""
    source = getattr(message, "source", None)
    return source is not None and source == getattr(team, "_group_chat_manager_name", object()) and \
        type(message).__name__ == "TextMessage"


def _is_task_result(result: Any) -> bool:
    """Whether ``result`` is a team run's ``TaskResult`` (the last item of a ``run_stream`` consumed to the end)."""
    return type(result).__name__ == "TaskResult" or (hasattr(result, "messages") and hasattr(result, "stop_reason"))


def _is_final(item: Any) -> bool:
    """Whether ``item`` is the last one a run stream yields: ``run_stream``'s ``TaskResult``, ``on_messages_stream``'s
    ``Response`` (AgentChat's ``Response``: the final message, ``chat_message``, and ``inner_messages``)."""
    return _is_task_result(item) or (type(item).__name__ == "Response" and hasattr(item, "chat_message"))


def _handed_off_by(messages: Any, name: str) -> str | None:
    """The source of a ``HandoffMessage`` addressed to agent ``name`` among ``messages``."""
    if not isinstance(messages, (list, tuple)):
        return None
    for m in reversed(messages):
        if getattr(m, "target", None) == name and type(m).__name__ == "HandoffMessage":
            return getattr(m, "source", None)
    return None


def _waits_for_human(instance: Any, result: Any) -> bool:
    """Whether a run ended by handing off to someone outside it (AgentChat's human-in-the-loop pattern:
    ``HandoffTermination(target="user")``): the run is paused, waiting for that party's reply."""
    message = probes.attr(result, "chat_message")
    if message is None:
        messages = probes.attr(result, "messages") or ()
        message = messages[-1] if messages else None
    if type(message).__name__ != "HandoffMessage":
        return False
    members = {getattr(p, "name", None) for p in getattr(instance, "_participants", None) or ()}
    return getattr(message, "target", None) not in members | {getattr(instance, "name", None)}
