"""The model setters of a semantic span: model identity and request parameters, finish reasons,
token usage (model and embedding spans only). A mixin of :class:`~.span.SemanticSpan`."""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Sequence

from ..semconv import Kind, attributes as A
from . import encoding, memo, pipeline
from .address import server_attributes
from .guard import report_internal_error
from .usage import INT64_MAX, Usage, token_count

if TYPE_CHECKING:
    from opentelemetry.trace import Span

_MODEL, _EMBEDDING = Kind.MODEL, Kind.EMBEDDING  # read off the Enum class once (several times a global each)
_MODEL_KINDS = (_MODEL, _EMBEDDING)
_INCOMPLETE = A.STREAM_INCOMPLETE

# Request parameters repeat request after request: their JSON is kept, keyed by (their JSON, budget).
# Bound: 64 entries of at most 4 KiB of JSON each (not content: no redaction hook applies to it).
_PARAMETERS: memo.Memo[str] = memo.Memo(64)
_PARAMETERS_KEY_BYTES = 4096

_USAGE_DETAILS = (  # the counts only some models report, each in both vocabularies
    (A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, A.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ, "cache_read_tokens"),
    (A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, A.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_WRITE, "cache_creation_tokens"),
    (A.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, A.LLM_TOKEN_COUNT_COMPLETION_DETAILS_REASONING, "reasoning_tokens"),
)
# Every attribute set_usage writes (what record_failed_attempt withdraws).
_USAGE_KEYS = (A.GEN_AI_USAGE_INPUT_TOKENS, A.LLM_TOKEN_COUNT_PROMPT, A.GEN_AI_USAGE_OUTPUT_TOKENS,
               A.LLM_TOKEN_COUNT_COMPLETION, A.LLM_TOKEN_COUNT_TOTAL) + tuple(k for d in _USAGE_DETAILS for k in d[:2])

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
_PARAMETER_ORDER = {src: i for i, src in enumerate(_PARAMETER_KEYS)}
# OTel GenAI v1.41's int request attributes; the others but the stop sequences and stream are doubles.
_INT_PARAMETERS = frozenset({A.GEN_AI_REQUEST_MAX_TOKENS, A.GEN_AI_REQUEST_SEED})


def request_parameter(key: str, value: Any) -> Any:
    """The value request attribute ``key`` (a ``gen_ai.request.*`` name of :data:`_PARAMETER_KEYS`) gets for the
    ``value`` a caller passed, of the attribute's type in OTel GenAI v1.41, or ``None`` (not one: nothing is
    written). A number is any ``numbers.Integral`` or ``numbers.Real`` (numpy's and an ``IntEnum`` too, written
    as Python's ``int``/``float``; a bool is none, nor is a ``Decimal``). An int attribute (``max_tokens``,
    ``seed``) gets an integral number within ``int64`` (``100.0`` and ``inf`` are none); a double
    (``temperature``, ``top_p``, ``top_k``, the penalties) any number: an int within ``int64`` as it is, else a
    float (NaN and the infinities included: an OTel double may be one, and every JSON writer of ours serialises it
    strictly; an int too large for a float is none); the stop sequences a string (a list of one) or a list or
    tuple of strings; ``stream`` a bool."""
    if isinstance(value, bool):
        return value if key == A.GEN_AI_REQUEST_STREAM else None
    if key == A.GEN_AI_REQUEST_STOP_SEQUENCES:
        if isinstance(value, str):
            return [value]
        return list(value) if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value) else None
    if key == A.GEN_AI_REQUEST_STREAM:
        return None
    if isinstance(value, numbers.Integral):
        number = int(value)
        if -INT64_MAX - 1 <= number <= INT64_MAX:
            return number
        if key in _INT_PARAMETERS:
            return None
        try:
            return float(number)
        except OverflowError:
            return None
    if isinstance(value, numbers.Real) and key not in _INT_PARAMETERS:
        return float(value)
    return None


# A streamed response's chunk times held until the span ends (when the metric attributes are complete: the
# response model comes with the last chunk); past this many, the gaps so far are recorded at once.
_CHUNKS_HELD = 4096


# An OpenAI-style response_format's type → gen_ai.output.type (OTel GenAI v1.41: "json for structured outputs
# with defined or undefined schema", "text for plain text output").
_FORMAT_TYPES = {"text": "text", "json_object": "json", "json_schema": "json"}


def output_type_of(response_format: Any) -> str | None:
    """``gen_ai.output.type`` of the OpenAI-style ``response_format`` a request asks for (the OpenAI API's, and
    what LangChain, CrewAI, Agno, AutoGen and smolagents pass on to it): a mapping's or object's ``type``
    (``text`` → ``text``; ``json_object``, ``json_schema`` → ``json``), a class (a pydantic model the answer
    must fit: a JSON schema) → ``json``; ``None`` for anything else (none asked: nothing to write)."""
    if response_format is None:
        return None
    if isinstance(response_format, type):
        return "json"
    kind = response_format.get("type") if isinstance(response_format, Mapping) else \
        getattr(response_format, "type", None)
    return _FORMAT_TYPES.get(kind) if isinstance(kind, str) else None


class ModelSetters:
    """Model setters (see :class:`~.span.SemanticSpan`)."""

    __slots__ = ()
    if TYPE_CHECKING:
        kind: Kind
        span: Span
        _ended: bool
        _mute: bool
        _budget: int
        _usage: Usage | None
        _no_usage: bool
        _unanswered: BaseException | None
        _error_type: str | None
        _metric_attrs: dict[str, Any]
        _start: float
        _chunks: list[float] | None
        _keep: Any
        _pending: dict[str, Any]
        telemetry: Any

        def _writes(self, key: str) -> bool: ...
        def _write(self, attrs: Mapping[str, Any]) -> None: ...
        def set_attributes(self, attributes: Mapping[str, Any]) -> None: ...

    def set_model(self, *, request_model: str | None = None, response_model: str | None = None,
                  provider: str | None = None, response_id: str | None = None,
                  parameters: Mapping[str, Any] | None = None) -> None:
        """Model identity and request parameters (model and embedding spans only).

        ``parameters`` keys may be ``temperature``, ``top_p``, ``top_k``,
        ``max_tokens``, ``stop``/``stop_sequences``, ``frequency_penalty``,
        ``presence_penalty``, ``seed``, ``stream`` (``gen_ai.request.stream`` only when true: OTel GenAI
        v1.41 sets it if and only if the request streams), each written when of its attribute's type
        (:func:`request_parameter`: ``max_tokens=inf`` is none); all of them also go, as JSON, to
        ``llm.invocation_parameters``, but for one of these names whose value is not of that type. Ignored on
        other kinds (Langfuse would turn any span with a model name into a generation).
        """
        if self.kind not in _MODEL_KINDS:
            return
        try:  # not `with guard(...)`: two calls fewer, on every span that sets this
            attrs: dict[str, Any] = {}
            if request_model:
                attrs[A.GEN_AI_REQUEST_MODEL] = request_model
                self._metric_attrs[A.GEN_AI_REQUEST_MODEL] = request_model
                key = A.EMBEDDING_MODEL_NAME if self.kind is _EMBEDDING else A.LLM_MODEL_NAME
                attrs[key] = response_model or request_model
            if response_model:
                attrs[A.GEN_AI_RESPONSE_MODEL] = response_model
                self._metric_attrs[A.GEN_AI_RESPONSE_MODEL] = response_model
                if self.kind is _MODEL:
                    attrs[A.LLM_MODEL_NAME] = response_model
            if provider:
                attrs[A.GEN_AI_PROVIDER_NAME] = provider
                attrs[A.LLM_PROVIDER] = provider
                self._metric_attrs[A.GEN_AI_PROVIDER_NAME] = provider
            attrs[A.GEN_AI_RESPONSE_ID] = response_id
            if parameters and not self._mute:
                params = {k: v for k, v in parameters.items() if v is not None}
                for src in sorted(params.keys() & _PARAMETER_KEYS.keys(), key=_PARAMETER_ORDER.__getitem__):
                    dst = _PARAMETER_KEYS[src]  # in the table's order, the later of two wins
                    value = request_parameter(dst, params[src])
                    if value is None:  # not of the attribute's type: in neither attribute
                        del params[src]
                        continue
                    if not isinstance(params[src], str):  # a number as Python's (numpy's: no repr), a list as one
                        params[src] = value
                    if dst != A.GEN_AI_REQUEST_STREAM or value is True:  # stream: set iff the request streams
                        attrs[dst] = value
                if self._writes(A.LLM_INVOCATION_PARAMETERS):
                    attrs[A.LLM_INVOCATION_PARAMETERS] = self._parameters_json(params)
            self.set_attributes(attrs)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_model", exc)

    def set_request_output(self, output_type: str | None = None, choice_count: Any = None) -> None:
        """What the request asked of the output (OTel GenAI v1.41 inference span): ``gen_ai.output.type`` (the
        output type it asked for: ``text``, ``json``, ``image``, ``speech``; ``None`` when it asked for none:
        nothing is written) and ``gen_ai.request.choice.count`` (``choice_count``: written only when an int
        other than 1, "if available, in the request, and !=1"). Model spans only."""
        if self.kind is not _MODEL:
            return
        self.set_attributes({A.GEN_AI_OUTPUT_TYPE: output_type if isinstance(output_type, str) else None,
                             A.GEN_AI_REQUEST_CHOICE_COUNT: choice_count if type(choice_count) is int and
                             choice_count != 1 else None})

    def set_server(self, url: Any) -> None:
        """``server.address`` and ``server.port`` (OTel GenAI v1.41: recommended on an inference span and on its
        metric points) of ``url``, the base URL the model's client connects to (a string or an ``httpx.URL``;
        no port in it: the scheme's). On the span and on its ``gen_ai.client.*`` metric points; nothing for a
        URL that gives no host (see :func:`~.address.server_attributes`). Model and embedding spans only.
        Where the URL is known when the span opens, pass :func:`~.address.server_attributes` to
        ``start_span`` instead (samplers see it; the metric points get it too)."""
        if self._ended or self.kind not in _MODEL_KINDS:
            return
        try:
            attrs = server_attributes(url, scheme_port=True)
            if attrs:
                self._metric_attrs.update(attrs)
                self.set_attributes(attrs)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_server", exc)

    def _parameters_json(self, params: dict[str, Any]) -> str:
        """``llm.invocation_parameters``: ``params`` redacted, each string cut to the budget, as JSON; from
        :data:`_PARAMETERS` when the same parameters were written with the same budget (every request of a
        run sends the same ones)."""
        content = memo.json_key(params, _PARAMETERS_KEY_BYTES)
        key = (content, self._budget)
        text = _PARAMETERS.get(key) if content is not None else None
        if text is None:
            text = encoding.dumps(pipeline.prepare(params, self._budget)[0])
            if content is not None:
                _PARAMETERS.put(key, text)
        return text

    def set_finish_reasons(self, reasons: Sequence[str], *, unless_set: bool = False) -> None:
        """``gen_ai.response.finish_reasons`` (not content), normalised to the OTel GenAI values
        (``tool_calls``/``tool_use`` → ``tool_call``, ``end_turn`` → ``stop``, ``max_tokens`` → ``length``…).
        Nothing once the span's stream was found cut (:meth:`~.outcome.OutcomeSetters.mark_incomplete`): a reason
        given after that is a framework's default for the one the stream never sent, not the model's. With
        ``unless_set``, nothing when reasons were written already (a provider client enriching a framework's span
        leaves the framework's own). Output messages written later without their reasons get these
        (:meth:`~.content.ContentSetters.set_messages`). A reason settles a failed attempt pending on the span
        (:meth:`~.outcome.OutcomeSetters.record_failed_attempt`): a response ended, so the call was answered, and
        the token counts held for the answer are written now."""
        if self._ended:
            return
        try:  # not `with guard(...)`: two calls fewer, on every span that sets this
            if self._unanswered is not None and any(reasons):
                self._unanswered = None
                if self._usage is not None and not self._mute:
                    self._write_usage(self._usage)
            if self._mute or self._error_type == _INCOMPLETE or (unless_set and self._reasons):
                return
            # Each a label (what set_attributes makes of a list of strings), written without its checks.
            reasons = [pipeline.finish_reason(r) for r in reasons if r]
            if reasons:
                self._reasons = tuple(reasons)
                # OpenInference has one reason per span (llm.finish_reason): the first choice's.
                self._write({A.GEN_AI_RESPONSE_FINISH_REASONS: tuple(reasons), A.LLM_FINISH_REASON: reasons[0]})
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_finish_reasons", exc)

    def set_usage(self, usage: Usage | None, *, prefer_complete: bool = True) -> None:
        """Token usage (model and embedding spans only): GenAI and OpenInference counts.

        With ``prefer_complete`` a later call only replaces an earlier one that
        had fewer of the input/output/total counts (LangChain's ``llm_output``
        may report only completion tokens while ``usage_metadata`` has all). Nothing once the counts were
        refused (:meth:`refuse_usage`). While a failed attempt is pending
        (:meth:`~.outcome.OutcomeSetters.record_failed_attempt`) the counts are held: written when a finish reason
        settles it, dropped when the span fails with it.
        """
        if self._ended or usage is None or self._no_usage or self.kind not in _MODEL_KINDS:
            return
        try:  # not `with guard(...)`: two calls fewer, on every span that sets this
            if prefer_complete and self._usage is not None and usage.completeness() < self._usage.completeness():
                return
            self._usage = usage  # kept for the token metric even when the span is sampled out
            if not self._mute and self._unanswered is None:
                self._write_usage(usage)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_usage", exc)

    def _write_usage(self, usage: Usage) -> None:
        """Write ``usage``'s counts, GenAI and OpenInference (see :meth:`set_usage`); its callers catch what it
        raises."""
        # Each count checked again (a field may have been reassigned since the Usage was made), written out
        # for the ints Usage made (one type and range check each; token_count for anything else).
        attrs: dict[str, int] = {}
        value = usage.input_tokens
        if value is not None and (type(value) is int and 0 <= value <= INT64_MAX or
                                  (value := token_count(value)) is not None):
            attrs[A.GEN_AI_USAGE_INPUT_TOKENS] = attrs[A.LLM_TOKEN_COUNT_PROMPT] = value
        value = usage.output_tokens
        if value is not None and (type(value) is int and 0 <= value <= INT64_MAX or
                                  (value := token_count(value)) is not None):
            attrs[A.GEN_AI_USAGE_OUTPUT_TOKENS] = attrs[A.LLM_TOKEN_COUNT_COMPLETION] = value
        value = usage.total_tokens
        if value is not None and (type(value) is int and 0 <= value <= INT64_MAX or
                                  (value := token_count(value)) is not None):
            attrs[A.LLM_TOKEN_COUNT_TOTAL] = value
        for genai_key, oi_key, field in _USAGE_DETAILS:
            value = getattr(usage, field)
            if value is not None and (type(value) is int and 0 <= value <= INT64_MAX or
                                      (value := token_count(value)) is not None):
                attrs[genai_key] = attrs[oi_key] = value
        self._write(attrs)

    def _withdraw_usage(self) -> None:
        """Forget the token counts given so far (a failed attempt's: see
        :meth:`~.outcome.OutcomeSetters.record_failed_attempt`): no token metric from them, their attributes not
        written (those already handed to the SDK, past the span's pending attributes, stay: OTel removes none)."""
        self._usage = None
        pending = self._pending
        for key in _USAGE_KEYS:
            pending.pop(key, None)

    def refuse_usage(self) -> None:
        """No token counts from now on: what a caller would write is not the provider's (LiteLLM counts a streamed
        response whose provider reported none, or cut it short, with its own tokenizer, and hands that on as its
        usage). Later :meth:`set_usage` calls write nothing and feed no token metric; counts written before stay."""
        self._no_usage = True

    # -- streamed responses --------------------------------------------------------
    def chunk_received(self, now: float | None = None) -> None:
        """A chunk of the streamed response this model span covers arrived (``now``: ``time.monotonic()`` when
        it did; default: read now). The first sets ``gen_ai.response.time_to_first_chunk`` (seconds since the
        span started, i.e. since the request was issued), ``gen_ai.request.stream`` (true: a response came
        in chunks) and Langfuse's ``langfuse.observation.completion_start_time``; every later one adds a
        ``gen_ai.client.operation.time_per_output_chunk`` point (the time since the chunk before). Written
        and recorded when the span ends (OTel GenAI v1.41 registry and metrics). Model spans only; a clock
        read and a list append per chunk."""
        if self._ended or self.kind is not _MODEL:
            return
        try:  # not `with guard(...)`: two calls fewer, on every chunk
            if now is None:
                now = time.monotonic()
            chunks = self._chunks
            if chunks is None:
                self._chunks = [now - self._start, now]
            else:
                chunks.append(now)
                if len(chunks) > _CHUNKS_HELD:
                    self._record_chunk_gaps()
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.chunk_received", exc)

    def set_time_to_first_chunk(self, seconds: float | None) -> None:
        """The time to the first chunk as the framework measured it (seconds from issuing the request to the
        first chunk of its streamed response, on a monotonic clock): written as :meth:`chunk_received`
        writes its own measurement, which it replaces. ``None`` (nothing streamed), a negative or non-finite
        value: nothing. Model spans only."""
        if self._ended or self.kind is not _MODEL or type(seconds) not in (float, int) or type(seconds) is bool:
            return
        if not (math.isfinite(seconds) and seconds >= 0):
            return
        if self._chunks is None:
            self._chunks = [float(seconds)]
        else:
            self._chunks[0] = float(seconds)

    def _record_chunk_gaps(self) -> None:
        """Record the gaps between the chunk times held so far and keep only the last (bounded bookkeeping)."""
        chunks = self._chunks
        if chunks is not None and len(chunks) > 2:
            self.telemetry.metrics.record_chunks(None, chunks[1:], self._metric_attrs)
            del chunks[1:-1]

    def _write_first_chunk(self) -> None:
        """At the end of a span that saw chunks: the time to the first chunk and what it implies (see
        :meth:`chunk_received`)."""
        chunks = self._chunks
        if chunks is None or self._mute:
            return
        first = chunks[0]
        attrs: dict[str, Any] = {A.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: first, A.GEN_AI_REQUEST_STREAM: True}
        start = getattr(self.span, "start_time", None)  # the SDK span's epoch nanoseconds
        if type(start) is int and self._writes(A.LANGFUSE_OBSERVATION_COMPLETION_START_TIME):
            # The span's start plus the time to the first chunk: Langfuse's time to first token (completion
            # start minus start) is then this span's gen_ai.response.time_to_first_chunk.
            at = datetime.fromtimestamp((start + round(first * 1e9)) / 1e9, timezone.utc)
            attrs[A.LANGFUSE_OBSERVATION_COMPLETION_START_TIME] = at.isoformat(timespec="microseconds").replace(
                "+00:00", "Z")
        keep = self._keep
        # Into the pending attributes directly: called from end(), once the span no longer takes setters.
        self._pending.update(attrs if keep is None else {k: v for k, v in attrs.items() if keep[k]})
