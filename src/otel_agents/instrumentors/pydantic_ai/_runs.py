"""The spans of one agent run, and the bounded run-id index the stream hooks find them by.

A run's agent span can end three ways, whichever comes first: the run itself
returns (``wrap_run``), a streamed result completes (PydanticAI only returns
from ``wrap_run`` at the stream's ``__aexit__``/``__exit__``), or a streamed
result is abandoned. :meth:`RunSpans.finish` ends the model spans still open
under the run first (a child never outlives its parent), then the agent span,
exactly once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from pydantic_ai.exceptions import SkipModelRequest
from pydantic_ai.tools import DeferredToolRequests

from ..._spans.finalisers import new_lock
from ..._spans import SemanticSpan, SpanRegistry, Telemetry, guard, report_internal_error
from ...semconv import Kind
from . import _convert

_UNSET: Any = object()
NATIVE_SCOPE = "pydantic-ai"
"""The instrumentation scope of pydantic-ai's own spans."""


def parent_context() -> otel_context.Context | None:
    """Where to open our next span: the current context, stepping over a pydantic-ai span.

    With pydantic-ai's own instrumentation on, its span is often the current one
    (``chat …`` inside our run). Opening ours under its parent instead keeps our
    tree whole when the user sends pydantic-ai's spans to another provider, and
    gives the same tree whether they do or not. Application spans are kept, and
    so is a pydantic-ai root span (a new root would split the trace in two).
    """
    current = trace.get_current_span()
    scope = getattr(current, "instrumentation_scope", None)
    if getattr(scope, "name", None) != NATIVE_SCOPE:  # (its parent read only then: a property of the SDK's span)
        return None
    parent = getattr(current, "parent", None)
    if parent is None:
        return None
    return trace.set_span_in_context(trace.NonRecordingSpan(parent))


def is_paused_output(output: Any) -> bool:
    """Whether a run's output says it stopped for deferred or approval-required tool calls."""
    return isinstance(output, DeferredToolRequests)


def record_response(span: SemanticSpan, response: Any) -> None:
    """Fill a model span from a ``ModelResponse``: response model and id, output message, usage.

    Response model and usage are recorded even on a span that does not record
    (the GenAI metrics of a sampled-out span use them); the output message is
    converted only when content is recorded, else only its finish reason is kept.
    """
    if response is None:
        return
    # (not `with guard(...)`, two calls more each: every model request runs these)
    try:
        span.set_model(response_model=response.model_name, provider=response.provider_name,
                       response_id=response.provider_response_id)
    except Exception as exc:  # noqa: BLE001 - as guard() does
        report_internal_error("pydantic_ai.model_response", exc)
    try:
        if span.records_content:
            span.set_messages(output=[_convert.response_message(response)])
        elif response.finish_reason:
            span.set_finish_reasons([response.finish_reason])
    except Exception as exc:  # noqa: BLE001 - as guard() does
        report_internal_error("pydantic_ai.model_output", exc)
    try:
        span.set_usage(_convert.model_usage(response.usage))
    except Exception as exc:  # noqa: BLE001 - as guard() does
        report_internal_error("pydantic_ai.model_usage", exc)
    if getattr(response, "state", None) in ("incomplete", "interrupted"):  # the consumer stopped the stream early
        span.mark_abandoned()


def end_model(span: SemanticSpan, request_context: Any, response: Any = None, *,
              error: BaseException | None = None, abandoned: bool = False) -> None:
    """Fill and end a model span (once): the request's messages and settings, then the response.

    A cancellation (a stream left early) marks the span abandoned, not failed;
    ``SkipModelRequest`` from another capability is control flow.
    """
    if span.ended:
        return
    try:  # (not `with guard(...)`, as in record_response)
        if span.records_content:  # the whole history is converted: only when it will be recorded
            messages, instructions = _convert.chat_messages(request_context.messages)
            tools = _convert.tool_definitions(getattr(request_context, "model_request_parameters", None))
            span.set_messages(input=messages, system=instructions, tools=tools)
    except Exception as exc:  # noqa: BLE001 - as guard() does
        report_internal_error("pydantic_ai.model_input", exc)
    record_response(span, response)
    cancelled = isinstance(error, asyncio.CancelledError)
    if abandoned or cancelled:
        span.mark_abandoned()
    if error is not None:
        span.record_error(error, control_flow=cancelled or isinstance(error, SkipModelRequest))
    span.end()


class RunSpans:
    """One run's agent span and the model spans open under it.

    Attributes:
        span: the ``agent`` span.
        run_id: PydanticAI's run id (the index key), or ``None``.
        models: ``(span, request_context)`` of the model requests not yet ended.
    """

    def __init__(self, tracker: "RunTracker", span: SemanticSpan, run_id: str | None):
        self.tracker = tracker
        self.span = span
        self.run_id = run_id
        # Each open model span, its request context and when it was asked (time.perf_counter(): PydanticAI's
        # clock for the first chunk of a streamed response, see first_chunk_stamp).
        self.models: list[tuple[SemanticSpan, Any, float]] = []
        self.billed: dict[SemanticSpan, Any] = {}  # an open model span → the response its provider billed so far
        self.stop_reason_of: Any = None  # ``exc -> stop reason | None`` (the run's limits: :func:`limit_stop_reason`)
        self._lock = new_lock()
        self._done = False

    def limit_reached(self, error: BaseException | None) -> str | None:
        """The stop reason when ``error`` is a limit of the run stopping it (``UsageLimitExceeded``), else ``None``."""
        if error is None or self.stop_reason_of is None:
            return None
        with guard("pydantic_ai.stop_reason"):
            return self.stop_reason_of(error)
        return None

    def stopped(self, error: BaseException) -> None:
        """The run ends with ``error``: the agent span's stop reason if a limit of the run raised it (whichever path
        ends the span: the run's own end, a consumed stream's, a sync stream's iterator)."""
        reason = self.limit_reached(error)
        if reason is not None and not self.span.ended:
            self.span.set_stop_reason(reason)

    @property
    def done(self) -> bool:
        """Whether :meth:`finish` has run."""
        return self._done

    def finish(self, *, output: Any = _UNSET, error: BaseException | None = None,
               abandoned: bool = False, response: Any = None, first_chunk: float | None = None) -> None:
        """End the run's open model spans, then its agent span (once; later calls do nothing).

        Args:
            output: the run's output (recorded as the span's output; deferred tool
                requests also mark the run paused).
            error: the exception the run ended with (an error unless ``abandoned``).
            abandoned: the run was cancelled or its stream left unconsumed.
            response: the last ``ModelResponse`` of a streamed run, for the model
                span still open (streamed requests return only at ``__aexit__``).
            first_chunk: when that response's first chunk came (:func:`first_chunk_stamp`).
        """
        if not self._claim():
            return
        with guard("pydantic_ai.run_finish"):
            # a limit stopping the run is the run's end, not a failure of the request it stopped (abandoned by it)
            self.close_models(response, abandoned=abandoned,
                              error=None if abandoned or self.limit_reached(error) else error, first_chunk=first_chunk)
            span = self.span
            if output is not _UNSET:
                span.set_output(output)
                if is_paused_output(output):
                    span.mark_paused()
            if abandoned:
                span.mark_abandoned()
                if error is not None:
                    span.record_error(error, control_flow=True)
            elif error is not None:
                self.stopped(error)
                span.record_error(error)
        self.span.end()
        self.tracker.forget(self)

    def hand_over(self, response: Any = None, *, abandoned: bool = False, first_chunk: float | None = None) -> None:
        """Close the open model spans and leave the agent span to a stream wrapper that ends it itself."""
        if self._claim():
            self.close_models(response, abandoned=abandoned, first_chunk=first_chunk)
            self.tracker.forget(self)

    def _claim(self) -> bool:
        with self._lock:
            if self._done:
                return False
            self._done = True
            return True

    def close_models(self, response: Any = None, *, abandoned: bool = False,
                     error: BaseException | None = None, first_chunk: float | None = None) -> None:
        """End the model spans still open (a streamed request cut short or completed early, or failed with
        the run: ``error``). ``first_chunk``: when the streamed response's first chunk came (perf_counter), for
        the last request (the one streamed): the run ends its span before PydanticAI hands its time to first
        chunk over (:meth:`~._capability._Request.capture`)."""
        models, self.models = list(self.models), []
        if first_chunk is not None and models and first_chunk >= models[-1][2]:
            models[-1][0].set_time_to_first_chunk(first_chunk - models[-1][2])
        for span, request_context, _asked in models:
            billed = self.billed.pop(span, None)
            end_model(span, request_context, response if response is not None else billed, error=error,
                      abandoned=abandoned)


class RunTracker:
    """Open runs by PydanticAI run id, for the hooks that only see a result object.

    Bounded by a :class:`~otel_agents._spans.SpanRegistry`; an entry leaves when
    its run's agent span ends. No age limit: every run ends through ``wrap_run``
    (pydantic-ai guarantees it, at the latest when a stream is cleaned up), and an
    agent may legitimately run for hours; the size cap guards against leaks.
    """

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry
        self.registry = SpanRegistry(max_age_s=float("inf"))

    def start(self, name: str, run_id: str | None) -> RunSpans:
        """Open the agent span of a run (current context as parent) and index it by ``run_id``."""
        span = self.telemetry.start_span(Kind.AGENT, name, parent=parent_context())
        run = RunSpans(self, span, run_id)
        if run_id and self.registry.get(run_id) is None:  # a reused run id keeps the first run's entry
            self.registry.put(run_id, span, run)
        return run

    def find(self, run_id: str | None) -> RunSpans | None:
        """The open run with this id, or ``None``."""
        run = self.registry.get_extra(run_id) if run_id else None
        return run if isinstance(run, RunSpans) and not run.done else None

    def forget(self, run: RunSpans) -> None:
        """Drop a finished run from the index."""
        if run.run_id and self.registry.get_extra(run.run_id) is run:
            self.registry.pop(run.run_id)

    def __len__(self) -> int:
        return len(self.registry)


def first_chunk_stamp(result: Any) -> float | None:
    """When the first chunk of a streamed run's last response reached its consumer: PydanticAI's own stamp
    (``StreamedResponse._first_chunk_monotonic``, ``time.perf_counter()``), read through the private path from a
    ``StreamedRunResult``/``StreamedRunResultSync``; ``None`` when nothing streamed or on a release without it."""
    result = getattr(result, "_streamed_run_result", result)  # the sync result wraps the async one
    stream = getattr(result, "_stream_response", None)
    stamp = getattr(getattr(stream, "_raw_stream_response", None), "_first_chunk_monotonic", None)
    return stamp if type(stamp) is float else None
