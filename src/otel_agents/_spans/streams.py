"""End a span when the stream it covers ends, however it ends.

:func:`wrap_stream` wraps a sync or async iterator so that its span ends when
the iterator is exhausted, closed, raises, is garbage-collected unfinished, or
sits idle past the idle timeout (``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``), or is still
open when the interpreter exits (ended before the tracer provider shuts down). The
last four end the span with ``otel_agents.stream.abandoned = true``, not ERROR.
A stream exhausted without the terminal event its protocol ends a response with (``missing``: a model's
stream cut short, e.g. by a proxy closing the connection cleanly) ends its span as failed, ``error.type``
``stream_incomplete``, and without the finish reason or final usage that event would have carried.

The wrappers are classes, not generators: a ``for``/``async for`` loop that
``break``s drops the last reference and ``__del__`` runs at once in CPython,
so an abandoned stream's span ends promptly rather than at some later
collection (a stream in a reference cycle, which only a collection frees,
ends its span just after it, in the span layer's finaliser thread:
:mod:`.finalisers`). Nothing is made current while the consumer iterates.
"""

from __future__ import annotations

import atexit
import heapq
import itertools
import threading
import time
import weakref
from typing import Any, Callable

from ..semconv import Kind
from . import finalisers, probes
from .finalisers import from_finaliser, in_forked_child, prepare as prepare_finalisers
from .guard import guard
from .span import SemanticSpan

OnChunk = Callable[[Any], None]
OnEnd = Callable[[SemanticSpan, bool], None]
"""``on_end(span, abandoned)``: fill the span's output before it ends."""
OnError = Callable[[SemanticSpan, BaseException], None]
"""``on_error(span, exc)``: what the stream raised, before the span records it and ends (a stop reason)."""
Missing = Callable[[], "str | None"]
"""``missing()``: the terminal event a stream that ended by itself never sent (``"response.completed"``), or
``None`` when it came; a name makes the span :meth:`~.outcome.OutcomeSetters.mark_incomplete`."""


FINISH_REASON = "finish_reason"
"""The finish reason a streamed chat completion's choice never got: the name :meth:`ChoiceFinishes.missing` returns
and an instrumentor that sees a cut stream otherwise gives :meth:`~.outcome.OutcomeSetters.mark_incomplete`."""


class ChoiceFinishes:
    """When a streamed chat completion is whole: only when every choice got its ``finish_reason``.

    The chunks are OpenAI's ``ChatCompletionChunk`` shape (``choices[].index``, ``choices[].finish_reason``), which
    OpenAI-compatible servers and Hugging Face's ``ChatCompletionStreamOutput`` share (OpenAI API reference, the chat
    completion chunk object). A choice ends with the chunk that carries its finish reason; deltas before it (text,
    ``tool_calls`` pieces) carry ``None``; a chunk without choices (the usage chunk of
    ``stream_options.include_usage``) says nothing about them. :meth:`missing` is a ``missing`` for
    :func:`wrap_stream` / :func:`watch_stream`.
    """

    __slots__ = ("_finished",)

    def __init__(self) -> None:
        self._finished: dict[Any, bool] = {}  # choice index -> whether its finish reason came

    def note(self, index: Any, finish_reason: Any) -> None:
        """One choice's delta: its ``index`` and its ``finish_reason`` (``None`` or empty while it runs)."""
        self._finished[index] = bool(finish_reason) or self._finished.get(index, False)

    def note_chunk(self, chunk: Any) -> None:
        """Every choice of ``chunk`` (a mapping or an object; a choice without ``index`` is choice 0)."""
        for choice in probes.field(chunk, "choices") or ():
            self.note(probes.field(choice, "index", 0), probes.field(choice, "finish_reason"))

    def missing(self) -> str | None:
        """:data:`FINISH_REASON` when a choice never got its finish reason, or when no choice came at all (a
        stream cut before its first); ``None`` when the stream is whole."""
        return None if self._finished and all(self._finished.values()) else FINISH_REASON


class _StreamState:
    __slots__ = ("span", "on_chunk", "on_end", "finished", "last_activity", "timeout", "lock", "is_error", "on_error",
                 "complete", "generation", "timed", "missing", "__weakref__")

    def __init__(self, span: SemanticSpan, on_chunk: OnChunk | None, on_end: OnEnd | None,
                 timeout: float, is_error: Callable[[BaseException], bool] | None,
                 on_error: OnError | None = None, missing: Missing | None = None,
                 complete: Callable[[], bool] | None = None):
        self.span = span
        self.on_chunk = on_chunk
        self.on_end = on_end
        self.complete = complete
        self.finished = False
        self.last_activity = time.monotonic()
        self.timeout = timeout
        self.lock = threading.Lock()
        self.is_error = is_error
        self.on_error = on_error
        self.missing = missing
        self.generation = finalisers.generation  # a forked child leaves the parent's stream to the parent
        # A model span's stream is its response's chunks: each one's arrival is timed (time to first chunk,
        # time per output chunk); another span's stream (an agent run's events) is not a model's output.
        self.timed = span if span.kind is Kind.MODEL else None

    def dropped(self) -> None:
        """The stream's proxy was let go unfinished: end the span as abandoned, unless the stream is a forked
        parent's (see :data:`.finalisers.generation`)."""
        if not self.finished and self.generation == finalisers.generation:
            from_finaliser(self.finish, abandoned=True)  # not inside the garbage collector: see .finalisers

    def chunk(self, item: Any) -> None:
        self.last_activity = now = time.monotonic()
        if self.timed is not None and not self.finished:
            self.timed.chunk_received(now)
        if self.on_chunk is not None and not self.finished:
            with guard("stream.on_chunk"):
                self.on_chunk(item)

    def finish(self, *, abandoned: bool = False, error: BaseException | None = None) -> None:
        with self.lock:
            if self.finished:
                return
            self.finished = True
        if abandoned and self.complete is not None:
            with guard("stream.complete"):
                abandoned = not self.complete()  # let go after its whole result: finished, not abandoned
        if self.on_end is not None:
            with guard("stream.on_end"):
                self.on_end(self.span, abandoned)
        if abandoned:
            self.span.mark_abandoned()
        elif error is None and self.missing is not None:
            cut_short = None
            with guard("stream.missing"):
                cut_short = self.missing()
            if cut_short:
                self.span.mark_incomplete(cut_short)
        if error is not None:
            if self.on_error is not None:
                with guard("stream.on_error"):
                    self.on_error(self.span, error)
            flow = False
            if self.is_error is not None:
                with guard("stream.is_error"):
                    flow = not self.is_error(error)
            self.span.record_error(error, control_flow=flow or not isinstance(error, Exception))
        self.span.end()


_SWEEP_AT = 1024  # heap entries before finished streams are first swept out


def _is_open(entry: tuple[float, int, weakref.ref]) -> bool:
    """Whether a watchdog heap entry's stream is still alive and unfinished."""
    state = entry[2]()
    return state is not None and not state.finished


class _Watchdog:
    """One daemon thread that ends streams idle past their timeout (bounded by live streams)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, weakref.ref]] = []
        self._counter = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._sweep_at = _SWEEP_AT
        self._at_exit = False  # end_open registered with atexit

    def _after_fork(self) -> None:
        """A forked child starts empty: the parent's streams are the parent's to end (ended here too, their spans
        would be exported twice), and its lock may have been held by the parent's watchdog thread, which the child
        does not have (then the child's first stream would wait for it forever)."""
        self.__init__()  # type: ignore[misc]

    def watch(self, state: _StreamState) -> None:
        deadline = state.last_activity + state.timeout
        with self._cond:
            heap = self._heap
            if len(heap) >= self._sweep_at:
                # Finished streams wait in the heap until their deadline (minutes): sweep them out
                # whenever the heap doubles, so it stays within twice the streams still open (or
                # _SWEEP_AT), at an amortised constant cost per stream.
                heap[:] = [entry for entry in heap if _is_open(entry)]
                heapq.heapify(heap)
                self._sweep_at = max(_SWEEP_AT, 2 * len(heap))
            earliest = heap[0][0] if heap else None
            heapq.heappush(heap, (deadline, next(self._counter), weakref.ref(state)))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="otel-agents-stream-watchdog", daemon=True)
                self._thread.start()
                if not self._at_exit:
                    # Registered after the tracer provider's own atexit shutdown (made before any stream), so it
                    # runs first: a stream still referenced at exit (a script's module-level ``stream`` it broke out
                    # of) would otherwise end at the globals' teardown, after the shutdown, and its span be lost.
                    self._at_exit = True
                    atexit.register(self.end_open)
            elif earliest is None or deadline < earliest:
                self._cond.notify()  # only a new first deadline changes how long the thread sleeps

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap:
                    self._cond.wait()
                deadline, _, ref = self._heap[0]
                now = time.monotonic()
                if deadline > now:
                    self._cond.wait(deadline - now)
                    continue
                heapq.heappop(self._heap)
            state = ref()
            if state is None or state.finished:
                continue
            idle_until = state.last_activity + state.timeout
            if idle_until <= time.monotonic():
                with guard("stream.watchdog"):
                    state.finish(abandoned=True)
            else:
                with self._cond:
                    heapq.heappush(self._heap, (idle_until, next(self._counter), ref))

    def end_open(self) -> None:
        """End every stream still open as abandoned (at interpreter exit), except a forked parent's."""
        with self._cond:
            states = [entry[2]() for entry in self._heap]
        for state in states:
            if state is not None and not state.finished and state.generation == finalisers.generation:
                with guard("stream.exit"):
                    state.finish(abandoned=True)

    def pending(self) -> int:
        """How many streams are being watched (for tests)."""
        with self._cond:
            return sum(1 for entry in self._heap if _is_open(entry))

    def size(self) -> int:
        """Entries in the heap, finished streams included (for tests: it stays bounded)."""
        with self._cond:
            return len(self._heap)


WATCHDOG = _Watchdog()
in_forked_child(WATCHDOG._after_fork)


class SyncStream:
    """A sync iterator proxy that ends ``span`` with the stream (see module docstring)."""

    def __init__(self, iterator: Any, state: _StreamState):
        self._it = iter(iterator)
        self._source = iterator
        self._state = state

    def __iter__(self) -> "SyncStream":
        return self

    def __next__(self) -> Any:
        try:
            item = next(self._it)
        except StopIteration:
            self._state.finish()
            raise
        except BaseException as exc:
            self._state.finish(error=exc)
            raise
        self._state.chunk(item)
        return item

    def send(self, value: Any) -> Any:
        """The source generator's ``send``, tracked as ``next`` is: a generator driven by ``send`` (or
        ``yield from`` with values) ends its span when it returns, not as abandoned when dropped."""
        return self._resume(self._it.send, value)

    def throw(self, *args: Any) -> Any:
        """The source generator's ``throw``: what it raises back ends the span with that error (or as control
        flow), what it yields instead is a chunk."""
        return self._resume(self._it.throw, *args)

    def _resume(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` as one step of the stream (``__next__``, the hot path, is written out on its own)."""
        try:
            item = fn(*args)
        except BaseException as exc:  # its end (StopIteration: the generator returned), or what it raised
            self._state.finish(error=None if isinstance(exc, StopIteration) else exc)
            raise
        self._state.chunk(item)
        return item

    def abandon(self) -> None:
        """End the span now, as abandoned, leaving the underlying iterator to its owner: for a stream
        feeding another whose consumer left (an async generator left suspended is closed only when the
        event loop gets to it, long after its caller's span ended)."""
        self._state.finish(abandoned=True)

    def close(self) -> None:
        """Close the underlying iterator; an unfinished stream's span ends as abandoned."""
        try:
            close = getattr(self._source, "close", None) or getattr(self._it, "close", None)
            if close is not None:
                close()
        finally:
            self._state.finish(abandoned=True)

    def __enter__(self) -> "SyncStream":
        enter = getattr(self._source, "__enter__", None)
        if enter is not None:
            enter()
        return self

    def __exit__(self, *exc: Any) -> Any:
        try:
            exit_ = getattr(self._source, "__exit__", None)
            return exit_(*exc) if exit_ is not None else None
        finally:
            self._state.finish(abandoned=exc[0] is None and not self._state.finished,
                               error=exc[1] if exc[1] is not None and not isinstance(exc[1], GeneratorExit) else None)

    def __getattr__(self, name: str) -> Any:  # the wrapped object's own API (e.g. .response)
        return getattr(self._source, name)

    def __del__(self) -> None:
        state = getattr(self, "_state", None)
        if state is not None:
            state.dropped()


class AsyncStream:
    """An async iterator proxy that ends ``span`` with the stream (see module docstring)."""

    def __init__(self, iterator: Any, state: _StreamState):
        self._it = iterator.__aiter__()
        self._source = iterator
        self._state = state

    def __aiter__(self) -> "AsyncStream":
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self._it.__anext__()
        except StopAsyncIteration:
            self._state.finish()
            raise
        except BaseException as exc:
            self._state.finish(error=exc)
            raise
        self._state.chunk(item)
        return item

    async def asend(self, value: Any) -> Any:
        """The source async generator's ``asend``, tracked as ``__anext__`` is (see :meth:`SyncStream.send`)."""
        return await self._resume(self._it.asend, value)  # type: ignore[attr-defined]

    async def athrow(self, *args: Any) -> Any:
        """The source async generator's ``athrow`` (see :meth:`SyncStream.throw`)."""
        return await self._resume(self._it.athrow, *args)  # type: ignore[attr-defined]

    async def _resume(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``await fn(*args)`` as one step of the stream (see :meth:`SyncStream._resume`)."""
        try:
            item = await fn(*args)
        except BaseException as exc:
            self._state.finish(error=None if isinstance(exc, StopAsyncIteration) else exc)
            raise
        self._state.chunk(item)
        return item

    def abandon(self) -> None:
        """End the span now, as abandoned, leaving the underlying iterator to its owner: for a stream
        feeding another whose consumer left (an async generator left suspended is closed only when the
        event loop gets to it, long after its caller's span ended)."""
        self._state.finish(abandoned=True)

    async def aclose(self) -> None:
        """Close the underlying iterator; an unfinished stream's span ends as abandoned."""
        try:
            aclose = getattr(self._source, "aclose", None) or getattr(self._it, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            self._state.finish(abandoned=True)

    async def __aenter__(self) -> "AsyncStream":
        enter = getattr(self._source, "__aenter__", None)
        if enter is not None:
            await enter()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            exit_ = getattr(self._source, "__aexit__", None)
            return await exit_(*exc) if exit_ is not None else None
        finally:
            self._state.finish(abandoned=exc[0] is None and not self._state.finished,
                               error=exc[1] if exc[1] is not None and not isinstance(exc[1], GeneratorExit) else None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._source, name)

    def __del__(self) -> None:
        state = getattr(self, "_state", None)
        if state is not None:
            state.dropped()


def awaited(coroutine: Any, span: SemanticSpan, *, on_result: Callable[[SemanticSpan, Any], None] | None = None
            ) -> Any:
    """A coroutine that awaits ``coroutine`` with ``span`` current and then ends ``span``: what a sync callable
    returned when its span covers the coroutine it made (a function under a plain sync decorator of another
    library, ``lambda q: agent.run(q)``), so the span ends when the work does and the work nests under it.

    ``on_result(span, result)`` is called before the span ends; an exception is recorded (a ``BaseException``
    that is no ``Exception``, a cancellation, as control flow) and re-raised. A coroutine of ours that is let go
    without being awaited ends ``span`` as abandoned (``otel_agents.stream.abandoned``) when it is collected (in
    the finaliser thread when that is inside the garbage collector: :mod:`.finalisers`). It is a coroutine, so
    ``asyncio.create_task`` takes it as it took the original.
    """
    state = _StreamState(span, None, None, 0.0, None)
    run = _awaiting(coroutine, span, state, on_result)
    with guard("awaited.finalize"):
        finalisers.finalize(run, state.dropped)
        # named as the one it awaits: Python's "coroutine … was never awaited" warning names the user's
        run.__name__, run.__qualname__ = coroutine.__name__, coroutine.__qualname__
    return run


async def _awaiting(coroutine: Any, span: SemanticSpan, state: _StreamState,
                    on_result: Callable[[SemanticSpan, Any], None] | None) -> Any:
    try:
        with span.activate():
            result = await coroutine
    except BaseException as exc:
        state.finish(error=exc)
        raise
    if on_result is not None:
        with guard("awaited.on_result"):
            on_result(span, result)
    state.finish()
    return result


def watch_stream(span: SemanticSpan, *, on_end: OnEnd | None = None, idle_timeout: float | None = None,
                 is_error: Callable[[BaseException], bool] | None = None,
                 missing: Missing | None = None) -> _StreamState:
    """Track a stream we cannot wrap (the framework hands its iterator to the user itself).

    The caller reports progress and the end; the idle watchdog ends the span as
    abandoned when neither comes within ``idle_timeout`` seconds (default:
    ``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``). ``missing`` as for :func:`wrap_stream`.

    Returns:
        a handle with ``chunk(item)`` (activity: resets the idle timer) and
        ``finish(abandoned=False, error=None)`` (ends the span once; later calls
        do nothing); ``finished`` tells whether it has ended.
    """
    timeout = idle_timeout if idle_timeout is not None else span.telemetry.settings.idle_timeout()
    state = _StreamState(span, None, on_end, timeout, is_error, missing=missing)
    with guard("stream.watch"):
        WATCHDOG.watch(state)
    return state


def wrap_stream(iterator: Any, span: SemanticSpan, *, on_chunk: OnChunk | None = None,
                on_end: OnEnd | None = None, idle_timeout: float | None = None,
                is_error: Callable[[BaseException], bool] | None = None, on_error: OnError | None = None,
                missing: Missing | None = None, complete: Callable[[], bool] | None = None) -> Any:
    """Wrap a sync or async iterator so that ``span`` ends when the stream does.

    Args:
        iterator: anything with ``__iter__`` or ``__aiter__``.
        span: the span to end; it is not made current.
        on_chunk: called with each item (e.g. to accumulate the output text).
        on_end: ``on_end(span, abandoned)``, called once just before the span ends.
        idle_timeout: seconds without a new item before the span ends as
            abandoned; default: the span layer's setting
            (``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``, 300 s).
        is_error: decides whether an exception raised by the stream is an error
            (default: every ``Exception``; others are control flow).
        on_error: ``on_error(span, exc)``, called with an exception the stream
            raised, after ``on_end`` and before the span records it and ends.
        missing: ``missing()``, called after ``on_end`` when the stream ended by itself (exhausted, neither
            abandoned nor raising): the name of the terminal event it never sent (``"response.completed"``,
            ``"message_stop"``), or ``None`` when it came. A name marks the span incomplete (status ERROR,
            ``error.type`` ``stream_incomplete``: :meth:`~.outcome.OutcomeSetters.mark_incomplete`); ``on_end``
            must then write no finish reason or usage the missing event would have given.
        complete: whether the stream has already given its whole result (a remote
            task that settled): a stream let go then (closed, dropped, idle, open at
            exit) ends its span as finished, not abandoned; default: never.

    Returns:
        :class:`SyncStream` or :class:`AsyncStream`; other attributes are
        forwarded to the wrapped object. Errors raised by the stream pass
        through unchanged.
    """
    timeout = idle_timeout if idle_timeout is not None else span.telemetry.settings.idle_timeout()
    state = _StreamState(span, on_chunk, on_end, timeout, is_error, on_error, missing, complete)
    stream = AsyncStream(iterator, state) if hasattr(iterator, "__aiter__") else SyncStream(iterator, state)
    with guard("stream.watch"):
        WATCHDOG.watch(state)
        prepare_finalisers()
    return stream
