"""Reading the facts the envelope needs off one finished span.

The fold first reads each SDK ``ReadableSpan`` into a :class:`FoldSpan` (its
attributes as a plain ``dict``: the span's own, or a private copy when facts of
another vocabulary are added; plus the facts every part of the fold reads);
the readers here take that and read only what the span layer
(:mod:`otel_agents._spans.span`) writes: the kind attribute, OTel GenAI
``gen_ai.*`` attributes and OpenInference ``input.value``/``output.value`` with
their MIME types. Values from foreign or damaged spans (wrong types, invalid
JSON) are tolerated: a fact that cannot be read is ``None``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk import trace as _sdk_trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode

from ..._spans.redaction import redact_text
from ...semconv import attributes as A
from ...semconv.mapping import OP_EXECUTE_TOOL, OP_INVOKE_WORKFLOW
from . import _json
from ._redaction import RedactedAttributes, redact_status
from ._vocabularies import read_foreign, read_ours

_UNSET = object()


_NO_ATTRIBUTES: Any = {}
_new_fold_span = object.__new__


class FoldSpan:
    """The part of a finished span the fold reads, with its attributes as a plain ``dict``.

    The SDK's ``ReadableSpan.attributes`` builds a new read-only proxy on every
    access and reads each value through Python code, and the fold reads
    attributes a few dozen times per span: reading the plain ``dict`` underneath
    once makes folding several times faster. That ``dict`` is the span's own
    (a view, not a copy: an ended span's attributes never change) unless the
    vocabulary readers below have to add facts to it, which they do on a
    private copy. The facts every part of the fold needs are read
    once here too: ``trace_id`` and ``span_id`` (0 without a context), ``parent_id`` (``None`` without a parent),
    ``semantic_kind`` (:func:`kind`), ``cancelled`` (``otel_agents.control_flow`` is a
    cancellation), ``error`` (status ERROR, or cancelled) and
    ``duration_ms`` (end - start in ms, 3 decimals; 0 when a timestamp is
    missing) and ``span_kind`` (the OTel ``SpanKind``: which foreign spans are the
    run's side effects), ``protocol`` (``"mcp"`` for an MCP ``tools/call`` tool span,
    ``"a2a"`` for an A2A call's agent span, else ``None``), ``status_code`` (UNSET without a status),
    ``scope`` (the ``InstrumentationScope`` that made the span: the SDK's ``instrumentation_scope``, OTLP's
    ``scopeSpans[].scope``; ``None`` when the input has none: which instrumentation a foreign span is),
    ``resource`` (the ``Resource`` of the process that made it, or ``None``: which process a span is of).
    A span without our kind
    attribute is read by the
    vocabulary reader that fits it (:func:`._vocabularies.read_foreign`: OTel
    GenAI, OpenInference, OpenLLMetry), which sets ``semantic_kind`` and
    ``foreign`` (``True``: the kind comes from another vocabulary). Such a span,
    and any other without our kind attribute, was not written by our span layer,
    which redacts what it writes: its name and status description are redacted
    here, and its attributes (the private copy) are a
    :class:`~._redaction.RedactedAttributes`, which redacts each value as the fold
    first reads it (:mod:`._redaction`), so no path of the fold copies a secret of
    theirs into an envelope. Duck-types
    ``ReadableSpan``. The fold never changes ``attributes``.
    """

    __slots__ = ("name", "context", "parent", "attributes", "status", "start_time", "end_time", "trace_id",
                 "span_id", "parent_id", "semantic_kind", "foreign", "cancelled", "error", "duration_ms", "span_kind",
                 "protocol", "status_code", "scope", "resource", "tokens")

    def __init__(self, span: ReadableSpan):
        if type(span) in SDK_SPANS:  # the SDK's own classes: their fields, without a property call each
            raw = span._attributes
            if type(raw) is not BoundedAttributes or type(a := raw._dict) is not dict or not a:
                a = _attribute_view(raw)  # the SDK's own non-empty attributes are read above without this call
            self._read(span._name, span._context, span._parent, a, raw, span._status, span._start_time,
                       span._end_time, span._kind)
            self.scope = span._instrumentation_scope
            self.resource = span._resource
        else:
            raw = span.attributes
            self._read(span.name, span.context, span.parent, _attribute_view(raw), raw, span.status,
                       span.start_time, span.end_time, getattr(span, "kind", None))
            self.scope = getattr(span, "instrumentation_scope", None)
            self.resource = getattr(span, "resource", None)

    @classmethod
    def decoded(cls, name: str, context: SpanContext, parent: SpanContext | None, resource: Any,
                attributes: dict[str, Any], events: Any, links: Any, kind: SpanKind, instrumentation_info: Any,
                status: Status, start_time: int | None, end_time: int | None, scope: Any) -> FoldSpan:
        """A span as the OTLP/JSON reader decodes it (the arguments of ``ReadableSpan``, in its order:
        :func:`otel_agents.exporters.file.iter_otlp_json`'s ``make``), read without the ``ReadableSpan``:
        ``attributes`` is the reader's own new ``dict``, so the vocabulary readers add to it without a
        copy. The same :class:`FoldSpan` as ``FoldSpan(ReadableSpan(...))``; events and links are not read
        by the fold."""
        self = _new_fold_span(cls)
        self._read(name, context, parent, attributes or _NO_ATTRIBUTES, None, status, start_time, end_time, kind)
        self.scope = scope
        self.resource = resource
        return self

    def _read(self, name: Any, ctx: Any, parent: Any, a: dict[str, Any], raw: Any, status: Any, start: Any,
              end: Any, span_kind: Any) -> None:
        """The fields of a span: ``a`` its attributes as a plain ``dict`` (``raw``'s view, or the reader's own
        ``dict`` when ``raw`` is ``None``)."""
        self.name = name
        self.context = ctx
        self.parent = parent
        self.tokens: tuple[int | None, int | None, int | None] | None = None  # :func:`usage`, read once
        self.status = status
        self.start_time = start
        self.end_time = end
        if type(ctx) is SpanContext:  # a tuple: its fields by index, without the property calls
            self.trace_id: int = ctx[0]
            self.span_id: int = ctx[1]
        elif ctx is not None:
            self.trace_id = ctx.trace_id
            self.span_id = ctx.span_id
        else:
            self.trace_id = self.span_id = 0
        if parent is None:
            self.parent_id: int | None = None
        else:
            self.parent_id = parent[1] if type(parent) is SpanContext else parent.span_id
        kind = a.get(A.OTEL_AGENTS_SPAN_KIND) if a else None
        self.foreign = False
        self.protocol: str | None = None
        if isinstance(kind, str) and kind:
            if not (A.OPENINFERENCE_SPAN_KIND in a and A.LANGFUSE_OBSERVATION_TYPE in a and
                    (A.GEN_AI_OPERATION_NAME in a or A.GEN_AI_WORKFLOW_NAME in a)):  # fewer than three vocabularies
                a = _private(a, raw)
                read_ours(a, kind, self.name)
        else:  # not written by our span layer, which redacts what it writes: redacted here, once for every path
            if a:
                a = _private(a, raw)
                kind = read_foreign(a)
                self.foreign = kind is not None
                a = RedactedAttributes(a)  # each value redacted as the fold reads it: most never reach the envelope
            else:
                kind = None
            if type(self.name) is str:
                self.name = redact_text(self.name)
            self.status = status = redact_status(status)
        if kind == "tool":
            if a.get(A.MCP_METHOD_NAME) == "tools/call":
                self.protocol = "mcp"
        elif kind == "agent" and a.get(A.A2A_METHOD_NAME) in A2A_AGENT_METHODS:
            self.protocol = "a2a"
        self.semantic_kind: str | None = kind
        self.attributes = a
        # A step cancelled mid-way (the span layer records asyncio's CancelledError as control flow, not as an
        # error status) did not complete: the fold reports it failed, "cancelled", never ok.
        control = a.get(A.OTEL_AGENTS_CONTROL_FLOW) if a else None
        self.cancelled: bool = control is not None and _is_cancellation(control)
        code = status._status_code if type(status) is Status else status.status_code if status is not None \
            else StatusCode.UNSET
        self.status_code: StatusCode = code
        self.error: bool = code is _ERROR_CODE or self.cancelled
        if start and end:
            elapsed = end - start
            if elapsed <= 0:
                self.duration_ms: float = 0.0
            elif type(elapsed) is int and elapsed < _EXACT_NS and elapsed % 1000 != 500:
                self.duration_ms = (elapsed + 500) // 1000 / 1000  # = round(elapsed / 1e6, 3), a third of its cost
            else:
                self.duration_ms = round(elapsed / 1e6, 3)
        else:
            self.duration_ms = 0.0
        self.span_kind: SpanKind = span_kind or SpanKind.INTERNAL


# Below 2**52 ns (52 days) the float ``elapsed / 1e6`` is within 5e-7 ms of the exact quotient, so rounding
# either to 3 decimals gives the same microsecond unless the quotient ends in exactly 0.5 µs (left to
# ``round``); ``us / 1000`` is then the double nearest that decimal, as ``round`` returns.
_EXACT_NS = 1 << 52


# ``StatusCode.ERROR`` read once: an enum class's attributes are read through ``EnumType.__getattr__``'s slot.
_ERROR_CODE = StatusCode.ERROR


def _is_cancellation(control_flow: Any) -> bool:
    """Whether an ``otel_agents.control_flow`` value is a cancellation (asyncio's, or anyio/trio's ``Cancelled``;
    ``GeneratorExit``: the generator running the step was closed mid-way by a caller who left; ``interrupt``:
    the caller interrupted the run, as the Claude Agent SDK instrumentor records ``interrupt()``; or a
    framework's own word for a run it stopped: Agno's ``cancelled`` run status (``cancel_run``) and the
    ``RunCancelledException`` a cancelled member or step run raises into its team or workflow, the Claude
    Agent SDK's ``stopped``/``killed`` background task and ``stopped`` call still running at its run's result; ``KeyboardInterrupt``/``SystemExit``: the program
    stopped the run, Ctrl-C or ``sys.exit()`` in a tool)."""
    return isinstance(control_flow, str) and control_flow.rsplit(".", 1)[-1] in _CANCELLATIONS


_CANCELLATIONS = frozenset({"CancelledError", "Cancelled", "GeneratorExit", "interrupt", "cancelled", "stopped",
                            "killed", "RunCancelledException", "KeyboardInterrupt", "SystemExit"})


# The SDK's own span classes, read through their fields (``_context``, ``_attributes``...) where their
# properties would be a Python call each (``attributes`` a new read-only proxy). ``_Span`` is the class
# ``Tracer.start_span`` makes (what a processor's ``on_start`` gets; ``on_end`` gets a ``ReadableSpan``);
# subclasses of these are read through their properties, which they may override.
SDK_SPANS = (ReadableSpan, _sdk_trace.Span, getattr(_sdk_trace, "_Span", _sdk_trace.Span))


def _attribute_view(attributes: Any) -> dict[str, Any]:
    """The span's attributes as a plain ``dict``, read-only by convention: the SDK's
    ``BoundedAttributes``' inner dict itself, a plain ``dict`` as is; any other mapping copied."""
    if type(attributes) is dict:
        return attributes if attributes else _NO_ATTRIBUTES
    if attributes is None:
        return _NO_ATTRIBUTES
    if type(attributes) is BoundedAttributes:
        inner = getattr(attributes, "_dict", None)
        if type(inner) is dict:
            return inner if inner else _NO_ATTRIBUTES
    return _attribute_dict(attributes) or _NO_ATTRIBUTES


def _private(view: dict[str, Any], raw: Any) -> dict[str, Any]:
    """A copy of the attribute ``view`` the vocabulary readers may add to (``view`` itself when it is a
    copy already)."""
    return view.copy() if view is raw or type(raw) is BoundedAttributes else view


def _attribute_dict(attributes: Any) -> dict[str, Any]:
    """A plain ``dict`` copy of a span's attributes.

    Through ``copy()`` when that gives a ``dict``: on the SDK's read-only proxy it
    copies the ``BoundedAttributes``' inner dict in one C call, where ``dict(proxy)``
    would read every value through Python code.
    """
    try:
        data = attributes.copy()
    except (AttributeError, TypeError):  # a mapping without copy()
        data = None
    return data if type(data) is dict else dict(attributes)


def frozen(span: ReadableSpan | FoldSpan) -> FoldSpan:
    """``span`` as a :class:`FoldSpan` (itself when it already is one)."""
    return span if type(span) is FoldSpan else FoldSpan(span)


def attrs(span: ReadableSpan | FoldSpan) -> Any:
    """The span's attributes (an empty mapping when it has none)."""
    a = span.attributes
    return a if a is not None else _NO_ATTRIBUTES


def _kind_value(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def kind(span: ReadableSpan | FoldSpan) -> str | None:
    """Our semantic kind (``otel_agents.span.kind``), or ``None`` for a foreign span."""
    if type(span) is FoldSpan:
        return span.semantic_kind
    if type(span) in SDK_SPANS:  # the attributes themselves, not a read-only proxy made for this one read
        return _kind_value(_attribute_view(span._attributes).get(A.OTEL_AGENTS_SPAN_KIND))
    return _kind_value(attrs(span).get(A.OTEL_AGENTS_SPAN_KIND))


def operation(span: FoldSpan) -> str | None:
    """``gen_ai.operation.name``, or ``None``."""
    value = span.attributes.get(A.GEN_AI_OPERATION_NAME)
    return value if isinstance(value, str) else None


def is_tool_call(span: FoldSpan) -> bool:
    """A tool span, or a skill span used through a tool call (``execute_tool``)."""
    k = span.semantic_kind
    return k == "tool" or (k == "skill" and operation(span) == OP_EXECUTE_TOOL)


def is_mcp_tool_call(span: FoldSpan) -> bool:
    """A tool span of an MCP ``tools/call`` (client or server side: ``mcp.method.name``)."""
    return span.semantic_kind == "tool" and span.protocol == "mcp"


A2A_AGENT_METHODS = frozenset({"SendMessage", "SendStreamingMessage"})


def is_a2a_agent_call(span: FoldSpan) -> bool:
    """An agent span of an A2A ``SendMessage``/``SendStreamingMessage`` (client or server side:
    ``a2a.method.name``): the remote agent, named after its Agent Card."""
    return span.semantic_kind == "agent" and span.protocol == "a2a"


def is_workflow(span: FoldSpan) -> bool:
    """A chain that is a multi-agent orchestration (``invoke_workflow``)."""
    return span.semantic_kind == "chain" and operation(span) == OP_INVOKE_WORKFLOW


def span_id_hex(span_id: int) -> str:
    """A span id as 16 lower-case hex digits (the W3C / OTLP text form)."""
    return "%016x" % span_id  # printf style: twice as fast as format()


def trace_id_hex(trace_id: int) -> str:
    """A trace id as 32 lower-case hex digits."""
    return "%032x" % trace_id


def error_text(span: FoldSpan) -> str | None:
    """``"Type: message"`` (the span layer's status description), else ``error.type``; ``None`` when ok."""
    if not span.error:
        return None
    if span.cancelled and (span.status is None or span.status.status_code is not StatusCode.ERROR):
        word = span.attributes.get(A.OTEL_AGENTS_CONTROL_FLOW)
        return "cancelled" if word == "cancelled" else f"cancelled ({word})"
    return span.status.description or _str(span.attributes.get(A.ERROR_TYPE)) or "error"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def one_line(text: Any, limit: int) -> str:
    """``text`` on one line (CR, LF, tab → space), at most ``limit`` characters (cut ends with ``…``)."""
    if type(text) is str and len(text) <= limit and text.isprintable():  # the usual case: no CR, LF or tab
        return text
    s = str(text)
    if "\n" in s or "\r" in s or "\t" in s:
        s = s.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _strip_prefix(name: str, prefix: str) -> str:
    return name[len(prefix):] if name.startswith(prefix) and len(name) > len(prefix) else name


def display_name(span: FoldSpan) -> str:
    """The name a step is known by: agent / tool / skill / model / data source / workflow name.

    Falls back to the span name without its operation prefix; never empty.
    """
    a = span.attributes
    k = span.semantic_kind
    if k == "agent":
        name = a.get(A.GEN_AI_AGENT_NAME)  # the usual case first, without a call
        if isinstance(name, str) and name:
            return name
        name = _str(a.get(A.AGENT_NAME))
        return name or _strip_prefix(span.name, "invoke_agent ") or "agent"
    if k in ("tool", "skill"):
        name = a.get(A.GEN_AI_TOOL_NAME)
        if isinstance(name, str) and name:
            return name
        name = _str(a.get(A.TOOL_NAME)) or _str(a.get(A.OTEL_AGENTS_SKILL_NAME))
        name = name or _strip_prefix(_strip_prefix(span.name, "execute_tool "), "skill ")
        return name or k
    if k in ("model", "embedding"):
        return model_name(span) or span.name or k
    if k == "retriever":
        return _str(a.get(A.GEN_AI_DATA_SOURCE_ID)) or _strip_prefix(span.name, "retrieval ") or k
    if k == "chain":
        # Every chain carries its run's workflow name; only a workflow chain is named by it.
        if a.get(A.GEN_AI_OPERATION_NAME) == OP_INVOKE_WORKFLOW:
            return _str(a.get(A.GEN_AI_WORKFLOW_NAME)) or _strip_prefix(span.name, "invoke_workflow ") or k
        return span.name or k
    return span.name or "span"


def parent_agent_name(span: FoldSpan) -> str | None:
    """``otel_agents.agent.parent``: the name of the agent that delegated or handed off to this one."""
    return _str(span.attributes.get(A.OTEL_AGENTS_PARENT_AGENT))


def model_name(span: FoldSpan) -> str | None:
    """The response model, else the request model."""
    a = span.attributes
    name = a.get(A.GEN_AI_RESPONSE_MODEL)
    if isinstance(name, str) and name:
        return name
    return _str(a.get(A.GEN_AI_REQUEST_MODEL))


def provider(span: FoldSpan) -> str | None:
    return _str(span.attributes.get(A.GEN_AI_PROVIDER_NAME))


def finish_reasons(span: FoldSpan) -> list[str]:
    """``gen_ai.response.finish_reasons`` (a string array; a lone string is accepted). Any other shape
    (a number or bool from a foreign or broken producer) gives ``[]`` rather than failing the fold."""
    value = span.attributes.get(A.GEN_AI_RESPONSE_FINISH_REASONS)
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)):
        return []
    return [str(v) for v in value if v]


def token_count(span: FoldSpan, key: str) -> int | None:
    """A non-negative integer token count, or ``None`` when absent or malformed (``Infinity``/``NaN`` too)."""
    value = span.attributes.get(key)
    if type(value) is int:  # the usual case (a bool is not an int here)
        return value if value >= 0 else None
    if isinstance(value, bool) or value is None:
        return None
    try:
        count = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return count if count >= 0 else None


def usage(span: FoldSpan) -> tuple[int | None, int | None, int | None]:
    """``(input, output, total)`` tokens of a model span.

    The total is OpenInference ``llm.token_count.total`` when reported, else
    ``input + output`` when both are known.
    """
    tokens = span.tokens
    if tokens is None:  # read once a span (the attributes never change): the envelope, its cost and PeerViews ask
        inp = token_count(span, A.GEN_AI_USAGE_INPUT_TOKENS)
        out = token_count(span, A.GEN_AI_USAGE_OUTPUT_TOKENS)
        total = token_count(span, A.LLM_TOKEN_COUNT_TOTAL)
        if total is None and inp is not None and out is not None:
            total = inp + out
        tokens = span.tokens = (inp, out, total)
    return tokens


def flag(span: FoldSpan, key: str) -> bool:
    return span.attributes.get(key) is True


MAX_JSON_DEPTH = 100
"""Deepest JSON text the fold parses; deeper text is kept as text (bounded recursion downstream)."""
_JSON_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def _too_deep(text: str) -> bool:
    """Whether JSON ``text`` nests deeper than :data:`MAX_JSON_DEPTH` (brackets inside strings not counted)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:  # the usual case, at C speed
        return False
    depth = 0
    for match in _BRACKETS.finditer(_JSON_STRINGS.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return True
        else:
            depth -= 1
    return False


def parse_json(text: Any) -> Any:
    """``text`` parsed as JSON, or ``text`` itself when it is not a JSON string.

    Strict and bounded: ``NaN``/``Infinity`` and numbers that overflow to them,
    and text nested deeper than :data:`MAX_JSON_DEPTH`, are not parsed (the
    text is kept), so every value the fold writes is strict JSON and can be
    encoded without deep recursion.
    """
    if not isinstance(text, str):
        return text
    try:
        if len(text) > MAX_JSON_DEPTH and _too_deep(text):  # shorter text cannot nest deeper
            return text
        return _json.loads(text, _json.strict_decode)
    except (ValueError, RecursionError):
        return text


def _value(span: FoldSpan, value_key: str, mime_key: str) -> Any:
    a = span.attributes
    value = a.get(value_key, _UNSET)
    if value is _UNSET:
        return _UNSET
    if a.get(mime_key) == A.MIME_JSON:
        return parse_json(value)
    return value


def input_value(span: FoldSpan) -> Any:
    """``input.value`` (parsed when its MIME type is JSON), or ``_UNSET``."""
    return _value(span, A.INPUT_VALUE, A.INPUT_MIME_TYPE)


def output_value(span: FoldSpan) -> Any:
    """``output.value`` (parsed when its MIME type is JSON), or ``_UNSET``."""
    return _value(span, A.OUTPUT_VALUE, A.OUTPUT_MIME_TYPE)


def tool_arguments(span: FoldSpan) -> dict[str, Any]:
    """The tool call's arguments, always an object (ECP requires one).

    Read from ``gen_ai.tool.call.arguments`` (JSON), else ``input.value``. A JSON
    object is returned as is; any other value ``v`` becomes ``{"input": v}``;
    no arguments recorded (content off) gives ``{}``.
    """
    raw = span.attributes.get(A.GEN_AI_TOOL_CALL_ARGUMENTS, _UNSET)
    data = parse_json(raw) if raw is not _UNSET else input_value(span)
    if data is _UNSET:
        return {}
    return data if isinstance(data, dict) else {"input": plain(data)}


def tool_result(span: FoldSpan) -> Any:
    """The tool's result: ``output.value`` (parsed JSON when typed so), else
    ``gen_ai.tool.call.result`` as text; ``None`` when not recorded. Media in it
    (GenAI ``blob`` parts) are summarised (:func:`media_summary`)."""
    value = output_value(span)
    if value is _UNSET:
        value = span.attributes.get(A.GEN_AI_TOOL_CALL_RESULT)
    value = plain(value)
    if isinstance(value, list):
        return [media_summary(v) for v in value]
    return media_summary(value)


_MEDIA_TYPES = ("blob", "uri", "file")


def media_summary(value: Any) -> Any:
    """A GenAI media part (``{"type": "blob"|"uri"|"file", "modality", ...}``) as the envelope shows it:
    a ``blob`` keeps ``type``, ``mime_type``, ``modality``, ``size_bytes`` and ``sha256`` (never its
    base64 data, inline or not); ``uri``/``file`` parts and every other value are returned as they are."""
    if not (isinstance(value, dict) and value.get("type") in _MEDIA_TYPES and "modality" in value):
        return value
    if value["type"] != "blob":
        return value
    out = {"type": "blob", "mime_type": value.get("mime_type"), "modality": value.get("modality")}
    data = value.get("content")
    if isinstance(data, str) and data:
        try:
            raw = base64.b64decode(data, validate=True)
        except ValueError:
            raw = data.encode("utf-8", "surrogatepass")
        out["size_bytes"] = len(raw)
        out["sha256"] = hashlib.sha256(raw).hexdigest()
    else:  # summarised already by the span layer (over the media budget)
        out["size_bytes"] = value.get(A.OTEL_AGENTS_SIZE_BYTES)
        out["sha256"] = value.get(A.OTEL_AGENTS_SHA256)
    return out


def tool_call_id(span: FoldSpan) -> str | None:
    a = span.attributes
    call_id = a.get(A.GEN_AI_TOOL_CALL_ID)
    if isinstance(call_id, str) and call_id:
        return call_id
    return _str(a.get(A.TOOL_ID))


def plain(value: Any) -> Any:
    """Attribute values as JSON data (tuples → lists; ``NaN``/``Infinity`` → ``None``: strict JSON)."""
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):  # numpy.float64 too
        return None
    return value


# --- the run root's output as text -------------------------------------------

def output_text(span: FoldSpan) -> str | None:
    """The span's output as text, for ``public_output``.

    A string is returned as is; chat messages (OTel GenAI ``parts`` format, or
    ``{"role", "content"}`` / ``{"messages": [...]}`` shapes) give the last
    assistant text; any other structured value gives compact JSON. ``None``
    when no output was recorded.
    """
    value = output_value(span)
    if value is _UNSET or value is None:
        return None
    if isinstance(value, str):
        return value
    text = assistant_text(value)
    if text is not None:
        return text
    if _empty_reply(value):  # a stream left before its first token: no answer, not an empty message's JSON
        return None
    return json.dumps(plain(value), ensure_ascii=False, separators=(",", ":"), default=str)


_ASSISTANT_ROLES = ("assistant", "ai", "model")


def _empty_reply(value: Any) -> bool:
    """Whether ``value`` is one assistant message (OTel GenAI shape, alone or in a list) with nothing in it."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return isinstance(value, dict) and value.get("role") in _ASSISTANT_ROLES and not value.get("parts") \
        and not value.get("content") and not value.get("tool_calls")


def assistant_text(data: Any) -> str | None:
    """The text of the last assistant message in ``data``, if ``data`` is a list of chat messages."""
    return _last_text(data, _ASSISTANT_ROLES)


_USER_ROLES = ("user", "human")


def user_text(data: Any) -> str | None:
    """The text of the last user message in ``data`` (a run's input), as :func:`assistant_text` reads it."""
    return _last_text(data, _USER_ROLES)


def _last_text(data: Any, roles: tuple[str, ...]) -> str | None:
    """The text (:func:`message_text`) of the last message in ``data`` whose role (or LangChain ``type``) is one of
    ``roles`` and that has text: ``data`` a list of chat messages (OTel GenAI ``{"role", "parts"}``, ``{"role",
    "content"}``, LangChain's, whole or as :func:`_langchain_message` reads them), ``{"messages": [...]}`` or one
    message; ``None`` for anything else. The one reader of a message's text for every command (the envelope's
    ``public_output``, the replay's stored input)."""
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    elif isinstance(data, dict) and ("role" in data or "parts" in data):
        data = [data]
    if not isinstance(data, list) or not data or not all(isinstance(m, dict) for m in data):
        return None
    if not any("role" in m or "type" in m for m in data):
        return None
    data = [_langchain_message(m) for m in data]
    for message in reversed(data):
        role = message.get("role") or message.get("type")
        if role in roles:
            text = message_text(message)
            if text:
                return text
    return None


def _langchain_message(message: dict[str, Any]) -> dict[str, Any]:
    """A LangChain message as recorded whole by other instrumentations, as the plain message inside:
    ``{"type": "ai", "data": {...}}`` (``messages_to_dict``) or ``{"lc": 1, "type": "constructor",
    "kwargs": {...}}`` (``dumpd``); any other dict as it is."""
    inner = message.get("data") if "data" in message else message.get("kwargs") if message.get("lc") else None
    return inner if isinstance(inner, dict) and ("type" in inner or "role" in inner) else message


def message_text(message: dict[str, Any]) -> str | None:
    """The text parts of one message joined by newlines (GenAI ``parts`` or ``content``)."""
    texts: list[str] = []
    parts = message.get("parts")
    if isinstance(parts, list):
        texts += [p["content"] for p in parts
                  if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)]
    content = message.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text", block.get("content"))
                if isinstance(text, str):
                    texts.append(text)
    texts = [t for t in texts if t]
    return "\n".join(texts) if texts else None


def requested_calls(span: FoldSpan) -> list[str]:
    """The names of the tool calls a model span's output requested, in order: the ``tool_call`` parts
    of ``gen_ai.output.messages`` (OTel GenAI semconv v1.41), else OpenInference
    ``llm.output_messages.{i}.message.tool_calls.{j}.tool_call.function.name``. Empty when the model
    requested none, or when messages were not recorded (content capture off). (With their call ids:
    :func:`requested_call_parts`.)"""
    return [name for name, _ in requested_call_parts(span)]


def requested_call_parts(span: FoldSpan) -> list[tuple[str, str | None]]:
    """:func:`requested_calls` with each call's id: ``(name, call id or None)``, in order (OpenInference: the
    sibling ``...tool_call.id``)."""
    a = span.attributes
    raw = a.get(A.GEN_AI_OUTPUT_MESSAGES)
    if raw is not None:
        calls: list[tuple[str, str | None]] = []
        if type(raw) is str and "tool_call" not in raw and "\\u" not in raw:
            return calls  # no part can be a tool call (not even written with escapes): no need to parse
        data = parse_json(raw)
        for message in data if isinstance(data, list) else ():
            parts = message.get("parts") if isinstance(message, dict) else None
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, dict) and part.get("type") == "tool_call":
                    calls.append((_str(part.get("name")) or "?", _str(part.get("id"))))
        return calls
    prefix, suffix = A.LLM_OUTPUT_MESSAGES + ".", "." + A.TOOL_CALL_FUNCTION_NAME
    found: list[tuple[tuple[int, ...], str, str | None, bool]] = []
    for key in tuple(a):  # the keys, then the values of those that match (a foreign span's are redacted as read)
        if key.startswith(prefix) and key.endswith(suffix) and isinstance(value := a[key], str):
            numbers = tuple(int(n) for n in re.findall(r"\.(\d+)\.", key[len(prefix) - 1:]))
            call_id = _str(a.get(key[:-len(suffix)] + "." + A.TOOL_CALL_ID))
            listed = bool(numbers) and key.startswith(f"{prefix}{numbers[0]}.{A.MESSAGE_TOOL_CALLS}.")
            found.append((numbers, value or "?", call_id, listed))
    # A message's calls are its message.tool_calls; OpenInference's anthropic instrumentation writes each again as
    # a part of message.contents (…contents.{j}.tool_call.*): read there only for a message without that list.
    with_list = {f[0][0] for f in found if f[3]}
    found = [f for f in found if f[3] or not f[0] or f[0][0] not in with_list]
    return [(name, call_id) for _, name, call_id, _ in sorted(found, key=lambda f: f[0])]


def model_answer(span: FoldSpan) -> str | None:
    """The assistant text of a model span's output: the text parts of ``gen_ai.output.messages``,
    else OpenInference ``llm.output_messages.{i}.message.content``, or the text parts
    ``llm.output_messages.{i}.message.contents.{j}.message_content.text`` joined by newlines (how
    OpenInference writes a message of several parts: the Responses API's) — the last assistant
    message's; ``None`` when not recorded."""
    a = span.attributes
    raw = a.get(A.GEN_AI_OUTPUT_MESSAGES)
    if raw is not None:
        return assistant_text(parse_json(raw))
    prefix = A.LLM_OUTPUT_MESSAGES + "."
    content = "." + A.MESSAGE_CONTENT
    part_text = "." + A.MESSAGE_CONTENT_TEXT
    found: dict[int, list[tuple[int, str]]] = {}  # message index → (part index, text); a whole content is part -1
    for key in tuple(a):  # the keys, then the values of those that match (a foreign span's are redacted as read)
        if not key.startswith(prefix) or not (key.endswith(content) or key.endswith(part_text)):
            continue
        value = a[key]
        if not isinstance(value, str) or not value:
            continue
        index, _, rest = key[len(prefix):].partition(".")
        if not index.isdigit() or a.get(f"{prefix}{index}.{A.MESSAGE_ROLE}", "assistant") not in _ASSISTANT_ROLES:
            continue
        if rest == A.MESSAGE_CONTENT:
            part = -1
        else:  # message.contents.{j}.message_content.text, a text part (its type "text", or none given)
            head = f"{A.MESSAGE_CONTENTS}."
            j = rest[len(head):-len(part_text)] if rest.startswith(head) else ""
            if not j.isdigit() or a.get(f"{prefix}{index}.{head}{j}.{A.MESSAGE_CONTENT_TYPE}", "text") != "text":
                continue
            part = int(j)
        found.setdefault(int(index), []).append((part, value))
    if not found:
        return None
    return "\n".join(text for _, text in sorted(found[max(found)]))


def requested_arguments(span: FoldSpan) -> dict[str, Any]:
    """The arguments of the tool calls a model span's output requested, by call id: the ``tool_call``
    parts of ``gen_ai.output.messages`` (``id``, ``arguments``), else OpenInference
    ``llm.output_messages.{i}.message.tool_calls.{j}.tool_call.id`` / ``.function.arguments`` (JSON
    text, parsed). Calls without an id are left out."""
    a = span.attributes
    found: dict[str, Any] = {}
    raw = a.get(A.GEN_AI_OUTPUT_MESSAGES)
    if raw is not None:
        data = parse_json(raw)
        for message in data if isinstance(data, list) else ():
            parts = message.get("parts") if isinstance(message, dict) else None
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, dict) and part.get("type") == "tool_call" and _str(part.get("id")):
                    args = part.get("arguments")
                    found[part["id"]] = parse_json(args) if isinstance(args, str) else args
        return found
    prefix, id_suffix = A.LLM_OUTPUT_MESSAGES + ".", "." + A.TOOL_CALL_ID
    for key in tuple(a):  # the keys, then the values of those that match (a foreign span's are redacted as read)
        if key.startswith(prefix) and key.endswith(id_suffix) and _str(value := a[key]):
            args = a.get(key[:-len(id_suffix)] + "." + A.TOOL_CALL_FUNCTION_ARGUMENTS)
            found[value] = parse_json(args) if isinstance(args, str) else args
    return found


def requested_calls_message(span: FoldSpan) -> list[dict[str, Any]] | None:
    """The tool calls an OpenInference model span's output requested
    (``llm.output_messages.{i}.message.tool_calls.{j}.tool_call.*``) as OTel GenAI output messages (semconv
    v1.41): one assistant message of ``tool_call`` parts (``id``, ``name``, ``arguments`` when recorded), with the
    span's one finish reason when it gives one; ``None`` when it requested none or carries
    ``gen_ai.output.messages`` (read as they are)."""
    if A.GEN_AI_OUTPUT_MESSAGES in span.attributes:
        return None
    calls = requested_call_parts(span)
    if not calls:
        return None
    arguments = requested_arguments(span)
    parts = [{"type": "tool_call", "id": call_id, "name": name,
              **({"arguments": plain(arguments[call_id])} if call_id in arguments else {})} for name, call_id in calls]
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    reasons = finish_reasons(span)
    if len(reasons) == 1:
        message["finish_reason"] = reasons[0]
    return [message]


def reasoning_texts(span: FoldSpan) -> list[str]:
    """Reasoning parts (``{"type": "reasoning", "content": ...}``) of ``gen_ai.output.messages``."""
    data = parse_json(span.attributes.get(A.GEN_AI_OUTPUT_MESSAGES))
    out: list[str] = []
    if isinstance(data, list):
        for message in data:
            parts = message.get("parts") if isinstance(message, dict) else None
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, dict) and part.get("type") == "reasoning" and isinstance(part.get("content"), str):
                    out.append(part["content"])
    return out
