"""Agent spans that stand for a remote agent, so the protocol instrumentation of the call enriches them.

A framework's own proxy for a remote agent (Google ADK's ``RemoteA2aAgent``) already gets an
``agent`` span from the framework's instrumentor; the A2A client call made inside it is the same
step. The framework's instrumentor marks that span (:func:`mark_remote_agent`); the protocol's
instrumentor, finding it current, adds its attributes to it instead of opening a second agent span
(:func:`claim_remote_agent`). Weak references only: bookkeeping ends with the spans.
"""

from __future__ import annotations

import contextvars
import weakref

from opentelemetry import trace

from ..semconv import Kind
from .span import SemanticSpan, semantic_span_for

_MARKED: "weakref.WeakSet[SemanticSpan]" = weakref.WeakSet()
# The marked span of this context: callback frameworks (ADK's plugin hooks) open agent spans without
# making them current, but call the hook in the context the agent then runs in.
_LATEST: contextvars.ContextVar["weakref.ref[SemanticSpan] | None"] = contextvars.ContextVar(
    "otel_agents_remote_agent", default=None)


def mark_remote_agent(span: SemanticSpan) -> None:
    """Mark an ``agent`` span as the local stand-in of a remote agent (called by a framework's instrumentor,
    in the context the agent runs in)."""
    if span.kind is Kind.AGENT:
        _MARKED.add(span)
        _LATEST.set(weakref.ref(span))


def claim_remote_agent() -> SemanticSpan | None:
    """The marked agent span of this run — current (or the direct parent of the current span), else the one
    marked in this context — once: it is unmarked, so a second call inside the same agent run opens a span
    of its own. ``None`` when there is none, or it has ended."""
    found = semantic_span_for(trace.get_current_span())
    if found is None or found not in _MARKED:
        ref = _LATEST.get()
        found = ref() if ref is not None else None
    if found is None or found.ended or found not in _MARKED:
        return None
    _MARKED.discard(found)
    return found
