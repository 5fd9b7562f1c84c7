"""The Messages API (``POST /v1/messages``, also ``beta.messages``): request body, whole
``Message`` and the SSE stream, converted to the span layer's parts.

Shapes: Anthropic Messages API reference (content blocks ``text``, ``image``,
``document``, ``tool_use``, ``tool_result``, ``thinking``, ``redacted_thinking``;
stream events ``message_start``, ``content_block_start/delta/stop``,
``message_delta``, ``message_stop``). Thinking becomes a ``reasoning`` part;
signatures and redacted thinking are never recorded.

Usage follows OTel GenAI semconv v1.41: ``gen_ai.usage.input_tokens`` counts all
input tokens, so it is ``input_tokens + cache_creation_input_tokens +
cache_read_input_tokens`` (Anthropic reports the three apart), the same for a
whole message and a streamed one (``message_start`` gives them, a later
``message_delta`` may restate them; its ``output_tokens`` is the final count).
``message_start``'s own ``output_tokens`` is an interim count (1 or so) and is never
recorded: a stream left before ``message_delta`` has no output token count.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..._spans import (ChatMessage, FilePart, GenericPart, Part, ReasoningPart, SemanticSpan, TextPart, ToolCallPart,
                       ToolCallResponsePart, ToolDefinition, Usage, generic_part, media_part, token_sum)
from ..._spans.messages import BlobPart, modality_of
from .._sdk_client import Accumulator, Endpoint, Outcome, field_of, token_count

_SKIPPED_BLOCKS = ("redacted_thinking",)  # encrypted thinking: never recorded


def _source_part(source: Any, default_modality: str) -> Part | None:
    kind = field_of(source, "type")
    mime = field_of(source, "media_type")
    modality = modality_of(mime, default_modality) if mime else default_modality
    if kind == "base64":
        return BlobPart(field_of(source, "data", ""), modality, mime)
    if kind == "url":
        return media_part(field_of(source, "url", ""), modality=modality, mime_type=mime)
    if kind == "file":
        return FilePart(field_of(source, "file_id", ""), modality, mime)
    if kind == "text":  # a plain-text document
        return TextPart(field_of(source, "data", ""))
    if kind == "content":
        return GenericPart("document", {"content": _to_data(field_of(source, "content"))})
    return None


def _to_data(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json", exclude_none=True)
    if isinstance(value, list):
        return [_to_data(v) for v in value]
    return value


def block_parts(block: Any) -> list[Part]:
    """The parts of one content block (request dict or response model)."""
    if isinstance(block, str):
        return [TextPart(block)]
    kind = field_of(block, "type")
    if kind == "text":
        return [TextPart(field_of(block, "text", ""))]
    if kind == "thinking":
        text = field_of(block, "thinking", "")
        return [ReasoningPart(text)] if text else []
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        return [ToolCallPart(field_of(block, "name", ""), _to_data(field_of(block, "input", {})),
                             field_of(block, "id"))]
    if kind == "tool_result":
        content = field_of(block, "content")
        if isinstance(content, list):
            texts = [field_of(b, "text") for b in content if field_of(b, "type") == "text"]
            content = "".join(t for t in texts if t) if len(texts) == len(content) else _to_data(content)
        return [ToolCallResponsePart(content, field_of(block, "tool_use_id"))]
    if kind == "image":
        part = _source_part(field_of(block, "source"), "image")
        return [part] if part is not None else []
    if kind == "document":
        part = _source_part(field_of(block, "source"), "document")
        return [part] if part is not None else []
    if kind in _SKIPPED_BLOCKS or kind is None:
        return []
    return [generic_part(_to_data(block), kind)]


def _content_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    parts: list[Part] = []
    for block in content or ():
        parts.extend(block_parts(block))
    return parts


def input_messages(messages: Any) -> list[ChatMessage]:
    """The request's ``messages``: a user message holding only tool results becomes a ``tool`` message."""
    out: list[ChatMessage] = []
    for m in messages or ():
        role = field_of(m, "role", "user")
        parts = _content_parts(field_of(m, "content"))
        if role == "user" and parts and all(type(p) is ToolCallResponsePart for p in parts):
            role = "tool"
        out.append(ChatMessage(role, parts=parts))
    return out


def system_parts(system: Any) -> list[Part]:
    """The request's ``system`` (a string or text blocks)."""
    return _content_parts(system)


def tool_definitions(tools: Any) -> list[ToolDefinition]:
    """The request's ``tools``: client tools with their input schema, server tools by type."""
    out = []
    for t in tools or ():
        kind = field_of(t, "type")
        out.append(ToolDefinition(field_of(t, "name", str(kind)), field_of(t, "description"),
                                  field_of(t, "input_schema"),
                                  "function" if kind in (None, "custom") else str(kind)))
    return out


def usage_of(usage: Any) -> Usage | None:
    """Anthropic usage → :class:`Usage` (input counts all input tokens; see the module docstring)."""
    if usage is None:
        return None
    base = token_count(field_of(usage, "input_tokens"))
    created = token_count(field_of(usage, "cache_creation_input_tokens"))
    read = token_count(field_of(usage, "cache_read_input_tokens"))
    output = token_count(field_of(usage, "output_tokens"))
    thinking = token_count(field_of(field_of(usage, "output_tokens_details"), "thinking_tokens"))
    total_in = None if base is None else token_sum(base, created, read)
    if total_in is None and output is None:
        return None
    return Usage(input_tokens=total_in, output_tokens=output, cache_read_tokens=read,
                 cache_creation_tokens=created, reasoning_tokens=thinking)


def message_outcome(message: Any, content: bool = True) -> Outcome:
    """A whole ``Message`` (with ``content`` false, without its parts: see :meth:`Endpoint.outcome`)."""
    parts = _content_parts(field_of(message, "content")) if content else []
    return Outcome(response_id=field_of(message, "id"), response_model=field_of(message, "model"),
                   messages=[ChatMessage("assistant", parts=parts, finish_reason=field_of(message, "stop_reason"))],
                   usage=usage_of(field_of(message, "usage")))


_INPUT_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_USAGE_KEYS = (*_INPUT_USAGE_KEYS, "output_tokens")


class MessageStreamAccumulator(Accumulator):
    """Assembles the SSE events of one streamed message (AC-1: final usage, whole tool arguments)."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.stopped = False

    def _merge_usage(self, usage: Any, keys: tuple[str, ...] = _USAGE_KEYS) -> None:
        for key in keys:
            value = token_count(field_of(usage, key))
            if value is not None:
                self.usage[key] = value
        thinking = token_count(field_of(field_of(usage, "output_tokens_details"), "thinking_tokens"))
        if thinking is not None:
            self.usage["output_tokens_details"] = {"thinking_tokens": thinking}

    def add(self, event: Any) -> bool:
        kind = field_of(event, "type")
        if kind == "message_start":
            message = field_of(event, "message")
            self.id, self.model = field_of(message, "id"), field_of(message, "model")
            self._merge_usage(field_of(message, "usage"), _INPUT_USAGE_KEYS)  # its output count is interim
        elif kind == "content_block_start":
            block = _to_data(field_of(event, "content_block"))
            if isinstance(block, dict):
                if block.get("type") in ("tool_use", "server_tool_use", "mcp_tool_use"):
                    block["_json"] = ""  # arguments arrive as input_json_delta fragments
                self.blocks[field_of(event, "index", len(self.blocks))] = block
        elif kind == "content_block_delta":
            block = self.blocks.setdefault(field_of(event, "index", 0), {"type": "text", "text": ""})
            delta = field_of(event, "delta")
            dtype = field_of(delta, "type")
            if dtype == "text_delta":
                block["text"] = block.get("text", "") + field_of(delta, "text", "")
            elif dtype == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + field_of(delta, "thinking", "")
            elif dtype == "input_json_delta":
                block["_json"] = block.get("_json", "") + field_of(delta, "partial_json", "")
            # signature_delta and citations_delta: not recorded
        elif kind == "message_delta":
            self.stop_reason = field_of(field_of(event, "delta"), "stop_reason") or self.stop_reason
            self._merge_usage(field_of(event, "usage"))
        elif kind == "message_stop":
            self.stopped = True
            return True
        return False

    def missing(self) -> str | None:
        """``message_stop`` ends a message; without it the stream was cut short (the output count of
        ``message_start`` is interim and never recorded; ``message_delta``'s, when it came, is final)."""
        return None if self.stopped else "message_stop"

    def outcome(self) -> Outcome:
        parts: list[Part] = []
        for _, block in sorted(self.blocks.items()):
            if "_json" in block:
                block = dict(block)
                text = block.pop("_json")
                if text:
                    try:
                        block["input"] = json.loads(text)
                    except ValueError:
                        block["input"] = text  # cut short: keep what arrived
            parts.extend(block_parts(block))
        started = self.id is not None or parts  # a stream let go before message_start gave no message
        return Outcome(response_id=self.id, response_model=self.model,
                       messages=[ChatMessage("assistant", parts=parts, finish_reason=self.stop_reason)] if started
                       else [],
                       usage=usage_of(self.usage) if self.usage else None)


_PARAMETERS = ("max_tokens", "temperature", "top_p", "top_k", "stop_sequences", "stream")


class MessagesEndpoint(Endpoint):
    """``POST /v1/messages`` → one ``model`` span (``chat {model}``)."""

    def parameters(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return {k: body[k] for k in _PARAMETERS if k in body}

    def request_output(self, body: Mapping[str, Any]) -> tuple[str | None, Any]:
        # A JSON schema for the answer: output_config.format (GA), output_format (the structured-outputs beta).
        config = body.get("output_config")
        output_format = config.get("format") if isinstance(config, Mapping) else body.get("output_format")
        kind = output_format.get("type") if isinstance(output_format, Mapping) else None
        return ("json" if kind == "json_schema" else None), None

    def record_request(self, span: SemanticSpan, body: Mapping[str, Any]) -> None:
        if not span.records_content:
            return
        span.set_messages(input=input_messages(body.get("messages")), system=system_parts(body.get("system")),
                          tools=tool_definitions(body.get("tools")))

    def outcome(self, result: Any, content: bool = True) -> Outcome:
        return message_outcome(result, content)

    def accumulator(self, body: Mapping[str, Any], stream: Any) -> Accumulator:
        return MessageStreamAccumulator()
