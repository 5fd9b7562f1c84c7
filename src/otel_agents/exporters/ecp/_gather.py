"""Gathering received spans by trace and folding each trace once it is complete (``ecp collect``).

The semantics of the OpenTelemetry Collector's ``groupbytrace`` processor
(https://github.com/open-telemetry/opentelemetry-collector-contrib/tree/main/processor/groupbytraceprocessor),
adapted to "complete": spans arrive in any order, from any number of processes;
:class:`TraceGatherer` holds them by trace id and folds a trace when its root
span (a span with no parent) has arrived and no span of the trace has arrived
for ``trace_idle`` seconds. A trace whose root never arrives (its root process
exports elsewhere, or died) is folded ``trace_timeout`` seconds after its last
span, marked ``incomplete``; so is a trace whose root came but some of whose
spans name a parent that never did (a process that died mid-call: the subtree
under the lost span is folded as a run of its own, as :func:`fold` does), and
the part of a trace that arrives after the trace was folded (its spans folded
before are in another envelope).

Bounds (memory stays flat whatever the stream): at most ``max_traces`` traces
and ``max_spans`` spans are held; past either, the oldest trace (first span
received first) is folded early, marked ``incomplete``. A trace keeps at most
``max_spans_per_trace`` spans; the rest are dropped, except a span that is the parent of a span held (an SDK
exports a span when it ends, so a run's root and its steps' spans, which end last, arrive last): those are kept,
up to twice the cap in all, so that a run cut short is still one run, with its root and its shape, and not one
run per step whose parent was dropped. Every such event is
counted in :attr:`TraceGatherer.dropped` and logged (WARNING) with the running
count, at its 1st, 10th, 100th... occurrence (so an overload cannot flood the log).

Repeats: OTLP delivery is at-least-once (an exporter that did not get the answer sends the request again),
so a span whose trace id and span id were received before is folded once: held, it is counted in the
trace's problems; after its trace was folded (the span ids of up to ``max_spans`` spans of recently folded
traces are kept, as ``otel-agents fold`` keeps them), it is dropped and counted, never a second envelope.

Another instrumentation's trace of calls of ours (:class:`~._runs.PeerViews`: LangChain's callback tracers,
OpenLLMetry's Anthropic spans, with no application span around the call) is not folded: it is compared with
the traces of ours held and with the steps of those whose last span arrived up to ``trace_timeout`` seconds
before its own (at most 10,000 steps kept); a trace of ours that arrives after it was folded leaves it a run of
its own, as before.

The fold is the one of :func:`otel_agents.exporters.ecp.fold` (same runs, same
envelopes, foreign vocabularies included). Not thread-safe: one thread feeds it
and calls :meth:`TraceGatherer.fold_ready` (the receiver's worker).
"""

from __future__ import annotations

import logging
import time
from collections import Counter, OrderedDict
from typing import Any, Callable, Iterable

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext

from . import _facts as F
from ._cost import load_prices
from ._envelope import envelopes_of_runs
from ._runs import PeerViews, runs_of_trace
from ._stream import FoldedSpans

logger = logging.getLogger("otel_agents.collect")


class _Held:
    __slots__ = ("index", "root", "last_seen", "duplicates", "over", "foreign", "ours", "ours_from", "earlier",
                 "parents_missing")

    def __init__(self, now: float, earlier: int = 0):
        self.index: dict[int, F.FoldSpan] = {}
        self.root = False       # a span without a parent has arrived
        self.last_seen = now
        self.duplicates = 0
        self.over = 0           # spans dropped over max_spans_per_trace
        self.foreign = False    # holds a span of another vocabulary
        self.ours = False       # holds a span of ours
        self.ours_from = 0      # TraceGatherer.spans when its first span of ours arrived (the order of those held)
        self.earlier = earlier  # spans of the trace folded before this part of it began (a late part)
        self.parents_missing: set[int] | None = None  # once over the cap: parent ids spans held name, not held


class TraceGatherer:
    """Holds spans by trace; folds each trace into ECP envelopes when it is complete.

    Args:
        on_envelope: called with each envelope (a JSON-ready ``dict``).
        trace_idle: seconds without a new span after which a trace whose root has arrived is folded
            (``groupbytrace``'s ``wait_duration``).
        trace_timeout: seconds without a new span after which a trace is folded even without its root.
        max_traces: traces held at once (``groupbytrace``'s ``num_traces``).
        max_spans: spans held at once, all traces together.
        max_spans_per_trace: spans kept per trace; over it, a span that is the parent of a span held is
            kept too (up to twice this in all), so a run cut short keeps its root.
        include_thoughts: add models' reasoning to ``evaluation_context``.
        on_problem: called with a message per trace with duplicate span ids or spans on a parent
            cycle, and per run that could not be folded; default: logged as WARNING.
        clock: monotonic seconds (tests inject a fake one).

    Attributes:
        spans: spans received; ``runs``: envelopes made; ``traces``: traces folded.
        dropped: a ``Counter``: ``spans_over_cap``, ``traces_evicted`` (folded early to stay within
            ``max_traces``/``max_spans``), ``traces_without_root`` (folded at ``trace_timeout``),
            ``late_spans`` (a span of a trace folded already: it starts a new partial trace, whose envelopes are
            marked ``incomplete``: the spans folded before are not in them),
            ``spans_repeated`` (a span of a trace folded already, with that very span: sent again, as an
            exporter does when it did not get the answer; dropped, its envelope has it).

    Raises:
        ValueError: a limit that is not positive.
    """

    def __init__(self, on_envelope: Callable[[dict[str, Any]], Any], *, trace_idle: float = 1.0,
                 trace_timeout: float = 30.0, max_traces: int = 10_000, max_spans: int = 500_000,
                 max_spans_per_trace: int = 2000, include_thoughts: bool = False,
                 on_problem: Callable[[str], Any] | None = None, clock: Callable[[], float] = time.monotonic):
        if min(max_traces, max_spans, max_spans_per_trace) < 1 or trace_idle < 0 or trace_timeout < trace_idle:
            raise ValueError("max_traces, max_spans, max_spans_per_trace must be positive; "
                             "0 <= trace_idle <= trace_timeout")
        self.on_envelope = on_envelope
        self.trace_idle = trace_idle
        self.trace_timeout = trace_timeout
        self.max_traces = max_traces
        self.max_spans = max_spans
        self.max_spans_per_trace = max_spans_per_trace
        self.include_thoughts = include_thoughts
        self.on_problem = on_problem
        self.spans = 0
        self.runs = 0
        self.traces = 0
        self.dropped: Counter[str] = Counter()
        self._clock = clock
        self._held: OrderedDict[int, _Held] = OrderedDict()  # first span received first
        # those of them holding a span of ours that got a span since a peer's trace was last folded: what
        # PeerViews keeps of the traces held is brought up to date with these only (held traces, by time)
        self._changed: dict[int, _Held] = {}
        self._held_spans = 0
        # span ids of recently folded traces (late and repeated spans), as many as the receiver may hold
        self._folded = FoldedSpans(max_spans, max_traces)
        # our steps of the traces whose last span arrived up to trace_timeout s before a peer's (PeerViews)
        self._views = PeerViews(min(max_spans, 10_000))
        # genai-prices is imported with the first model span received (a one-time 0.3-0.4 s of CPU), before its
        # trace is folded: a receiver that gets no model call (tool servers, the tests' emitters) never pays it
        self._unpriced = True

    @property
    def held_traces(self) -> int:
        """Traces held now."""
        return len(self._held)

    @property
    def held_spans(self) -> int:
        """Spans held now."""
        return self._held_spans

    def add(self, spans: Iterable[ReadableSpan]) -> None:
        """Hold the spans of one request; evicts the oldest traces if a bound is passed."""
        now = self._clock()
        folded = self._folded
        for span in spans:
            ctx = span.context
            if ctx is None:
                continue
            trace_id, span_id = (ctx[0], ctx[1]) if type(ctx) is SpanContext else (ctx.trace_id, ctx.span_id)
            if not trace_id or not span_id:
                continue
            self.spans += 1
            if folded.traces and folded.holds(trace_id, span_id):
                self._count("spans_repeated", f"a span of trace {F.trace_id_hex(trace_id)} arrived again after "
                                              "the trace was folded with it (a request sent twice); dropped")
                continue
            held = self._held.get(trace_id)
            if held is None:
                earlier = folded.traces.get(trace_id)
                if earlier is not None:
                    self._count("late_spans", f"a span of trace {F.trace_id_hex(trace_id)} arrived after "
                                              "the trace was folded; it starts a new partial trace "
                                              "(raise --trace-idle)")
                held = self._held[trace_id] = _Held(now, len(earlier) if earlier is not None else 0)
            held.last_seen = now
            if span_id in held.index:
                held.duplicates += 1
                continue
            over = len(held.index) >= self.max_spans_per_trace
            if over and not self._parent_of_held(held, span_id):
                held.over += 1
                self._count("spans_over_cap", f"trace {F.trace_id_hex(trace_id)} has more than "
                                              f"{self.max_spans_per_trace} spans; span dropped")
                continue
            fs = F.frozen(span)
            if over:  # kept as the parent of spans held: its own parent, if not held, is kept when it comes
                held.parents_missing.discard(span_id)
                if fs.parent_id is not None and fs.parent_id not in held.index:
                    held.parents_missing.add(fs.parent_id)
            held.index[span_id] = fs
            self._held_spans += 1
            if self._unpriced and fs.semantic_kind == "model":
                self._unpriced = False
                load_prices()
            if fs.parent is None:
                held.root = True
            if fs.foreign:
                held.foreign = True
            elif fs.semantic_kind is not None and not held.ours:
                held.ours = True
                held.ours_from = self.spans
            if held.ours:
                self._changed[trace_id] = held
        while len(self._held) > self.max_traces or self._held_spans > self.max_spans:
            trace_id = next(iter(self._held))
            self._count("traces_evicted", f"trace {F.trace_id_hex(trace_id)} folded early: more than "
                                          f"{self.max_traces} traces or {self.max_spans} spans held")
            self._fold(trace_id, f"folded early: the receiver held more than {self.max_traces} traces "
                                 f"or {self.max_spans} spans")

    def _parent_of_held(self, held: _Held, span_id: int) -> bool:
        """Whether a span over the cap is kept: it is the parent of a span held, and the trace holds fewer
        than twice ``max_spans_per_trace`` spans. The parents missing are found once, when the cap is reached."""
        if held.parents_missing is None:
            held.parents_missing = set(_missing_parents(held.index))
        return span_id in held.parents_missing and len(held.index) < 2 * self.max_spans_per_trace

    def fold_ready(self) -> int:
        """Fold every complete trace (root arrived and idle ``trace_idle``) and every trace idle
        ``trace_timeout``; returns how many traces were folded."""
        now = self._clock()
        ready = []
        for trace_id, held in self._held.items():
            idle = now - held.last_seen
            if idle >= self.trace_timeout or (held.root and idle >= self.trace_idle):
                ready.append(trace_id)
        for trace_id in ready:
            held = self._held[trace_id]
            reason = None
            if not held.root:
                self._count("traces_without_root", f"trace {F.trace_id_hex(trace_id)} folded without its root "
                                                   f"span after {self.trace_timeout:g} s")
                reason = f"the trace's root span did not arrive within {self.trace_timeout:g} s"
            self._fold(trace_id, reason)
        return len(ready)

    def flush(self, reason: str) -> tuple[int, int]:
        """Fold every trace held now, marked ``incomplete`` with ``reason`` unless complete
        (shutdown); returns ``(traces, spans)`` folded."""
        traces, spans = len(self._held), self._held_spans
        for trace_id in list(self._held):
            self._fold(trace_id, None if self._held[trace_id].root else reason)
        return traces, spans

    def _held_changes(self) -> list[tuple[int, Any, int]]:
        """The traces of ours held that got a span since this was last called (PeerViews.fold_trace's ``held``),
        in the order their first span of ours arrived."""
        changed, self._changed = self._changed, {}
        return [(trace_id, held.index.values(), held.ours_from) for trace_id, held in changed.items()]

    def _fold(self, trace_id: int, reason: str | None) -> None:
        held = self._held.pop(trace_id)
        if held.ours:
            self._changed.pop(trace_id, None)
        self._held_spans -= len(held.index)
        self.traces += 1
        self._folded.remember(trace_id, held.index)
        # by when spans arrived, not when the trace is folded (fold_ready may be called late)
        if self._views.fold_trace(trace_id, held.index.values(), ours=held.ours, foreign=held.foreign,
                                  stamp=held.last_seen, window=self.trace_timeout, held=self._held_changes):
            return  # another instrumentation's trace of calls of ours: not a run
        if held.over:
            cut = f"{held.over} span(s) over the cap of {self.max_spans_per_trace} per trace were dropped"
            reason = f"{reason}; {cut}" if reason else cut
        if held.earlier:  # the rest of a run folded before: whatever its root says, what came first is not here
            part = (f"a late part of the trace: {held.earlier} span(s) of it arrived before and were folded "
                    "into another envelope")
            reason = f"{reason}; {part}" if reason else part
        if held.root and not held.over:  # rooted, yet spans whose parent never came (its process died first)
            lost = _missing_parents(held.index)
            if lost:
                gap = (f"{sum(lost.values())} span(s) name a parent span that never arrived "
                       f"({', '.join(F.span_id_hex(p) for p in list(lost)[:3])}{', …' if len(lost) > 3 else ''})")
                reason = f"{reason}; {gap}" if reason else gap
        problems: list[str] = []
        runs = runs_of_trace(trace_id, held.index, problems=problems, duplicates=held.duplicates, foreign=held.foreign)
        held.index = {}
        for problem in problems:
            self._problem(problem)
        for envelope in envelopes_of_runs(runs, reason, include_thoughts=self.include_thoughts,
                                          where=f"trace {F.trace_id_hex(trace_id)}", on_problem=self._problem):
            self.runs += 1
            self.on_envelope(envelope)

    def _count(self, what: str, message: str) -> None:
        self.dropped[what] += 1
        n = self.dropped[what]
        if n == 10 ** (len(str(n)) - 1):  # the 1st, 10th, 100th...: counted, never a flood
            logger.warning("otel-agents collect: %s (%s: %d so far; logged at 1, 10, 100...)", message, what, n)

    def _problem(self, message: str) -> None:
        if self.on_problem is not None:
            self.on_problem(message)
        else:
            logger.warning("otel-agents collect: %s", message)


def _missing_parents(index: dict[int, F.FoldSpan]) -> dict[int, int]:
    """The parent span ids some span of the trace names but the trace does not hold → how many spans name each."""
    lost: dict[int, int] = {}
    for span in index.values():
        parent = span.parent_id
        if parent is not None and parent != span.span_id and parent not in index:
            lost[parent] = lost.get(parent, 0) + 1
    return lost


__all__ = ["TraceGatherer"]
