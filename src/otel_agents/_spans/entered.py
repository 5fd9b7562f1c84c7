"""What a reusable context manager entered, kept per context.

A context-manager object may be made once and entered by many at once: a
module-level ``BETA = using_tags(["beta"])`` that every request handler enters,
in its own asyncio task or thread. What ``__enter__`` made (a context token, an
opened span) must be what the same task's ``__exit__`` undoes: kept on the
object itself, one list for all, a task leaving first would undo another's
entry, leaving its own in place (its tag on every later span of that task).

An exit in a context that entered nothing (``__enter__`` on one thread, ``__exit__`` on another; an async
fixture set up in one task and torn down in another) still undoes an entry, so that a span opened ends: the
newest entry not yet undone, logged once (never raised into the application). What it cannot undo there (a
context token of the entering context) is left for that context's own exit, which is told the entry was undone
elsewhere (:meth:`EnteredStack.pop`) and then only detaches.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from contextvars import ContextVar
from typing import Any

from .finalisers import new_lock
from .guard import report_internal_error

MAX_OPEN = 10_000
"""The most entries of one object remembered for an exit in another context (beyond it the oldest are forgotten:
they are still undone by their own context's exit)."""


class EnteredStack:
    """A stack per context (thread, asyncio task): :meth:`push` on enter, :meth:`pop` on exit."""

    __slots__ = ("_var", "_open", "_undone", "_lock")

    def __init__(self) -> None:
        self._var: ContextVar[tuple[tuple[int, Any], ...]] = ContextVar("otel_agents_entered", default=())
        self._open: OrderedDict[int, Any] = OrderedDict()  # entry number → item, of entries not yet undone
        self._undone: OrderedDict[int, None] = OrderedDict()  # entries another context's exit undid
        self._lock = new_lock()

    def push(self, item: Any) -> None:
        """Note ``item`` (what an ``__enter__`` made) as this context's newest entry."""
        number = next(_NUMBERS)
        with self._lock:
            self._open[number] = item
            if len(self._open) > MAX_OPEN:
                self._open.popitem(last=False)
        self._var.set(self._var.get() + ((number, item),))

    def pop(self) -> tuple[Any, bool]:
        """``(item, first)``: the item this context pushed last, or, in a context that pushed nothing, the newest
        item of any context not yet popped (logged once); ``first`` is ``False`` when this context's item was
        popped by another context's exit already (what is left is what only this context can undo).

        Raises:
            IndexError: nothing was entered anywhere (an ``__exit__`` without any ``__enter__``).
        """
        stack = self._var.get()
        if stack:
            (number, item), rest = stack[-1], stack[:-1]
            self._var.set(rest)
            with self._lock:
                self._open.pop(number, None)
                first = number not in self._undone
                if not first:
                    del self._undone[number]
            return item, first
        with self._lock:
            if not self._open:
                raise IndexError("exit without a matching enter")
            number, item = self._open.popitem()
            self._undone[number] = None
            if len(self._undone) > MAX_OPEN:
                self._undone.popitem(last=False)
        report_internal_error("entered.exit_in_another_context", RuntimeError(
            "a context manager of otel_agents was exited in another thread or task than the one that entered it: "
            "its newest entry is undone there (its span ended); the entering context detaches at its own exit"))
        return item, True


_NUMBERS = itertools.count()
