"""A framework-neutral chat message, and its two encodings.

Instrumentors convert their framework's messages into :class:`ChatMessage`;
the span layer writes them as OTel GenAI JSON (``gen_ai.input.messages`` /
``gen_ai.output.messages`` / ``gen_ai.system_instructions``, semconv v1.41
"parts" shape) and as OpenInference flattened attributes
(``llm.input_messages.{i}.message.role`` …).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..semconv import attributes as A


@dataclass
class ToolCallRequest:
    """A model's request to call a tool: ``id`` (may be ``None``), ``name``, ``arguments`` (any JSON-able value)."""

    name: str
    arguments: Any = None
    id: str | None = None


@dataclass
class ChatMessage:
    """One chat message.

    Attributes:
        role: ``system``, ``user``, ``assistant`` or ``tool`` (GenAI role names).
        content: the text (or any JSON-able content), ``None`` when empty.
        tool_calls: tool calls requested by an assistant message.
        tool_call_id: for a ``tool`` message, the call it answers.
        finish_reason: for an output message, why generation stopped.
    """

    role: str
    content: Any = None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    tool_call_id: str | None = None
    finish_reason: str | None = None


# Providers' own finish reasons → the OTel GenAI values (semconv v1.41: stop, length,
# content_filter, tool_call, error), so every framework reports the same words.
_FINISH_REASONS = {
    "stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "eos": "stop", "complete": "stop",
    "length": "length", "max_tokens": "length", "max_output_tokens": "length", "model_length": "length",
    "content_filter": "content_filter", "safety": "content_filter", "recitation": "content_filter",
    "blocklist": "content_filter", "prohibited_content": "content_filter", "refusal": "content_filter",
    "tool_call": "tool_call", "tool_calls": "tool_call", "function_call": "tool_call", "tool_use": "tool_call",
    "error": "error",
}


def normalize_finish_reason(reason: object) -> str:
    """A provider's finish reason as the OTel GenAI value; unknown values pass through, lower-cased."""
    text = str(reason).strip()
    return _FINISH_REASONS.get(text.lower(), text.lower())


def genai_parts(msg: ChatMessage) -> list[dict[str, Any]]:
    """The GenAI ``parts`` list of one message."""
    parts: list[dict[str, Any]] = []
    if msg.role == "tool":
        parts.append({"type": "tool_call_response", "id": msg.tool_call_id, "response": msg.content})
        return parts
    if msg.content not in (None, "", []):
        parts.append({"type": "text", "content": msg.content})
    for call in msg.tool_calls:
        parts.append({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments})
    return parts


def genai_messages(messages: list[ChatMessage], *, output: bool = False) -> list[dict[str, Any]]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` data (before JSON encoding)."""
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "parts": genai_parts(m)}
        if output:
            item["finish_reason"] = normalize_finish_reason(m.finish_reason or "stop")
        out.append(item)
    return out


def openinference_messages(prefix: str, messages: list[ChatMessage], limit: int) -> list[tuple[str, Any]]:
    """Flattened OpenInference message attributes, for the last ``limit`` messages.

    Returns ``(key, value)`` pairs; values are raw (the span layer encodes and
    truncates them). ``prefix`` is ``llm.input_messages`` or ``llm.output_messages``.
    """
    pairs: list[tuple[str, Any]] = []
    for i, m in enumerate(messages[-limit:]):
        base = f"{prefix}.{i}."
        pairs.append((base + A.MESSAGE_ROLE, m.role))
        if m.content not in (None, ""):
            pairs.append((base + A.MESSAGE_CONTENT, m.content))
        if m.tool_call_id:
            pairs.append((base + A.MESSAGE_TOOL_CALL_ID, m.tool_call_id))
        for j, call in enumerate(m.tool_calls):
            cbase = f"{base}{A.MESSAGE_TOOL_CALLS}.{j}."
            if call.id:
                pairs.append((cbase + A.TOOL_CALL_ID, call.id))
            pairs.append((cbase + A.TOOL_CALL_FUNCTION_NAME, call.name))
            pairs.append((cbase + A.TOOL_CALL_FUNCTION_ARGUMENTS, call.arguments))
    return pairs


def last_text(messages: list[ChatMessage]) -> str | None:
    """The text of the last assistant message that has text, else ``None``."""
    for m in reversed(messages):
        if m.role == "assistant" and isinstance(m.content, str) and m.content:
            return m.content
    return None
