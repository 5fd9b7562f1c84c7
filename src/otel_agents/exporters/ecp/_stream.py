"""Folding spans as they are read, one trace at a time (``otel-agents fold`` streams with it).

:class:`StreamFolder` groups incoming spans by trace and folds a trace once it is
idle: none of its spans was among the last ``idle_spans`` spans read, the way
the Collector's ``groupbytrace`` processor releases a trace after its wait
duration. A trace whose root has been read is not folded then and there, though
spans are stored as they end and ours end after their children: the rest of
a run may still come after its root in a file several processes write (an MCP
or A2A server's spans, exported up to a batch delay after the caller's), in
``cat agent.jsonl server.jsonl``, or as a model span whose stream was consumed
after its agent returned it. So the envelopes do not depend on the order of
the lines, within the window. A live input that pauses (a pipe with nothing
more to read yet) has its complete traces folded then (:meth:`StreamFolder.settle`):
a root and every parent its spans name read, and no span of another
instrumentation.

The rest is folded by :meth:`StreamFolder.finish` (end of input). Memory is
therefore bounded by the traces still open at once — in a file written as
traces end, the largest trace plus the idle window — not by the file.

Duplicates: a span whose trace id and span id were already read is skipped and
counted (:attr:`StreamFolder.duplicates`), also after its trace was folded, as
long as the trace is among the most recently folded ones holding
``remembered_spans`` span ids (8 bytes each): ``cat t t | otel-agents fold -``
folds each run once.

Another instrumentation's trace of calls of ours (:class:`~._runs.PeerViews`: LangChain's callback tracers,
OpenLLMetry's Anthropic spans, with no application span around the call) is not folded: it is compared, when
it is folded (idle), with the traces of ours still open and with the steps of those folded whose last span was
read at most ``idle_spans`` spans before its own (at most ``idle_spans`` steps kept); a trace of ours read later
than that leaves it a run of its own, as before.

Limits of reading a stream: a span read after its trace was folded (more
than ``idle_spans`` spans after the trace's last one) is folded with the spans
of that trace that come after it, as a partial run marked ``incomplete`` and
reported as a problem (``on_problem``); envelopes come out in the order their
traces go idle, not by start time.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import OrderedDict
from typing import Any, Callable, Iterable

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext

from . import _facts as F
from ._envelope import envelopes_of_runs
from ._runs import PeerViews, runs_of_trace


DEFAULT_IDLE_SPANS = 10_000
"""A trace none of whose spans were among the last this many spans read is folded as it is."""
DEFAULT_REMEMBERED_SPANS = 1_000_000
"""Span ids of folded traces kept to recognise duplicates (8 bytes each)."""


class _Trace:
    __slots__ = ("index", "wanted", "roots", "foreign", "ours", "duplicates", "first_line", "last_seen", "earlier")

    def __init__(self, first_line: int, earlier: int = 0):
        self.index: dict[int, F.FoldSpan] = {}
        self.wanted: set[int] = set()   # parent ids named but not read yet
        self.roots = 0                  # spans with no parent
        self.foreign = False            # holds a span of another instrumentation
        self.ours = False               # holds a span of ours
        self.duplicates = 0
        self.first_line = first_line
        self.last_seen = 0              # StreamFolder.spans when a span of this trace was last read
        self.earlier = earlier          # spans of the trace folded before this part of it was read (a late part)


def _holds(ids: array, span_id: int) -> bool:
    i = bisect_left(ids, span_id)
    return i < len(ids) and ids[i] == span_id


class FoldedSpans:
    """The span ids of the traces folded most recently (sorted, 8 bytes each), so a span that comes again after
    its trace was folded (a file read twice; a batch an exporter sent again because it did not get the answer:
    OTLP delivery is at-least-once) is known as a repeat, not folded as a run of its own. Shared by
    :class:`StreamFolder` (``otel-agents fold``) and :class:`~._gather.TraceGatherer` (``ecp collect``).

    Args:
        limit: span ids kept at most; past it (or past ``max_traces`` traces) the oldest traces are forgotten.
        max_traces: traces kept at most (``None``: no limit but ``limit``).

    Attributes:
        traces: trace id → its folded span ids (an ``array('Q')``, sorted), oldest first.
    """

    __slots__ = ("limit", "max_traces", "traces", "size")

    def __init__(self, limit: int, max_traces: int | None = None) -> None:
        self.limit = limit
        self.max_traces = max_traces
        self.traces: OrderedDict[int, array] = OrderedDict()
        self.size = 0

    def holds(self, trace_id: int, span_id: int) -> bool:
        """Whether that span was folded with its trace (among those still kept)."""
        ids = self.traces.get(trace_id)
        return ids is not None and _holds(ids, span_id)

    def remember(self, trace_id: int, span_ids: Iterable[int]) -> None:
        """Keep the span ids of a trace just folded (with those of its earlier folds, for late spans)."""
        if not self.limit:
            return
        before = self.traces.pop(trace_id, None)
        ids = array("Q", sorted(span_ids if before is None else set(span_ids).union(before)))
        self.size += len(ids) - (len(before) if before is not None else 0)
        self.traces[trace_id] = ids
        while self.traces and (self.size > self.limit or
                               (self.max_traces is not None and len(self.traces) > self.max_traces)):
            self.size -= len(self.traces.popitem(last=False)[1])


class StreamFolder:
    """Folds spans fed in batches into ECP envelopes, each trace once it is idle (see the module docstring).

    Args:
        on_envelope: called with each envelope (a JSON-ready ``dict``).
        on_problem: called with a message for each trace with spans on a
            parent cycle, and for each run that could not be folded (it is
            skipped; the others are still folded).
        on_warning: called with a message for each trace holding the same span
            id twice (the first copy is kept: nothing is lost, so this is no
            problem); see also :attr:`duplicates`.
        include_thoughts: add models' reasoning to ``evaluation_context``.
        hold: fold nothing before :meth:`finish` (several inputs, e.g. one file per process, where
            a trace that looks complete may continue in a later input); memory then holds every span.
        idle_spans: a trace is folded once none of its spans was among the last ``idle_spans`` spans read
            (not with ``hold``).
        remembered_spans: span ids of folded traces kept to recognise duplicates.

    Attributes:
        spans: spans fed so far; ``runs``: envelopes made so far; ``open_spans``:
            spans held now (of traces not yet folded); ``duplicates``: spans
            skipped because the same trace id and span id had been read before;
            ``duplicates_warned``: those of them an ``on_warning`` message named (the
            others repeat a span of a trace folded before they came).

    Raises:
        ValueError: ``idle_spans`` below 1 or ``remembered_spans`` negative.
    """

    def __init__(self, on_envelope: Callable[[dict[str, Any]], Any], *,
                 on_problem: Callable[[str], Any] | None = None, on_warning: Callable[[str], Any] | None = None,
                 include_thoughts: bool = False, hold: bool = False, idle_spans: int = DEFAULT_IDLE_SPANS,
                 remembered_spans: int = DEFAULT_REMEMBERED_SPANS):
        if idle_spans < 1 or remembered_spans < 0:
            raise ValueError("idle_spans must be positive and remembered_spans not negative")
        self.on_envelope = on_envelope
        self.hold = hold
        self.on_problem = on_problem
        self.on_warning = on_warning
        self.include_thoughts = include_thoughts
        self.idle_spans = idle_spans
        self.remembered_spans = remembered_spans
        self.spans = 0
        self.runs = 0
        self.open_spans = 0
        self.duplicates = 0
        self.duplicates_warned = 0
        self._traces: OrderedDict[int, _Trace] = OrderedDict()  # least recently read first
        # those of them holding a span of ours that were read since a peer's trace was last folded: what
        # PeerViews keeps of the traces held is brought up to date with these only (held traces, by time)
        self._changed: dict[int, _Trace] = {}
        self._folded = FoldedSpans(remembered_spans)
        # our steps of the traces folded up to idle_spans spans before a peer's trace was last read (PeerViews)
        self._views = PeerViews(idle_spans)

    def add(self, spans: Iterable[ReadableSpan], line: int = 0) -> None:
        """Feed the spans of one batch (one line of a file: ``line`` is its number, for messages)."""
        traces, folded, fold_span, changed = self._traces, self._folded.traces, F.FoldSpan, self._changed
        for span in spans:
            ctx = span.context
            if ctx is None:
                continue
            trace_id, span_id = (ctx[0], ctx[1]) if type(ctx) is SpanContext else (ctx.trace_id, ctx.span_id)
            if not trace_id or not span_id:
                continue
            self.spans += 1
            done = folded.get(trace_id) if folded else None
            if done is not None and _holds(done, span_id):
                self.duplicates += 1  # its trace was folded with this very span
                continue
            trace = traces.get(trace_id)
            if trace is None:
                trace = traces[trace_id] = _Trace(line, len(done) if done is not None else 0)
            else:
                traces.move_to_end(trace_id)
                if trace.ours:
                    changed[trace_id] = trace
            trace.last_seen = self.spans
            if span_id in trace.index:
                trace.duplicates += 1
                self.duplicates += 1
                continue
            fs = span if type(span) is fold_span else fold_span(span)  # F.frozen, without a call a span
            trace.index[span_id] = fs
            self.open_spans += 1
            trace.wanted.discard(span_id)
            if fs.foreign:
                trace.foreign = True
            elif fs.semantic_kind is not None and not trace.ours:
                trace.ours = True
                changed[trace_id] = trace
            if fs.parent is None or fs.parent_id == fs.span_id:
                trace.roots += 1
            elif fs.parent_id not in trace.index:  # a remote parent too: the caller's span ends after it
                trace.wanted.add(fs.parent_id)  # type: ignore[arg-type]
        if self.hold:
            return
        idle_before = self.spans - self.idle_spans
        while traces:
            trace_id, trace = next(iter(traces.items()))
            if trace.last_seen > idle_before:
                break
            self._fold(trace_id)  # idle: its missing parents are not coming

    def settle(self) -> int:
        """Fold every trace that is complete — its root and every parent its spans name have been read, and it
        holds no span of another instrumentation (whose root may end before its children) — without waiting for
        it to go idle; returns how many were folded. For a live input that has paused (``otel-agents fold -``
        reading a pipe with nothing more to read): what was written so far is folded, not held until more comes.
        Nothing with ``hold``."""
        if self.hold:
            return 0
        done = [trace_id for trace_id, trace in self._traces.items()
                if trace.roots and not trace.wanted and not trace.foreign]
        for trace_id in done:
            self._fold(trace_id)
        return len(done)

    def finish(self) -> None:
        """Fold every trace still open (end of input), least recently read first."""
        for trace_id in list(self._traces):
            self._fold(trace_id)

    def _fold(self, trace_id: int) -> None:
        trace = self._traces.pop(trace_id)
        if trace.ours:
            self._changed.pop(trace_id, None)
        held = len(trace.index)
        self.open_spans -= held
        self._folded.remember(trace_id, trace.index)
        if self._views.fold_trace(trace_id, trace.index.values(), ours=trace.ours, foreign=trace.foreign,
                                  stamp=trace.last_seen, window=self.idle_spans, held=self._held_changes):
            return  # another instrumentation's trace of calls of ours: not a run
        problems: list[str] = []
        runs = runs_of_trace(trace_id, trace.index, problems=problems, foreign=trace.foreign)
        trace.index = {}
        if trace.duplicates and self.on_warning is not None:
            self.duplicates_warned += trace.duplicates
            self.on_warning(f"trace {F.trace_id_hex(trace_id)}: {trace.duplicates} span(s) repeat a span id "
                            "already seen (the first was kept)")
        late = None
        if trace.earlier:  # the rest of a run folded before: whatever its root says, what came first is not here
            late = (f"a late part of the trace: {trace.earlier} span(s) of it were read before and folded into "
                    "another envelope")
            problems.append(f"trace {F.trace_id_hex(trace_id)} (from line {trace.first_line}): {held} span(s) "
                            f"read more than {self.idle_spans} spans after the trace's last one were folded apart "
                            "from it (raise --idle-spans)")
        for problem in problems:
            self._problem(problem)
        where = f"trace {F.trace_id_hex(trace_id)} (from line {trace.first_line})"
        for envelope in envelopes_of_runs(runs, late, include_thoughts=self.include_thoughts, where=where,
                                          on_problem=self._problem):
            self.runs += 1
            self.on_envelope(envelope)

    def _held_changes(self) -> list[tuple[int, Any, int]]:
        """The traces of ours held that were read since this was last called (PeerViews.fold_trace's ``held``),
        in the order they were last read (``last_seen``)."""
        changed, self._changed = self._changed, {}
        return [(trace_id, trace.index.values(), trace.last_seen) for trace_id, trace in changed.items()]

    def _problem(self, message: str) -> None:
        if self.on_problem is not None:
            self.on_problem(message)
