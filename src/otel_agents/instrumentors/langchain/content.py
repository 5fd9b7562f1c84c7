"""LangChain message content as the span layer's typed parts (cases M-1, M-2).

A LangChain message's ``content`` is a string or a list of content blocks. The
blocks come in three families, all read here without asking LangChain to
translate them (``message.content_blocks`` needs ``response_metadata["model_provider"]``
to recognise a provider's blocks and mints ids for blocks that have none):

* LangChain v1 standard blocks (``langchain_core.messages.content``): ``text``,
  ``reasoning``, ``tool_call``/``tool_call_chunk``/``invalid_tool_call``,
  ``server_tool_call``/``server_tool_result``, ``image``/``audio``/``video``/``file``/
  ``text-plain`` (``url``, ``base64`` + ``mime_type``, or ``file_id``), ``non_standard``
  (its ``value`` read as a provider block);
* LangChain v0 multimodal blocks: ``image``/``audio``/``file`` with ``source_type``
  ``url``/``base64``/``id``/``text``;
* provider blocks as the integrations keep them: Anthropic ``thinking`` (its
  ``signature`` dropped), ``redacted_thinking`` (dropped: encrypted), ``tool_use``,
  ``server_tool_use``, ``tool_result``, ``image``/``document`` with a ``source``;
  OpenAI ``image_url``, ``input_audio``, ``file``, ``refusal``, Responses API
  ``reasoning`` (its summaries; ``encrypted_content`` dropped) and ``function_call``.

A tool call present both as a block and in ``message.tool_calls`` (Anthropic
messages carry both) is one :class:`ToolCallPart`, at the block's place, with the
parsed arguments of ``tool_calls``; ``invalid_tool_calls`` and, for a chunk,
``tool_call_chunks`` add the calls not seen otherwise. Reasoning the integration
put in ``additional_kwargs["reasoning_content"]`` (DeepSeek, Ollama, xAI …) is a
:class:`ReasoningPart` too. Unknown blocks (citations, server tool results …) become
:class:`GenericPart` s without their ``signature``/``encrypted_content``/``index``
fields at any depth. Media are media parts
(the span layer applies the media budget), never text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._spans import (BlobPart, FilePart, GenericPart, Part, ReasoningPart, TextPart, ToolCallPart,
                       ToolCallResponsePart, UriPart, media_part, modality_of)
from .._sdk_client import field_of

_TEXT = frozenset({"text", "input_text", "output_text"})
_TOOL_CALLS = frozenset({"tool_use", "tool_call", "tool_call_chunk", "invalid_tool_call", "function_call"})
_MEDIA = {"image": "image", "image_url": "image", "input_image": "image", "audio": "audio",
          "input_audio": "audio", "video": "video", "file": None, "input_file": None, "document": None,
          "text-plain": None}
_NOT_RECORDED = frozenset({"signature", "encrypted_content", "index", "extras", "cache_control"})


def _is_map(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # dict first: the ABC check is slower


def message_parts(message: Any, content: Any, role: str) -> list[Part]:
    """The parts of one LangChain message (see the module docstring).

    Args:
        message: the ``BaseMessage`` (read for ``tool_calls``, ``invalid_tool_calls``,
            ``tool_call_chunks``, ``additional_kwargs`` and ``tool_call_id``).
        content: its ``content`` (a string or a list of blocks).
        role: its GenAI role; a ``tool`` message becomes one :class:`ToolCallResponsePart`
            (plus the media parts of a multimodal result).
    """
    if role == "tool":
        return _tool_result_parts(content, getattr(message, "tool_call_id", None))
    calls = _declared_calls(message)
    if type(content) is str:  # the common case
        parts: list[Part] = [TextPart(content)] if content else []
    else:
        parts = []
        for block in content or ():
            if type(block) is str:
                if block:
                    parts.append(TextPart(block))
            elif _is_map(block):
                _block_into(parts, block, calls)
    extra = getattr(message, "additional_kwargs", None)
    if extra:
        _extra_into(parts, extra, calls)
    for call in calls.values():
        if call is not None:
            parts.append(call)
    return parts


def content_parts(blocks: Any) -> list[Part]:
    """The parts of a content-block list on its own (a tool's multimodal result)."""
    parts: list[Part] = []
    for block in blocks or ():
        if type(block) is str:
            if block:
                parts.append(TextPart(block))
        elif _is_map(block):
            _block_into(parts, block, {})
    return parts


def has_media(blocks: Any) -> bool:
    """Whether a content-block list holds an image, audio, video or document block."""
    return any(_is_map(b) and b.get("type") in _MEDIA for b in blocks)


def _declared_calls(message: Any) -> dict[Any, ToolCallPart | None]:
    """The message's own tool calls by id (``None`` once placed): ``tool_calls``, then the
    ``invalid_tool_calls``, then — for a chunk whose calls did not parse — ``tool_call_chunks``."""
    calls: dict[Any, ToolCallPart | None] = {}
    # A message model has only some of the three (a HumanMessage none, an AIMessage no chunks): field_of reads
    # a pydantic model's missing field without the AttributeError its __getattr__ raises (~35,000 instructions
    # each); for anything else, a mapping included, it is getattr.
    read = getattr if _is_map(message) else field_of
    for attr in ("tool_calls", "invalid_tool_calls", "tool_call_chunks"):
        for i, call in enumerate(read(message, attr, None) or ()):
            if _is_map(call) and call.get("name"):
                key = call.get("id") or (attr, i)
                calls.setdefault(key, ToolCallPart(str(call["name"]), call.get("args"), call.get("id")))
    return calls


def _place_call(parts: list[Part], calls: dict[Any, ToolCallPart | None], name: Any, arguments: Any,
                call_id: Any) -> None:
    """Place a tool call found as a block: the declared call with its id when there is one (once)."""
    if call_id and call_id in calls:
        declared = calls[call_id]
        if declared is not None:
            parts.append(declared)
            calls[call_id] = None
        return
    if not call_id:  # no id: the first declared call of that name not yet placed stands for it
        key = next((k for k, c in calls.items() if c is not None and c.name == name), None)
        if key is not None:
            parts.append(calls[key])  # type: ignore[arg-type]
            calls[key] = None
            return
    if isinstance(name, str) and name:
        parts.append(ToolCallPart(name, arguments, call_id or None))


def _block_into(parts: list[Part], block: Mapping[str, Any], calls: dict[Any, ToolCallPart | None]) -> None:
    kind = block.get("type")
    if kind in _TEXT:
        text = block.get("text")
        if isinstance(text, str) and text:
            parts.append(TextPart(text))
    elif kind == "thinking" or kind == "reasoning":
        text = _reasoning_text(block)
        if text:
            parts.append(ReasoningPart(text))
    elif kind == "redacted_thinking":
        return  # encrypted reasoning: never recorded
    elif kind in _TOOL_CALLS:
        arguments = block.get("input", block.get("args", block.get("arguments")))
        if kind == "tool_use" and not arguments and block.get("partial_json"):
            arguments = block["partial_json"]  # a streamed call that was never parsed
        _place_call(parts, calls, block.get("name"), arguments, block.get("id") or block.get("call_id"))
    elif kind in _MEDIA:
        part = media(block, _MEDIA[kind])
        if part is not None:
            parts.append(part)
    elif kind == "refusal":
        text = block.get("refusal")
        if isinstance(text, str) and text:
            parts.append(TextPart(text))
    elif kind == "tool_result":
        parts.extend(_tool_result_parts(block.get("content"), block.get("tool_use_id")))
    elif kind == "non_standard":
        value = block.get("value")
        if _is_map(value):
            _block_into(parts, value, calls)
    elif kind in ("server_tool_use", "server_tool_call"):
        parts.append(GenericPart("server_tool_call", {"id": block.get("id"), "name": block.get("name"),
                                                      "arguments": block.get("input", block.get("args"))}))
    elif isinstance(kind, str) and kind:
        fields = _scrub(block, 4)
        fields.pop("type", None)
        parts.append(GenericPart(kind, fields))


def _scrub(value: Any, depth: int) -> Any:
    """``value`` without signatures, encrypted content, stream indexes and cache markers, at any
    depth (a provider's server-tool result nests ``encrypted_content`` in its items)."""
    if _is_map(value):
        return {k: _scrub(v, depth - 1) if depth else v for k, v in value.items() if k not in _NOT_RECORDED}
    if isinstance(value, list) and depth:
        return [_scrub(v, depth - 1) for v in value]
    return value


def _reasoning_text(block: Mapping[str, Any]) -> str | None:
    """An Anthropic ``thinking``, a v1 ``reasoning`` or an OpenAI Responses ``reasoning``
    block's text (its summaries joined); signatures and encrypted content are not read."""
    text = block.get("thinking", block.get("reasoning"))
    if isinstance(text, str):
        return text
    summary = block.get("summary")
    if isinstance(summary, (list, tuple)):
        texts = [s.get("text") for s in summary if _is_map(s) and isinstance(s.get("text"), str)]
        return "\n\n".join(texts) or None
    return None


def _extra_into(parts: list[Part], extra: Mapping[str, Any], calls: dict[Any, ToolCallPart | None]) -> None:
    """Content some integrations keep in ``additional_kwargs``: reasoning text (``reasoning_content``,
    or the Responses API's ``reasoning`` summaries) and OpenAI's legacy ``function_call``."""
    if not any(type(p) is ReasoningPart for p in parts):
        reasoning = extra.get("reasoning_content")
        if not isinstance(reasoning, str):
            block = extra.get("reasoning")
            reasoning = _reasoning_text(block) if _is_map(block) else None
        if reasoning:
            parts.insert(0, ReasoningPart(reasoning))
    function_call = extra.get("function_call")
    if _is_map(function_call) and function_call.get("name"):
        _place_call(parts, calls, function_call["name"], function_call.get("arguments"), None)


def _tool_result_parts(content: Any, call_id: Any) -> list[Part]:
    """A tool's result: one :class:`ToolCallResponsePart` (its text, else its non-media blocks)
    followed by the media parts of a multimodal result (summarised like any media)."""
    if content is None or type(content) is str or not isinstance(content, (list, tuple)):
        return [ToolCallResponsePart(content, call_id)]
    texts: list[str] = []
    media_parts: list[Part] = []
    other: list[Any] = []
    for block in content:
        if type(block) is str:
            texts.append(block)
        elif _is_map(block) and block.get("type") in _TEXT and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif _is_map(block) and block.get("type") in _MEDIA:
            part = media(block, _MEDIA[block["type"]])
            if part is not None:
                media_parts.append(part)
        else:
            other.append(block)
    response: Any = "\n".join(texts) if texts else (other or None)
    return [ToolCallResponsePart(response, call_id), *media_parts]


# ----------------------------------------------------------------------------- media


def media(block: Mapping[str, Any], modality: str | None) -> Part | None:
    """A media block as a :class:`BlobPart`, :class:`UriPart` or :class:`FilePart`.

    ``modality``: the block type's own (``image``, ``audio``, ``video``), or ``None`` for
    files and documents (then it follows the MIME type, ``document`` when unknown).
    Reads the v1 fields (``url``/``base64``/``file_id`` + ``mime_type``), the v0 ones
    (``source_type`` + ``data``/``url``/``id``), an Anthropic ``source``, OpenAI's
    ``image_url``/``input_audio``/``file`` objects. ``None`` when it names no data.
    """
    mime = block.get("mime_type") or block.get("media_type")
    source = block.get("source")
    if _is_map(source):  # Anthropic: {"type": "base64"|"url"|"file"|"text", ...}
        mime = source.get("media_type") or mime
        kind = source.get("type")
        if kind == "base64" and isinstance(source.get("data"), str):
            return BlobPart(source["data"], modality or modality_of(mime, "document"), mime)
        if kind == "url" and isinstance(source.get("url"), str):
            return media_part(source["url"], modality=modality or modality_of(mime, "document"), mime_type=mime)
        if kind == "file" and source.get("file_id"):
            return FilePart(str(source["file_id"]), modality or modality_of(mime, "document"), mime)
        if kind == "text" and isinstance(source.get("data"), str):
            return BlobPart(source["data"].encode("utf-8", "surrogatepass"), modality or "document",
                            mime or "text/plain")
        return None
    image_url = block.get("image_url")
    if image_url is not None:  # OpenAI: "image_url": "https://…" or {"url": …, "detail": …}
        url = image_url.get("url") if _is_map(image_url) else image_url
        return media_part(url, modality="image", mime_type=mime) if isinstance(url, str) and url else None
    audio = block.get("input_audio")
    if _is_map(audio) and isinstance(audio.get("data"), str):  # OpenAI: {"data": base64, "format": "wav"}
        fmt = audio.get("format")
        return BlobPart(audio["data"], "audio", mime or (f"audio/{fmt}" if fmt else None))
    file = block.get("file")
    if not _is_map(file) and "file_data" in block:  # OpenAI Responses ``input_file``: the same fields inline
        file = block
    if _is_map(file):  # OpenAI: {"file_data": data URL, "file_id": …, "filename": …}
        if isinstance(file.get("file_data"), str) and file["file_data"]:
            data = file["file_data"]
            if data.startswith("data:"):
                part = media_part(data, mime_type=mime)
                return BlobPart(part.data, modality or modality_of(part.mime_type, "document"), part.mime_type) \
                    if isinstance(part, BlobPart) else part
            return BlobPart(data, modality or modality_of(mime, "document"), mime)
        if file.get("file_id"):
            return FilePart(str(file["file_id"]), modality or modality_of(mime, "document"), mime)
        return None
    modality = modality or modality_of(mime, "document")
    source_type = block.get("source_type")  # LangChain v0
    data = block.get("base64")
    if data is None and source_type == "base64":
        data = block.get("data")
    if isinstance(data, str) and data:
        return BlobPart(data, modality, mime)
    url = block.get("url")
    if isinstance(url, str) and url:
        return media_part(url, modality=modality, mime_type=mime)
    file_id = block.get("file_id") or (block.get("id") if source_type == "id" else None)
    if file_id:
        return FilePart(str(file_id), modality, mime)
    text = block.get("text")
    if isinstance(text, str):  # text-plain, or v0 source_type "text"
        return BlobPart(text.encode("utf-8", "surrogatepass"), modality, mime or "text/plain")
    return None
