"""Registering our processor with the Agents SDK, keeping it registered, and undoing it.

* ``agents.add_trace_processor`` — the SDK's documented extension point — adds our processor.
* ``set_trace_processors(...)`` replaces the SDK's processor list; its documented use is
  silencing the SDK's export to OpenAI (``set_trace_processors([])``). A wrapper on
  ``SynchronousMultiTracingProcessor.set_processors`` (what it calls) puts ours back after the
  user's list, so our spans survive it in either order; the user's processors stay as they set them.
* ``DefaultTraceProvider.create_trace`` (public; every run's trace starts there): another instrumentation
  can replace the list without that call (OpenInference's ``instrument()``, whose ``exclusive_processor``
  defaults to true, assigns the SDK's private tuple): ours is put back before the trace starts, and a
  warning says so once. Without this, every run after the other's ``instrument()`` had no span of ours.
* ``agents.util._error_tracing.attach_error_to_span`` (private; every ``SpanError`` the SDK
  records goes through it, inside the ``except`` that caught the exception) hands us the
  exception object, so a tool error keeps its type. Missing in a future release: errors are
  recorded from the ``SpanError`` text instead (``error.type`` ``tool_error`` on a tool span, else ``_OTHER``).
* ``DefaultTraceProvider.set_disabled(True)`` logs once that no runs will be seen.
* ``agents.run_internal.turn_resolution.check_for_final_output_from_tools`` (private; where the SDK applies an
  agent's ``tool_use_behavior``): a final output made from tool results, without asking the model again, is
  the agent's output. Missing in a future release: such a run's agent span has no output.
* Where the SDK decides on a human's approval of a tool call (private names, each optional: missing in a future
  release, one warning, and what it tells is lost):

  - ``agents.run_internal.tool_execution._FunctionToolBatchExecutor._maybe_execute_tool_approval`` (a function
    tool, inside its span) and ``agents.run_internal.tool_actions.resolve_approval_status`` (shell, apply_patch
    and custom tools, inside their span): a call left pending (a ``FunctionToolResult`` whose ``run_item`` is a
    ``ToolApprovalItem``; a status ``None``) marks that span and its agent paused. The SDK's span does not say it
    (0.24 records a function tool's ``None``, as for a tool that returned ``None``; 0.20 its result object, only
    with ``trace_include_sensitive_data``; the other kinds nothing): without this hook a pending function tool is
    marked only where the span's output says it.
  - ``collect_manual_mcp_approvals`` (as ``agents.run_internal.tool_planning`` and ``.tool_execution`` call it): a
    hosted MCP tool's ``mcp_approval_request`` left pending marks the agent paused (the model's server runs that
    tool: no span).
  - ``resolve_approval_rejection_message`` (as ``agents.run_internal.tool_actions``, ``.tool_execution`` and
    ``.turn_resolution`` call it): the output the model is given for a rejected call is its tool span's result;
    a run resumed with a call rejected gets a tool span for it (the SDK opens none there).
* ``agents.Model.get_response``/``stream_response``, on every subclass now and later: one model span
  per request, whoever wrote the model class (:mod:`._models`).
* ``RunResultStreaming.cancel`` (public): ``mode="after_turn"`` lets the turn in flight finish and ends the
  run without an exception, so nothing in the SDK's spans says it was cancelled; the wrapper tells the
  processor, whose agent spans that end with no output then get the stop reason ``cancelled``. (The default,
  ``immediate``, cancels the run's tasks: that ``CancelledError`` says it.)
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import sys
from typing import Any, Callable

from ..._spans import Telemetry, guard
from .. import _litellm
from .._patch import Patch, PatchSet

logger = logging.getLogger("otel_agents")
DISABLE_ENV = "OPENAI_AGENTS_DISABLE_TRACING"
DISABLED_NOTE = ("the OpenAI Agents SDK's tracing is disabled ({how}): it makes no traces, so otel-agents "
                 "records no spans of its runs. To keep the SDK from exporting to OpenAI and keep ours, call "
                 "agents.set_trace_processors([]) instead")


def env_disabled() -> bool:
    """Whether ``OPENAI_AGENTS_DISABLE_TRACING`` turns the SDK's tracing off (``true``/``1``, as the SDK reads it)."""
    return os.environ.get(DISABLE_ENV, "false").lower() in ("true", "1")


def tracing_disabled_note() -> str | None:
    """Why an instrumented process would get no spans from the Agents SDK, or ``None``.

    Reads ``OPENAI_AGENTS_DISABLE_TRACING`` and, when the SDK is imported in this process, its
    provider's ``set_tracing_disabled`` state (a private flag, read defensively)."""
    how = None
    if "agents.tracing" in sys.modules:
        with guard("openai_agents.disabled_state"):
            from agents.tracing import get_trace_provider

            provider = get_trace_provider()
            manual = getattr(provider, "_manual_disabled", None)
            if manual:
                how = "agents.set_tracing_disabled(True)"
            elif manual is None and env_disabled():
                how = f"{DISABLE_ENV}={os.environ.get(DISABLE_ENV)}"
    elif env_disabled():
        how = f"{DISABLE_ENV}={os.environ.get(DISABLE_ENV)}"
    return DISABLED_NOTE.format(how=how) if how else None


class Installation:
    """Our processor, registered, and the wrappers above; :meth:`remove` undoes all of it."""

    def __init__(self, telemetry: Telemetry):
        from agents.tracing import add_trace_processor, get_trace_provider
        from agents.tracing.provider import DefaultTraceProvider, SynchronousMultiTracingProcessor

        from ._processor import OtelAgentsProcessor, awaits_approval  # imports the SDK

        self.processor = OtelAgentsProcessor(telemetry)
        self._awaits_approval = awaits_approval
        self.patches = PatchSet("openai_agents.patch")
        self._warned_disabled = False
        self._wrap(SynchronousMultiTracingProcessor, "set_processors", self._keep_ours)
        self._wrap(DefaultTraceProvider, "set_disabled", self._on_disabled)
        self._warned_replaced = False
        self._wrap(DefaultTraceProvider, "create_trace", self._reregister)
        try:
            from agents.util import _error_tracing
        except ImportError:  # pragma: no cover - a release without it: SpanError text only
            _error_tracing = None
        if _error_tracing is not None and hasattr(_error_tracing, "attach_error_to_span"):
            self._wrap(_error_tracing, "attach_error_to_span", self._note_error)
        with guard("openai_agents.final_output_hook"):  # optional: outputs of tool_use_behavior only
            from agents.run_internal import turn_resolution

            self._wrap(turn_resolution, "check_for_final_output_from_tools", self._final_output_from_tools)
        hooks = (("tool_execution", "_FunctionToolBatchExecutor", "_maybe_execute_tool_approval", self._pending_call),
                 ("tool_actions", None, "resolve_approval_status", self._pending_status),
                 ("tool_planning", None, "collect_manual_mcp_approvals", self._pending_mcp),
                 ("tool_execution", None, "collect_manual_mcp_approvals", self._pending_mcp),
                 *(((module, None, "resolve_approval_rejection_message", self._rejected)
                    for module in ("tool_actions", "turn_resolution", "tool_execution"))))
        # Optional, each (see the module docstring). A name is wrapped where it is called: in the modules that import
        # it before the module that defines it, so none imports our wrapper to have it wrapped again.
        for module, owner, name, note in hooks:
            with guard("openai_agents.approval_hook"):
                target = importlib.import_module(f"agents.run_internal.{module}")
                self._wrap(getattr(target, owner) if owner else target, name, self._after(note))
        with guard("openai_agents.cancel_hook"):  # optional: the stop reason of a run cancelled after_turn
            from agents.result import RunResultStreaming

            self._wrap(RunResultStreaming, "cancel", self._on_cancel)
        self.provider = get_trace_provider()
        add_trace_processor(self.processor)
        from ._models import ModelHook

        self.model_hook = ModelHook(self.processor)
        self.patches.keep(_litellm.use())  # LitellmModel's streams: what LiteLLM makes up at their end (see .._litellm)
        note = tracing_disabled_note()
        if note:
            self._warned_disabled = True
            logger.warning("otel_agents: %s", note)

    def _wrap(self, owner: Any, name: str, wrapper: Any) -> None:
        self.patches.keep(Patch(owner, name, wrapper))  # KeyError: ``owner`` does not define ``name``

    # -- wrappers ------------------------------------------------------------------------------
    def _keep_ours(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        result = wrapped(*args, **kwargs)
        with guard("openai_agents.keep_processor"):
            processors = args[0] if args else kwargs.get("processors", ())
            if self.processor.active and instance is getattr(self.provider, "_multi_processor", instance) \
                    and not any(p is self.processor for p in processors or ()):
                instance.add_tracing_processor(self.processor)
        return result

    def _reregister(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        with guard("openai_agents.reregister"):
            multi = getattr(instance, "_multi_processor", None)
            processors = getattr(multi, "_processors", None)
            if self.processor.active and instance is self.provider and processors is not None \
                    and not any(p is self.processor for p in processors):
                multi.add_tracing_processor(self.processor)
                if not self._warned_replaced:
                    self._warned_replaced = True
                    logger.warning("otel_agents: another instrumentation replaced the OpenAI Agents SDK's trace "
                                   "processors (OpenInference's instrument() does unless it is given "
                                   "exclusive_processor=False); ours is registered again, beside theirs")
        return wrapped(*args, **kwargs)

    def _note_error(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        exc = sys.exc_info()[1]
        if isinstance(exc, Exception) and args:
            with guard("openai_agents.note_error"):
                self.processor.note_exception(args[0], exc)
        return wrapped(*args, **kwargs)

    def _final_output_from_tools(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        behavior = getattr(args[0] if args else kwargs.get("agent"), "tool_use_behavior", None)
        if not self.processor.active or (type(behavior) is str and behavior == "run_llm_again"):
            return wrapped(*args, **kwargs)  # the default: the model is asked again, never a final output here
        return self._final_output_of(wrapped, args, kwargs)

    async def _final_output_of(self, wrapped: Any, args: Any, kwargs: Any) -> Any:
        result = await wrapped(*args, **kwargs)
        if self.processor.active and getattr(result, "is_final_output", False):
            with guard("openai_agents.final_output"):
                from agents.tracing import get_current_span

                self.processor.note_final_output(get_current_span(), result.final_output)
        return result

    def _after(self, note: Callable[[Any, dict], None]) -> Callable[..., Any]:
        """A wrapper of an SDK function (a coroutine function's result awaited) that hands its result and keyword
        arguments to ``note`` (in a guard) while the processor is active."""

        async def noted(result: Any, kwargs: dict) -> Any:
            result = await result
            if self.processor.active:
                with guard("openai_agents.approval"):
                    note(result, kwargs)
            return result

        def wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            if not self.processor.active:
                return wrapped(*args, **kwargs)
            result = wrapped(*args, **kwargs)
            if inspect.isawaitable(result):
                return noted(result, kwargs)
            with guard("openai_agents.approval"):
                note(result, kwargs)
            return result

        return wrapper

    def _pending_call(self, result: Any, kwargs: dict) -> None:
        if self._awaits_approval(result):
            self.processor.note_awaits_approval(kwargs.get("span_fn"))

    def _pending_status(self, result: Any, kwargs: dict) -> None:
        if result[0] is None:  # (status, ToolApprovalItem): None = neither approved nor rejected yet
            self.processor.note_awaits_approval(None)

    def _pending_mcp(self, result: Any, kwargs: dict) -> None:
        if result[1]:  # (approval responses, pending ToolApprovalItems)
            self.processor.note_awaits_approval(None)

    def _rejected(self, result: Any, kwargs: dict) -> None:
        content = getattr(kwargs.get("run_config"), "trace_include_sensitive_data", False) is True
        self.processor.note_rejection(kwargs.get("tool_name"), kwargs.get("call_id"), result, content)

    def _on_cancel(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        mode = kwargs.get("mode", args[0] if args else "immediate")
        if mode == "after_turn" and self.processor.active and not getattr(instance, "is_complete", True):
            with guard("openai_agents.cancel_after_turn"):
                self.processor.note_cancel_after_turn(getattr(getattr(instance, "trace", None), "trace_id", None))
        return wrapped(*args, **kwargs)

    def _on_disabled(self, wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        result = wrapped(*args, **kwargs)
        disabled = args[0] if args else kwargs.get("disabled")
        if disabled and not self._warned_disabled and self.processor.active:
            self._warned_disabled = True
            logger.warning("otel_agents: %s", DISABLED_NOTE.format(how="agents.set_tracing_disabled(True)"))
        return result

    def remove(self) -> None:
        """Unwrap, and take our processor out of the SDK's list (the user's stay as they are)."""
        self.processor.active = False
        with guard("openai_agents.model_hook.remove"):
            self.model_hook.remove()
        self.patches.remove()  # the originals back; inert in a chain someone wrapped after us
        with guard("openai_agents.remove_processor"):
            multi = getattr(self.provider, "_multi_processor", None)
            processors = getattr(multi, "_processors", None)
            if multi is not None and processors is not None:
                multi.set_processors([p for p in processors if p is not self.processor])
        with guard("openai_agents.end_open"):
            self.processor.end_open()
