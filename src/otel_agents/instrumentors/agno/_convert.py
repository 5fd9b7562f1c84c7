"""Agno shapes → our span layer's shapes: ``Message`` → ``ChatMessage`` (GenAI parts), ``MessageMetrics`` → ``Usage``.

Agno's ``Message`` (``agno.models.message``) carries ``role``, ``content``,
``reasoning_content`` (the model's thinking → a ``reasoning`` part, never
text; ``redacted_reasoning_content`` is never recorded), ``tool_calls``
(OpenAI-style dicts → ``tool_call`` parts), ``tool_call_id`` on tool results
(→ ``tool_call_response``) and media (``images``/``audio``/``videos``/``files``
→ media parts).
"""

from __future__ import annotations

import base64
import json
import operator
from typing import Any, Iterable, Mapping

from ..._spans import (encode, BlobPart, ChatMessage, Part, ReasoningPart, TextPart, ToolCallPart, ToolCallResponsePart,
                       ToolDefinition, Usage, media_part)

_decode = json.JSONDecoder().decode  # json.loads without its per-call checks (a str is all it gets here)
_MEDIA = (("images", "image"), ("audio", "audio"), ("videos", "video"), ("files", None))
_MEDIA_OF = operator.attrgetter(*(attr for attr, _ in _MEDIA))  # one call a message: most carry no media


def chat_messages(messages: Iterable[Any]) -> list[ChatMessage]:
    """Agno ``Message``s as ``ChatMessage``s (system/developer messages keep role ``system``)."""
    out = []
    for m in messages or ():
        role = m.role
        if role == "tool":
            content = getattr(m, "compressed_content", None) or m.content
            out.append(ChatMessage("tool", parts=[ToolCallResponsePart(_text(content), id=m.tool_call_id)]))
            continue
        if role == "developer":
            role = "system"
        out.append(ChatMessage(role, parts=message_parts(m), name=getattr(m, "name", None)))
    return out


def message_parts(m: Any) -> list[Part]:
    """The parts of one message: reasoning, text, media, tool calls, in that order."""
    parts: list[Part] = []
    reasoning = getattr(m, "reasoning_content", None)
    if reasoning:
        parts.append(ReasoningPart(reasoning))
    content = m.content
    if content is not None and content != "" and not (reasoning is not None and _is_thinking_copy(content, reasoning)):
        parts.append(TextPart(content if type(content) is str else _text(content)))
    try:
        media = _MEDIA_OF(m)
    except AttributeError:  # not Agno's Message (each of its media fields exists, None when empty)
        media = tuple(getattr(m, attr, None) for attr, _ in _MEDIA)
    if any(media):
        for items, (_, modality) in zip(media, _MEDIA):
            for item in items or ():
                part = _media(item, modality)
                if part is not None:
                    parts.append(part)
    tool_calls = getattr(m, "tool_calls", None)
    if tool_calls:
        parts.extend(tool_call_parts(tool_calls))
    return parts


def _is_thinking_copy(content: Any, reasoning: Any) -> bool:
    """Whether ``content`` only repeats ``reasoning`` in ``<thinking>`` tags: the message Agno adds for the
    main model after its reasoning phase (``agno.reasoning``), one ``reasoning`` part, never text."""
    if not isinstance(content, str) or not isinstance(reasoning, str):
        return False
    text = content.strip()
    return text.startswith("<thinking>") and text.endswith("</thinking>") and \
        text.removeprefix("<thinking>").removesuffix("</thinking>").strip() == reasoning.strip()


def tool_call_parts(tool_calls: Iterable[dict] | None) -> list[ToolCallPart]:
    """OpenAI-style tool-call dicts (``{"id", "function": {"name", "arguments"}}``) as ``ToolCallPart``s."""
    parts = []
    for call in tool_calls or ():
        fn = call.get("function") or {}
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = _decode(args)
            except ValueError:
                pass
        parts.append(ToolCallPart(fn.get("name") or call.get("name") or "", args, id=call.get("id")))
    return parts


def output_message(message: Any) -> ChatMessage:
    """The assistant message a request produced. No finish reason: Agno's ``ModelResponse`` keeps none of
    the provider's (its model classes read it, e.g. to detect a tool turn, and drop it), and one guessed
    from the reply's shape would be a value the model never sent."""
    return ChatMessage("assistant", parts=message_parts(message), finish_reason=None)


def stream_output_message(stream_data: Any, *, finished: bool = True) -> ChatMessage:
    """What a stream produced so far (``MessageData``: text, reasoning, tool calls); no finish reason, as
    for :func:`output_message` (``finished`` is kept for callers; Agno's stream data carry none either)."""
    parts: list[Part] = []
    if getattr(stream_data, "response_reasoning_content", ""):
        parts.append(ReasoningPart(stream_data.response_reasoning_content))
    if getattr(stream_data, "response_content", ""):
        parts.append(TextPart(_text(stream_data.response_content)))
    calls = getattr(stream_data, "response_tool_calls", None)
    parts.extend(tool_call_parts(calls))
    return ChatMessage("assistant", parts=parts, finish_reason=None)


def usage(metrics: Any) -> Usage | None:
    """``MessageMetrics`` as ``Usage``; ``None`` when nothing was reported (Agno's counters default to 0)."""
    if metrics is None:
        return None
    inp, out = getattr(metrics, "input_tokens", 0) or 0, getattr(metrics, "output_tokens", 0) or 0
    if not inp and not out:
        return None
    total = getattr(metrics, "total_tokens", 0) or None
    return Usage(input_tokens=inp, output_tokens=out, total_tokens=total,
                 cache_read_tokens=getattr(metrics, "cache_read_tokens", 0) or None,
                 cache_creation_tokens=getattr(metrics, "cache_write_tokens", 0) or None,
                 reasoning_tokens=getattr(metrics, "reasoning_tokens", 0) or None)


def tool_definitions(tools: Iterable[Any] | None) -> list[ToolDefinition]:
    """The tools offered to the model (formatted dicts ``{"type": "function", "function": {...}}``)."""
    out = []
    for t in tools or ():
        fn = t.get("function", t) if isinstance(t, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            out.append(ToolDefinition(fn["name"], fn.get("description"), fn.get("parameters")))
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return encode(content)  # plain data only: never the user's model_dump_json


def run_media_parts(kwargs: Mapping[str, Any]) -> list[Part]:
    """The media a run was given (``run(images=, audio=, videos=, files=)``: Agno attaches them to the user
    message it builds from the input) as parts, converted as a message's media are."""
    parts: list[Part] = []
    for attr, modality in _MEDIA:
        items = kwargs.get(attr)
        for item in items if isinstance(items, (list, tuple)) else ():
            part = _media(item, modality)
            if part is not None:
                parts.append(part)
    return parts


def _media(item: Any, modality: str | None) -> Part | None:
    mime = getattr(item, "mime_type", None)
    url = getattr(item, "url", None)
    if url:
        return media_part(str(url), modality=modality, mime_type=mime)
    data = getattr(item, "content", None)
    if isinstance(data, (bytes, str)) and data:
        return BlobPart(data if isinstance(data, bytes) else base64.b64encode(data.encode()).decode(),
                        modality=modality or "file", mime_type=mime)
    return None
