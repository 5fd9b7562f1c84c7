"""What a reusable context manager entered, kept per context.

A context-manager object may be made once and entered by many at once: a
module-level ``BETA = using_tags(["beta"])`` that every request handler enters,
in its own asyncio task or thread. What ``__enter__`` made (a context token, an
opened span) must be what the same task's ``__exit__`` undoes: kept on the
object itself, one list for all, a task leaving first would undo another's
entry, leaving its own in place (its tag on every later span of that task).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any


class EnteredStack:
    """A stack per context (thread, asyncio task): :meth:`push` on enter, :meth:`pop` on exit."""

    __slots__ = ("_var",)

    def __init__(self) -> None:
        self._var: ContextVar[tuple[Any, ...]] = ContextVar("otel_agents_entered", default=())

    def push(self, item: Any) -> None:
        self._var.set(self._var.get() + (item,))

    def pop(self) -> Any:
        """The item this context pushed last.

        Raises:
            IndexError: this context entered nothing (an ``__exit__`` without its ``__enter__``).
        """
        stack = self._var.get()
        if not stack:
            raise IndexError("exit without a matching enter in this context")
        self._var.set(stack[:-1])
        return stack[-1]
