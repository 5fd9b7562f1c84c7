"""Opening, filling and ending semantic spans: the only code that talks to the OTel tracer.

:class:`Telemetry` is what an instrumentor holds (one per instrumentor, built
from the ``tracer_provider``/``meter_provider`` it was given);
:meth:`Telemetry.start_span` opens a :class:`SemanticSpan`. Every method of a
semantic span is guarded: a failure inside it is logged once and swallowed, so
instrumentation never breaks the user's program.

Parenting: ``parent=`` takes another :class:`SemanticSpan` (callback-style
frameworks keep their run-id → span map in a :class:`~.registry.SpanRegistry`),
an OTel ``Context`` or ``Span``; without it the current context is the parent.
A span opened under one of ours (whichever way the parent was given) remembers
that :class:`SemanticSpan` as :attr:`SemanticSpan.parent` and inherits its run
attributes; :func:`semantic_span_for` finds the open :class:`SemanticSpan` of an
OTel span (a weak index by span id that holds open spans only), which is how
``otel_agents.current_agent_span()`` walks up from a tool or model call.
A span is never made current by being opened: :meth:`SemanticSpan.activate`
makes it current around the code it wraps and always detaches in the same
context it attached in.
"""

from __future__ import annotations

import functools
import logging
import time
import weakref
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Sequence

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from .. import __version__
from ..semconv import Kind, attributes as A, kind_attributes, kind_spec, span_name, vocabularies as V
from . import encoding, pipeline, probes
from .guard import guard, report_internal_error
from .messages import (BlobPart, ChatMessage, FilePart, GenericPart, Part, ReasoningPart, TextPart, ToolCallPart,
                       ToolCallResponsePart, ToolDefinition, UriPart, genai_messages, genai_part, genai_tool_definitions, last_text,
                       normalize_finish_reason, openinference_messages, openinference_tool_schema)
from .metrics import GenAIMetrics
from .pipeline import REDACTION_MARGIN as _REDACTION_MARGIN, otel_value
from .run_context import current_run_attributes
from .settings import DEFAULT_MAX_CONTENT_LENGTH, Settings

logger = logging.getLogger("otel_agents")

_MAX_FLAT_MESSAGES = 12  # OpenInference flattened messages: keep under the SDK's 128-attribute limit
_MAX_FLAT_TOOLS = 16  # OpenInference llm.tools.{i}: likewise (gen_ai.tool.definitions keeps them all)
_MODEL_KINDS = (Kind.MODEL, Kind.EMBEDDING)
_CACHED_NAME_LENGTH = 256  # longer names (a prompt used as a name) are not kept alive by the naming cache


def _redacted_label(value: Any) -> Any:
    """A name, id or MIME type of a message part, redacted (see :func:`.pipeline.label`)."""
    return pipeline.label(value) if isinstance(value, str) and value else value


class Usage:
    """Token counts of one model call (all ints, tokens; ``None`` = not reported).

    ``total_tokens`` defaults to ``input_tokens + output_tokens`` when both are known.
    """

    __slots__ = ("input_tokens", "output_tokens", "total_tokens", "cache_read_tokens",
                 "cache_creation_tokens", "reasoning_tokens")

    def __init__(self, input_tokens: int | None = None, output_tokens: int | None = None,
                 total_tokens: int | None = None, cache_read_tokens: int | None = None,
                 cache_creation_tokens: int | None = None, reasoning_tokens: int | None = None):
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        if total_tokens is None and input_tokens is not None and output_tokens is not None:
            total_tokens = input_tokens + output_tokens
        self.total_tokens = total_tokens
        self.cache_read_tokens = cache_read_tokens
        self.cache_creation_tokens = cache_creation_tokens
        self.reasoning_tokens = reasoning_tokens

    def completeness(self) -> int:
        """How many of the three main counts are known (to prefer the fuller of two sources)."""
        return sum(v is not None for v in (self.input_tokens, self.output_tokens, self.total_tokens))

    def __repr__(self) -> str:
        return f"Usage(in={self.input_tokens}, out={self.output_tokens}, total={self.total_tokens})"


class SemanticSpan:
    """One open span of a :class:`~otel_agents.semconv.Kind`, with typed setters.

    Content setters (``set_input``, ``set_output``, ``set_messages``, tool
    arguments and results, retrieval documents) honour the content switch,
    redaction and the per-attribute budget. All methods are safe to call after
    :meth:`end` (they do nothing) and never raise.

    ``parent`` is the :class:`SemanticSpan` this one was opened under (directly,
    or through one non-semantic span such as an application span), or ``None``.
    """

    __slots__ = ("kind", "span", "telemetry", "name", "run_attributes", "parent", "run_name", "_ended", "_start",
                 "_kind_attrs", "_error_type", "_usage", "_metric_attrs", "_index_key", "_mute",
                 "_content", "_budget", "_status_ok", "_in_band", "_only", "__weakref__")

    def __init__(self, kind: Kind, span: Span, telemetry: "Telemetry", name: str,
                 kind_attrs: Mapping[str, str], run_attributes: Mapping[str, Any],
                 parent: "SemanticSpan | None" = None):
        self.kind = kind
        self.span = span
        self.telemetry = telemetry
        self.name = name
        self.run_attributes = run_attributes
        self.parent = parent
        # The name of the run this span is a step of: its outermost semantic span's name.
        self.run_name: str | None = parent.run_name if parent is not None else None
        self._index_key: int | None = None
        self._kind_attrs = kind_attrs
        self._ended = False
        # A span that does not record (suppressed, sampled out) gets no attributes: skip encoding them.
        self._mute = not span.is_recording()
        # The content policy is read once per span (not per attribute: each read is an environment lookup).
        self._content, self._budget, self._status_ok = False, DEFAULT_MAX_CONTENT_LENGTH, False
        # The vocabularies written: None = all of them (nothing to filter), else the selection.
        self._only: frozenset[str] | None = None
        if not self._mute:
            with guard("span.settings"):  # unusable settings: the span records, without content
                settings = telemetry.settings
                budget = settings.content_budget()
                self._content, self._budget = settings.content_enabled(), budget
                self._status_ok = settings.mark_status_ok()
                self._only = _selection(settings)
        self._start = time.monotonic()
        self._error_type: str | None = None
        self._in_band = False  # set_error was called: its error.type and status stand
        self._usage: Usage | None = None
        self._metric_attrs: dict[str, Any] = {}
        if kind is Kind.MODEL or kind is Kind.EMBEDDING:
            op = kind_attrs.get(A.GEN_AI_OPERATION_NAME)
            if op:
                self._metric_attrs[A.GEN_AI_OPERATION_NAME] = op

    # -- state -----------------------------------------------------------------
    @property
    def ended(self) -> bool:
        """Whether :meth:`end` has been called."""
        return self._ended

    @property
    def is_recording(self) -> bool:
        """Whether attributes set now will be exported."""
        return not self._ended and not self._mute

    def context(self, base: otel_context.Context | None = None) -> otel_context.Context:
        """An OTel ``Context`` with this span as the current span (to parent children)."""
        return trace.set_span_in_context(self.span, base)

    @contextmanager
    def activate(self) -> Iterator["SemanticSpan"]:
        """Make this span current around the ``with`` body; detach in the same context afterwards."""
        token = otel_context.attach(trace.set_span_in_context(self.span))
        try:
            yield self
        finally:
            otel_context.detach(token)

    def rename(self, name: str | None) -> None:
        """Rename the span after the component it turned out to be (a model span whose model is
        known only from the response): the same naming rule as at start (low cardinality)."""
        if self._ended or self._mute or not name:
            return
        with guard("span.rename"):
            op = self._kind_attrs.get(A.GEN_AI_OPERATION_NAME)
            self.name = encoding.utf8_safe(span_name(self.kind, pipeline.label(str(name)), operation=op,
                                                     workflow=op == "invoke_workflow"))
            self.span.update_name(self.name)

    # -- plain attributes ------------------------------------------------------
    def set_attribute(self, key: str, value: Any) -> None:
        """Set one non-content attribute; non-OTel-legal values are JSON-encoded; ``None`` is skipped."""
        if self._ended or self._mute:
            return
        if self._only is not None and not V.written(key, self._only):
            return
        try:  # not `with guard(...)`: this runs for nearly every attribute of every span
            v = otel_value(value)
            if v is not None:
                self.span.set_attribute(key, v)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_attribute", exc)

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        """Set several non-content attributes in one call to the SDK (see :meth:`set_attribute`)."""
        if self._ended or self._mute:
            return
        try:
            legal = {}
            only = self._only
            for k, v in attributes.items():
                if only is not None and not V.written(k, only):
                    continue
                v = otel_value(v)
                if v is not None:
                    legal[k] = v
            self.span.set_attributes(legal)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_attributes", exc)

    # -- content -----------------------------------------------------------------
    @property
    def content_enabled(self) -> bool:
        """Whether content is recorded on this span: the content switch as it was when the span
        started (``False`` for a span that does not record)."""
        return self._content

    @property
    def records_content(self) -> bool:
        """Whether content set now is recorded (content on, span recording and not ended): callers
        check it before building content (converting messages) that would otherwise be dropped."""
        return self._content and not self._ended

    def _writes(self, key: str) -> bool:
        """Whether attribute ``key`` belongs to a selected vocabulary (or to none: always written)."""
        return self._only is None or V.written(key, self._only)

    def _write(self, attrs: Mapping[str, Any]) -> None:
        """Hand ready attributes to the SDK, without those of vocabularies not selected."""
        only = self._only
        if only is not None:
            attrs = {k: v for k, v in attrs.items() if V.written(k, only)}
        self.span.set_attributes(attrs)

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
            attrs: dict[str, Any] = {}
            mime = self._render_into(attrs, key, value, as_json=as_json)
            self.span.set_attributes(attrs)
            return mime
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_content", exc)
            return None

    def _render_into(self, attrs: dict[str, Any], key: str, value: Any, *, as_json: bool | None = None,
                     redacted: bool = False, encoded: str | None = None) -> str | None:
        """Render one content value into ``attrs`` (and the truncation flag); returns its MIME type.
        A value that cannot be rendered (a failing redaction hook) loses only its own attribute."""
        if value is None or (self._only is not None and not V.written(key, self._only)):
            return None
        try:
            text, mime, truncated = self.telemetry.render_content(key, value, as_json=as_json, budget=self._budget,
                                                                  redacted=redacted, encoded=encoded)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.render_content", exc)
            return None
        attrs[key] = text
        if truncated:
            attrs[A.OTEL_AGENTS_TRUNCATED] = True
        return mime

    def _redacted(self, value: Any) -> Any:
        """``value`` as JSON-able data with redaction applied and each string cut to the scan
        limit: for a value that is rendered into several attributes (see :meth:`render_content`)."""
        return pipeline.prepare(value, self._budget + _REDACTION_MARGIN)[0]

    def set_input(self, value: Any) -> None:
        """Record the span's input as OpenInference ``input.value`` + ``input.mime_type`` (content)."""
        self._set_rendered({A.INPUT_VALUE: None}, value, A.INPUT_MIME_TYPE, redact_once=False)

    def set_output(self, value: Any) -> None:
        """Record the span's output as OpenInference ``output.value`` + ``output.mime_type`` (content)."""
        self._set_rendered({A.OUTPUT_VALUE: None}, value, A.OUTPUT_MIME_TYPE, redact_once=False)

    # -- identities ---------------------------------------------------------------
    def set_agent(self, name: str | None = None, *, id: str | None = None,
                  description: str | None = None) -> None:
        """Agent identity: ``gen_ai.agent.name``/``.id`` and OpenInference ``agent.name``;
        the description is content (an agent's goal or backstory may be)."""
        self.set_attributes({A.GEN_AI_AGENT_NAME: name, A.AGENT_NAME: name, A.GEN_AI_AGENT_ID: id})
        if description:
            self.set_content(A.GEN_AI_AGENT_DESCRIPTION, description)

    def set_model(self, *, request_model: str | None = None, response_model: str | None = None,
                  provider: str | None = None, response_id: str | None = None,
                  parameters: Mapping[str, Any] | None = None) -> None:
        """Model identity and request parameters (model and embedding spans only).

        ``parameters`` keys may be ``temperature``, ``top_p``, ``top_k``,
        ``max_tokens``, ``stop``/``stop_sequences``, ``frequency_penalty``,
        ``presence_penalty``, ``seed``, ``stream``; all of them also go, as JSON, to
        ``llm.invocation_parameters``. Ignored on other kinds (Langfuse would
        turn any span with a model name into a generation).
        """
        if self.kind not in _MODEL_KINDS:
            return
        with guard("span.set_model"):
            attrs: dict[str, Any] = {}
            if request_model:
                attrs[A.GEN_AI_REQUEST_MODEL] = request_model
                self._metric_attrs[A.GEN_AI_REQUEST_MODEL] = request_model
                key = A.EMBEDDING_MODEL_NAME if self.kind is Kind.EMBEDDING else A.LLM_MODEL_NAME
                attrs[key] = response_model or request_model
            if response_model:
                attrs[A.GEN_AI_RESPONSE_MODEL] = response_model
                self._metric_attrs[A.GEN_AI_RESPONSE_MODEL] = response_model
                if self.kind is Kind.MODEL:
                    attrs[A.LLM_MODEL_NAME] = response_model
            if provider:
                attrs[A.GEN_AI_PROVIDER_NAME] = provider
                attrs[A.LLM_PROVIDER] = provider
                self._metric_attrs[A.GEN_AI_PROVIDER_NAME] = provider
            attrs[A.GEN_AI_RESPONSE_ID] = response_id
            if parameters and not self._mute:
                params = {k: v for k, v in parameters.items() if v is not None}
                for src, dst in _PARAMETER_KEYS.items():
                    if src in params:
                        value = params[src]
                        if dst == A.GEN_AI_REQUEST_STOP_SEQUENCES and isinstance(value, str):
                            value = [value]
                        attrs[dst] = value
                if self._writes(A.LLM_INVOCATION_PARAMETERS):
                    attrs[A.LLM_INVOCATION_PARAMETERS] = encoding.dumps(pipeline.prepare(params, self._budget)[0])
            self.set_attributes(attrs)

    def set_messages(self, *, input: Sequence[ChatMessage] | None = None,
                     output: Sequence[ChatMessage] | None = None,
                     system: Sequence[str | Part] | None = None,
                     tools: Sequence[ToolDefinition] | None = None) -> None:
        """Model messages (content): GenAI JSON attributes plus OpenInference flattened ones.

        Args:
            input: the messages sent (any roles); ``system`` messages among them go to
                ``gen_ai.system_instructions`` and stay first in the OpenInference list.
            output: the messages the model returned (``finish_reason`` on each).
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
        with guard("span.set_messages"):
            if output:
                reasons = [m.finish_reason for m in output if m.finish_reason]
                if reasons:
                    self.set_finish_reasons(reasons)
            if not self._content:
                return
            media = self.telemetry.settings.media_budget()
            # Each message is redacted once, then encoded three ways (GenAI JSON, OpenInference
            # flattened attributes, input/output.value), all written in one call to the SDK.
            attrs: dict[str, Any] = {}
            if input is not None or system:
                messages = [self._redacted_message(m) for m in input or ()]
                given = [self._redacted_part(TextPart(p) if isinstance(p, str) else p) for p in system or ()]
                sys_parts = given + [p for m in messages if m.role == "system" for p in m.parts]
                if sys_parts:
                    self._render_into(attrs, A.GEN_AI_SYSTEM_INSTRUCTIONS, [genai_part(p, media) for p in sys_parts],
                                      redacted=True)
                if given:  # shown first, as a system message, in OpenInference and input.value
                    messages.insert(0, ChatMessage("system", parts=given))
            if input is not None:
                # Each message is encoded once; the two lists are joined from the same texts.
                data = genai_messages(messages, media)
                texts = [encoding.dumps(d) for d in data]
                chat = [i for i, m in enumerate(messages) if m.role != "system"]
                self._render_into(attrs, A.GEN_AI_INPUT_MESSAGES, [data[i] for i in chat], redacted=True,
                                  encoded="[" + ",".join(texts[i] for i in chat) + "]")
                if self._writes(A.LLM_INPUT_MESSAGES):
                    self._flat_into(attrs, A.LLM_INPUT_MESSAGES, messages, media)
                mime = self._render_into(attrs, A.INPUT_VALUE, data, redacted=True, encoded="[" + ",".join(texts) + "]")
                if mime:
                    attrs[A.INPUT_MIME_TYPE] = mime
            if output is not None:
                messages = [self._redacted_message(m) for m in output]
                out_data = genai_messages(messages, media, output=True)
                out_text = encoding.dumps(out_data)
                self._render_into(attrs, A.GEN_AI_OUTPUT_MESSAGES, out_data, redacted=True, encoded=out_text)
                if self._writes(A.LLM_OUTPUT_MESSAGES):
                    self._flat_into(attrs, A.LLM_OUTPUT_MESSAGES, messages, media)
                text = last_text(messages)
                has_calls = any(m.tool_calls for m in messages)
                if text is not None and not has_calls:
                    mime = self._render_into(attrs, A.OUTPUT_VALUE, text, redacted=True)
                else:
                    mime = self._render_into(attrs, A.OUTPUT_VALUE, out_data, redacted=True, encoded=out_text)
                if mime:
                    attrs[A.OUTPUT_MIME_TYPE] = mime
            if tools:
                self._tools_into(attrs, tools)
            self.span.set_attributes(attrs)

    def set_tool_definitions(self, tools: Sequence[ToolDefinition]) -> None:
        """The tools offered to the model (content): ``gen_ai.tool.definitions`` (OTel GenAI
        semconv v1.41: ``[{"type", "name", "description", "parameters"}]``) and OpenInference
        ``llm.tools.{i}.tool.json_schema`` (the OpenAI function-tool JSON Phoenix reads)."""
        if not tools or self._ended or not self._content:
            return
        with guard("span.set_tool_definitions"):
            attrs: dict[str, Any] = {}
            self._tools_into(attrs, tools)
            self.span.set_attributes(attrs)

    def _tools_into(self, attrs: dict[str, Any], tools: Sequence[ToolDefinition]) -> None:
        if self._writes(A.GEN_AI_TOOL_DEFINITIONS):
            self._render_into(attrs, A.GEN_AI_TOOL_DEFINITIONS, self._redacted(genai_tool_definitions(tools)),
                              redacted=True)
        if not self._writes(A.LLM_TOOLS):
            return
        for i, tool in enumerate(tools[:_MAX_FLAT_TOOLS]):
            self._render_into(attrs, f"{A.LLM_TOOLS}.{i}.{A.TOOL_JSON_SCHEMA}",
                              self._redacted(openinference_tool_schema(tool)), redacted=True)

    def _redacted_message(self, m: ChatMessage) -> ChatMessage:
        return ChatMessage(m.role, parts=[self._redacted_part(p) for p in m.parts], finish_reason=m.finish_reason,
                           name=_redacted_label(m.name))

    def _redacted_part(self, p: Part) -> Part:
        """``p`` with its content redacted, and the token shapes in its names and ids (media bytes
        are not text to scan)."""
        t = type(p)
        if t is TextPart or t is ReasoningPart:
            return t(self._redacted(p.content))
        if t is ToolCallPart:
            return ToolCallPart(_redacted_label(p.name), self._redacted(p.arguments), _redacted_label(p.id))
        if t is ToolCallResponsePart:
            return ToolCallResponsePart(self._redacted(p.response), _redacted_label(p.id))
        if t is UriPart:
            return UriPart(self._redacted(p.uri), p.modality, _redacted_label(p.mime_type))
        if t is FilePart:
            return FilePart(_redacted_label(p.file_id), p.modality, _redacted_label(p.mime_type))
        if t is BlobPart:
            return BlobPart(p.data, p.modality, _redacted_label(p.mime_type))
        if t is GenericPart:
            return GenericPart(_redacted_label(p.type), self._redacted(dict(p.fields)))
        return p

    def _flat_into(self, attrs: dict[str, Any], prefix: str, messages: list[ChatMessage], media: int) -> None:
        for key, value in openinference_messages(prefix, messages, _MAX_FLAT_MESSAGES, media):
            if key.endswith((A.MESSAGE_CONTENT, A.MESSAGE_CONTENT_TEXT, A.TOOL_CALL_FUNCTION_ARGUMENTS)):
                self._render_into(attrs, key, value, redacted=True,
                                  as_json=key.endswith(A.TOOL_CALL_FUNCTION_ARGUMENTS) and not isinstance(value, str))
            else:
                v = otel_value(value)
                if v is not None:
                    attrs[key] = v

    def set_finish_reasons(self, reasons: Sequence[str]) -> None:
        """``gen_ai.response.finish_reasons`` (not content), normalised to the OTel GenAI values
        (``tool_calls``/``tool_use`` → ``tool_call``, ``end_turn`` → ``stop``, ``max_tokens`` → ``length``…)."""
        with guard("span.set_finish_reasons"):
            reasons = [normalize_finish_reason(r) for r in reasons if r]
            if reasons:
                # OpenInference has one reason per span (llm.finish_reason): the first choice's.
                self.set_attributes({A.GEN_AI_RESPONSE_FINISH_REASONS: reasons, A.LLM_FINISH_REASON: reasons[0]})

    def set_usage(self, usage: Usage | None, *, prefer_complete: bool = True) -> None:
        """Token usage (model and embedding spans only): GenAI and OpenInference counts.

        With ``prefer_complete`` a later call only replaces an earlier one that
        had fewer of the input/output/total counts (LangChain's ``llm_output``
        may report only completion tokens while ``usage_metadata`` has all).
        """
        if self._ended or usage is None or self.kind not in _MODEL_KINDS:
            return
        with guard("span.set_usage"):
            if prefer_complete and self._usage is not None and usage.completeness() < self._usage.completeness():
                return
            self._usage = usage  # kept for the token metric even when the span is sampled out
            if self._mute:
                return
            pairs = (
                (A.GEN_AI_USAGE_INPUT_TOKENS, A.LLM_TOKEN_COUNT_PROMPT, usage.input_tokens),
                (A.GEN_AI_USAGE_OUTPUT_TOKENS, A.LLM_TOKEN_COUNT_COMPLETION, usage.output_tokens),
                (None, A.LLM_TOKEN_COUNT_TOTAL, usage.total_tokens),
                (A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, A.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ, usage.cache_read_tokens),
                (A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, A.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_WRITE, usage.cache_creation_tokens),
                (A.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, A.LLM_TOKEN_COUNT_COMPLETION_DETAILS_REASONING, usage.reasoning_tokens),
            )
            attrs: dict[str, int] = {}
            for genai_key, oi_key, value in pairs:
                if value is None:
                    continue
                value = int(value)
                if genai_key:
                    attrs[genai_key] = value
                attrs[oi_key] = value
            self._write(attrs)

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
                           redact_once=True)

    def _set_rendered(self, keys: Mapping[str, bool | None], value: Any, mime_key: str, *,
                      redact_once: bool) -> None:
        """Write content ``value`` to each key (``{key: as_json}``) in one SDK call; the MIME type of
        the last one goes to ``mime_key``. ``redact_once``: redact ``value`` once for all the keys
        (else each rendering redacts it). Nothing when content is off, the span ended or no value."""
        if value is None or not self._content or self._ended or not any(self._writes(k) for k in keys):
            return
        with guard("span.set_content"):
            data = self._redacted(value) if redact_once else value
            attrs: dict[str, Any] = {}
            mime = None
            for key, as_json in keys.items():
                mime = self._render_into(attrs, key, data, as_json=as_json, redacted=redact_once)
            if mime:
                attrs[mime_key] = mime
            self.span.set_attributes(attrs)

    def set_retrieval(self, *, query: Any = None, documents: Sequence[Mapping[str, Any]] | None = None,
                      data_source: str | None = None) -> None:
        """Retriever query and documents (content).

        ``documents`` items may have ``id``, ``content``, ``score``, ``metadata``;
        they go to ``gen_ai.retrieval.documents`` (JSON) and OpenInference
        ``retrieval.documents.{i}.document.*``.
        """
        self.set_attribute(A.GEN_AI_DATA_SOURCE_ID, data_source)
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

    # -- outcome -----------------------------------------------------------------
    def record_error(self, exc: BaseException, *, control_flow: bool = False) -> None:
        """Record an exception.

        An error sets status ERROR, ``error.type`` (the exception's qualified class
        name) and an ``exception`` event (its message only when content is on).
        A ``control_flow`` signal (a framework's interrupt, cancellation-as-flow)
        is not an error: it only sets ``otel_agents.control_flow``. After
        :meth:`set_error` (an in-band failure, e.g. MCP ``isError``), the exception a
        framework made of that failure adds its event only: the in-band ``error.type``
        and status stand (they are the protocol's own, more precise, verdict).
        """
        if self._ended:
            return
        with guard("span.record_error"):
            etype = type(exc)
            qual = etype.__qualname__ if etype.__module__ in ("builtins", None) else f"{etype.__module__}.{etype.__qualname__}"
            if not control_flow and not self._in_band:
                self._error_type = qual  # for the duration metric, even when the span is sampled out
            if self._mute:
                return
            if control_flow:
                self.span.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, qual)
                return
            budget = self._budget
            # The exception is the user's: its __str__ may raise (probes.text never does), and the status
            # is set before anything else can fail, so a failed call is never reported as ok.
            message = pipeline.message(probes.text(exc), budget) if self._content else ""
            if not self._in_band:
                self.span.set_attribute(A.ERROR_TYPE, qual)
                self.span.set_status(Status(StatusCode.ERROR, f"{etype.__name__}: {message}"[:512] if self._content
                                            else etype.__name__))  # the message may quote user content
            # One formatting of the traceback (the SDK's record_exception would format it again).
            self.span.add_event("exception", {"exception.type": qual, "exception.message": message,
                                              "exception.stacktrace": pipeline.stacktrace(exc, qual, self._content,
                                                                                          budget)})

    def _set_ok(self) -> None:
        """Status OK (opt-in, ``OTEL_AGENTS_STATUS_OK``) for a span that ended normally: not on one whose
        status is already set, nor on a cancelled, interrupted, paused or abandoned one."""
        attrs = getattr(self.span, "attributes", None) or {}
        if any(key in attrs for key in _NOT_COMPLETED):
            return
        status = getattr(self.span, "status", None)
        if status is None or status.status_code is StatusCode.UNSET:
            self.span.set_status(Status(StatusCode.OK))

    def set_error(self, error_type: str, message: str | None = None) -> None:
        """Mark the span failed without an exception: a failure reported in-band (an MCP
        ``CallToolResult`` with ``isError``, a JSON-RPC error code).

        Sets status ERROR and ``error.type`` = ``error_type`` (low cardinality: ``tool_error``,
        ``-32602``); ``message`` (content: it may quote user data) is the status description
        when content is on, else the description is ``error_type``.
        """
        if self._ended:
            return
        self._error_type = error_type
        self._in_band = True
        if self._mute:
            return
        with guard("span.set_error"):
            description = error_type
            if message and self._content:
                description = pipeline.message(probes.text(message), 512)
            self.span.set_attribute(A.ERROR_TYPE, error_type)
            self.span.set_status(Status(StatusCode.ERROR, description))

    def mark_paused(self) -> None:
        """The run stopped waiting for a human (interrupt, deferred tool call): ``otel_agents.run.paused``."""
        self.set_attribute(A.OTEL_AGENTS_PAUSED, True)

    def mark_abandoned(self) -> None:
        """A stream was not consumed to its end: ``otel_agents.stream.abandoned`` (not an error)."""
        self.set_attribute(A.OTEL_AGENTS_STREAM_ABANDONED, True)

    def end(self, *, error: BaseException | None = None, end_time: int | None = None) -> None:
        """End the span (idempotent). Kind attributes are set again, so a span that
        hit the SDK's attribute-count limit keeps them; model spans record the
        GenAI duration and token-usage metrics."""
        if self._ended:
            return
        if error is not None:
            self.record_error(error)
        self._ended = True
        with guard("span.end"):
            if self._index_key is not None and _OPEN.get(self._index_key) is self:
                _OPEN.pop(self._index_key, None)
            if getattr(self.span, "dropped_attributes", 1):  # over the SDK's limit: put the kind back
                self._write(self._kind_attrs)
            if self._status_ok and self._error_type is None:
                self._set_ok()
            if self.kind in _MODEL_KINDS and self.span is not trace.INVALID_SPAN:  # not when suppressed
                self.telemetry.metrics.record(self, time.monotonic() - self._start, self._usage,
                                              self._metric_attrs, self._error_type)
        try:
            self.span.end(end_time=end_time)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.end", exc)


_NOT_COMPLETED = (A.OTEL_AGENTS_CONTROL_FLOW, A.OTEL_AGENTS_PAUSED, A.OTEL_AGENTS_STREAM_ABANDONED)

_PARAMETER_KEYS = {
    "temperature": A.GEN_AI_REQUEST_TEMPERATURE,
    "top_p": A.GEN_AI_REQUEST_TOP_P,
    "top_k": A.GEN_AI_REQUEST_TOP_K,
    "max_tokens": A.GEN_AI_REQUEST_MAX_TOKENS,
    "max_output_tokens": A.GEN_AI_REQUEST_MAX_TOKENS,
    "stop": A.GEN_AI_REQUEST_STOP_SEQUENCES,
    "stop_sequences": A.GEN_AI_REQUEST_STOP_SEQUENCES,
    "frequency_penalty": A.GEN_AI_REQUEST_FREQUENCY_PENALTY,
    "presence_penalty": A.GEN_AI_REQUEST_PRESENCE_PENALTY,
    "seed": A.GEN_AI_REQUEST_SEED,
    "stream": A.GEN_AI_REQUEST_STREAM,
}


class Telemetry:
    """The span factory one instrumentor (or the decorators) uses.

    Args:
        tracer_provider: where spans go; ``None`` = the global provider.
        meter_provider: where the GenAI metrics go; ``None`` = the global provider.
        settings: content policy and budgets; ``None`` = environment defaults.
        framework: recorded as ``otel_agents.framework`` on every span
            (``langchain``, ``llama_index``, ``crewai``, ``pydantic_ai``, ``manual``).
        scope: the instrumentation scope name.
    """

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None, *,
                 settings: Settings | None = None, framework: str | None = None,
                 scope: str = "otel_agents"):
        self.settings = settings or Settings()
        self.framework = framework
        self.tracer = trace.get_tracer(scope, __version__, tracer_provider)
        self.metrics = GenAIMetrics(meter_provider, scope)

    def render_content(self, key: str, value: Any, *, as_json: bool | None = None, budget: int | None = None,
                       redacted: bool = False, encoded: str | None = None) -> tuple[str, str, bool]:
        """Encode, redact and truncate one content value.

        Args:
            key: the attribute the text is for (passed to the redaction hook).
            value: any value; strings stay text unless ``as_json``.
            budget: characters; ``None`` = the settings' budget.
            redacted: ``value`` is already JSON-able data that went through our redaction
                (each string cut to the budget plus the scan margin): skip that step.
            encoded: with ``redacted``, the compact JSON text of ``value`` if the caller has it.

        Returns ``(text, mime_type, truncated)``; ``text`` is at most the budget
        (characters) and, for ``application/json``, valid JSON.
        """
        if budget is None:
            budget = self.settings.content_budget()
        return pipeline.render(key, value, budget=budget, hook=self.settings.redact_hook, as_json=as_json,
                               redacted=redacted, encoded=encoded)

    def start_span(self, kind: Kind | str, name: str | None = None, *, parent: Any = None,
                   operation: str | None = None, workflow: bool = False, multi_step: bool = False,
                   attributes: Mapping[str, Any] | None = None, name_is_content: bool = False,
                   start_time: int | None = None, span_kind: SpanKind | None = None) -> SemanticSpan:
        """Open a semantic span (not made current; see :meth:`SemanticSpan.activate`).

        Args:
            kind: the semantic kind.
            name: the agent/tool/model/component name the span name is built from
                (low cardinality; see :func:`otel_agents.semconv.span_name`).
            parent: a :class:`SemanticSpan`, an OTel ``Context`` or ``Span``; ``None``
                = the current context.
            operation, workflow, multi_step: see :func:`otel_agents.semconv.kind_attributes`.
            attributes: extra non-content attributes for the span start (samplers see them).
            name_is_content: ``name`` may carry user content (a task description): with
                content off the span is named after its kind only.
            start_time: epoch nanoseconds, default now.
            span_kind: the OTel ``SpanKind`` when the semantic map's default does not fit
                (a tool call served by another process is ``SERVER``, per the OTel MCP conventions).

        Never raises: on an internal failure a non-recording span is returned.
        """
        try:
            kind = Kind(kind)
            if name_is_content and not self.settings.content_enabled():
                name = None
            if name is not None:
                name = pipeline.label(name if type(name) is str else str(name))  # a name can hold a key too
            naming = _naming if name is None or len(name) <= _CACHED_NAME_LENGTH else _naming.__wrapped__
            kattrs, sname = naming(kind, name, operation, workflow, multi_step)
            ctx, run_attrs, parent_span = _parent_context(parent)
            if not is_instrumentation_enabled():
                return SemanticSpan(kind, trace.INVALID_SPAN, self, sname, kattrs, run_attrs, parent_span)
            start_attrs: dict[str, Any] = dict(kattrs)
            if self.framework:
                start_attrs[A.OTEL_AGENTS_FRAMEWORK] = self.framework
            for k, v in run_attrs.items():  # session and user ids, tags: through the pipeline like any value
                ov = otel_value(v)
                if ov is not None:
                    start_attrs[k] = ov
            run_name = (parent_span.run_name if parent_span is not None else None) or name or sname
            if A.GEN_AI_OPERATION_NAME not in kattrs:
                # A plain chain (and a multi-step skill, a guardrail) has no GenAI operation; it is a step of
                # the GenAI workflow its run is, so it carries that workflow's name (OTel GenAI v1.41
                # registry: "the name of the first chain in LangChain, or of the crew in CrewAI"). This
                # is also what lets it through Langfuse's SDK span filter, which keeps gen_ai.* spans.
                start_attrs[A.GEN_AI_WORKFLOW_NAME] = run_name
            if attributes:
                for k, v in attributes.items():
                    ov = otel_value(v)
                    if ov is not None:
                        start_attrs[k] = ov
            only = _selection(self.settings)
            if only is not None:
                start_attrs = {k: v for k, v in start_attrs.items() if V.written(k, only)}
            span = self.tracer.start_span(sname, context=ctx, kind=span_kind or kind_spec(kind).span_kind,
                                          attributes=start_attrs, start_time=start_time)
            semantic = SemanticSpan(kind, span, self, sname, kattrs, run_attrs, parent_span)
            semantic.run_name = run_name
            _index(semantic)
            return semantic
        except Exception as exc:  # noqa: BLE001
            report_internal_error("telemetry.start_span", exc)
            return SemanticSpan(Kind.CHAIN, trace.INVALID_SPAN, self, "invalid", {}, {})

    def start_plain_span(self, name: str, *, span_kind: SpanKind = SpanKind.INTERNAL, parent: Any = None,
                         attributes: Mapping[str, Any] | None = None) -> SemanticSpan:
        """Open a span of no semantic kind (a protocol operation the semantic map leaves
        unclassified, such as MCP ``tools/list``): no kind attributes, not found by
        :func:`semantic_span_for`, so it never counts as a step. ``name`` must be low
        cardinality and carry no content. The returned object's ``kind`` is ``None``; its
        setters, error recording and ``end`` work as on a semantic span. Never raises.
        """
        try:
            ctx, run_attrs, parent_span = _parent_context(parent)
            if not is_instrumentation_enabled():
                return SemanticSpan(None, trace.INVALID_SPAN, self, name, {}, run_attrs, parent_span)  # type: ignore[arg-type]
            start_attrs: dict[str, Any] = {}
            if self.framework:
                start_attrs[A.OTEL_AGENTS_FRAMEWORK] = self.framework
            for k, v in (*run_attrs.items(), *(attributes or {}).items()):
                ov = otel_value(v)
                if ov is not None:
                    start_attrs[k] = ov
            name = pipeline.label(name)
            only = _selection(self.settings)
            if only is not None:
                start_attrs = {k: v for k, v in start_attrs.items() if V.written(k, only)}
            span = self.tracer.start_span(name, context=ctx, kind=span_kind, attributes=start_attrs)
            return SemanticSpan(None, span, self, name, {}, run_attrs, parent_span)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001
            report_internal_error("telemetry.start_plain_span", exc)
            return SemanticSpan(None, trace.INVALID_SPAN, self, "invalid", {}, {})  # type: ignore[arg-type]

    @contextmanager
    def span(self, kind: Kind | str, name: str | None = None, *,
             is_control_flow: Any = None, **kwargs: Any) -> Iterator[SemanticSpan]:
        """Open a span, make it current around the ``with`` body, end it afterwards.

        An exception from the body is recorded (or, when ``is_control_flow(exc)``
        is true, marked as control flow) and re-raised unchanged.
        """
        s = self.start_span(kind, name, **kwargs)
        try:
            with s.activate():
                yield s
        except BaseException as exc:
            flow = False
            if is_control_flow is not None:
                with guard("telemetry.span.is_control_flow"):
                    flow = bool(is_control_flow(exc))
            s.record_error(exc, control_flow=flow or not isinstance(exc, Exception))
            raise
        finally:
            s.end()


def _selection(settings: Settings) -> frozenset[str] | None:
    """The vocabularies to write, or ``None`` for all of them (nothing to filter)."""
    only = settings.selected_vocabularies()
    return None if only == V.ALL else only


@functools.lru_cache(maxsize=1024)  # names are low-cardinality by design; the bound covers the rest
def _naming(kind: Kind, name: str | None, operation: str | None, workflow: bool,
            multi_step: bool) -> tuple[Mapping[str, str], str]:
    """A span's kind attributes (shared: never mutated) and its name."""
    kattrs = kind_attributes(kind, operation=operation, workflow=workflow, multi_step=multi_step)
    sname = span_name(kind, name, operation=operation, workflow=workflow, multi_step=multi_step)
    return kattrs, encoding.utf8_safe(sname)


def _parent_context(parent: Any) -> tuple[otel_context.Context | None, Mapping[str, Any], SemanticSpan | None]:
    """The OTel context to start a child in, the run attributes it carries (its
    semantic parent's, then the current context's) and its semantic parent."""
    if isinstance(parent, SemanticSpan):
        ctx, semantic = trace.set_span_in_context(parent.span), parent
    elif isinstance(parent, otel_context.Context):
        ctx, semantic = parent, semantic_span_for(trace.get_current_span(parent))
    elif isinstance(parent, Span):
        ctx, semantic = trace.set_span_in_context(parent), semantic_span_for(parent)
    else:
        ctx, semantic = None, semantic_span_for(trace.get_current_span())
    current = current_run_attributes()
    if semantic is None or not semantic.run_attributes:
        return ctx, current, semantic
    if not current:
        return ctx, semantic.run_attributes, semantic
    run_attrs = dict(semantic.run_attributes)
    run_attrs.update(current)
    return ctx, run_attrs, semantic


# Open semantic spans by OTel span id. Weak values, and each entry is removed when
# its span ends, so the index holds only spans that are open and still referenced.
_OPEN: "weakref.WeakValueDictionary[int, SemanticSpan]" = weakref.WeakValueDictionary()


def _index(semantic: SemanticSpan) -> None:
    span_id = semantic.span.get_span_context().span_id
    if span_id:
        semantic._index_key = span_id
        _OPEN[span_id] = semantic


def semantic_span_for(span: Any) -> SemanticSpan | None:
    """The open :class:`SemanticSpan` behind an OTel span, or ``None``.

    Args:
        span: an OTel ``Span`` (e.g. ``trace.get_current_span()``). When it is
            not one of ours (an application span opened inside a tool), the
            semantic span that is its direct parent is returned, if the SDK span
            exposes its parent.

    Never raises. Cost: one or two dictionary look-ups.
    """
    try:
        found = _OPEN.get(span.get_span_context().span_id)
        if found is None:
            parent_ctx = getattr(span, "parent", None)
            if parent_ctx is not None:
                found = _OPEN.get(parent_ctx.span_id)
        return found
    except Exception as exc:  # noqa: BLE001
        report_internal_error("span.semantic_span_for", exc)
        return None
