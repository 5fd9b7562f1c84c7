"""``ECPFoldingProcessor``: fold runs into ECP envelopes as their spans end.

How a span finds its run: when a span *starts*, it joins the run of its parent
if the parent is tracked; otherwise, if it carries ``otel_agents.span.kind``, it
opens a new run (an outermost semantic span); otherwise it is ignored (an HTTP
server span above the runs). Each run counts its spans that are still open;
when the count reaches zero, the run is folded and handed on.

Why ``on_start`` and not only ``on_end``: from ended spans alone a sub-agent
whose parent agent is still running looks exactly like a run under a still-open
HTTP request span, and a stream that ends after its agent would arrive after
the agent's envelope was sent; any waiting period is a guess. At start, the
parent link and the kind attribute are already final (the span layer sets the
kind attributes when it creates the span), so membership is exact, and only
ids are kept until the span ends. The envelope itself is built from the ended
spans only, so the result does not depend on where this processor sits among
other processors.

Late children: a framework that reports events late may start a child after
its parent ended. With ``grace_s`` > 0 a run whose spans have all ended waits
that long before it is folded, and a span starting meanwhile under one of its
spans still joins it (default 0: fold at once; a child starting after its run
was folded opens a run of its own if it is semantic).

Other instrumentations' spans (issue 25: OTel GenAI, OpenInference, OpenLLMetry)
set their kind attributes after the span started, and their run's root may end
before its children (OpenLLMetry's LlamaIndex workflow span ends when
``run()`` returns its handler; the workflow's steps start after it). So a span
that starts outside our runs and without our kind opens a *foreign group*: the
subtree under it (our own runs below it excepted, which open runs of their own
as before). When every span of a group has ended, a group none of whose spans
carries another vocabulary (an HTTP request of a plain web app) is forgotten;
any other waits ``foreign_grace_s`` for late children (a span starting under one
of its spans joins it and the wait starts again), then its spans are folded as
:func:`~otel_agents.exporters.ecp.fold` folds them (their outermost semantic
spans are the runs), leaving out a run that holds one of our runs (ours was
handed on already); the spans of our runs that started under the group and were
folded before it are read beside its own, so that another instrumentation's tree
of the same steps beside ours (LangChain's callback tracers, under an HTTP request
span) is not a run again (:func:`._runs.drop_sibling_views`). A group with no run of ours under it, in a
trace with none of ours, that is another instrumentation's trace of calls of ours (:class:`._runs.PeerViews`:
LangChain's callback tracers, OpenLLMetry's Anthropic spans, with no application span around the call) is not
folded either: it is compared with the ended spans of our runs still open and the steps of those folded up to
``2 * foreign_grace_s + 1`` s before it was due (at most 10,000 steps kept; only of runs under no application
span, kept only while a group is open); past that it is a run of its own.

Bounds (memory stays flat): at most ``max_open_runs`` runs are open (the
oldest is folded early, marked ``incomplete``, to make room), and as many
foreign groups (counted apart: plain traffic never evicts our runs); at most
``max_spans_per_run`` spans are kept per run or group (the rest are dropped, the run is
marked ``incomplete``); a run or group still open ``max_age_s`` after it started is
folded with what has ended (a root that never ends). Everything dropped is
counted in :attr:`ECPFoldingProcessor.dropped` and reported once in the log
(in a foreign group only when it held another vocabulary's span: the rest is not a run).
"""

from __future__ import annotations

import logging
import queue
import time
from collections import Counter, OrderedDict
from typing import Any, Callable

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import SpanContext

from ..._spans.finalisers import in_forked_child, new_lock
from ..._spans.guard import guard, report_internal_error, report_user_error
from . import _facts as F
from ._cost import load_prices
from ._envelope import build_envelope
from ._runs import PeerViews, Run, runs_of_trace, start_order
from ._vocabularies import has_foreign_kind

logger = logging.getLogger("otel_agents")

Envelope = dict[str, Any]
_Key = tuple[int, int]  # (trace_id, span_id)


class _OpenRun:
    __slots__ = ("trace_id", "root_id", "started", "open", "kept", "spans", "root", "keys", "over_keys", "over",
                 "ended_at", "marked", "enclosing", "group", "ours")

    def __init__(self, trace_id: int, root_id: int, started: float):
        self.trace_id = trace_id
        self.root_id = root_id
        self.started = started
        self.open = 0            # spans started and not yet ended
        self.kept = 0            # spans admitted under the per-run cap
        self.spans: list[ReadableSpan] = []
        self.root: ReadableSpan | None = None
        self.keys: list[_Key] = []  # our entries in the owner map: kept spans
        self.over_keys: set[_Key] = set()  # and spans over the cap still open (forgotten as they end)
        self.over = 0            # spans dropped over the cap
        self.ended_at: float | None = None  # when ``open`` last reached 0 (waiting out the grace period)
        # foreign groups only: a span of it carries another vocabulary; the ids of its spans our runs started under
        self.marked = False
        self.enclosing: set[int] = set()
        self.ours: list[ReadableSpan] = []  # the spans of our runs under it, once folded: what its peers' views are of
        self.group: _OpenRun | None = None  # our runs only: the foreign group the run started under


def _admit(run: _OpenRun, key: _Key, owners: dict[_Key, tuple[_OpenRun, bool]], cap: int) -> bool:
    """A span that started joins ``run`` (``owners`` maps its key to the run): kept under the ``cap`` of spans
    per run (``True``), or counted over it."""
    kept = run.kept < cap
    if kept:
        run.kept += 1
        run.keys.append(key)
    else:
        run.over += 1
        run.over_keys.add(key)
    owners[key] = (run, kept)
    run.open += 1
    return kept


_SDK_SPANS = F.SDK_SPANS  # read through their fields (``_context``, ``_parent``)
_FoldSpan = F.FoldSpan
_NEVER = float("inf")  # no open run: none is due


class ECPFoldingProcessor(SpanProcessor):
    """A ``SpanProcessor`` that turns each finished run into an ECP envelope.

    Args:
        on_envelope: called with each envelope (a ``dict``, see
            :func:`otel_agents.exporters.ecp.fold`) in the thread that ended the
            run's last span. An exception from it is logged once and swallowed.
            Without it, envelopes go to :attr:`queue`.
        max_open_runs: runs held at once; the oldest is folded early (marked
            ``incomplete``) to make room.
        max_spans_per_run: spans kept per run; more are dropped and counted.
        max_age_s: seconds (monotonic) after a run's first span started; an
            older run is folded with whatever has ended, marked ``incomplete``.
            Checked whenever a span ends and on :meth:`force_flush`.
        max_queued: capacity of :attr:`queue`; envelopes that do not fit are
            dropped and counted.
        include_thoughts: add the models' reasoning to ``evaluation_context``.
        grace_s: seconds a run whose spans have all ended waits for late
            children before it is folded (default 0: at once). Waiting runs are
            folded when later spans start or end, and on :meth:`force_flush`.
        foreign_grace_s: the same wait for a foreign group (see the module docstring; default 1 s, the
            in-process counterpart of ``ecp collect --trace-idle``, whose 5 s allow for other processes' batch
            delays): its root may end before its children start.
        clock: the monotonic clock in seconds (tests inject a fake one).

    Attributes:
        queue: a ``queue.Queue`` of envelopes (only used without ``on_envelope``);
            see also :meth:`drain`.
        dropped: a ``Counter`` of what was dropped or cut short: ``spans_over_cap``,
            ``late_spans`` (a semantic span that ended after its run was folded,
            or whose start this processor did not see), ``runs_evicted``,
            ``runs_expired``, ``envelopes_dropped`` (queue full),
            ``callback_errors``; foreign groups holding another vocabulary's spans count in the same
            keys (``runs_evicted``, ``runs_expired``, ``spans_over_cap``).

    Install it before the runs start (it must see their spans start). Spans
    that started before it was added are not folded.

    Raises:
        ValueError: ``max_open_runs`` or ``max_spans_per_run`` below 1, ``max_age_s`` not positive,
            ``grace_s`` or ``foreign_grace_s`` negative.
    """

    def __init__(self, on_envelope: Callable[[Envelope], Any] | None = None, *,
                 max_open_runs: int = 256, max_spans_per_run: int = 2000, max_age_s: float = 3600.0,
                 max_queued: int = 1000, include_thoughts: bool = False, grace_s: float = 0.0,
                 foreign_grace_s: float = 1.0, clock: Callable[[], float] = time.monotonic):
        if max_open_runs < 1 or max_spans_per_run < 1 or max_age_s <= 0 or grace_s < 0 or foreign_grace_s < 0:
            raise ValueError("max_open_runs, max_spans_per_run and max_age_s must be positive, grace_s and "
                             "foreign_grace_s not negative")
        self.on_envelope = on_envelope
        self.max_open_runs = max_open_runs
        self.max_spans_per_run = max_spans_per_run
        self.max_age_s = max_age_s
        self.include_thoughts = include_thoughts
        self.grace_s = grace_s
        self.foreign_grace_s = foreign_grace_s
        self._max_queued = max_queued
        self._clock = clock
        self._closed = False
        self._start_fresh()
        in_forked_child(ECPFoldingProcessor._start_fresh, self)
        load_prices()  # here, not in the thread that ends the first run (a one-time 0.3-0.4 s)

    def _start_fresh(self) -> None:
        """No open runs, nothing queued, a new lock. Also in a forked child (gunicorn workers,
        ``multiprocessing``): the parent's open runs and queued envelopes stay the parent's (a
        child folding them too would write them twice), and a lock another thread held at fork
        time would stay held in the child forever."""
        self.queue: queue.Queue[Envelope] = queue.Queue(maxsize=self._max_queued)
        self.dropped: Counter[str] = Counter()
        self._lock = new_lock()
        self._runs: OrderedDict[_Key, _OpenRun] = OrderedDict()  # oldest first
        self._oldest_started = _NEVER  # ``started`` of the first of ``_runs`` (kept as runs open and close)
        self._owner: dict[_Key, tuple[_OpenRun, bool]] = {}      # span → (its run, kept?)
        self._waiting: OrderedDict[_Key, _OpenRun] = OrderedDict()  # all spans ended, in grace; oldest first
        # Foreign groups, as the runs above: by (trace id, top span id), their spans, those waiting for late children
        self._groups: OrderedDict[_Key, _OpenRun] = OrderedDict()
        self._group_owner: dict[_Key, tuple[_OpenRun, bool]] = {}
        self._groups_waiting: OrderedDict[_Key, _OpenRun] = OrderedDict()
        # the steps of our runs folded lately: what a foreign group with none of ours may be another view of
        self._views = PeerViews(10_000)
        self._warned = False

    # -- SpanProcessor -----------------------------------------------------------
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        try:  # the guard (``_spans.guard``) written out: no two calls of its hooks per span
            if type(span) in _SDK_SPANS:  # the SDK's own fields, without a property call each
                ctx, parent = span._context, span._parent
            else:
                ctx, parent = span.context, span.parent
            if self._closed or ctx is None:
                return
            trace_id, span_id = (ctx[0], ctx[1]) if type(ctx) is SpanContext else (ctx.trace_id, ctx.span_id)
            if not trace_id or not span_id:  # not ctx.is_valid
                return
            key = (trace_id, span_id)
            folded: list[Run] = []
            lock = self._lock
            lock.acquire()  # not ``with``: its __enter__/__exit__ calls cost more than the bookkeeping
            try:
                parent_key = (trace_id, parent[1] if type(parent) is SpanContext else parent.span_id) \
                    if parent is not None else None
                owner = self._owner.get(parent_key) if parent_key is not None else None
                if owner is not None:
                    run = owner[0]
                    if run.ended_at is not None:  # a late child: the run is not finished after all
                        run.ended_at = None
                        self._waiting.pop((run.trace_id, run.root_id), None)
                elif F.kind(span) is not None:
                    group = self._group_owner.get(parent_key) if parent_key is not None and self._group_owner \
                        else None
                    if group is not None:  # our run under another instrumentation's span: handed on as ours
                        group[0].enclosing.add(parent_key[1])  # type: ignore[index]
                    if len(self._runs) >= self.max_open_runs:
                        oldest = next(iter(self._waiting.values()), None) or next(iter(self._runs.values()))
                        if oldest.open > 0:
                            folded.append(self._close(oldest, f"evicted: more than {self.max_open_runs} open runs"))
                            self._drop("runs_evicted")
                        else:  # finished, only waiting out its grace period
                            folded.append(self._close(oldest, None))
                    run = self._runs[key] = _OpenRun(trace_id, span_id, self._clock())
                    if group is not None:
                        run.group = group[0]
                    self._oldest_started = next(iter(self._runs.values())).started  # once per run
                else:
                    run = None
                    folded += self._join_group(key, parent_key)
                if run is not None and not _admit(run, key, self._owner, self.max_spans_per_run):
                    self._drop("spans_over_cap")
                if self._waiting or self._runs and self._clock() - self._oldest_started >= self.max_age_s or \
                        self._groups:
                    folded += self._expire()  # a run waits out its grace period, or the oldest is due
            finally:
                lock.release()
            if folded:
                self._emit(folded)
        except Exception as exc:  # noqa: BLE001 - never let our bookkeeping break the traced program
            report_internal_error("ecp.on_start", exc)

    def on_end(self, span: ReadableSpan) -> None:
        try:  # the guard written out, as in on_start
            ctx = span._context if type(span) in _SDK_SPANS else span.context
            if self._closed or ctx is None:
                return
            trace_id, span_id = (ctx[0], ctx[1]) if type(ctx) is SpanContext else (ctx.trace_id, ctx.span_id)
            if not trace_id or not span_id:  # not ctx.is_valid
                return
            key = (trace_id, span_id)
            folded: list[Run] = []
            lock = self._lock
            lock.acquire()
            try:
                owner = self._owner.get(key)
                if owner is None:
                    group = self._group_owner.get(key) if self._group_owner else None
                    if group is not None:
                        folded += self._group_span_ended(span, key, *group)
                    elif F.kind(span) is not None:
                        self._drop("late_spans")
                else:
                    run, kept = owner
                    run.open -= 1
                    if kept:
                        span = _FoldSpan(span) if type(span) is not _FoldSpan else span  # only what the fold reads
                        run.spans.append(span)
                    else:  # nothing to keep; forget it now so the map stays bounded
                        del self._owner[key]
                        run.over_keys.discard(key)
                    if span_id == run.root_id:
                        run.root = span
                    if run.open <= 0:
                        if self.grace_s > 0:
                            run.ended_at = self._clock()
                            self._waiting[(run.trace_id, run.root_id)] = run
                        else:
                            folded.append(self._close(run, None))
                if self._waiting or self._runs and self._clock() - self._oldest_started >= self.max_age_s or \
                        self._groups:
                    folded += self._expire()
            finally:
                lock.release()
            if folded:
                self._emit(folded)
        except Exception as exc:  # noqa: BLE001 - never let our bookkeeping or the fold break the traced program
            report_internal_error("ecp.on_end", exc)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Fold runs waiting out their grace period (at once) and runs past their age limit."""
        with guard("ecp.force_flush"):
            with self._lock:
                folded = [self._close(r, None) for r in list(self._waiting.values())]
                for group in list(self._groups_waiting.values()):
                    folded += self._close_group(group, None)
                folded += self._expire()
            self._emit(folded)
        return True

    def shutdown(self) -> None:
        """Fold every open run with what has ended (marked ``incomplete``); ignore later spans."""
        with guard("ecp.shutdown"):
            with self._lock:
                self._closed = True
                folded = [self._close(r, "the processor shut down" if r.open > 0 else None)
                          for r in list(self._runs.values())]
                for group in list(self._groups.values()):
                    folded += self._close_group(group, "the processor shut down" if group.open > 0 else None)
            self._emit(folded)

    # -- the caller's side -----------------------------------------------------------
    def drain(self) -> list[Envelope]:
        """Take every envelope waiting in :attr:`queue` (non-blocking)."""
        out: list[Envelope] = []
        while True:
            try:
                out.append(self.queue.get_nowait())
            except queue.Empty:
                return out

    @property
    def open_runs(self) -> int:
        """How many runs and foreign groups are held (waiting for spans to end, or out their grace period)."""
        with self._lock:
            return len(self._runs) + len(self._groups)

    @property
    def tracked_spans(self) -> int:
        """How many span ids are held (open spans plus kept spans of open runs and foreign groups)."""
        with self._lock:
            return len(self._owner) + len(self._group_owner)

    # -- internals (called with the lock held, except _emit) ---------------------------
    def _close(self, run: _OpenRun, reason: str | None) -> Run:
        runs = self._runs
        runs.pop((run.trace_id, run.root_id), None)
        self._oldest_started = next(iter(runs.values())).started if runs else _NEVER
        self._waiting.pop((run.trace_id, run.root_id), None)
        for key in run.keys:
            self._owner.pop(key, None)
        for key in run.over_keys:
            self._owner.pop(key, None)
        group = run.group
        if group is not None and (group.trace_id, group.root_id) in self._groups:
            group.ours += run.spans  # another instrumentation's spans of the group may be views of its steps
        elif self._groups:  # and those of another trace, open at its time (:meth:`_peer_view`); not a run under
            # an application's span (an HTTP request's): a peer's spans of its calls are in that trace too
            now = self._clock()
            self._views.forget(now - 2 * (2 * self.foreign_grace_s + 1))  # what no group can still ask for
            self._views.remember(run.trace_id, run.spans, now)
        reasons = []
        if reason:
            reasons.append(f"{reason} ({run.open} span(s) still open)" if run.open > 0 else reason)
        if run.over:
            reasons.append(f"{run.over} span(s) over the cap of {self.max_spans_per_run} per run were dropped")
        return Run(run.trace_id, run.root, sorted(run.spans, key=start_order), "; ".join(reasons) or None)

    # foreign groups (see the module docstring)
    def _join_group(self, key: _Key, parent_key: _Key | None) -> list[Run]:
        """A span outside our runs, without our kind, joins the group of its parent, or opens one."""
        folded: list[Run] = []
        owner = self._group_owner.get(parent_key) if parent_key is not None and self._group_owner else None
        if owner is not None:
            group = owner[0]
            if group.ended_at is not None:  # a late child: the group is not finished after all
                group.ended_at = None
                self._groups_waiting.pop((group.trace_id, group.root_id), None)
        else:
            if len(self._groups) >= self.max_open_runs:
                oldest = next(iter(self._groups_waiting.values()), None) or next(iter(self._groups.values()))
                if oldest.open > 0 and oldest.marked:
                    self._drop("runs_evicted")
                folded += self._close_group(oldest, f"evicted: more than {self.max_open_runs} open foreign groups"
                                            if oldest.open > 0 else None)
            group = self._groups[key] = _OpenRun(key[0], key[1], self._clock())
        _admit(group, key, self._group_owner, self.max_spans_per_run)  # over the cap: counted if folded
        return folded

    def _group_span_ended(self, span: ReadableSpan, key: _Key, group: _OpenRun, kept: bool) -> list[Run]:
        group.open -= 1
        if kept:
            group.spans.append(span)  # as it is: read (FoldSpan) only if the group is folded
        else:
            del self._group_owner[key]
            group.over_keys.discard(key)
        if not group.marked and has_foreign_kind(F.attrs(span)):
            group.marked = True
        if group.open > 0:
            return []
        if not group.marked or self.foreign_grace_s <= 0:
            return self._close_group(group, None)
        group.ended_at = self._clock()
        self._groups_waiting[(group.trace_id, group.root_id)] = group
        return []

    def _close_group(self, group: _OpenRun, reason: str | None) -> list[Run]:
        """Forget the group; the runs in its spans (as :func:`fold` finds them), but those holding one of our
        runs (handed on as ours), when a span of it carries another vocabulary."""
        key = (group.trace_id, group.root_id)
        self._groups.pop(key, None)
        self._groups_waiting.pop(key, None)
        for k in group.keys:
            self._group_owner.pop(k, None)
        for k in group.over_keys:
            self._group_owner.pop(k, None)
        if not group.marked:
            return []
        reasons = []
        if reason:
            reasons.append(f"{reason} ({group.open} span(s) still open)" if group.open > 0 else reason)
        if group.over:
            self.dropped["spans_over_cap"] += group.over
            reasons.append(f"{group.over} span(s) over the cap of {self.max_spans_per_run} per run were dropped")
        index: dict[int, F.FoldSpan] = {}
        for span in group.spans:
            fs = _FoldSpan(span)
            index.setdefault(fs.span_id, fs)
        if not group.enclosing and not group.ours and self._peer_view(group, index):
            return []  # another instrumentation's trace of calls of ours: not a run
        for span in group.ours:  # our runs handed on already, beside the group's own: its views of them are not steps
            fs = _FoldSpan(span)
            index.setdefault(fs.span_id, fs)
        runs = [run for run in runs_of_trace(group.trace_id, index)
                if not (group.enclosing and any(s.span_id in group.enclosing for s in run.spans))
                and (run.root.foreign or run.root.semantic_kind is None)]
        for run in runs:
            run.incomplete = "; ".join(reasons) or None
        runs.sort(key=lambda r: start_order(r.root))
        return runs

    def _peer_view(self, group: _OpenRun, index: dict[int, F.FoldSpan]) -> bool:
        """Whether a group with no run of ours under it is another instrumentation's trace of calls of ours
        (:class:`._runs.PeerViews`), compared with the steps of our runs folded at most ``2 * foreign_grace_s + 1``
        seconds before the group was due (its last span's end + ``foreign_grace_s``) and with the ended spans of our
        runs still open, of other traces."""
        views = self._views
        # from when the group was due, not when it is closed (at the next span, which may come much later)
        due = group.ended_at + self.foreign_grace_s if group.ended_at is not None else self._clock()
        views.forget(due - 2 * self.foreign_grace_s - 1)
        trace_id = group.trace_id
        by_trace: dict[int, list[ReadableSpan]] = {}  # the open runs' ended spans, by trace (one trace, many runs)
        for r in self._runs.values():
            if r.trace_id != trace_id:
                by_trace.setdefault(r.trace_id, []).extend(r.spans)
        views.set_held(by_trace.items())
        if any(r.trace_id == trace_id for r in self._runs.values()) or views.holds(trace_id):
            return False  # a trace holding a run of ours (beside the group) is no other view
        return views.is_view(index.values())

    def _expire(self) -> list[Run]:
        now = self._clock()
        out = []
        while self._groups_waiting:
            first = next(iter(self._groups_waiting.values()))
            if now - first.ended_at < self.foreign_grace_s:
                break
            out += self._close_group(first, None)
        while self._groups:
            oldest = next(iter(self._groups.values()))
            if now - oldest.started < self.max_age_s:
                break
            if oldest.open > 0 and oldest.marked:
                self._drop("runs_expired")
            out += self._close_group(oldest, f"age limit of {self.max_age_s:g} s reached" if oldest.open > 0
                                     else None)
        while self._waiting:
            first = next(iter(self._waiting.values()))
            if now - first.ended_at < self.grace_s:
                break
            out.append(self._close(first, None))
        while self._runs:
            oldest = next(iter(self._runs.values()))
            if now - oldest.started < self.max_age_s:
                break
            if oldest.open > 0:
                out.append(self._close(oldest, f"age limit of {self.max_age_s:g} s reached"))
                self._drop("runs_expired")
            else:  # finished, only waiting out its grace period
                out.append(self._close(oldest, None))
        return out

    def _drop(self, what: str) -> None:
        self.dropped[what] += 1
        if not self._warned:
            self._warned = True
            logger.warning("otel_agents: the ECP folding processor dropped or cut short data (%s); "
                           "see ECPFoldingProcessor.dropped, this is logged once", what)

    def _emit(self, runs: list[Run]) -> None:
        for run in runs:
            if not run.spans:
                continue
            try:
                envelope = build_envelope(run, include_thoughts=self.include_thoughts)
            except Exception as exc:  # noqa: BLE001
                report_internal_error("ecp.fold", exc)
                continue
            if envelope is None:
                continue
            if self.on_envelope is not None:
                try:
                    self.on_envelope(envelope)
                except Exception as exc:  # noqa: BLE001 - never let the callback break the traced program
                    with self._lock:
                        self.dropped["callback_errors"] += 1
                    report_user_error("ECP envelope callback (configure(ecp=), on_envelope=)", self.on_envelope, exc)
                continue
            try:
                self.queue.put_nowait(envelope)
            except queue.Full:
                with self._lock:
                    self._drop("envelopes_dropped")
