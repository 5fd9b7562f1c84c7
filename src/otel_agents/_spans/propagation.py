"""Trace context across a protocol's own carrier: the switch, inject and extract, run attributes in baggage.

Shared by the protocol instrumentors (MCP's ``params._meta``, A2A's service parameters): each
carries the W3C ``traceparent``, ``tracestate`` and ``baggage`` (whatever the configured
propagators write, ``OTEL_PROPAGATORS``) in a string map of its own, and each has an off switch
(an environment variable read per request, overridden by ``instrument(propagate=...)``).

The run's ``session.id`` and ``user.id`` (:mod:`otel_agents.context`) travel as W3C baggage
entries of the same names when the caller set them and the baggage does not already carry them,
so the remote process's spans carry the caller's session and user (:func:`run_attributes_of`).
"""

from __future__ import annotations

from typing import Any, Mapping

from opentelemetry import baggage, propagate, trace
from opentelemetry import context as otel_context

from ..semconv import attributes as A
from .run_context import current_run_attributes
from .settings import flag_from_env, getenv

PROPAGATION_KEYS = ("traceparent", "tracestate", "baggage")
"""The W3C Trace Context and Baggage keys (lower case), the ones a switched-off client removes."""

RUN_BAGGAGE_KEYS = (A.SESSION_ID, A.USER_ID)
"""Run attributes that travel as baggage entries of the same name."""



def propagating(override: bool | None, env_var: str) -> bool:
    """Whether trace context travels: ``override`` (an instrumentor's ``propagate=``) when given,
    else ``env_var`` (read per call; ``false``/``0``/``no``/``off`` switch it off, ``true``/``1``/``yes``/``on``
    or unset leave it on; any other value leaves it on and is logged once as a warning), default on."""
    if override is not None:
        return override
    return flag_from_env(env_var, getenv(env_var), True,
                         "trace context still travels (false, 0, no or off switch it off)")


def inject(ctx: otel_context.Context | None = None) -> dict[str, str]:
    """The carrier entries for ``ctx`` (default: the current context) from the configured propagators,
    with the current run's ``session.id``/``user.id`` added to the baggage (see module docstring).
    Empty when the propagators write nothing (``OTEL_PROPAGATORS=none``)."""
    ctx = ctx if ctx is not None else otel_context.get_current()
    run = current_run_attributes()
    for key in RUN_BAGGAGE_KEYS:
        value = run.get(key)
        if isinstance(value, str) and value and baggage.get_baggage(key, ctx) is None:
            ctx = baggage.set_baggage(key, value, ctx)
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=ctx)
    return carrier


def extract(carrier: Mapping[str, Any]) -> otel_context.Context | None:
    """The context a carrier holds (remote parent and baggage), or ``None`` without a ``traceparent``.
    Keys are matched case-insensitively (HTTP headers, gRPC metadata)."""
    fields = {str(k).lower(): v for k, v in carrier.items() if isinstance(v, str)}
    fields = {k: fields[k] for k in PROPAGATION_KEYS if k in fields}
    if "traceparent" not in fields:
        return None
    return propagate.extract(fields)


def server_parent(remote: otel_context.Context | None) -> otel_context.Context:
    """The parent context of a server span for a request whose carrier held ``remote`` (:func:`extract`).

    ``remote``, unless the current span is the remote caller's own child: an HTTP server span of this very
    request, made by a transport instrumentation from the same headers (OpenTelemetry's ASGI, Starlette or
    FastAPI instrumentation). Ours is then that span's child, as a handler's span is under its HTTP server
    span, not its sibling. Without ``remote``, the ambient context. Any other current span, even of the same
    trace (a server started inside the caller's application span, in-process), is never taken for the
    caller's: its parent is not the caller's span. The current span's parent is the SDK span's ``parent``
    (a ``SpanContext``); a span without one is not taken.
    """
    ambient = otel_context.get_current()
    if remote is None:
        return ambient
    caller = trace.get_current_span(remote).get_span_context()
    above = getattr(trace.get_current_span(ambient), "parent", None)
    if above is not None and above.span_id == caller.span_id and above.trace_id == caller.trace_id \
            and caller.is_valid:
        return ambient
    return remote


def run_attributes_of(ctx: otel_context.Context | None) -> dict[str, str]:
    """The run attributes (``session.id``, ``user.id``) an extracted context's baggage carries."""
    if ctx is None:
        return {}
    found = {}
    for key in RUN_BAGGAGE_KEYS:
        value = baggage.get_baggage(key, ctx)
        if isinstance(value, str) and value:
            found[key] = value
    return found
