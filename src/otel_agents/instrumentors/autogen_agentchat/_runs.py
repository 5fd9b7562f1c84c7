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
"""

from __future__ import annotations

import threading
from typing import Any

from opentelemetry.instrumentation.utils import is_instrumentation_enabled

from ..._spans import SemanticSpan, Telemetry, guard
from ...semconv import Kind
from ...semconv import attributes as A
from ._context import AGENT, context_of, current_owner
from ._streams import SpanStream, run_coroutine


class RunningTeams:
    """Participants of the teams running now → the team's span (bounded by the running teams)."""

    def __init__(self) -> None:
        self._by_member: dict[int, list[tuple[SemanticSpan, str]]] = {}
        self._lock = threading.Lock()

    def enter(self, team: Any, span: SemanticSpan) -> None:
        with self._lock:
            for member in getattr(team, "_participants", None) or ():
                self._by_member.setdefault(id(member), []).append((span, _name(team, "team")))

    def leave(self, team: Any, span: SemanticSpan) -> None:
        with self._lock:
            for member in getattr(team, "_participants", None) or ():
                entries = self._by_member.get(id(member))
                if entries:
                    entries[:] = [e for e in entries if e[0] is not span]
                    if not entries:
                        del self._by_member[id(member)]

    def team_of(self, member: Any) -> tuple[SemanticSpan, str] | None:
        entries = self._by_member.get(id(member))
        return entries[-1] if entries else None

    def __len__(self) -> int:
        return len(self._by_member)


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


def result_text(result: Any) -> Any:
    """The answer text of a ``Response`` or a ``TaskResult`` (its last message)."""
    message = getattr(result, "chat_message", None)
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
        self.open = 0

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
            else:
                span.set_attributes({A.GEN_AI_AGENT_NAME: name})
            messages = kwargs.get("messages", args[0] if args else None) if method.startswith("on_messages") \
                else kwargs.get("task")
            if what == "agent":
                delegator = _handed_off_by(messages, name) or (team[1] if team is not None else None)
                span.set_attribute(A.OTEL_AGENTS_PARENT_AGENT, delegator)
            if span.records_content and messages is not None:
                span.set_input(task_value(messages))
        if what == "team":
            self.teams.enter(instance, span)
        self.open += 1
        return span, context_of(span, AGENT, (id(instance), span, instance))

    def _finisher(self, what: str, instance: Any) -> Any:
        def finish(span: SemanticSpan, result: Any, error: BaseException | None) -> None:
            self.open -= 1
            in_team = what == "agent" and self.teams.team_of(instance) is not None
            if what == "team":
                self.teams.leave(instance, span)
            if result is not None and not in_team and _waits_for_human(instance, result):
                span.mark_paused()
            if span.records_content and result is not None:
                text = result_text(result)
                if text is not None:
                    span.set_output(text)

        return finish

    # -- the wrappers ---------------------------------------------------------------
    def coroutine(self, what: str, method: str) -> Any:
        """A wrapt wrapper for a coroutine method (``run``, ``on_messages``) of an agent (``what="agent"``) or a team."""

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            if not is_instrumentation_enabled():
                return wrapped(*args, **kwargs)
            return run_coroutine(lambda: wrapped(*args, **kwargs), self._opener(what, instance, args, kwargs, method),
                                 self._finisher(what, instance))

        return wrapper

    def stream(self, what: str, method: str) -> Any:
        """A wrapt wrapper for an async-generator method (``run_stream``, ``on_messages_stream``)."""

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            if not is_instrumentation_enabled():
                return wrapped(*args, **kwargs)
            return SpanStream(lambda: wrapped(*args, **kwargs), self._opener(what, instance, args, kwargs, method),
                              self._finisher(what, instance))

        return wrapper


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
    message = getattr(result, "chat_message", None)
    if message is None:
        messages = getattr(result, "messages", None) or ()
        message = messages[-1] if messages else None
    if type(message).__name__ != "HandoffMessage":
        return False
    members = {getattr(p, "name", None) for p in getattr(instance, "_participants", None) or ()}
    return getattr(message, "target", None) not in members | {getattr(instance, "name", None)}
