"""LlamaIndex message content as the span layer's typed parts (cases M-1 … M-4).

A LlamaIndex ``ChatMessage`` (llama-index-core 0.14) is a role and a list of
``blocks``; each block becomes parts:

=====================  =================================================================
block                   part
=====================  =================================================================
``TextBlock``           :class:`TextPart`
``ThinkingBlock``       :class:`ReasoningPart` of its ``content`` (``additional_information``,
                        where providers keep signatures, is never read)
``ToolCallBlock``       :class:`ToolCallPart` (``tool_name``, ``tool_kwargs``, ``tool_call_id``)
``ImageBlock``          ``image`` bytes → :class:`BlobPart`; ``url`` → :class:`UriPart`
                        (a ``data:`` URL → blob); ``path`` → ``file://`` :class:`UriPart`
``AudioBlock``          the same, modality ``audio`` (MIME type ``audio/{format}``)
``VideoBlock``          the same, modality ``video``
``DocumentBlock``       the same, modality from its MIME type (``document`` when not media)
``CitableBlock``        the parts of its ``content``
``CitationBlock``       a ``citation`` :class:`GenericPart` (``source``, ``title``)
``CachePoint``          nothing (a provider cache marker, not content)
=====================  =================================================================

The media blocks keep their bytes base64-encoded (their validators encode them), so
they are passed on as base64 text; a stream (``IOBase``) is not read. A tool message
(role ``tool``) is one :class:`ToolCallResponsePart` of its text, with
``additional_kwargs["tool_call_id"]``, followed by its media parts. Legacy shapes: the
OpenAI-style ``additional_kwargs["tool_calls"]`` (calls not already a ``ToolCallBlock``)
and ``additional_kwargs["thinking"]``/``["reasoning_content"]`` when no ``ThinkingBlock``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..._spans import (BlobPart, GenericPart, Part, ReasoningPart, TextPart, ToolCallPart, ToolCallResponsePart,
                       UriPart, media_part, modality_of, probes)


def _get(obj: Any, key: str) -> Any:
    return None if obj is None else probes.field(obj, key)


def message_parts(message: Any, role: str) -> list[Part]:
    """The parts of one LlamaIndex ``ChatMessage`` whose GenAI role is ``role`` (see the module docstring)."""
    blocks = getattr(message, "blocks", None) or ()
    extra = getattr(message, "additional_kwargs", None) or {}
    if role == "tool":
        return tool_result_parts(blocks, extra.get("tool_call_id"))
    parts: list[Part] = []
    for block in blocks:
        _block_into(parts, block)
    if extra:
        _extra_into(parts, extra)
    return parts


def _block_into(parts: list[Part], block: Any) -> None:
    kind = getattr(block, "block_type", None)
    if kind == "text":
        if block.text:
            parts.append(TextPart(block.text))
    elif kind == "thinking":
        if block.content:
            parts.append(ReasoningPart(block.content))
    elif kind == "tool_call":
        parts.append(ToolCallPart(block.tool_name, block.tool_kwargs, block.tool_call_id))
    elif kind in _MEDIA:
        part = media(block)
        if part is not None:
            parts.append(part)
    elif kind == "citable":
        for inner in block.content or ():
            _block_into(parts, inner)
    elif kind == "citation":
        parts.append(GenericPart("citation", {"source": block.source, "title": block.title}))


def _extra_into(parts: list[Part], extra: Mapping[str, Any]) -> None:
    """The legacy content some integrations keep in ``additional_kwargs``."""
    seen = {p.id for p in parts if type(p) is ToolCallPart and p.id}
    for item in extra.get("tool_calls") or ():
        function = _get(item, "function")
        name = _get(function, "name") or _get(item, "name") or _get(item, "tool_name")
        call_id = _get(item, "id") or _get(item, "tool_id")
        if name and (not call_id or call_id not in seen):
            arguments = _get(function, "arguments") if function is not None else _get(item, "tool_kwargs")
            parts.append(ToolCallPart(str(name), arguments, call_id))
    if not any(type(p) is ReasoningPart for p in parts):
        thinking = extra.get("thinking", extra.get("reasoning_content"))
        text = _get(thinking, "thinking") if thinking is not None and not isinstance(thinking, str) else thinking
        if isinstance(text, str) and text:
            parts.insert(0, ReasoningPart(text))


def tool_result_parts(blocks: Any, call_id: Any) -> list[Part]:
    """A tool message: one :class:`ToolCallResponsePart` (its text) followed by its media parts."""
    texts = [b.text for b in blocks if getattr(b, "block_type", None) == "text"]
    media_parts = [p for p in (media(b) for b in blocks if getattr(b, "block_type", None) in _MEDIA) if p]
    return [ToolCallResponsePart("\n".join(texts) if texts else None, call_id), *media_parts]


# ----------------------------------------------------------------------------- media

# block_type → (data field, MIME type field, modality when not known from the MIME type)
_MEDIA = {"image": ("image", "image_mimetype", "image"), "audio": ("audio", None, "audio"),
          "video": ("video", "video_mimetype", "video"), "document": ("data", "document_mimetype", None)}


def media(block: Any) -> Part | None:
    """An ``ImageBlock``/``AudioBlock``/``VideoBlock``/``DocumentBlock`` as a media part, or ``None``
    when it carries neither bytes, nor URL, nor path."""
    data_field, mime_field, fixed = _MEDIA[block.block_type]
    if mime_field is not None:
        mime = getattr(block, mime_field, None)
    else:
        fmt = getattr(block, "format", None)
        mime = f"audio/{fmt}" if fmt else None
    modality = fixed or modality_of(mime, "document")
    data = getattr(block, data_field, None)
    if isinstance(data, (bytes, bytearray)) and data:
        # stored base64-encoded by the block's validator
        return BlobPart(bytes(data).decode("ascii", "replace"), modality, mime)
    url = getattr(block, "url", None)
    if url:
        return media_part(str(url), modality=modality, mime_type=mime)
    path = getattr(block, "path", None)
    if path:
        return UriPart(Path(path).absolute().as_uri(), modality, mime)
    return None
