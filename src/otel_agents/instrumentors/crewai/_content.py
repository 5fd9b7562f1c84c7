"""CrewAI message content and tool schemas → the span layer's part model (OTel GenAI semconv v1.41 parts).

A CrewAI ``LLMMessage``'s ``content`` is a string or a list of content blocks in
the provider shapes CrewAI builds (its ``AddImageTool``, its multimodal step
executor, a user's own messages): OpenAI-style ``text``, ``image_url``,
``input_audio`` and ``file`` blocks, and Anthropic-style ``text``, ``thinking``,
``tool_use``, ``tool_result`` and ``image``/``document`` blocks with a ``base64`` or
``url`` source. Each block becomes
one part; an unknown block (or a known one without what it needs) is a
:class:`~otel_agents._spans.GenericPart` of its ``type`` with its fields (:func:`~otel_agents._spans.generic_part`:
content, redacted and cut to the budget by the span layer like any other). Tool schemas passed to a
function-calling LLM (OpenAI ``{"type": "function", "function": {...}}`` or a flat
``{"name", "description", "parameters"|"input_schema"}``) become
:class:`~otel_agents._spans.ToolDefinition` objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Sequence

from ... import _spans as S


def content_parts(content: Any) -> list[S.Part]:
    """A message's ``content`` (string, block list, or another value) as parts, in order."""
    if content is None:
        return []
    if isinstance(content, str):
        return [S.TextPart(content)] if content else []
    if isinstance(content, (list, tuple)):
        parts: list[S.Part] = []
        for block in content:
            part = block_part(block)
            if part is not None:
                parts.append(part)
        return parts
    return [S.TextPart(content)]  # a structured value: rendered as JSON text


def block_part(block: Any) -> S.Part | None:
    """One content block as a part (``None`` for an empty text or a signature-only block)."""
    if isinstance(block, str):
        return S.TextPart(block) if block else None
    if not isinstance(block, Mapping):
        return S.TextPart(block)
    kind = block.get("type")
    if kind == "text":
        text = block.get("text", block.get("content"))
        return S.TextPart(text) if isinstance(text, str) and text else None
    if kind in ("thinking", "reasoning"):  # never the signature; redacted thinking has no text
        text = block.get("thinking", block.get("reasoning", block.get("text")))
        return S.ReasoningPart(text) if isinstance(text, str) and text else None
    if kind == "redacted_thinking":
        return None
    if kind == "tool_use" and isinstance(block.get("name"), str):
        return S.ToolCallPart(block["name"], block.get("input"), block.get("id"))
    if kind == "tool_result":
        return S.ToolCallResponsePart(block.get("content"), block.get("tool_use_id"))
    if kind == "image_url":
        image = block.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        return S.media_part(url, modality="image") if isinstance(url, str) else S.generic_part(block, kind)
    if kind == "input_audio":
        audio = block.get("input_audio") or {}
        fmt = audio.get("format") if isinstance(audio, Mapping) else None
        data = audio.get("data") if isinstance(audio, Mapping) else None
        return S.BlobPart(data, "audio", f"audio/{fmt}" if fmt else None) if isinstance(data, str) \
            else S.generic_part(block, kind)
    if kind == "file":
        file = block.get("file") or {}
        data = file.get("file_data") if isinstance(file, Mapping) else None
        if isinstance(data, str):  # a data: URL, or bare base64
            return S.media_part(data, modality="document") if data.startswith("data:") \
                else S.BlobPart(data, "document")
        if isinstance(file, Mapping) and isinstance(file.get("file_id"), str):
            return S.FilePart(file["file_id"], "document")
        return S.generic_part(block, kind)
    if kind in ("image", "document", "audio", "video"):
        return _sourced_media(block, kind)
    return S.generic_part(block)  # a block of a type not known here: its fields kept


def _sourced_media(block: Mapping[str, Any], kind: str) -> S.Part:
    """An Anthropic-style ``{"type": "image", "source": {...}}`` block."""
    source = block.get("source")
    modality = kind
    if isinstance(source, Mapping):
        mime = source.get("media_type") or source.get("mime_type")
        if source.get("type") == "base64" and isinstance(source.get("data"), str):
            return S.BlobPart(source["data"], modality, mime)
        if source.get("type") == "url" and isinstance(source.get("url"), str):
            return S.media_part(source["url"], modality=modality, mime_type=mime)
        if isinstance(source.get("file_id"), str):
            return S.FilePart(source["file_id"], modality, mime)
    return S.generic_part(block, kind)


def tool_definitions(tools: Sequence[Any] | None) -> list[S.ToolDefinition]:
    """Tool schemas as passed to ``BaseLLM.call(tools=...)`` as tool definitions (unknown shapes skipped)."""
    out: list[S.ToolDefinition] = []
    for tool in tools or ():
        if not isinstance(tool, Mapping):
            continue
        fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
        name = fn.get("name")
        if not isinstance(name, str):
            continue
        params = fn.get("parameters", fn.get("input_schema"))
        out.append(S.ToolDefinition(name, fn.get("description") or None,
                                    params if isinstance(params, Mapping) else None))
    return out


def executor_tool_definitions(agent: Any) -> list[S.ToolDefinition]:
    """The tools a ReAct prompt describes: the agent executor's tools (name, description, argument schema)."""
    out: list[S.ToolDefinition] = []
    for tool in getattr(getattr(agent, "agent_executor", None), "tools", None) or ():
        name = getattr(tool, "name", None)
        if not isinstance(name, str):
            continue
        schema = getattr(tool, "args_schema", None)
        params = _json_schema(schema) if isinstance(schema, type) and hasattr(schema, "model_json_schema") else None
        out.append(S.ToolDefinition(name, getattr(tool, "description", None) or None, params))
    return out


@lru_cache(maxsize=256)
def _json_schema(model: type) -> Mapping[str, Any]:
    """A tool's argument model as JSON Schema, built once per model class (every ReAct call asks again)."""
    return model.model_json_schema()
