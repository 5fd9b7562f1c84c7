"""One span around a coroutine or an async generator, started when the caller first awaits or
advances it and ended however it ends.

AutoGen's entry points (``run``, ``run_stream``, ``on_messages_stream``, ``create``,
``create_stream``, ``run_json``) are coroutines or async generators. The span starts at
the first ``await``/``__anext__`` (a coroutine never awaited opens nothing), is current
only while AutoGen's code runs, and ends when the result arrives, the stream is
exhausted, an exception comes out, or the stream is closed or dropped unfinished
(``otel_agents.stream.abandoned``; dropped: once its loop closed the framework's generator).
``asyncio.CancelledError`` — what a ``CancellationToken`` raises — is control flow, as everywhere
(``otel_agents.control_flow``, no ``error.type``, status unset; an agent span's stop reason ``cancelled``):
the step was stopped, it did not fail, and it was not abandoned by its consumer.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from opentelemetry import context as otel_context

from ..._spans import SemanticSpan, finalisers, finalize, from_finaliser, guard, prepare_finalisers

Start = Callable[[], "tuple[SemanticSpan, otel_context.Context] | None"]
"""Opens the span (or returns ``None`` to pass through) and gives the context to run the step in."""
Finish = Callable[[SemanticSpan, Any, "BaseException | None"], None]
"""Fills the span from the result (or the last item of a stream) before it ends."""


def record_outcome(span: SemanticSpan, error: BaseException | None) -> None:
    """An ``Exception`` is an error; a cancellation (anything else but a closed generator) is control flow; a
    closed generator (``GeneratorExit``) is abandonment."""
    if error is None:
        return
    if isinstance(error, GeneratorExit):
        span.mark_abandoned()
    else:
        span.record_error(error, control_flow=not isinstance(error, Exception))


async def run_coroutine(call: Callable[[], Any], start: Start, finish: Finish) -> Any:
    """Await ``call()`` inside the span ``start()`` opens."""
    opened = None
    with guard("autogen.span.start"):
        opened = start()
    if opened is None:
        return await call()
    span, ctx = opened
    token = otel_context.attach(ctx)
    try:
        result = await call()
    except BaseException as exc:
        otel_context.detach(token)
        _end(span, finish, None, exc)
        raise
    otel_context.detach(token)
    _end(span, finish, result, None)
    return result


def _end(span: SemanticSpan, finish: Finish, result: Any, error: BaseException | None) -> None:
    with guard("autogen.span.finish"):
        finish(span, result, error)
    with guard("autogen.span.outcome"):
        record_outcome(span, error)
    span.end()


class SpanStream:
    """An async iterator over ``make()`` (the framework's async generator) inside a span.

    ``on_item`` sees every item; ``finish`` gets the last one. A stream left
    unfinished (``aclose()``, dropped) ends its span as abandoned. ``missing(last)``, for a stream that ended by
    itself (neither left nor raising): the terminal item it never yielded, or ``None`` when it did; a name marks
    the span cut short (the span layer's :meth:`~otel_agents._spans.SemanticSpan.mark_incomplete`). ``final(last)``:
    whether ``last`` is the stream's final item (a ``TaskResult``, a ``Response``, a ``CreateResult``): a stream let
    go after it has given its whole result and ends finished, not abandoned (the span layer's rule,
    :func:`~otel_agents._spans.wrap_stream`'s ``complete``).
    """

    __slots__ = ("_make", "_start", "_finish", "_on_item", "_missing", "_final", "_it", "_span", "_ctx", "_last",
                 "_done", "_loop", "_generation")

    def __init__(self, make: Callable[[], Any], start: Start, finish: Finish,
                 on_item: Callable[[SemanticSpan, Any], None] | None = None,
                 missing: Callable[[Any], "str | None"] | None = None,
                 final: Callable[[Any], bool] | None = None):
        self._make, self._start, self._finish, self._on_item = make, start, finish, on_item
        self._missing, self._final = missing, final
        self._it: Any = None
        self._span: SemanticSpan | None = None
        self._ctx: Any = None
        self._last: Any = None
        self._done = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._generation = finalisers.generation  # a forked child leaves the parent's stream to the parent

    def __aiter__(self) -> "SpanStream":
        return self

    async def __anext__(self) -> Any:
        if self._it is None:
            opened = None
            with guard("autogen.span.start"):
                opened = self._start()
            if opened is not None:
                self._span, self._ctx = opened
                self._loop = asyncio.get_running_loop()
                prepare_finalisers()  # __del__ may need it
            self._it = self._make()
        if self._span is None:
            return await self._it.__anext__()
        token = otel_context.attach(self._ctx)
        try:
            item = await self._it.__anext__()
        except StopAsyncIteration:
            otel_context.detach(token)
            self._close(None)
            raise
        except BaseException as exc:
            otel_context.detach(token)
            self._close(exc)
            raise
        otel_context.detach(token)
        self._last = item
        if self._on_item is not None:
            with guard("autogen.stream.item"):
                self._on_item(self._span, item)
        return item

    def _close(self, error: BaseException | None, abandoned: bool = False) -> None:
        if self._done or self._span is None:
            return
        self._done = True
        if abandoned and self._final is not None:
            with guard("autogen.stream.final"):
                abandoned = not self._final(self._last)
        if abandoned:
            self._span.mark_abandoned()
        elif error is None and self._missing is not None:
            with guard("autogen.stream.missing"):
                cut_short = self._missing(self._last)
                if cut_short:
                    self._span.mark_incomplete(cut_short)
        _end(self._span, self._finish, self._last, error)

    async def aclose(self) -> None:
        """Close the framework's generator (its own ``finally`` runs in our span), then end ours as abandoned."""
        try:
            if self._it is not None and hasattr(self._it, "aclose"):
                if self._ctx is not None and not self._done:
                    token = otel_context.attach(self._ctx)
                    try:
                        await self._it.aclose()
                    finally:
                        otel_context.detach(token)
                else:
                    await self._it.aclose()
        finally:
            self._close(None, abandoned=True)

    def __del__(self) -> None:
        """Dropped unfinished: the framework's generator is closed on its loop, as the loop's own finalizer of a
        dropped async generator would (a task running ``aclose()``), and our span ends when that is done: a
        team's ``run_stream`` waits there for its runtime to finish the run, so the turns it still takes nest
        under a span that is still open. No running loop to close it on: the span ends now; a loop closed (or
        the interpreter leaving) before that task ended: the span ends then."""
        if self._done or self._span is None or self._generation != finalisers.generation:
            return
        loop = self._loop
        if loop is not None and loop.is_running() and hasattr(self._it, "aclose"):
            try:
                loop.call_soon_threadsafe(self._close_on_loop)  # (keeps this stream alive until then)
                return
            except Exception:  # noqa: BLE001 - the loop is closed
                pass
        from_finaliser(self._close, None, abandoned=True)

    def _close_on_loop(self) -> None:
        closing = self.aclose()
        try:
            task = self._loop.create_task(closing)  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - the loop is closing
            closing.close()
            self._close(None, abandoned=True)
            return
        task.add_done_callback(lambda _task: self._close(None, abandoned=True))  # (cancelled before it ran)
        finalize(task, self._close, None, True)  # (a loop closed with the task pending; interpreter exit)
