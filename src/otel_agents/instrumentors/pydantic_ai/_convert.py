"""PydanticAI messages, responses and usage → the span layer's neutral types.

Pure functions over pydantic-ai objects (imported here, so this module is only
imported once pydantic-ai is being instrumented). Every function returns plain
data and raises on a shape it does not know; the caller guards it.
"""

from __future__ import annotations

from typing import Any, Sequence

from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from ..._spans import ChatMessage, ToolCallRequest, Usage


def tool_arguments(call: ToolCallPart) -> Any:
    """A tool call's arguments as the model sent them: a dict, or the raw JSON text when it is not an object."""
    if isinstance(call.args, str):
        parsed = call.args_as_dict()
        return call.args if "INVALID_JSON" in parsed else parsed
    return call.args or {}


def response_message(response: ModelResponse) -> ChatMessage:
    """The assistant message of a model response: its text parts joined, its tool calls, its finish reason.

    Thinking and provider-native tool parts are left out (no raw chain-of-thought).
    """
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    calls = [ToolCallRequest(name=p.tool_name, arguments=tool_arguments(p), id=p.tool_call_id)
             for p in response.parts if isinstance(p, ToolCallPart)]
    return ChatMessage("assistant", text or None, tool_calls=calls, finish_reason=response.finish_reason)


def _request_messages(request: ModelRequest) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for part in request.parts:
        if isinstance(part, SystemPromptPart):
            out.append(ChatMessage("system", part.content))
        elif isinstance(part, UserPromptPart):
            content = part.content if isinstance(part.content, str) else list(part.content)
            out.append(ChatMessage("user", content))
        elif isinstance(part, ToolReturnPart):
            out.append(ChatMessage("tool", part.content, tool_call_id=part.tool_call_id))
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


def request_parameters(settings: Any, streaming: bool) -> dict[str, Any]:
    """The request's model settings (a ``ModelSettings`` dict) plus whether it streamed."""
    params = dict(settings) if isinstance(settings, dict) else {}
    params["stream"] = bool(streaming)
    return params
