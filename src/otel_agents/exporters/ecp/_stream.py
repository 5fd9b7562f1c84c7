"""Folding spans as they are read, one trace at a time (``otel-agents fold`` streams with it).

Spans are stored as they end, so a trace is usually complete once its root
span has been read. :class:`StreamFolder` groups incoming spans by trace and
folds a trace as soon as it is complete: it holds a span with no parent (or a
remote parent: the local root of a distributed trace) and no span it holds
names a parent it has not seen. The rest is folded by :meth:`StreamFolder.finish`
(end of input). Memory is therefore bounded by the traces still open at once —
in a file written as traces end, the largest trace — not by the file.

Limits of reading a stream: a span that arrives after its trace was folded
(a child that ended after the root, a late batch) is folded with the spans
that come after it, as a run of its own; envelopes come out in the order
their traces complete, not by start time.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from opentelemetry.sdk.trace import ReadableSpan

from . import _facts as F
from ._envelope import build_envelope
from ._runs import runs_of_trace, start_order


class _Trace:
    __slots__ = ("index", "wanted", "roots", "duplicates", "first_line")

    def __init__(self, first_line: int):
        self.index: dict[int, F.FoldSpan] = {}
        self.wanted: set[int] = set()   # parent ids named but not seen yet
        self.roots = 0                  # spans with no parent, or a remote one
        self.duplicates = 0
        self.first_line = first_line


class StreamFolder:
    """Folds spans fed in batches into ECP envelopes, each trace as soon as it is complete.

    Args:
        on_envelope: called with each envelope (a JSON-ready ``dict``).
        on_problem: called with a message for each trace with duplicate span
            ids or spans on a parent cycle, and for each run that could not be
            folded (it is skipped; the others are still folded).
        include_thoughts: add models' reasoning to ``evaluation_context``.
        hold: fold nothing before :meth:`finish` (several inputs, e.g. one file per process, where
            a trace that looks complete may continue in a later input); memory then holds every span.

    Attributes:
        spans: spans fed so far; ``runs``: envelopes made so far; ``open_spans``:
            spans held now (of traces not yet complete).
    """

    def __init__(self, on_envelope: Callable[[dict[str, Any]], Any], *,
                 on_problem: Callable[[str], Any] | None = None, include_thoughts: bool = False,
                 hold: bool = False):
        self.on_envelope = on_envelope
        self.hold = hold
        self.on_problem = on_problem
        self.include_thoughts = include_thoughts
        self.spans = 0
        self.runs = 0
        self.open_spans = 0
        self._traces: dict[int, _Trace] = {}

    def add(self, spans: Iterable[ReadableSpan], line: int = 0) -> None:
        """Feed the spans of one batch (one line of a file: ``line`` is its number, for messages)."""
        touched: dict[int, _Trace] = {}
        for span in spans:
            ctx = span.context
            if ctx is None or not ctx.trace_id or not ctx.span_id:
                continue
            self.spans += 1
            trace = self._traces.get(ctx.trace_id)
            if trace is None:
                trace = self._traces[ctx.trace_id] = _Trace(line)
            touched[ctx.trace_id] = trace
            if ctx.span_id in trace.index:
                trace.duplicates += 1
                continue
            fs = F.frozen(span)
            trace.index[ctx.span_id] = fs
            self.open_spans += 1
            trace.wanted.discard(ctx.span_id)
            parent = fs.parent
            if parent is None or parent.is_remote or fs.parent_id == fs.span_id:
                trace.roots += 1
            elif fs.parent_id not in trace.index:
                trace.wanted.add(fs.parent_id)  # type: ignore[arg-type]
        for trace_id, trace in touched.items():
            if trace.roots and not trace.wanted and not self.hold:
                self._fold(trace_id)

    def finish(self) -> None:
        """Fold every trace still open (end of input), in the order they were first seen."""
        for trace_id in list(self._traces):
            self._fold(trace_id)

    def _fold(self, trace_id: int) -> None:
        trace = self._traces.pop(trace_id)
        self.open_spans -= len(trace.index)
        problems: list[str] = []
        runs = runs_of_trace(trace_id, trace.index, problems=problems, duplicates=trace.duplicates)
        trace.index = {}
        runs.sort(key=lambda r: start_order(r.root))
        for problem in problems:
            self._problem(problem)
        for run in runs:
            try:
                envelope = build_envelope(run, include_thoughts=self.include_thoughts)
            except Exception as exc:  # noqa: BLE001 - damaged input must not stop the other runs
                self._problem(f"trace {F.trace_id_hex(trace_id)} (from line {trace.first_line}): the run of "
                              f"span {F.span_id_hex(run.root.span_id)} could not be folded: {exc!r:.300}")
                continue
            if envelope is None:  # a foreign run with none of the facts
                continue
            self.runs += 1
            self.on_envelope(envelope)

    def _problem(self, message: str) -> None:
        if self.on_problem is not None:
            self.on_problem(message)
