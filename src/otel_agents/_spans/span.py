"""The semantic span: one open span of a kind, its state, plain attributes and end.

The span layer's span code, by concern: this module (state, parenting, plain attributes, the
vocabulary filter, ``end``); :mod:`.content` (inputs, outputs, messages, tools, retrieval), :mod:`.model`
(model identity, parameters, finish reasons, usage), :mod:`.outcome` (errors, control flow, status),
:mod:`.telemetry` (the factory, the only code that calls the OTel tracer), :mod:`.index` (open spans by
span id), :mod:`.usage` (token counts). Every name importable from here before the split still is.

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
from typing import Any, Mapping

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from ..semconv import Kind, attributes as A, kind_attributes, kind_spec, span_name, vocabularies as V
from . import encoding, pipeline, probes, sdk_write
from .finalisers import in_forked_child
from .activation import Activation
from .content import ContentSetters
from .guard import guard, report_internal_error
from .index import _OPEN, PARENTS, semantic_span_for
from .model import _MODEL_KINDS, ModelSetters
from .outcome import OutcomeSetters
from .pipeline import INT64_MAX, INT64_MIN, otel_value
from .sdk_write import SCALARS as _SCALARS, _Bounded, _SdkSpan
from .settings import DEFAULT_MAX_CONTENT_LENGTH
from .usage import Usage

logger = logging.getLogger("otel_agents")
_FROM_SETTINGS = object()  # SemanticSpan(only=...): read the vocabularies from the settings
# Attributes held before they go to the SDK: past the SDK's default count limit they go at once (bounded:
# a long-lived span that keeps setting new keys holds no more here than the SDK would keep).
_PENDING_MAX = 128
_CACHED_NAME_LENGTH = 256  # longer names (a prompt used as a name) are not kept alive by the naming cache


def naming(kind: Kind, name: str | None, operation: str | None = None, workflow: bool = False,
           multi_step: bool = False, only: frozenset[str] | None = None
           ) -> tuple[Mapping[str, str], Mapping[str, str], str, SpanKind]:
    """A span's kind attributes, those of them written for the vocabularies ``only`` (``None``: all; both
    shared, never mutated), its name (UTF-8-safe) and its kind's default OTel ``SpanKind``, for ``name``
    already a :func:`~.pipeline.label`; see :func:`~otel_agents.semconv.span_name`. Kept in a bounded cache
    (names are low-cardinality by design), a name longer than 256 characters aside."""
    if name is None or len(name) <= _CACHED_NAME_LENGTH:
        return _naming(kind, name, operation, workflow, multi_step, only)
    return _naming.__wrapped__(kind, name, operation, workflow, multi_step, only)


@functools.lru_cache(maxsize=1024)  # the bound covers names that are not low-cardinality after all
def _naming(kind: Kind, name: str | None, operation: str | None, workflow: bool, multi_step: bool,
            only: frozenset[str] | None) -> tuple[Mapping[str, str], Mapping[str, str], str, SpanKind]:
    kattrs = kind_attributes(kind, operation=operation, workflow=workflow, multi_step=multi_step)
    sname = span_name(kind, name, operation=operation, workflow=workflow, multi_step=multi_step)
    written = kattrs if only is None else {k: v for k, v in kattrs.items() if V.written(k, only)}
    return kattrs, written, encoding.utf8_safe(sname), kind_spec(kind).span_kind


class SemanticSpan(ContentSetters, ModelSetters, OutcomeSetters):
    """One open span of a :class:`~otel_agents.semconv.Kind`, with typed setters.

    Content setters (``set_input``, ``set_output``, ``set_messages``, tool
    arguments and results, retrieval documents) honour the content switch,
    redaction and the per-attribute budget. All methods are safe to call after
    :meth:`end` (they do nothing) and never raise.

    ``parent`` is the :class:`SemanticSpan` this one was opened under (directly,
    or through one non-semantic span such as an application span), or ``None``.

    Attributes set through the setters reach the OTel span in one ``set_attributes`` call when
    :meth:`end` runs (the SDK checks a mapping per call): until then the OTel span holds only its
    start attributes. Processors and exporters see them all, as they read ended spans.
    """

    __slots__ = ("kind", "span", "telemetry", "name", "run_attributes", "parent", "run_name", "_ended", "_start",
                 "_kind_attrs", "_error_type", "_usage", "_no_usage", "_metric_attrs", "_index_key", "_mute", "_chunks",
                 "_content", "_budget", "_status_ok", "_in_band", "_only", "_keep", "_media", "_pending", "_stored",
                 "_flat_input", "_flat_output", "_reasons", "_recorded", "_unanswered", "_attempt",
                 "__weakref__")

    def __init__(self, kind: Kind, span: Span, telemetry: "Telemetry", name: str,
                 kind_attrs: Mapping[str, str], run_attributes: Mapping[str, Any],
                 parent: "SemanticSpan | None" = None, only: Any = _FROM_SETTINGS,
                 policy: tuple[bool, int, bool, frozenset[str] | None, int] | None = None):
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
        # Attributes set while the span is open, handed to the SDK in one call when it ends: the SDK
        # validates a mapping per call (locks, checks), so one call per span instead of one per setter.
        self._pending: dict[str, Any] = {}
        # Whether every pending attribute is already in the form the SDK stores (sdk_write.stored: a non-empty str
        # key, a plain scalar or a tuple), so the flush need not check each again. Our setters write only such
        # attributes; a caller's key or value that is not one (see _unchecked) clears it until the next flush.
        self._stored = True
        # Where gen_ai.input.messages came from, where set_input writes it (see ContentSetters.set_input): None
        # (not written), True (built from a flattened value), False (from chat messages: never replaced by one).
        self._flat_input: bool | None = None
        self._flat_output: bool | None = None  # likewise for gen_ai.output.messages, where set_output writes it
        self._media: int | None = None  # the media budget: the start's policy, else read when first needed
        # The content policy is read once per span (not per attribute: each read is an environment lookup).
        self._content, self._budget, self._status_ok = False, DEFAULT_MAX_CONTENT_LENGTH, False
        # The vocabularies written: None = all of them (nothing to filter), else the selection.
        self._only: frozenset[str] | None = None
        if policy is not None and not self._mute:  # read by the factory (Settings.span_policy)
            self._content, self._budget, self._status_ok, self._only, self._media = policy
        elif not self._mute:
            try:  # unusable settings: the span records, without content (not `with guard`: every span runs this)
                settings = telemetry.settings
                budget = settings.content_budget()
                self._content, self._budget = settings.content_enabled(), budget
                self._status_ok = settings.mark_status_ok()
                self._only = settings.vocabulary_filter() if only is _FROM_SETTINGS else only
            except Exception as exc:  # noqa: BLE001
                report_internal_error("span.settings", exc)
        # ...and whether each key is written for it (None: every key), one dictionary look-up a key.
        self._keep: V.KeyFilter | None = None if self._only is None else V.key_filter(self._only)
        self._start = time.monotonic()
        self._error_type: str | None = None
        # The finish reasons written (normalised), for output messages written without theirs (set_messages).
        self._reasons: tuple[str, ...] | None = None
        self._in_band = False  # set_error was called: its error.type and status stand
        self._usage: Usage | None = None
        self._no_usage = False  # token counts refused (ModelSetters.refuse_usage)
        self._unanswered: BaseException | None = None  # a failed attempt pending (OutcomeSetters.record_failed_attempt)
        self._chunks: list[float] | None = None  # a streamed response's: see ModelSetters.chunk_received
        self._metric_attrs: dict[str, Any] = {}
        if kind in _MODEL_KINDS:  # not `kind is Kind.MODEL`: an Enum member read off its class costs more
            op = kind_attrs.get(A.GEN_AI_OPERATION_NAME)
            if op:
                self._metric_attrs[A.GEN_AI_OPERATION_NAME] = op

    # -- state -----------------------------------------------------------------
    @property
    def ended(self) -> bool:
        """Whether :meth:`end` has been called (in a forked child, also for a span open in the parent at the
        fork: it is the parent's to end)."""
        return bool(self._ended)

    @property
    def is_recording(self) -> bool:
        """Whether attributes set now will be exported."""
        return not self._ended and not self._mute

    def context(self, base: otel_context.Context | None = None) -> otel_context.Context:
        """An OTel ``Context`` with this span as the current span (to parent children)."""
        return trace.set_span_in_context(self.span, base)

    def activate(self) -> Activation:
        """``with span.activate() as s:`` makes this span current around the body (``s`` is this span) and
        detaches in the same context afterwards, also when the body raises; the span is not ended and the
        exception not recorded (see :class:`~.activation.Activation`)."""
        return Activation(self.span, self)

    def rename(self, name: str | None) -> None:
        """Rename the span after the component it turned out to be (a model span whose model is
        known only from the response): the same naming rule as at start (low cardinality)."""
        if self._ended or self._mute or name is None:
            return
        try:  # not `with guard(...)`: two calls fewer (a model span is renamed after its response's model)
            text = probes.text(name)  # the user's object: its `__len__` (a `not name`) may raise too
            if not text:
                return
            op = self._kind_attrs.get(A.GEN_AI_OPERATION_NAME)
            self.name = naming(self.kind, pipeline.label(text), op, op == "invoke_workflow")[2]
            self.span.update_name(self.name)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.rename", exc)

    # -- plain attributes ------------------------------------------------------
    def set_attribute(self, key: str, value: Any) -> None:
        """Set one non-content attribute; non-OTel-legal values are JSON-encoded; ``None`` is skipped."""
        if self._ended or self._mute:
            return
        if self._keep is not None and not self._keep[key]:
            return
        try:  # not `with guard(...)`: this runs for nearly every attribute of every span
            v = otel_value(value)
            if v is not None:
                if type(key) is not str or not key or type(v) not in _SCALARS:
                    v = self._unchecked(key, v)
                self._pending[key] = v
                if len(self._pending) > _PENDING_MAX:
                    self._flush()
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_attribute", exc)

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        """Set several non-content attributes (see :meth:`set_attribute`)."""
        if self._ended or self._mute:
            return
        try:
            pending = self._pending
            keep = self._keep
            labels = pipeline.LABELS
            # every key a non-empty str (checked in C, not key by key); else the caller's keys are the SDK's to refuse
            if not _STR_ONLY(map(type, attributes)) or "" in attributes:
                self._stored = False
            for k, v in attributes.items():
                if keep is not None and not keep[k]:
                    continue
                t = type(v)  # otel_value(v), with its two most common cases (a str, None) first
                if t is str:
                    labelled = labels.get(v)  # a label made before (pipeline.label), without a call
                    pending[k] = labelled if labelled is not None else pipeline.label(v)
                elif v is not None:
                    if not (t is float or t is bool or t is int and INT64_MIN <= v <= INT64_MAX):
                        v = otel_value(v)
                        if v is not None and type(v) not in _SCALARS:
                            v = self._unchecked(k, v)
                    if v is not None:
                        pending[k] = v
            if len(pending) > _PENDING_MAX:
                self._flush()
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.set_attributes", exc)

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        """An event on the span, now: ``name`` and non-content ``attributes``, each value as :meth:`set_attribute`
        writes it (OTel-legal: an integer past 64 bits, which OTLP cannot carry, as its decimal text; ``None``
        skipped)."""
        if self._ended or self._mute:
            return
        with guard("span.add_event"):
            attrs = {}
            for k, v in (attributes or {}).items():
                v = otel_value(v)
                if v is not None:
                    attrs[k] = v
            self.span.add_event(pipeline.label(name), attrs)

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

    def _unchecked(self, key: Any, value: Any) -> Any:
        """A value to hold under the caller's ``key`` that is not a plain ``str``/``bool``/``int``/``float``
        (an :func:`~.pipeline.otel_value`): a list as the tuple the SDK stores; anything else (a subclass's
        instance), or any value under a key that is not a non-empty ``str``, as it is, and the flush then leaves
        the pending attributes to the SDK's checks (:func:`.sdk_write.set_attributes`), as before."""
        value_stored = sdk_write.stored(value)
        if value_stored is None or type(key) is not str or not key:
            self._stored = False
            return value
        return value_stored

    def _writes(self, key: str) -> bool:
        """Whether attribute ``key`` belongs to a selected vocabulary (or to none: always written)."""
        return self._keep is None or self._keep[key]

    def _write(self, attrs: Mapping[str, Any]) -> None:
        """Record ready attributes (to the SDK at :meth:`end`), without those of vocabularies not selected."""
        keep = self._keep
        if keep is not None:
            attrs = {k: v for k, v in attrs.items() if keep[k]}
        self._emit(attrs)

    def _emit(self, attrs: Mapping[str, Any]) -> None:
        """Record ready, OTel-legal attributes; the SDK gets them all in one call at :meth:`end`."""
        if not self._ended and not self._mute:
            self._pending.update(attrs)
            if len(self._pending) > _PENDING_MAX:
                self._flush()

    def _flush(self) -> None:
        """Hand the attributes recorded so far to the SDK in one call, written directly when every value is one the
        SDK would store unchanged (:mod:`.sdk_write`): not checked again when all of them came from our setters,
        which write only those (``_stored``)."""
        pending = self._pending
        if pending:
            self._pending = {}
            if self._stored and self.telemetry.settings.redact_hook is None:  # a hook's text may be anything
                sdk_write.set_stored_attributes(self.span, pending)
            else:
                self._stored = True
                sdk_write.set_attributes(self.span, pending)

    def media_budget(self) -> int:
        """The media budget (bytes) of this span's settings, read once per span."""
        if self._media is None:
            self._media = self.telemetry.settings.media_budget()
        return self._media

    # -- identities ---------------------------------------------------------------
    def set_agent(self, name: str | None = None, *, id: str | None = None,
                  description: str | None = None) -> None:
        """Agent identity: ``gen_ai.agent.name``/``.id`` and OpenInference ``agent.name``;
        the description is content (an agent's goal or backstory may be)."""
        self.set_attributes({A.GEN_AI_AGENT_NAME: name, A.AGENT_NAME: name, A.GEN_AI_AGENT_ID: id})
        if description:
            self.set_content(A.GEN_AI_AGENT_DESCRIPTION, description)

    def end(self, *, error: BaseException | None = None, end_time: int | None = None) -> None:
        """End the span (idempotent). Kind attributes are set again, so a span that
        hit the SDK's attribute-count limit keeps them; model spans record the
        GenAI duration and token-usage metrics.

        ``error``: what ended the step; an ``Exception`` is recorded as an error, anything else (a
        cancellation, ``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``) as control flow: the step was
        stopped, it did not fail (as :meth:`Telemetry.span` and a wrapped stream record them).

        In a forked child, a span that was open in the parent at the fork is left to the parent (which ends and
        exports it once): ending it here does nothing, logged once at DEBUG."""
        if self._ended:
            if self._ended is PARENTS:
                _left_to_the_parent(self)
            return
        if error is not None:
            self.record_error(error, control_flow=not isinstance(error, Exception))
        if self._unanswered is not None:  # a failed attempt nothing answered: the call failed with it
            self._fail_attempt(self._unanswered)
        self._ended = True
        # record_error's last exception and the last failed attempt (read only while open): not kept, with their
        # tracebacks' frames, as long as whatever holds this span (a framework's run state, a stream wrapper) lives
        self._recorded = self._attempt = None
        # Three guarded steps, each written out as try/except rather than `with guard(...)`: every span runs them.
        span = self.span
        try:
            key = self._index_key
            if key is not None:
                found = _OPEN.pop(key, None)
                if found is not None:  # another live span's entry (an id collision): keep it
                    other = found()
                    if other is not None and other is not self:
                        _OPEN[key] = found
            if self._chunks is not None:
                self._write_first_chunk()
            self._flush()
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.end", exc)
        try:
            # over the SDK's limit: put the kind back (the SDK's own span's count read without its property)
            if (span._attributes.dropped if type(span) is _SdkSpan and type(span._attributes) is _Bounded
                    else getattr(span, "dropped_attributes", 1)):
                keep = self._keep
                span.set_attributes(self._kind_attrs if keep is None else
                                    {k: v for k, v in self._kind_attrs.items() if keep[k]})
            if self._status_ok and self._error_type is None:
                self._set_ok()
            if self.kind in _MODEL_KINDS and span is not trace.INVALID_SPAN:  # not when suppressed
                seconds = time.monotonic() - self._start
                if end_time is not None:  # ended at a given time, not now
                    seconds = max(0.0, seconds - (time.time_ns() - end_time) / 1e9)
                self.telemetry.metrics.record(self, seconds, self._usage, self._metric_attrs, self._error_type)
                chunks = self._chunks
                if chunks is not None:  # a streamed response (OTel GenAI: these two for streams only)
                    self.telemetry.metrics.record_chunks(chunks[0], chunks[1:], self._metric_attrs)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.end", exc)
        try:
            span.end(end_time=end_time)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("span.end", exc)


_STR_ONLY = frozenset((str,)).issuperset

_noted_parents = False  # _left_to_the_parent has logged in this process


def _left_to_the_parent(span: SemanticSpan) -> None:
    global _noted_parents
    if not _noted_parents:
        _noted_parents = True
        logger.debug("otel_agents: span %r was started in another process (this one was forked while it was open): "
                     "that process ends and exports it; ending it here does nothing", span.name)


def _forget_noted() -> None:
    global _noted_parents
    _noted_parents = False


in_forked_child(_forget_noted)  # each child logs its own first


def non_recording_span() -> SemanticSpan:
    """A semantic span that records nothing, over OTel's ``INVALID_SPAN``: every setter is a no-op and
    ``is_recording`` is ``False``. What :func:`otel_agents.manual.current_span` returns where no semantic span is
    open or nothing records (no SDK provider, ``OTEL_SDK_DISABLED=true``), as ``trace.get_current_span()`` returns
    ``INVALID_SPAN``: so a model function's documented ``current_span().set_usage(...)`` never breaks the program.
    A new one each call (no state shared between threads)."""
    return SemanticSpan(Kind.CHAIN, trace.INVALID_SPAN, None, "", {}, {})  # type: ignore[arg-type]  # mute: no telemetry read


# Telemetry, the factory, lives in its own module; importable from here as before.
from .telemetry import Telemetry  # noqa: E402

__all__ = ["SemanticSpan", "Telemetry", "Usage", "non_recording_span", "otel_value", "semantic_span_for"]
