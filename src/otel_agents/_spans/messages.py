"""The message content model: typed parts, tools offered, and their two encodings.

Instrumentors convert their framework's messages once into :class:`ChatMessage`
objects made of typed parts, following the OTel GenAI input/output message JSON
schemas (semconv v1.41, ``gen-ai-input-messages.json`` /
``gen-ai-output-messages.json`` / ``gen-ai-system-instructions.json``):

=========================  =====================  ======================================
part                        GenAI ``type``          fields
=========================  =====================  ======================================
:class:`TextPart`           ``text``                ``content``
:class:`ReasoningPart`      ``reasoning``           ``content`` (never a signature)
:class:`ToolCallPart`       ``tool_call``           ``id``, ``name``, ``arguments``
:class:`ToolCallResponsePart` ``tool_call_response`` ``id``, ``response``
:class:`BlobPart`           ``blob``                ``mime_type``, ``modality``, ``content`` (base64)
:class:`UriPart`            ``uri``                 ``mime_type``, ``modality``, ``uri``
:class:`FilePart`           ``file``                ``mime_type``, ``modality``, ``file_id``
:class:`GenericPart`        any other               its own fields
=========================  =====================  ======================================

The span layer writes them as GenAI JSON (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions``) and as OpenInference
flattened attributes (``llm.input_messages.{i}.message.content`` for a message
that is one text, ``…message.contents.{j}.message_content.type/.text/.image.image.url``
for multi-part content, ``…message.tool_calls.{j}…``); reasoning never enters
OpenInference message content. Tools offered to a model are
:class:`ToolDefinition` objects (``gen_ai.tool.definitions``, OpenInference
``llm.tools.{i}.tool.json_schema``).

Inline media above the media budget (``OTEL_AGENTS_MAX_MEDIA_BYTES``, bytes) is
never inlined: its ``blob`` part keeps ``mime_type`` and ``modality``, has an
empty ``content`` and carries ``otel_agents.size_bytes``, ``otel_agents.sha256``
and ``otel_agents.truncated: true`` (the schemas allow extra part fields).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence, Union

from ..semconv import attributes as A
from .redaction import REDACTED

# ----------------------------------------------------------------------------- parts


@dataclass(frozen=True)
class TextPart:
    """Text sent to or received from the model (GenAI ``text`` part)."""

    content: str


@dataclass(frozen=True)
class ReasoningPart:
    """A model's reasoning ("thinking") text (GenAI ``reasoning`` part); signatures and
    encrypted reasoning are never recorded."""

    content: str


@dataclass(frozen=True)
class ToolCallPart:
    """A model's request to call a tool (GenAI ``tool_call`` part): ``name``, ``arguments``
    (any JSON-able value; a JSON string is kept as the model sent it), ``id`` (may be ``None``)."""

    name: str
    arguments: Any = None
    id: str | None = None


ToolCallRequest = ToolCallPart  # the name the span layer used before parts had types


@dataclass(frozen=True)
class ToolCallResponsePart:
    """A tool's result sent back to the model (GenAI ``tool_call_response`` part)."""

    response: Any
    id: str | None = None


@dataclass(frozen=True)
class BlobPart:
    """Media sent inline (GenAI ``blob`` part).

    ``data`` is raw ``bytes`` or base64 text; ``modality`` is ``image``, ``audio``,
    ``video`` (the semconv enum) or another word (``document``); ``mime_type`` the
    IANA type when known. Above the media budget only its size and SHA-256 are kept.
    """

    data: bytes | str
    modality: str
    mime_type: str | None = None


@dataclass(frozen=True)
class UriPart:
    """Media referenced by URI (GenAI ``uri`` part); ``data:`` URLs should be a
    :class:`BlobPart` instead (see :func:`media_part`)."""

    uri: str
    modality: str
    mime_type: str | None = None


@dataclass(frozen=True)
class FilePart:
    """Media referenced by a provider file id (GenAI ``file`` part)."""

    file_id: str
    modality: str
    mime_type: str | None = None


@dataclass(frozen=True)
class GenericPart:
    """Any other part: ``type`` plus its JSON-able fields (GenAI ``GenericPart``)."""

    type: str
    fields: Mapping[str, Any] = field(default_factory=dict)


Part = Union[TextPart, ReasoningPart, ToolCallPart, ToolCallResponsePart, BlobPart, UriPart, FilePart, GenericPart]
MEDIA_PARTS = (BlobPart, UriPart, FilePart)

_OPAQUE_FIELDS = frozenset({"encrypted_content", "signature"})  # a provider's opaque tokens: never content


def generic_part(item: Any, kind: Any = None) -> GenericPart:
    """An item of a type the instrumentor does not know (a provider's new output item or content block) as a
    :class:`GenericPart`: ``type`` (``kind``, else the item's own ``type``, else ``"unknown"``) plus every other
    field the item holds, so its content is kept rather than reduced to its type (OTel GenAI ``GenericPart``:
    "any other part", a ``type`` and its own properties). ``item`` is a mapping, a pydantic model (a provider
    SDK's: its fields as stored, extra ones included, those left ``None`` out) or a dataclass, read as the span
    layer reads any value (:func:`~.encoding.to_jsonable`: plain data only, no user code run); anything else is
    kept as ``{"value": item}``. Opaque provider tokens (``encrypted_content``, ``signature``) are left out. The
    fields are content: the span layer redacts them and fits them to the budget when it writes the message
    (:func:`~.pipeline.redact_part`), and drops them with content off."""
    from .encoding import to_jsonable  # late: see _json_text

    data = item if isinstance(item, Mapping) else to_jsonable(item)
    if isinstance(data, Mapping):
        kind = kind if kind is not None else data.get("type")
        fields = {k: v for k, v in data.items()
                  if k != "type" and k not in _OPAQUE_FIELDS and (v is not None or data is item)}
    else:
        fields = {"value": data}
    return GenericPart(str(kind) if kind is not None else "unknown", fields)


def modality_of(mime_type: str | None, default: str = "image") -> str:
    """The GenAI modality for a MIME type: ``image/*`` → ``image``, ``audio/*`` → ``audio``,
    ``video/*`` → ``video``, anything else known → ``document``; ``default`` when unknown."""
    if not mime_type:
        return default
    top = mime_type.split("/", 1)[0].lower()
    return top if top in ("image", "audio", "video") else "document"


def media_part(url: str, *, modality: str | None = None, mime_type: str | None = None) -> BlobPart | UriPart:
    """A media part for ``url``: a ``data:`` URL becomes a :class:`BlobPart` of its decoded
    bytes, anything else a :class:`UriPart`. ``modality`` defaults from the MIME type."""
    if url.startswith("data:") and "," in url:
        header, payload = url[5:].split(",", 1)
        fields = header.split(";")
        mime = mime_type or fields[0] or None
        if "base64" in fields[1:]:
            return BlobPart(payload, modality or modality_of(mime), mime)
        return BlobPart(payload.encode("utf-8", "surrogatepass"), modality or modality_of(mime), mime)
    return UriPart(url, modality or modality_of(mime_type), mime_type)


# ----------------------------------------------------------------------------- messages


class ChatMessage:
    """One chat message: a ``role`` and its ordered ``parts``.

    Args:
        role: ``system``, ``user``, ``assistant`` or ``tool`` (GenAI role names).
        content: shorthand for a text message: a string becomes one :class:`TextPart`
            (for ``role="tool"``, any value becomes one :class:`ToolCallResponsePart`);
            a list of parts is taken as the parts; another value becomes text (its JSON).
        tool_calls: shorthand: :class:`ToolCallPart` objects appended after the content.
        tool_call_id: for a ``tool`` message, the call it answers.
        finish_reason: for an output message, why generation stopped (provider's word;
            normalised when written).
        parts: the parts, when given explicitly (then ``content``/``tool_calls`` are ignored).
        name: the participant's name, when the framework has one.
    """

    __slots__ = ("role", "parts", "finish_reason", "name")

    def __init__(self, role: str, content: Any = None, tool_calls: Iterable[ToolCallPart] = (),
                 tool_call_id: str | None = None, finish_reason: str | None = None, *,
                 parts: Iterable[Part] | None = None, name: str | None = None):
        self.role = role
        self.parts: list[Part] = list(parts) if parts is not None else _shorthand_parts(
            role, content, tool_calls, tool_call_id)
        self.finish_reason = finish_reason
        self.name = name

    @property
    def text(self) -> str | None:
        """The message's text parts joined (reasoning excluded), or ``None`` when it has none."""
        texts = [p.content for p in self.parts if type(p) is TextPart and isinstance(p.content, str) and p.content]
        return "".join(texts) if texts else None

    @property
    def content(self) -> Any:
        """The message's content in one value: a tool message's response, else :attr:`text`."""
        for p in self.parts:
            if type(p) is ToolCallResponsePart:
                return p.response
        return self.text

    @property
    def tool_call_id(self) -> str | None:
        """For a tool message, the id of the call it answers."""
        return next((p.id for p in self.parts if type(p) is ToolCallResponsePart), None)

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool calls this message requests, in order."""
        return [p for p in self.parts if type(p) is ToolCallPart]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ChatMessage) and (self.role, self.parts, self.finish_reason, self.name)
                == (other.role, other.parts, other.finish_reason, other.name))

    def __repr__(self) -> str:
        return f"ChatMessage({self.role!r}, parts={self.parts!r}, finish_reason={self.finish_reason!r})"


def _shorthand_parts(role: str, content: Any, tool_calls: Iterable[ToolCallPart],
                     tool_call_id: str | None) -> list[Part]:
    parts: list[Part] = []
    if role == "tool" and content is not None:
        parts.append(ToolCallResponsePart(content, tool_call_id))
    elif isinstance(content, str):
        if content:
            parts.append(TextPart(content))
    elif isinstance(content, (list, tuple)) and content and all(isinstance(p, _PART_TYPES) for p in content):
        parts.extend(content)
    elif content not in (None, [], {}):
        parts.append(TextPart(content))  # rendered as JSON text (see genai_part)
    parts.extend(tool_calls)
    return parts


_PART_TYPES = (TextPart, ReasoningPart, ToolCallPart, ToolCallResponsePart, BlobPart, UriPart, FilePart, GenericPart)


@dataclass(frozen=True)
class ToolDefinition:
    """A tool offered to a model: ``name``, ``description``, ``parameters`` (a JSON Schema
    object), ``type`` (``function`` unless the provider says otherwise)."""

    name: str
    description: str | None = None
    parameters: Mapping[str, Any] | None = None
    type: str = "function"


# Providers' own finish reasons → the OTel GenAI values (semconv v1.41: stop, length,
# content_filter, tool_call, error), so every framework reports the same words.
_FINISH_REASONS = {
    "stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "eos": "stop", "complete": "stop",
    "length": "length", "max_tokens": "length", "max_output_tokens": "length", "model_length": "length",
    "content_filter": "content_filter", "safety": "content_filter", "recitation": "content_filter",
    "blocklist": "content_filter", "prohibited_content": "content_filter", "refusal": "content_filter",
    "tool_call": "tool_call", "tool_calls": "tool_call", "function_call": "tool_call", "function_calls": "tool_call",
    "tool_use": "tool_call",
    "error": "error",
}


def normalize_finish_reason(reason: object) -> str:
    """A provider's finish reason as the OTel GenAI value; unknown values pass through, lower-cased (a
    ``[REDACTED]`` in them kept as it is: the span layer redacts a reason before this, its case intact)."""
    text = str(reason).strip()
    lowered = text.lower()
    known = _FINISH_REASONS.get(lowered)
    if known is not None:
        return known
    return lowered if REDACTED not in text else REDACTED.join(piece.lower() for piece in text.split(REDACTED))


# ----------------------------------------------------------------------------- GenAI JSON


def media_bytes(data: bytes | str) -> bytes | None:
    """The raw bytes of a blob's data (base64 text decoded), ``None`` if it is not base64.

    Decoding is strict (line breaks aside): lenient decoding drops every character outside
    the alphabet, so plain text would pass as "base64" and be inlined unredacted."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        pass
    if not isinstance(data, str) or "\n" not in data:
        return None
    try:  # base64 wrapped in lines (MIME, PEM style)
        return base64.b64decode(data.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return None


def _blob(part: BlobPart, media_budget: int) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "blob", "mime_type": part.mime_type, "modality": part.modality}
    raw = media_bytes(part.data)
    if raw is not None and len(raw) <= media_budget:
        out["content"] = (part.data if isinstance(part.data, str) else base64.b64encode(raw).decode("ascii"))
        return out
    size = len(raw) if raw is not None else len(part.data)
    digest = hashlib.sha256(raw if raw is not None else str(part.data).encode("utf-8", "surrogatepass"))
    out["content"] = ""
    out[A.OTEL_AGENTS_SIZE_BYTES] = size
    out[A.OTEL_AGENTS_SHA256] = digest.hexdigest()
    out[A.OTEL_AGENTS_TRUNCATED] = True
    return out


def genai_part(part: Part, media_budget: int) -> dict[str, Any]:
    """One part as GenAI JSON data (before encoding); ``media_budget`` in bytes."""
    t = type(part)
    if t is TextPart:
        content = part.content
        return {"type": "text", "content": content if isinstance(content, str) else _json_text(content)}
    if t is ToolCallPart:
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if t is ToolCallResponsePart:
        return {"type": "tool_call_response", "id": part.id, "response": part.response}
    if t is ReasoningPart:
        return {"type": "reasoning", "content": part.content}
    if t is BlobPart:
        return _blob(part, media_budget)
    if t is UriPart:
        return {"type": "uri", "mime_type": part.mime_type, "modality": part.modality, "uri": part.uri}
    if t is FilePart:
        return {"type": "file", "mime_type": part.mime_type, "modality": part.modality, "file_id": part.file_id}
    return {**part.fields, "type": part.type}


def _json_text(value: Any) -> str:
    from .encoding import dumps, to_jsonable  # late: encoding imports nothing of ours, keep messages light
    return dumps(to_jsonable(value))


def genai_messages(messages: Sequence[ChatMessage], media_budget: int, *,
                   output: bool = False) -> list[dict[str, Any]]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` data (before JSON encoding).

    An output message's ``finish_reason`` is required by the OTel GenAI output-messages schema
    (``FinishReason`` or any string); when the model sent none (a stream left early, a framework
    that drops it) it is the empty string: a reason the model never gave is never invented."""
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "parts": [genai_part(p, media_budget) for p in m.parts]}
        if m.name:
            item["name"] = m.name
        if output:
            item["finish_reason"] = normalize_finish_reason(m.finish_reason) if m.finish_reason else ""
        out.append(item)
    return out


def genai_message_text(m: ChatMessage, media_budget: int) -> str:
    """One input message of :func:`genai_messages` as compact JSON text (:func:`~.encoding.dumps`).

    A message of one text and no name, the most common by far, is encoded once per distinct
    ``(role, text)`` (a small LRU cache): an agent loop sends the whole conversation again with
    every model request, so the same messages are encoded turn after turn."""
    parts = m.parts
    if len(parts) == 1 and m.name is None and type(parts[0]) is TextPart:
        role, text = m.role, parts[0].content
        if type(role) is str and type(text) is str and len(text) <= _CACHED_TEXT:  # str subclasses: user code
            return _text_message_json(role, text)
    from .encoding import dumps  # late: see _json_text

    return dumps(genai_messages([m], media_budget)[0])


_CACHED_TEXT = 32_768  # characters: a longer text is encoded each time, not kept alive by the cache


@functools.lru_cache(maxsize=128)  # bounded: at most 128 messages of ≤ 32 k characters (their JSON) held
def _text_message_json(role: str, text: str) -> str:
    from .encoding import dumps_strings

    return dumps_strings({"role": role, "parts": [{"type": "text", "content": text}]})


def genai_tool_definitions(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """``gen_ai.tool.definitions`` data: ``[{"type", "name", "description", "parameters"}]``."""
    out = []
    for t in tools:
        item: dict[str, Any] = {"type": t.type, "name": t.name}
        if t.description:
            item["description"] = t.description
        if t.parameters is not None:
            item["parameters"] = t.parameters
        out.append(item)
    return out


def openinference_tool_schema(tool: ToolDefinition) -> dict[str, Any]:
    """OpenInference ``tool.json_schema`` data: the OpenAI function-tool shape Phoenix reads."""
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    if tool.parameters is not None:
        function["parameters"] = tool.parameters
    return {"type": tool.type, "function": function}


# ----------------------------------------------------------------------------- OpenInference

_OI_MEDIA = {"image": (A.MESSAGE_CONTENT_IMAGE, A.IMAGE_URL), "audio": (A.MESSAGE_CONTENT_AUDIO, A.AUDIO_URL)}


def openinference_messages(prefix: str, messages: Sequence[ChatMessage], limit: int,
                           media_budget: int) -> list[tuple[str, Any]]:
    """Flattened OpenInference message attributes, for the last ``limit`` messages.

    A message that is one text is ``message.content``; one with several text/media
    parts is ``message.contents.{j}.message_content.*`` (``type`` ``text`` or
    ``image``/``audio`` with its URL, a data URL for inline media within the media
    budget); reasoning is left out; tool calls are ``message.tool_calls.{j}.*``; a tool
    result is ``message.content`` plus ``message.tool_call_id``. Returns
    ``(key, value)`` pairs; values are raw (the span layer encodes and truncates them).
    ``prefix`` is ``llm.input_messages`` or ``llm.output_messages``.
    """
    pairs: list[tuple[str, Any]] = []
    for i, m in enumerate(messages[-limit:]):
        openinference_message(f"{prefix}.{i}.", m, media_budget, pairs)
    return pairs


def openinference_message(base: str, m: ChatMessage, media_budget: int, pairs: list[tuple[str, Any]]) -> None:
    """One message's flattened OpenInference attributes (see :func:`openinference_messages`), appended
    to ``pairs``; ``base`` is the message's key prefix (``llm.input_messages.3.``)."""
    pairs.append((base + A.MESSAGE_ROLE, m.role))
    content = [p for p in m.parts if type(p) in (TextPart, BlobPart, UriPart, FilePart)]
    if len(content) == 1 and type(content[0]) is TextPart:
        pairs.append((base + A.MESSAGE_CONTENT, content[0].content))
    else:
        j = 0
        for p in content:
            cbase = f"{base}{A.MESSAGE_CONTENTS}.{j}."
            if type(p) is TextPart:
                pairs.append((cbase + A.MESSAGE_CONTENT_TYPE, "text"))
                pairs.append((cbase + A.MESSAGE_CONTENT_TEXT, p.content))
                j += 1
                continue
            media = _OI_MEDIA.get(p.modality)
            url = _media_url(p, media_budget)
            if media is None or url is None:
                continue
            pairs.append((cbase + A.MESSAGE_CONTENT_TYPE, p.modality))
            pairs.append((f"{cbase}{media[0]}.{media[1]}", url))
            j += 1
    for p in m.parts:
        if type(p) is ToolCallResponsePart:
            if p.id:
                pairs.append((base + A.MESSAGE_TOOL_CALL_ID, p.id))
            pairs.append((base + A.MESSAGE_CONTENT, p.response))
    for j, call in enumerate(m.tool_calls):
        cbase = f"{base}{A.MESSAGE_TOOL_CALLS}.{j}."
        if call.id:
            pairs.append((cbase + A.TOOL_CALL_ID, call.id))
        pairs.append((cbase + A.TOOL_CALL_FUNCTION_NAME, call.name))
        pairs.append((cbase + A.TOOL_CALL_FUNCTION_ARGUMENTS, call.arguments))


def _media_url(part: Part, media_budget: int) -> str | None:
    if type(part) is UriPart:
        return part.uri
    if type(part) is BlobPart:
        if isinstance(part.data, str) and len(part.data) > 2 * media_budget + 64:
            return None  # base64 text this long is over the budget: no need to decode it
        raw = media_bytes(part.data)
        if raw is None or len(raw) > media_budget:
            return None
        data = part.data if isinstance(part.data, str) else base64.b64encode(raw).decode("ascii")
        return f"data:{part.mime_type or 'application/octet-stream'};base64,{data}"
    return None


def last_text(messages: Sequence[ChatMessage]) -> str | None:
    """The text of the last assistant message that has text (reasoning excluded), else ``None``."""
    for m in reversed(messages):
        if m.role == "assistant":
            text = m.text
            if isinstance(text, str) and text:
                return text
    return None


def json_arguments(value: Any) -> Any:
    """Tool-call arguments as the model sent them (JSON text) decoded to the JSON value, so every
    framework's calls read alike; anything not a string, and text that does not parse (cut short,
    plain text), is kept as it came.

    Raises:
        RecursionError: JSON nested deeper than the interpreter's recursion limit.
    """
    if isinstance(value, str) and value.strip():
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
