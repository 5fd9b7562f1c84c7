"""Tool spans: ``BaseTool.run_json`` and ``BaseStreamTool.run_json_stream`` → ``execute_tool {tool}`` (``tool``).

Every tool an ``AssistantAgent`` runs goes through these two methods — ``FunctionTool``,
the handoff tools (``transfer_to_…``, which record the target agent as
``otel_agents.handoff.target``), ``AgentTool``/``TeamTool`` (an agent or team used as
a tool: its run nests under the tool span) — whether it is called from a workbench or
directly. A tool that raises ends with ERROR (the agent then reports the error to the
model as a ``FunctionExecutionResult`` with ``is_error``, and goes on). Arguments ``run_json`` rejects before
the tool runs (its ``args_type`` validation) make a refused call: ``otel_agents.tool.denied``, ``error.type``
``validation_error``, pydantic's ``ValidationError`` kept as the span's ``exception`` event.

A call ``AssistantAgent._execute_tool_call`` answers without running a tool — arguments that are not JSON, a name
no workbench or handoff has — is a zero-length refused tool span (``otel_agents.tool.denied``, ``error.type``
``validation_error`` / ``unknown_tool``) with AutoGen's error result as its result: its two error results that
reach no tool (the second recognised by AutoGen's own text for it; were that text to change, the call only loses
its span).
"""

from __future__ import annotations

import contextvars
import functools
import json
from typing import Any, Callable

from pydantic import ValidationError

from ..._spans import SemanticSpan, Telemetry, guard, instrumentation_enabled
from ..._spans.messages import json_arguments
from ...semconv import Kind
from ...semconv import attributes as A
from ._context import context_of, current_owner
from ._streams import SpanStream, run_coroutine


def _arg(args: tuple, kwargs: dict, name: str, index: int) -> Any:
    return kwargs[name] if name in kwargs else (args[index] if len(args) > index else None)


class ToolHooks:
    """Wrappers for the tool entry points (one set per ``instrument()``)."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry

    def _opener(self, tool: Any, args: tuple, kwargs: dict) -> Any:
        def start() -> tuple[SemanticSpan, Any]:
            name = getattr(tool, "name", None) or type(tool).__name__
            span = self.telemetry.start_span(Kind.TOOL, name)
            with guard("autogen.tool.attributes"):
                span.set_tool(name, call_id=_arg(args, kwargs, "call_id", 2),
                              description=getattr(tool, "description", None),
                              arguments=dict(_arg(args, kwargs, "args", 0) or {}) if span.records_content else None)
                target = _handoff_target(name)
                if target is None and type(tool).__name__ in ("AgentTool", "TeamTool"):
                    target = getattr(getattr(tool, "_agent", None) or getattr(tool, "_team", None), "name", None)
                span.set_attribute(A.OTEL_AGENTS_HANDOFF_TARGET, target)
            return span, context_of(span)

        return start

    @staticmethod
    def _finisher(tool: Any) -> Callable[[SemanticSpan, Any, BaseException | None], None]:
        def finish(span: SemanticSpan, result: Any, error: BaseException | None) -> None:
            if error is None and result is not None:
                span.set_tool_result(result)  # the span layer reads plain data only (never the user's model_dump)
            elif _rejected_arguments(tool, error):  # (before the error is recorded: its type stands, see set_error)
                told = str(error).strip()  # what a workbench answers the model with
                span.set_tool_result(told)
                span.set_denied(A.INVALID_TOOL_ARGUMENTS, told)
        return finish

    def run_json(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return run_coroutine(lambda: wrapped(*args, **kwargs), self._opener(instance, args, kwargs),
                             self._finisher(instance))

    def run_json_stream(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return SpanStream(lambda: wrapped(*args, **kwargs), self._opener(instance, args, kwargs),
                          self._finisher(instance))

    def execute_tool_call(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``AssistantAgent._execute_tool_call`` (a coroutine function answering ``(call, result)``): the calls it
        answers itself, running no tool, as refused tool spans under the current span (the agent's)."""
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return self._refusals(wrapped(*args, **kwargs))

    async def _refusals(self, pending: Any) -> Any:
        outcome = await pending
        with guard("autogen.tool.refused"):
            call, result = outcome
            if getattr(result, "is_error", False):
                name, raw = call.name, call.arguments
                try:
                    json.loads(raw)
                    reason = A.UNKNOWN_TOOL if result.content == f"Error: tool '{name}' not found in any workbench" \
                        else None
                except ValueError:
                    reason = A.INVALID_TOOL_ARGUMENTS
                if reason is not None:
                    self.telemetry.refused_tool_call(name, reason, call_id=call.id, arguments=json_arguments(raw),
                                                     result=result.content)
        return outcome


def _rejected_arguments(tool: Any, error: BaseException | None) -> bool:
    """Whether ``error`` is ``BaseTool.run_json``'s validation of the arguments against the tool's ``args_type``,
    which fails before the tool runs: a pydantic ``ValidationError`` titled with that model's name."""
    if not isinstance(error, ValidationError):
        return False
    args_type = tool.args_type() if callable(getattr(tool, "args_type", None)) else None
    return isinstance(args_type, type) and error.title == args_type.__name__


def _handoff_target(tool_name: str) -> str | None:
    """The target of a handoff tool of the agent whose span is current (its ``_handoffs``)."""
    owner = current_owner()
    agent = owner[2] if owner else None
    handoffs = getattr(agent, "_handoffs", None)
    handoff = handoffs.get(tool_name) if isinstance(handoffs, dict) else None
    return getattr(handoff, "target", None)


class _PartialType(type):
    def __instancecheck__(cls, obj: Any) -> bool:  # FunctionTool checks isinstance(func, functools.partial)
        return isinstance(obj, functools.partial)


class ContextPartial(metaclass=_PartialType):
    """``functools.partial`` that binds the caller's context (``contextvars.copy_context().run``)."""

    def __new__(cls, func: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
        return functools.partial(contextvars.copy_context().run, func, *args, **kwargs)


class ContextCarryingFunctools:
    """Stands in for ``functools`` inside ``autogen_core.tools._function_tool`` while we are instrumented.

    ``FunctionTool.run`` runs a sync tool function with
    ``loop.run_in_executor(None, functools.partial(func, ...))``, and ``run_in_executor``
    does not carry the context to the executor thread: inside the function no span is
    current, so a span the tool opens (an HTTP client's, the application's) starts a
    trace of its own. Here ``partial`` is :class:`ContextPartial` (``isinstance`` checks
    still mean ``functools.partial``); every other name is ``functools``'s own.
    """

    partial = ContextPartial

    def __getattr__(self, name: str) -> Any:
        return getattr(functools, name)


def carry_context_into_tool_threads() -> Callable[[], None]:
    """Install :class:`ContextCarryingFunctools`; returns the function that takes it out again."""
    from autogen_core.tools import _function_tool

    if getattr(_function_tool, "functools", None) is not functools:
        return lambda: None  # someone else replaced it: leave it alone
    shim = ContextCarryingFunctools()
    _function_tool.functools = shim  # type: ignore[attr-defined]

    def remove() -> None:
        if getattr(_function_tool, "functools", None) is shim:
            _function_tool.functools = functools  # type: ignore[attr-defined]

    return remove
