"""Run-wide attributes (session, user, tags, metadata) that every span opened in a context carries.

The values live in a :class:`contextvars.ContextVar`, so they follow the code
into threads that copy the context and into asyncio tasks. The span layer reads
them when it opens a span; a span opened with an explicit parent from another
thread inherits them from that parent (callback-style frameworks).
"""

from __future__ import annotations

import json
from contextvars import ContextVar, Token
from typing import Any, Mapping

from ..semconv import attributes as A
from .encoding import dumps, fit_json, to_jsonable

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


def merged_metadata(metadata: Mapping[str, Any]) -> dict[str, str]:
    """The run attribute ``metadata`` (OpenInference: a JSON object as text) of the current context updated
    with ``metadata`` (inner keys win; any values, through the safe encoder), cut to the content budget with
    the JSON kept valid: what ``using_metadata`` and a framework's own run metadata (the OpenAI Agents SDK's
    ``trace_metadata``) push. The application's labels, not captured content: written with content off too,
    as OpenInference's ``TraceConfig`` never masks ``metadata`` and the Agents SDK's
    ``trace_include_sensitive_data`` does not cover it."""
    from .settings import Settings  # late: settings reads the environment; this module is imported first

    merged: dict[str, Any] = {}
    outer = current_run_attributes().get(A.METADATA)
    if outer:
        try:
            parsed = json.loads(outer)
            if isinstance(parsed, dict):
                merged.update(parsed)
        except ValueError:
            pass
    merged.update(to_jsonable(dict(metadata)))
    text, _ = fit_json(merged, dumps(merged), Settings().content_budget())
    return {A.METADATA: text}
