"""The contract kit: the cross-cutting cases X-1 … X-7 (``../shared/cases/cross-cutting.md``), the
hostile-input rules of issue 35 (X-8 … X-10), what real programs do to a run in flight (X-11 … X-13) and
lifecycle and control flow the others do not reach (X-14: re-instrumentation with another provider, a tool
raising ``StopIteration``/``CancelledError``, threads and tasks at once; X-15: forking: a tool that forks, whole runs
in a forked worker, a child unwinding through the parent's spans), asserted the
same way for every instrumentor.

A framework's test module plugs in by subclassing :class:`Scenario` and
:class:`ContractSuite`::

    class LangChainScenario(Scenario):
        ...

    class TestLangChainContract(ContractSuite):
        scenario_cls = LangChainScenario

A scenario describes one small agent run over a fake model that makes one tool
call and then answers. Its tool must call :meth:`Scenario.probe` (which records
the span that is current inside the tool) and put ``marker`` into its result;
the prompt/task text/backstory must contain ``marker`` too (X-7). Its tool returns
``scenario.result(its own result)``: X-8 makes that a hostile value; X-9 and X-10 make ``probe``
raise.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import gc
import json
import logging
import os
import re
import signal
import sys
import threading
import time
import types
from typing import Any, Callable, ClassVar

import pytest
import wrapt
from opentelemetry import trace

from otel_agents import current_agent_span
from otel_agents._spans import SemanticSpan
from otel_agents._spans.guard import reset_reported_sites
from otel_agents._spans.streams import WATCHDOG
from otel_agents._spans.finalisers import settle
from tests import forking
from tests.hostile import (ArrayLike, EverythingRaises, HostileStr, RowsHolder, SerializerRaises, Spy,
                           StrRaises, UnboundProxy, UnprintableError)
from tests.spans import SnapshotExporter, SpanSnapshot, ancestors, nearest, tree

_SHA256 = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])")  # a SHA-256 in hex
MARKER = "ZX-MARKER-7Q"
SECRET_MARKER = "sk-proj-ZqKit0Marker0Secret0x9"  # an OpenAI key shape: redacted wherever it goes
SOURCE_SECRET = "sk-proj-ZqKit0Source0Line0Secret"  # written in the failing source line below
_OWN = object()


def _raise_from_tool(error: BaseException) -> None:
    raise error  # the stack trace quotes this line, key included: sk-proj-ZqKit0Source0Line0Secret


_ABSENT = object()  # an attribute X-4 found absent (inherited), deleted again at its end
_CALLABLE = (types.FunctionType, types.BuiltinFunctionType, type, staticmethod, classmethod, property,
             wrapt.ObjectProxy)
# exact types decided without isinstance() (six times faster over the ~140,000 values of .venv's modules)
_CALLABLE_EXACT = frozenset({types.FunctionType, types.BuiltinFunctionType, staticmethod, classmethod, property, type})
_DATA_EXACT = frozenset({str, int, float, bool, type(None), dict, list, tuple, set, frozenset, bytes, types.ModuleType})


def _is_callable(value: Any) -> bool:
    kind = type(value)
    return kind in _CALLABLE_EXACT or (kind not in _DATA_EXACT and isinstance(value, _CALLABLE))


def _callables() -> dict[tuple[str, ...], Any]:
    """Every function, class and descriptor defined in a loaded module, at module level and on its classes, by
    ``(module, [class,] name)`` (the objects themselves, compared by identity)."""
    found: dict[tuple[str, ...], Any] = {}
    for name, module in list(sys.modules.items()):
        for key, value in list(getattr(module, "__dict__", {}).items()):
            if not _is_callable(value):
                continue
            found[(name, key)] = value
            if isinstance(value, type) and value.__module__ == name:
                for attr, member in list(vars(value).items()):
                    if _is_callable(member):
                        found[(name, key, attr)] = member
    return found


class Scenario:
    """One framework's standard run. Subclasses implement the ``run*`` methods.

    Attributes:
        instrumentor_cls: the framework's ``BaseInstrumentor`` subclass.
        kinds: semantic kinds every complete run must produce.
        x3_runs: how many runs X-3 makes: 48, each of its four modes (success, failure, stream consumed,
            stream abandoned) 12 times, and with a scenario's usage shapes (CrewAI cycles three) every mode
            meets every shape. A leak leaves an entry (or a live unended span) per leaking run, so one run of
            a mode shows it: measured by breaking the bookkeeping, each of these failed X-3 at 4 runs as at
            1,000 — the span index's pop on end (manual), ``SpanRegistry.pop``/``pop_with_extra`` (LangChain,
            PydanticAI, LlamaIndex, OpenAI Agents), PydanticAI's tracker forgetting only abandoned or only
            failed runs, Google ADK's invocation pop after a failed run. The only cap on such a map
            (LlamaIndex's ``_MAX_OPEN``, 10,000) is far above 48. 1,000 runs cost ~3 CPU-minutes a suite.
        streams: whether the framework has a streaming entry point to abandon.
        cancel_stops_run: whether cancelling the task awaiting ``arun`` stops the run (X-11).
    """

    instrumentor_cls: ClassVar[type]
    kinds: ClassVar[tuple[str, ...]] = ("agent", "model", "tool")
    x3_runs: ClassVar[int] = 48
    streams: ClassVar[bool] = True
    streams_model: ClassVar[bool] = False
    """Whether a consumed :meth:`run_stream` streams the model's responses (X-16 then expects them timed)."""
    plain_run_streams_model: ClassVar[bool] = False
    """Whether :meth:`run` streams the model's responses all the same (the framework's own choice)."""
    cancel_stops_run: ClassVar[bool] = True
    hangs_on: ClassVar[tuple[type[BaseException], ...]] = ()
    """Exceptions a tool may raise on which the framework itself, uninstrumented, waits forever (X-14 skips them)."""
    """Whether cancelling the task that awaits :meth:`arun` stops the run (not where ``arun`` runs it in a worker
    thread: the run goes on there to its end, X-11 then checks only that nothing says it failed)."""
    ids: ClassVar[tuple[str, ...]] = ()
    """The run ids the framework takes from its caller (``"session"``, ``"user"``): :meth:`run_with_ids` (X-12)."""

    def __init__(self) -> None:
        self.probes: list[tuple[str, trace.Span]] = []
        self.agent_spans: list[tuple[str, SemanticSpan | None]] = []  # otel_agents.current_agent_span() in the tool
        self._lock = threading.Lock()
        self.tool_error: Callable[[], BaseException] | None = None  # probe() raises what this makes
        self.tool_value: Any = _OWN  # result() returns this instead of the tool's own result
        self.tool_hook: Callable[[], None] | None = None  # probe() calls it first (X-11 … X-13: what a tool does)
        self.results = 0

    # Called by the scenario's tool body.
    def probe(self, tag: str = "") -> None:
        agent = current_agent_span()
        with self._lock:
            self.probes.append((tag, trace.get_current_span()))
            self.agent_spans.append((tag, agent))
        if self.tool_hook is not None:
            self.tool_hook()
        if self.tool_error is not None:
            _raise_from_tool(self.tool_error())

    def result(self, value: Any) -> Any:
        """What the scenario's tool returns: its own ``value``, or the hostile value a case set."""
        self.results += 1
        return value if self.tool_value is _OWN else self.tool_value

    # --- to implement -----------------------------------------------------------
    def run(self, marker: str = "", tag: str = "") -> Any:
        """One complete sync run; the tool calls ``self.probe(tag)``."""
        raise NotImplementedError

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        """One complete async run."""
        raise NotImplementedError

    def run_failing(self) -> None:
        """A run that fails with the user's exception; must raise it."""
        raise NotImplementedError

    def run_with_ids(self, session: Any = None, user: Any = None) -> Any:
        """One complete sync run given ``session`` and ``user`` as its session and user ids, the framework's own
        way (``None``: not given); only the ids named in :attr:`ids`."""
        raise NotImplementedError

    def run_stream(self, consume: bool) -> None:
        """Stream a run; consume it fully, or take one chunk and abandon it."""
        raise NotImplementedError

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make one of our attribute extractors raise (X-5)."""
        raise NotImplementedError

    def foreign_patch_target(self) -> tuple[Any, str]:
        """``(owner, attribute)`` of a function on the run's path that another
        instrumentation could wrap after us (X-4)."""
        raise NotImplementedError

    def open_entries(self, instrumentor: Any) -> int:
        """How many spans the instrumentor's internal maps hold now (X-3)."""
        return 0

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        """Extra per-framework checks on one run's spans (optional)."""

    def run_unwinding(self) -> Any:
        """One complete sync run whose tool calls :meth:`probe` on the thread whose stack holds the run's open spans
        (X-15: a forked child is the forking thread alone, and it unwinds only through that thread's frames). By
        default :meth:`run`; a framework that runs a sync tool in a worker thread (``asyncio.to_thread``, a thread
        pool) overrides it with a run whose tool is a coroutine function, awaited on the event loop's thread."""
        return self.run()

    def after_fork_in_child(self) -> None:
        """What a program must do in a child forked after the framework ran in the parent, before the
        framework's first run there (X-15): set up again the framework's own state that does not survive a
        fork (README, "Forking"). Nothing by default; a framework that needs it says why."""


_INHERITED_LOOPS: list[Any] = []


def _keep_inherited_loop() -> None:
    """In a forked child: keep the thread's default event loop inherited from the parent from ever being closed
    (collected once ``asyncio.run`` or a framework replaces it). Its epoll instance is shared with the parent's:
    closing it in the child unregisters the parent loop's wake-up socket there, and the parent's next run that
    waits for a thread (``asyncio.to_thread``) waits forever."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            _INHERITED_LOOPS.append(asyncio.get_event_loop_policy().get_event_loop())
        except RuntimeError:
            pass


def _detach_running_loop() -> None:
    """In a child forked on an event loop's thread, in the middle of a run: the loop that thread runs becomes the
    child's own. It is made the running loop again (Python 3.11's ``get_running_loop()`` says there is none in a
    forked child: it checks the pid), and given a selector (epoll instance), a wake-up socket pair and a default
    thread pool of its own: the inherited epoll instance is the parent's (the child's loop unregistering its wake-up
    socket there, as it closes, leaves the parent's loop waiting for ever for a thread's result), a byte the child
    reads off the shared socket pair is a wake-up the parent misses, and the pool's workers are not in the child."""
    import selectors
    import sys

    frame: Any = sys._getframe()
    while frame is not None and not (frame.f_code.co_name == "_run_once"
                                     and isinstance(frame.f_locals.get("self"), asyncio.BaseEventLoop)):
        frame = frame.f_back
    if frame is None:  # not on an event loop's thread
        return
    loop = frame.f_locals["self"]
    asyncio.events._set_running_loop(loop)
    inherited = getattr(loop, "_selector", None)
    ssock = getattr(loop, "_ssock", None)
    if inherited is None or ssock is None:  # not a selector event loop
        return
    own = selectors.DefaultSelector()
    for key in list(inherited.get_map().values()):
        if key.fd != ssock.fileno():
            own.register(key.fileobj, key.events, key.data)
    loop._selector = own
    loop._close_self_pipe()  # the child's copies only (not registered in its own selector)
    loop._make_self_pipe()
    loop._default_executor = None


class _EndTheProcess:
    """A work item that ends the process (see :func:`_end_pool_worker_after_unwinding`)."""

    @staticmethod
    def run() -> None:
        os._exit(0)


def _end_pool_worker_after_unwinding() -> None:
    """In a child forked in a pool's worker thread (the child is that thread alone): once the work item it runs has
    unwound, the worker's next work item ends the process, rather than the child waiting in the pool's queue for its
    alarm. (Not the pool's shutdown signal: the worker thread would end, but not the process while a thread some
    library started at the fork lives, a ``BatchSpanProcessor``'s worker, say.) A ``concurrent.futures`` worker, or
    an AnyIO worker thread (``anyio.to_thread``: MCP 2's FastMCP runs a sync tool there)."""
    import queue
    import sys

    frame: Any = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "_worker" and "work_queue" in frame.f_locals:  # concurrent.futures
            frame.f_locals["work_queue"].put(_EndTheProcess())
            return
        worker = frame.f_locals.get("self")
        if frame.f_code.co_name == "run" and type(worker).__module__.startswith("anyio.") \
                and isinstance(getattr(worker, "queue", None), queue.Queue):
            # AnyIO's work item: (context, function, arguments, future, cancel scope)
            item = (contextvars.copy_context(), os._exit, (0,), concurrent.futures.Future(), None)
            try:
                worker.queue.put_nowait(item)
            except queue.Full:  # work the parent had queued for it: the alarm ends the child
                pass
            return
        frame = frame.f_back


def _end_when_the_loop_idles() -> None:
    """In a child forked on an event loop's thread (after :func:`_detach_running_loop`): once that loop has nothing
    left to run (no ready callback and no timer: asyncio then waits for I/O with no timeout) and no I/O comes within
    a second, the child ends, rather than wait for its alarm. Its unwinding is over by then: the child has no other
    thread to wake the loop, and everything it exports it exports as it runs (an idle loop runs nothing)."""
    loop = asyncio.events._get_running_loop()
    selector = getattr(loop, "_selector", None)
    if selector is None:  # not on an event loop's thread, or not a selector event loop
        return
    select = selector.select

    def select_or_end(timeout: float | None = None) -> Any:
        if timeout is not None:
            return select(timeout)
        ready = select(1.0)
        if not ready:
            os._exit(0)
        return ready

    selector.select = select_or_end


def _run_in_context(fn: Any, *args: Any) -> Any:
    return contextvars.copy_context().run(fn, *args)


class ContractSuite:
    """X-1 … X-7 for one scenario. Subclass with ``scenario_cls`` set."""

    scenario_cls: ClassVar[type[Scenario]]
    reinstrumented_kinds: ClassVar[tuple[str, ...] | None] = None
    """The kinds whose spans X-14 expects to follow a re-instrumentation to its new provider (``None``: all)."""

    @pytest.fixture(autouse=True)
    def young_heap(self) -> Any:
        """The objects that exist before the test (every framework's modules, earlier tests' leftovers: ~700k in
        a worker of the whole suite) are frozen (``gc.freeze``) while it runs: the kit's ``gc.collect()`` and its
        ``gc.get_objects()`` scan for live semantic spans then see only what the test made (what it checks),
        in milliseconds instead of ~0.5 s each. Unfrozen after the test (collected as before)."""
        gc.freeze()
        yield
        gc.unfreeze()

    @pytest.fixture
    def scenario(self) -> Scenario:
        return self.scenario_cls()

    @pytest.fixture
    def instrumented(self, scenario: Scenario, provider: Any) -> Any:
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        yield inst
        inst.uninstrument()

    # -- helpers ---------------------------------------------------------------
    @staticmethod
    def _assert_complete_traces(exporter: SnapshotExporter, scenario: Scenario, n: int) -> dict[int, list[SpanSnapshot]]:
        spans = exporter.semantic()
        traces: dict[int, list[SpanSnapshot]] = {}
        for s in spans:
            traces.setdefault(s.trace_id, []).append(s)
        assert len(traces) == n, f"expected {n} traces, got {len(traces)}:\n{tree(spans)}"
        for trace_spans in traces.values():
            ids = {s.span_id for s in trace_spans}
            roots = [s for s in trace_spans if s.parent_id not in ids]
            assert len(roots) == 1, f"one root per run expected:\n{tree(trace_spans)}"
            kinds = {s.semantic_kind for s in trace_spans}
            for kind in scenario.kinds:
                assert kind in kinds, f"no {kind} span in run:\n{tree(trace_spans)}"
            for s in trace_spans:
                if s.semantic_kind == "tool":
                    assert any(a.semantic_kind == "agent" for a in ancestors(s, trace_spans)), tree(trace_spans)
            scenario.check_run(trace_spans)
        return traces

    def _assert_probes_in_own_trace(self, scenario: Scenario, traces: dict[int, list[SpanSnapshot]]) -> None:
        assert scenario.probes, "the scenario's tool never called probe()"
        tool_spans = {s.span_id: s for spans in traces.values() for s in spans if s.semantic_kind == "tool"}
        by_tag: dict[str, set[int]] = {}
        for tag, span in scenario.probes:
            ctx = span.get_span_context()
            assert ctx.is_valid, "inside the tool no span was current"
            assert ctx.span_id in tool_spans, "inside the tool, the current span is not our tool span"
            by_tag.setdefault(tag, set()).add(ctx.trace_id)
        for tag, trace_ids in by_tag.items():
            assert len(trace_ids) == 1, f"run {tag!r}: tool spans in several traces"
        assert len({next(iter(t)) for t in by_tag.values()}) == len(by_tag), "two runs share a trace"
        if "agent" not in scenario.kinds:
            return
        # X-1's helper: current_agent_span() inside each run's tool is that run's own agent span (the tool's
        # nearest agent ancestor), never another concurrent run's.
        spans_of = {s.trace_id: spans for spans in traces.values() for s in spans}
        assert len(scenario.agent_spans) == len(scenario.probes)
        for (tag, span), (_, agent) in zip(scenario.probes, scenario.agent_spans):
            ctx = span.get_span_context()
            own = nearest(tool_spans[ctx.span_id], spans_of[ctx.trace_id], "agent")
            assert agent is not None, f"run {tag!r}: current_agent_span() is None inside its tool"
            got = agent.span.get_span_context()
            assert (got.trace_id, got.span_id) == (own.trace_id, own.span_id), \
                f"run {tag!r}: current_agent_span() is {agent.name!r} of another run or level"

    # -- X-1 ----------------------------------------------------------------------
    def test_x1_concurrent_runs_gather(self, scenario: Scenario, instrumented: Any, exporter: SnapshotExporter) -> None:
        """X-1: 20 runs at once with asyncio.gather stay 20 separate, complete traces; inside each run's tool the
        current span is its tool span and current_agent_span() its own agent span."""

        async def main() -> None:
            await asyncio.gather(*(scenario.arun(tag=f"run{i}") for i in range(20)))

        asyncio.run(main())
        traces = self._assert_complete_traces(exporter, scenario, 20)
        self._assert_probes_in_own_trace(scenario, traces)

    def test_x1_concurrent_runs_threads(self, scenario: Scenario, instrumented: Any, exporter: SnapshotExporter) -> None:
        """X-1: 20 runs at once in a thread pool (contexts copied) stay 20 separate traces; inside each run's tool
        current_agent_span() is its own agent span."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            futures = [pool.submit(_run_in_context, scenario.run, "", f"run{i}") for i in range(20)]
            for f in futures:
                f.result()
        traces = self._assert_complete_traces(exporter, scenario, 20)
        self._assert_probes_in_own_trace(scenario, traces)

    # -- X-2 ----------------------------------------------------------------------
    def test_x2_nothing_left_current(self, scenario: Scenario, instrumented: Any, exporter: SnapshotExporter,
                                     app_tracer: Any) -> None:
        """X-2: after sync, async, failed and abandoned-stream runs no span is current,
        three runs give three root traces, and an application span afterwards is a root."""

        def current_is_invalid() -> bool:
            return not trace.get_current_span().get_span_context().is_valid

        for _ in range(3):
            scenario.run()
            assert current_is_invalid()
        self._assert_complete_traces(exporter, scenario, 3)
        asyncio.run(scenario.arun())
        assert current_is_invalid()
        with pytest.raises(Exception):
            scenario.run_failing()
        assert current_is_invalid()
        if scenario.streams:
            scenario.run_stream(consume=False)
            assert current_is_invalid()
        with app_tracer.start_as_current_span("app-after") as app:
            pass
        snap = next(s for s in exporter.spans if s.name == "app-after")
        assert snap.parent_id is None
        assert not any(s.trace_id == snap.trace_id for s in exporter.semantic())
        assert app.get_span_context().trace_id == snap.trace_id

    # -- X-3 ----------------------------------------------------------------------
    def test_x3_bookkeeping_returns_to_zero(self, scenario: Scenario, instrumented: Any,
                                            exporter: SnapshotExporter) -> None:
        """X-3: after many mixed runs every open-span map is empty and no semantic span object is alive."""
        gc.collect()
        settle()  # a collected stream's span ends in the finaliser thread
        watched = WATCHDOG.pending()  # the watchdog is process-wide: streams an earlier test still holds
        for i in range(scenario.x3_runs):
            mode = i % 4
            if mode == 0:
                scenario.run()
            elif mode == 1:
                with pytest.raises(Exception):
                    scenario.run_failing()
            elif mode == 2 and scenario.streams:
                scenario.run_stream(consume=True)
            elif mode == 3 and scenario.streams:
                scenario.run_stream(consume=False)
            else:
                scenario.run()
            if i % 50 == 0:
                exporter.clear()
        gc.collect()
        settle()  # a collected stream's span ends in the finaliser thread
        assert scenario.open_entries(instrumented) == 0
        alive = [o for o in gc.get_objects() if isinstance(o, SemanticSpan) and not o.ended]
        assert alive == [], f"{len(alive)} semantic spans never ended"
        assert WATCHDOG.pending() <= watched, f"{WATCHDOG.pending() - watched} streams of these runs still watched"

    # -- X-4 ----------------------------------------------------------------------
    def test_x4_uninstrument_only_ours(self, scenario: Scenario, provider: Any, exporter: SnapshotExporter) -> None:
        """X-4: instrument twice = once; uninstrument stops our spans and keeps a later wrapper working."""
        owner, attr = scenario.foreign_patch_target()
        pristine = getattr(owner, "__dict__", {}).get(attr, _ABSENT)  # put back at the end: no proxy of ours left
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        inst.instrument(tracer_provider=provider)
        scenario.run()
        once = [s.name for s in exporter.semantic()]
        assert once, "no spans while instrumented"
        assert len(once) == len(set((s.span_id for s in exporter.semantic())))
        counts = {k: once.count(k) for k in set(once)}
        exporter.clear()
        scenario.run()
        assert {k: [s.name for s in exporter.semantic()].count(k) for k in counts} == counts

        calls: list[int] = []

        def foreign(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            calls.append(1)
            return wrapped(*args, **kwargs)

        wrapt.wrap_function_wrapper(owner, attr, foreign)
        try:
            inst.uninstrument()
            exporter.clear()
            scenario.run()
            assert exporter.semantic() == [], "spans after uninstrument()"
            assert calls, "the other instrumentation's wrapper stopped working"
        finally:  # the attribute as it was before instrument(), not our (now inert) proxy under the foreign one
            if pristine is _ABSENT:
                delattr(owner, attr)
            else:
                setattr(owner, attr, pristine)

    def test_x4_uninstrument_puts_back_every_original(self, scenario: Scenario, provider: Any) -> None:
        """X-4: after ``uninstrument()`` every function, class and descriptor of every module loaded before
        ``instrument()`` is the object it was (no wrapper left on, inert: each instrument/uninstrument cycle
        would stack one more layer on the framework's calls, as the Agents SDK's did under wrapt 2)."""
        scenario.run()  # the framework's own lazy imports and set-up happen uninstrumented
        before = _callables()
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        scenario.run()
        inst.uninstrument()
        after = _callables()
        changed = sorted(".".join(k) for k, v in before.items() if k in after and after[k] is not v)
        assert changed == [], f"left wrapped after uninstrument(): {changed[:20]}"

    # -- X-5 ----------------------------------------------------------------------
    def test_x5_internal_failure_never_reaches_user(self, scenario: Scenario, instrumented: Any,
                                                    exporter: SnapshotExporter, monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
        """X-5: an extractor that raises: the run returns normally, spans end, the failure is logged once."""
        normal = scenario.run()
        exporter.clear()
        reset_reported_sites()
        scenario.break_extractor(monkeypatch)
        with caplog.at_level(logging.DEBUG, logger="otel_agents"):
            first = scenario.run()
            second = scenario.run()
        assert first == normal and second == normal
        spans = exporter.semantic()
        assert spans, "no spans at all after the extractor broke"
        assert all(s.end_time for s in spans)
        warnings = [r for r in caplog.records if r.name == "otel_agents" and r.levelno >= logging.WARNING]
        assert warnings, "the internal failure was not logged"
        sites = [r.getMessage() for r in warnings]
        assert len(sites) == len(set(sites)), f"logged more than once: {sites}"

    # -- X-6 ----------------------------------------------------------------------
    def test_x6_odd_values(self, scenario: Scenario, instrumented: Any, exporter: SnapshotExporter,
                           monkeypatch: pytest.MonkeyPatch) -> None:
        """X-6: every attribute is OTel-legal; JSON attributes parse; a 5 MB value is cut with the marker."""
        monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "4096")
        scenario.run(marker="x" * 5_000_000 + " ünïcødé ✓")
        spans = exporter.semantic()
        assert spans
        assert any(s.attributes.get("otel_agents.truncated") is True for s in spans), "no truncation marker"
        for s in spans:
            for key, value in s.attributes.items():
                assert isinstance(value, (str, bool, int, float, tuple, list)), (key, type(value))
                if isinstance(value, (tuple, list)):
                    assert len({type(v) for v in value}) <= 1, key
                if isinstance(value, str):
                    assert len(value) <= 4096, (s.name, key, len(value))
                    if key.endswith(".value") and s.attributes.get(key[:-6] + ".mime_type") == "application/json" or \
                            key.startswith("gen_ai.") and key.endswith(("messages", "instructions", "arguments")):
                        json.loads(value)
        assert any("ünïcødé" in v for s in spans for v in s.attributes.values() if isinstance(v, str)) or \
            any(s.attributes.get("otel_agents.truncated") for s in spans)

    # -- X-7 ----------------------------------------------------------------------
    def test_x7_content_switch_covers_everything(self, scenario: Scenario, provider: Any,
                                                 exporter: SnapshotExporter, monkeypatch: pytest.MonkeyPatch) -> None:
        """X-7: with NO_CONTENT, no attribute, event or span name contains the marker, nor a SHA-256 (a digest of
        a short prompt gives it back to a dictionary; with content on, media past the budget keeps one)."""
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        try:
            scenario.run(marker=MARKER)
            with pytest.raises(Exception):
                scenario.run_failing()
        finally:
            inst.uninstrument()
        spans = exporter.semantic()
        assert {k for k in scenario.kinds} <= {s.semantic_kind for s in spans}
        for s in exporter.spans:
            assert MARKER not in s.name
            for key, value in s.attributes.items():
                assert MARKER not in str(value) and not _SHA256.search(str(value)), (s.name, key)
            for name, attrs in s.events:
                assert MARKER not in name
                for key, value in attrs.items():
                    assert MARKER not in str(value) and not _SHA256.search(str(value)), (s.name, name, key)
        # and with content on, the marker is there (the switch is what removed it)
        exporter.clear()
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        try:
            scenario.run(marker=MARKER)
        finally:
            inst.uninstrument()
        assert any(MARKER in str(v) for s in exporter.spans for v in s.attributes.values())

    def test_x7_content_off_keeps_the_run_context(self, scenario: Scenario, provider: Any,
                                                  exporter: SnapshotExporter, monkeypatch: pytest.MonkeyPatch) -> None:
        """X-7: the application's own labels (otel_agents.using_metadata, using_tags) are not captured content:
        with content off every semantic span of the run still carries them, as OpenInference's TraceConfig
        masking never hides metadata or tags (a secret-named key in them is still redacted)."""
        import otel_agents

        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        try:
            with otel_agents.using_metadata({"tenant": "t-1", "password": "hunter2-" + MARKER}), \
                    otel_agents.using_tags(["beta"]):
                scenario.run(marker=MARKER)
        finally:
            inst.uninstrument()
        spans = exporter.semantic()
        assert spans
        for s in spans:
            assert json.loads(s.attributes["metadata"]) == {"tenant": "t-1", "password": "[REDACTED]"}, s.name
            assert tuple(s.attributes["tag.tags"]) == ("beta",), s.name

    # The facts that are not content: with content off they are recorded as with it on (issue 40's content-off
    # paths build no messages: a finish reason, usage or a tool's name must not go with them).
    _FACTS = ("gen_ai.response.finish_reasons", "llm.finish_reason", "gen_ai.usage.input_tokens",
              "gen_ai.usage.output_tokens", "llm.token_count.prompt", "llm.token_count.completion",
              "llm.token_count.total", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.provider.name",
              "gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.agent.name", "error.type",
              "otel_agents.span.kind")

    def test_x7_content_off_keeps_every_fact_that_is_not_content(self, provider: Any,
                                                                 exporter: SnapshotExporter,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
        """X-7, the other half: the same run with content off has the same spans, statuses and facts (finish
        reasons, usage, models, names, error types) as with content on. Each run is a fresh scenario's first
        (a scenario may vary its runs: CrewAI's cycles usage shapes)."""
        def facts() -> list[tuple[Any, ...]]:
            exporter.clear()
            fresh = self.scenario_cls()
            inst = fresh.instrumentor_cls()
            inst.instrument(tracer_provider=provider)
            try:
                fresh.run(marker=MARKER)
            finally:
                inst.uninstrument()
            return sorted((s.name, s.status, tuple((k, repr(s.attributes.get(k))) for k in self._FACTS))
                          for s in exporter.spans)

        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
        on = facts()
        assert any(v != "None" for _, _, f in on for k, v in f if k != "otel_agents.span.kind")  # facts to compare
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
        off = facts()
        assert off == on, [(a, b) for a, b in zip(on, off) if a != b] or (len(on), len(off))

    # -- X-8 … X-10: hostile inputs (issue 35) ------------------------------------------
    @staticmethod
    def _outcome(scenario: Scenario, run: Callable[[], Any] | None = None) -> tuple[str, Any]:
        try:
            (run or scenario.run)()
        except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt included: it is the case
            return "raised", type(exc)
        return "returned", None

    def _same_outcome_and_all_ended(self, scenario: Scenario, provider: Any, setup: Callable[[], Any],
                                    run: Callable[[], Any] | None = None, inside: Callable[[Any], Any] | None = None
                                    ) -> Any:
        """Run the scenario uninstrumented, then instrumented, each after ``setup()`` (which returns a probe of
        the user's objects' state afterwards): same outcome and same state both ways; instrumented, every
        semantic span ended, nothing left current, bookkeeping empty. Returns the instrumented state."""
        observe = setup()
        off = self._outcome(scenario, run), observe()
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        try:
            if inside is not None:
                inside(inst)
            observe = setup()
            on = self._outcome(scenario, run), observe()
            assert not trace.get_current_span().get_span_context().is_valid, "a span was left current"
            gc.collect()
            settle()  # a collected stream's span ends in the finaliser thread
            assert scenario.open_entries(inst) == 0
            alive = [o for o in gc.get_objects() if isinstance(o, SemanticSpan) and not o.ended]
            assert alive == [], f"{len(alive)} semantic spans never ended: {[o.name for o in alive]}"
        finally:
            inst.uninstrument()
        assert on == off, f"instrumentation changed the program: {off} uninstrumented, {on} instrumented"
        return on

    def test_x8_serialising_a_result_never_runs_user_code(self, scenario: Scenario, provider: Any,
                                                          exporter: SnapshotExporter) -> None:
        """X-8 (issue 35): a tool result holding a generator (in a pydantic model) and a mock: recording it
        never iterates the generator nor calls the mock (the state afterwards is the uninstrumented one)."""

        def setup() -> Callable[[], Any]:
            rows, spy = (i for i in range(3)), Spy()
            scenario.tool_value = {"report": RowsHolder(name="r", rows=rows), "spy": spy}
            return lambda: (list(rows), list(spy.mock_calls))

        self._same_outcome_and_all_ended(scenario, provider, setup)
        assert scenario.results, "the scenario's tool does not return scenario.result(...)"
        assert exporter.semantic("tool")

    def test_x8_probing_a_hostile_result_never_raises(self, scenario: Scenario, provider: Any,
                                                      exporter: SnapshotExporter) -> None:
        """X-8 (issue 35): a result whose attribute access raises (werkzeug's ``LocalProxy``): our probes of it
        never raise into the framework."""

        def setup() -> Callable[[], Any]:
            scenario.tool_value = UnboundProxy()
            return lambda: None

        self._same_outcome_and_all_ended(scenario, provider, setup)
        assert scenario.results, "the scenario's tool does not return scenario.result(...)"

    def test_x9_base_exception_ends_every_span(self, scenario: Scenario, provider: Any,
                                               exporter: SnapshotExporter) -> None:
        """X-9 (issue 35): a tool raising ``KeyboardInterrupt``: it reaches the caller as it would
        uninstrumented, and every span of the run ends."""

        def setup() -> Callable[[], Any]:
            scenario.tool_error = KeyboardInterrupt
            return lambda: None

        (outcome, _) = self._same_outcome_and_all_ended(scenario, provider, setup)
        assert exporter.semantic("tool") and all(s.end_time for s in exporter.semantic())

    def test_x9_error_that_cannot_print_itself(self, scenario: Scenario, provider: Any,
                                               exporter: SnapshotExporter) -> None:
        """X-9 (issue 35): a tool raising an exception whose ``__str__`` raises: the outcome is the
        uninstrumented one, every span ends, and a span recording it is ERROR (never a half-recorded UNSET)."""

        def setup() -> Callable[[], Any]:
            scenario.tool_error = UnprintableError
            return lambda: None

        self._same_outcome_and_all_ended(scenario, provider, setup)
        for s in exporter.spans:
            for name, attrs in s.events:
                if name == "exception" and str(attrs.get("exception.type", "")).endswith("UnprintableError") \
                        and "otel_agents.control_flow" not in s.attributes:
                    assert s.status.name == "ERROR", (s.name, s.status)

    def test_x10_secrets_in_names_content_and_stack_traces(self, scenario: Scenario, provider: Any,
                                                           exporter: SnapshotExporter,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
        """X-10 (issue 35): a key in the prompt (content on) reaches no span name, attribute or event; with
        content off, a key in the failing source line does not reach ``exception.stacktrace``."""
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        try:
            scenario.run(marker=SECRET_MARKER)
        finally:
            inst.uninstrument()
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
        scenario.tool_error = lambda: RuntimeError("boom")
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        try:
            try:
                scenario.run()
            except Exception:  # noqa: BLE001 - the framework may or may not hand the tool's error on
                pass
        finally:
            inst.uninstrument()
        for s in exporter.spans:
            for secret in (SECRET_MARKER, SOURCE_SECRET):
                assert secret not in s.name
                for key, value in s.attributes.items():
                    assert secret not in str(value), (s.name, key)
                for _, attrs in s.events:
                    for key, value in attrs.items():
                        assert secret not in str(value), (s.name, key)

    # -- X-11 … X-13: what real programs do to a run in flight ---------------------------
    def test_x11_task_cancelled_mid_tool(self, scenario: Scenario, provider: Any, exporter: SnapshotExporter) -> None:
        """X-11: the task running an async run is cancelled while its tool runs (on the loop's thread or in an
        executor's): the caller gets what it gets uninstrumented, and every span of the run ends."""

        def run() -> None:
            async def main() -> None:
                task = asyncio.create_task(scenario.arun())
                loop = asyncio.get_running_loop()
                scenario.tool_hook = lambda: loop.call_soon_threadsafe(task.cancel)
                await task

            asyncio.run(main())

        outcome = self._same_outcome_and_all_ended(scenario, provider, lambda: (lambda: None), run)
        self._assert_cancelled_as_control_flow(scenario, exporter, outcome[0])

    def test_x11_wait_for_times_out_mid_tool(self, scenario: Scenario, provider: Any,
                                             exporter: SnapshotExporter) -> None:
        """X-11: ``asyncio.wait_for`` times out while the tool runs (a slow tool): the same outcome as
        uninstrumented, every span ends. The tool sleeps past the deadline, which is far enough off for the run
        to reach its tool on a loaded machine (0.05 s fired before the agent span opened, under load 20)."""

        def run() -> None:
            import time

            timeout = 1.0
            deadline: list[float] = []

            async def main() -> None:
                deadline.append(time.monotonic() + timeout)  # the loop's clock (asyncio's default loop.time())
                await asyncio.wait_for(scenario.arun(), timeout)

            scenario.tool_hook = lambda: time.sleep(max(0.0, deadline[-1] - time.monotonic()) + 0.1)
            asyncio.run(main())

        outcome = self._same_outcome_and_all_ended(scenario, provider, lambda: (lambda: None), run)
        self._assert_cancelled_as_control_flow(scenario, exporter, outcome[0])

    @staticmethod
    def _assert_cancelled_as_control_flow(scenario: Scenario, exporter: SnapshotExporter,
                                          outcome: tuple[str, Any]) -> None:
        """X-11's one rule, the same in every framework: a cancellation is control flow, not an error. No span
        is ERROR or has an ``error.type`` for it; a span it ended has ``otel_agents.control_flow`` =
        ``asyncio.exceptions.CancelledError``; a run it stopped says so on its outermost agent span and on a
        workflow around it (``otel_agents.run.stop_reason`` ``cancelled`` and the control flow), which the fold
        makes the envelope's ``stop_reason``."""
        cancelled = "asyncio.exceptions.CancelledError"
        spans = exporter.semantic()
        for s in spans:
            a = s.attributes
            failed_by_it = [e for n, e in s.events if n == "exception"
                            and str(e.get("exception.type", "")).endswith("CancelledError")]
            assert "CancelledError" not in str(a.get("error.type", "")), (s.name, "error.type", a.get("error.type"))
            assert not (failed_by_it and s.status.name == "ERROR"), (s.name, s.status, s.status_description)
            assert a.get("otel_agents.control_flow") in (None, cancelled), (s.name, a.get("otel_agents.control_flow"))
        if not scenario.cancel_stops_run:
            return  # the run goes on in a thread of its own to its end: only "nothing says it failed" applies
        # else the cancellation must have landed, or this check would pass without testing anything
        assert outcome[0] == "raised" and outcome[1] in (asyncio.CancelledError, TimeoutError), outcome
        by_id = {s.span_id: s for s in spans}
        top = [s for s in spans if s.semantic_kind == "agent"
               and not any(p.semantic_kind == "agent" for p in ancestors(s, spans))]
        assert top, tree(spans)
        for agent in top:
            assert agent.attributes.get("otel_agents.run.stop_reason") == "cancelled", tree(spans)
            assert agent.attributes.get("otel_agents.control_flow") == cancelled, tree(spans)
            parent = by_id.get(agent.parent_id)
            while parent is not None:  # a workflow around the agent was stopped too, not failed
                assert parent.attributes.get("otel_agents.control_flow") == cancelled, tree(spans)
                if parent.attributes.get("gen_ai.operation.name") == "invoke_workflow":  # a run too (a crew)
                    assert parent.attributes.get("otel_agents.run.stop_reason") == "cancelled", tree(spans)
                parent = by_id.get(parent.parent_id)

    @pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
    @pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt])
    def test_x12_process_exits_in_a_tool(self, scenario: Scenario, provider: Any, exporter: SnapshotExporter,
                                         error: type, aio: bool, caplog: pytest.LogCaptureFixture) -> None:
        """X-12: a tool calling ``sys.exit()`` (or interrupted), in a sync run or under ``asyncio.run``: the
        exception reaches the caller as uninstrumented, every span ends, and the tool span records it as the span
        layer records any exception that is no ``Exception``: control flow (the program was stopped, the tool did
        not fail), not ERROR with ``error.type``, in every framework alike. Ending the run's spans detaches no
        context attached in another task's or thread's (OTel would log "Failed to detach context", an ERROR with
        a traceback, in the user's logs)."""

        def setup() -> Callable[[], Any]:
            scenario.tool_error = error
            return lambda: None

        run = (lambda: asyncio.run(scenario.arun())) if aio else None
        with caplog.at_level(logging.ERROR, logger="opentelemetry.context"):
            self._same_outcome_and_all_ended(scenario, provider, setup, run)
        assert not [r.getMessage() for r in caplog.records if r.name == "opentelemetry.context"]
        for s in exporter.semantic("tool"):
            if any(name == "exception" and str(attrs.get("exception.type", "")).endswith(error.__name__)
                   for name, attrs in s.events):
                assert (s.status.name, s.attributes.get("error.type"), s.attributes.get("otel_agents.control_flow")) \
                    == ("UNSET", None, error.__name__), (s.name, s.status, dict(s.attributes))

    @pytest.mark.parametrize("shape", ["cycle", "non_str_keys", "repr_raises", "deep", "huge", "everything_raises",
                                       "everything_raises_nested", "array_like", "array_like_nested", "bytes",
                                       "bytes_nested", "nan", "nan_nested", "huge_int", "pydantic_serializer_raises",
                                       "str_subclass", "memoryview", "none", "tuple_keys_nested"])
    def test_x12_results_we_cannot_serialise(self, scenario: Scenario, provider: Any, exporter: SnapshotExporter,
                                             shape: str) -> None:
        """X-12: a tool result that is a cycle, has non-str keys, a ``__repr__`` that raises, is 10,000 levels
        deep or is huge: the run's outcome is the uninstrumented one, every span ends, attributes are legal."""

        class ReprRaises:
            def __repr__(self) -> str:
                raise RuntimeError("no repr")

            __str__ = __repr__

        def value() -> Any:
            if shape == "cycle":
                d: dict[str, Any] = {"name": "loop"}
                d["self"] = d
                lst: list[Any] = [d]
                lst.append(lst)
                return {"d": d, "l": lst}
            if shape == "non_str_keys":
                return {(1, 2): "tuple", 3: "int", None: "none", frozenset({1}): "set", b"k": "bytes"}
            if shape == "repr_raises":
                return {"x": ReprRaises(), "y": [ReprRaises()]}
            if shape == "everything_raises":
                return EverythingRaises()
            if shape == "everything_raises_nested":
                return {"x": EverythingRaises(), "l": [EverythingRaises()]}
            if shape == "array_like":
                return ArrayLike([1.0, 2.0, float("nan")])
            if shape == "array_like_nested":
                return {"a": ArrayLike([1.0, 2.0]), "b": [ArrayLike([3.0])]}
            if shape == "bytes":
                return b"\xff\x00binary"
            if shape == "bytes_nested":
                return {"b": b"\xff\x00", "ba": bytearray(b"text"), "mv": memoryview(b"abc")}
            if shape == "memoryview":
                return memoryview(b"\xff\xfe")
            if shape == "nan":
                return float("nan")
            if shape == "nan_nested":
                return {"nan": float("nan"), "inf": [float("inf"), -float("inf")]}
            if shape == "huge_int":
                return 10 ** 5000
            if shape == "pydantic_serializer_raises":
                return SerializerRaises(name="n")
            if shape == "str_subclass":
                return HostileStr("text")
            if shape == "none":
                return None
            if shape == "tuple_keys_nested":
                return [{(1, "a"): {2: b"\x00"}}]
            if shape == "deep":
                deep: Any = "leaf"
                for _ in range(10_000):
                    deep = {"k": [deep]}
                return deep
            return {"rows": [{"i": i, "text": "y" * 100} for i in range(100_000)]}

        def setup() -> Callable[[], Any]:
            scenario.tool_value = value()
            return lambda: None

        self._same_outcome_and_all_ended(scenario, provider, setup)
        for s in exporter.spans:
            for key, v in s.attributes.items():
                assert isinstance(v, (str, bool, int, float, tuple, list)), (key, type(v))

    @pytest.mark.parametrize("hostile", ["str_raises", "huge_int"])
    @pytest.mark.parametrize("which", ["session", "user"])
    def test_x12_an_id_we_cannot_write_as_text(self, scenario: Scenario, provider: Any, exporter: SnapshotExporter,
                                               which: str, hostile: str) -> None:
        """X-12: a session or user id the caller gives that cannot be written as text (its ``__str__`` raises; an
        ``int`` past Python's digit limit for text) loses only itself: the run's outcome is the uninstrumented
        one, its spans are complete, no span carries a made-up id, and the run's other id still lands on its agent
        spans. (One such id used to lose the run's other attributes, or the run's spans.)"""
        if which not in scenario.ids:
            pytest.skip(f"the framework takes no {which} id from its caller")
        bad: Any = StrRaises() if hostile == "str_raises" else 10 ** 5000
        other = "other-7"
        ids = {"session": other if "session" in scenario.ids else None,
               "user": other if "user" in scenario.ids else None}
        ids[which] = bad
        try:
            expected = scenario.run_with_ids(**ids)
        except Exception as exc:  # noqa: BLE001
            pytest.skip(f"the framework itself, uninstrumented, refuses this {which} id: {exc!r}")
        exporter.clear()  # (decorated code records without an instrumentor)
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        try:
            assert scenario.run_with_ids(**ids) == expected
        finally:
            inst.uninstrument()
        traces = self._assert_complete_traces(exporter, scenario, 1)
        spans = next(iter(traces.values()))
        keys = {"session": ("session.id", "gen_ai.conversation.id"), "user": ("user.id",)}
        for s in spans:
            for key in keys[which]:
                assert key not in s.attributes, (s.name, key, s.attributes[key])
        for name in (n for n in ("session", "user") if n != which and ids[n] is not None):
            agents = [s for s in spans if s.semantic_kind == "agent"]
            assert agents and all(s.attributes.get(keys[name][0]) == other for s in agents), tree(spans)

    @pytest.mark.parametrize("switch", ["uninstrument", "instrument"])
    def test_x13_instrumentation_switched_mid_run(self, scenario: Scenario, provider: Any,
                                                  exporter: SnapshotExporter, switch: str) -> None:
        """X-13: ``uninstrument()`` called from inside a tool of a run in flight (or ``instrument()`` from inside
        a run that began uninstrumented): the run's result is the uninstrumented one, every span opened ends, and
        nothing is left current or held."""
        normal = scenario.run()
        inst = scenario.instrumentor_cls()
        if switch == "uninstrument":
            inst.instrument(tracer_provider=provider)
            scenario.tool_hook = inst.uninstrument
        else:
            scenario.tool_hook = lambda: inst.instrument(tracer_provider=provider)
        try:
            assert scenario.run() == normal
            assert not trace.get_current_span().get_span_context().is_valid, "a span was left current"
            scenario.tool_hook = None
            assert scenario.run() == normal  # and the next run, under the state the switch left
            assert not trace.get_current_span().get_span_context().is_valid, "a span was left current"
        finally:
            inst.uninstrument()
        gc.collect()
        settle()  # a collected stream's span ends in the finaliser thread
        alive = [o for o in gc.get_objects() if isinstance(o, SemanticSpan) and not o.ended]
        assert alive == [], f"{len(alive)} semantic spans never ended: {[o.name for o in alive]}"
        assert all(s.end_time for s in exporter.semantic())

    # -- X-14 … : lifecycle and control flow the cases above do not reach ------------------------------
    def test_x14_reinstrument_with_another_provider(self, scenario: Scenario, provider: Any,
                                                    exporter: SnapshotExporter) -> None:
        """X-14: ``instrument(A)``, ``uninstrument()``, ``instrument(B)``: the next run's spans go to B only, as
        complete as A's were (nothing of the first instrumentation's providers or settings is kept)."""
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        other = SnapshotExporter()
        provider_b = TracerProvider()
        provider_b.add_span_processor(SimpleSpanProcessor(other))
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        try:
            normal = scenario.run()
        finally:
            inst.uninstrument()
        kinds = self.reinstrumented_kinds

        def names(spans: list[SpanSnapshot]) -> list[str]:
            return sorted(s.name for s in spans if kinds is None or s.semantic_kind in kinds)

        first = names(exporter.semantic())
        assert first
        exporter.clear()
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider_b)
        try:
            assert scenario.run() == normal
        finally:
            inst.uninstrument()
            provider_b.shutdown()
        assert names(exporter.semantic()) == [], f"spans went to the first provider: {tree(exporter.semantic())}"
        assert names(other.semantic()) == first, tree(other.semantic())

    @pytest.mark.parametrize("error", [StopIteration, asyncio.CancelledError])
    def test_x14_tool_raises_control_flow_exceptions(self, scenario: Scenario, provider: Any,
                                                     exporter: SnapshotExporter, error: type) -> None:
        """X-14: a tool body raising ``StopIteration`` (which a generator on the way turns into ``RuntimeError``)
        or ``asyncio.CancelledError`` itself (not a task's cancellation): the outcome is the uninstrumented one,
        every span ends. (``GeneratorExit`` is not asked: AgentChat's own runtime waits forever on it.)"""
        if error in scenario.hangs_on:
            pytest.skip(f"the framework itself, uninstrumented, waits forever when a tool raises {error.__name__}")

        def setup() -> Callable[[], Any]:
            scenario.tool_error = error
            return lambda: None

        self._same_outcome_and_all_ended(scenario, provider, setup)
        self._same_outcome_and_all_ended(scenario, provider, setup, lambda: asyncio.run(scenario.arun()))

    def test_x14_threads_and_tasks_at_once(self, scenario: Scenario, instrumented: Any,
                                           exporter: SnapshotExporter) -> None:
        """X-14: runs in a thread pool while an event loop runs others as tasks, at the same time: every run is
        its own complete trace (a parent never crosses from a task to a thread or back)."""

        def in_loop() -> None:
            async def main() -> None:
                await asyncio.gather(*(scenario.arun(tag=f"task{i}") for i in range(6)))

            asyncio.run(main())

        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(_run_in_context, scenario.run, "", f"thread{i}") for i in range(6)]
            futures.append(pool.submit(in_loop))
            for f in futures:
                f.result()
        traces = self._assert_complete_traces(exporter, scenario, 12)
        self._assert_probes_in_own_trace(scenario, traces)
        assert scenario.open_entries(instrumented) == 0

    # -- forking ------------------------------------------------------------------------------
    def test_x15_a_tool_forks(self, scenario: Scenario, provider: Any, exporter: SnapshotExporter,
                              tmp_path: Any) -> None:
        """X-15: a tool forks while its run is in flight (``os.fork()``; ``multiprocessing`` with ``fork``), and the
        child calls ``uninstrument()`` and exits. The child starts with none of the parent's open spans in its
        bookkeeping and exports none of them (its ``uninstrument()`` used to end them, as evicted, and export them
        a second time); the parent's run is unaffected. (Spans the child opens itself: tests/test_forked_child.py.)"""
        if not hasattr(os, "fork"):
            pytest.skip("no os.fork on this platform")
        report = tmp_path / "child.json"
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        children: list[int] = []

        def child() -> dict[str, Any]:
            inherited = scenario.open_entries(inst)
            seen = len(exporter.spans)  # what the parent had exported at the fork
            inst.uninstrument()  # ends what is still open: nothing of the parent's
            gc.collect()
            settle()
            return {"inherited": inherited,
                    "spans": [[s.span_id, s.name] for s in exporter.spans[seen:]]}

        def fork_once() -> None:
            if not children:
                children.append(forking.start(child, report, alarm_s=20))

        scenario.tool_hook = fork_once
        try:
            scenario.run()
        finally:
            scenario.tool_hook = None
            inst.uninstrument()
        assert children, "the scenario's tool never called probe()"
        out = forking.wait(children[0], report, timeout=30)
        assert out["inherited"] == 0, f"the child inherited {out['inherited']} open entries of the parent's run"
        assert out["spans"] == [], f"the child exported the parent's spans a second time: {out['spans']}"
        self._assert_complete_traces(exporter, scenario, 1)

    @pytest.mark.parametrize("when", ["instrumented", "after_a_run", "run_in_flight"])
    def test_x15_a_whole_run_in_a_forked_child(self, scenario: Scenario, provider: Any, exporter: SnapshotExporter,
                                               tmp_path: Any, when: str) -> None:
        """X-15: a worker forked after ``instrument()`` (gunicorn, ``multiprocessing`` with ``fork``, Celery's
        prefork pool), right after it, after a run, or while another thread of the parent is in the middle of a run
        (its tool waiting: whatever that thread holds at the fork, the child never gets back), runs whole agent
        runs of its own, sync and async, and an abandoned stream: each run is one complete trace in the child, a
        ``BatchSpanProcessor`` of the parent's provider exports them there too, every span the child opened ends,
        and the child exits (a hang fails at the child's alarm, with its stacks). What the framework itself needs
        in the child: :meth:`Scenario.after_fork_in_child`."""
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        if not hasattr(os, "fork"):
            pytest.skip("no os.fork on this platform")
        report = tmp_path / "child.json"
        batched = SnapshotExporter()
        provider.add_span_processor(BatchSpanProcessor(batched, schedule_delay_millis=60_000))
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        parent = os.getpid()

        def child() -> dict[str, Any]:
            _keep_inherited_loop()
            scenario.tool_hook = None
            scenario.probes.clear()
            scenario.agent_spans.clear()
            scenario.after_fork_in_child()
            exporter.clear()
            batched.clear()
            scenario.run(tag="child")
            asyncio.run(scenario.arun(tag="async child"))
            traces = self._assert_complete_traces(exporter, scenario, 2)
            self._assert_probes_in_own_trace(scenario, traces)
            if scenario.streams:
                scenario.run_stream(consume=False)
            gc.collect()
            settle()
            alive = [o.name for o in gc.get_objects() if isinstance(o, SemanticSpan) and not o.ended]
            assert alive == [], f"semantic spans never ended in the child: {alive}"
            assert provider.force_flush(10_000), "the BatchSpanProcessor did not flush in the child"
            assert {s.span_id for s in batched.spans} == {s.span_id for s in exporter.spans}
            return {"spans": len(exporter.semantic())}

        pid = None
        try:
            if when == "after_a_run":
                scenario.run()
            if when != "run_in_flight":
                pid = forking.start(child, report, alarm_s=60)
            else:
                entered, release = threading.Event(), threading.Event()

                def hold() -> None:
                    if os.getpid() == parent:
                        entered.set()
                        release.wait(30)

                scenario.tool_hook = hold
                thread = threading.Thread(target=_run_in_context, args=(scenario.run,))
                thread.start()
                try:
                    assert entered.wait(30), "the scenario's tool never called probe()"
                    pid = forking.start(child, report, alarm_s=60)
                finally:
                    release.set()
                    thread.join()
        finally:
            scenario.tool_hook = None
            inst.uninstrument()
        out = forking.wait(pid, report, timeout=90)
        assert out["spans"] > 0

    @pytest.mark.parametrize("error", [SystemExit, RuntimeError])
    def test_x15_a_forked_child_unwinds_through_the_parents_spans(self, scenario: Scenario, provider: Any,
                                                                  exporter: SnapshotExporter, tmp_path: Any,
                                                                  error: type) -> None:
        """X-15: a tool forks and the child leaves the way a program does (``sys.exit()``, or an error the
        framework may turn into a tool result and go on with): the child unwinds through the ``with`` blocks of
        the parent's run, tool, agent and workflow spans. Those spans are the parent's: the child ends and exports
        none of them (it used to export each a second time, from the child), the spans the child opens itself
        after the fork are its own, and the parent's exporter sees each of its spans once, in one complete trace.
        The child's exports go to a file the parent reads.

        The tool forks on the thread that holds the run's spans on its stack (:meth:`Scenario.run_unwinding`): a
        sync tool that a framework runs in a worker thread forks a child that is that worker alone, which never
        reaches the parent's spans (it waits in the pool's queue until its alarm), so the case could not fail.
        Where the instrumentor ends a run's spans from its own map (LangChain's and OpenAI Agents' span registries,
        LlamaIndex's span handler, Google ADK's invocations), the child unwinding finds none of them: the map starts
        empty in a forked child. That reset and the span layer's fork-time marking each keep the parent's spans from
        the child there: the case fails only with both disabled (checked)."""
        if not hasattr(os, "fork"):
            pytest.skip("no os.fork on this platform")
        if error in scenario.hangs_on:
            pytest.skip(f"the framework itself, uninstrumented, waits forever when a tool raises {error.__name__}")
        child_spans = tmp_path / "child-spans.jsonl"
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        parent = os.getpid()
        children: list[int] = []

        def export_to_file(spans: Any) -> Any:
            lines = "".join(json.dumps([s.context.span_id, s.name]) + "\n" for s in spans)
            fd = os.open(child_spans, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                os.write(fd, lines.encode())
            finally:
                os.close(fd)

        def fork_and_leave() -> None:
            if children or os.getpid() != parent:
                return
            pid = os.fork()
            if pid:
                children.append(pid)
                return
            # Where the tool runs in a worker thread, the child (that thread alone) unwinds into the pool's loop: a
            # concurrent.futures or AnyIO worker then ends the child; on the loop's thread, the child ends
            # once its loop has nothing left to run; any other wait lasts until its alarm. Its exports happen as it
            # unwinds, well within the alarm; one cut short under load only exports less (the check below can then
            # miss, never fail wrongly).
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(10)
            _keep_inherited_loop()
            _detach_running_loop()  # the tool forked on the loop's thread: the child unwinds through that loop
            _end_when_the_loop_idles()
            _end_pool_worker_after_unwinding()
            exporter.export = export_to_file  # type: ignore[method-assign]
            raise error("the forked child leaves")

        scenario.tool_hook = fork_and_leave
        try:
            scenario.run_unwinding()
        except BaseException:  # noqa: BLE001 - the child's unwinding ends here; the parent's run must not raise
            if os.getpid() == parent:
                raise
        finally:
            if os.getpid() != parent:
                os._exit(0)  # never back into pytest
            scenario.tool_hook = None
            inst.uninstrument()
        assert children, "the scenario's tool never called probe()"
        deadline = time.monotonic() + 90
        while not os.waitpid(children[0], os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                os.kill(children[0], signal.SIGKILL)
                os.waitpid(children[0], 0)
                break
            time.sleep(0.02)
        ids = [s.span_id for s in exporter.spans]
        assert len(ids) == len(set(ids)), "the parent exported a span twice"
        self._assert_complete_traces(exporter, scenario, 1)
        from_child = [tuple(json.loads(line)) for line in
                      (child_spans.read_text().splitlines() if child_spans.exists() else [])]
        again = [name for span_id, name in from_child if span_id in set(ids)]
        assert again == [], f"the forked child exported the parent's spans a second time: {again}"

    # -- streamed responses -------------------------------------------------------------------
    def test_x16_streamed_model_calls_are_timed(self, scenario: Scenario, instrumented: Any,
                                                exporter: SnapshotExporter) -> None:
        """X-16: a model span has ``gen_ai.response.time_to_first_chunk`` only for a streamed request (OTel GenAI
        v1.41: recommended "if the request was a streaming request"; ``gen_ai.request.stream`` then true), its value
        within the span; a model span that says it streamed and ended well has it (the first chunk came). A plain
        run's model calls are not streamed (unless the framework streams them itself); a consumed streaming run's
        are timed where the framework streams the model."""
        if "model" not in scenario.kinds:
            pytest.skip("this system's run calls no model (MCP, A2A: their spans are a tool's and an agent's)")
        scenario.run()
        settle()
        plain = [s for s in exporter.semantic() if s.semantic_kind == "model"]
        assert plain
        if not scenario.plain_run_streams_model:
            assert not [s.name for s in plain if "gen_ai.response.time_to_first_chunk" in s.attributes]
        exporter.clear()
        if scenario.streams:
            scenario.run_stream(consume=True)
            settle()
        streamed = [s for s in exporter.semantic() if s.semantic_kind == "model"]
        if scenario.streams_model:
            assert any("gen_ai.response.time_to_first_chunk" in s.attributes for s in streamed), tree(streamed)
        for span in plain + streamed:
            attrs = span.attributes
            ttfc = attrs.get("gen_ai.response.time_to_first_chunk")
            if ttfc is not None:
                assert attrs.get("gen_ai.request.stream") is True, span.name
                assert 0 <= ttfc <= (span.end_time - span.start_time) / 1e9 + 1e-3, (span.name, ttfc)
            elif attrs.get("gen_ai.request.stream") is True and span.status != trace.StatusCode.ERROR and \
                    not attrs.get("otel_agents.stream.abandoned"):
                raise AssertionError(f"{span.name}: a streamed request that ended well, with no first chunk timed")
