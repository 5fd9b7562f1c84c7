"""The Responses API (``POST /responses``: ``create``, ``stream``, ``parse``): request body,
``Response`` and the event stream, converted to the span layer's parts.

Shapes: OpenAI API reference, Responses (input items ``message``,
the calls of a tool the client runs and their outputs (``function_call``, ``custom_tool_call``, ``shell_call``…:
:mod:`.._responses_items`), ``reasoning``; content ``input_text``,
``input_image``, ``input_file``, ``output_text``, ``refusal``; events
``response.created``, ``response.output_text.delta``, …, and the terminal
``response.completed`` / ``response.incomplete`` / ``response.failed`` that carry
the whole response with its usage). Reasoning summaries become ``reasoning``
parts; encrypted reasoning is never recorded. The Responses API has no finish
reason: ``stop`` (or ``tool_call`` when the output calls tools) for a
completed response, the ``incomplete_details.reason`` otherwise; a stream that ends without a terminal event
has none (the span says it was cut: :class:`ResponseStreamAccumulator`). A ``failed`` response, or a stream's
``error`` event (which the SDK hands on as an event, not raising), fails the span with the API's error code as
``error.type`` and its message as the status description (content on). An item of a type not read here (a
built-in tool's call, a new item) is a generic part with its fields. ``service_tier`` asked and
answered (the terminal event's response: the tier that served it) go to ``openai.request.service_tier`` /
``openai.response.service_tier`` (OTel GenAI semconv, OpenAI page).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._spans import (ChatMessage, FilePart, Part, ReasoningPart, SemanticSpan, TextPart, ToolCallPart,
                       ToolCallResponsePart, ToolDefinition, Usage, generic_part, media_part, output_type_of)
from ..._spans.messages import json_arguments
from ...semconv import attributes as A
from .._responses_items import CALL_ARGUMENTS, CALL_OUTPUTS, answer_of, call_of, finish_reason
from .._sdk_client import Accumulator, Endpoint, Outcome, field_of, token_count
from ._chat import request_attributes, service_tier_attributes

_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def _content_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    parts: list[Part] = []
    for item in content or ():
        kind = field_of(item, "type")
        if kind in ("input_text", "output_text", "text"):
            parts.append(TextPart(field_of(item, "text", "")))
        elif kind == "refusal":
            parts.append(TextPart(field_of(item, "refusal", "")))
        elif kind == "input_image":
            if field_of(item, "image_url"):
                parts.append(media_part(field_of(item, "image_url"), modality="image"))
            elif field_of(item, "file_id"):
                parts.append(FilePart(field_of(item, "file_id"), "image"))
        elif kind == "input_file":
            if field_of(item, "file_data"):
                parts.append(media_part(field_of(item, "file_data"), modality="document"))
            elif field_of(item, "file_url"):
                parts.append(media_part(field_of(item, "file_url"), modality="document"))
            elif field_of(item, "file_id"):
                parts.append(FilePart(field_of(item, "file_id"), "document"))
        elif kind is not None:
            parts.append(generic_part(item, kind))
    return parts


def _summary_parts(item: Any) -> list[Part]:
    texts = [field_of(s, "text") for s in field_of(item, "summary", [])]
    return [ReasoningPart(t) for t in texts if isinstance(t, str) and t]


def _call_part(item: Any, kind: str) -> ToolCallPart:
    """A call item (:data:`CALL_ARGUMENTS`): a function call's JSON arguments decoded; a custom tool's input is
    free text, kept as it came."""
    name, arguments, call_id = call_of(item, kind)
    return ToolCallPart(name, json_arguments(arguments) if kind == "function_call" else arguments, call_id)


def input_messages(items: Any) -> list[ChatMessage]:
    """The request's ``input`` (a string or items); consecutive model items join one assistant message."""
    if isinstance(items, str):
        return [ChatMessage("user", parts=[TextPart(items)])]
    out: list[ChatMessage] = []

    def assistant(parts: list[Part]) -> None:
        if out and out[-1].role == "assistant":
            out[-1].parts.extend(parts)
        else:
            out.append(ChatMessage("assistant", parts=parts))

    for item in items or ():
        kind = field_of(item, "type", "message")
        if kind == "message":
            role = field_of(item, "role", "user")
            parts = _content_parts(field_of(item, "content"))
            if role == "assistant":
                assistant(parts)
            else:
                out.append(ChatMessage("system" if role == "developer" else role, parts=parts))
        elif kind in CALL_ARGUMENTS:
            assistant([_call_part(item, kind)])
        elif kind in CALL_OUTPUTS:
            out.append(ChatMessage("tool", parts=[ToolCallResponsePart(*answer_of(item))]))
        elif kind == "reasoning":
            assistant(_summary_parts(item))
        else:
            assistant([generic_part(item, kind)])
    return out


def tool_definitions(tools: Any) -> list[ToolDefinition]:
    """The request's ``tools``: function tools with their schema, built-in tools by type."""
    out = []
    for t in tools or ():
        kind = field_of(t, "type", "function")
        out.append(ToolDefinition(field_of(t, "name", str(kind)), field_of(t, "description"),
                                  field_of(t, "parameters"), "function" if kind == "function" else str(kind)))
    return out


def usage_of(usage: Any) -> Usage | None:
    """Responses usage (``input_tokens`` include the cached ones)."""
    if usage is None:
        return None
    return Usage(input_tokens=token_count(field_of(usage, "input_tokens")),
                 output_tokens=token_count(field_of(usage, "output_tokens")),
                 total_tokens=token_count(field_of(usage, "total_tokens")),
                 cache_read_tokens=token_count(field_of(field_of(usage, "input_tokens_details"), "cached_tokens")),
                 reasoning_tokens=token_count(field_of(field_of(usage, "output_tokens_details"), "reasoning_tokens")))


def output_parts(output: Any) -> list[Part]:
    """A response's ``output`` items as the parts of one assistant message."""
    parts: list[Part] = []
    for item in output or ():
        kind = field_of(item, "type")
        if kind == "message":
            parts.extend(_content_parts(field_of(item, "content")))
        elif kind in CALL_ARGUMENTS:
            parts.append(_call_part(item, kind))
        elif kind == "reasoning":
            parts.extend(_summary_parts(item))
        elif kind is not None:
            parts.append(generic_part(item, kind))  # a built-in tool's call, a new item type: its fields kept
    return parts


def response_outcome(response: Any, content: bool = True) -> Outcome:
    """A whole ``Response`` (a ``ParsedResponse``'s parsed object is the output). With ``content`` false
    the message carries only its finish reason (see :meth:`Endpoint.outcome`)."""
    output = field_of(response, "output")
    parts = output_parts(output) if content else []
    status = field_of(response, "status")
    # "completed" is told apart by what it produced
    calls = any(type(p) is ToolCallPart for p in parts) if content else \
        any(field_of(item, "type") in CALL_ARGUMENTS for item in output or ())  # each such item is one call part
    finish = finish_reason(status, field_of(field_of(response, "incomplete_details"), "reason"), calls)
    return Outcome(response_id=field_of(response, "id"), response_model=field_of(response, "model"),
                   messages=[ChatMessage("assistant", parts=parts, finish_reason=finish)],
                   usage=usage_of(field_of(response, "usage")),
                   output=field_of(response, "output_parsed") if content else None,
                   attributes=service_tier_attributes(field_of(response, "service_tier")),
                   error=api_error(field_of(response, "error")) if status == "failed" else None)


def api_error(error: Any) -> tuple[str, str | None]:
    """``(error.type, message)`` of an API-reported error (a failed response's ``error``, an ``error`` event):
    its ``code``, OTel's fallback ``_OTHER`` when it has none."""
    code = field_of(error, "code")
    return (code if isinstance(code, str) and code else A.ERROR_TYPE_OTHER), field_of(error, "message")


class ResponseStreamAccumulator(Accumulator):
    """The terminal event's response when it comes. When it never does (a stream left early or cut short):
    the output items that arrived whole (``response.output_item.done``) and, for those still arriving, their
    text deltas so far, in output order, with no finish reason and no usage (only the terminal event's response
    carries either)."""

    def __init__(self) -> None:
        self.response: Any = None
        self.final: Any = None
        self.items: dict[int, Any] = {}  # output_index → the item, once done
        self.texts: dict[int, str] = {}  # output_index → its text deltas so far
        self.error: tuple[str, str | None] | None = None  # an ``error`` event's (it ends the stream)

    def add(self, event: Any) -> bool:
        kind = field_of(event, "type")
        if kind in _TERMINAL:
            self.final = field_of(event, "response")
            return True
        if kind == "error":
            self.error = api_error(event)
            return True
        if kind == "response.output_text.delta":
            index = field_of(event, "output_index", 0)
            self.texts[index] = self.texts.get(index, "") + field_of(event, "delta", "")
        elif kind == "response.output_item.done":
            self.items[field_of(event, "output_index", len(self.items))] = field_of(event, "item")
        elif kind in ("response.created", "response.in_progress"):
            self.response = field_of(event, "response")
        return False

    def outcome(self) -> Outcome:
        if self.final is not None:
            return response_outcome(self.final)
        partial = Outcome(response_id=field_of(self.response, "id"), response_model=field_of(self.response, "model"))
        parts: list[Part] = []
        for index in sorted(self.items.keys() | self.texts.keys()):
            if index in self.items:
                parts.extend(output_parts([self.items[index]]))
            elif self.texts[index]:
                parts.append(TextPart(self.texts[index]))
        if parts:
            partial.messages = [ChatMessage("assistant", parts=parts)]
        partial.error = self.error
        return partial

    def missing(self) -> str | None:
        """``response.completed`` (or ``response.incomplete``/``response.failed``, or an ``error`` event) ends a
        response."""
        return None if self.final is not None or self.error is not None else "response.completed"


_PARAMETERS = ("temperature", "top_p", "max_output_tokens", "stream")


class ResponsesEndpoint(Endpoint):
    """``POST /responses`` → one ``model`` span (``chat {model}``)."""

    def parameters(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return {k: body[k] for k in _PARAMETERS if k in body}

    def request_output(self, body: Mapping[str, Any]) -> tuple[str | None, Any]:
        text = body.get("text")
        return output_type_of(text.get("format") if isinstance(text, Mapping) else None), None

    def record_request(self, span: SemanticSpan, body: Mapping[str, Any]) -> None:
        request_attributes(span, body, "responses")
        if not span.records_content:
            return
        instructions = body.get("instructions")
        span.set_messages(input=input_messages(body.get("input")),
                          system=[instructions] if isinstance(instructions, str) and instructions else None,
                          tools=tool_definitions(body.get("tools")))

    def outcome(self, result: Any, content: bool = True) -> Outcome:
        return response_outcome(result, content)

    def accumulator(self, body: Mapping[str, Any], stream: Any) -> Accumulator:
        return ResponseStreamAccumulator()
