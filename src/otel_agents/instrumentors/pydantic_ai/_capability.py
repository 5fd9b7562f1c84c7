"""Our PydanticAI capability: one ``agent`` span per run, one ``model`` span per request, one ``tool`` span per call.

PydanticAI's public hooks (``wrap_run``, ``wrap_model_request``,
``wrap_tool_execute``, ``on_tool_validate_error``) see each of these exactly
once, in the task that runs it, whether or not PydanticAI's own instrumentation
(itself a capability, id ``instrumentation``) is on. A fresh instance is added
to every run by the ``Agent.iter`` wrapper, so per-run state lives on it.

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
from dataclasses import dataclass, field
from typing import Any, ClassVar

from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from pydantic_ai.capabilities import AbstractCapability
from pydantic import ValidationError
from pydantic_ai.exceptions import (ApprovalRequired, CallDeferred, ModelRetry, RunCancelled, RunTimedOut,
                                    SkipToolExecution, ToolRetryError)

from ..._spans import SemanticSpan, guard
from ...semconv import Kind
from . import _convert
from ._runs import RunSpans, RunTracker, end_model, parent_context

CAPABILITY_ID = "otel_agents"
"""Distinct from PydanticAI's ``instrumentation``: capabilities sharing an id are merged into one."""

_DEFERRALS = (CallDeferred, ApprovalRequired)
_REJECTIONS = (ValidationError, ModelRetry, ToolRetryError)
REJECTED_OUTPUT = "validate_output"
"""The name of the failed ``chain`` step a rejected output gets (then the model is asked again)."""


def _is_run_control_flow(exc: BaseException) -> bool:
    return isinstance(exc, RunCancelled) and not isinstance(exc, RunTimedOut)


@dataclass(eq=False)
class _Request:
    """One model request in flight: its span once the model is asked, and that span's activation."""

    context: Any
    span: SemanticSpan | None = None
    active: Any = None

    def deactivate(self) -> None:
        if self.active is not None:
            with guard("pydantic_ai.model_deactivate"):
                self.active.__exit__(None, None, None)
            self.active = None

    def close(self, capability: "OtelAgentsCapability", response: Any = None,
              error: BaseException | None = None) -> None:
        self.deactivate()
        if self.span is not None:
            capability._end_model(self.span, self.context, response, error=error)


@dataclass(eq=False)
class OtelAgentsCapability(AbstractCapability[Any]):
    """Opens our spans from PydanticAI's capability hooks (one instance per run)."""

    tracker: RunTracker | None = field(default=None, repr=False)

    # Observes only (no toolsets, no durable operations), like PydanticAI's own
    # Instrumentation capability, so durable-execution runs accept it per run.
    _safe_at_runtime: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.id is None:
            self.id = CAPABILITY_ID
        self._run: RunSpans | None = None
        self._request: _Request | None = None

    # -- run --------------------------------------------------------------------
    def _start_run(self, ctx: Any) -> RunSpans | None:
        if self.tracker is None or not is_instrumentation_enabled():
            return None
        with guard("pydantic_ai.run_start"):
            agent = ctx.agent
            name = (getattr(agent, "name", None) or "agent") if agent is not None else "agent"
            run = self.tracker.start(name, ctx.run_id)
            self._run = run
            with guard("pydantic_ai.run_attributes"):
                run.span.set_agent(name, description=getattr(agent, "description", None))
                if run.span.records_content:
                    run.span.set_input(_convert.prompt_value(ctx.prompt, run.span.telemetry.settings.media_budget()))
            return run
        return None

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        run = self._start_run(ctx)
        if run is None:
            return await handler()
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
                with guard("pydantic_ai.stop_reason"):
                    reason = limit_stop_reason(exc, ctx)
                    if reason is not None:
                        run.span.set_stop_reason(reason)
                run.finish(error=exc)
            raise
        output = result.output if hasattr(result, "output") else None
        run.finish(output=output)
        return result

    # -- model request ------------------------------------------------------------
    def _start_model(self, request_context: Any) -> SemanticSpan | None:
        if self.tracker is None or not is_instrumentation_enabled():
            return None
        with guard("pydantic_ai.model_start"):
            model = request_context.model
            span = self.tracker.telemetry.start_span(Kind.MODEL, model.model_name, operation="chat",
                                                     parent=parent_context())
            # Model and provider always (a sampled-out span's metrics use them); parameters only if recorded.
            parameters = (_convert.request_parameters(request_context.model_settings, request_context.streaming)
                          if span.is_recording else None)
            span.set_model(request_model=model.model_name, provider=model.system, parameters=parameters)
            if self._run is not None:
                self._run.models.append((span, request_context))
            return span
        return None

    def _end_model(self, span: SemanticSpan, request_context: Any, response: Any = None,
                   error: BaseException | None = None) -> None:
        if self._run is not None:
            with guard("pydantic_ai.model_forget"):
                self._run.models = [m for m in self._run.models if m[0] is not span]
        end_model(span, request_context, response, error=error)

    async def wrap_model_request(self, ctx: Any, *, request_context: Any, handler: Any) -> Any:
        """The request's lifecycle; its span opens in :meth:`prepare_model_request`, when the model is really
        asked: a request a capability answers instead (``SkipModelRequest`` from ``before_model_request``, a
        wrapper that returns without calling its handler) has no model span."""
        if self.tracker is None or not is_instrumentation_enabled():
            return await handler(request_context)
        outer, self._request = self._request, _Request(request_context)
        request = self._request
        try:
            response = await handler(request_context)
        except asyncio.CancelledError as exc:
            run = self._run
            if run is None or run.done:
                request.close(self, error=exc)
            else:  # left open for the run's end, which knows why: a stream left early or a task cancelled
                # (abandoned), or the model's own error, which reaches the run while this request is cancelled
                request.deactivate()
            raise
        except BaseException as exc:
            request.close(self, error=exc)
            raise
        finally:
            self._request = outer
        request.close(self, response)
        return response

    async def prepare_model_request(self, ctx: Any, request_context: Any) -> Any:
        """Before each attempt, once the model that serves it is known: the request's span opens (the first
        attempt; further ones stay in it) and is current for the model call."""
        request = self._request
        if request is not None and request.span is None:
            with guard("pydantic_ai.model_open"):
                request.span = self._start_model(request_context)
                if request.span is not None:
                    request.active = request.span.activate()
                    request.active.__enter__()
        return request_context

    # -- tool call -------------------------------------------------------------------
    def _start_tool(self, call: Any, tool_def: Any) -> SemanticSpan | None:
        if self.tracker is None or not is_instrumentation_enabled():
            return None
        with guard("pydantic_ai.tool_start"):
            span = self.tracker.telemetry.start_span(Kind.TOOL, call.tool_name, parent=parent_context())
            span.set_tool(call.tool_name, call_id=call.tool_call_id,
                          description=getattr(tool_def, "description", None),
                          arguments=_convert.tool_arguments(call) if span.records_content else None)
            return span
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
            with guard("pydantic_ai.tool_result"):
                span.set_tool_result(_convert.tool_result(result, span.telemetry.settings.media_budget()))
        span.end()
        return result

    async def on_tool_validate_error(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Any) -> Any:
        """Arguments the tool rejected (schema or validator): an errored ``tool`` span, then the retry."""
        span = self._start_tool(call, tool_def)
        if span is not None:
            span.record_error(error)
            span.end()
        raise error

    # -- output validation -------------------------------------------------------------
    async def _validating(self, ctx: Any, output: Any, handler: Any) -> Any:
        """Run ``handler``; an output it rejects (``ValidationError``, ``ModelRetry``: PydanticAI then asks the
        model again) is a failed ``chain`` step, :data:`REJECTED_OUTPUT`, over the validation. Partial outputs
        validated while a stream runs are not steps."""
        start = time.time_ns()
        try:
            return await handler(output)
        except _REJECTIONS as exc:
            if self.tracker is not None and is_instrumentation_enabled() and not getattr(ctx, "partial_output", False):
                with guard("pydantic_ai.output_rejected"):
                    span = self.tracker.telemetry.start_span(Kind.CHAIN, REJECTED_OUTPUT, parent=parent_context(),
                                                             start_time=start)
                    span.record_error(exc)
                    span.end()
            raise

    async def wrap_output_validate(self, ctx: Any, *, output_context: Any, output: Any, handler: Any) -> Any:
        """Parsing a structured output (see :meth:`_validating`)."""
        return await self._validating(ctx, output, handler)

    async def wrap_output_process(self, ctx: Any, *, output_context: Any, output: Any, handler: Any) -> Any:
        """Output functions and ``@agent.output_validator``s (see :meth:`_validating`)."""
        return await self._validating(ctx, output, handler)

def limit_stop_reason(exc: BaseException, ctx: Any) -> str | None:
    """The stop reason of a run ``UsageLimitExceeded`` ended: which of the run's ``UsageLimits``
    (``ctx.usage_limits``) its usage (``ctx.usage``) reached, by PydanticAI's own tests: ``request_limit``
    (``requests`` >= it) or ``tool_calls_limit`` → ``max_turns``; else a token or cost limit → ``budget``."""
    from pydantic_ai.exceptions import UsageLimitExceeded

    if not isinstance(exc, UsageLimitExceeded):
        return None
    limits, usage = getattr(ctx, "usage_limits", None), getattr(ctx, "usage", None)
    requests, request_limit = getattr(usage, "requests", None), getattr(limits, "request_limit", None)
    if isinstance(requests, int) and isinstance(request_limit, int) and requests >= request_limit:
        return "max_turns"
    calls, call_limit = getattr(usage, "tool_calls", None), getattr(limits, "tool_calls_limit", None)
    if isinstance(calls, int) and isinstance(call_limit, int) and calls >= call_limit:
        return "max_turns"
    return "budget"
