"""ADK (``google.genai.types``) shapes → our GenAI parts model (see :mod:`otel_agents._spans.messages`).

Pure conversions, no spans: ``types.Content`` → :class:`ChatMessage`, an ``LlmRequest``'s
system instruction and tools, ``usage_metadata`` → :class:`Usage`, ``FinishReason`` → text.
"""

from __future__ import annotations

from typing import Any

from ..._spans import (BlobPart, ChatMessage, GenericPart, Part, ReasoningPart, TextPart, ToolCallPart,
                       ToolCallResponsePart, ToolDefinition, UriPart, Usage, modality_of, token_sum)

_ROLES = {"model": "assistant", "user": "user", "system": "system", "tool": "tool", "function": "tool"}


def parts_of(content: Any) -> list[Part]:
    """The parts of one ``types.Content``: text, thought (→ reasoning; its signature never
    recorded), function call/response, inline data (→ blob), file data (→ uri), code."""
    out: list[Part] = []
    for p in getattr(content, "parts", None) or ():
        if getattr(p, "function_call", None) is not None:
            fc = p.function_call
            out.append(ToolCallPart(fc.name or "", dict(fc.args or {}), fc.id))
        elif getattr(p, "function_response", None) is not None:
            fr = p.function_response
            out.append(ToolCallResponsePart(fr.response, fr.id))
        elif getattr(p, "text", None) is not None:
            out.append(ReasoningPart(p.text) if getattr(p, "thought", None) else TextPart(p.text))
        elif getattr(p, "inline_data", None) is not None:
            blob = p.inline_data
            mime = blob.mime_type or None
            out.append(BlobPart(blob.data or b"", modality_of(mime), mime))
        elif getattr(p, "file_data", None) is not None:
            f = p.file_data
            out.append(UriPart(f.file_uri or "", modality_of(f.mime_type), f.mime_type))
        elif getattr(p, "executable_code", None) is not None:
            code = p.executable_code
            out.append(GenericPart("executable_code", {"language": str(getattr(code.language, "value", code.language)),
                                                       "code": code.code}))
        elif getattr(p, "code_execution_result", None) is not None:
            res = p.code_execution_result
            out.append(GenericPart("code_execution_result", {"outcome": str(getattr(res.outcome, "value", res.outcome)),
                                                             "output": res.output}))
    return out


def message(content: Any, *, finish_reason: str | None = None, parts: list[Part] | None = None) -> ChatMessage:
    """One ``types.Content`` as a message; a content of function responses only has role ``tool``."""
    parts = parts_of(content) if parts is None else parts
    role = _ROLES.get(str(getattr(content, "role", None) or "model"), "assistant")
    if parts and isinstance(parts[0], ToolCallResponsePart) and all(isinstance(p, ToolCallResponsePart) for p in parts):
        role = "tool"
    return ChatMessage(role, parts=parts, finish_reason=finish_reason)


def input_messages(llm_request: Any) -> list[ChatMessage]:
    """The request's ``contents`` as messages (system instruction apart, see :func:`system`)."""
    return [message(c) for c in getattr(llm_request, "contents", None) or () if getattr(c, "parts", None)]


def system(llm_request: Any) -> list[str]:
    """The request's system instruction (a string, a ``Content`` or a list of parts) as text."""
    config = getattr(llm_request, "config", None)
    instruction = getattr(config, "system_instruction", None) if config is not None else None
    if not instruction:
        return []
    if isinstance(instruction, str):
        return [instruction]
    items = instruction if isinstance(instruction, list) else [instruction]
    texts: list[str] = []
    for item in items:
        if isinstance(item, str):
            texts.append(item)
        elif getattr(item, "parts", None):
            texts.extend(p.text for p in item.parts if getattr(p, "text", None))
        elif getattr(item, "text", None):
            texts.append(item.text)
    return texts


def tool_definitions(llm_request: Any) -> list[ToolDefinition]:
    """The tools offered: each function declaration of the request's ``config.tools``."""
    config = getattr(llm_request, "config", None)
    out: list[ToolDefinition] = []
    for tool in getattr(config, "tools", None) or ():
        for decl in getattr(tool, "function_declarations", None) or ():
            schema = getattr(decl, "parameters_json_schema", None)
            if schema is None and getattr(decl, "parameters", None) is not None:
                schema = decl.parameters.model_dump(mode="json", exclude_none=True)
            out.append(ToolDefinition(decl.name or "", decl.description or None, schema))
    return out


def finish_reason(llm_response: Any) -> str | None:
    """The finish reason the model sent, by its name (``FinishReason.STOP`` → ``"stop"``,
    ``MAX_TOKENS`` → ``"max_tokens"``; the span layer's table maps it to the OTel GenAI value), ``None``
    when the response carries none. Never derived from the reply's shape: Gemini sends ``STOP`` for a
    turn that calls functions, and that is what is recorded."""
    reason = getattr(llm_response, "finish_reason", None)
    if reason is None:
        return None
    return str(getattr(reason, "name", None) or getattr(reason, "value", reason)).lower()


def usage(metadata: Any) -> Usage | None:
    """``GenerateContentResponseUsageMetadata`` → :class:`Usage` (tokens). Output tokens include the
    thinking tokens Gemini counts apart (``thoughts_token_count``), which are also the reasoning tokens."""
    if metadata is None:
        return None
    prompt = getattr(metadata, "prompt_token_count", None)
    candidates = getattr(metadata, "candidates_token_count", None)
    thoughts = getattr(metadata, "thoughts_token_count", None)
    if prompt is None and candidates is None and getattr(metadata, "total_token_count", None) is None:
        return None
    output = token_sum(candidates, thoughts)
    return Usage(input_tokens=prompt, output_tokens=output, total_tokens=getattr(metadata, "total_token_count", None),
                 cache_read_tokens=getattr(metadata, "cached_content_token_count", None), reasoning_tokens=thoughts)
