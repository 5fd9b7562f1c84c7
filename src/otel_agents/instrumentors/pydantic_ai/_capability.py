"""Our PydanticAI capability: one ``agent`` span per run, one ``model`` span per request, one ``tool`` span per call.

PydanticAI's public hooks (``wrap_run``, ``wrap_model_request``,
``wrap_tool_execute``, ``on_tool_validate_error``) see each of these exactly
once, in the task that runs it, whether or not PydanticAI's own instrumentation
(itself a capability, id ``instrumentation``) is on. One instance serves every
run of an installation (called by :class:`ObservedCapabilities`, the agent's own
capabilities with our hooks on their combination, or a run's capability: see
:mod:`._wiring`), so a run's state is not on it but in the run's context:
``wrap_run`` sets the run (PydanticAI carries what ``wrap_run`` sets into the
run's body, as it does the current span) and ``wrap_model_request`` the request
in flight, for the hooks inside them.

Every span is opened in the current context, stepping over a pydantic-ai span
(:func:`~._runs.parent_context`), made current around the work it covers (tools
see their span, sync tools in worker threads too), and ended whatever happens;
the user's result or exception passes through unchanged. Under OTel's
``suppress_instrumentation()`` a hook opens nothing and only calls through;
message and argument conversion is done only for spans that record content.
"""

from __future__ import annotations

import asyncio
import time
from contextvars import ContextVar
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Any, ClassVar

from opentelemetry import trace
from pydantic_ai.capabilities import AbstractCapability, CombinedCapability
from pydantic import ValidationError
from pydantic_ai.exceptions import (ApprovalRequired, CallDeferred, FallbackExceptionGroup, ModelRetry, RunCancelled,
                                    RunTimedOut, SkipToolExecution, ToolRetryError, UnexpectedModelBehavior)

from ..._spans import SemanticSpan, guard, instrumentation_enabled, report_internal_error, semantic_span_for
from ..._spans.address import server_attributes
from ...semconv import Kind
from ...semconv import attributes as A
from . import _convert
from ._runs import RunSpans, RunTracker, end_model, parent_context

CAPABILITY_ID = "otel_agents"
"""Distinct from PydanticAI's ``instrumentation``: capabilities sharing an id are merged into one."""

_DEFERRALS = (CallDeferred, ApprovalRequired)
_REJECTIONS = (ValidationError, ModelRetry, ToolRetryError)


def is_rejected_output(exc: BaseException) -> bool:
    """Whether ``exc`` is ``run_stream()``'s ``UnexpectedModelBehavior`` for a final output PydanticAI rejected
    (raised from the rejection: "retries are not supported in run_stream()"), which it cannot ask again for."""
    return isinstance(exc, UnexpectedModelBehavior) and isinstance(exc.__cause__, _REJECTIONS)


REJECTED_OUTPUT = "validate_output"
"""The name of the failed ``chain`` step a rejected output gets (then the model is asked again)."""

_OFF: Any = object()
"""The run in context is not ours (started under ``suppress_instrumentation()``, after ``uninstrument()``, or
a realtime session): the hooks inside it only call through."""
_current_run: ContextVar[Any] = ContextVar("otel_agents_pydantic_ai_run", default=None)
"""The run whose body this is: its :class:`RunSpans`, ``None`` if its agent span did not open, or :data:`_OFF`."""
_current_request: ContextVar[Any] = ContextVar("otel_agents_pydantic_ai_request", default=None)
"""The model request in flight (a :class:`_Request`), for the hooks PydanticAI calls inside it."""


def _reset(var: ContextVar, token: Any) -> None:
    try:
        var.reset(token)
    except ValueError:  # a coroutine closed in another context (by garbage collection): nothing of ours is current
        pass


def _is_run_control_flow(exc: BaseException) -> bool:
    return isinstance(exc, RunCancelled) and not isinstance(exc, RunTimedOut)


@dataclass(eq=False)
class _Request:
    """One model request in flight: its span once the model is asked, that span's activation, and the response
    its provider billed (PydanticAI hands it over before a hook can reject it or a stream's consumer stops it)."""

    owner: "OtelAgentsCapability"
    context: Any
    run: RunSpans | None
    span: SemanticSpan | None = None
    active: Any = None
    billed: Any = None

    def open(self, attempt: Any) -> Any:
        """The model is asked (``attempt``: the request as prepared for it): the span opens on the first attempt
        (further ones stay in it) and is current for the model call."""
        if self.span is None:
            try:  # not `with guard(...)` (two calls more), here and on the other paths every request or tool call runs
                self.span = self.owner._start_model(attempt, self.context, self.run)
                if self.span is not None:
                    self.active = self.span.activate()
                    self.active.__enter__()
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("pydantic_ai.model_open", exc)
        return attempt

    def capture(self, response: Any, time_to_first_chunk: Any = None) -> None:
        """PydanticAI's billed ``response`` and, for a streamed one, its time to the first chunk (seconds from
        the request, on PydanticAI's monotonic clock; ``None`` when nothing streamed)."""
        self.billed = response  # None: a hook moved the request on to another attempt
        if time_to_first_chunk is not None and self.span is not None:
            self.span.set_time_to_first_chunk(time_to_first_chunk)

    def deactivate(self) -> None:
        if self.active is not None:
            try:
                self.active.__exit__(None, None, None)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("pydantic_ai.model_deactivate", exc)
            self.active = None

    def close(self, capability: "OtelAgentsCapability", response: Any = None,
              error: BaseException | None = None) -> None:
        self.deactivate()
        if self.span is not None:
            capability._end_model(self.span, self.context, self.run,
                                  response if response is not None else self.billed, error=error)


@dataclass(eq=False)
class OtelAgentsCapability(AbstractCapability[Any]):
    """Opens our spans from PydanticAI's capability hooks (one instance per installation; see the module).

    Attributes:
        tracker: the installation's open runs.
        live: ``False`` once ``uninstrument()`` ran: runs starting then are not ours (runs in flight finish).
    """

    tracker: RunTracker | None = field(default=None, repr=False)
    live: bool = field(default=True, repr=False)

    # Observes only (no toolsets, no durable operations), like PydanticAI's own
    # Instrumentation capability, so durable-execution runs accept it per run.
    _safe_at_runtime: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.id is None:
            self.id = CAPABILITY_ID

    def __deepcopy__(self, memo: dict) -> "OtelAgentsCapability":
        # An agent deep-copied while it holds us: the copy's runs are recorded by the same installation (its run
        # index and telemetry are one; a copy would split them, and its locks cannot be copied).
        return self

    def _observes(self) -> Any:
        """The run in context when this hook should record (its :class:`RunSpans` or ``None``), else :data:`_OFF`."""
        run = _current_run.get()
        if run is _OFF or self.tracker is None or not instrumentation_enabled() or (run is None and not self.live):
            return _OFF
        return run

    # -- run --------------------------------------------------------------------
    def _start_run(self, ctx: Any) -> Any:
        """The run's :class:`RunSpans`; ``None`` if opening it failed; :data:`_OFF` if the run is not ours."""
        if self.tracker is None or not self.live or not instrumentation_enabled() or _is_realtime(ctx):
            return _OFF
        with guard("pydantic_ai.run_start"):
            agent = ctx.agent
            name = (getattr(agent, "name", None) or "agent") if agent is not None else "agent"
            run = self.tracker.start(name, ctx.run_id)
            run.stop_reason_of = lambda exc: limit_stop_reason(exc, ctx)
            with guard("pydantic_ai.run_attributes"):
                run.span.set_agent(name, description=getattr(agent, "description", None))
                if run.span.records_content:
                    run.span.set_input(_convert.prompt_value(ctx.prompt, run.span.telemetry.settings.media_budget()),
                                       messages=_convert.prompt_messages(ctx.prompt)
                                       if run.span.input_as_messages else None)
            return run
        return None

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        run = self._start_run(ctx)
        token = _current_run.set(run)
        try:
            if run is None or run is _OFF:
                return await handler()
            return await self._run_spans(run, handler)
        finally:
            _reset(_current_run, token)

    async def _run_spans(self, run: RunSpans, handler: Any) -> Any:
        try:
            with run.span.activate():
                result = await handler()
        except asyncio.CancelledError as exc:  # a stream left early, an iter() loop broken, a cancelled task
            run.finish(abandoned=True, error=exc)
            raise
        except BaseException as exc:
            if _is_run_control_flow(exc):
                run.span.record_error(exc, control_flow=True)
                run.finish()
            else:
                run.finish(error=exc)  # (with the stop reason of a limit that raised it)
            raise
        output = result.output if hasattr(result, "output") else None
        run.finish(output=output)
        return result

    # -- model request ------------------------------------------------------------
    def _start_model(self, attempt: Any, request_context: Any, run: RunSpans | None) -> SemanticSpan | None:
        """The model span of ``request_context`` in ``run``, described by ``attempt`` (the request as sent)."""
        if self.tracker is None or not instrumentation_enabled():
            return None
        try:
            model = attempt.model
            # server.address/port (OTel GenAI v1.41 inference span, recommended): where the model's client connects
            span = self.tracker.telemetry.start_span(Kind.MODEL, model.model_name, operation="chat",
                                                     parent=parent_context(),
                                                     attributes=server_attributes(_base_url(model), scheme_port=True))
            # Model and provider always (a sampled-out span's metrics use them); parameters only if recorded.
            parameters = (_convert.request_parameters(attempt.model_settings, attempt.streaming)
                          if span.is_recording else None)
            span.set_model(request_model=model.model_name, provider=model.system, parameters=parameters)
            span.set_request_output(_convert.output_type(getattr(attempt, "model_request_parameters", None)))
            if run is not None:
                run.models.append((span, request_context, time.perf_counter()))
            return span
        except Exception as exc:  # noqa: BLE001 - as guard() does
            report_internal_error("pydantic_ai.model_start", exc)
        return None

    def _end_model(self, span: SemanticSpan, request_context: Any, run: RunSpans | None, response: Any = None,
                   error: BaseException | None = None) -> None:
        if run is not None:
            try:
                run.models = [m for m in run.models if m[0] is not span]
                run.billed.pop(span, None)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("pydantic_ai.model_forget", exc)
        end_model(span, request_context, response, error=error)

    async def wrap_model_request(self, ctx: Any, *, request_context: Any, handler: Any) -> Any:
        """The request's lifecycle; its span opens when the model is really asked (:func:`_watch`): a request a
        capability answers instead (``SkipModelRequest`` from ``before_model_request``, a wrapper that returns
        without calling its handler) has no model span."""
        run = self._observes()
        if run is _OFF:
            return await handler(request_context)
        if run is not None:
            self._refuse_unknown(run, request_context)
        request = _Request(self, request_context, run)
        current = _current_request.set(request)
        watching = _watch(request_context, request)
        try:
            response = await handler(request_context)
        except asyncio.CancelledError as exc:
            if run is None or run.done:
                request.close(self, error=exc)
            else:  # left open for the run's end, which knows why: a stream left early or a task cancelled
                # (abandoned), or the model's own error or a usage limit, which reaches the run while this request
                # is cancelled; with what its provider billed
                request.deactivate()
                if request.span is not None and request.billed is not None:
                    run.billed[request.span] = request.billed
            raise
        except BaseException as exc:
            request.close(self, error=exc)
            raise
        finally:
            _reset(_current_request, current)
            _unwatch(watching)
        request.close(self, response)
        return response

    def _refuse_unknown(self, run: RunSpans, request_context: Any) -> None:
        """The calls of the last response naming no tool the agent has, which PydanticAI answers with a retry
        before any tool hook (this request, sent once — PydanticAI lets a ``wrap_model_request`` call its handler
        only once — carries its answers): a zero-length refused ``tool`` span each, under the agent span,
        ``error.type`` ``unknown_tool``. The last such calls of a run ``UnexpectedModelBehavior`` ends (their
        retries spent) are answered by no request: they have none."""
        try:
            for name, call_id, arguments, answer in _convert.unknown_tool_calls(request_context.messages):
                self.tracker.telemetry.refused_tool_call(name, A.UNKNOWN_TOOL, parent=run.span, call_id=call_id,
                                                         arguments=arguments, result=answer)
        except Exception as exc:  # noqa: BLE001 - as guard() does
            report_internal_error("pydantic_ai.unknown_tool", exc)

    async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
        """After an attempt the model answered: the request's span if it has none yet, which happens only when a
        wrapper outside ours gave its handler another request context than ours, hiding the attempts from
        :func:`_watch` (PydanticAI calls this hook for every capability whether or not it is overridden)."""
        self.answered(request_context)
        return response

    def answered(self, request_context: Any) -> None:
        """The model answered an attempt (see :meth:`after_model_request`)."""
        request = _current_request.get()
        if request is not None and request.owner is self and request.span is None:
            request.open(request_context)

    # -- tool call -------------------------------------------------------------------
    def _start_tool(self, call: Any, tool_def: Any) -> SemanticSpan | None:
        if self._observes() is _OFF:
            return None
        try:
            span = self.tracker.telemetry.start_span(Kind.TOOL, call.tool_name, parent=parent_context())
            span.set_tool(call.tool_name, call_id=call.tool_call_id,
                          description=getattr(tool_def, "description", None),
                          arguments=_convert.tool_arguments(call) if span.records_content else None)
            return span
        except Exception as exc:  # noqa: BLE001 - as guard() does
            report_internal_error("pydantic_ai.tool_start", exc)
        return None

    async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any) -> Any:
        span = self._start_tool(call, tool_def)
        if span is None:
            return await handler(args)
        try:
            with span.activate():
                result = await handler(args)
        except _DEFERRALS as exc:  # the call waits for a human or an external runner: not an error
            span.record_error(exc, control_flow=True)
            span.mark_paused()
            span.end()
            raise
        except BaseException as exc:  # ModelRetry arrives as ToolRetryError: an errored attempt
            span.record_error(exc, control_flow=isinstance(exc, SkipToolExecution)
                              or not isinstance(exc, Exception))
            span.end()
            raise
        if span.records_content:
            try:
                span.set_tool_result(_convert.tool_result(result, span.telemetry.settings.media_budget()))
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("pydantic_ai.tool_result", exc)
        span.end()
        return result

    async def on_tool_validate_error(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Any) -> Any:
        """Arguments the tool rejected (schema or validator): an errored ``tool`` span, then the retry."""
        self.rejected(call, tool_def, error)
        raise error

    def rejected(self, call: Any, tool_def: Any, error: BaseException) -> None:
        """The errored ``tool`` span of arguments the tool rejected (see :meth:`on_tool_validate_error`)."""
        span = self._start_tool(call, tool_def)
        if span is not None:
            span.record_error(error)
            span.end()

    # -- output validation -------------------------------------------------------------
    async def _validating(self, ctx: Any, output: Any, handler: Any) -> Any:
        """Run ``handler``; an output it rejects (``ValidationError``, ``ModelRetry``: PydanticAI then asks the
        model again) is a failed ``chain`` step, :data:`REJECTED_OUTPUT`, over the validation. Partial outputs
        validated while a stream runs are not steps."""
        start = time.time_ns()
        try:
            return await handler(output)
        except _REJECTIONS as exc:
            run = self._observes()
            if not getattr(ctx, "partial_output", False) and run is not _OFF:
                with guard("pydantic_ai.output_rejected"):
                    # under the agent, where run() has it, also when a stream's model span is still current
                    span = self.tracker.telemetry.start_span(Kind.CHAIN, REJECTED_OUTPUT, start_time=start,
                                                             parent=run.span if run is not None else parent_context())
                    span.record_error(exc)
                    span.end()
            raise

    async def wrap_output_validate(self, ctx: Any, *, output_context: Any, output: Any, handler: Any) -> Any:
        """Parsing a structured output (see :meth:`_validating`)."""
        return await self._validating(ctx, output, handler)

    async def wrap_output_process(self, ctx: Any, *, output_context: Any, output: Any, handler: Any) -> Any:
        """Output functions and ``@agent.output_validator``s (see :meth:`_validating`)."""
        return await self._validating(ctx, output, handler)


@dataclass(eq=False)
class ObservedCapabilities(CombinedCapability[Any]):
    """An agent's own capabilities with our hooks on the combination itself (:class:`~._wiring.AgentLevel`).

    PydanticAI dispatches every hook of a run to every capability, overridden or not, each with a copy of the
    run context (``before_*``/``after_*`` of each node, request, tool call and output): ~40 copies a run of
    the test agent, 39% of what our capability cost as one more capability among the agent's (issue 40,
    twenty-fourth round). Here the run's root capability is this combination: its hooks call ``observer``'s
    (an :class:`OtelAgentsCapability`) with the run's context and go on to the agent's capabilities, so a run
    pays no dispatch for ours. ``observer`` sits where PydanticAI would put it as the last capability: inside
    every ``wrap_*`` of the agent's (it wraps the innermost handler) and first in the reversed
    ``after_model_request`` and ``on_tool_validate_error``.

    Only a run whose root is this combination reaches these hooks: PydanticAI merges a combination into any
    it composes (a run's own capabilities, its instrumentation, ...), so such a run gets ``observer`` as a
    capability of its own instead (:meth:`~._wiring.AgentLevel.holds`), and an agent whose runs are composed
    from the first gets ``observer`` among its capabilities (:meth:`~._wiring.AgentLevel._attach`).
    """

    observer: Any = field(default=None, kw_only=True, repr=False)

    @property
    def _has_wrap_model_request(self) -> bool:
        return True  # ours wraps every request (PydanticAI calls this hook only when some capability has it)

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        observer = self.observer

        def observed() -> Any:
            return observer.wrap_run(ctx, handler=handler)

        return await super().wrap_run(ctx, handler=observed)

    async def wrap_model_request(self, ctx: Any, *, request_context: Any, handler: Any) -> Any:
        observer = self.observer

        def observed(request: Any) -> Any:
            return observer.wrap_model_request(ctx, request_context=request, handler=handler)

        return await super().wrap_model_request(ctx, request_context=request_context, handler=observed)

    async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
        self.observer.answered(request_context)
        return await super().after_model_request(ctx, request_context=request_context, response=response)

    async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any) -> Any:
        observer = self.observer

        def observed(arguments: Any) -> Any:
            return observer.wrap_tool_execute(ctx, call=call, tool_def=tool_def, args=arguments, handler=handler)

        return await super().wrap_tool_execute(ctx, call=call, tool_def=tool_def, args=args, handler=observed)

    async def on_tool_validate_error(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Any) -> Any:
        self.observer.rejected(call, tool_def, error)
        return await super().on_tool_validate_error(ctx, call=call, tool_def=tool_def, args=args, error=error)

    def _validation(self, ctx: Any, handler: Any) -> Any:
        """``handler`` (an output hook's innermost) inside ``observer``'s output validation."""
        observer = self.observer

        def observed(value: Any) -> Any:
            return observer._validating(ctx, value, handler)

        return observed

    async def wrap_output_validate(self, ctx: Any, *, output_context: Any, output: Any, handler: Any) -> Any:
        return await super().wrap_output_validate(ctx, output_context=output_context, output=output,
                                                  handler=self._validation(ctx, handler))

    async def wrap_output_process(self, ctx: Any, *, output_context: Any, output: Any, handler: Any) -> Any:
        return await super().wrap_output_process(ctx, output_context=output_context, output=output,
                                                 handler=self._validation(ctx, handler))


def _base_url(model: Any) -> Any:
    """The model's ``base_url`` (PydanticAI's ``Model.base_url``: its provider's URL; ``None`` for a model with no
    server, such as ``FunctionModel``); ``None`` if reading it fails."""
    try:
        return model.base_url
    except Exception:  # noqa: BLE001 - a property of the user's (or a third party's) model class
        return None


def _boundary_captures() -> tuple[ContextVar, ContextVar] | None:
    """PydanticAI's own hand-overs at the model-call boundary, as its instrumentation receives them (private,
    ``pydantic_ai._instrumentation``): ``(request captures, response captures)``, each a context variable
    holding ``(request context, callback)`` pairs, or ``None`` on a release without them.

    For a watched request, PydanticAI calls ``callback(prepared request)`` once the hooks have prepared an
    attempt, right before the model is asked (after every ``prepare_model_request``, so a request a hook
    answers or skips is never seen), and ``callback(response, ttfc)`` with the response the provider billed,
    before a hook can reject it or a stream's consumer stops it (a usage limit crossed mid-stream, the
    consumer raising), so the model span keeps the usage and finish reason the model sent. Like
    PydanticAI's own instrumentation, a request is known by the context object our ``wrap_model_request``
    was given (a wrapper outside ours that hands its handler another object hides the request from both)."""
    try:
        from pydantic_ai._instrumentation import _model_request_span_captures as requests
        from pydantic_ai._instrumentation import _model_response_span_captures as responses
    except ImportError:
        return None
    if not isinstance(requests, ContextVar) or not isinstance(responses, ContextVar):
        return None
    return requests, responses


_CAPTURES = _boundary_captures()


def _watch(request_context: Any, request: _Request) -> tuple | None:
    """Have PydanticAI hand ``request`` its attempts (:meth:`_Request.open`) and billed responses
    (:meth:`_Request.capture`); the tokens to undo it with (:func:`_unwatch`, in this same context)."""
    if _CAPTURES is None:  # (the capability is then :class:`OpensInPrepare`)
        return None
    try:
        requests, responses = _CAPTURES
        return (requests.set((*requests.get(), (request_context, request.open))),
                responses.set((*responses.get(), (request_context, request.capture))))
    except Exception as exc:  # noqa: BLE001 - never into the user's request
        report_internal_error("pydantic_ai.watch", exc)
        return None


def failed_attempt(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """``AttemptLog.record(model, failure, start, ...)``, where PydanticAI notes every attempt at a request that
    failed before another answered it (a ``FallbackModel`` moving on to its next model, the ``ModelFallback``
    capability, a hook's ``RetryModelRequest``): an attempt that raised is an ``exception`` event on the request's
    model span (:meth:`~otel_agents._spans.SemanticSpan.record_failed_attempt`, ``retried``: the span's outcome is
    the last attempt's). A ``FallbackExceptionGroup`` (a nested ``FallbackModel`` that failed whole) is not: its
    attempts were noted one by one. A rejected response raised nothing: it stays the billed response PydanticAI
    moved on from. The request's span is the current request's; a streamed request's attempts run where that is
    no longer set (its stream is entered later), with its span current."""
    with guard("pydantic_ai.failed_attempt"):
        failure = args[1] if len(args) > 1 else kwargs.get("failure")
        if isinstance(failure, Exception) and not isinstance(failure, FallbackExceptionGroup):
            request = _current_request.get()
            span = request.span if request is not None else semantic_span_for(trace.get_current_span())
            if span is not None and span.kind is Kind.MODEL:
                span.record_failed_attempt(failure, retried=True)
    return wrapped(*args, **kwargs)


def _unwatch(tokens: tuple | None) -> None:
    if tokens is not None and _CAPTURES is not None:
        try:
            _CAPTURES[1].reset(tokens[1])
            _CAPTURES[0].reset(tokens[0])
        except Exception as exc:  # noqa: BLE001 - as guard() does
            report_internal_error("pydantic_ai.unwatch", exc)


@dataclass(eq=False)
class OpensInPrepare(OtelAgentsCapability):
    """Our capability for a PydanticAI release without the model-call boundary hand-overs
    (:func:`_boundary_captures`): the model span opens in ``prepare_model_request`` instead, at the same point
    of the request (a hook-prepared attempt), and a request's billed response is not captured. (Overriding that
    hook makes PydanticAI copy the tool definitions for every attempt, which is why it is not the default.)"""

    async def prepare_model_request(self, ctx: Any, request_context: Any) -> Any:
        request = _current_request.get()
        if request is not None and request.owner is self:
            request.open(request_context)
        return request_context


def _is_realtime(ctx: Any) -> bool:
    """Whether the run is a realtime session (not instrumented: it does not go through ``Agent.iter``)."""
    try:
        return bool(ctx.realtime)
    except Exception:  # noqa: BLE001 - a release without the property has no realtime runs through the hooks
        return False


def capability_type() -> type[OtelAgentsCapability]:
    """The capability class to add to runs on this PydanticAI release."""
    return OtelAgentsCapability if _CAPTURES is not None else OpensInPrepare


def limit_stop_reason(exc: BaseException, ctx: Any) -> str | None:
    """The stop reason of a run ``UsageLimitExceeded`` ended: which of the run's ``UsageLimits``
    (``ctx.usage_limits``) its usage (``ctx.usage``) crossed, by PydanticAI's own tests. A token or cost limit
    first (PydanticAI checks those after each response, so usage past one means that check raised, even when the
    request count has reached ``request_limit`` by then) → ``budget``; else ``request_limit`` (``requests`` >= it)
    or ``tool_calls_limit`` → ``max_turns``; else (a per-request input limit) ``budget``."""
    from pydantic_ai.exceptions import UsageLimitExceeded

    if not isinstance(exc, UsageLimitExceeded):
        return None
    limits, usage = getattr(ctx, "usage_limits", None), getattr(ctx, "usage", None)

    def crossed(name: str, limit: str, at: bool = False) -> bool:
        value, cap = getattr(usage, name, None), getattr(limits, limit, None)
        if not isinstance(value, (int, Decimal)) or not isinstance(cap, (int, Decimal)):
            return False
        return value >= cap if at else value > cap

    if any(crossed(name, f"{name}_limit") for name in ("input_tokens", "output_tokens", "total_tokens")) \
            or crossed("cost", "cost_limit"):
        return "budget"
    if crossed("requests", "request_limit", at=True) or crossed("tool_calls", "tool_calls_limit", at=True):
        return "max_turns"
    return "budget"
