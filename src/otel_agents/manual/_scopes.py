"""Run each step of a generator inside a context manager (the decorators' span,
the run context's attributes).

A ``with`` block around a whole generator would stay entered while the
consumer runs between two items, and leak into the consumer's context. These
proxies enter the context manager only while the generator's own code runs
(each ``next``/``send``/``throw``/``close``), so a decorated generator's body
sees its span (or run attributes) and the consumer never does.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, ContextManager, Iterator

EnterStep = Callable[[], ContextManager[Any]]


class StepIterator:
    """A generator proxy that runs the generator's code inside ``enter()``, step by step."""

    __slots__ = ("_gen", "_enter")

    def __init__(self, gen: Iterator[Any], enter: EnterStep):
        self._gen = gen
        self._enter = enter

    def __iter__(self) -> "StepIterator":
        return self

    def __next__(self) -> Any:
        with self._enter():
            return next(self._gen)

    def send(self, value: Any) -> Any:
        """``generator.send`` inside the step context."""
        with self._enter():
            return self._gen.send(value)  # type: ignore[attr-defined]

    def throw(self, *args: Any) -> Any:
        """``generator.throw`` inside the step context."""
        with self._enter():
            return self._gen.throw(*args)  # type: ignore[attr-defined]

    def close(self) -> None:
        """``generator.close`` inside the step context (its ``finally`` blocks see it)."""
        close = getattr(self._gen, "close", None)
        if close is not None:
            with self._enter():
                close()


class AsyncStepIterator:
    """An async-generator proxy that runs the generator's code inside ``enter()``, step by step."""

    __slots__ = ("_agen", "_enter")

    def __init__(self, agen: AsyncIterator[Any], enter: EnterStep):
        self._agen = agen
        self._enter = enter

    def __aiter__(self) -> "AsyncStepIterator":
        return self

    async def __anext__(self) -> Any:
        with self._enter():
            return await self._agen.__anext__()

    async def asend(self, value: Any) -> Any:
        """``agen.asend`` inside the step context."""
        with self._enter():
            return await self._agen.asend(value)  # type: ignore[attr-defined]

    async def athrow(self, *args: Any) -> Any:
        """``agen.athrow`` inside the step context."""
        with self._enter():
            return await self._agen.athrow(*args)  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        """``agen.aclose`` inside the step context."""
        aclose = getattr(self._agen, "aclose", None)
        if aclose is not None:
            with self._enter():
                await aclose()
