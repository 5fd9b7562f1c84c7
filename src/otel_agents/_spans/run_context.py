"""Run-wide attributes (session, user, tags, metadata) that every span opened in a context carries.

The values live in a :class:`contextvars.ContextVar`, so they follow the code
into threads that copy the context and into asyncio tasks. The span layer reads
them when it opens a span; a span opened with an explicit parent from another
thread inherits them from that parent (callback-style frameworks).
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any, Mapping

_RUN_ATTRIBUTES: ContextVar[Mapping[str, Any]] = ContextVar("otel_agents_run_attributes", default={})


def current_run_attributes() -> Mapping[str, Any]:
    """The run-wide attributes of the current context (OTel-legal values)."""
    return _RUN_ATTRIBUTES.get()


def push_run_attributes(attrs: Mapping[str, Any]) -> Token:
    """Add ``attrs`` to the current context's run attributes; undo with :func:`pop_run_attributes`."""
    merged = dict(_RUN_ATTRIBUTES.get())
    merged.update(attrs)
    return _RUN_ATTRIBUTES.set(merged)


def pop_run_attributes(token: Token) -> None:
    """Restore the run attributes that were current before the matching push."""
    _RUN_ATTRIBUTES.reset(token)
