"""Tool spans: ``FunctionCall.execute``/``aexecute`` → ``execute_tool {tool}``, one per call.

Every tool Agno runs — plain functions, toolkit methods, a team's
``delegate_task_to_member`` — goes through ``FunctionCall.execute`` (sync) or
``aexecute`` (async), after Agno's own tool hooks are set up and with the
parsed arguments; ``tool_hooks`` the user passes run inside our span. The span
is current while the tool runs, so the user's spans and nested agent runs
hang under it. A tool that returns a generator (a team delegating to a member
streams the member's run) keeps its span open and current while Agno drains
the generator: the member's ``agent`` span is a child of the delegation.

Agno catches a tool's exception and hands the model its message
(``FunctionExecutionResult(status="failure")``): the span ends with ERROR, ``error.type`` ``tool_error`` and
that message as its description (Agno keeps no exception object: an in-band failure, as an MCP tool's).

A call Agno answers without running anything (``Model.get_function_calls_to_run``: a tool the agent does not have,
or arguments that are not JSON) never reaches ``execute``: it is a zero-length refused tool span
(``otel_agents.tool.denied``; ``error.type`` ``unknown_tool`` or ``validation_error``) with Agno's answer as its
result, where the call's span would be.
"""

from __future__ import annotations

from typing import Any

from ..._spans import SemanticSpan, Telemetry, guard, instrumentation_enabled, probes, wrap_stream
from ..._spans.messages import json_arguments
from ...semconv import Kind, attributes as A
from ._context import activate, in_context, parent, stopped, track_stream


class ToolHooks:
    """Wrappers for ``agno.tools.function.FunctionCall.execute``/``aexecute``."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry

    def _start(self, call: Any) -> SemanticSpan:
        fn = call.function
        span = self.telemetry.start_span(Kind.TOOL, fn.name, parent=parent())
        with guard("agno.tool.start"):
            span.set_tool(fn.name, call_id=call.call_id, description=fn.description,
                          arguments=call.arguments if span.records_content else None)
        return span

    def _finish(self, span: SemanticSpan, call: Any, outcome: Any, *, result: Any = None, end: bool = True) -> None:
        with guard("agno.tool.end"):
            if probes.attr(outcome, "status", "success") == "failure":
                span.set_error(A.TOOL_ERROR, outcome.error or call.error or "tool failed")  # in-band: no exception
            elif span.records_content:
                value = result if result is not None else probes.attr(outcome, "result")
                if value is not None:
                    span.set_tool_result(value)
            if getattr(call.function, "requires_confirmation", None) or \
                    getattr(call.function, "requires_user_input", None) or getattr(call.function, "external_execution", None):
                if probes.attr(outcome, "result") is None:
                    span.mark_paused()
        if end:
            span.end()

    def calls_to_run(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``Model.get_function_calls_to_run(assistant_message, messages, functions)``: the calls it answered itself
        (an error tool message appended to ``messages`` instead of a call to run) as refused tool spans."""
        messages = args[1] if len(args) > 1 else kwargs.get("messages")
        before = len(messages) if isinstance(messages, list) else None
        result = wrapped(*args, **kwargs)
        if before is not None and len(messages) > before and instrumentation_enabled():
            with guard("agno.tool.refused"):
                message = args[0] if args else kwargs.get("assistant_message")
                functions = (args[2] if len(args) > 2 else kwargs.get("functions")) or {}
                asked = {c.get("id"): c.get("function") or {} for c in probes.attr(message, "tool_calls") or ()
                         if isinstance(c, dict)}
                for answer in messages[before:]:
                    call_id = probes.attr(answer, "tool_call_id")
                    if call_id not in asked:
                        continue
                    name = asked[call_id].get("name")
                    self.telemetry.refused_tool_call(
                        name if isinstance(name, str) else None,
                        A.INVALID_TOOL_ARGUMENTS if name in functions else A.UNKNOWN_TOOL, parent=parent(),
                        call_id=call_id if isinstance(call_id, str) else None,
                        arguments=json_arguments(asked[call_id].get("arguments")),
                        result=probes.attr(answer, "content"))
        return result

    def execute_sync(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``FunctionCall.execute`` (a plain method: no per-call check)."""
        return self._execute(wrapped, instance, args, kwargs, False)

    def execute_async(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``FunctionCall.aexecute`` (a coroutine method: no per-call check)."""
        return self._execute(wrapped, instance, args, kwargs, True)

    def _execute(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict, is_async: bool) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        span = None
        with guard("agno.tool.open"):
            span = self._start(instance)
        if span is None:
            return wrapped(*args, **kwargs)
        if is_async:
            return self._aexecute(wrapped, instance, args, kwargs, span)
        try:
            with activate(span):
                outcome = wrapped(*args, **kwargs)
        except BaseException as exc:
            span.record_error(exc, control_flow=stopped(exc))
            span.end()
            raise
        return self._after(span, instance, outcome)

    async def _aexecute(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict, span: SemanticSpan) -> Any:
        try:
            with activate(span):
                outcome = await wrapped(*args, **kwargs)
        except BaseException as exc:
            span.record_error(exc, control_flow=stopped(exc))
            span.end()
            raise
        return self._after(span, instance, outcome)

    def _after(self, span: SemanticSpan, call: Any, outcome: Any) -> Any:
        result = probes.attr(outcome, "result")
        streamed = None
        if probes.attr(outcome, "status") == "success" and (probes.is_iterator(result)
                                                            or probes.is_async_iterator(result)):
            with guard("agno.tool.stream"):
                streamed = self._stream(span, call, outcome, result)
        if streamed is None:
            self._finish(span, call, outcome)
            return outcome
        outcome.result = streamed
        if call.result is result:
            call.result = streamed
        return outcome

    def _stream(self, span: SemanticSpan, call: Any, outcome: Any, result: Any) -> Any:
        texts: list[str] = []

        def on_chunk(item: Any) -> None:
            event = probes.text(probes.attr(item, "event", "") or "")
            content = item if isinstance(item, str) else probes.attr(item, "content") \
                if event.endswith("RunContent") else None
            if isinstance(content, str):
                texts.append(content)

        def on_end(s: SemanticSpan, abandoned: bool) -> None:
            self._finish(span, call, outcome, result="".join(texts) or None, end=False)
            if abandoned:  # the caller left the run: the call never finished (a control-flow end, not an error)
                s.record_error(GeneratorExit(), control_flow=True)

        inner = in_context(result, span)
        return track_stream(wrap_stream(inner, span, on_chunk=on_chunk, on_end=on_end,
                                        is_error=lambda exc: not stopped(exc)), span)
