"""Where our spans are current, and which agent/team/model call of ours is innermost.

AutoGen's entry points are coroutines and async generators whose bodies run in
the caller's task at each ``await``/``__anext__``. A span's context is attached
around each step only (``_streams.SpanStream``), so the work inside a step (model
requests, tools, the runtime's message tasks a team starts) nests under the span,
and nothing of ours is current between the items a consumer receives.

The OTel context also carries the innermost span of ours per role under keys
of our own (``agent``, ``model``), so a method that calls its parent's
(``run`` → ``on_messages`` → ``on_messages_stream``, a client subclass calling
``super().create()``, a caching client around another) opens no second span.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context as otel_context

from ..._spans import SemanticSpan

AGENT = otel_context.create_key("otel_agents.autogen.agent")  # (id(agent or team), span, agent or team)
MODEL = otel_context.create_key("otel_agents.autogen.model")  # the model span open in this context


def context_of(span: SemanticSpan, key: Any = None, value: Any = None) -> otel_context.Context:
    """A context in which ``span`` is current (and ``key`` = ``value`` when a key is given)."""
    ctx = span.context()
    return otel_context.set_value(key, value, ctx) if key is not None else ctx


def current_owner() -> tuple[int, SemanticSpan, Any] | None:
    """``(id(instance), span, instance)`` of the innermost agent or team span of ours current here."""
    found = otel_context.get_value(AGENT)
    return found if isinstance(found, tuple) else None


def in_model_call() -> bool:
    """Whether a model span of ours is current (a nested ``create`` is part of the same request)."""
    span = otel_context.get_value(MODEL)
    return isinstance(span, SemanticSpan) and not span.ended
