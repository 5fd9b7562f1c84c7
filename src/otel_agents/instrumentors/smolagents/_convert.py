"""smolagents shapes → our message parts, usage and tool definitions (pure functions, no spans).

smolagents' ``ChatMessage`` has a role (``system``, ``user``, ``assistant``,
``tool-call``, ``tool-response``), content that is a string or a list of
``{"type": "text", "text": …}`` / ``{"type": "image", "image": …}`` blocks, and
``tool_calls`` (``ChatMessageToolCall``: ``id``, ``function.name``,
``function.arguments``). Its ``tool-call``/``tool-response`` memory messages
carry text (``Calling tools: …``, ``Observation: …``) and no call ids; they are
recorded with the roles smolagents itself sends them as (``assistant``/``user``,
its ``tool_role_conversions``), so the span shows what the model received.
"""

from __future__ import annotations

import copy
import io
import weakref
from typing import Any

from smolagents.models import get_tool_json_schema

from ..._spans import ChatMessage, TextPart, ToolCallPart, ToolDefinition, Usage, media_part, probes, token_sum
from ..._spans.messages import BlobPart, Part

_ROLES = {"tool-call": "assistant", "tool-response": "user"}
# The role each of smolagents' roles is recorded as. ``MessageRole`` is a ``str`` enum hashed and compared as
# its value, so its members find their entry here without a call to the enum's ``value`` property.
_ROLE_NAMES = {role: _ROLES.get(role, role) for role in ("system", "user", "assistant", "tool-call", "tool-response")}


def _value(x: Any) -> Any:
    return getattr(x, "value", x)


def _image_part(image: Any) -> Part | None:
    if isinstance(image, str):
        return media_part(image, modality="image")
    if isinstance(image, bytes):
        return BlobPart(image, "image")
    save = getattr(image, "save", None)  # a PIL image
    if save is None:
        return None
    buffer = io.BytesIO()
    save(buffer, format="PNG")
    return BlobPart(buffer.getvalue(), "image", "image/png")


def content_parts(content: Any) -> list[Part]:
    """Text and image parts of a smolagents message content (string or block list)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    parts: list[Part] = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, dict):
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                parts.append(TextPart(str(block["text"])))
            elif kind in ("image", "image_url"):
                image = block.get("image") or (block.get("image_url") or {}).get("url")
                part = _image_part(image)
                if part is not None:
                    parts.append(part)
        elif block:
            parts.append(TextPart(str(block)))
    return parts


def tool_call_parts(tool_calls: Any) -> list[Part]:
    """``ChatMessageToolCall`` objects → :class:`ToolCallPart` (arguments as the model sent them)."""
    parts: list[Part] = []
    for call in tool_calls or ():
        function = getattr(call, "function", None)
        if function is None:
            continue
        parts.append(ToolCallPart(str(function.name), function.arguments, getattr(call, "id", None) or None))
    return parts


def message(msg: Any) -> ChatMessage:
    """One smolagents ``ChatMessage`` (or its dict form) → :class:`ChatMessage`."""
    if isinstance(msg, dict):
        role, content, calls = msg.get("role"), msg.get("content"), msg.get("tool_calls")
    else:
        role, content, calls = msg.role, msg.content, msg.tool_calls
    name = _ROLE_NAMES.get(role) if isinstance(role, str) else None
    if name is None:
        name = str(_value(role))
        name = _ROLES.get(name, name)
    parts = _one_text(content)
    if parts is None:
        parts = content_parts(content)
    return ChatMessage(name, parts=(parts + tool_call_parts(calls)) if calls else parts)


def _one_text(content: Any) -> list[Part] | None:
    """The parts of content that is one text block (what smolagents' memory gives every message it writes),
    else ``None`` (:func:`content_parts` then reads it)."""
    if type(content) is list and len(content) == 1:
        block = content[0]
        if type(block) is dict and block.get("type") == "text":
            text = block.get("text")
            if type(text) is str:
                return [TextPart(text)] if text else []
    return None


def input_messages(messages: Any) -> list[ChatMessage]:
    """The messages a ``generate`` call received."""
    return [message(m) for m in messages or ()]


def output_message(msg: Any) -> ChatMessage:
    """The model's answer; its finish reason when the provider's raw response has one."""
    out = message(msg)
    out.role = "assistant"
    out.finish_reason = finish_reason(getattr(msg, "raw", None))
    return out


def finish_reason(raw: Any) -> str | None:
    """``raw.choices[0].finish_reason`` (OpenAI-style responses), else ``None``: smolagents has no field for it."""
    choices = raw.get("choices") if isinstance(raw, dict) else getattr(raw, "choices", None)
    if not choices:
        return None
    first = choices[0]
    reason = first.get("finish_reason") if isinstance(first, dict) else getattr(first, "finish_reason", None)
    return reason if isinstance(reason, str) else None


def response_identity(raw: Any) -> tuple[str | None, str | None]:
    """``(raw.model, raw.id)`` of the provider's own response a ``ChatMessage`` keeps (OpenAI-style: the model that
    answered, the response id), each ``None`` when absent (smolagents has no field for either)."""
    if raw is None:
        return None, None
    values = [raw.get(k) if isinstance(raw, dict) else getattr(raw, k, None) for k in ("model", "id")]
    model, response_id = (v if isinstance(v, str) and v else None for v in values)
    return model, response_id


def usage(token_usage: Any) -> Usage | None:
    """``TokenUsage`` → :class:`Usage`; ``None`` (usage not reported) stays ``None``, never 0/0."""
    if token_usage is None:
        return None
    return Usage(input_tokens=token_usage.input_tokens, output_tokens=token_usage.output_tokens)


def stream_usage(deltas: list[Any]) -> Usage | None:
    """Usage summed over the deltas that carry one (as smolagents' ``agglomerate_stream_deltas``); ``None`` if none did."""
    reported = [d.token_usage for d in deltas if getattr(d, "token_usage", None) is not None]
    if not reported:
        return None
    return Usage(input_tokens=token_sum(*(u.input_tokens for u in reported)),
                 output_tokens=token_sum(*(u.output_tokens for u in reported)))


def tool_definitions(tools: Any) -> list[ToolDefinition]:
    """``tools_to_call_from`` (tools and managed agents) → :class:`ToolDefinition` with their JSON Schema."""
    return [tool_definition(tool) for tool in tools or ()]


# tool → (its name, description, a copy of its inputs, its definition): an agent offers the same tools with every
# model request, and smolagents' schema deep-copies the inputs each time. An entry lives as long as its tool.
_DEFINITIONS: weakref.WeakKeyDictionary[Any, tuple[Any, Any, Any, ToolDefinition]] = weakref.WeakKeyDictionary()


def tool_definition(tool: Any) -> ToolDefinition:
    """One tool's :class:`ToolDefinition` (smolagents' ``get_tool_json_schema``, which reads only its ``name``,
    ``description`` and ``inputs``): made again whenever one of those three no longer equals what it was made
    from, else the one made before (never changed after it is made)."""
    name, description, inputs = tool.name, tool.description, tool.inputs
    try:
        cached = _DEFINITIONS.get(tool)
        if cached is not None and cached[0] == name and cached[1] == description and cached[2] == inputs:
            return cached[3]
    except Exception:  # noqa: BLE001 - not weak-referenceable, unhashable, inputs that do not compare: no cache
        pass
    function = get_tool_json_schema(tool)["function"]
    definition = ToolDefinition(function["name"], function.get("description"), function.get("parameters"))
    try:
        _DEFINITIONS[tool] = (name, description, copy.deepcopy(inputs), definition)
    except Exception:  # noqa: BLE001 - as above, or inputs deepcopy cannot copy: made again next time
        pass
    return definition


def tool_arguments(tool: Any, args: tuple, kwargs: dict) -> Any:
    """A tool call's arguments as a mapping: positional ones named after the tool's ``inputs``."""
    kwargs = {k: v for k, v in kwargs.items() if k != "sanitize_inputs_outputs"}
    if len(args) == 1 and not kwargs and isinstance(args[0], dict):
        return args[0]
    names = list(getattr(tool, "inputs", None) or ())
    named = {names[i] if i < len(names) else f"arg{i}": a for i, a in enumerate(args)}
    named.update(kwargs)
    return named


def jsonable_result(value: Any) -> Any:
    """A tool result for recording: smolagents' agent types (``AgentText``, ``AgentImage``…) as their plain value."""
    if type(value).__module__.startswith("smolagents") and (to_raw := probes.attr(value, "to_raw")) is not None:
        raw = to_raw()
        if isinstance(raw, (str, int, float, bool)) or raw is None:
            return raw
        return str(value)
    return value

