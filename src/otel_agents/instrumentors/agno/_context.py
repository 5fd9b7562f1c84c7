"""Iterators that make a span current only while they are advanced, and the errors Agno swallows.

Agno's streaming entry points (``Agent.run(stream=True)``, a generator tool
such as a team's ``delegate_task_to_member``) return generators whose bodies
run at each ``next()``, in the consumer's context. :func:`in_context` runs
each step with the span's context attached (the span layer's
:class:`~otel_agents._spans.StepIterator`), so work done inside the step (model
requests, tools, member runs) nests under the span, and nothing of ours is
current between steps or after a consumer breaks out.
"""

from __future__ import annotations

import weakref
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from ..._spans import Activation, AsyncStepIterator, SemanticSpan, StepIterator, in_forked_child, probes

NATIVE_SCOPE_PREFIX = "openinference.instrumentation.agno"
"""The instrumentation scope of the spans ``agno.tracing.setup_tracing()`` makes (OpenInference's Agno instrumentation)."""

# The innermost span of ours made current, carried in the OTel context (so it survives Agno's own spans
# being made current in between).
_OURS = otel_context.create_key("otel_agents.agno.span")


def context_of(span: SemanticSpan) -> otel_context.Context:
    """A context in which ``span`` is current (and known as ours)."""
    return otel_context.set_value(_OURS, span, span.context())


def activate(span: SemanticSpan) -> Activation:
    """``with activate(span):`` makes ``span`` current around the body, known as ours (:func:`context_of`)."""
    return Activation(span.span, span, context_of(span))


def parent() -> Any:
    """Where to open our next span: ``None`` (the current context) unless the current span is one of
    Agno's own tracing spans; then our innermost span, or a new root when none of ours is open — so no
    span of ours has a parent our exporter never receives, and our tree is the same with Agno's tracing on or off."""
    current = trace.get_current_span()
    scope = getattr(getattr(current, "instrumentation_scope", None), "name", None) or ""
    if not scope.startswith(NATIVE_SCOPE_PREFIX):
        return None
    ours = otel_context.get_value(_OURS)
    if isinstance(ours, SemanticSpan) and not ours.ended:
        return ours
    return trace.set_span_in_context(trace.INVALID_SPAN)


# The exception that made a step fail, by the run span it belongs to: Agno catches a failed model
# request and returns a RunOutput with status "error", so the run span learns the cause from its child.
_LAST_ERROR: "weakref.WeakKeyDictionary[SemanticSpan, BaseException]" = weakref.WeakKeyDictionary()


# Run spans whose answer a post-hook (an output guardrail) rejected with ``OutputCheckError``: Agno still
# returns that answer as the failed run's content; it is not the run's output.
_BLOCKED: "weakref.WeakSet[SemanticSpan]" = weakref.WeakSet()


def innermost() -> SemanticSpan | None:
    """Our innermost span current now (open), if any."""
    ours = otel_context.get_value(_OURS)
    return ours if isinstance(ours, SemanticSpan) and not ours.ended else None


def block(span: SemanticSpan, exc: BaseException) -> None:
    """``span``'s run was stopped by ``exc`` (``OutputCheckError``) from a post-hook: stop reason ``guardrail``,
    ``exc`` its cause, and its answer not its output (see :func:`blocked`)."""
    span.set_stop_reason("guardrail")
    _BLOCKED.add(span)
    _LAST_ERROR[span] = exc


def blocked(span: SemanticSpan) -> bool:
    """Whether a post-hook rejected ``span``'s answer (:func:`block`)."""
    return span in _BLOCKED


# Spans under which a run ended cancelled: a workflow step whose agent's run was cancelled gets from Agno a failed
# ``StepOutput`` (``success=False``, the cancellation notice as its error), not an exception: it was stopped too.
_CANCELLED_UNDER: "weakref.WeakSet[SemanticSpan]" = weakref.WeakSet()


def cancelled_under(span: SemanticSpan | None) -> None:
    """A run directly under ``span`` ended cancelled."""
    if span is not None:
        _CANCELLED_UNDER.add(span)


def had_cancelled_run(span: SemanticSpan) -> bool:
    """Whether a run directly under ``span`` ended cancelled (see :func:`cancelled_under`)."""
    return span in _CANCELLED_UNDER


def stopped(exc: BaseException) -> bool:
    """Whether ``exc`` stopped a step rather than failed it (recorded as control flow): a cancellation of the task
    (``asyncio.CancelledError``, any ``BaseException`` that is not an ``Exception``) or Agno's own
    ``RunCancelledException`` (``cancel_run``: a member or step run of a cancelled team or workflow raises it)."""
    return not isinstance(exc, Exception) or any(c.__name__ == "RunCancelledException" and
                                                 c.__module__.startswith("agno") for c in type(exc).__mro__)


def remember_error(span: SemanticSpan, exc: BaseException) -> None:
    """Tell ``span``'s semantic parent (and its ancestors) which exception a step of it failed with."""
    parent = span.parent
    while parent is not None:
        if parent not in _LAST_ERROR:
            _LAST_ERROR[parent] = exc
        parent = parent.parent


def last_error(span: SemanticSpan) -> BaseException | None:
    """The first exception a step under ``span`` failed with, if any (consumed)."""
    return _LAST_ERROR.pop(span, None)


def in_context(iterator: Any, span: SemanticSpan) -> Any:
    """``iterator`` (sync or async) whose steps run with ``span`` current (and known as ours)."""
    ctx = context_of(span)
    return AsyncStepIterator(iterator, ctx) if probes.is_async_iterator(iterator) else StepIterator(iterator, ctx)


# The streams of ours open now (a model request's, a run's), with their spans: weak, so a stream that
# ends and is dropped leaves. When a run's stream is abandoned, the streams under it are ended too. None in a
# forked child: the parent's streams are the parent's to end.
_STREAMS: "weakref.WeakKeyDictionary[Any, SemanticSpan]" = weakref.WeakKeyDictionary()
in_forked_child(_STREAMS.clear)


def track_stream(stream: Any, span: SemanticSpan) -> Any:
    """Remember ``stream`` (a :func:`~otel_agents._spans.wrap_stream` proxy) as ``span``'s; returns it."""
    _STREAMS[stream] = span
    return stream


def abandon_streams_under(run: SemanticSpan) -> None:
    """End, as abandoned, every open stream of ours whose span is below ``run``, innermost first.

    A consumer that leaves a run's async stream (``aclose()`` or ``break``) closes Agno's generator,
    but the generators it was iterating (a member's run, the model request's stream) are only
    finalised when the event loop gets round to them: their spans would end after the run's, or never.
    """
    below = []
    for stream, span in list(_STREAMS.items()):
        depth, cur = 0, span.parent
        while cur is not None and cur is not run:
            depth, cur = depth + 1, cur.parent
        if cur is run and not span.ended:
            below.append((depth, stream))
    for _, stream in sorted(below, key=lambda pair: -pair[0]):
        abandon = getattr(type(stream), "abandon", None)
        if abandon is not None:
            abandon(stream)
