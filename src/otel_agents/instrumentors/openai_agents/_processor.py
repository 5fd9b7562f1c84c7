"""The Agents SDK ``TracingProcessor`` that turns its traces and spans into ours.

The SDK calls a processor synchronously, in the task and context of the code that starts or ends
each of its spans. That is what lets our spans keep the OTel context right: when the SDK makes one
of its spans current, we make ours current (``attach`` at ``on_span_start``) and detach it at
``on_span_end`` — only when our context is still the current one there, so a span finished from
another context (an abandoned stream finalised by the event loop) never detaches a stranger's.

Parents follow the SDK's own parent ids; ``task``/``turn`` spans and the voice spans are
transparent (their children hang under the nearest span of ours). Two shapes are rebuilt:

* a handoff: the SDK ends the handing-off agent's span and opens the receiving agent's as its
  sibling; we open a ``tool`` span for the handoff under the first agent and open the receiving
  agent under that tool span, keeping both open until the receiving agent is done (then the run
  reads as a call: ``triage`` → ``transfer_to_billing`` → ``billing``);
* a failure: the SDK records a ``SpanError`` (message and text, no type) or lets the exception
  unwind through its ``with`` blocks; we record the exception itself (seen in ``sys.exc_info()``
  while the span ends, or handed over by :mod:`._wiring` when the SDK attached the error), and an
  exception that unwinds through an agent or the trace makes those spans ERROR too.

Suppression (OTel's ``suppress_instrumentation()``) is decided once per SDK trace, at its start: a trace
started inside a suppressed block is remembered by its id (bounded, forgotten at its end) and every later
callback of that trace — its spans', wherever they start — returns at once, with no span and no
bookkeeping. A trace started outside one is traced as usual, spans started inside a suppressed block
included (their spans of ours are non-recording, as the OTel context asks, but still kept in the agent
tree so the spans after the block keep their parents and handoffs).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from agents.tracing import TracingProcessor, get_current_span, get_current_trace
from opentelemetry import context as otel_context

from ..._spans.finalisers import new_lock
from ..._spans import (SemanticSpan, SpanRegistry, Telemetry, guard, in_forked_child, instrumentation_enabled,
                       merged_metadata, pop_run_attributes, probes, push_run_attributes, report_internal_error)
from ...semconv import Kind, attributes as A, guardrail_attributes
from . import _convert

PROVIDER = "openai"
_MAX_ALIASES = 10_000
_MAX_SUPPRESSED = 10_000  # ids of SDK traces started inside suppress_instrumentation(), oldest forgotten first
_TRANSPARENT = ("task", "turn", "speech", "speech_group", "transcription")


class SDKSpanError(Exception):
    """A failure the Agents SDK recorded on one of its spans without an exception object (``SpanError``: a message
    and data), or a guardrail's tripwire. Recorded in-band (``SemanticSpan.set_error``), never as an exception of
    ours: ``error.type`` is ``error_type`` (``tool_error`` on a function span, ``tripwire_triggered``, the SDK's
    name, on a guardrail's, else OTel's ``_OTHER``), the message the status description when content is on."""

    def __init__(self, message: str, error_type: str = A.ERROR_TYPE_OTHER) -> None:
        super().__init__(message)
        self.error_type = error_type


class AgentRec:
    """One agent span of ours and what the run told us about it."""

    __slots__ = ("sem", "name", "trace", "has_input", "output", "calls", "via", "delegation", "sdk_done", "error",
                 "stop")

    def __init__(self, sem: SemanticSpan, name: str, via: "HandoffRec | None", trace_rec: "TraceRec | None"):
        self.sem = sem
        self.trace = trace_rec
        self.name = name
        self.has_input = False
        self.output: Any = None
        self.calls: list[tuple[str, Any, Any]] = []  # (name, arguments, call id) of the last response
        self.via = via  # the handoff that delegated to this agent
        self.delegation: HandoffRec | None = None  # the handoff this agent made
        self.sdk_done = False
        self.error: BaseException | None = None
        self.stop: str | None = None  # otel_agents.run.stop_reason, from the SDK's exception or SpanError


class HandoffRec:
    """A handoff's tool span, open until the agent it delegated to is done."""

    __slots__ = ("sem", "source", "target")

    def __init__(self, sem: SemanticSpan, source: AgentRec | None, target: str):
        self.sem = sem
        self.source = source
        self.target = target


class TraceRec:
    """One SDK trace: our workflow span, its handoffs waiting for their agent, its deferred agents. ``resumed_by``:
    the SDK span of a resumed run whose end ends it (:meth:`OtelAgentsProcessor._resumed`)."""

    __slots__ = ("root", "ctx", "token", "owner", "pending", "agents", "input", "output", "error", "cancel_after_turn",
                 "resumed_by")

    def __init__(self, root: SemanticSpan):
        self.root = root
        self.cancel_after_turn = False  # the caller asked RunResultStreaming.cancel(mode="after_turn")
        self.ctx: Any = None
        self.token: Any = None
        self.owner: Any = None  # the task (or thread) whose context `token` was attached in: _attached_here()
        self.pending: dict[str, list[HandoffRec]] = {}
        self.agents: list[AgentRec] = []  # every agent span of the trace not ended yet
        self.input: Any = None
        self.output: Any = None
        self.error: BaseException | None = None  # the failure of a top-level agent: the run's
        self.resumed_by: Any = None


class SpanRec:
    """One SDK span: our span for it (``None`` when transparent), the agent it runs in, our context.
    ``adopted``: the span is a model request's (:mod:`._models`), which the request ends, not the SDK span.
    ``awaits_approval``: a function span whose tool waits for a human's approval
    (:meth:`OtelAgentsProcessor.note_awaits_approval`); ``rejection``: what the model is told instead of the result
    of a call a human rejected (:meth:`OtelAgentsProcessor.note_rejection`)."""

    __slots__ = ("sem", "agent", "trace", "ctx", "token", "owner", "kind", "error", "adopted", "awaits_approval",
                 "rejection")

    def __init__(self, sem: SemanticSpan | None, agent: AgentRec | None, trace_rec: TraceRec | None, kind: str):
        self.sem = sem
        self.agent = agent
        self.trace = trace_rec
        self.kind = kind
        self.ctx: Any = None
        self.token: Any = None
        self.owner: Any = None  # the task (or thread) whose context `token` was attached in: _attached_here()
        self.error: BaseException | None = None
        self.adopted = False
        self.awaits_approval = False
        self.rejection: Any = None


def _attached_here() -> Any:
    """Whose ``contextvars`` context an attach now goes into: the running asyncio task's (each task has its
    own), else the thread's."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop running in this thread
        task = None
    return task if task is not None else threading.get_ident()


def _unwinding() -> BaseException | None:
    """The exception unwinding through the SDK's ``with``/``finally`` that is ending a span now."""
    return sys.exc_info()[1]


_ABANDON = (GeneratorExit, asyncio.CancelledError)  # what ends a span as abandoned, not failed


def _is_abandon(exc: BaseException | None) -> bool:
    return isinstance(exc, _ABANDON)


def _epoch_ns(iso: str | None) -> int | None:
    if not iso:
        return None
    try:
        return int(datetime.fromisoformat(iso).timestamp() * 1e9)
    except (TypeError, ValueError):
        return None


class OtelAgentsProcessor(TracingProcessor):
    """Our ``agents.tracing.TracingProcessor`` (registered by :mod:`._wiring`). Thread-safe: its maps are locked; each SDK span is started and ended by
    one task or thread."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry
        self.spans = SpanRegistry(max_age_s=float("inf"))  # SDK span id → our span (+ SpanRec)
        self.traces = SpanRegistry(max_age_s=float("inf"))  # SDK trace id → our workflow span (+ TraceRec)
        self._lock = new_lock()
        self.active = True
        self.current_call: Any = None  # the model hook's open request (a ContextVar, set by _models.ModelHook)
        self._forget()
        in_forked_child(OtelAgentsProcessor._forget, self)

    def _forget(self) -> None:
        """No transparent or suppressed SDK span known: a new processor's, and a forked child's (the parent's
        runs are the parent's; ``spans`` and ``traces`` forget theirs themselves)."""
        self._aliases: OrderedDict[str, SpanRec] = OrderedDict()  # transparent SDK spans
        self._suppressed: OrderedDict[Any, None] = OrderedDict()  # SDK trace ids started while suppressed

    def __len__(self) -> int:
        return len(self.spans) + len(self.traces) + len(self._aliases) + len(self._suppressed)

    def _is_suppressed(self, trace_id: Any) -> bool:
        """Whether the SDK trace ``trace_id`` started inside ``suppress_instrumentation()``."""
        return bool(self._suppressed) and trace_id in self._suppressed

    # -- the TracingProcessor interface ----------------------------------------------------
    def on_trace_start(self, sdk_trace: Any) -> None:
        if not self.active:
            return
        if not instrumentation_enabled():  # the whole trace is the user's to keep quiet (module docstring)
            with self._lock:
                self._suppressed[getattr(sdk_trace, "trace_id", None)] = None
                while len(self._suppressed) > _MAX_SUPPRESSED:
                    self._suppressed.popitem(last=False)
            return
        with guard("openai_agents.trace_start"):
            name = getattr(sdk_trace, "name", None) or "Agent workflow"
            # A group id that cannot be written as text loses only itself (probes.identifier), not the root span.
            group = probes.identifier(getattr(sdk_trace, "group_id", None), "openai_agents.group_id")
            token = push_run_attributes({A.SESSION_ID: group}) if group else None
            try:
                root = self.telemetry.start_span(Kind.CHAIN, name, workflow=True)
            finally:
                if token is not None:
                    pop_run_attributes(token)
            # The trace's metadata is the application's labels, as using_metadata's are (merged over them), so it
            # is written with content capture on or off (the SDK's trace_include_sensitive_data leaves it too).
            metadata = getattr(sdk_trace, "metadata", None)
            if metadata and isinstance(metadata, Mapping):
                root.set_attributes(merged_metadata(metadata))
            rec = TraceRec(root)
            self.traces.put(sdk_trace.trace_id, root, rec)
            self._attach(rec, root)
        self._late_start()

    def on_trace_end(self, sdk_trace: Any) -> None:
        if self._suppressed:
            with self._lock:
                if self._suppressed.pop(getattr(sdk_trace, "trace_id", None), False) is None:
                    return
        exc = _unwinding()
        with guard("openai_agents.trace_end"):
            self._end_trace(getattr(sdk_trace, "trace_id", None), exc)

    def _end_trace(self, trace_id: Any, exc: BaseException | None) -> None:
        root, rec = self.traces.pop_with_extra(trace_id)
        if rec is not None:
            self._detach(rec)
            failed = exc if isinstance(exc, Exception) else rec.error
            for handoffs in rec.pending.values():  # handed off to an agent that never ran
                for h in handoffs:
                    if rec.cancel_after_turn and failed is None and exc is None:
                        # stopped by the caller before its agent ran: interrupted, as the ECP fold reads it
                        h.sem.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, "interrupt")
                    self._end(h.sem, failed, exc)
            for agent in list(rec.agents):  # agents waiting for a delegate that never finished
                if _cancelled_after_turn(agent):
                    agent.sem.set_stop_reason("cancelled")
                self._end(agent.sem, failed or agent.error, exc)
            if rec.input is not None:
                root.set_input(rec.input)
            if rec.output is not None:
                root.set_output(rec.output)
            self._end(root, failed, exc)

    def _end_run(self, trace_id: Any, exc: BaseException) -> None:
        """``KeyboardInterrupt``/``SystemExit`` is unwinding through one of the run's spans: end the whole
        run now. asyncio propagates these out of the event loop at once (``Task`` re-raises them), leaving
        the run's tasks suspended, so the SDK never ends its enclosing agent and trace spans."""
        trace_rec = self.traces.get_extra(trace_id)
        if trace_rec is None:
            return
        with self._lock:
            for key in [k for k, a in self._aliases.items() if a.trace is trace_rec]:
                del self._aliases[key]
        for sem, rec in reversed(self.spans.pop_where(lambda r: r is not None and r.trace is trace_rec)):
            self._detach(rec)
            self._end(sem, None, exc)
        self._end_trace(trace_id, exc)

    def on_span_start(self, span: Any) -> None:
        # (_is_suppressed written out here and in on_span_end, as _unwinding and _late_start's check: every SDK
        # span runs these, and the trace id is read only while some trace is suppressed)
        if not self.active or (self._suppressed and getattr(span, "trace_id", None) in self._suppressed):
            return
        try:  # not `with guard(...)`: every SDK span runs this (ten a one-agent run)
            self._start(span)
        except Exception as error:  # noqa: BLE001 - as guard() does
            report_internal_error("openai_agents.span_start", error)
        if not self.active:
            self._late_start()

    def _late_start(self) -> None:
        """A start that passed the ``active`` check as ``uninstrument()`` ran on another thread has put its span
        in the maps after :meth:`end_open` emptied them, and the SDK reports no more to us: end what they hold
        now, in the run's own thread (so its context is detached too)."""
        if not self.active:
            with guard("openai_agents.late_start"):
                self.end_open()

    def on_span_end(self, span: Any) -> None:
        if self._suppressed and getattr(span, "trace_id", None) in self._suppressed:
            return
        exc = sys.exc_info()[1]  # (_unwinding())
        try:  # not `with guard(...)`, as in on_span_start
            self._finish(span, exc)
        except Exception as error:  # noqa: BLE001 - as guard() does
            report_internal_error("openai_agents.span_end", error)
        if exc is not None and not isinstance(exc, Exception) and not _is_abandon(exc):
            with guard("openai_agents.run_interrupted"):
                self._end_run(getattr(span, "trace_id", None), exc)

    def end_open(self) -> None:
        """End every span still open, inner first, marked evicted: ``uninstrument()`` during a run, after which
        the SDK's span ends no longer reach us. A trace's record holds its agents (each with the handoff that
        delegated to it) and the handoffs whose agent has not started: those end here too."""
        held = []
        for sem, rec in reversed(self.spans.pop_where(lambda rec: True)):
            if rec is not None:
                self._detach(rec)  # attached in this thread's context only when a late start ends here
            held.append(sem)
        for root, rec in reversed(self.traces.pop_where(lambda rec: True)):
            if rec is not None:
                self._detach(rec)
                held += [h.sem for handoffs in rec.pending.values() for h in handoffs]
                for agent in reversed(rec.agents):
                    held += [agent.sem, agent.via.sem] if agent.via is not None else [agent.sem]
            held.append(root)
        with self._lock:
            self._aliases.clear()
        for sem in held:
            sem.set_attribute(A.OTEL_AGENTS_SPAN_EVICTED, True)
            sem.end()

    def shutdown(self, timeout: float | None = None) -> None:
        """Nothing to flush: our spans go to the OTel provider, which the application shuts down."""

    def force_flush(self) -> None:
        """Nothing to flush (see :meth:`shutdown`)."""

    # -- bookkeeping ---------------------------------------------------------------------
    def _rec(self, span_id: Any) -> SpanRec | None:
        rec = self.spans.get_extra(span_id)
        if rec is None:
            rec = self._aliases.get(span_id)
        return rec

    def _parent(self, span: Any) -> tuple[Any, AgentRec | None, TraceRec | None]:
        """Our parent (a SemanticSpan, or ``None`` = the current context), the agent and the trace."""
        trace_rec = self.traces.get_extra(getattr(span, "trace_id", None))
        parent_id = getattr(span, "parent_id", None)
        rec = None
        if parent_id:  # (self._rec(parent_id))
            rec = self.spans.get_extra(parent_id)
            if rec is None:
                rec = self._aliases.get(parent_id)
        if rec is not None:
            return rec.sem, rec.agent, rec.trace or trace_rec
        return (trace_rec.root if trace_rec else None), None, trace_rec

    @staticmethod
    def _attach(rec: Any, sem: SemanticSpan) -> None:
        rec.ctx = sem.context()
        rec.token = otel_context.attach(rec.ctx)
        rec.owner = _attached_here()

    @staticmethod
    def _detach(rec: Any) -> None:
        """Detach ``rec``'s context if it is current in the task (or thread) that attached it. A task started
        inside the span sees that context as current too (a copy of its parent's), but cannot detach it: the
        run ended from a tool's task (``_end_run``) leaves its enclosing spans' contexts to their own tasks."""
        if rec.token is not None and otel_context.get_current() is rec.ctx and rec.owner == _attached_here():
            otel_context.detach(rec.token)
        rec.token = rec.ctx = rec.owner = None

    @staticmethod
    def _end(sem: SemanticSpan, error: BaseException | None, unwinding: BaseException | None,
             denied: tuple[str, str | None] | None = None) -> None:
        """End ``sem`` with ``error`` (the SDK's) or ``unwinding`` (what ends its span); ``denied``: the call never
        ran, ``(error.type, what the model was told)`` (:meth:`SemanticSpan.set_denied`), after ``error``."""
        if isinstance(unwinding, _ABANDON):
            sem.mark_abandoned()
            sem.record_error(unwinding, control_flow=True)
        elif isinstance(error, SDKSpanError):
            sem.set_error(error.error_type, str(error))
        elif error is not None:
            sem.record_error(error)
            if denied is not None:
                sem.set_denied(*denied)
        elif unwinding is not None and not isinstance(unwinding, Exception):  # KeyboardInterrupt, SystemExit
            sem.record_error(unwinding, control_flow=True)
        sem.end()

    def note_exception(self, span: Any, exc: BaseException) -> None:
        """The exception behind a ``SpanError`` the SDK is attaching to ``span`` (see :mod:`._wiring`)."""
        rec = self._rec(getattr(span, "span_id", None))
        if rec is not None:
            rec.error = exc

    def note_cancel_after_turn(self, trace_id: Any) -> None:
        """The caller asked the streamed run of SDK trace ``trace_id`` to stop after its turn in flight
        (``RunResultStreaming.cancel(mode="after_turn")``, see :mod:`._wiring`): the SDK then ends the run
        without an exception, so an agent that ends with no output and no error was stopped by it."""
        rec = self.traces.get_extra(trace_id)
        if rec is not None:
            rec.cancel_after_turn = True

    def note_awaits_approval(self, span: Any) -> None:
        """The SDK, inside its span ``span`` (``None``: its current span), stopped a tool call to wait for a human's
        approval (see :mod:`._wiring`): the tool has not run and the run returns with ``interruptions``. A
        function span (function, shell, apply_patch tools) is marked paused with its agent as it ends; elsewhere
        (a hosted MCP tool's approval request, which the model's server would run: no tool span) the agent is."""
        rec = self._rec(getattr(span if span is not None else get_current_span(), "span_id", None))
        if rec is not None and rec.kind == "function":
            rec.awaits_approval = True
        elif rec is not None and rec.agent is not None:
            rec.agent.sem.mark_paused()

    def note_rejection(self, tool: str | None, call_id: str | None, message: Any, content: bool) -> None:
        """A human rejected the call ``call_id`` of tool ``tool``: the SDK gives the model ``message`` as its output
        (see :mod:`._wiring`), written only where ``content`` (the run's ``trace_include_sensitive_data``). Inside
        the SDK's function span for the call (a rejection decided as the tool was to run) that span's result; else
        (a run resumed with the call rejected: the SDK opens no span) a tool span of its own, ended at once, under
        the agent, or the run where the SDK decides before the agent's span opens (0.20), as it runs an approved
        call there."""
        rec = self._rec(getattr(get_current_span(), "span_id", None))
        if rec is not None and rec.kind == "function":
            rec.rejection = message if content else None
            return
        parent = rec.agent.sem if rec is not None and rec.agent is not None else getattr(rec, "sem", None)
        if parent is not None:
            sem = self.telemetry.start_span(Kind.TOOL, tool, parent=parent)
            sem.set_tool(tool, call_id=call_id, tool_type="function")
            if content:
                sem.set_tool_result(message)
            sem.end()

    def note_final_output(self, span: Any, output: Any) -> None:
        """A final output the agent's ``tool_use_behavior`` made from its tool results (the model is not asked
        again): the output of the agent running in the SDK span ``span`` (see :mod:`._wiring`)."""
        rec = self._rec(getattr(span, "span_id", None))
        agent = rec.agent if rec is not None else None
        if agent is not None and output is not None:
            agent.output = output

    # -- start -----------------------------------------------------------------------------
    def _start(self, span: Any) -> None:
        data = span.span_data
        stype = getattr(data, "type", None)
        parent, agent, trace_rec = self._parent(span)
        if trace_rec is None and getattr(span, "parent_id", None) is None:
            parent, agent, trace_rec = self._resumed(span)
        if stype == "custom" and (getattr(data, "data", None) or {}).get("sdk_span_type") in _TRANSPARENT:
            stype = data.data["sdk_span_type"]
        if stype in _TRANSPARENT or stype == "handoff":  # a handoff's span opens at its end (target known)
            self._alias(span.span_id, SpanRec(parent, agent, trace_rec, stype))
            return
        t = self.telemetry
        if stype == "agent":
            name = getattr(data, "name", None) or "agent"
            via = None
            if trace_rec is not None and trace_rec.pending.get(name):
                via = trace_rec.pending[name].pop(0)
                if not trace_rec.pending[name]:
                    del trace_rec.pending[name]
                parent = via.sem
            sem = t.start_span(Kind.AGENT, name, parent=parent)
            sem.set_agent(name)
            agent = AgentRec(sem, name, via, trace_rec)
            if trace_rec is not None:
                trace_rec.agents.append(agent)
        elif stype in ("response", "generation"):
            model = getattr(data, "model", None)
            call = self.current_call.get() if self.current_call is not None else None
            if call is not None and not call.adopted and not call.sem.ended:
                # The SDK traces the request our model hook opened a span for: fill that one.
                call.adopted = True
                call.sem.set_model(request_model=model, provider=PROVIDER)
                if model and model != getattr(call.model, "model", None):
                    call.sem.rename(model)  # opened before the request model was known (after the model's class)
                rec = SpanRec(call.sem, agent, trace_rec, stype)
                rec.adopted = True
                self.spans.put(span.span_id, call.sem, rec)
                return
            sem = t.start_span(Kind.MODEL, model, parent=parent)
            sem.set_model(request_model=model, provider=PROVIDER)
        elif stype == "function":
            sem = t.start_span(Kind.TOOL, getattr(data, "name", None), parent=parent)
        elif stype == "guardrail":
            name = getattr(data, "name", None) or "guardrail"
            sem = t.start_span(Kind.CHAIN, f"guardrail {name}", parent=parent, attributes=guardrail_attributes())
        elif stype == "custom":
            sem = t.start_span(Kind.CHAIN, getattr(data, "name", None) or "custom", parent=parent)
        elif stype == "mcp_tools":  # MCP tools/list: not an agent step (semantic map, "MCP")
            self._alias(span.span_id, SpanRec(parent, agent, trace_rec, stype))
            return
        else:
            self._alias(span.span_id, SpanRec(parent, agent, trace_rec, str(stype)))
            return
        rec = SpanRec(sem, agent, trace_rec, stype)
        self.spans.put(span.span_id, sem, rec)
        self._attach(rec, sem)

    def _resumed(self, span: Any) -> tuple[Any, AgentRec | None, TraceRec | None]:
        """The first span of a run resumed from a ``RunState`` (a human's approval): the SDK carries on the first
        run's trace (``ReattachedTrace``) and starts it again with no ``on_trace_start``, so the run has its own
        workflow span, as every run does, ended with this span. Else (not the current trace): no trace."""
        sdk_trace = get_current_trace()
        if sdk_trace is None or getattr(sdk_trace, "trace_id", None) != getattr(span, "trace_id", None):
            return None, None, None
        self.on_trace_start(sdk_trace)
        parent, agent, trace_rec = self._parent(span)
        if trace_rec is not None:
            trace_rec.resumed_by = span.span_id
        return parent, agent, trace_rec

    def _alias(self, span_id: str, rec: SpanRec) -> None:
        with self._lock:
            self._aliases[span_id] = rec
            while len(self._aliases) > _MAX_ALIASES:
                self._aliases.popitem(last=False)

    # -- end ---------------------------------------------------------------------------------
    def _finish(self, span: Any, exc: BaseException | None) -> None:
        data = span.span_data
        span_id = span.span_id
        with self._lock:
            alias = self._aliases.pop(span_id, None)
        if alias is not None:
            if alias.kind == "handoff":
                self._handoff(span, alias, exc)
            elif alias.trace is not None and alias.trace.resumed_by == span_id:
                self._end_trace(span.trace_id, exc)
            return
        sem, rec = self.spans.pop_with_extra(span_id)
        if rec is None:
            return
        self._detach(rec)
        error = self._error_of(span, rec, exc)
        stype = rec.kind
        if stype == "agent":
            self._agent_end(rec.agent, error, exc, span)
            return
        if stype in ("response", "generation"):
            try:  # not `with guard(...)`: every model request runs this
                self._model_end(sem, data, rec, stype)
            except Exception as failure:  # noqa: BLE001 - as guard() does
                report_internal_error("openai_agents.model", failure)
            if rec.adopted:
                return  # the model request ends it (see _models)
        elif stype == "function":
            try:  # not `with guard(...)`: every tool call runs this
                self._tool_end(sem, data, rec)
            except Exception as failure:  # noqa: BLE001 - as guard() does
                report_internal_error("openai_agents.tool", failure)
            if _rejected_arguments(error):
                output = getattr(data, "output", None)
                told = output if isinstance(output, str) else None
                self._end(sem, error, exc, denied=(A.INVALID_TOOL_ARGUMENTS, told))
                return
        elif stype == "guardrail":
            triggered = bool(getattr(data, "triggered", False))
            sem.set_attribute(A.OTEL_AGENTS_GUARDRAIL_TRIGGERED, triggered)
            if triggered and error is None:
                error = exc if isinstance(exc, Exception) else SDKSpanError(
                    f"guardrail {getattr(data, 'name', '')} tripwire triggered", "tripwire_triggered")
        elif stype == "custom" and sem.records_value:  # (in OTel GenAI alone: written nowhere)
            sem.set_input(getattr(data, "data", None) or None)
        self._end(sem, error, exc)

    def _error_of(self, span: Any, rec: SpanRec, exc: BaseException | None) -> BaseException | None:
        """The exception to record on our span: the one the SDK attached as a ``SpanError``, else
        the one unwinding through the span's end, else a :class:`SDKSpanError` from its text."""
        if rec.error is not None:
            return rec.error
        sdk_error = getattr(span, "error", None)
        if isinstance(exc, Exception):
            if sdk_error is not None or rec.kind in ("agent", "response", "generation", "custom"):
                return exc
        if sdk_error:
            message = sdk_error.get("message") if isinstance(sdk_error, dict) else str(sdk_error)
            data = (sdk_error.get("data") or {}) if isinstance(sdk_error, dict) else {}
            if "max_turns" in data:  # a streamed run raises it to the consumer only, after the span ended
                from agents.exceptions import MaxTurnsExceeded

                return MaxTurnsExceeded(f"Max turns ({data['max_turns']}) exceeded")
            detail = data.get("error")
            return SDKSpanError(f"{message}: {detail}" if detail else str(message),
                                A.TOOL_ERROR if rec.kind == "function" else A.ERROR_TYPE_OTHER)
        return None

    def _agent_end(self, agent: AgentRec | None, error: BaseException | None, exc: BaseException | None,
                   span: Any = None) -> None:
        if agent is None:
            return
        agent.sdk_done = True
        agent.error = error
        agent.stop = agent.stop or _stop_reason(error, getattr(span, "error", None))
        if agent.stop == "guardrail":
            agent.output = None  # the answer a guardrail blocked is not the agent's output
        if agent.delegation is not None and not agent.delegation.sem.ended and error is None:
            return  # handed off: ends when its delegate is done (see _close_delegation)
        self._close_agent(agent, exc)

    def _close_agent(self, agent: AgentRec, exc: BaseException | None) -> None:
        sem = agent.sem
        if agent.output is not None:
            sem.set_output(agent.output)
        if _cancelled_after_turn(agent):
            agent.stop = "cancelled"
        if agent.stop is not None:
            sem.set_stop_reason(agent.stop)
        self._end(sem, agent.error, exc)
        self._forget_agent(agent)
        if agent.error is not None and agent.via is None and agent.trace is not None \
                and sem.parent is agent.trace.root and agent.trace.error is None:
            agent.trace.error = agent.error  # the run's own agent failed: so did the run
        via = agent.via
        if via is not None and not via.sem.ended:
            source = via.source
            self._end(via.sem, agent.error, exc)  # failed, or cancelled/abandoned, as the agent it handed off to
            if source is not None and source.sdk_done and not source.sem.ended:
                if source.output is None or agent.output is not None:
                    source.output = agent.output
                if agent.error is not None and source.error is None:
                    source.error = agent.error
                self._close_agent(source, exc)

    @staticmethod
    def _forget_agent(agent: AgentRec) -> None:
        rec = agent.trace
        if rec is not None and agent in rec.agents:
            rec.agents.remove(agent)
            if agent.output is not None:
                rec.output = agent.output

    def _handoff(self, span: Any, alias: SpanRec, exc: BaseException | None) -> None:
        """A handoff ended: open (and keep open) its tool span under the agent that handed off."""
        data = span.span_data
        target = getattr(data, "to_agent", None) or "agent"
        source = alias.agent
        tool_name = _handoff_tool_name(source, target)
        sem = self.telemetry.start_span(Kind.TOOL, tool_name, parent=alias.sem,
                                        start_time=_epoch_ns(getattr(span, "started_at", None)))
        call_id, arguments = _take_call(source, tool_name)
        sem.set_tool(tool_name, call_id=call_id, tool_type="function", arguments=arguments if arguments else None)
        sem.set_attribute(A.OTEL_AGENTS_HANDOFF_TARGET, target)
        sem.set_tool_result({"assistant": target})
        error = self._error_of(span, alias, exc)
        if error is not None or alias.trace is None or _is_abandon(exc):
            self._end(sem, error, exc)
            return
        handoff = HandoffRec(sem, source, target)
        if source is not None:
            source.delegation = handoff
        alias.trace.pending.setdefault(target, []).append(handoff)

    # -- model requests the SDK does not trace (see _models) --------------------------------------
    def current_step(self) -> tuple[Any, AgentRec | None, TraceRec | None] | None:
        """Where a model request made now belongs: ``(parent span, agent, trace)`` from the SDK's
        current span (or trace), or ``None`` outside a run we trace."""
        sdk_span = get_current_span()
        if sdk_span is not None:
            rec = self._rec(getattr(sdk_span, "span_id", None))
            if rec is not None:
                return rec.sem, rec.agent, rec.trace
        sdk_trace = get_current_trace()
        trace_rec = self.traces.get_extra(getattr(sdk_trace, "trace_id", None)) if sdk_trace is not None else None
        if trace_rec is not None:
            return trace_rec.root, None, trace_rec
        return None

    def model_end_of(self, call: Any, data: Any) -> None:
        """Fill a model request's span from a ``response``-shaped ``data`` (no provider: the model is the user's)."""
        self._model_end(call.sem, data, SpanRec(call.sem, call.agent, call.trace, "response"), "response",
                        provider=None)

    def end_span(self, sem: SemanticSpan, error: BaseException | None) -> None:
        """End a model request's span; cancellation and an abandoned stream are not errors."""
        if _is_abandon(error):
            self._end(sem, None, error)
        else:
            self._end(sem, error if isinstance(error, Exception) else None, None)

    def _model_end(self, sem: SemanticSpan, data: Any, rec: SpanRec, stype: str,
                   provider: str | None = PROVIDER) -> None:
        agent = rec.agent
        messages = None  # the input converted to messages, when it was (read again for the agent's input)
        if stype == "response":
            response = getattr(data, "response", None)
            raw_input = getattr(data, "input", None)
            if response is not None:
                model = getattr(response, "model", None)
                params = {"temperature": getattr(response, "temperature", None),
                          "top_p": getattr(response, "top_p", None),
                          "max_output_tokens": getattr(response, "max_output_tokens", None)}
                sem.set_model(response_model=model, provider=provider, response_id=getattr(response, "id", None),
                              parameters={k: v for k, v in params.items() if v is not None} or None)
                sem.rename(model)
                tier = getattr(response, "service_tier", None)
                if provider == PROVIDER and isinstance(tier, str) and tier:
                    sem.set_attribute(A.OPENAI_RESPONSE_SERVICE_TIER, tier)  # OTel GenAI semconv, OpenAI page
                output = _convert.response_output(response)
                if sem.records_content:
                    messages = _convert.input_messages(raw_input) if raw_input is not None else None
                    # The tools the Response echoes, unless the model hook wrote the request's as it opened the span.
                    tools = None if rec.adopted else _convert.tool_definitions(getattr(response, "tools", None))
                    sem.set_messages(input=messages, output=[output], system=_convert.instructions(response),
                                     tools=tools)
                else:
                    sem.set_finish_reasons([output.finish_reason] if output.finish_reason else [])
            else:
                output = None
            usage = _convert.usage(getattr(data, "usage", None)) or _convert.usage(getattr(response, "usage", None))
        else:
            raw_input = getattr(data, "input", None)
            outputs = _convert.chat_messages(getattr(data, "output", None))
            output = outputs[-1] if outputs else None  # the SDK records no finish reason here: none is invented
            if sem.records_content:
                messages = _convert.chat_messages(raw_input) if raw_input else None
                sem.set_messages(input=messages, output=outputs or None)
            elif output is not None and output.finish_reason:
                sem.set_finish_reasons([output.finish_reason])
            config = getattr(data, "model_config", None)
            if isinstance(config, dict):
                sem.set_model(provider=PROVIDER, parameters=config)
            usage = _convert.usage(getattr(data, "usage", None))
        sem.set_usage(usage)
        if agent is not None:
            if not agent.has_input and raw_input is not None:
                agent.has_input = True
                trace_rec = rec.trace
                for_run = trace_rec is not None and trace_rec.input is None
                # Content: read only when the agent's span or the run's writes it (else both would drop it).
                if agent.sem.records_value or (for_run and trace_rec.root.records_value):
                    text = _convert.input_text(raw_input, messages) if stype == "response" \
                        else _last_user_text(raw_input, messages)
                    # Where the input is written as messages: the items of its first request (what it was given),
                    # its instructions left out (a Chat Completions request carries them as a system message, a
                    # Responses request apart: the agent's input is the same either way).
                    agent.sem.set_input(text, messages=[m for m in messages if m.role != "system"]
                                        if messages and agent.sem.input_as_messages else None)
                    if for_run:
                        trace_rec.input = text
            if output is not None:
                agent.calls = [(p.name, p.arguments, p.id) for p in output.tool_calls]
                if not agent.calls and output.text is not None:
                    agent.output = output.text

    def _tool_end(self, sem: SemanticSpan, data: Any, rec: SpanRec) -> None:
        name = getattr(data, "name", None)
        arguments = getattr(data, "input", None)
        call_id, called_with = _take_call(rec.agent, name, arguments)
        sem.set_tool(name, call_id=call_id, tool_type="function",
                     arguments=arguments if arguments is not None else called_with)
        output = getattr(data, "output", None)
        if rec.awaits_approval or awaits_approval(output):  # a needs_approval tool not run: the run waits (paused)
            sem.mark_paused()
            if rec.agent is not None:
                rec.agent.sem.mark_paused()
        else:  # a rejected call: what the model is told (0.20 records the SDK's result object)
            sem.set_tool_result(rec.rejection if rec.rejection is not None else output)
        mcp = getattr(data, "mcp_data", None)
        if isinstance(mcp, dict) and mcp:
            sem.set_attributes({"mcp.method.name": "tools/call", "mcp.server": mcp.get("server")})


def _rejected_arguments(error: BaseException | None) -> bool:
    """Whether ``error`` is the SDK's refusal of a function tool's arguments before the function runs (not JSON,
    not a JSON object, failing the parameters' validation): a ``ModelBehaviorError`` whose message starts
    "Invalid JSON input for tool", which is how the SDK itself tells it apart (``agents.tool``)."""
    return type(error).__name__ == "ModelBehaviorError" and str(error).startswith("Invalid JSON input for tool")


def awaits_approval(result: Any) -> bool:
    """Whether ``result`` is the SDK's own ``FunctionToolResult`` for a tool call waiting for a human's approval
    (``needs_approval``: its ``run_item`` a ``ToolApprovalItem``, its ``output`` None): the tool has not run, and
    the run returns with ``interruptions``. What the SDK's approval step returns (see :mod:`._wiring`), and what
    0.20 records as the function span's output (0.24 records ``None`` there)."""
    run_item = getattr(result, "run_item", None) if type(result).__name__ == "FunctionToolResult" else None
    return getattr(run_item, "type", None) == "tool_approval_item"


def _stop_reason(error: BaseException | None, sdk_error: Any) -> str | None:
    """``otel_agents.run.stop_reason`` of an agent the SDK stopped: ``max_turns`` for ``MaxTurnsExceeded``,
    ``guardrail`` for a tripped input or output guardrail; from the exception's type, else from the data of
    the ``SpanError`` the SDK recorded (``{"max_turns": n}``, ``{"guardrail": name}``). ``None`` otherwise."""
    from agents.exceptions import (InputGuardrailTripwireTriggered, MaxTurnsExceeded,
                                   OutputGuardrailTripwireTriggered)

    if isinstance(error, MaxTurnsExceeded):
        return "max_turns"
    if isinstance(error, (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered)):
        return "guardrail"
    data = sdk_error.get("data") if isinstance(sdk_error, dict) else None
    if isinstance(data, dict):
        if "max_turns" in data:
            return "max_turns"
        if "guardrail" in data:
            return "guardrail"
    return None


def _cancelled_after_turn(agent: AgentRec) -> bool:
    """Whether ``agent`` ends because its caller cancelled the run ``after_turn``: asked for, and the agent
    ends with neither an output (a run that answered in the turn in flight was not stopped) nor an error."""
    return agent.trace is not None and agent.trace.cancel_after_turn and agent.stop is None \
        and agent.error is None and agent.output is None


def _take_call(agent: AgentRec | None, name: str | None, arguments: Any = None) -> tuple[Any, Any]:
    """The id and arguments of the call ``name`` in the agent's last response (taken once)."""
    if agent is None:
        return None, None
    for i, (n, args, call_id) in enumerate(agent.calls):
        if n == name and (arguments is None or args == arguments):
            del agent.calls[i]
            return call_id, args
    for i, (n, args, call_id) in enumerate(agent.calls):
        if n == name:
            del agent.calls[i]
            return call_id, args
    return None, None


def _handoff_tool_name(source: AgentRec | None, target: str) -> str:
    """The tool the model called to hand off: the SDK's default name for ``target``
    (``transfer_to_{target}``), or the one call of the last response that looks like it."""
    from agents.util._transforms import transform_string_function_style

    default = f"transfer_to_{transform_string_function_style(target)}"
    if source is not None:
        names = [n for n, _, _ in source.calls]
        if default in names:
            return default
        style = transform_string_function_style(target)
        for n in names:
            if style in n:
                return n
    return default


def _last_user_text(messages: Any, converted: list[Any] | None = None) -> Any:
    """The text of the last user message of a ``generation`` span's input ``messages`` (``converted``: the
    same, already converted by :func:`._convert.chat_messages`), or ``None``."""
    for m in reversed(converted if converted is not None else _convert.chat_messages(messages)):
        if m.role == "user":
            return m.text
    return None


__all__ = ["OtelAgentsProcessor", "SDKSpanError"]
