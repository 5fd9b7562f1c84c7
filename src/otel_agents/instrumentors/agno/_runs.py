"""Run spans: ``Agent.run``/``arun`` → ``agent``, ``Team.run``/``arun`` and ``Workflow.run``/``arun`` →
``chain`` with ``invoke_workflow``, workflow steps → ``chain``.

One wrapper, :meth:`RunHooks.wrap`, serves every entry point whatever it
returns: a result (the span ends with it), a coroutine (ends when awaited), a
sync or async stream of events (ends when the stream is exhausted, closed,
raised, or abandoned — see :func:`~otel_agents._spans.wrap_stream`). The span
is current while Agno's code runs, and only then.

Agno does not raise when a run fails: it returns a ``RunOutput`` whose
``status`` is ``error`` (or yields a ``RunError`` event). The span then ends
with ERROR, with the exception a failed step raised (:func:`._context.last_error`), or else in-band:
``error.type`` ``_OTHER`` (OTel's fallback) and Agno's message as the description.
"""

from __future__ import annotations

import contextvars
import weakref
from typing import Any, Callable


from ..._spans.finalisers import in_forked_child, new_lock
from ..._spans import (ChatMessage, ReasoningPart, SemanticSpan, Telemetry, TextPart, encode, guard,
                       instrumentation_enabled, pop_run_attributes, probes, push_run_attributes, to_jsonable,
                       wrap_stream)
from ...semconv import Kind
from ...semconv import attributes as A
from . import _convert, _reasoning
from ._context import (abandon_streams_under, activate, block, blocked, cancelled_under, had_cancelled_run, in_context,
                       innermost, last_error, parent, stopped, track_stream)


# The agent/team/workflow name behind each open run span (for a member's ``otel_agents.agent.parent``).
_SUBJECTS: "weakref.WeakKeyDictionary[SemanticSpan, str]" = weakref.WeakKeyDictionary()


class _Awaited:
    """A run being awaited in this task: the background run it spawns (``arun(background=True)``, Agno's
    ``_spawn_background``), which goes on after the call returns the pending run, ends its span."""

    __slots__ = ("span", "spawned", "done", "handed", "result")

    def __init__(self, span: SemanticSpan) -> None:
        self.span = span
        self.spawned = self.done = self.handed = False  # spawned a background run / it ended / it ends the span
        self.result: Any = None


_AWAITED: contextvars.ContextVar[_Awaited | None] = contextvars.ContextVar("otel_agents_agno_awaited", default=None)


class OpenSpans:
    """The run spans open now (for ``open_runs()``; an entry leaves when its span ends; none in a forked child)."""

    def __init__(self) -> None:
        self._lock = new_lock()
        self._forget()
        in_forked_child(OpenSpans._forget, self)

    def _forget(self) -> None:
        self._spans: set[int] = set()

    def add(self, span: SemanticSpan) -> None:
        with self._lock:
            self._spans.add(id(span))

    def discard(self, span: SemanticSpan) -> None:
        with self._lock:
            self._spans.discard(id(span))

    def __len__(self) -> int:
        return len(self._spans)


def _name(instance: Any, default: str) -> str:
    return getattr(instance, "name", None) or getattr(instance, "id", None) or default


def _agent_id(instance: Any) -> str | None:
    """An agent's stable id for ``gen_ai.agent.id``: the id the user gave it, or the one Agno derives from its
    name (``agno.utils.string.generate_id_from_name``, assigned by Agno when the first run starts, so reading
    ``instance.id`` alone gave no id on a first run and one on the next). ``None`` for a nameless agent: Agno
    gives it a random id per instance, which after a run cannot be told apart from one the user gave, and an
    in-memory instance id identifies no agent across processes (OTel GenAI v1.41: "the unique identifier of
    the GenAI agent")."""
    name = getattr(instance, "name", None)
    if not name or not isinstance(name, str):
        return None
    given = getattr(instance, "id", None)
    if given:
        return str(given)
    from agno.utils.string import generate_id_from_name  # Agno's own rule (agno>=3.1.10)
    return generate_id_from_name(name)


def _arg(args: tuple, kwargs: dict, name: str, index: int = 0) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else None


def _status(result: Any) -> str:
    status = getattr(result, "status", None)
    return str(getattr(status, "value", status) or "").lower()


class RunHooks:
    """Wrappers for Agno's run entry points (one set per ``instrument()``)."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry
        self.open = OpenSpans()

    # -- opening -------------------------------------------------------------------
    def _start(self, what: str, instance: Any, args: tuple, kwargs: dict, resumed: bool = False) -> SemanticSpan:
        ids: dict[str, Any] = {}
        if what in ("agent", "team", "workflow"):
            # An id that cannot be written as text loses only itself (probes.identifier), not the run's span.
            session = (probes.identifier(kwargs.get("session_id"), "agno.session_id")
                       or probes.identifier(probes.attr(instance, "session_id"), "agno.session_id"))
            user = (probes.identifier(kwargs.get("user_id"), "agno.user_id")
                    or probes.identifier(probes.attr(instance, "user_id"), "agno.user_id"))
            if session:
                ids[A.SESSION_ID] = ids[A.GEN_AI_CONVERSATION_ID] = session
            if user:
                ids[A.USER_ID] = user
        token = push_run_attributes(ids) if ids else None
        try:
            if what == "agent":
                span = self.telemetry.start_span(Kind.AGENT, _name(instance, "agent"), parent=parent())
            elif what == "step":
                span = self.telemetry.start_span(Kind.CHAIN, _name(instance, type(instance).__name__), parent=parent())
            else:
                span = self.telemetry.start_span(Kind.CHAIN, _name(instance, what), workflow=True, parent=parent())
        finally:
            if token is not None:
                pop_run_attributes(token)
        if what == "agent" and _reasoning.in_reasoning_phase():
            _reasoning.mark(span)
        with guard("agno.run_attributes"):
            if what == "agent":
                span.set_agent(_name(instance, "agent"), id=_agent_id(instance),
                               description=getattr(instance, "description", None))
                delegation = span.parent
                if delegation is not None and delegation.kind is Kind.TOOL and delegation.parent is not None:
                    # a team member (or an agent used as a tool): who delegated to it
                    span.set_attribute(A.OTEL_AGENTS_PARENT_AGENT, _SUBJECTS.get(delegation.parent))
            if span.records_value:
                # (a resumed run's first argument is the paused run's output, not an input)
                value = _arg(args, kwargs, "input") if what != "step" and not resumed else None
                if value is not None:
                    span.set_input(_jsonable(value),
                                   messages=_input_messages(value, kwargs) if span.input_as_messages else None)
        _SUBJECTS[span] = _name(instance, what)
        self.open.add(span)
        return span

    # -- the wrapper -----------------------------------------------------------------
    def wrap(self, what: str, resumed: bool = False) -> Callable[..., Any]:
        """A wrapt wrapper opening a span of ``what`` (``agent``, ``team``, ``workflow``, ``step``); ``resumed``: the
        method resumes a paused run (``continue_run``/``acontinue_run``), its span has no input."""

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            if not instrumentation_enabled():
                return wrapped(*args, **kwargs)
            span = None
            with guard(f"agno.{what}.start"):
                span = self._start(what, instance, args, kwargs, resumed)
            if span is None:
                return wrapped(*args, **kwargs)
            try:
                with activate(span):
                    result = wrapped(*args, **kwargs)
            except BaseException as exc:
                self._end(span, error=exc)
                raise
            if probes.is_awaitable(result) or _is_stream(result):
                handed = None
                with guard("agno.run.wrap_result"):
                    if probes.is_awaitable(result):
                        handed = self._awaiting(result, span, what, instance)
                    else:
                        handed = self._stream(in_context(result, span), span, _StreamSeen(what, instance))
                if handed is None:  # ours failed: the user gets Agno's own object, the span ends now
                    self._end(span)
                    return result
                return handed
            self._end(span, result=result)
            return result

        return wrapper

    async def _awaiting(self, awaitable: Any, span: SemanticSpan, what: str, instance: Any) -> Any:
        """``awaitable``'s result, ``span`` ending with it; a stream it gives (``Workflow.acontinue_run(stream=True)``,
        an ``async def``) is the run's, ``span`` ending with the stream; a run it left going in the background
        (``arun(background=True)`` returns it pending) ends ``span`` when it ends (:meth:`background`)."""
        awaited = _Awaited(span)
        token = _AWAITED.set(awaited)
        try:
            with activate(span):
                result = await awaitable
        except BaseException as exc:
            self._end(span, error=exc)
            raise
        finally:
            _AWAITED.reset(token)
        if _is_stream(result):
            with guard("agno.run.wrap_awaited_stream"):
                return self._stream(in_context(result, span), span, _StreamSeen(what, instance))
        if awaited.spawned and not awaited.done and _status(result) == "pending":
            awaited.handed, awaited.result = True, result  # (one event loop: the background run has not ended)
            return result
        self._end(span, result=result)
        return result

    def background(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """A wrapt wrapper for Agno's ``_spawn_background(coro)``: a background run spawned while one of our run
        spans is awaited ends that span when it ends, with the run output Agno fills in place."""
        awaited = _AWAITED.get()
        if awaited is None or awaited.spawned or not args:
            return wrapped(*args, **kwargs)
        awaited.spawned = True
        return wrapped(self._ending(args[0], awaited), *args[1:], **kwargs)

    async def _ending(self, coroutine: Any, awaited: _Awaited) -> None:
        error: BaseException | None = None
        try:
            await coroutine
        except BaseException as exc:
            error = exc
            raise
        finally:
            awaited.done = True
            if awaited.handed:
                self._end(awaited.span, result=awaited.result, error=error)

    def _stream(self, iterator: Any, span: SemanticSpan, seen: "_StreamSeen") -> Any:

        def on_end(s: SemanticSpan, abandoned: bool) -> None:
            if abandoned:  # close Agno's generator first, so the spans inside end before this one
                with guard("agno.stream.close"):
                    close = getattr(iterator, "close", None)
                    if close is not None:
                        close()
                with guard("agno.stream.abandon_inner"):
                    abandon_streams_under(span)  # an async generator is not closed at once (see there)
            self._end(span, result=seen.final, streamed_text=seen.text(), failed=seen.error, abandoned=abandoned,
                      ended_by_stream=True, cancelled=seen.cancelled)

        # let go after its RunCompleted (its last event but the RunOutput, when asked for): finished, not abandoned
        return track_stream(wrap_stream(iterator, span, on_chunk=seen.chunk, on_end=on_end,
                                        complete=lambda: seen.completed), span)

    # -- closing ---------------------------------------------------------------------
    def _end(self, span: SemanticSpan, *, result: Any = None, error: BaseException | None = None,
             streamed_text: str | None = None, failed: str | None = None, abandoned: bool = False,
             ended_by_stream: bool = False, cancelled: bool = False) -> None:
        with guard("agno.run.end"):
            status = "cancelled" if cancelled else _status(result)
            # (no output: an answer a post-hook rejected; a cancelled run's content, Agno's notice or the text
            # it had streamed, which is in its model span)
            if span.records_content and not blocked(span) and status != "cancelled":
                content = getattr(result, "content", None) if result is not None else None
                if content is None and streamed_text:
                    content = streamed_text
                if content is not None and _reasoning.is_reasoning(span):
                    # Agno's reasoning agent: its answer is the thinking handed to the main model
                    reasoning = getattr(result, "reasoning_content", None) or _text(content)
                    span.set_messages(output=[ChatMessage("assistant", parts=[ReasoningPart(reasoning)])])
                elif content is not None and span.records_value:  # (a step's, in OTel GenAI alone: written nowhere)
                    span.set_output(_jsonable(content))
            if status == "paused":
                span.mark_paused()
            if abandoned:
                span.mark_abandoned()
            cause = last_error(span)
            if failed is None and _is_step_output(result) and getattr(result, "success", True) is False:
                failed = str(getattr(result, "error", None) or getattr(result, "content", None) or "step failed")
            if error is not None:
                span.record_error(error, control_flow=stopped(error))
            elif cause is None and failed is not None and had_cancelled_run(span):  # a step whose run was cancelled
                span.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, "cancelled")
            elif status == "error" or failed is not None:
                message = failed or str(getattr(result, "content", "") or "")
                if cause is not None:
                    span.record_error(cause, control_flow=stopped(cause))
                else:  # Agno's report, no exception: in-band, OTel's fallback error.type
                    span.set_error(A.ERROR_TYPE_OTHER, message)
            elif status == "cancelled":  # (``cancel_run(run_id)``, or the task running it cancelled)
                span.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, "cancelled")
                span.set_stop_reason("cancelled")
                cancelled_under(span.parent)
        self.open.discard(span)
        if not ended_by_stream:
            span.end()


# The id field of the events (and run outputs) a run of each kind yields about itself.
_OWNER_FIELDS = {"agent": "agent_id", "team": "team_id"}


class _StreamSeen:
    """What a run's own events in its stream showed: content deltas, the final output, an error event.

    A team's stream also carries its members' events (``stream_member_events``, on by default): a
    member's ``RunContent``/``RunCompleted`` is the member's answer, not the team's, so an agent's or a
    team's run reads only events that name it (``agent_id``/``team_id``). A workflow's (or a step's) stream
    carries its agents' and teams' events too: it reads only its own (the workflow events and ``StepOutput``s,
    which name no agent or team), so a member's ``RunError`` that its step retried is not the workflow's."""

    __slots__ = ("parts", "final", "completed", "error", "cancelled", "owner_field", "owner")

    def __init__(self, what: str = "", owner: Any = None) -> None:
        self.parts: list[str] = []
        self.final: Any = None
        # An agent's or a team's ``RunCompleted`` came: Agno yields it once the run is stored, its work done (a
        # workflow's ``WorkflowCompleted`` comes before the workflow stores its session: not done)
        self.completed = False
        self.error: str | None = None
        self.cancelled = False
        self.owner_field = _OWNER_FIELDS.get(what)
        self.owner = owner

    def _ours(self, item: Any) -> bool:
        field = self.owner_field
        if field is None:  # a workflow's or a step's: not its agents' and teams' run events (they say theirs)
            return not (hasattr(item, "agent_id") or hasattr(item, "team_id"))
        if not hasattr(item, field):  # an event of another kind of run (a member agent's, in a team)
            return False
        mine, theirs = getattr(self.owner, "id", None), getattr(item, field)
        return mine is None or theirs is None or mine == theirs

    def chunk(self, item: Any) -> None:
        if not self._ours(item):
            return
        event = str(getattr(item, "event", "") or "")
        if event.endswith("RunContent") or event.endswith("StepOutput"):
            content = getattr(item, "content", None)
            if isinstance(content, str):
                self.parts.append(content)
        elif event.endswith("RunCompleted") or event.endswith("WorkflowCompleted") or hasattr(item, "run_id") and \
                hasattr(item, "messages") and not event:
            self.final = item
            self.completed = self.completed or event.endswith("RunCompleted")
        elif not event and _is_step_output(item):  # a step's result (it fails as ``success=False``)
            self.final = item
        elif event.endswith("RunCancelled") or event.endswith("WorkflowCancelled"):
            self.cancelled = True
        elif event.endswith("RunError") or event.endswith("WorkflowError"):
            self.error = str(getattr(item, "content", None) or getattr(item, "error", None) or "run failed")

    def text(self) -> str | None:
        return "".join(self.parts) if self.parts else None


def _is_step_output(item: Any) -> bool:
    """Whether ``item`` is a workflow step's ``StepOutput`` (what a step returns, or yields last)."""
    return type(item).__name__ == "StepOutput" and hasattr(item, "success")


def _is_stream(result: Any) -> bool:
    return probes.is_iterator(result) or probes.is_async_iterator(result)


def _jsonable(value: Any) -> Any:
    """Agno messages as ``{"role", "content"}``; anything else as plain data (never the user's
    ``model_dump``: see :func:`otel_agents._spans.to_jsonable`)."""
    if type(value) is list and value and probes.has_attr(value[0], "role") and probes.has_attr(value[0], "content"):
        value = [{"role": probes.attr(m, "role"), "content": probes.attr(m, "content")} for m in value]
    return to_jsonable(value)


def _input_messages(value: Any, kwargs: dict) -> list[ChatMessage] | None:
    """A run's input of Agno ``Message`` s (one, or a list) as chat messages, converted as a model span's
    input is (media kept as media); any other input given with media (``run(text, images=[...])``, also
    ``audio``/``videos``/``files``) as the user message Agno builds of them: the input's text, then the media;
    ``None`` for any other input (the value is then the input)."""
    items = value if type(value) is list else [value]
    if not items or not all(probes.has_attr(m, "role") and probes.has_attr(m, "content") for m in items):
        media = _convert.run_media_parts(kwargs)  # (Agno leaves them out of a run given messages)
        if not media:
            return None
        text = _text(value)
        return [ChatMessage("user", parts=[TextPart(text), *media] if text else media)]
    try:
        return _convert.chat_messages(items) or None
    except (AttributeError, TypeError, ValueError):  # not Agno's Message after all: the value is kept
        return None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    data = _jsonable(value)
    return data if isinstance(data, str) else encode(data)


def _output_rejected(exc: BaseException) -> None:
    span = innermost()  # the agent's span, or the team's (a chain): the post-hooks run in the run's own step
    if span is not None and span.kind in (Kind.AGENT, Kind.CHAIN) and type(exc).__name__ == "OutputCheckError":
        block(span, exc)


def post_hooks(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """``agno.agent._hooks.execute_post_hooks``, ``agno.team._hooks._execute_post_hooks`` (generators): an
    ``OutputCheckError`` a post-hook (an output guardrail) raises marks the run it rejects
    (:func:`._context.block`), then goes on to Agno."""
    def run() -> Any:
        try:
            yield from wrapped(*args, **kwargs)
        except Exception as exc:
            with guard("agno.post_hooks"):
                _output_rejected(exc)
            raise
    return run()


def apost_hooks(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """``aexecute_post_hooks`` (an async generator): as :func:`post_hooks`."""
    async def run() -> Any:
        try:
            async for item in wrapped(*args, **kwargs):
                yield item
        except Exception as exc:
            with guard("agno.post_hooks"):
                _output_rejected(exc)
            raise
    return run()
