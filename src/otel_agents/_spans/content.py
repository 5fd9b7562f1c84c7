"""The content setters of a semantic span: inputs, outputs, messages, tool definitions, tool calls,
retrieval and embeddings (content capture, vocabularies, redaction and budgets applied through
:mod:`.pipeline`). A mixin of :class:`~.span.SemanticSpan`: its state is the span's.

What an agent loop sends again with every model request (the tools offered, the earlier messages of the
conversation) is rendered once and kept in bounded caches keyed by its content (:mod:`.memo`):
:data:`_TOOLS`, :data:`_MESSAGES`, :data:`_FLAT` and :func:`_text_message`."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..semconv import attributes as A, vocabularies as V
from ..semconv.kinds import Kind
from ..semconv.mapping import OP_INVOKE_WORKFLOW
from . import encoding, memo, pipeline
from .guard import guard, report_internal_error
from .messages import (ChatMessage, Part, ReasoningPart, TextPart, ToolCallPart, ToolCallResponsePart, ToolDefinition,
                       genai_message_text, genai_messages, genai_part,
                       genai_tool_definitions,
                       last_text, openinference_message, openinference_tool_schema)
from .pipeline import REDACTION_MARGIN as _REDACTION_MARGIN, otel_value

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from .span import Telemetry

_MAX_FLAT_MESSAGES = 12  # OpenInference flattened messages: keep under the SDK's 128-attribute limit
_MAX_FLAT_TOOLS = 16  # OpenInference llm.tools.{i}: likewise (gen_ai.tool.definitions keeps them all)
# The tools offered are sent again with every model request: their rendered attributes are kept, keyed by
# (their JSON, budget, vocabularies). Bound: 32 entries, each of definitions of at most 64 KiB of JSON.
_TOOLS: memo.Memo[tuple[tuple[str, Any], ...]] = memo.Memo(32)
_TOOLS_KEY_BYTES = 65_536
_ROLES = frozenset(("system", "user", "assistant", "tool", "developer", "model", "function"))
_FLAT_CONTENT = (A.MESSAGE_CONTENT, A.MESSAGE_CONTENT_TEXT, A.TOOL_CALL_FUNCTION_ARGUMENTS)  # content keys' endings


@functools.lru_cache(maxsize=64)  # two prefixes × at most _MAX_FLAT_MESSAGES indices
def _flat_keys(prefix: str, i: int) -> tuple[str, str, str]:
    """Message ``i``'s OpenInference role and content keys, and its key prefix."""
    base = f"{prefix}.{i}."
    return base + A.MESSAGE_ROLE, base + A.MESSAGE_CONTENT, base


# An agent loop sends every earlier message again with each model request: a message that is not one text
# (tool calls, a tool's result, several parts; one text has its own caches) is redacted and encoded once per
# (its content, the scan limit). Bound: 128 entries of messages of at most 16 k characters (or JSON bytes) each.
_MESSAGES: memo.Memo[tuple[ChatMessage, str]] = memo.Memo(128)
_MESSAGE_KEY_BYTES = 16_384
# Their OpenInference attributes likewise, per (its content, budget), without a redaction hook. Bound: 128 entries.
_FLAT: memo.Memo[tuple[tuple[tuple[str, Any], ...], bool]] = memo.Memo(128)


def _input_message(m: ChatMessage, limit: int, media: int) -> tuple[ChatMessage, str, tuple[Any, ...] | None]:
    """Input message ``m`` redacted (:func:`~.pipeline.redact_message`, strings cut to ``limit``), its
    GenAI JSON text (:func:`~.messages.genai_message_text`) and its content key (:func:`_message_key`, ``None``
    for one text: those have caches of their own); from :data:`_MESSAGES` for a message already seen.
    A redaction hook needs no bypass: it is applied to the attributes written from these, span by span."""
    parts = m.parts
    if type(m) is not ChatMessage:
        redacted = pipeline.redact_message(m, limit)
        return redacted, genai_message_text(redacted, media), None
    if len(parts) == 1 and type(parts[0]) is TextPart:  # one text, the most common by far
        role, text = m.role, parts[0].content
        if m.name is None and type(role) is str and type(text) is str and len(text) <= _CACHED_TEXT:
            redacted_text, encoded = _text_message(role, text, limit)
            if redacted_text == text:  # nothing redacted or cut: the message itself, as redact_message gives it
                return m, encoded, None
            return ChatMessage(role, parts=[TextPart(redacted_text)], finish_reason=m.finish_reason), encoded, None
        redacted = pipeline.redact_message(m, limit)
        return redacted, genai_message_text(redacted, media), None
    key = _message_key(m)
    if key is None:
        redacted = pipeline.redact_message(m, limit)
        return redacted, genai_message_text(redacted, media), None
    cached = _MESSAGES.get((key, limit))
    if cached is not None:
        return cached[0], cached[1], key
    r = pipeline.redact_message(m, limit)
    rendered = (ChatMessage(r.role, parts=r.parts, finish_reason=r.finish_reason, name=r.name),  # never m itself
                genai_message_text(r, media))
    _MESSAGES.put((key, limit), rendered)
    return rendered[0], rendered[1], key


_CACHED_TEXT = 32_768  # characters: a longer text is redacted and encoded each time, not kept by the cache


@functools.lru_cache(maxsize=128)  # bound: 128 texts of at most 32 k characters, with their redacted text and JSON
def _text_message(role: str, text: str, limit: int) -> tuple[str, str]:
    """A one-text message's text redacted (cut to ``limit`` first) and its GenAI JSON text: one look-up for
    what :func:`~.pipeline.redact_message` and :func:`~.messages.genai_message_text` give it."""
    redacted = pipeline.redact_message(ChatMessage(role, parts=[TextPart(text)]), limit)
    return redacted.parts[0].content, genai_message_text(redacted, 0)  # a text has no media: any budget


@functools.lru_cache(maxsize=32)  # bound: 32 system prompts of at most 32 k characters, with their JSON
def _instructions_json(text: str) -> str:
    """``gen_ai.system_instructions`` of one text (redacted already) as compact JSON text: a system prompt is
    sent again with every model request of a run, and the same prompt with every run."""
    return encoding.dumps_strings([{"type": "text", "content": text}])


_NULL = b"null"  # the key of a field that is None (what json_key gives it, without its NaN check)


def _message_key(m: ChatMessage) -> tuple[Any, ...] | None:
    """A cache key of the content of message ``m`` (of type :class:`ChatMessage`, exactly), the same for
    every message rendered alike whatever the budget (the callers add it): its role, name and finish reason,
    then each part's type and fields. A label (role, name, reason, call id, tool name) must be ``None`` or
    exactly a ``str``: labels are rendered as labels (quoted, dropped when empty), not as JSON data, so an enum
    member whose JSON is its value's must not share its value's key. A data field is itself when exactly a
    ``str`` (its hash is kept by the string: no encoding), else its JSON bytes (:func:`~.memo.json_key`: a
    ``str`` and a ``bytes`` are never equal, so text and data never share a key). ``None`` (no cache) for a
    part with media (rendered with the media budget), data that is not plain JSON, or more than
    :data:`_MESSAGE_KEY_BYTES` characters and JSON bytes in all."""
    role, name, reason = m.role, m.name, m.finish_reason
    if (role is not None and type(role) is not str) or (name is not None and type(name) is not str) or \
            (reason is not None and type(reason) is not str):
        return None
    key: list[Any] = [role, name, reason]
    room = _MESSAGE_KEY_BYTES - len(role or "") - len(name or "") - len(reason or "")
    for p in m.parts:
        t = type(p)  # each part type has a fixed number of labels: a key reads one way
        if t is TextPart or t is ReasoningPart:
            labels, data = (), p.content
        elif t is ToolCallPart:
            labels, data = (p.name, p.id), p.arguments
        elif t is ToolCallResponsePart:
            labels, data = (p.id,), p.response
        else:
            return None
        key.append(t)
        for label in labels:
            if label is not None:
                if type(label) is not str:
                    return None
                room -= len(label)
            key.append(label)
        if type(data) is not str:
            data = _NULL if data is None else memo.json_key(data, room)
            if data is None:
                return None
        room -= len(data)
        if room < 0:
            return None
        key.append(data)
    return tuple(key)


_LABEL_TYPES = frozenset((str, type(None)))


def _tools_key(tools: Sequence[ToolDefinition]) -> tuple[Any, ...] | None:
    """A cache key of the content of ``tools`` (each of type :class:`ToolDefinition`, exactly): each one's type,
    name and description (labels: ``None`` or exactly a ``str``, as in :func:`_message_key`), then the JSON bytes
    of the list of their parameters (:func:`~.memo.json_key`, one encoding for all). ``None`` (no cache) for
    parameters that are not a ``dict`` (exactly) of plain JSON data, or more than :data:`_TOOLS_KEY_BYTES`
    characters and JSON bytes in all."""
    labels: list[Any] = []
    parameters: list[Any] = []
    for t in tools:
        if type(t) is not ToolDefinition:
            return None
        p = t.parameters
        if p is not None and type(p) is not dict:  # (a JSON Schema object: anything else is rendered each time)
            return None
        labels += (t.type, t.name, t.description)
        parameters.append(p)
    if not _LABEL_TYPES.issuperset(map(type, labels)):
        return None
    room = _TOOLS_KEY_BYTES - sum(map(len, filter(None, labels)))
    data = memo.json_key(parameters, room) if room >= 0 else None
    if data is None:
        return None
    labels.append(data)
    return tuple(labels)


def _encoded(data: Any) -> str | None:
    """:func:`~.encoding.dumps` of redacted ``data``, ``None`` where it raises (each rendering then meets the error
    itself, and loses only its own attribute)."""
    try:
        return encoding.dumps(data)
    except (TypeError, ValueError):
        return None


class ContentSetters:
    """Content setters (see :class:`~.span.SemanticSpan`)."""

    __slots__ = ()
    if TYPE_CHECKING:
        span: Span
        telemetry: Telemetry
        _ended: bool
        _mute: bool
        _content: bool
        _budget: int
        _only: frozenset[str] | None
        _keep: V.KeyFilter | None
        _stored: bool
        _flat_input: bool | None
        _error_type: str | None
        _flat_output: bool | None
        _pending: dict[str, Any]
        kind: Kind
        _kind_attrs: Mapping[str, str]

        def _unchecked(self, key: Any, value: Any) -> Any: ...
        def _writes(self, key: str) -> bool: ...
        def _write(self, attrs: Mapping[str, Any]) -> None: ...
        def _emit(self, attrs: Mapping[str, Any]) -> None: ...
        def set_attribute(self, key: str, value: Any) -> None: ...

    def set_content(self, key: str, value: Any, *, as_json: bool | None = None) -> str | None:
        """Set a content-bearing attribute, through the content policy.

        Strings are kept as text unless ``as_json`` is true; other values are
        JSON-encoded by the safe encoder. Redaction, the user hook and the
        per-attribute budget apply; a cut sets ``otel_agents.truncated``.

        Returns:
            the MIME type used (``application/json`` or ``text/plain``), or
            ``None`` when nothing was recorded (content off, or no value).
        """
        if self._ended or not self._content or value is None:
            return None
        try:
            if type(key) is not str or not key:  # the caller's key: the SDK's to refuse (see SemanticSpan._stored)
                self._stored = False
            attrs: dict[str, Any] = {}
            mime = self._render_into(attrs, key, value, as_json=as_json)
            self._emit(attrs)
            return mime
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_content", exc)
            return None

    def _render_into(self, attrs: dict[str, Any], key: str, value: Any, *, as_json: bool | None = None,
                     redacted: bool = False, encoded: str | None = None) -> str | None:
        """Render one content value into ``attrs`` (and the truncation flag); returns its MIME type.
        A value that cannot be rendered (a failing redaction hook) loses only its own attribute."""
        keep = self._keep
        if value is None or (keep is not None and not keep[key]):
            return None
        try:
            text, mime, truncated = pipeline.render(key, value, budget=self._budget,
                                                    hook=self.telemetry.settings.redact_hook, as_json=as_json,
                                                    redacted=redacted, encoded=encoded)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.render_content", exc)
            return None
        attrs[key] = text
        if truncated:
            attrs[A.OTEL_AGENTS_TRUNCATED] = True
        return mime

    def _json_into(self, attrs: dict[str, Any], key: str, encoded: str, data_of: Callable[[], Any]) -> str | None:
        """Render redacted content already encoded as compact JSON ``encoded`` into ``attrs``: as it is when
        it fits the budget and there is no redaction hook (what :func:`~.pipeline.render` gives), else
        from its data (``data_of()``, built only then) to be cut as JSON or hooked. Returns the MIME type."""
        keep = self._keep
        if keep is not None and not keep[key]:
            return None
        if len(encoded) <= self._budget and self.telemetry.settings.redact_hook is None:
            attrs[key] = encoded if encoded.isascii() else encoding.utf8_safe(encoded)
            return A.MIME_JSON
        return self._render_into(attrs, key, data_of(), redacted=True, encoded=encoded)

    def _redacted(self, value: Any) -> tuple[Any, str | None]:
        """``value`` as JSON-able data with redaction applied and each string cut to the scan limit, and its
        compact JSON text when redaction made it (:func:`~.pipeline.prepare_encoded`): for a value that is
        rendered into several attributes (see :meth:`render_content`), encoded once."""
        data, _, text = pipeline.prepare_encoded(value, self._budget + _REDACTION_MARGIN)
        return data, text

    def _as_messages(self) -> bool:
        """Whether this span's input and output are written as ``gen_ai.input.messages`` and
        ``gen_ai.output.messages`` rather than ``input.value``/``output.value``: an ``invoke_agent`` span or an
        ``invoke_workflow`` chain (OTel GenAI semconv v1.41: ``span.gen_ai.invoke_agent.internal`` and
        ``span.gen_ai.invoke_workflow.internal`` carry both attributes, opt-in) written without the
        vocabularies of ``input.value``/``output.value`` (``OTEL_AGENTS_VOCABULARIES=gen_ai``), where they are
        the only place for the run's input and answer. Never with all three (the default): those spans keep
        ``input.value``/``output.value`` alone."""
        if self._only is None or self._writes(A.INPUT_VALUE) or not self._writes(A.GEN_AI_INPUT_MESSAGES):
            return False
        kind = self.kind
        return kind is Kind.AGENT or (kind is Kind.CHAIN and
                                      self._kind_attrs.get(A.GEN_AI_OPERATION_NAME) == OP_INVOKE_WORKFLOW)

    @property
    def input_as_messages(self) -> bool:
        """Whether :meth:`set_input` records the input here as ``gen_ai.input.messages`` (see
        :meth:`_as_messages`; content recorded): a caller converts its framework's messages for ``messages=``
        only then."""
        return self._content and not self._ended and self._only is not None and self._as_messages()

    @property
    def records_value(self) -> bool:
        """Whether :meth:`set_input` and :meth:`set_output` record anything now: content recorded, and written as
        ``input.value``/``output.value`` (OpenInference, Langfuse) or, for an agent or workflow span in OTel GenAI
        alone, as its messages (see :meth:`_as_messages`). With ``OTEL_AGENTS_VOCABULARIES=gen_ai`` another span's
        input and output are not written: a caller checks this before building them (a framework's event as
        JSON-able data), as :attr:`records_content` before converting content."""
        return self._content and not self._ended and (self._keep is None or self._keep[A.INPUT_VALUE] or
                                                      self._keep[A.OUTPUT_VALUE] or self._as_messages())

    def set_input(self, value: Any, *, messages: Sequence[ChatMessage] | None = None) -> None:
        """Record the span's input as OpenInference ``input.value`` + ``input.mime_type`` (content).

        An agent span or a workflow chain written in OTel GenAI alone (see :meth:`_as_messages`: no
        ``input.value``) records it as ``gen_ai.input.messages`` instead (through :meth:`set_messages`):
        ``messages`` when the caller has the input as chat messages (what the framework was given, richer than
        ``value``), else ``value`` itself when it is a list of :class:`ChatMessage`, else one ``user`` message
        holding ``value`` (a string as text; anything else as its JSON text). The richer record wins: input
        messages written from messages (here or by :meth:`set_messages`) are never replaced by one built from a
        flattened ``value``; a later input of messages replaces one built from a value."""
        if value is None and not messages:
            return
        if self._only is not None and self._as_messages():
            if not self._content or self._ended:
                return
            with guard("span.set_input"):  # the value is the user's: even comparing it may raise
                flat = False
                if not messages:  # (none given, or an empty list: the value is the input)
                    if isinstance(value, (list, tuple)) and value and all(type(m) is ChatMessage for m in value):
                        messages = value
                    elif self._flat_input is False:  # real messages are recorded already
                        return
                    else:
                        messages, flat = [ChatMessage("user", value)], True
                self.set_messages(input=messages)
                self._flat_input = flat
            return
        self._set_rendered({A.INPUT_VALUE: None}, value, A.INPUT_MIME_TYPE, redact_once=False)

    def set_output(self, value: Any, *, messages: Sequence[ChatMessage] | None = None) -> None:
        """Record the span's output as OpenInference ``output.value`` + ``output.mime_type`` (content).

        An agent span or a workflow chain written in OTel GenAI alone (see :meth:`_as_messages`: no
        ``output.value``) records it as ``gen_ai.output.messages`` instead (the semconv's attribute of
        ``invoke_agent`` and ``invoke_workflow`` spans, through :meth:`set_messages`): ``messages`` when the
        caller has the run's response as chat messages (richer than ``value``), else one assistant message
        holding ``value``, so the run's answer is on its span whoever produced it (a tool's result returned as
        the run's, a middleware's message, not only a model's answer). The richer record wins, as in
        :meth:`set_input`: output messages written from messages are never replaced by one built from a
        flattened ``value``."""
        if value is None and not messages:
            return
        if self._only is not None and self._as_messages():
            if messages:
                self.set_messages(output=messages)
                self._flat_output = False
            elif self._flat_output is not False:
                self.set_messages(output=[ChatMessage("assistant", value)])
                self._flat_output = True
            return
        self._set_rendered({A.OUTPUT_VALUE: None}, value, A.OUTPUT_MIME_TYPE, redact_once=False)

    def set_messages(self, *, input: Sequence[ChatMessage] | None = None,
                     output: Sequence[ChatMessage] | None = None,
                     system: Sequence[str | Part] | None = None,
                     tools: Sequence[ToolDefinition] | None = None) -> None:
        """Model messages (content): GenAI JSON attributes plus OpenInference flattened ones.

        Args:
            input: the messages sent (any roles); ``system`` messages among them go to
                ``gen_ai.system_instructions`` and stay first in the OpenInference list.
            output: the messages the model returned (``finish_reason`` on each; when none has one, those of
                :meth:`set_finish_reasons` written before, one a message, if as many).
            system: system instructions given apart from the messages (strings or parts):
                ``gen_ai.system_instructions``, and a leading OpenInference ``system`` message.
            tools: the tools offered to the model (see :meth:`set_tool_definitions`).

        Also sets ``input.value`` (JSON messages) and ``output.value`` (the answer text,
        or the JSON messages when the output requests tools). Finish reasons of
        ``output`` go to ``gen_ai.response.finish_reasons`` whether or not content is on;
        everything else only with content on. Inline media follow the media budget
        (:meth:`Settings.media_budget`, bytes). Shapes: OTel GenAI semconv v1.41 message
        schemas; OpenInference ``llm.input_messages``/``llm.output_messages``.
        """
        if self._ended or self._mute:
            return
        try:  # not `with guard(...)`: two calls fewer, on every span that sets this
            if output and self._error_type == A.STREAM_INCOMPLETE:
                # The stream was cut (mark_incomplete): a finish reason given now is a framework's default for the
                # one the stream never sent (PydanticAI's "stop"), not the model's. The messages without it.
                output = [ChatMessage(m.role, parts=m.parts, name=m.name) for m in output]
            elif output:
                reasons = [m.finish_reason for m in output if m.finish_reason]
                if reasons:
                    self.set_finish_reasons(reasons)
                elif self._reasons is not None and len(self._reasons) == len(output):
                    # Messages without their reasons (the OpenAI Agents SDK keeps none of a chat completion's):
                    # those written for this response (by the provider client beneath), one a message.
                    output = [ChatMessage(m.role, parts=m.parts, name=m.name, finish_reason=r)
                              for m, r in zip(output, self._reasons)]
            if not self._content:
                return
            media = self.media_budget()
            limit = self._budget + _REDACTION_MARGIN  # each string cut to the scan limit, as in _redacted
            keep = self._keep
            # Each message is redacted once, then encoded three ways (GenAI JSON, OpenInference
            # flattened attributes, input/output.value), all written in one call to the SDK.
            attrs: dict[str, Any] = {}
            if input is not None or system:
                given = [pipeline.redact_part(TextPart(p) if isinstance(p, str) else p, limit) for p in system or ()]
                sys_parts = list(given)
                messages: list[ChatMessage] = []
                texts: list[str] = []  # each message's GenAI JSON text
                chat_texts: list[str] = []  # those of the messages that are not system instructions
                keys: list[tuple[Any, ...] | None] = []  # each message's content key (see _input_message)
                for m in input or ():
                    r, text, key = _input_message(m, limit, media)
                    messages.append(r)
                    texts.append(text)
                    keys.append(key)
                    if r.role == "system":
                        sys_parts += r.parts
                    else:
                        chat_texts.append(text)
                if len(sys_parts) == 1 and type(sys_parts[0]) is TextPart and type(sys_parts[0].content) is str \
                        and len(sys_parts[0].content) <= _CACHED_TEXT:  # one system prompt (the common case)
                    self._json_into(attrs, A.GEN_AI_SYSTEM_INSTRUCTIONS, _instructions_json(sys_parts[0].content),
                                    lambda: [genai_part(p, media) for p in sys_parts])
                elif sys_parts:
                    self._render_into(attrs, A.GEN_AI_SYSTEM_INSTRUCTIONS, [genai_part(p, media) for p in sys_parts],
                                      redacted=True)
                if given:  # shown first, as a system message, in OpenInference and input.value
                    messages.insert(0, ChatMessage("system", parts=given))
                    texts.insert(0, genai_message_text(messages[0], media))
                    keys.insert(0, None)
            if input is not None:
                self._flat_input = False  # (set_input marks the messages it built from a flattened value)
                # Each message is encoded once (an earlier message of the conversation: once per conversation);
                # the two lists are joined from the same texts. The data is built only to be cut or hooked.
                def chat_data() -> list[dict[str, Any]]:
                    return genai_messages([m for m in messages if m.role != "system"], media)

                # (each list joined only when its attribute is written: a selection of vocabularies skips it)
                if keep is None or keep[A.GEN_AI_INPUT_MESSAGES]:
                    self._json_into(attrs, A.GEN_AI_INPUT_MESSAGES, "[" + ",".join(chat_texts) + "]", chat_data)
                if keep is None or keep[A.LLM_INPUT_MESSAGES]:
                    self._flat_into(attrs, A.LLM_INPUT_MESSAGES, messages, media, keys)
                if keep is None or keep[A.INPUT_VALUE]:
                    mime = self._json_into(attrs, A.INPUT_VALUE, "[" + ",".join(texts) + "]",
                                           lambda: genai_messages(messages, media))
                    if mime:
                        attrs[A.INPUT_MIME_TYPE] = mime
            if output is not None:
                encoded: dict[int, str] = {}  # tool calls' arguments as redaction encoded them (see redact_part)
                messages = [pipeline.redact_message(m, limit, encoded) for m in output]
                # The answer text, unless the output requests tools (then the JSON messages, whatever its text);
                # read only for output.value (not written in OTel GenAI alone)
                writes_value = keep is None or keep[A.OUTPUT_VALUE]
                has_calls = writes_value and any(m.tool_calls for m in messages)
                text = last_text(messages) if writes_value and not has_calls else None
                out_data: Any = None
                out_text: str | None = None
                if keep is None or keep[A.GEN_AI_OUTPUT_MESSAGES] or (text is None and writes_value):
                    out_data = genai_messages(messages, media, output=True)
                    out_text = encoding.dumps(out_data)
                    self._render_into(attrs, A.GEN_AI_OUTPUT_MESSAGES, out_data, redacted=True, encoded=out_text)
                if keep is None or keep[A.LLM_OUTPUT_MESSAGES]:
                    self._flat_into(attrs, A.LLM_OUTPUT_MESSAGES, messages, media, encoded=encoded)
                if text is not None:
                    mime = self._render_into(attrs, A.OUTPUT_VALUE, text, redacted=True)
                else:
                    mime = self._render_into(attrs, A.OUTPUT_VALUE, out_data, redacted=True, encoded=out_text)
                if mime:
                    attrs[A.OUTPUT_MIME_TYPE] = mime
            if tools:
                self._tools_into(attrs, tools)
            self._emit(attrs)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_messages", exc)

    def set_tool_definitions(self, tools: Sequence[ToolDefinition]) -> None:
        """The tools offered to the model (content): ``gen_ai.tool.definitions`` (OTel GenAI
        semconv v1.41: ``[{"type", "name", "description", "parameters"}]``) and OpenInference
        ``llm.tools.{i}.tool.json_schema`` (the OpenAI function-tool JSON Phoenix reads)."""
        if self._ended or not self._content:
            return
        try:  # not `with guard(...)`: two calls fewer, on every model span that sets this
            if not tools:  # inside the guard: the sequence may be the user's (a list whose __len__ raises)
                return
            attrs: dict[str, Any] = {}
            self._tools_into(attrs, tools)
            self._emit(attrs)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_tool_definitions", exc)

    def _tools_into(self, attrs: dict[str, Any], tools: Sequence[ToolDefinition]) -> None:
        """The tool-definition attributes of ``tools`` into ``attrs``: from :data:`_TOOLS` when the same
        definitions were rendered with the same budget and vocabularies (and no redaction hook is set)."""
        key = None
        if self.telemetry.settings.redact_hook is None:
            content = _tools_key(tools)
            if content is not None:
                key = (content, self._budget, self._only)
                cached = _TOOLS.get(key)
                if cached is not None:
                    attrs.update(cached)
                    return
        rendered: dict[str, Any] = {}
        if self._writes(A.GEN_AI_TOOL_DEFINITIONS):
            data, text = self._redacted(genai_tool_definitions(tools))
            self._render_into(rendered, A.GEN_AI_TOOL_DEFINITIONS, data, redacted=True, encoded=text)
        if self._writes(A.LLM_TOOLS):
            for i, tool in enumerate(tools[:_MAX_FLAT_TOOLS]):
                data, text = self._redacted(openinference_tool_schema(tool))
                self._render_into(rendered, f"{A.LLM_TOOLS}.{i}.{A.TOOL_JSON_SCHEMA}", data, redacted=True,
                                  encoded=text)
        if key is not None:
            _TOOLS.put(key, tuple(rendered.items()))
        attrs.update(rendered)

    def _flat_into(self, attrs: dict[str, Any], prefix: str, messages: list[ChatMessage], media: int,
                   keys: list[tuple[Any, ...] | None] | None = None, encoded: dict[int, str] | None = None) -> None:
        """The OpenInference flattened attributes of the last :data:`_MAX_FLAT_MESSAGES` ``messages`` into
        ``attrs``. ``keys``: the content keys of the messages these were redacted from (:func:`_input_message`);
        a message with one is rendered once per (its key, budget), in :data:`_FLAT` (earlier messages of a
        conversation; never with a redaction hook). ``encoded``: the JSON text of tool calls' arguments made
        when they were redacted (:func:`~.pipeline.redact_part`), written as it is."""
        budget = self._budget
        plain = self.telemetry.settings.redact_hook is None
        first = max(0, len(messages) - _MAX_FLAT_MESSAGES)
        for i, m in enumerate(messages[first:]):
            role_key, content_key, base = _flat_keys(prefix, i)
            parts = m.parts
            if plain and len(parts) == 1 and type(parts[0]) is TextPart:  # one text (the common case)
                text = parts[0].content
                if type(text) is str and len(text) <= budget:  # redacted already, nothing to cut: as is
                    role = m.role
                    if type(role) is not str or role not in _ROLES:  # a role's word is its own label
                        role = otel_value(role)
                        if role is not None and type(role) is not str:
                            role = self._unchecked(role_key, role)
                    if role is not None:
                        attrs[role_key] = role
                    attrs[content_key] = text if text.isascii() else encoding.utf8_safe(text)
                    continue
            key = keys[first + i] if keys is not None and plain else None
            if key is None:  # rendered for this span alone: written as rendered
                rendered, truncated = self._flat_message(base, m, media, plain, encoded)
                attrs.update(rendered)
            else:
                cached = _FLAT.get((key, budget))
                if cached is None:
                    rendered, truncated = self._flat_message(base, m, media, plain)
                    n = len(base)
                    cached = (tuple((k[n:], v) for k, v in rendered.items()), truncated)
                    _FLAT.put((key, budget), cached)
                suffixes, truncated = cached
                for suffix, value in suffixes:
                    attrs[base + suffix] = value
            if truncated:
                attrs[A.OTEL_AGENTS_TRUNCATED] = True

    def _flat_message(self, base: str, m: ChatMessage, media: int, plain: bool,
                      encoded: dict[int, str] | None = None) -> tuple[dict[str, Any], bool]:
        """One message's OpenInference attributes (their keys start with ``base``) and whether a value was cut;
        ``encoded``: see :meth:`_flat_into`."""
        budget = self._budget
        pairs: list[tuple[str, Any]] = []
        openinference_message(base, m, media, pairs)
        attrs: dict[str, Any] = {}
        for key, value in pairs:
            if key.endswith(_FLAT_CONTENT):
                if plain and type(value) is str and len(value) <= budget:
                    attrs[key] = encoding.utf8_safe(value)  # as render would write it: nothing to cut
                    continue
                if plain and (type(value) is dict or type(value) is list):  # tool-call arguments, redacted data
                    text = encoded.get(id(value)) if encoded else None
                    if text is None:
                        text = encoding.dumps(value)
                    if len(text) <= budget:  # as render would write it (as JSON): nothing to cut
                        attrs[key] = encoding.utf8_safe(text)
                        continue
                self._render_into(attrs, key, value, redacted=True, as_json=key.endswith(
                    A.TOOL_CALL_FUNCTION_ARGUMENTS) and not isinstance(value, str))
            else:
                v = otel_value(value)
                if v is not None:
                    attrs[key] = v if type(v) is str else self._unchecked(key, v)
        truncated = attrs.pop(A.OTEL_AGENTS_TRUNCATED, False)
        return attrs, truncated

    def set_tool(self, name: str | None = None, *, call_id: str | None = None,
                 description: str | None = None, tool_type: str | None = None,
                 arguments: Any = None) -> None:
        """Tool identity (``gen_ai.tool.*``, ``tool.*``) and its arguments (content).

        ``arguments`` go to ``gen_ai.tool.call.arguments`` and ``input.value``
        as JSON (a string that is already JSON is kept as is).
        """
        self.set_attributes({A.GEN_AI_TOOL_NAME: name, A.TOOL_NAME: name, A.GEN_AI_TOOL_CALL_ID: call_id,
                             A.TOOL_ID: call_id, A.GEN_AI_TOOL_TYPE: tool_type or ("function" if name else None),
                             A.GEN_AI_TOOL_DESCRIPTION: description or None, A.TOOL_DESCRIPTION: description or None})
        # Data is redacted once for both attributes; JSON text is decoded by each (whole, so a long
        # one is cut as JSON, not as a string).
        self._set_rendered({A.GEN_AI_TOOL_CALL_ARGUMENTS: True, A.INPUT_VALUE: None}, arguments,
                           A.INPUT_MIME_TYPE, redact_once=not isinstance(arguments, str))

    def set_tool_result(self, result: Any) -> None:
        """The tool's result (content): ``gen_ai.tool.call.result`` and ``output.value``."""
        self._set_rendered({A.GEN_AI_TOOL_CALL_RESULT: None, A.OUTPUT_VALUE: None}, result, A.OUTPUT_MIME_TYPE,
                           redact_once=True, json_flag=A.OTEL_AGENTS_TOOL_RESULT_JSON)

    def _set_rendered(self, keys: Mapping[str, bool | None], value: Any, mime_key: str, *,
                      redact_once: bool, json_flag: str | None = None) -> None:
        """Write content ``value`` to each key (``{key: as_json}``) in one SDK call; the MIME type of
        the last one written goes to ``mime_key`` when that is written, else, when it is JSON, ``true`` goes to
        ``json_flag`` (if given: the one carrier of "this text is JSON" left). Both describe the value written
        last: a text written over a JSON value takes ``json_flag`` away as it makes ``mime_key`` ``text/plain``
        (``false`` if the flag was handed to the SDK already: a span attribute is never removed).
        ``redact_once``: redact ``value`` once for all the keys (else each rendering redacts it). Nothing when
        content is off, the span ended or no value."""
        if value is None or not self._content or self._ended or \
                (self._keep is not None and not any(map(self._keep.__getitem__, keys))):
            return
        try:  # not `with guard(...)`: two calls fewer, on every span that sets this
            data, text = value, None
            if redact_once:
                data, _, text = pipeline.prepare_encoded(value, self._budget + _REDACTION_MARGIN)
                if text is None and type(data) is not str:
                    text = _encoded(data)  # once for every key, not once a key
            attrs: dict[str, Any] = {}
            mime = None
            for key, as_json in keys.items():
                mime = self._render_into(attrs, key, data, as_json=as_json, redacted=redact_once,
                                         encoded=text) or mime
            if mime:
                if self._keep is None or self._keep[mime_key]:
                    attrs[mime_key] = mime
                elif json_flag is not None:
                    if mime == A.MIME_JSON:
                        attrs[json_flag] = True
                    else:  # text: a flag written for a JSON value before is not this value's
                        self._pending.pop(json_flag, None)
                        if json_flag in (getattr(self.span, "attributes", None) or ()):  # handed to the SDK
                            attrs[json_flag] = False
            self._emit(attrs)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_content", exc)

    def set_retrieval(self, *, query: Any = None, documents: Sequence[Mapping[str, Any]] | None = None,
                      data_source: str | None = None, top_k: int | None = None) -> None:
        """Retriever query and documents (content), data source and ``top_k`` (not content).

        ``documents`` items may have ``id``, ``content``, ``score``, ``metadata``;
        they go to ``gen_ai.retrieval.documents`` (JSON) and OpenInference
        ``retrieval.documents.{i}.document.*``. ``top_k``: how many documents the
        retriever was asked for, ``gen_ai.request.top_k`` (OTel GenAI v1.41, retrieval span).
        """
        self.set_attribute(A.GEN_AI_DATA_SOURCE_ID, data_source)
        if type(top_k) is int and top_k > 0:
            self.set_attribute(A.GEN_AI_REQUEST_TOP_K, top_k)
        if query is not None:
            self.set_content(A.GEN_AI_RETRIEVAL_QUERY_TEXT, query)
            self.set_input(query)
        if documents is not None:
            with guard("span.set_retrieval"):  # the documents are the user's: iterating them may fail
                docs = list(documents)
                self.set_content(A.GEN_AI_RETRIEVAL_DOCUMENTS, docs, as_json=True)
                self.set_output(docs)
                for i, doc in enumerate(docs[:_MAX_FLAT_MESSAGES]):
                    base = f"{A.RETRIEVAL_DOCUMENTS}.{i}."
                    self.set_attribute(base + A.DOCUMENT_ID, doc.get("id"))
                    self.set_attribute(base + A.DOCUMENT_SCORE, doc.get("score"))
                    self.set_content(base + A.DOCUMENT_CONTENT, doc.get("content"))
                    if doc.get("metadata"):
                        self.set_content(base + A.DOCUMENT_METADATA, doc.get("metadata"), as_json=True)

    def set_embedding(self, *, texts: Sequence[str] | None = None, dimension: int | None = None) -> None:
        """Embedding inputs (content) and the vector dimension."""
        self.set_attribute(A.GEN_AI_EMBEDDINGS_DIMENSION_COUNT, dimension)
        if texts is not None:
            with guard("span.set_embedding"):  # the texts are the user's: even their truth value may fail
                texts = list(texts)
                if texts:
                    self.set_input(texts)
                for i, t in enumerate(texts[:_MAX_FLAT_MESSAGES]):
                    self.set_content(f"{A.EMBEDDING_EMBEDDINGS}.{i}.{A.EMBEDDING_TEXT}", t)
