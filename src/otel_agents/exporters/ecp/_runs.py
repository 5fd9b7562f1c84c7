"""Which spans make up one run.

A run is the subtree of an outermost semantic span: walking down each trace
from its top spans, the first span that carries ``otel_agents.span.kind`` opens
a run, and every span below it (semantic or not) belongs to that run.
Non-semantic ancestors (an HTTP server span) belong to no run, so one trace can
hold several runs. A span whose parent is missing from the input (an orphan)
is a top span: its subtree is folded as a run of its own. A trace that is another
instrumentation's view of calls another trace of ours holds (:class:`PeerViews`) holds
no run.
"""

from __future__ import annotations

import functools
import operator
import re
from bisect import bisect_left, insort
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterable

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from ...semconv import attributes as A
from . import _facts as F


_LINE_NAME_LIMIT = 120  # _evidence.NAME_LIMIT (that module imports this one)
_ONE_REQUEST_KINDS = frozenset({"model", "embedding"})  # kinds whose span inside one of its kind is the same request
_STEP_KINDS = frozenset({"model", "tool", "skill", "retriever", "embedding"})


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


def start_order(span: F.FoldSpan) -> tuple[int, int]:
    """Sort key: start time, then span id (deterministic for equal timestamps)."""
    return (span.start_time or 0, span.span_id)


_START_ID = operator.attrgetter("start_time", "span_id")


def sort_by_start(spans: list[F.FoldSpan]) -> None:
    """``spans.sort(key=start_order)``, the key read in C (no Python call a span) where every start time is known;
    ``start_order`` itself when one is not (``None`` does not compare with a time: the ``TypeError`` says so, and
    the keys are distinct, span ids being distinct, so the order is the same whatever the first sort left)."""
    try:
        spans.sort(key=_START_ID)
    except TypeError:
        spans.sort(key=start_order)


def group_runs(spans: Iterable[ReadableSpan], *, problems: list[str] | None = None) -> list[Run]:
    """Split finished spans (any order, any number of traces) into runs.

    Spans without a valid context are ignored; a span id seen twice in a trace
    keeps its first occurrence; spans on a parent cycle (damaged input: no top
    span above them) belong to no run, nor do the spans of a trace that is
    another instrumentation's view of calls of ours in another trace
    (:func:`peer_traces`). Runs are ordered by their root's start time. The
    runs hold :class:`~._facts.FoldSpan` copies of the spans.

    Args:
        spans: the spans.
        problems: receives one message per trace with duplicate span ids and
            one per trace with spans on a parent cycle (``None``: not reported).
    """
    traces: dict[int, dict[int, F.FoldSpan]] = {}
    duplicates: dict[int, int] = {}
    foreign: set[int] = set()  # traces holding another vocabulary's span
    fold_span = F.FoldSpan
    for span in spans:
        fs = span if type(span) is fold_span else fold_span(span)  # its ids read once (0 without a context)
        trace_id, span_id = fs.trace_id, fs.span_id
        if not trace_id or not span_id:
            continue
        index = traces.get(trace_id)
        if index is None:
            index = traces[trace_id] = {}
        if span_id not in index:
            index[span_id] = fs
            if fs.foreign:
                foreign.add(trace_id)
        else:
            duplicates[trace_id] = duplicates.get(trace_id, 0) + 1
    if foreign:  # another instrumentation's separate trace of calls of ours is not a run
        for trace_id in peer_traces(traces, foreign):
            del traces[trace_id]
    runs: list[Run] = []
    for trace_id, index in traces.items():
        runs.extend(runs_of_trace(trace_id, index, problems=problems, duplicates=duplicates.get(trace_id, 0)))
    runs.sort(key=lambda r: start_order(r.root))
    return runs


def peer_traces(traces: dict[int, dict[int, F.FoldSpan]], foreign: Collection[int]) -> list[int]:
    """The traces among ``foreign`` (trace ids of ``traces``, each trace its spans by span id) that are another
    instrumentation's view of calls another trace of ours holds (:class:`PeerViews`), in their start order."""
    alone = {t for t in foreign if not has_ours(traces[t].values())}
    if not alone:
        return []
    views = PeerViews(limit=None)
    for t, index in traces.items():
        if t not in alone:
            views.remember(t, index.values())
    if not len(views):  # another instrumentation alone
        return []
    return [t for t in sorted(alone, key=lambda t: min(start_order(s) for s in traces[t].values()))
            if views.is_view(traces[t].values())]


def runs_of_trace(trace_id: int, index: dict[int, F.FoldSpan], *, problems: list[str] | None = None,
                  duplicates: int = 0, foreign: bool = True) -> list[Run]:
    """The runs of one trace, given its spans by span id (see :func:`group_runs`); ``duplicates``
    is how many spans with an id already in ``index`` were left out (reported in ``problems``); ``foreign``:
    ``False`` when the caller knows no span of ``index`` is of another vocabulary (no sibling view to drop)."""
    if foreign:
        drop_sibling_views(index.values())
    children: dict[int, list[F.FoldSpan]] = {}
    tops: list[F.FoldSpan] = []
    for span in index.values():
        parent_id = span.parent_id
        if parent_id is not None and parent_id != span.span_id and parent_id in index:
            siblings = children.get(parent_id)
            if siblings is None:
                children[parent_id] = [span]
            else:
                siblings.append(span)
        else:
            tops.append(span)
    # Down from the top spans; each span has one parent, so every span reachable from a top is
    # reached once (spans on a parent cycle in damaged input are reachable from none and dropped).
    # The visiting order does not matter: runs and their spans are sorted afterwards.
    runs: list[Run] = []
    reached = 0
    stack: list[tuple[F.FoldSpan, Run | None]] = [(s, None) for s in tops]
    while stack:
        span, run = stack.pop()
        reached += 1
        if run is None and span.semantic_kind is not None:
            run = Run(trace_id, span)
            runs.append(run)
        if run is not None:
            run.spans.append(span)
        below = children.get(span.span_id)
        if below:
            for child in below:  # a loop, not a generator: most spans have one or two children
                stack.append((child, run))
    for run in runs:
        sort_by_start(run.spans)
    if problems is not None:
        if duplicates:
            problems.append(f"trace {F.trace_id_hex(trace_id)}: {duplicates} span(s) repeat a span id "
                            "already seen (the first was kept)")
        if reached < len(index):
            problems.append(f"trace {F.trace_id_hex(trace_id)}: {len(index) - reached} span(s) on a "
                            "parent cycle belong to no run (dropped)")
    return runs


def _overlap(a: F.FoldSpan, b: F.FoldSpan) -> bool:
    """Whether the two spans' time intervals overlap (unknown times: they may)."""
    if not (a.start_time and a.end_time and b.start_time and b.end_time):
        return True
    return a.start_time < b.end_time and b.start_time < a.end_time


def _models(span: F.FoldSpan) -> set[Any]:
    """The model names a model span gives (requested and answering), or its display name."""
    a = span.attributes
    names = {a.get(A.GEN_AI_REQUEST_MODEL), a.get(A.GEN_AI_RESPONSE_MODEL)} - {None}
    return names or {F.display_name(span)}


def _same_request(foreign: F.FoldSpan, ours: F.FoldSpan) -> bool:
    """A foreign model span and one of ours are one request: their times overlap, a model name is shared,
    and the response ids and token counts agree wherever both spans give them."""
    if not _overlap(foreign, ours) or not (_models(foreign) & _models(ours)):
        return False
    a, b = foreign.attributes.get(A.GEN_AI_RESPONSE_ID), ours.attributes.get(A.GEN_AI_RESPONSE_ID)
    if a is not None and b is not None and a != b:
        return False
    for x, y in zip(F.usage(foreign)[:2], F.usage(ours)[:2]):
        if x is not None and y is not None and x != y:
            return False
    return True


_MODEL_KINDS = ("model", "embedding")
_RUN_KINDS = ("agent", "chain")


def drop_sibling_views(spans: Collection[F.FoldSpan]) -> None:
    """Another instrumentation's record of a step we recorded is not a step of its own, wherever it sits
    in the trace (beside our tree, not only inside it: Google ADK's own ``gcp.vertex.agent`` spans form a
    second tree next to ours). A foreign semantic span of one trace is folded as a plain span
    (``semantic_kind`` cleared) when it duplicates one of our spans:

    * a tool call: the same ``gen_ai.tool.call.id``, or (no id on it) the same tool name at the same time;
    * a model request (:func:`_same_request`): the same model at the same time, response id and token
      counts agreeing wherever both give them;
    * an agent or workflow: an agent or chain of ours of the same name at the same time;
    * any of these made by another instrumentation of a framework we instrumented too (its instrumentation
      scope names the framework, :func:`scope_framework`; ours carry ``otel_agents.framework``): a step of
      ours of that framework and the same kind (agents and chains alike) at the same time — their names
      need not agree (OpenInference names its agent spans ``Support.run``, CrewAI's
      ``Order Clerk.order_status._execute_core``, and many carry no agent name).

    Foreign spans that match nothing of ours are kept: a trace that only another instrumentation
    recorded folds as before."""
    foreign = [span for span in spans if span.foreign]
    if not foreign:  # the usual case: one instrumentation
        return
    ours: dict[str, list[F.FoldSpan]] = {}
    for span in spans:
        if not span.foreign and span.semantic_kind is not None:
            ours.setdefault(span.semantic_kind, []).append(span)
    if not ours:
        return
    call_ids = {F.tool_call_id(s) for k in ("tool", "skill") for s in ours.get(k, ())} - {None}
    for span in foreign:
        kind = span.semantic_kind
        if kind in ("tool", "skill"):
            call_id = F.tool_call_id(span)
            same = call_id in call_ids if call_id is not None else any(
                _overlap(span, o) and F.display_name(o) == F.display_name(span)
                for k in ("tool", "skill") for o in ours.get(k, ()))
        elif kind in _MODEL_KINDS:
            same = any(_same_request(span, o) for o in ours.get(kind, ()))
        elif kind in _RUN_KINDS:
            name = F.display_name(span)
            same = any(_overlap(span, o) and F.display_name(o) == name for k in _RUN_KINDS for o in ours.get(k, ()))
        else:
            same = False
        if not same and span.scope is not None:
            framework = scope_framework(span.scope.name)
            if framework is not None:
                like = _LIKE.get(kind, (kind,))
                same = any(_overlap(span, o) and _framework(o) == framework for k in like for o in ours.get(k, ()))
        if same:
            span.semantic_kind = None
            span.foreign = False


_LIKE = {"tool": ("tool", "skill"), "skill": ("tool", "skill"), "agent": _RUN_KINDS, "chain": _RUN_KINDS}
# Words of instrumentation scope names that name a project or a package layout, not a framework.
_SCOPE_WORDS = frozenset({"otel_agents", "instrumentors", "openinference", "instrumentation", "opentelemetry",
                          "genai", "traceloop", "io"})
_VERSION_SUFFIX = re.compile(r"v\d+$")


@functools.lru_cache(maxsize=256)
def scope_framework(name: Any) -> str | None:
    """The framework an instrumentation scope name is of, as a bare word: the first part of the dotted name
    that is not a project's word, lower case, without ``_``, ``-`` or a version suffix
    (``openinference.instrumentation.llama_index``, ``opentelemetry.instrumentation.llamaindex`` and ours
    ``otel_agents.instrumentors.llama_index`` → ``llamaindex``; ``opentelemetry.instrumentation.openai_v2``
    → ``openai``; PydanticAI's own ``pydantic-ai`` → ``pydanticai``); ``None`` for a name of none."""
    if not isinstance(name, str):
        return None
    for word in name.lower().split("."):
        if word and word not in _SCOPE_WORDS:
            word = word.replace("_", "").replace("-", "")
            return _VERSION_SUFFIX.sub("", word) if len(word) > 2 else word
    return None


def _framework(span: F.FoldSpan) -> str | None:
    """The framework one of our spans was made for (``otel_agents.framework``), as :func:`scope_framework`
    writes it."""
    return scope_framework(span.attributes.get(A.OTEL_AGENTS_FRAMEWORK))


def has_ours(spans: Iterable[F.FoldSpan]) -> bool:
    """Whether any of the spans is one of ours (our kind attribute: a semantic span not of another vocabulary)."""
    for span in spans:
        if span.semantic_kind is not None and not span.foreign:
            return True
    return False


_NO_END = 1 << 64  # a window's end when a step's end time is unknown
_SHARED_ID, _SAME_FRAMEWORK = 2, 1  # how :func:`_same_call` knows a foreign step is a view of ours
_TOP_MATCH = _SHARED_ID  # what a peer's run must share with a step of ours


# What :class:`PeerViews` keeps of a step of ours, not the span (a path folding a trace at a time keeps thousands,
# and their attributes, content included, would stay alive with them): a plain tuple (its fields by index below;
# built with BUILD_TUPLE, no constructor call).
_Step = tuple
_ID, _KIND, _START, _END, _RESOURCE, _CALL_ID, _RESPONSE_ID, _TOKENS, _FRAMEWORK = range(9)
_NO_TOKENS = (None, None)


def our_steps(spans: Iterable[F.FoldSpan]) -> list[_Step]:
    """Our semantic spans among ``spans``, as :class:`PeerViews` compares a peer trace with them."""
    # One loop with _framework inlined: every trace of ours a path folds passes here, whether or not a peer
    # trace ever comes.
    steps = []
    append, usage, framework_of = steps.append, F.usage, scope_framework
    response_key, framework_key = A.GEN_AI_RESPONSE_ID, A.OTEL_AGENTS_FRAMEWORK
    for s in spans:
        kind = s.semantic_kind
        if kind is None or s.foreign:
            continue
        a = s.attributes
        if kind == "tool" or kind == "skill":
            append((s.span_id, kind, s.start_time, s.end_time, s.resource, F.tool_call_id(s), None, _NO_TOKENS,
                    framework_of(a.get(framework_key))))
        elif kind in _MODEL_KINDS:
            tokens = s.tokens  # F.usage's (input, output, total): _same_call compares the first two
            append((s.span_id, kind, s.start_time, s.end_time, s.resource, None, a.get(response_key),
                    tokens if tokens is not None else usage(s), framework_of(a.get(framework_key))))
        else:
            append((s.span_id, kind, s.start_time, s.end_time, s.resource, None, None, _NO_TOKENS,
                    framework_of(a.get(framework_key))))
    return steps


def _window(steps: list[_Step]) -> tuple[int, int]:
    """The time window (start, end) of steps of ours; a step without its times may be at any time."""
    start, end = _NO_END, 0
    open_start = open_end = False
    for s in steps:
        t = s[_START]
        if not t:
            open_start = True
        elif t < start:
            start = t
        t = s[_END]
        if not t:
            open_end = True
        elif t > end:
            end = t
    return (0 if open_start or not steps else start, _NO_END if open_end or not steps else end)


def _same_call(foreign: F.FoldSpan, ours: _Step, framework: str | None) -> int:
    """Whether a foreign step of another trace is a view of our step, and how it is known: ``_SHARED_ID`` (they
    give the same ``gen_ai.tool.call.id``, or ``gen_ai.response.id``), ``_SAME_FRAMEWORK`` (the foreign span's
    instrumentation scope names the framework our step was made for: ``framework``, :func:`scope_framework`), else
    0. Never when their times do not overlap, another process made them (the resources differ), or an id or token
    count both give disagrees."""
    a_start, a_end, b_start, b_end = foreign.start_time, foreign.end_time, ours[_START], ours[_END]
    if a_start and a_end and b_start and b_end and not (a_start < b_end and b_start < a_end):
        return 0  # unknown times: they may overlap
    if foreign.resource != ours[_RESOURCE]:
        return 0
    kind = foreign.semantic_kind
    if kind in ("tool", "skill"):
        a, b = F.tool_call_id(foreign), ours[_CALL_ID]
        if a is not None and b is not None:
            return _SHARED_ID if a == b else 0
    elif kind in _MODEL_KINDS:
        for x, y in zip(F.usage(foreign)[:2], ours[_TOKENS]):  # (ours: the three counts; zip pairs two)
            if x is not None and y is not None and x != y:
                return 0
        a, b = foreign.attributes.get(A.GEN_AI_RESPONSE_ID), ours[_RESPONSE_ID]
        if a is not None and b is not None:
            return _SHARED_ID if a == b else 0
    return _SAME_FRAMEWORK if framework is not None and ours[_FRAMEWORK] == framework else 0


class _Windows:
    """Time windows ``(start, end, trace id)`` of traces of ours, to find those overlapping a peer trace's time
    without a walk over all of them (a path folding one trace at a time compares each peer trace it folds with
    thousands): sorted by start, the longest bounded window's length kept; those open at either end (a step
    without its times: start 0 or end ``_NO_END``) also listed apart, as they may overlap any time."""

    __slots__ = ("sorted", "_open", "_longest")

    def __init__(self) -> None:
        self.sorted: list[tuple[int, int, int]] = []
        self._open: list[tuple[int, int, int]] = []
        self._longest = 0  # the longest bounded window added since the index was last empty (ns)

    def add(self, window: tuple[int, int, int]) -> None:
        insort(self.sorted, window)
        if not window[0] or window[1] == _NO_END:
            insort(self._open, window)
        elif window[1] - window[0] > self._longest:
            self._longest = window[1] - window[0]

    def remove(self, window: tuple[int, int, int]) -> None:
        for windows in (self.sorted, self._open):
            i = bisect_left(windows, window)
            if i < len(windows) and windows[i] == window:
                del windows[i]
        if not self.sorted:
            self._longest = 0

    def overlapping(self, start: int, end: int) -> list[tuple[int, int, int]]:
        """The windows with ``s < end`` and ``start < e``, by start."""
        windows, lo_start = self.sorted, start - self._longest - 1
        lo, hi = bisect_left(windows, (lo_start,)), bisect_left(windows, (end,))
        got = [w for w in windows[lo:hi] if w[1] > start]
        wide = [w for w in self._open if w[0] < lo_start and w[1] > start]  # open ones before the bounded reach
        return sorted(wide + got) if wide else got


class PeerViews:
    """Recognises another instrumentation's separate trace of calls we traced too: LangChain's callback tracers
    (OpenInference, OpenLLMetry) and OpenLLMetry's Anthropic spans start a trace of their own when no span
    is current around the call, beside ours. Such a *peer trace* holds none of our spans, and it is a view of
    one trace of ours when each of its runs (outermost steps: spans with a kind of another vocabulary) is the
    view of a distinct step of ours there — the same call (:func:`_same_call`): their times overlap, the same
    process made both, they share a ``gen_ai.response.id`` or ``gen_ai.tool.call.id`` and no id or token count
    both give disagrees; each step of ours is viewed by one run per instrumentation scope — and each step inside
    such a run (a prompt, a parser the peer records as a chain) is the same call as some step of ours there (or
    the instrumentation scope names our step's framework instead of a shared id). Anything else is a run of its
    own, as before: a peer alone, a call only the peer saw, a trace at another time or of another process.

    The fold paths that see traces one at a time keep here the steps of our traces they folded recently
    (:meth:`remember`; at most ``limit`` steps, the oldest forgotten first, and :meth:`forget` by age) and
    compare a peer trace with those and with the traces of ours they still hold (kept here by time as the traces
    change: ``held`` in :meth:`fold_trace`, or :meth:`set_held` for a path that sees them all at once): a peer
    trace is compared with the traces of ours at its time, found by their time windows, not by a walk over every
    trace remembered or held.

    Args:
        limit: steps of ours kept at most (``None``: no limit; 0: none kept).
    """

    __slots__ = ("limit", "_steps", "_size", "_claimed", "_windows", "_holding", "_held_windows")

    def __init__(self, limit: int | None = 10_000) -> None:
        self.limit = limit
        # trace id → (stamp, its steps of ours, its window: (start, end, trace id)), oldest stamp first
        self._steps: OrderedDict[int, tuple[float, list[_Step], tuple[int, int, int]]] = OrderedDict()
        self._size = 0
        self._claimed: OrderedDict[int, set[tuple[Any, int]]] = OrderedDict()  # trace id → (scope, span id) seen
        # the windows by start, so a peer trace is compared only with the traces of ours at its time
        self._windows = _Windows()
        # the traces of ours a path holds: trace id → (spans, steps, window, order)
        self._holding: dict[int, tuple[int, list[_Step], tuple[int, int, int], Any]] = {}
        self._held_windows = _Windows()

    def remember(self, trace_id: int, spans: Iterable[F.FoldSpan], stamp: float = 0.0) -> None:
        """Keep the steps of ours among ``spans`` (a trace, or a run of it) at ``stamp`` (a clock or a count)."""
        steps = our_steps(spans)
        if not steps or self.limit == 0:
            return
        before = self._drop(trace_id)
        if before is not None:
            steps += before
        start, end = _window(steps)
        window = (start, end, trace_id)
        self._steps[trace_id] = (stamp, steps, window)
        self._size += len(steps)
        self._windows.add(window)
        while self.limit is not None and self._size > self.limit:
            self._drop(next(iter(self._steps)))

    def _drop(self, trace_id: int) -> list[_Step] | None:
        """Forget a trace's steps (returned) and which of them were seen."""
        kept = self._steps.pop(trace_id, None)
        self._claimed.pop(trace_id, None)
        if kept is None:
            return None
        _, steps, window = kept
        self._size -= len(steps)
        self._windows.remove(window)
        return steps

    def __len__(self) -> int:
        """Steps of ours kept."""
        return self._size

    def holds(self, trace_id: int) -> bool:
        """Whether steps of ours of that trace are remembered."""
        return trace_id in self._steps

    def forget(self, before: float) -> None:
        """Forget the steps remembered at a stamp below ``before``."""
        steps = self._steps
        while steps:
            trace_id, (stamp, _, _) = next(iter(steps.items()))
            if stamp >= before:
                break
            self._drop(trace_id)

    def fold_trace(self, trace_id: int, spans: Collection[F.FoldSpan], *, ours: bool, foreign: bool, stamp: float,
                   window: float, held: Callable[[], Iterable[tuple[int, Collection[F.FoldSpan], Any]]]) -> bool:
        """For a path folding one trace at a time (``otel-agents fold``, ``ecp collect``), as it folds a trace
        whose last span came at ``stamp`` (a count of spans read, or a clock): remember its steps if it holds a span
        of ours (``ours``); else, if it holds another vocabulary's (``foreign``), whether it is a peer trace, not to
        be folded (:meth:`is_view`), compared with the traces of ours the path still holds and the steps of ours
        remembered from ``window`` before ``stamp`` on. ``held()`` gives the traces of ours the path holds that
        changed (a span read) since it was last called, each as (trace id, spans, order): what is kept of them here
        is brought up to date with those only, and the path no longer holds a trace once it is folded here; a peer
        trace is compared with held traces in ``order`` (the path's order of its traces held)."""
        self._release(trace_id)
        if ours:
            self.forget(stamp - 2 * window)  # what no trace still held can ask for
            self.remember(trace_id, spans, stamp)
        elif foreign:
            self.forget(stamp - window)
            for held_id, held_spans, order in held():
                self._hold(held_id, held_spans, order)
            return self.is_view(spans)
        return False

    def _hold(self, trace_id: int, spans: Collection[F.FoldSpan], order: Any) -> None:
        """Keep (or bring up to date) the steps of a trace of ours the path holds."""
        kept = self._holding.get(trace_id)
        if kept is not None and kept[0] == len(spans):
            steps, window = kept[1], kept[2]
        else:
            if kept is not None:
                self._held_windows.remove(kept[2])
            steps = our_steps(spans)
            window = (*_window(steps), trace_id)
            self._held_windows.add(window)
        self._holding[trace_id] = (len(spans), steps, window, order)

    def _release(self, trace_id: int) -> None:
        kept = self._holding.pop(trace_id, None)
        if kept is not None:
            self._held_windows.remove(kept[2])

    def set_held(self, held: Iterable[tuple[int, Collection[F.FoldSpan]]]) -> None:
        """For a path that sees every trace of ours it holds at once (``ECPFoldingProcessor``): those traces are now
        ``held`` (trace id, spans), in that order; the steps of a trace are found again only when it has more
        spans than when last given, and a trace no longer given is no longer held."""
        given = set()
        for order, (trace_id, spans) in enumerate(held):
            self._hold(trace_id, spans, order)
            given.add(trace_id)
        for trace_id in [t for t in self._holding if t not in given]:
            self._release(trace_id)

    def is_view(self, spans: Iterable[F.FoldSpan]) -> bool:
        """Whether ``spans`` (one trace, none of them ours) are another view of one trace of ours, remembered or
        held by a path (:meth:`fold_trace`, :meth:`set_held`): see the class docstring. When they are, the steps of
        ours they view are marked seen (by their instrumentation scope)."""
        index = {s.span_id: s for s in spans}
        mine = [s for s in index.values() if s.semantic_kind is not None]
        if not mine:
            return False
        tops = {s.span_id for s in mine if _semantic_above(s, index) is None}  # the peer trace's runs
        starts = [s.start_time for s in mine if s.start_time and s.end_time]
        ends = [s.end_time for s in mine if s.start_time and s.end_time]
        start, end = (min(starts), max(ends)) if len(starts) == len(mine) else (None, None)  # else: at any time
        # the traces of ours whose window overlaps the peer trace's (any, when its time is unknown): remembered
        # ones by start, then those held by a path in its order
        near = self._windows.sorted if start is None else self._windows.overlapping(start, end)
        candidates = [(t, self._steps[t][1]) for _, _, t in near]
        if self._holding:
            holding = self._holding
            near = self._held_windows.sorted if start is None else self._held_windows.overlapping(start, end)
            kept = sorted((holding[t] for _, _, t in near), key=operator.itemgetter(3))
            candidates += [(w[2], steps) for _, steps, w, _ in kept]
        for trace_id, steps in candidates:
            claimed = self._claimed.get(trace_id, ())
            taken: set[tuple[Any, int]] = set()
            for span in mine:
                scope = span.scope.name if span.scope is not None else None
                framework = scope_framework(scope)
                like = _LIKE.get(span.semantic_kind, (span.semantic_kind,))
                if span.span_id in tops:  # a run of the peer's views one step of ours, which no other run views
                    match, best = None, 0
                    for o in steps:
                        if o[_KIND] in like and (scope, o[_ID]) not in claimed and (scope, o[_ID]) not in taken:
                            how = _same_call(span, o, framework)
                            if how > best:  # a shared id first
                                match, best = o, how
                    if best < _TOP_MATCH:
                        match = None
                    if match is not None:
                        taken.add((scope, match[_ID]))
                else:  # a step inside it (a prompt, a parser the peer records as a chain) need only match one
                    match = next((o for o in steps if o[_KIND] in like and _same_call(span, o, framework)), None)
                if match is None:
                    break
            else:
                self._claimed[trace_id] = taken.union(claimed)
                self._claimed.move_to_end(trace_id)
                while self.limit and len(self._claimed) > self.limit:  # bounded as the steps are
                    self._claimed.popitem(last=False)
                return True
        return False


def _semantic_above(span: F.FoldSpan, index: dict[int, F.FoldSpan]) -> F.FoldSpan | None:
    """The nearest semantic ancestor of ``span`` among ``index`` (span id → span), or ``None`` (stops on a cycle)."""
    seen = {span.span_id}
    cur = index.get(span.parent_id) if span.parent_id is not None else None
    while cur is not None and cur.span_id not in seen:
        if cur.semantic_kind is not None:
            return cur
        seen.add(cur.span_id)
        cur = index.get(cur.parent_id) if cur.parent_id is not None else None
    return None


class RunTree:
    """The spans of one run (as :class:`~._facts.FoldSpan` copies), their parent and children
    links, and the per-span facts the envelope reads more than once (each computed once).

    ``children[None]`` are the run's top spans: the root, or, for a run whose
    root never ended, the spans whose parent is not in the run. Children lists
    are in start order.
    """

    def __init__(self, run: Run):
        fold_span = F.FoldSpan
        self.spans = spans = [s if type(s) is fold_span else fold_span(s) for s in run.spans]  # in start order
        self.by_id = by_id = {s.span_id: s for s in spans}
        self.parent: dict[int, F.FoldSpan | None] = {}
        self.children: dict[int | None, list[F.FoldSpan]] = {}
        # span id → its 16 hex digits (see :meth:`hex`): ``logs`` writes each id up to twice, tool calls and agents again
        self.hex_ids: dict[int, str] = {}
        parents, children, hex_ids = self.parent, self.children, self.hex_ids
        foreign = a2a = mcp = False
        for span in spans:
            span_id = span.span_id
            hex_ids[span_id] = "%016x" % span_id  # F.span_id_hex, without a call a span
            p = span.parent_id
            parent = by_id.get(p) if p is not None and p != span_id else None
            parents[span_id] = parent
            key = parent.span_id if parent is not None else None
            siblings = children.get(key)
            if siblings is None:
                children[key] = [span]
            else:
                siblings.append(span)
            if span.foreign:
                foreign = True
            protocol = span.protocol
            if protocol is not None:
                if protocol == "a2a":
                    a2a = True
                else:
                    mcp = True
        if foreign:  # the same rules on every path: the folding processor's runs never went through runs_of_trace
            drop_sibling_views(spans)
            self._drop_duplicate_views()
        self._a2a = a2a  # A2A agent calls (servers folded with their callers)
        self._mcp = mcp  # MCP tool calls
        self._agent_above: dict[int, F.FoldSpan | None] = {}  # span id → nearest agent strictly above
        self._agent_spans: list[F.FoldSpan] | None = None
        self._names: dict[F.FoldSpan, str] = {}
        self._line_names: dict[F.FoldSpan, str] = {}
        self._delegators: dict[F.FoldSpan, F.FoldSpan | None] = {}
        self._arguments: dict[F.FoldSpan, dict[str, Any]] = {}
        self._requested_args: dict[str, Any] | None = None
        self._mcp_calls: dict[str, list[F.FoldSpan]] | None = None  # MCP tool calls by call id
        self._usage: dict[F.FoldSpan, tuple[int | None, int | None, int | None]] = {}

    def _drop_duplicate_views(self) -> None:
        """Another instrumentation's view of a step we already have is not a step of its own: a
        foreign semantic span whose nearest semantic ancestor is one of our steps (model, tool,
        skill, retriever, embedding: e.g. an OTel GenAI ``chat`` span of the provider client under our
        framework's model span), or one of our agents or chains of the same kind and name (PydanticAI's
        own ``invoke_agent`` span under ours), is folded as a plain span (``semantic_kind`` cleared).
        So is a foreign model (embedding) span whose nearest semantic ancestor is a foreign model (embedding)
        span: a request to a model makes no other inside it, so it is a second view of that request (the
        ``anthropic`` SDK's own ``anthropic.messages.create`` span under an OTel GenAI or OpenInference one,
        OpenInference's openai ``ChatCompletion`` under its LangChain ``ChatOpenAI``); the outer one is the step.
        Other foreign spans under a foreign span, or under an agent or chain of ours that is not the same
        step, are kept: a mixed trace folds as one run."""
        for span in self.spans:
            if not span.foreign:
                continue
            seen = {span.span_id}
            cur = self.parent.get(span.span_id)
            while cur is not None and cur.semantic_kind is None and cur.span_id not in seen:
                seen.add(cur.span_id)
                cur = self.parent.get(cur.span_id)
            if cur is None or cur.semantic_kind is None:
                continue
            if cur.foreign:
                if span.semantic_kind in _ONE_REQUEST_KINDS and cur.semantic_kind == span.semantic_kind:
                    span.semantic_kind = None  # another view of the same request (kept foreign: not ours)
                    _fill_usage(cur, span)
                continue
            if cur.semantic_kind in _STEP_KINDS or (
                    cur.semantic_kind == span.semantic_kind and F.display_name(cur) == F.display_name(span)):
                span.semantic_kind = None
                span.foreign = False

    def in_returned_tool_call(self, span: F.FoldSpan) -> bool:
        """Whether ``span`` ended inside a tool call of the run that then returned (a run delegated through a
        tool, an agent or a team used as a tool, that ended and gave the caller its result: how that run stopped
        is its own). Not inside a call that failed or was cancelled (it ended with what is inside it), nor one
        that ended first (a handoff that returns at once, the agent it hands off to running on under it). Stops
        on a cycle."""
        seen = {span.span_id}
        cur = self.parent.get(span.span_id)
        while cur is not None and cur.span_id not in seen:
            if F.is_tool_call(cur) and not cur.error and cur.end_time and span.end_time and \
                    cur.end_time >= span.end_time:
                return True
            seen.add(cur.span_id)
            cur = self.parent.get(cur.span_id)
        return False

    def nearest_agent(self, span: F.FoldSpan) -> F.FoldSpan | None:
        """The nearest enclosing agent span inside the run, or ``None`` (stops on a cycle).

        Memoised along the way up, so asking for every span of a deep tree costs linear time."""
        above = self._agent_above
        if span.span_id in above:
            return above[span.span_id]
        path = [span]
        seen = {span.span_id}
        found: F.FoldSpan | None = None
        cur = self.parent.get(span.span_id)
        while cur is not None and cur.span_id not in seen:
            if cur.semantic_kind == "agent":
                found = cur
                break
            if cur.span_id in above:
                found = above[cur.span_id]
                break
            path.append(cur)
            seen.add(cur.span_id)
            cur = self.parent.get(cur.span_id)
        for s in path:
            above[s.span_id] = found
        return found

    def delegator(self, span: F.FoldSpan) -> F.FoldSpan | None:
        """The agent that delegated to agent ``span``: the agent named by its
        ``otel_agents.agent.parent`` (a handoff: the agent that handed off, whose
        span ended before this one started, e.g. LlamaIndex ``AgentWorkflow``) — the
        latest such agent of the run that started before it — else its nearest
        enclosing agent. (Memoised: the agent list and its evidence line both ask.)"""
        if span in self._delegators:
            return self._delegators[span]
        found = self._delegators[span] = self._find_delegator(span)
        return found

    def _find_delegator(self, span: F.FoldSpan) -> F.FoldSpan | None:
        named = F.parent_agent_name(span)
        if named is not None:
            found = None
            for other in self._agents():
                if other.start_time is not None and span.start_time is not None and \
                        other.start_time >= span.start_time:
                    break
                if other is not span and self.name(other) == named:
                    found = other
            if found is not None:
                return found
        found = self.nearest_agent(span)
        # An A2A server's span of a call is the caller's span of that call (named by the caller's framework)
        return self.served_call(found) or found if found is not None else None

    def _agents(self) -> list[F.FoldSpan]:
        if self._agent_spans is None:
            self._agent_spans = [s for s in self.spans if s.semantic_kind == "agent"]  # start order
        return self._agent_spans

    def hex(self, span_id: int) -> str:
        """``span_id`` as the 16 hex digits the envelope writes: formatted once per span of the run (a parent
        outside it is formatted here)."""
        return self.hex_ids.get(span_id) or F.span_id_hex(span_id)

    def name(self, span: F.FoldSpan) -> str:
        """:func:`~._facts.display_name` of the span."""
        name = self._names.get(span)
        if name is None:
            name = self._names[span] = F.display_name(span)
        return name

    def line_name(self, span: F.FoldSpan) -> str:
        """:meth:`name` on one line, cut at 120 characters (:func:`._facts.one_line`): as evidence lines
        write it."""
        name = self._line_names.get(span)
        if name is None:
            name = self._line_names[span] = F.one_line(self.name(span), _LINE_NAME_LIMIT)
        return name

    def arguments(self, span: F.FoldSpan) -> dict[str, Any]:
        """:func:`~._facts.tool_arguments` of the span (shared: do not modify). For a foreign tool span
        that recorded no arguments object (OpenInference's LangChain tool spans keep only the tool's
        input text), the arguments the model requested under the same call id, when a model span
        of the run recorded them."""
        args = self._arguments.get(span)
        if args is None:
            args = F.tool_arguments(span)
            if span.foreign and (not args or list(args) == ["input"]):
                call_id = F.tool_call_id(span)
                requested = self._requested().get(call_id) if call_id is not None else None
                if isinstance(requested, dict):
                    args = requested
            self._arguments[span] = args
        return args

    def requested_names(self, span: F.FoldSpan) -> list[str]:
        """The tool calls a model span requested (:func:`~._facts.requested_call_parts`), in order, by name; a call
        an MCP client ran under the MCP tool's own name is named so — the call's one name, that of its ``tool``
        line and ``tool_calls[].name``: the Claude Agent SDK's SDK MCP tool ``lookup_order``, which the model
        requests as ``mcp__support__lookup_order``. That call is the run's MCP ``tools/call`` tool span with the
        requested call id, of the same agent, the first to start after the model span (call ids repeat across
        agents and turns); every other call keeps the name the model requested."""
        if not self._mcp:  # the usual case: no MCP tool call in the run
            return F.requested_calls(span)
        calls = F.requested_call_parts(span)
        if not calls:
            return []
        if self._mcp_calls is None:  # built once, when a model span first requested a call
            self._mcp_calls = {}
            for s in self.spans:
                if F.is_mcp_tool_call(s):
                    call_id = F.tool_call_id(s)
                    if call_id is not None:
                        self._mcp_calls.setdefault(call_id, []).append(s)
        agent = self.nearest_agent(span)
        names = []
        for name, call_id in calls:
            ran = next((s for s in self._mcp_calls.get(call_id, ()) if call_id is not None
                        and s.start_time >= span.start_time and self.nearest_agent(s) is agent), None)
            names.append(self.name(ran) if ran is not None else name)
        return names

    def _requested(self) -> dict[str, Any]:
        """Arguments of every tool call the run's model spans requested, by call id (built once)."""
        if self._requested_args is None:
            self._requested_args = {}
            for span in self.spans:
                if span.semantic_kind == "model":
                    self._requested_args.update(F.requested_arguments(span))
        return self._requested_args

    def final_answer(self) -> str | None:
        """The text of the run's last model response that requested no tool call (its answer), or
        ``None``."""
        for span in reversed(self.spans):
            if span.semantic_kind == "model" and not F.requested_calls(span):
                return F.model_answer(span)
        return None

    def usage(self, span: F.FoldSpan) -> tuple[int | None, int | None, int | None]:
        """:func:`~._facts.usage` of the span."""
        tokens = self._usage.get(span)
        if tokens is None:
            tokens = self._usage[span] = F.usage(span)
        return tokens

    def served_call(self, span: F.FoldSpan) -> F.FoldSpan | None:
        """For the server's span of a call served by another process — an MCP server's
        ``tools/call`` tool span, an A2A server's ``SendMessage`` agent span — the client's span of
        the same call (its nearest semantic ancestor, of the same protocol and kind), else ``None``.
        The call is the client's; the server's span only serves it (its children nest under the call).
        A CLIENT span is a call of its own, never the serving side of another (a remote agent that calls
        another one over A2A, an MCP server's tool that calls another server's tool: a chain of services),
        and a SERVER span serves no other server's span."""
        if span.protocol is None:  # the usual case: neither an MCP tool call nor an A2A agent call
            return None
        same = F.is_mcp_tool_call if F.is_mcp_tool_call(span) else F.is_a2a_agent_call if F.is_a2a_agent_call(span) \
            else None
        if same is None or span.span_kind is SpanKind.CLIENT:
            return None
        seen = {span.span_id}
        cur = self.parent.get(span.span_id)
        while cur is not None and cur.span_id not in seen:
            if cur.semantic_kind is not None:
                return cur if same(cur) and cur.span_kind is not SpanKind.SERVER else None
            seen.add(cur.span_id)
            cur = self.parent.get(cur.span_id)
        return None

    def remote_agent(self, span: F.FoldSpan) -> str | None:
        """The name of the remote agent (A2A, its Agent Card's name) whose run ``span`` is part of, when
        the server's spans are folded with the caller's: the nearest served A2A agent span above it."""
        if not self._a2a:
            return None
        seen = {span.span_id}
        cur = self.parent.get(span.span_id)
        while cur is not None and cur.span_id not in seen:
            if F.is_a2a_agent_call(cur) and self.served_call(cur) is not None:
                return self.name(cur)
            seen.add(cur.span_id)
            cur = self.parent.get(cur.span_id)
        return None


def _fill_usage(step: F.FoldSpan, view: F.FoldSpan) -> None:
    """The token counts of ``step`` that only ``view``, a second view of the same request, recorded (OpenInference's
    LangChain ``LLM`` span gives no input count, its openai one inside does): filled in from ``view`` (memoised
    on ``step``, as :func:`~._facts.usage` keeps them), the total then their sum when both are known."""
    inp, out, total = F.usage(step)
    if inp is not None and out is not None:
        return
    other = F.usage(view)
    inp = inp if inp is not None else other[0]
    out = out if out is not None else other[1]
    step.tokens = (inp, out, inp + out if inp is not None and out is not None else
                   total if total is not None else other[2])
