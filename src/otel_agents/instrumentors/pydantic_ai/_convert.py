"""PydanticAI messages, responses, tools and usage → the span layer's neutral types.

Pure functions over pydantic-ai objects (imported here, so this module is only
imported once pydantic-ai is being instrumented). Every function returns plain
data and raises on a shape it does not know; the caller guards it.

Message parts map onto the span layer's part model (OTel GenAI semconv v1.41
message parts) once per model span:

=================================================  ==========================================
pydantic-ai                                        part
=================================================  ==========================================
``str`` / ``TextContent`` in a ``UserPromptPart``   ``TextPart``
``BinaryContent``                                   ``BlobPart`` (bytes, ``media_type``)
``ImageUrl`` / ``AudioUrl`` / ``VideoUrl`` /        ``UriPart`` (a ``data:`` URL: ``BlobPart``)
``DocumentUrl``
``UploadedFile``                                    ``FilePart`` (provider file id)
``TextPart``                                        ``TextPart``
``ThinkingPart``                                    ``ReasoningPart`` (content only; never the
                                                    signature)
``ToolCallPart``                                    ``ToolCallPart``
``ToolReturnPart``                                  ``ToolCallResponsePart`` (+ a media part per
                                                    returned file)
``RetryPromptPart`` / ``RetryFeedbackPart``         ``ToolCallResponsePart`` (a tool's retry) or
                                                    user text
``SystemPromptPart``, ``ModelRequest.instructions`` system instructions
``FilePart`` (a file the model generated)           ``BlobPart``
=================================================  ==========================================

``CachePoint`` markers, provider-native tool parts and compaction parts are not
message content and are left out.
"""

from __future__ import annotations

from typing import Any, Sequence

from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    CachePoint,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
    is_multi_modal_content,
)
from pydantic_ai.usage import RequestUsage

from ... import _spans as S
from ..._spans import ChatMessage, Usage
from ..._spans.messages import genai_part

_URL_MODALITY = {ImageUrl: "image", AudioUrl: "audio", VideoUrl: "video", DocumentUrl: "document"}


def tool_arguments(call: ToolCallPart) -> Any:
    """A tool call's arguments as the model sent them: a dict, or the raw JSON text when it is not an object."""
    if isinstance(call.args, str):
        parsed = call.args_as_dict()
        return call.args if "INVALID_JSON" in parsed else parsed
    return call.args or {}


def unknown_tool_calls(messages: Sequence[Any]) -> list[tuple[str, str, Any, str]]:
    """The tool calls of the last response that named no tool the agent has, as the request answering it
    (the last of ``messages``) tells: ``(tool name, call id, arguments, answer)`` per ``ToolReturnPart`` with
    ``outcome='retried'`` and ``retry.cause='unknown_tool'`` (PydanticAI's record of a call "rejected before any
    tool ran"), the arguments from the response's matching ``ToolCallPart`` (``None`` when not found)."""
    if len(messages) < 2 or not isinstance(messages[-1], ModelRequest):
        return []
    refused = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart) and p.outcome == "retried"
               and getattr(getattr(p, "retry", None), "cause", None) == "unknown_tool"]
    if not refused:
        return []
    response = messages[-2]
    calls = {p.tool_call_id: p for p in getattr(response, "parts", ()) if isinstance(p, ToolCallPart)}
    out = []
    for part in refused:
        call = calls.get(part.tool_call_id)
        out.append((part.tool_name, part.tool_call_id, tool_arguments(call) if call is not None else None,
                    part.model_response_str(wrap_if_error=False)))
    return out


def media(item: Any) -> S.Part | None:
    """One pydantic-ai multimodal item (``BinaryContent``, a ``FileUrl``, ``UploadedFile``) as a media part."""
    if isinstance(item, BinaryContent):
        return S.BlobPart(item.data, S.modality_of(item.media_type), item.media_type)
    modality = _URL_MODALITY.get(type(item))
    if modality is None:  # a subclass of a URL type
        modality = next((m for t, m in _URL_MODALITY.items() if isinstance(item, t)), None)
    if modality is not None:
        try:
            mime = item.media_type
        except ValueError:  # pydantic-ai could not infer it from the URL
            mime = None
        return S.media_part(item.url, modality=modality, mime_type=mime)
    if isinstance(item, UploadedFile):
        return S.FilePart(item.file_id, S.modality_of(item.media_type, "document"), item.media_type)
    return None


def user_parts(content: str | Sequence[Any]) -> list[S.Part]:
    """A ``UserPromptPart``'s content (``str | Sequence[UserContent]``) as parts, in order."""
    if isinstance(content, str):
        return [S.TextPart(content)] if content else []
    parts: list[S.Part] = []
    for item in content:
        if isinstance(item, str):
            parts.append(S.TextPart(item))
        elif isinstance(item, TextContent):  # StructuredContent too: its content is the text sent
            parts.append(S.TextPart(item.content))
        elif isinstance(item, CachePoint):
            continue
        else:
            part = media(item)
            parts.append(part if part is not None else S.generic_part(item, getattr(item, "kind", type(item).__name__)))
    return parts


def response_message(response: ModelResponse) -> ChatMessage:
    """The assistant message of a model response: thinking, text, tool calls and files in order, its finish reason.

    A ``ThinkingPart`` becomes a reasoning part (its signature is never read);
    provider-native tool parts and compaction parts are left out.
    """
    parts: list[S.Part] = []
    for p in response.parts:
        if isinstance(p, TextPart):
            if p.content:
                parts.append(S.TextPart(p.content))
        elif isinstance(p, ThinkingPart):
            if p.content:
                parts.append(S.ReasoningPart(p.content))
        elif isinstance(p, ToolCallPart):
            parts.append(S.ToolCallPart(p.tool_name, tool_arguments(p), p.tool_call_id))
        elif isinstance(p, FilePart):
            part = media(p.content)
            if part is not None:
                parts.append(part)
    return ChatMessage("assistant", parts=parts, finish_reason=response.finish_reason)


def tool_return_parts(part: ToolReturnPart) -> list[S.Part]:
    """A tool's return as the tool message's parts: the response, then one media part per file it returned.

    With files, the response is the text pydantic-ai sends the model in their place
    (``See file {id}.``); without, the returned value itself.
    """
    files = part.files
    if not files:
        return [S.ToolCallResponsePart(part.content, part.tool_call_id)]
    text, _ = part.model_response_str_and_user_content()
    out: list[S.Part] = [S.ToolCallResponsePart(text, part.tool_call_id)]
    out.extend(p for p in (media(f) for f in files) if p is not None)
    return out


def _request_messages(request: ModelRequest) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for part in request.parts:
        if isinstance(part, SystemPromptPart):
            out.append(ChatMessage("system", part.content))
        elif isinstance(part, UserPromptPart):
            out.append(ChatMessage("user", parts=user_parts(part.content)))
        elif isinstance(part, ToolReturnPart):
            out.append(ChatMessage("tool", parts=tool_return_parts(part)))
        elif hasattr(part, "model_response"):  # retry feedback (RetryFeedbackPart, legacy RetryPromptPart)
            call_id = getattr(part, "tool_call_id", None) if getattr(part, "tool_name", None) else None
            out.append(ChatMessage("tool" if call_id else "user", part.model_response(), tool_call_id=call_id))
    return out


def chat_messages(messages: Sequence[Any]) -> tuple[list[ChatMessage], list[str]]:
    """A request's message history as chat messages, and its current instructions.

    Returns:
        ``(messages, instructions)``: ``instructions`` is the last request's
        ``instructions`` text (PydanticAI sends only the current ones), or empty.
    """
    out: list[ChatMessage] = []
    instructions: list[str] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            out.append(response_message(message))
        elif isinstance(message, ModelRequest):
            out.extend(_request_messages(message))
            instructions = [message.instructions] if message.instructions else []
    return out, instructions


def tool_definitions(parameters: Any) -> list[S.ToolDefinition]:
    """The tools a request offers the model (``ModelRequestParameters``): function tools, then output tools.

    A function tool pydantic-ai withholds from the request (``defer_loading`` not yet
    revealed) is left out.
    """
    if parameters is None:
        return []
    tools = []
    for t in [*parameters.function_tools, *parameters.output_tools]:
        visibility = getattr(parameters, "visibility_of", None)
        if visibility is not None and visibility(t.name) == "withheld":
            continue
        tools.append(S.ToolDefinition(t.name, t.description, t.parameters_json_schema))
    return tools


def prompt_value(prompt: Any, media_budget: int) -> Any:
    """An agent run's prompt for ``input.value``: a string as is; multimodal content as GenAI
    parts (media within ``media_budget`` bytes inline, larger ones summarised)."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    return [genai_part(p, media_budget) for p in user_parts(prompt)]


def prompt_messages(prompt: Any) -> list[ChatMessage] | None:
    """A multimodal prompt as the one user message it is (typed parts: media stay media), for
    ``gen_ai.input.messages``; ``None`` for a string prompt or none (the span layer makes its message)."""
    if prompt is None or isinstance(prompt, str):
        return None
    return [ChatMessage("user", parts=user_parts(prompt))]


def tool_result(result: Any, media_budget: int) -> Any:
    """A tool's return value for the tool span: files (``BinaryContent``, URLs) as GenAI media parts,
    summarised past ``media_budget`` bytes like message media; anything else unchanged."""
    if is_multi_modal_content(result):
        part = media(result)
        return genai_part(part, media_budget) if part is not None else result
    if isinstance(result, (list, tuple)) and any(is_multi_modal_content(r) for r in result):
        return [tool_result(r, media_budget) for r in result]
    return result


def model_usage(usage: RequestUsage | None) -> Usage | None:
    """One request's token counts; ``None`` when the model reported none (all zero)."""
    if usage is None or not usage.has_values():
        return None
    details = usage.details or {}
    reasoning = usage.output_reasoning_tokens or details.get("reasoning_tokens") or None
    return Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                 cache_read_tokens=usage.cache_read_tokens or None,
                 cache_creation_tokens=usage.cache_write_tokens or None,
                 reasoning_tokens=reasoning)


def output_type(parameters: Any) -> str | None:
    """``gen_ai.output.type`` of a request whose ``ModelRequestParameters`` ask the model for an output format:
    ``native`` output (the provider's structured output: JSON) → ``json``, ``image`` → ``image``; none for the
    others (text, a tool call, a schema in the prompt, or ``auto``: the model decides later)."""
    return _OUTPUT_TYPES.get(getattr(parameters, "output_mode", None))


_OUTPUT_TYPES = {"native": "json", "image": "image"}


def request_parameters(settings: Any, streaming: bool) -> dict[str, Any]:
    """The request's model settings (a ``ModelSettings`` dict) plus whether it streamed."""
    params = dict(settings) if isinstance(settings, dict) else {}
    params["stream"] = bool(streaming)
    return params
