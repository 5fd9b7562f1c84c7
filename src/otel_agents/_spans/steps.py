"""Run each step of a stream inside a context: the one helper every instrumentor and the decorators use.

A framework's streaming entry point returns a generator whose body runs at each ``next()`` (or
``__anext__()``), in the consumer's context. A ``with`` block around the whole generator would stay
entered while the consumer runs between two items, and leak our span into the consumer's code (and
be detached in another context when the consumer leaves the loop). :class:`StepIterator` and
:class:`AsyncStepIterator` instead attach an OTel context — the span's — around each step only
(``next``/``send``/``throw``/``close``, and their async forms), and optionally enter a context
manager of the caller's (run attributes, a key of its own) inside it. So work done inside a step
(model requests, tools, member runs) nests under the span, and nothing of ours is current between
steps or after the consumer breaks out. The stream's own ``close``/``aclose`` runs in the context
too, so its ``finally`` blocks see the span.

These proxies do not end spans: :func:`~.streams.wrap_stream` does (it can wrap one of these).
"""

from __future__ import annotations

import functools
import inspect
from contextlib import contextmanager
from typing import Any, AsyncIterator, Callable, ContextManager, Iterable, Iterator, Mapping, Union

from opentelemetry import context as otel_context

from .run_context import pop_run_attributes, push_run_attributes

EnterStep = Callable[[], ContextManager[Any]]
"""``enter() -> context manager`` entered around each step, inside the attached context."""
StepContext = Union[otel_context.Context, Callable[[], otel_context.Context], None]
"""The context a step runs in: a fixed one, a function giving it at each step, or none."""


@contextmanager
def entered(ctx: otel_context.Context, run_attributes: Mapping[str, Any] | None = None) -> Iterator[None]:
    """``ctx`` attached and ``run_attributes`` (if any) pushed for the block, both undone on the way out in
    the reverse order: a step of ours run in a context other than the caller's (a server's request span
    parented on a remote context, an executor run in the request's context)."""
    token = otel_context.attach(ctx)
    try:
        with _pushed(run_attributes):
            yield
    finally:
        otel_context.detach(token)


def in_context(stream: Any, ctx: otel_context.Context, run_attributes: Mapping[str, Any] | None = None
               ) -> "AsyncStepIterator":
    """``stream``'s items, each produced with ``ctx`` attached and ``run_attributes`` pushed (an
    :class:`AsyncStepIterator`)."""
    return AsyncStepIterator(stream, ctx, (lambda: _pushed(run_attributes)) if run_attributes else None)


@contextmanager
def _pushed(run_attributes: Mapping[str, Any] | None) -> Iterator[None]:
    """``run_attributes`` (if any) pushed for the block."""
    token = push_run_attributes(run_attributes) if run_attributes else None
    try:
        yield
    finally:
        if token is not None:
            pop_run_attributes(token)


def _attach(ctx: StepContext) -> Any:
    if ctx is None:
        return None
    return otel_context.attach(ctx() if callable(ctx) else ctx)


def call_target(fn: Callable[..., Any]) -> Any:
    """What a call of ``fn`` runs, to tell a decorator its shape (sync, async, generator): ``fn`` itself for a
    function, method, ``partial`` or class; a callable object's ``__call__`` (a tool class with ``async def
    __call__`` returns a coroutine: a sync wrapper would end its span, or leave its run context, before it ran)."""
    if inspect.isroutine(fn) or isinstance(fn, (functools.partial, type)):
        return fn
    return getattr(fn, "__call__", fn)


class StepIterator:
    """A sync iterator (or generator) proxy whose steps run with ``ctx`` attached and inside ``enter()``.

    Args:
        source: an iterable; a generator's ``send``/``throw``/``close`` are proxied too.
        ctx: the OTel ``Context`` to attach around each step (e.g. ``span.context()``), a function
            returning the one to attach at each step (a context derived from the current one), or ``None``.
        enter: a context-manager factory entered around each step, or ``None``.
    """

    __slots__ = ("_it", "_ctx", "_enter")

    def __init__(self, source: Iterable[Any], ctx: StepContext = None, enter: EnterStep | None = None):
        self._it: Any = iter(source)
        self._ctx = ctx
        self._enter = enter

    def __iter__(self) -> "StepIterator":
        return self

    def _step(self, fn: Callable[..., Any], *args: Any) -> Any:
        token = _attach(self._ctx)
        try:
            if self._enter is None:
                return fn(*args)
            with self._enter():
                return fn(*args)
        finally:
            if token is not None:
                otel_context.detach(token)

    def __next__(self) -> Any:
        if self._enter is None and type(self._ctx) is otel_context.Context:  # the common case, one call less
            token = otel_context.attach(self._ctx)
            try:
                return next(self._it)
            finally:
                otel_context.detach(token)
        return self._step(next, self._it)

    def send(self, value: Any) -> Any:
        """``generator.send`` inside the step context."""
        return self._step(self._it.send, value)

    def throw(self, *args: Any) -> Any:
        """``generator.throw`` inside the step context."""
        return self._step(self._it.throw, *args)

    def close(self) -> None:
        """``close()`` of the source inside the step context (its ``finally`` blocks see it)."""
        close = getattr(self._it, "close", None)
        if close is not None:
            self._step(close)


class AsyncStepIterator:
    """An async iterator (or async generator) proxy whose steps run with ``ctx`` attached and inside
    ``enter()``; arguments as :class:`StepIterator` (``source`` an async iterable)."""

    __slots__ = ("_it", "_ctx", "_enter")

    def __init__(self, source: Any, ctx: StepContext = None, enter: EnterStep | None = None):
        self._it: AsyncIterator[Any] = source.__aiter__()
        self._ctx = ctx
        self._enter = enter

    def __aiter__(self) -> "AsyncStepIterator":
        return self

    async def _step(self, fn: Callable[..., Any], *args: Any) -> Any:
        token = _attach(self._ctx)
        try:
            if self._enter is None:
                return await fn(*args)
            with self._enter():
                return await fn(*args)
        finally:
            if token is not None:
                otel_context.detach(token)

    async def __anext__(self) -> Any:
        if self._enter is None and type(self._ctx) is otel_context.Context:
            token = otel_context.attach(self._ctx)
            try:
                return await self._it.__anext__()
            finally:
                otel_context.detach(token)
        return await self._step(self._it.__anext__)

    async def asend(self, value: Any) -> Any:
        """``agen.asend`` inside the step context."""
        return await self._step(self._it.asend, value)  # type: ignore[attr-defined]

    async def athrow(self, *args: Any) -> Any:
        """``agen.athrow`` inside the step context."""
        return await self._step(self._it.athrow, *args)  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        """``aclose()`` of the source inside the step context."""
        aclose = getattr(self._it, "aclose", None)
        if aclose is not None:
            await self._step(aclose)
