"""Model spans: one ``chat {model id}`` span per provider request, for any ``agno.models.base.Model`` subclass.

Agno's ``Model.response()``/``aresponse()`` loop (and the streaming
``response_stream``/``aresponse_stream``) makes one provider request per turn
through four methods of the base class: ``_process_model_response``,
``_aprocess_model_response``, ``process_response_stream`` and
``aprocess_response_stream``. We wrap those on the base class, so a model
class written by the user (or one Agno adds later) gets its spans too, and a
subclass whose ``ainvoke_stream`` calls its own ``invoke_stream`` still gives
one span per request. Each call receives the request's ``messages``, its
formatted ``tools`` and the ``assistant_message`` Agno fills from the
response: we read input, output and usage from those, after the request.
A request Agno retries (``retries``, ``retry_with_guidance``) is one span.
"""

from __future__ import annotations

from typing import Any


from ..._spans import SemanticSpan, Telemetry, guard, instrumentation_enabled, output_type_of, wrap_stream
from ...semconv import Kind
from . import _convert, _reasoning
from ._context import activate, in_context, parent, remember_error, track_stream


def _provider(model: Any) -> str | None:
    provider = getattr(model, "provider", None) or getattr(model, "name", None)
    return str(provider).split(" (")[0].strip().lower() or None if provider else None


def _sent(span: SemanticSpan, kwargs: dict) -> list:
    """The request's messages as sent (a copy: Agno appends the reply to its list afterwards); none when
    content is off (they are not recorded)."""
    return list(kwargs.get("messages") or ()) if span.records_content else []


class ModelHooks:
    """Wrappers for the four per-request methods of ``agno.models.base.Model``."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry

    def _start(self, model: Any, kwargs: dict) -> SemanticSpan:
        span = self.telemetry.start_span(Kind.MODEL, getattr(model, "id", None), parent=parent())
        if _reasoning.in_reasoning_phase():
            _reasoning.mark(span)
        with guard("agno.model.request"):
            span.set_model(request_model=getattr(model, "id", None), provider=_provider(model),
                           parameters={"stream": True} if "stream_data" in kwargs else None)
            # The endpoint the model was given (its base_url; the default one is its SDK client's) and the output
            # format the agent asks for (a JSON mode dict, or the schema class of native structured outputs).
            span.set_server(getattr(model, "base_url", None))
            span.set_request_output(output_type_of(kwargs.get("response_format")))
        return span

    def _finish(self, span: SemanticSpan, kwargs: dict, messages: list, *, error: BaseException | None = None,
                abandoned: bool = False, end: bool = True) -> None:
        message = kwargs.get("assistant_message")
        stream_data = kwargs.get("stream_data")
        if span.records_content:  # content off: nothing to build (Agno keeps no finish reason either)
            sent = tools = out = None
            with guard("agno.model.input"):
                sent = _convert.chat_messages(messages)
                tools = _convert.tool_definitions(kwargs.get("tools"))
            with guard("agno.model.output"):
                filled = message is not None and (
                    message.content is not None or message.tool_calls or message.reasoning_content)
                if error is None or filled or abandoned:
                    if filled:
                        out = _convert.output_message(message)
                    elif stream_data is not None:
                        out = _convert.stream_output_message(stream_data, finished=error is None and not abandoned)
                    if out is not None and _reasoning.is_reasoning(span):
                        out = _reasoning.as_reasoning(out)  # the reasoning agent's text is thinking, not an answer
                    if out is not None and not out.parts:
                        out = None
            with guard("agno.model.messages"):  # one call: input, tools offered and output in one SDK write
                span.set_messages(input=sent, tools=tools, output=[out] if out is not None else None)
        with guard("agno.model.usage"):
            metrics = getattr(message, "metrics", None)
            usage = _convert.usage(metrics)
            if usage is None and stream_data is not None:
                usage = _convert.usage(getattr(stream_data, "response_metrics", None))
            span.set_usage(usage)
        if abandoned:
            span.mark_abandoned()
        if error is not None:
            cancelled = not isinstance(error, Exception)
            span.record_error(error, control_flow=cancelled)
            if not cancelled:
                remember_error(span, error)
        if end:
            span.end()

    # -- wrappers ----------------------------------------------------------------------
    def request_sync(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``_process_model_response`` (a plain method: no per-call check)."""
        return self._request(wrapped, instance, args, kwargs, False)

    def request_async(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``_aprocess_model_response`` (a coroutine method: no per-call check)."""
        return self._request(wrapped, instance, args, kwargs, True)

    def _request(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict, is_async: bool) -> Any:
        if not instrumentation_enabled() or args:
            return wrapped(*args, **kwargs)
        span = None
        with guard("agno.model.start"):
            span = self._start(instance, kwargs)
            messages = _sent(span, kwargs)
        if span is None:
            return wrapped(*args, **kwargs)
        if is_async:
            return self._arequest(wrapped, kwargs, span, messages)
        try:
            with activate(span):
                result = wrapped(**kwargs)
        except BaseException as exc:
            self._finish(span, kwargs, messages, error=exc)
            raise
        self._finish(span, kwargs, messages)
        return result

    async def _arequest(self, wrapped: Any, kwargs: dict, span: SemanticSpan, messages: list) -> Any:
        try:
            with activate(span):
                result = await wrapped(**kwargs)
        except BaseException as exc:
            self._finish(span, kwargs, messages, error=exc)
            raise
        self._finish(span, kwargs, messages)
        return result

    def stream(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``process_response_stream`` and ``aprocess_response_stream``: the span ends with the stream.

        The span is current while a step of the stream runs (the provider
        request, made by the first step, nests under it) and not between steps
        (Agno's run loop and the application get their items then)."""
        if not instrumentation_enabled() or args:
            return wrapped(*args, **kwargs)
        span = None
        with guard("agno.model.start"):
            span = self._start(instance, kwargs)
            messages = _sent(span, kwargs)
        if span is None:
            return wrapped(*args, **kwargs)
        try:
            with activate(span):
                iterator = wrapped(**kwargs)
        except BaseException as exc:
            self._finish(span, kwargs, messages, error=exc)
            raise
        def on_end(s: SemanticSpan, abandoned: bool) -> None:  # the stream layer records an error and ends
            self._finish(span, kwargs, messages, abandoned=abandoned, end=False)

        def is_error(exc: BaseException) -> bool:
            if isinstance(exc, Exception):
                remember_error(span, exc)
                return True
            return False

        wrapped_stream = None
        with guard("agno.model.stream"):
            # the provider call happens while the stream is advanced: each step sees the model span (so an
            # instrumented client enriches it instead of opening a second one), nothing between steps
            stepped = in_context(iterator, span)
            wrapped_stream = track_stream(wrap_stream(stepped, span, on_end=on_end, is_error=is_error), span)
        if wrapped_stream is None:
            span.end()
            return iterator
        return wrapped_stream
