"""The span factory: :class:`Telemetry` opens semantic spans (and plain ones), with their parent, run
attributes, kind attributes and name; the only code that calls the OTel tracer."""

from __future__ import annotations

import time
from typing import Any, ContextManager, Mapping

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY as _SUPPRESS_KEY
from opentelemetry.instrumentation.utils import _SUPPRESS_INSTRUMENTATION_KEY_PLAIN as _SUPPRESS_KEY_PLAIN
from opentelemetry.trace import Span, SpanKind
from opentelemetry.trace.propagation import _SPAN_KEY

from .. import __version__
from ..semconv import Kind, attributes as A, vocabularies as V
from ..semconv.mapping import OP_INVOKE_WORKFLOW
from . import pipeline, probes, sdk_write
from .activation import Activation
from .guard import guard, report_internal_error
from .index import _index, semantic_span_for
from .metrics import GenAIMetrics
from .model import _MODEL_KINDS
from .pipeline import otel_value
from .run_context import current_run_attributes
from .sdk_write import _SdkSpan
from .settings import Settings
from .span import SemanticSpan, naming


def check_providers(tracer_provider: Any, meter_provider: Any) -> None:
    """Refuse what is not a provider before anything is instrumented with it.

    Raises:
        TypeError: ``tracer_provider`` (or ``meter_provider``) is neither ``None`` nor an object with
            ``get_tracer()`` (``get_meter()``); a class (``TracerProvider`` without ``()``) is refused too. The
            OTel API would raise an ``AttributeError`` from deep inside, after some settings changed.
    """
    for name, value, method in (("tracer_provider", tracer_provider, "get_tracer"),
                                ("meter_provider", meter_provider, "get_meter")):
        if value is not None and (isinstance(value, type) or not callable(getattr(value, method, None))):
            raise TypeError(f"{name} must be None or a provider instance (with {method}()), not {value!r}")


class Telemetry:
    """The span factory one instrumentor (or the decorators) uses.

    Args:
        tracer_provider: where spans go; ``None`` = the global provider.
        meter_provider: where the GenAI metrics go; ``None`` = the global provider.
        settings: content policy and budgets; ``None`` = environment defaults.
        framework: recorded as ``otel_agents.framework`` on every span
            (``langchain``, ``llama_index``, ``crewai``, ``pydantic_ai``, ``manual``).
        scope: the instrumentation scope name.

    Raises:
        TypeError: a provider that is not one (:func:`check_providers`).
    """

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None, *,
                 settings: Settings | None = None, framework: str | None = None,
                 scope: str = "otel_agents"):
        check_providers(tracer_provider, meter_provider)
        self.settings = settings or Settings()
        self.framework = framework
        self.tracer = trace.get_tracer(scope, __version__, tracer_provider)
        self._start_write = sdk_write.StartWrite()  # whether start attributes may skip the SDK's checks
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
            if type(kind) is not Kind:
                kind = Kind(kind)
            try:  # self._policy(), written out (a call fewer: every span runs this)
                policy = self.settings.span_policy()
            except Exception:  # noqa: BLE001 - unusable settings: the span reads them itself, and records the failure
                policy = None
            if name_is_content and not (policy[0] if policy is not None else self.settings.content_enabled()):
                name = None
            labels = pipeline.LABELS
            if name is not None:
                # a name can hold a key too; a str subclass is named by its value, as attributes record it (a label
                # made before, an agent's or a model's name, without a call)
                name = labels.get(name) or pipeline.label(name) if type(name) is str else \
                    pipeline.label(probes.text(name))
            only = policy[3] if policy is not None else self.settings.vocabulary_filter()
            kattrs, start_kattrs, sname, default_span_kind = naming(kind, name, operation, workflow, multi_step, only)
            current = otel_context.get_current()
            ctx, run_attrs, parent_span = _parent_context(parent, current)
            if current.get(_SUPPRESS_KEY) or current.get(_SUPPRESS_KEY_PLAIN):  # _suppressed(current), written out
                return SemanticSpan(kind, trace.INVALID_SPAN, self, sname, kattrs, run_attrs, parent_span)
            # Only the attributes of the vocabularies written (all of them: keep is None) go in, in their order.
            keep = None if only is None else V.key_filter(only)
            start_attrs: dict[str, Any] = dict(start_kattrs)
            if self.framework:
                start_attrs[A.OTEL_AGENTS_FRAMEWORK] = self.framework
            for k, v in run_attrs.items():  # session and user ids, tags: through the pipeline like any value
                if keep is None or keep[k]:
                    # otel_value(v), a label made before (an id: every span of the run carries it) without a call
                    ov = (labels.get(v) if type(v) is str else None) or otel_value(v)
                    if ov is not None:
                        start_attrs[k] = ov
            run_name = (parent_span.run_name if parent_span is not None else None) or name or sname
            op = kattrs.get(A.GEN_AI_OPERATION_NAME)
            if op is None:
                if keep is None or keep[A.GEN_AI_WORKFLOW_NAME]:
                    # A plain chain (and a multi-step skill, a guardrail) has no GenAI operation; it is a step of
                    # the GenAI workflow its run is, so it carries that workflow's name (OTel GenAI v1.41
                    # registry: "the name of the first chain in LangChain, or of the crew in CrewAI"). This
                    # is also what lets it through Langfuse's SDK span filter, which keeps gen_ai.* spans.
                    start_attrs[A.GEN_AI_WORKFLOW_NAME] = run_name
            elif op == OP_INVOKE_WORKFLOW and name and (keep is None or keep[A.GEN_AI_WORKFLOW_NAME]):
                # OTel GenAI v1.41 span.gen_ai.invoke_workflow.internal: the workflow is named by
                # gen_ai.workflow.name (the span is "invoke_workflow {gen_ai.workflow.name}"), not gen_ai.agent.*.
                start_attrs[A.GEN_AI_WORKFLOW_NAME] = name
            if attributes:
                for k, v in attributes.items():
                    if keep is None or keep[k]:
                        ov = otel_value(v)
                        if ov is not None:
                            start_attrs[k] = ov
            span = self._open(sname, ctx, span_kind or default_span_kind, start_attrs, start_time)
            semantic = SemanticSpan(kind, span, self, sname, kattrs, run_attrs, parent_span, only=only, policy=policy)
            if attributes and kind in _MODEL_KINDS and attributes.get(A.SERVER_ADDRESS) is not None:
                # the server a model call went to is also its metric points' (OTel GenAI v1.41 metric_attributes)
                semantic._metric_attrs.update({k: attributes[k] for k in _SERVER_KEYS if attributes.get(k) is not None})
            if start_time is not None:  # a step that began before its span opened: its duration and time to
                # first chunk count from then (the monotonic start moved back by how long ago that was)
                semantic._start -= max(0.0, (time.time_ns() - start_time) / 1e9)
            semantic.run_name = run_name
            _index(semantic)
            return semantic
        except Exception as exc:  # noqa: BLE001
            report_internal_error("telemetry.start_span", exc)
            return SemanticSpan(Kind.CHAIN, trace.INVALID_SPAN, self, "invalid", {}, {})

    def _open(self, name: str, ctx: Any, span_kind: SpanKind, attributes: dict[str, Any],
              start_time: int | None) -> Span:
        """The OTel span, started by the tracer with its start ``attributes`` (OTel-legal values), or, when nothing
        that sees the span start reads them (:class:`~.sdk_write.StartWrite`), written right after it started
        without the SDK's checking each again: the span ends up the same either way."""
        tracer = self.tracer
        if self._start_write(tracer):
            span = tracer.start_span(name, context=ctx, kind=span_kind, start_time=start_time)
            sdk_write.set_start_attributes(span, attributes)
            return span
        return tracer.start_span(name, context=ctx, kind=span_kind, attributes=attributes, start_time=start_time)

    def _policy(self) -> tuple[bool, int, bool, frozenset[str] | None, int] | None:
        """The settings a span keeps, read once as it starts (:meth:`Settings.span_policy`); ``None`` when they
        are unusable: the span then reads them itself, and records the failure."""
        try:
            return self.settings.span_policy()
        except Exception:  # noqa: BLE001
            return None

    def start_plain_span(self, name: str, *, span_kind: SpanKind = SpanKind.INTERNAL, parent: Any = None,
                         attributes: Mapping[str, Any] | None = None) -> SemanticSpan:
        """Open a span of no semantic kind (a protocol operation the semantic map leaves
        unclassified, such as MCP ``tools/list``): no kind attributes, not found by
        :func:`semantic_span_for`, so it never counts as a step. ``name`` must be low
        cardinality and carry no content. The returned object's ``kind`` is ``None``; its
        setters, error recording and ``end`` work as on a semantic span. Never raises.
        """
        try:
            current = otel_context.get_current()
            ctx, run_attrs, parent_span = _parent_context(parent, current)
            if _suppressed(current):
                return SemanticSpan(None, trace.INVALID_SPAN, self, name, {}, run_attrs, parent_span)  # type: ignore[arg-type]
            policy = self._policy()
            only = policy[3] if policy is not None else self.settings.vocabulary_filter()
            keep = None if only is None else V.key_filter(only)
            start_attrs: dict[str, Any] = {}
            if self.framework and (keep is None or keep[A.OTEL_AGENTS_FRAMEWORK]):
                start_attrs[A.OTEL_AGENTS_FRAMEWORK] = self.framework
            for k, v in (*run_attrs.items(), *(attributes or {}).items()):
                if keep is None or keep[k]:
                    ov = otel_value(v)
                    if ov is not None:
                        start_attrs[k] = ov
            name = pipeline.label(name)
            span = self._open(name, ctx, span_kind, start_attrs, None)
            return SemanticSpan(None, span, self, name, {}, run_attrs, parent_span, only=only,  # type: ignore[arg-type]
                                policy=policy)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("telemetry.start_plain_span", exc)
            return SemanticSpan(None, trace.INVALID_SPAN, self, "invalid", {}, {})  # type: ignore[arg-type]

    def refused_tool_call(self, name: str | None, reason: str, *, parent: Any = None, call_id: str | None = None,
                          arguments: Any = None, result: Any = None) -> None:
        """Record a tool call the framework refused without running the tool, where it refused it: a zero-length
        ``tool`` span under ``parent`` (as :meth:`start_span`), ended at once, with the call's identity and
        ``arguments`` (content), ``result`` (content: what the framework answered the model instead) and
        :meth:`SemanticSpan.set_denied` (``reason``, the ``error.type``; ``result`` the message). Never raises."""
        now = time.time_ns()
        span = self.start_span(Kind.TOOL, name, parent=parent, start_time=now)
        with guard("telemetry.refused_tool_call"):
            span.set_tool(name, call_id=call_id, arguments=arguments)
            span.set_tool_result(result)
            span.set_denied(reason, str(result or "") or None)
        span.end(end_time=now)

    def span(self, kind: Kind | str, name: str | None = None, *,
             is_control_flow: Any = None, **kwargs: Any) -> ContextManager[SemanticSpan]:
        """Open a span, make it current around the ``with`` body, end it afterwards.

        An exception from the body is recorded (or, when ``is_control_flow(exc)``
        is true, marked as control flow) and re-raised unchanged. The span opens
        when the ``with`` block is entered (``start_span``'s arguments are ``kwargs``).
        """
        return _SpanScope(self, kind, name, is_control_flow, kwargs)


class _SpanScope(Activation):
    """:meth:`Telemetry.span`'s context manager: an :class:`~.activation.Activation` that opens its span
    when entered and, on the way out, detaches, then records the body's exception (if any) and ends the span.
    A class rather than a ``@contextmanager`` generator, as the manual decorators open one per call."""

    __slots__ = ("telemetry", "kind", "name", "is_control_flow", "kwargs", "kept")

    def __init__(self, telemetry: Telemetry, kind: Kind | str, name: str | None, is_control_flow: Any,
                 kwargs: dict[str, Any]):
        self.telemetry, self.kind, self.name = telemetry, kind, name
        self.is_control_flow, self.kwargs = is_control_flow, kwargs
        self.context = None
        self.kept = False

    def keep_open(self) -> None:
        """At the way out, detach only: the span is neither ended nor given an error; whoever called this ends it
        (a coroutine the body returned, :func:`~.streams.awaited`)."""
        self.kept = True

    def __enter__(self) -> SemanticSpan:
        s = self.entered = self.telemetry.start_span(self.kind, self.name, **self.kwargs)
        self.span = s.span
        return _activate(self)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        s = self.entered
        if self.kept:
            return _deactivate(self, exc_type, exc, tb)
        try:
            _deactivate(self, exc_type, exc, tb)  # in the context it attached in, before the error is recorded
            if exc_type is not None:
                if exc is None:
                    exc = exc_type()
                flow = False
                if self.is_control_flow is not None:
                    with guard("telemetry.span.is_control_flow"):
                        flow = bool(self.is_control_flow(exc))
                s.record_error(exc, control_flow=flow or not isinstance(exc, Exception))
        finally:
            s.end()
        return False  # the body's exception, if any, goes on unchanged


# Activation's own enter and exit, for _SpanScope's (a module global is cheaper to reach than a class attribute).
_activate, _deactivate = Activation.__enter__, Activation.__exit__


def instrumentation_enabled() -> bool:
    """What ``opentelemetry.instrumentation.utils.is_instrumentation_enabled()`` answers (neither suppression key
    set in the current context), reading the current context once rather than once per key: an instrumentor's
    wrapper asks it on every call it wraps."""
    return not _suppressed(otel_context.get_current())


def _suppressed(current: otel_context.Context) -> bool:
    """``not is_instrumentation_enabled()`` (opentelemetry-instrumentation's test: either suppression key set
    in the current context) on the context the caller has already read, rather than two reads of it."""
    return bool(current.get(_SUPPRESS_KEY) or current.get(_SUPPRESS_KEY_PLAIN))


def _parent_context(parent: Any, current: otel_context.Context) -> tuple[otel_context.Context | None,
                                                                         Mapping[str, Any], SemanticSpan | None]:
    """The OTel context to start a child in, the run attributes it carries (its
    semantic parent's, then the current context's) and its semantic parent; ``current`` is the current context.
    With no parent given the context is ``current`` itself, not ``None``: the SDK's ``Tracer.start_span`` and its
    ``ParentBased`` sampler read the parent from the context they are given, and read the current one (two calls
    each, three times a span) only for ``None``; the parent they find is the same."""
    if parent is None or not isinstance(parent, _PARENT_TYPES):  # none given: the current span's
        # trace.get_current_span(current), read here (three calls fewer for the SDK's span); no current span (a
        # root): none of ours, no look-up
        span = current.get(_SPAN_KEY)
        ctx, semantic = current, (semantic_span_for(span) if span is not None and span is not trace.INVALID_SPAN and
                                  (type(span) is _SdkSpan or isinstance(span, Span)) else None)
    elif isinstance(parent, SemanticSpan):
        ctx, semantic = _in_context(parent.span, current), parent
    elif isinstance(parent, otel_context.Context):
        ctx, semantic = parent, semantic_span_for(trace.get_current_span(parent))
    else:  # an OTel Span
        ctx, semantic = _in_context(parent, current), semantic_span_for(parent)
    ambient = current_run_attributes()
    if semantic is None or not semantic.run_attributes:
        return ctx, ambient, semantic
    if not ambient:
        return ctx, semantic.run_attributes, semantic
    run_attrs = dict(semantic.run_attributes)
    run_attrs.update(ambient)
    return ctx, run_attrs, semantic


def _in_context(span: Span, current: otel_context.Context) -> otel_context.Context:
    """``trace.set_span_in_context(span)``: the current context ``current`` with ``span`` as its span; ``current``
    itself when ``span`` is already its span (the same values: a parent that is current, as it mostly is)."""
    return current if current.get(_SPAN_KEY) is span else trace.set_span_in_context(span, current)


_SERVER_KEYS = (A.SERVER_ADDRESS, A.SERVER_PORT)

_PARENT_TYPES = (SemanticSpan, otel_context.Context, Span)  # what `parent=` may be; anything else reads as none
