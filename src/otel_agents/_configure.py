"""``otel_agents.configure()``: a tracer provider, its exporters and the instrumentors, in one call.

::

    import otel_agents

    otel_agents.configure(service_name="support-bot", exporters=["phoenix"])            # local Phoenix
    otel_agents.configure(exporters=["langfuse"], ecp=print)                             # + ECP envelopes
    otel_agents.configure(exporters=[otel_agents.presets.otlp("http://collector:4318/v1/traces")])
    otel_agents.configure(exporters=[otel_agents.presets.otlp("http://collector:4317", protocol="grpc")])

What it does, in order:

1. builds a ``TracerProvider`` whose resource has ``service.name`` (the argument, else
   ``OTEL_SERVICE_NAME``, else the SDK's ``unknown_service:`` + the executable, ``unknown_service`` before SDK 1.45),
   ``OTEL_RESOURCE_ATTRIBUTES``, and what
   the presets need (Phoenix's project);
2. adds the ECP folding processor when ``ecp`` asks for it (first, so it sees every run start);
3. adds one processor per exporter: a ``BatchSpanProcessor`` for network presets (``otlp``,
   ``phoenix``, ``langfuse``, ``mlflow``), a ``SimpleSpanProcessor`` for local ones (``console``, ``file``, any
   ``SpanExporter`` you pass);
4. makes the provider the global one, unless ``set_global=False``. When a global SDK
   ``TracerProvider`` already exists (the application's, or ``otel-agents ecp serve``'s), steps 1
   and 4 are skipped: the processors join that provider, so one run goes to every exporter (its
   resource cannot change, so preset resource attributes are not applied: one warning says so).
   A global provider made by an earlier ``configure()``, or of another implementation, is never
   replaced: one warning, and we go on with our own provider;
5. points the decorators (:mod:`otel_agents.manual`) and the framework instrumentors at the
   provider: :func:`otel_agents.uninstrument` first, so a second ``configure()`` takes effect, then
   :func:`otel_agents.instrument`.

Flushing on exit: the SDK's ``TracerProvider`` registers an ``atexit`` hook that shuts it down,
which drains the batch processors; :meth:`Configuration.shutdown` does the same at once.

Environment variables read here: ``OTEL_AGENTS_EXPORTERS`` (comma-separated preset names, used when
``exporters`` is not given; unset or blank: ``file``; a value naming none, such as ``,,``, is a
``ValueError``), ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``
(by the SDK). Each preset reads its own (see :mod:`otel_agents.exporters.presets`): the ``otlp`` preset
sends over OTLP/HTTP or, with ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL`` =
``grpc``, over OTLP/gRPC (the ``otlp-grpc`` extra), as ``opentelemetry-instrument`` does.

Secrets: nothing here prints or logs a header or a key; the ``repr`` of the returned
:class:`Configuration` shows each exporter through :meth:`ExporterPreset.describe`, which masks them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

from ._api import instrument, requested_frameworks, uninstrument
from ._spans.pipeline import INT64_MAX, INT64_MIN  # OTLP carries an int attribute as a signed 64-bit integer
from ._spans.settings import check_capture_content
from .exporters.presets import PRESETS, ExporterPreset, resolve
from .semconv.vocabularies import parse as vocabulary_selection

logger = logging.getLogger("otel_agents")

ENV_EXPORTERS = "OTEL_AGENTS_EXPORTERS"
DEFAULT_EXPORTERS = ("file",)

ExporterSpec = str | ExporterPreset | SpanExporter
_latest: "Configuration | None" = None  # the one whose provider the instrumentors use


@dataclass(repr=False)
class Configuration:
    """What :func:`configure` built.

    Attributes:
        tracer_provider: the SDK ``TracerProvider`` (global unless ``set_global=False`` or one existed).
        exporters: the presets in use, in the order given.
        processors: the span processors added, ECP first when present.
        ecp: the ``ECPFoldingProcessor`` when ``ecp`` was requested, else ``None``; without a
            callback its envelopes wait in ``ecp.queue`` (``ecp.drain()`` takes them).
        instrumented: the frameworks :func:`otel_agents.instrument` instrumented.
        is_global: whether ``tracer_provider`` is the global provider.
        owns_provider: ``False`` when :func:`configure` added its processors to a global SDK
            provider that already existed; :meth:`shutdown` then shuts down only those processors.
    """

    tracer_provider: TracerProvider
    exporters: tuple[ExporterPreset, ...]
    processors: tuple[SpanProcessor, ...]
    ecp: Any = None
    instrumented: tuple[str, ...] = ()
    is_global: bool = False
    owns_provider: bool = True
    _shut: bool = field(default=False, init=False)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export every ended span now; ``False`` when a processor did not finish in time."""
        return self.tracer_provider.force_flush(timeout_millis)

    def shutdown(self) -> None:
        """Flush and shut the provider down (idempotent). When this is the latest configuration, also
        undo the instrumentation and send the decorators' spans back to the global provider."""
        global _latest
        if self._shut:
            return
        self._shut = True
        if _latest is self:
            _latest = None
            uninstrument()
            _point_decorators_at(None)
        if self.owns_provider:
            self.tracer_provider.shutdown()
        else:
            for processor in self.processors:
                processor.shutdown()

    def __repr__(self) -> str:
        exporters = ", ".join(p.describe() for p in self.exporters)
        return (f"Configuration(exporters=[{exporters}], ecp={self.ecp is not None}, "
                f"instrumented={list(self.instrumented)}, global={self.is_global})")


def configure(
    *,
    service_name: str | None = None,
    exporters: Iterable[ExporterSpec] | ExporterSpec | None = None,
    ecp: bool | Callable[[dict[str, Any]], Any] | SpanProcessor | None = None,
    resource_attributes: dict[str, Any] | None = None,
    frameworks: str | Iterable[str] | None = None,
    capture_content: bool | None = None,
    vocabularies: str | Iterable[str] | None = None,
    set_global: bool = True,
) -> Configuration:
    """Build a tracer provider with exporters from presets, then instrument.

    Args:
        service_name: the resource's ``service.name``.
        exporters: preset names (``"console"``, ``"file"``, ``"otlp"``, ``"phoenix"``,
            ``"langfuse"``, ``"mlflow"``), :class:`~otel_agents.exporters.presets.ExporterPreset` objects (from
            ``otel_agents.presets.phoenix(project=...)`` and friends) or ``SpanExporter`` instances;
            one or several. ``None`` = ``OTEL_AGENTS_EXPORTERS``, else ``file``; ``[]`` = none.
        ecp: fold each run into an ECP envelope: ``True`` (envelopes queue up on
            ``Configuration.ecp``), a callable (called with each envelope ``dict``), or a ready
            ``ECPFoldingProcessor``. Needs the ``ecp`` extra for cost figures.
        resource_attributes: more resource attributes, ``{str: value}`` where a value is a ``str``, ``bool``,
            ``int`` (signed 64-bit) or ``float``, or a list/tuple of one of those (they win over the presets'
            and the environment's).
        frameworks, capture_content, vocabularies: passed to :func:`otel_agents.instrument`
            (``vocabularies``: any of ``gen_ai``, ``openinference``, ``langfuse``; ``None`` follows
            ``OTEL_AGENTS_VOCABULARIES``, default all three; the decorators follow it too).
        set_global: ``True`` or ``False``: make the provider the global one (see the module docstring).

    Returns:
        A :class:`Configuration` (the provider, presets, processors, the ECP processor, the
        instrumented frameworks), safe to print.

    Raises:
        ValueError: an unknown framework or preset name (or an ``OTEL_AGENTS_EXPORTERS`` naming none), one
            destination given twice (:func:`repeated_exporter`: every span would be exported twice), a preset
            missing its settings (the langfuse keys), an endpoint that is not an http(s) URL (the
            message names the argument or variable), an otlp preset's ``protocol=`` other than ``http/protobuf`` or
            ``grpc`` (naming the argument and the allowed values; such a variable is warned about and ignored), a
            preset's ``timeout=`` that is not a positive number, or a ``resource_attributes`` key that is empty or an int out of the 64-bit range (naming the key).
        ImportError: a network preset without the ``otlp`` extra installed, or the ``otlp`` preset over gRPC
            without the ``otlp-grpc`` extra (the message names the package and the extra).
        OSError: the ``file`` preset's file cannot be opened for appending (the message names the
            path and ``OTEL_AGENTS_TRACES_FILE`` when it came from there).
        TypeError: an exporter that is neither a name, a preset nor a ``SpanExporter``, a
            ``capture_content`` that is not ``True``, ``False`` or ``None``, a ``set_global`` that is not a
            ``bool``, a ``service_name`` that is not a ``str``, or ``resource_attributes`` that is not a mapping
            of ``str`` keys to attribute values (naming the key and the type).

    Every error above is raised before anything global changes (the provider, the instrumentation).
    """
    global _latest
    if not isinstance(set_global, bool):  # "no" is truthy: the provider would become global against the caller's word
        raise TypeError(f"set_global must be True or False, not {set_global!r}")
    if service_name is not None and not isinstance(service_name, str):  # service.name is a string (OTel resource)
        raise TypeError(f"service_name must be a str, not {type(service_name).__name__}")
    resource_attributes = _checked_resource_attributes(resource_attributes)  # before anything starts
    frameworks = requested_frameworks(frameworks)  # ValueError before anything starts (the global provider is final)
    if vocabularies is not None:
        vocabularies = vocabulary_selection(vocabularies)  # ValueError before anything starts
    check_capture_content(capture_content)  # TypeError before anything starts ("false" is truthy)
    specs = _exporter_specs(exporters)
    presets = tuple(resolve(spec) for spec in specs)
    repeated = repeated_exporter(specs, presets)
    if repeated:
        named = f" ({ENV_EXPORTERS}={os.environ.get(ENV_EXPORTERS)!r})" if exporters is None else ""
        raise ValueError(repeated + named)
    built = [(preset, preset.build()) for preset in presets]  # fails (ImportError) before anything starts
    ecp_processor = _ecp_processor(ecp)
    attributes: dict[str, Any] = {}
    for preset in presets:
        attributes.update(preset.resource)
    if service_name:
        attributes[SERVICE_NAME] = service_name
    attributes.update(resource_attributes)
    existing = trace.get_tracer_provider()
    # Join a global SDK provider someone else made (again, when an earlier configure() joined it too); one an
    # earlier configure() made is replaced instead.
    joined = set_global and isinstance(existing, TracerProvider) and \
        not (_latest is not None and _latest.owns_provider and _latest.tracer_provider is existing)
    if joined:  # an SDK provider is already global (e.g. `otel-agents ecp serve`'s): export its spans too
        provider = existing
        if attributes:
            logger.warning("otel_agents: configure() adds its exporters to the tracer provider that is already "
                           "global; its resource cannot change, so %s are not applied", sorted(attributes))
    else:
        provider = TracerProvider(resource=Resource.create(attributes))

    processors: list[SpanProcessor] = [ecp_processor] if ecp_processor is not None else []
    processors += [BatchSpanProcessor(exporter) if preset.batch else SimpleSpanProcessor(exporter)
                   for preset, exporter in built]
    for processor in processors:
        provider.add_span_processor(processor)

    is_global = joined or (set_global and _set_global(provider))
    _point_decorators_at(provider)
    uninstrument()
    done = instrument(provider, frameworks=frameworks, capture_content=capture_content, vocabularies=vocabularies)
    config = Configuration(provider, presets, tuple(processors), ecp_processor, tuple(done), is_global,
                           owns_provider=not joined)
    _latest = config
    logger.info("otel_agents: configured %r", config)
    return config


_ATTRIBUTE_TYPES = (bool, str, int, float)  # what an OTel attribute holds, alone or as a list of one (bool before int)
_HOLDS = "an OpenTelemetry attribute holds a str, bool, int or float, or a list or tuple of one of them"


def _attribute_kind(value: object) -> type | None:
    return next((kind for kind in _ATTRIBUTE_TYPES if isinstance(value, kind)), None)


def _checked_resource_attributes(attributes: object) -> dict[str, Any]:
    """``attributes`` as a dict, checked to hold the OTel spec's standard attribute values: a primitive or a
    homogeneous list of one, what every SDK we support keeps (1.44 drops anything else with a warning, after
    turning a non-str key into a str; 1.45 keeps maps and mixed lists as ``AnyValue``, which 1.44 and backends
    reading the standard types do not), and an int OTLP can carry (a larger one fails every export).

    Raises:
        TypeError: not a mapping, a key that is not a ``str``, or a value that is not a ``str``, ``bool``,
            ``int``, ``float`` or a list/tuple of one of those (``None`` items allowed); the message names the key
            and the type.
        ValueError: an empty key, or an ``int`` outside the signed 64-bit range OTLP carries.
    """
    if attributes is None:
        return {}
    if not isinstance(attributes, Mapping):
        raise TypeError(f"resource_attributes must be a mapping of str keys to attribute values, "
                        f"not {type(attributes).__name__}")
    for key, value in attributes.items():
        if not isinstance(key, str):
            raise TypeError(f"resource_attributes key {key!r} has type {type(key).__name__}, not str")
        if not key:
            raise ValueError("resource_attributes has an empty key")
        if isinstance(value, (list, tuple)):
            items = [item for item in value if item is not None]
            odd = next((item for item in items if _attribute_kind(item) is None), None)
            if odd is not None:
                raise TypeError(f"resource_attributes[{key!r}] is a {type(value).__name__} with an item of type "
                                f"{type(odd).__name__}; {_HOLDS}")
            kinds = sorted({_attribute_kind(item).__name__ for item in items})  # type: ignore[union-attr]
            if len(kinds) > 1:
                raise TypeError(f"resource_attributes[{key!r}] is a {type(value).__name__} mixing "
                                f"{' and '.join(kinds)}; {_HOLDS}")
        elif _attribute_kind(value) is None:
            raise TypeError(f"resource_attributes[{key!r}] has type {type(value).__name__}; {_HOLDS}")
        else:
            items = [value]
        for item in items:
            if type(item) is not bool and isinstance(item, int) and not INT64_MIN <= item <= INT64_MAX:
                raise ValueError(f"resource_attributes[{key!r}] holds {item}, outside the signed 64-bit range of an "
                                 f"OpenTelemetry int attribute")
    return dict(attributes)


def _exporter_specs(exporters: Iterable[ExporterSpec] | ExporterSpec | None) -> Sequence[ExporterSpec]:
    if exporters is None:
        raw = os.environ.get(ENV_EXPORTERS, "")
        names = [n.strip() for n in raw.split(",") if n.strip()]
        if raw.strip() and not names:  # ",,": the user meant something, and it is not the default
            raise ValueError(f"{ENV_EXPORTERS}={raw!r} names no exporter preset; valid: {sorted(PRESETS)} "
                             f"(unset it for the default, {','.join(DEFAULT_EXPORTERS)})")
        return names or list(DEFAULT_EXPORTERS)
    if isinstance(exporters, (str, ExporterPreset, SpanExporter)):
        return [exporters]
    return list(exporters)


def repeated_exporter(specs: Sequence[ExporterSpec], presets: Sequence[ExporterPreset]) -> str | None:
    """Why ``presets`` (resolved from ``specs``, in order) would export every span twice to one destination: the
    same preset with the same settings given twice (``file,file``; ``phoenix`` twice to one endpoint and
    project), two ``file`` presets naming one file (another spelling, a link), or one ``SpanExporter`` object
    given twice; ``None`` when none is. Two exporters of one class, or presets of one name with other
    settings, are different destinations."""
    for i, preset in enumerate(presets):
        for j in range(i):
            earlier = presets[j]
            if preset.name == "custom":
                same = specs[i] is specs[j]
            elif preset.name == "file" and earlier.name == "file":
                same = os.path.realpath(preset.details["path"]) == os.path.realpath(earlier.details["path"])
            else:
                same = preset == earlier
            if same:
                shown = f"{preset.describe()} is given twice" if preset == earlier else \
                    f"{earlier.describe()} and {preset.describe()} name one file"
                return f"exporters: {shown}: every span would be exported to it twice"
    return None


def _ecp_processor(ecp: bool | Callable[[dict[str, Any]], Any] | SpanProcessor | None) -> SpanProcessor | None:
    if ecp is None or ecp is False:
        return None
    if isinstance(ecp, SpanProcessor):
        return ecp
    from .exporters.ecp import ECPFoldingProcessor  # lazy: only users of ECP pay for it

    if ecp is True:
        return ECPFoldingProcessor()
    if callable(ecp):
        return ECPFoldingProcessor(on_envelope=ecp)
    raise TypeError(f"ecp must be a bool, a callable or a SpanProcessor, not {type(ecp)!r}")


def _set_global(provider: TracerProvider) -> bool:
    """Make ``provider`` global unless an SDK provider already is (OTel allows setting it once)."""
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        logger.warning("otel_agents: a global tracer provider is already set; configure() keeps it and "
                       "sends otel-agents' spans to its own provider (pass set_global=False to silence this)")
        return False
    trace.set_tracer_provider(provider)
    return True


def _point_decorators_at(provider: TracerProvider | None) -> None:
    try:
        from .manual import follow_providers
    except ImportError:  # pragma: no cover - the decorators are part of the package
        return
    follow_providers(provider)
