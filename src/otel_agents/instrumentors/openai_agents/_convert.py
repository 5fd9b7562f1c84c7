"""Shapes of the Agents SDK's span data → our message parts, tools offered and usage.

The SDK records two model-call shapes: a ``response`` span (the Responses API: input items and
the ``Response`` object) and a ``generation`` span (Chat Completions: messages in and out). Both
are converted here into :class:`~otel_agents._spans.ChatMessage` parts (OTel GenAI semconv v1.41
parts model): text → ``TextPart``, reasoning summaries/content → ``ReasoningPart`` (encrypted
reasoning is never recorded), calls of a tool the client runs (function, custom, shell, apply_patch, local
shell, computer: :mod:`.._responses_items`) → ``ToolCallPart``, their outputs → ``ToolCallResponsePart``,
images and files → media parts, anything else → ``GenericPart``.
Items arrive as dicts or as pydantic models (the ``openai`` types); both are read the same way.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from pydantic import BaseModel

from ..._spans import (ChatMessage, FilePart, GenericPart, Part, ReasoningPart, TextPart, ToolCallPart,
                       ToolCallResponsePart, ToolDefinition, Usage, generic_part, media_part)
from .._responses_items import CALL_ARGUMENTS, CALL_OUTPUTS, answer_of, call_of, finish_reason
from .._sdk_client import field_of


def plain(item: Any) -> Any:
    """A dict for a pydantic model (``model_dump``), the item itself otherwise."""
    if type(item) is dict:  # most items (the SDK's own span data): no attribute look-up
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        try:
            return dump(exclude_none=True)
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is kept as is
            return item
    return item


_TEXT_TYPES = ("input_text", "output_text", "text", "summary_text")


def _content_parts(content: Any) -> list[Part]:
    """Responses/Chat content (a string or a list of content parts) → parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    parts: list[Part] = []
    for raw in content if isinstance(content, (list, tuple)) else [content]:
        if isinstance(raw, BaseModel):  # a text or refusal model: its field read, not a model_dump of it all
            ctype = field_of(raw, "type")
            if ctype in _TEXT_TYPES or ctype == "refusal":
                parts.append(TextPart(field_of(raw, "text" if ctype != "refusal" else "refusal") or ""))
                continue
        c = plain(raw)
        if not isinstance(c, dict):
            parts.append(TextPart(str(c)))
            continue
        ctype = c.get("type")
        if ctype in _TEXT_TYPES:
            parts.append(TextPart(c.get("text") or ""))
        elif ctype == "refusal":
            parts.append(TextPart(c.get("refusal") or ""))
        elif ctype in ("input_image", "image_url"):
            url = c.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            if url:
                parts.append(media_part(url, modality="image"))
            elif c.get("file_id"):
                parts.append(FilePart(c["file_id"], "image", None))
        elif ctype in ("input_file", "file"):
            data = c.get("file_data") or (c.get("file") or {}).get("file_data")
            file_id = c.get("file_id") or (c.get("file") or {}).get("file_id")
            if isinstance(data, str) and data.startswith("data:"):
                parts.append(media_part(data, modality="document"))
            elif file_id:
                parts.append(FilePart(file_id, "document", None))
            elif c.get("file_url"):
                parts.append(media_part(c["file_url"], modality="document"))
            else:
                parts.append(GenericPart("file", {k: v for k, v in c.items() if k not in ("type", "file_data")}))
        else:
            parts.append(generic_part(c, ctype or "unknown"))
    return parts


def _reasoning_parts(item: dict) -> list[Part]:
    texts = [s.get("text") for s in item.get("summary") or [] if isinstance(s, dict)]
    texts += [c.get("text") for c in item.get("content") or [] if isinstance(c, dict)]
    return [ReasoningPart(t) for t in texts if t]


def _role(role: Any) -> str:
    return "system" if role == "developer" else str(role or "user")


def input_messages(items: Any) -> list[ChatMessage]:
    """The input of a ``response`` span (a string or a list of Responses input items) → messages.

    Consecutive function calls and reasoning items join one assistant message; each function
    call output is a ``tool`` message.
    """
    if items is None:
        return []
    if isinstance(items, str):
        return [ChatMessage("user", parts=[TextPart(items)])]
    messages: list[ChatMessage] = []

    def assistant() -> ChatMessage:
        if not messages or messages[-1].role != "assistant":
            messages.append(ChatMessage("assistant", parts=[]))
        return messages[-1]

    for raw in items:
        item = plain(raw)
        if not isinstance(item, dict):
            messages.append(ChatMessage("user", parts=[TextPart(str(item))]))
            continue
        itype = item.get("type")
        if itype in (None, "message") and "role" in item:
            role = _role(item.get("role"))
            parts = _content_parts(item.get("content"))
            if role == "assistant":
                assistant().parts.extend(parts)
            else:
                messages.append(ChatMessage(role, parts=parts))
        elif itype in CALL_ARGUMENTS:
            assistant().parts.append(ToolCallPart(*call_of(item, itype)))
        elif itype in CALL_OUTPUTS:
            messages.append(ChatMessage("tool", parts=[ToolCallResponsePart(*answer_of(item))]))
        elif itype == "reasoning":
            assistant().parts.extend(_reasoning_parts(item))
        else:
            assistant().parts.append(generic_part(item, itype))
    return messages


def output_message(output: Iterable[Any], *, status: str | None = None,
                   incomplete_reason: str | None = None) -> ChatMessage:
    """A ``Response``'s output items → one assistant message with its finish reason
    (:func:`~.._responses_items.finish_reason`)."""
    parts: list[Part] = []
    for raw in output or ():
        if isinstance(raw, BaseModel):  # a Response's items: the fields read, not a model_dump of it all
            itype = field_of(raw, "type")
            if itype == "message":
                parts.extend(_content_parts(field_of(raw, "content")))
                continue
            if itype in CALL_ARGUMENTS:
                parts.append(ToolCallPart(*call_of(raw, itype)))
                continue
        item = plain(raw)
        if not isinstance(item, dict):
            continue
        itype = item.get("type")
        if itype == "message":
            parts.extend(_content_parts(item.get("content")))
        elif itype in CALL_ARGUMENTS:
            parts.append(ToolCallPart(*call_of(item, itype)))
        elif itype == "reasoning":
            parts.extend(_reasoning_parts(item))
        else:
            parts.append(generic_part(item, itype))
    calls = any(type(p) is ToolCallPart for p in parts)
    return ChatMessage("assistant", parts=parts, finish_reason=finish_reason(status, incomplete_reason, calls))


def response_output(response: Any) -> ChatMessage:
    """The output message of a ``Response`` object."""
    details = getattr(response, "incomplete_details", None)
    return output_message(getattr(response, "output", None) or (), status=getattr(response, "status", None),
                          incomplete_reason=getattr(details, "reason", None))


def instructions(response: Any) -> list[Any]:
    """The system instructions a ``Response`` echoes (a string, or input items) as strings/parts."""
    value = getattr(response, "instructions", None)
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    return [p for m in input_messages(value) for p in m.parts]


def tool_definitions(tools: Sequence[Any] | None) -> list[ToolDefinition]:
    """Tools offered (Responses ``tools`` or Chat Completions ``tools``) → :class:`ToolDefinition`."""
    out = []
    for raw in tools or ():
        ttype = field_of(raw, "type") if isinstance(raw, BaseModel) else None
        if ttype is not None and not isinstance(field_of(raw, "function"), (dict, BaseModel)):
            # A Responses tool (a model every request, the same ones): its fields read, not a model_dump of it all.
            if ttype == "function":
                out.append(ToolDefinition(field_of(raw, "name", ""), field_of(raw, "description"),
                                          field_of(raw, "parameters")))
            else:
                out.append(ToolDefinition(str(field_of(raw, "name") or ttype), None, None, type=str(ttype)))
            continue
        tool = plain(raw)
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "function":
            fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            out.append(ToolDefinition(fn.get("name") or "", fn.get("description"), fn.get("parameters")))
        else:  # hosted tools (web_search, file_search, computer…): named by their type
            out.append(ToolDefinition(str(tool.get("name") or tool.get("type")), None, None,
                                      type=str(tool.get("type") or "function")))
    return out


def chat_messages(messages: Any) -> list[ChatMessage]:
    """Chat Completions messages (a ``generation`` span's input or output) → messages."""
    out: list[ChatMessage] = []
    for raw in messages or ():
        m = raw if type(raw) is dict else plain(raw)  # the SDK's span data holds dicts: no call for those
        if not isinstance(m, dict):
            continue
        if m.get("object") == "response" and "role" not in m:
            # A streamed Chat Completions call's output is the Response the SDK assembled from the chunks
            # (``[final_response.model_dump()]``, agents/models/openai_chatcompletions.py): its output items. Its
            # status is the SDK's, "completed" even for a stream cut short: no finish reason is read from it.
            out.append(output_message(m.get("output") or ()))
            continue
        role = _role(m.get("role"))
        if role == "tool":
            out.append(ChatMessage("tool", parts=[ToolCallResponsePart(m.get("content"), m.get("tool_call_id"))]))
            continue
        content = m.get("content")
        parts = [TextPart(content)] if type(content) is str and content else _content_parts(content)
        if m.get("reasoning_content"):
            parts.insert(0, ReasoningPart(m["reasoning_content"]))
        calls = m.get("tool_calls")
        for tc in calls or ():
            fn = tc.get("function") or {}
            parts.append(ToolCallPart(fn.get("name") or "", fn.get("arguments"), tc.get("id")))
        out.append(ChatMessage(role, parts=parts))  # the SDK keeps no finish reason here: none invented
    return out


def usage(data: Any) -> Usage | None:
    """The usage the SDK put on a model span (a dict) or a ``Response.usage`` → :class:`Usage`."""
    u = data if type(data) is dict else plain(data)
    if not isinstance(u, dict) or not u:
        return None
    inp = u.get("input_tokens", u.get("prompt_tokens"))
    out = u.get("output_tokens", u.get("completion_tokens"))
    if inp == 0 and out == 0 and not u.get("total_tokens"):
        # What the SDK writes for a call whose provider reported no usage (``Usage(requests=1)``, "the request
        # completed, so it counts even when the provider omits usage": agents/models/openai_chatcompletions.py):
        # a request count, not token counts. A model call reads some input: zero of both is no count at all.
        return None
    in_details = u.get("input_tokens_details") or u.get("prompt_tokens_details") or {}
    out_details = u.get("output_tokens_details") or u.get("completion_tokens_details") or {}
    cache_write = in_details.get("cache_write_tokens") or u.get("cache_write_input_tokens")
    return Usage(input_tokens=inp, output_tokens=out, total_tokens=u.get("total_tokens"),
                 cache_read_tokens=in_details.get("cached_tokens", u.get("cached_input_tokens")),
                 cache_creation_tokens=cache_write or None,
                 reasoning_tokens=out_details.get("reasoning_tokens"))


def input_text(items: Any, messages: list[ChatMessage] | None = None) -> Any:
    """What an agent was asked: the text of the last user message of its first request, else the items.
    ``messages``: ``items`` already converted by :func:`input_messages` (not converted again)."""
    if isinstance(items, str):
        return items
    for m in reversed(messages if messages is not None else input_messages(items)):
        if m.role == "user":
            return m.text if m.text is not None else [plain(i) for i in items]
    return [plain(i) for i in items] if items else None
