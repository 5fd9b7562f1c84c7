"""The dispatcher event handler: model messages, responses, usage and stream progress.

Model calls report their payloads as events tagged with the dispatcher span
they happened in (``event.span_id``): ``LLMChatStartEvent`` /
``LLMCompletionStartEvent`` carry the messages or prompt, the ``…EndEvent``
carries the response (and, for a stream, comes when the stream is consumed, after
the dispatcher span has exited), ``…InProgressEvent`` each streamed chunk, and
``ExceptionEvent`` a stream that failed or was closed early (``GeneratorExit``).
The span handler resolves the id to our model span. Other events are ignored:
everything else we record comes from the spans' arguments and results. Messages
are converted only for a span that records content; with content off a
response gives its finish reason, usage and identity only.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from pydantic import Field

from ..._spans import guard
from . import _extract as extract
from ._span_handler import LlamaIndexSpanHandler


class LlamaIndexEventHandler(BaseEventHandler):
    """Routes model events to the model spans of ``spans``.

    Args:
        spans: the span handler registered alongside (it knows which span an id is).
    """

    # A plain field: a pydantic private attribute is read through ``__getattr__`` (~2 µs), once per event.
    spans: Any = Field(default=None, exclude=True, repr=False)

    def __init__(self, spans: LlamaIndexSpanHandler):
        super().__init__()
        self.spans = spans

    @classmethod
    def class_name(cls) -> str:
        return "OtelAgentsEventHandler"

    def handle(self, event: Any, **kwargs: Any) -> None:
        route = _ROUTES.get(type(event).__name__)
        if route is not None:
            with guard(route[1]):
                route[0](self, event)

    # -- routes ----------------------------------------------------------------------
    def _chat_start(self, event: Any) -> None:
        span = self.spans.model_span(event.span_id)
        if span is not None and span.records_content:
            span.set_messages(input=extract.chat_messages(event.messages))

    def _completion_start(self, event: Any) -> None:
        span = self.spans.model_span(event.span_id)
        if span is not None and span.records_content:
            span.set_messages(input=extract.prompt_messages(event.prompt))

    def _progress(self, event: Any) -> None:
        self.spans.streams.chunk(event.span_id)

    def _end(self, event: Any) -> None:
        span = self.spans.model_span(event.span_id)
        if span is None:
            return
        response = event.response
        if span.records_content:
            message = extract.response_message(response)
            if message is not None:
                span.set_messages(output=[message])
        elif response is not None:  # what set_messages keeps of the message with content off
            span.set_finish_reasons([extract.finish_reason(response)])
        span.set_usage(extract.usage(response))
        response_model, response_id = extract.response_identity(response)
        span.set_model(response_model=response_model, response_id=response_id)
        self.spans.streams.finish(event.span_id)

    def _exception(self, event: Any) -> None:
        exc = event.exception
        if isinstance(exc, GeneratorExit):
            self.spans.streams.finish(event.span_id, abandoned=True)
        else:
            self.spans.streams.finish(event.span_id, error=exc)

    def _cancelled(self, event: Any) -> None:
        span = self.spans.enclosing_span(event.span_id)
        if span is not None:
            cancelled = asyncio.CancelledError(getattr(event, "reason", ""))
            span.record_error(cancelled, control_flow=True)
            agents = self.spans.agents_of(event.span_id)
            if agents is not None:  # an AgentWorkflow run: its active agent was cancelled (its stop reason)
                agents.record_active(cancelled, control_flow=True)


_ROUTES: dict[str, tuple[Callable[[LlamaIndexEventHandler, Any], None], str]] = {
    name: (route, f"llama_index.event.{name}") for name, route in {
        "LLMChatStartEvent": LlamaIndexEventHandler._chat_start,
        "LLMCompletionStartEvent": LlamaIndexEventHandler._completion_start,
        "LLMChatInProgressEvent": LlamaIndexEventHandler._progress,
        "LLMCompletionInProgressEvent": LlamaIndexEventHandler._progress,
        "LLMChatEndEvent": LlamaIndexEventHandler._end,
        "LLMCompletionEndEvent": LlamaIndexEventHandler._end,
        "ExceptionEvent": LlamaIndexEventHandler._exception,
        "SpanCancelledEvent": LlamaIndexEventHandler._cancelled,
    }.items()
}
"""Routed event class name → (route, guard site): every other event is ignored at the cost of one lookup."""
