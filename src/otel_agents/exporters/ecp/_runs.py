"""Which spans make up one run.

A run is the subtree of an outermost semantic span: walking down each trace
from its top spans, the first span that carries ``otel_agents.span.kind`` opens
a run, and every span below it (semantic or not) belongs to that run.
Non-semantic ancestors (an HTTP server span) belong to no run, so one trace can
hold several runs. A span whose parent is missing from the input (an orphan)
is a top span: its subtree is folded as a run of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from opentelemetry.sdk.trace import ReadableSpan

from . import _facts as F


@dataclass
class Run:
    """The spans of one run.

    Attributes:
        trace_id: the trace the run belongs to.
        root: the run's outermost semantic span; ``None`` when it never ended
            (a run the folding processor gave up waiting for).
        spans: every span of the run, root included, in start order.
        incomplete: why the run is partial (``None`` when it is whole).
    """

    trace_id: int
    root: ReadableSpan | None
    spans: list[ReadableSpan] = field(default_factory=list)
    incomplete: str | None = None


def start_order(span: ReadableSpan) -> tuple[int, int]:
    """Sort key: start time, then span id (deterministic for equal timestamps)."""
    return (span.start_time or 0, span.context.span_id if span.context else 0)


def group_runs(spans: Iterable[ReadableSpan]) -> list[Run]:
    """Split finished spans (any order, any number of traces) into runs.

    Spans without a valid context are ignored; a span id seen twice in a trace
    keeps its first occurrence. Runs are ordered by their root's start time.
    """
    traces: dict[int, dict[int, ReadableSpan]] = {}
    for span in spans:
        ctx = span.context
        if ctx is None or not ctx.trace_id or not ctx.span_id:
            continue
        index = traces.setdefault(ctx.trace_id, {})
        if ctx.span_id not in index:
            index[ctx.span_id] = F.frozen(span)
    runs: list[Run] = []
    for trace_id, index in traces.items():
        runs.extend(_runs_of_trace(trace_id, index))
    runs.sort(key=lambda r: start_order(r.root) if r.root else start_order(r.spans[0]))
    return runs


def _runs_of_trace(trace_id: int, index: dict[int, ReadableSpan]) -> list[Run]:
    children: dict[int, list[ReadableSpan]] = {}
    tops: list[ReadableSpan] = []
    for span in index.values():
        parent = span.parent
        if parent is not None and parent.span_id in index and parent.span_id != span.context.span_id:
            children.setdefault(parent.span_id, []).append(span)
        else:
            tops.append(span)
    runs: dict[int, Run] = {}
    # Depth-first from the top spans; a span reached twice (a cycle in damaged input) is skipped.
    stack: list[tuple[ReadableSpan, Run | None]] = [(s, None) for s in sorted(tops, key=start_order, reverse=True)]
    seen: set[int] = set()
    while stack:
        span, run = stack.pop()
        sid = span.context.span_id
        if sid in seen:
            continue
        seen.add(sid)
        if run is None and F.kind(span) is not None:
            run = runs[sid] = Run(trace_id, span)
        if run is not None:
            run.spans.append(span)
        for child in sorted(children.get(sid, ()), key=start_order, reverse=True):
            stack.append((child, run))
    for run in runs.values():
        run.spans.sort(key=start_order)
    return list(runs.values())


class RunTree:
    """Parent and children links among the spans of one run.

    ``children[None]`` are the run's top spans: the root, or, for a run whose
    root never ended, the spans whose parent is not in the run.
    """

    def __init__(self, run: Run):
        self.by_id = {s.context.span_id: s for s in run.spans}
        self.parent: dict[int, ReadableSpan | None] = {}
        self.children: dict[int | None, list[ReadableSpan]] = {}
        for span in run.spans:  # already in start order
            p = span.parent.span_id if span.parent is not None else None
            parent = self.by_id.get(p) if p is not None and p != span.context.span_id else None
            self.parent[span.context.span_id] = parent
            self.children.setdefault(parent.context.span_id if parent else None, []).append(span)

    def ancestors(self, span: ReadableSpan) -> Iterable[ReadableSpan]:
        """The span's ancestors inside the run, nearest first (stops on a cycle)."""
        seen = {span.context.span_id}
        cur = self.parent.get(span.context.span_id)
        while cur is not None and cur.context.span_id not in seen:
            seen.add(cur.context.span_id)
            yield cur
            cur = self.parent.get(cur.context.span_id)

    def nearest_agent(self, span: ReadableSpan) -> ReadableSpan | None:
        """The nearest enclosing agent span, or ``None``."""
        return next((a for a in self.ancestors(span) if F.kind(a) == "agent"), None)
