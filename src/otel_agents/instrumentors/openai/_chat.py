"""Chat Completions (``POST /chat/completions``: ``create``, ``parse``, ``stream``): request body,
``ChatCompletion`` and the chunk stream, converted to the span layer's parts.

Shapes: OpenAI API reference, Chat Completions (messages with string or typed
content — ``text``, ``image_url``, ``input_audio``, ``file`` — ``tool_calls``,
``tool_call_id``; chunks with ``choices[].delta`` and, with
``stream_options.include_usage``, a last chunk whose ``choices`` is empty and
that carries ``usage``). Usage comes only from the response: a stream without a
usage chunk gives no token attributes (never zeros), and the request is never
changed to ask for usage. A stream is cut short (the span layer's ``stream_incomplete``) when a
choice never got its ``finish_reason``, or when usage was asked and neither the usage chunk nor
``data: [DONE]`` came (:meth:`ChunkAccumulator.missing`). ``service_tier`` asked and answered go
to ``openai.request.service_tier`` / ``openai.response.service_tier`` (OTel GenAI semconv, OpenAI
page).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._spans import (ChatMessage, ChoiceFinishes, FilePart, Part, ReasoningPart, SemanticSpan, TextPart,
                       ToolCallPart, ToolCallResponsePart, ToolDefinition, Usage, generic_part, media_part,
                       output_type_of)
from ..._spans.messages import BlobPart, json_arguments
from ...semconv import attributes as A
from .._sdk_client import Accumulator, Endpoint, Outcome, field_of, token_count


def _content_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    parts: list[Part] = []
    for item in content or ():
        kind = field_of(item, "type")
        if kind == "text":
            parts.append(TextPart(field_of(item, "text", "")))
        elif kind == "refusal":
            parts.append(TextPart(field_of(item, "refusal", "")))
        elif kind == "image_url":
            parts.append(media_part(field_of(field_of(item, "image_url"), "url", ""), modality="image"))
        elif kind == "input_audio":
            audio = field_of(item, "input_audio")
            fmt = field_of(audio, "format")
            parts.append(BlobPart(field_of(audio, "data", ""), "audio", f"audio/{fmt}" if fmt else None))
        elif kind == "file":
            file = field_of(item, "file")
            if field_of(file, "file_data"):
                parts.append(media_part(field_of(file, "file_data"), modality="document"))
            elif field_of(file, "file_id"):
                parts.append(FilePart(field_of(file, "file_id"), "document"))
        elif kind is not None:
            parts.append(generic_part(item, kind))
    return parts


def _tool_calls(calls: Any) -> list[ToolCallPart]:
    out = []
    for call in calls or ():
        function = field_of(call, "function") or field_of(call, "custom")
        out.append(ToolCallPart(field_of(function, "name", ""),
                                json_arguments(field_of(function, "arguments") or field_of(function, "input")), field_of(call, "id")))
    return out


def input_messages(messages: Any) -> list[ChatMessage]:
    """The request's ``messages`` (``developer`` is a system role)."""
    out = []
    for m in messages or ():
        role = field_of(m, "role", "user")
        if role == "developer":
            role = "system"
        if role == "tool":
            content = field_of(m, "content")
            if not isinstance(content, str):
                content = "".join(p.content for p in _content_parts(content) if isinstance(p, TextPart))
            out.append(ChatMessage("tool", parts=[ToolCallResponsePart(content, field_of(m, "tool_call_id"))]))
            continue
        parts = _content_parts(field_of(m, "content")) + _tool_calls(field_of(m, "tool_calls"))
        out.append(ChatMessage(role, parts=parts, name=field_of(m, "name")))
    return out


def tool_definitions(tools: Any) -> list[ToolDefinition]:
    """The request's ``tools`` (``{"type": "function", "function": {...}}``)."""
    out = []
    for t in tools or ():
        function = field_of(t, "function")
        if function is not None:
            out.append(ToolDefinition(field_of(function, "name", ""), field_of(function, "description"),
                                      field_of(function, "parameters")))
        else:
            out.append(ToolDefinition(field_of(t, "name", str(field_of(t, "type"))), field_of(t, "description"),
                                      None, str(field_of(t, "type", "function"))))
    return out


def usage_of(usage: Any) -> Usage | None:
    """Chat Completions usage (``prompt_tokens`` include the cached ones, as OTel GenAI counts input)."""
    if usage is None:
        return None
    return Usage(input_tokens=token_count(field_of(usage, "prompt_tokens")),
                 output_tokens=token_count(field_of(usage, "completion_tokens")),
                 total_tokens=token_count(field_of(usage, "total_tokens")),
                 cache_read_tokens=token_count(field_of(field_of(usage, "prompt_tokens_details"), "cached_tokens")),
                 reasoning_tokens=token_count(field_of(field_of(usage, "completion_tokens_details"),
                                                       "reasoning_tokens")))


def _choice_message(message: Any, finish_reason: Any) -> ChatMessage:
    parts: list[Part] = []
    reasoning = field_of(message, "reasoning_content")  # OpenAI-compatible servers (DeepSeek, vLLM…)
    if isinstance(reasoning, str) and reasoning:
        parts.append(ReasoningPart(reasoning))
    content = field_of(message, "content")
    if isinstance(content, str) and content:
        parts.append(TextPart(content))
    refusal = field_of(message, "refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(TextPart(refusal))
    parts.extend(_tool_calls(field_of(message, "tool_calls")))
    return ChatMessage("assistant", parts=parts, finish_reason=finish_reason)


def completion_outcome(completion: Any, content: bool = True) -> Outcome:
    """A whole ``ChatCompletion`` (or ``ParsedChatCompletion``: its parsed object is the output). With
    ``content`` false the messages carry only their finish reasons (see :meth:`Endpoint.outcome`)."""
    choices = field_of(completion, "choices", [])
    if content:
        messages = [_choice_message(field_of(c, "message"), field_of(c, "finish_reason")) for c in choices]
        parsed = field_of(field_of(choices[0], "message"), "parsed") if choices else None
    else:
        messages = [ChatMessage("assistant", parts=(), finish_reason=field_of(c, "finish_reason")) for c in choices]
        parsed = None
    return Outcome(response_id=field_of(completion, "id"), response_model=field_of(completion, "model"),
                   messages=messages, usage=usage_of(field_of(completion, "usage")), output=parsed,
                   attributes=service_tier_attributes(field_of(completion, "service_tier"),
                                                      field_of(completion, "system_fingerprint")))


def service_tier_attributes(tier: Any, fingerprint: Any = None) -> dict[str, Any]:
    """``openai.response.service_tier`` for the tier a response says served it and
    ``openai.response.system_fingerprint`` for the backend configuration it names (nothing for what it does not
    say; OTel GenAI v1.41, span.openai.inference.client)."""
    attrs = {A.OPENAI_RESPONSE_SERVICE_TIER: tier} if isinstance(tier, str) and tier else {}
    if isinstance(fingerprint, str) and fingerprint:
        attrs[A.OPENAI_RESPONSE_SYSTEM_FINGERPRINT] = fingerprint
    return attrs


def request_attributes(span: SemanticSpan, body: Mapping[str, Any], api_type: str) -> None:
    """What an OpenAI request says beyond its parameters (OTel GenAI v1.41): ``openai.api.type`` and the service
    tier asked."""
    span.set_attributes({A.OPENAI_API_TYPE: api_type, A.OPENAI_REQUEST_SERVICE_TIER: body.get("service_tier")})


class _DoneSeen:
    """The SSE decoder of one Chat Completions stream of the SDK (``Stream._decoder``), passing its events on
    unchanged and noting the ``data: [DONE]`` line that ends the stream (the SDK reads it and stops, yielding
    nothing for it)."""

    __slots__ = ("_decoder", "_accumulator")

    def __init__(self, decoder: Any, accumulator: "ChunkAccumulator"):
        self._decoder, self._accumulator = decoder, accumulator

    def _see(self, sse: Any) -> None:
        if str(getattr(sse, "data", "")).startswith("[DONE]"):
            self._accumulator.done = True

    def iter_bytes(self, iterator: Any) -> Any:
        for sse in self._decoder.iter_bytes(iterator):
            self._see(sse)
            yield sse

    async def aiter_bytes(self, iterator: Any) -> Any:
        async for sse in self._decoder.aiter_bytes(iterator):
            self._see(sse)
            yield sse

    def __getattr__(self, name: str) -> Any:
        return getattr(self._decoder, name)


class ChunkAccumulator(Accumulator):
    """Assembles ``ChatCompletionChunk`` events per choice; usage from the chunk that carries it.

    With ``stream_options.include_usage`` asked, whether the stream's ``data: [DONE]`` came is watched too (the
    SDK's stream object's decoder wrapped, see :meth:`missing`); ``done`` is ``None`` when it is not watched."""

    def __init__(self, body: Mapping[str, Any] | None = None, stream: Any = None) -> None:
        self.done: bool | None = None
        options = (body or {}).get("stream_options")
        if isinstance(options, Mapping) and options.get("include_usage") is True \
                and getattr(stream, "_decoder", None) is not None:
            self.done = False
            stream._decoder = _DoneSeen(stream._decoder, self)
        self.id: str | None = None
        self.model: str | None = None
        self.usage: Any = None
        self.service_tier: Any = None
        self.fingerprint: Any = None
        self.choices: dict[int, dict[str, Any]] = {}
        self.finishes = ChoiceFinishes()

    def add(self, chunk: Any) -> bool:
        self.id = self.id or field_of(chunk, "id")
        self.model = self.model or field_of(chunk, "model")
        self.service_tier = field_of(chunk, "service_tier") or self.service_tier
        self.fingerprint = field_of(chunk, "system_fingerprint") or self.fingerprint
        if field_of(chunk, "usage") is not None:
            self.usage = field_of(chunk, "usage")
        for choice in field_of(chunk, "choices", []):
            index = field_of(choice, "index", 0)
            acc = self.choices.setdefault(index, {"content": "", "reasoning": "", "refusal": "", "calls": {},
                                                  "finish": None})
            delta = field_of(choice, "delta")
            acc["content"] += field_of(delta, "content", "")
            acc["reasoning"] += field_of(delta, "reasoning_content", "")
            acc["refusal"] += field_of(delta, "refusal", "")
            for call in field_of(delta, "tool_calls", []):
                slot = acc["calls"].setdefault(field_of(call, "index", 0), {"id": None, "name": "", "arguments": ""})
                slot["id"] = slot["id"] or field_of(call, "id")
                function = field_of(call, "function")
                slot["name"] += field_of(function, "name", "")
                slot["arguments"] += field_of(function, "arguments", "")
            finish = field_of(choice, "finish_reason")
            acc["finish"] = finish or acc["finish"]
            self.finishes.note(index, finish)
        return False  # the usage chunk, when asked for, comes after the finish reasons: read to the end

    def outcome(self) -> Outcome:
        messages = []
        for _, acc in sorted(self.choices.items()):
            calls = [{"id": c["id"], "function": {"name": c["name"], "arguments": c["arguments"]}}
                     for _, c in sorted(acc["calls"].items())]
            message = {"content": acc["content"], "reasoning_content": acc["reasoning"], "refusal": acc["refusal"],
                       "tool_calls": calls}
            messages.append(_choice_message(message, acc["finish"]))
        return Outcome(response_id=self.id, response_model=self.model, messages=messages, usage=usage_of(self.usage),
                       attributes=service_tier_attributes(self.service_tier, self.fingerprint))

    def missing(self) -> str | None:
        """A choice's ``finish_reason`` ends it: a stream with a choice that never got one, or with no choice at
        all, was cut short (the span layer's rule, :class:`~..._spans.ChoiceFinishes`). With
        ``stream_options.include_usage`` the usage chunk follows the last finish reason, before ``data: [DONE]``
        (OpenAI API reference, ``stream_options``: "If the stream is interrupted, you may not receive the final
        usage chunk"): a stream that ended with neither was cut after its finish reasons (``"usage chunk"``; the
        reasons stand, they were sent). One that sent ``[DONE]`` without a usage chunk is whole: a server that
        does not report usage (an OpenAI-compatible one that ignores the option)."""
        cut = self.finishes.missing()
        if cut:
            return cut
        if self.done is False and self.usage is None:
            return "usage chunk"
        return None


_PARAMETERS = ("temperature", "top_p", "stop", "seed", "frequency_penalty", "presence_penalty", "stream")


class ChatCompletionsEndpoint(Endpoint):
    """``POST /chat/completions`` → one ``model`` span (``chat {model}``)."""

    def parameters(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        params = {k: body[k] for k in _PARAMETERS if k in body}
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        return params

    def request_output(self, body: Mapping[str, Any]) -> tuple[str | None, Any]:
        return output_type_of(body.get("response_format")), body.get("n")

    def record_request(self, span: SemanticSpan, body: Mapping[str, Any]) -> None:
        request_attributes(span, body, "chat_completions")
        if not span.records_content:
            return
        span.set_messages(input=input_messages(body.get("messages")), tools=tool_definitions(body.get("tools")))

    def outcome(self, result: Any, content: bool = True) -> Outcome:
        return completion_outcome(result, content)

    def accumulator(self, body: Mapping[str, Any], stream: Any) -> Accumulator:
        return ChunkAccumulator(body, stream)
