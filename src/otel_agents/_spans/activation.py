"""Making a span current around a block: :class:`Activation`, the one context manager behind every
"with this span current" (:meth:`SemanticSpan.activate`, :meth:`Telemetry.span`, the instrumentors' own)."""

from __future__ import annotations

from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span

from .guard import report_internal_error


class Activation:
    """``with Activation(span):`` makes ``span`` current around the body.

    On the way out the context it attached is detached, whether the body returned or raised; the body's
    exception goes on unchanged, and the span is neither ended nor given the error (:meth:`Telemetry.span`'s
    scope, a subclass, does both). A detach that cannot be done here (an exit on another thread or task
    than the enter, a second exit) is logged once (WARNING with the traceback, then DEBUG), never raised.
    In a coroutine the activation is the task's own (OTel's context is a ``contextvars`` one). One ``with``
    at a time per instance: the attach's token is one slot, so a nested activation is a new instance
    (``span.activate()`` again). A plain class, not a ``@contextmanager`` generator: it runs around every
    model request and tool call.

    Args:
        span: the OTel span made current.
        entered: what ``with ... as x`` gives; ``None`` = ``span``.
        context: the OTel ``Context`` to attach, one in which ``span`` is current (and which carries
            a key of the caller's too); ``None`` = the context current at ``__enter__``, with ``span`` set in it.
    """

    __slots__ = ("span", "entered", "context", "_token")

    def __init__(self, span: Span, entered: Any = None, context: otel_context.Context | None = None):
        self.span = span
        self.entered = span if entered is None else entered
        self.context = context

    def __enter__(self) -> Any:
        ctx = self.context
        self._token = otel_context.attach(trace.set_span_in_context(self.span) if ctx is None else ctx)
        return self.entered

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        try:
            _detach(self._token)
        except Exception as error:  # noqa: BLE001
            report_internal_error("span.detach", error)
        return False  # the body's exception, if any, goes on unchanged


# The runtime context's own `detach`, which OTel's public `detach` calls: that one logs an ERROR with a
# traceback at every failure (a token of another thread's or task's context, one used already: a stream
# finalised elsewhere, at every step) into the user's logs, where a failure of ours is logged once. A private
# name of opentelemetry-api (1.x): an API without it gets the public call (tests/test_span_activation.py).
_runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
_detach = getattr(_runtime, "detach", None) or otel_context.detach


def settle_context(before: otel_context.Context, attached: tuple = ()) -> None:
    """After a framework called several instrumentations' start and end hooks around one call, put ``before``
    (the context current when the call began) back as current when what the hooks left current is stale: one of
    ``attached`` (contexts a hook made current for this call), or any context whose span has ended.

    Why: a framework that calls every handler's start hook and then every end hook in the same order (LlamaIndex's
    dispatcher; LangChain's callback manager too, where our handler attaches nothing) makes two handlers that each
    attach and detach their span undo each other's detach: the second restores the first's context, so an ended
    span stays current after the call (and parents whatever comes next). A live span another piece of code made current is left alone. No token: the
    context is set back as it was, and nothing detaches it later (OTel's context is a ``contextvars`` one)."""
    now = otel_context.get_current()
    if now is before:
        return
    span = trace.get_current_span(now)
    stale = any(now is ctx for ctx in attached) or (
        span is not trace.get_current_span(before) and span.get_span_context().is_valid and _ended(span))
    if stale:
        otel_context.attach(before)


def _ended(span: Span) -> bool:
    """Whether ``span`` is an SDK span that has ended (a span of any other kind is never taken for one)."""
    end_time = getattr(span, "end_time", None)  # ReadableSpan's; None while open
    return end_time is not None and not span.is_recording()
