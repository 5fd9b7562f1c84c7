"""``instrument()``, ``uninstrument()`` and ``instrumentation_status()``: the one-call public API."""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Iterable

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ._spans.settings import check_capture_content
from ._spans.telemetry import check_providers
from .instrumentors._frameworks import FRAMEWORKS, Framework
from .semconv.vocabularies import parse as vocabulary_selection

logger = logging.getLogger("otel_agents")


@dataclass
class FrameworkStatus:
    """Where one framework stands.

    Attributes:
        name: our framework name (``langchain`` …).
        installed_version: the installed distribution's version, or ``None``.
        supported: the supported version specifier.
        instrumented: whether our instrumentor is active.
        reason: why not, in words (``"not installed"``, ``"unsupported version 0.2.1
            (supported: >=1.8.3,<2)"``, ``"not requested"``, an error), or ``""``.
    """

    name: str
    installed_version: str | None
    supported: str
    instrumented: bool
    reason: str = ""


_status: dict[str, FrameworkStatus] = {}
_active: dict[str, Any] = {}
_active_args: dict[str, tuple[Any, Any, Any, Any]] = {}  # the settings each framework was instrumented with
_warned_versions: set[str] = set()


def _installed_version(fw: Framework) -> str | None:
    try:
        return metadata.version(fw.distribution)
    except metadata.PackageNotFoundError:
        return None


def _supported(fw: Framework, version: str) -> bool:
    try:
        return Version(version) in SpecifierSet(fw.supported)
    except InvalidVersion:
        return False


def _unsupported(fw: Framework, version: str) -> str:
    return f"unsupported version {version} (supported: {fw.supported})"


def _disabled() -> set[str]:
    """The names ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` lists (comma-separated, as ``opentelemetry-instrument``
    reads it); ``*`` among them disables every framework, as it disables every instrumentation there."""
    names = {n.strip() for n in os.environ.get("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "").split(",")}
    return set(FRAMEWORKS) if "*" in names else names


def instrumentor_for(name: str) -> Any:
    """The (singleton) instrumentor instance of framework ``name``; imports its module."""
    fw = FRAMEWORKS[name]
    return getattr(importlib.import_module(fw.module), fw.cls)()


def requested_frameworks(frameworks: str | Iterable[str] | None) -> list[str]:
    """The framework names ``frameworks`` asks for (see :func:`instrument`): ``None`` = all we support but those
    ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` names.

    Raises:
        ValueError: a name that is not one we support (the message lists the valid ones).
    """
    if frameworks is None:  # all installed, minus those the standard OTel variable disables
        disabled = _disabled()
        names = [n for n in FRAMEWORKS if n not in disabled]
    elif isinstance(frameworks, str):  # "langchain,crewai", as the variables write them (not letter by letter)
        names = [n.strip() for n in frameworks.split(",") if n.strip()]
    else:
        names = list(frameworks)
    unknown = [n for n in names if n not in FRAMEWORKS]
    if unknown:
        raise ValueError(f"unknown framework(s) {unknown}; valid: {sorted(FRAMEWORKS)}")
    return names


def instrument(tracer_provider: Any = None, *, frameworks: str | Iterable[str] | None = None,
               capture_content: bool | None = None, meter_provider: Any = None,
               vocabularies: str | Iterable[str] | None = None) -> list[str]:
    """Instrument every supported framework that is installed (or only those named).

    Args:
        tracer_provider: where spans go (default: the global provider).
        frameworks: names among ``langchain``, ``llama_index``, ``crewai``, ``pydantic_ai``, ``anthropic``,
            ``openai``, ``mcp``, ``a2a``… (:data:`otel_agents.instrumentors.FRAMEWORKS`; an iterable or a
            comma-separated string); ``None`` = all that are installed, except those named in
            ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` (comma-separated, as ``opentelemetry-instrument`` reads it;
            ``*`` = all of them).
        capture_content: overrides ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``.
        meter_provider: where the GenAI metrics go (default: the global provider).
        vocabularies: the attribute vocabularies spans are written in, any of ``gen_ai``,
            ``openinference``, ``langfuse`` (a comma-separated string or an iterable); overrides
            ``OTEL_AGENTS_VOCABULARIES``; ``None`` = that variable, else all three (see
            :mod:`otel_agents.semconv.vocabularies`).

    The decorators (``otel_agents.agent``, ``tool``, ...) follow ``tracer_provider``,
    ``meter_provider``, ``capture_content`` and ``vocabularies`` too, unless
    :func:`otel_agents.manual.set_providers` chose others.

    Returns:
        The names of every framework instrumented once this call returns, in
        :data:`~otel_agents.instrumentors.FRAMEWORKS` order: the ones
        :func:`instrumentation_status` reports as instrumented. Calls add up, as each
        ``BaseInstrumentor.instrument()`` does: ``instrument(frameworks=["openai"])`` then
        ``instrument(frameworks=["anthropic"])`` returns ``["anthropic", "openai"]``; a framework
        not named in a later call keeps its earlier settings (:func:`uninstrument` removes them all).
        Calling it again with the same arguments changes nothing; with other arguments (another
        provider, another content setting), each framework named is re-instrumented with them.

    Raises:
        ValueError: a name in ``frameworks`` is not one we support, or ``vocabularies``
            names an unknown vocabulary or none (the message lists the valid ones).
        TypeError: ``capture_content`` is not ``True``, ``False`` or ``None``, or ``tracer_provider``
            (``meter_provider``) is not ``None`` nor a provider instance (a class, a string).

    A framework installed at an unsupported version is skipped with one WARNING
    naming both versions; :func:`instrumentation_status` says why any framework
    is not instrumented.
    """
    names = requested_frameworks(frameworks)
    vocab = None if vocabularies is None else vocabulary_selection(vocabularies)  # refused before anything changes
    check_capture_content(capture_content)
    check_providers(tracer_provider, meter_provider)
    # Decorated code (otel_agents.agent/tool/...) goes where the frameworks' spans go, so one run is one
    # trace in one provider; otel_agents.manual.set_providers() overrides this.
    from .manual import follow_providers

    follow_providers(tracer_provider, meter_provider, vocabularies=vocab, capture_content=capture_content)
    for name in FRAMEWORKS:
        fw = FRAMEWORKS[name]
        version = _installed_version(fw)
        if name not in names:
            if name not in _active:
                _status[name] = FrameworkStatus(name, version, fw.supported, False, "not requested")
            continue
        if version is None:
            _status[name] = FrameworkStatus(name, None, fw.supported, False, "not installed")
            continue
        if not _supported(fw, version):
            reason = _unsupported(fw, version)
            if name not in _warned_versions:
                _warned_versions.add(name)
                logger.warning("otel_agents: %s %s is installed, but otel-agents supports %s %s; not instrumenting it",
                               fw.distribution, version, fw.distribution, fw.supported)
            _status[name] = FrameworkStatus(name, version, fw.supported, False, reason)
            continue
        try:
            inst = instrumentor_for(name)
            wanted = (tracer_provider, meter_provider, capture_content, vocab)
            if inst.is_instrumented_by_opentelemetry and _active_args.get(name) != wanted:
                inst.uninstrument()  # called again with other settings: they take effect
            if not inst.is_instrumented_by_opentelemetry:
                inst.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider,
                                capture_content=capture_content, vocabularies=vocab, skip_dep_check=True)
            if inst.install_error is not None:  # logged by the instrumentor; nothing of ours is on
                failure = inst.install_error
                inst.uninstrument()  # BaseInstrumentor marked it instrumented: a later call tries again
                _active.pop(name, None)
                _active_args.pop(name, None)
                _status[name] = FrameworkStatus(name, version, fw.supported, False, f"failed: {failure!r}")
                continue
            _active[name] = inst
            _active_args[name] = wanted
            _status[name] = FrameworkStatus(name, version, fw.supported, True)
        except Exception as exc:  # noqa: BLE001 - never break the caller's start-up
            logger.warning("otel_agents: could not instrument %s: %r", name, exc, exc_info=exc)
            _status[name] = FrameworkStatus(name, version, fw.supported, False, f"failed: {exc!r}")
    # Everything instrumented now, not only what this call named: the same answer instrumentation_status() gives.
    return [name for name in FRAMEWORKS if name in _status and _status[name].instrumented]


def uninstrument() -> None:
    """Undo :func:`instrument` for every framework it instrumented."""
    for name, inst in list(_active.items()):
        try:
            inst.uninstrument()
        except Exception as exc:  # noqa: BLE001
            logger.warning("otel_agents: could not uninstrument %s: %r", name, exc)
        _active.pop(name, None)
        _active_args.pop(name, None)
        fw = FRAMEWORKS[name]
        _status[name] = FrameworkStatus(name, _installed_version(fw), fw.supported, False, "uninstrumented")


def instrumentation_status() -> dict[str, FrameworkStatus]:
    """Per framework: installed version, supported range, whether instrumented and why not.

    Before :func:`instrument` has looked at a framework, the reason is what it would find: ``not installed``,
    ``unsupported version …``, ``disabled by OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` or ``not instrumented yet``.
    """
    out = {}
    for name, fw in FRAMEWORKS.items():
        failure = _active[name].install_error if name in _active else None
        if failure is not None:  # installed when the application imported the framework, and that failed
            out[name] = FrameworkStatus(name, _status[name].installed_version, fw.supported, False,
                                        f"failed: {failure!r}")
        elif name in _status:
            out[name] = _status[name]
        else:
            version = _installed_version(fw)
            if version is None:
                reason = "not installed"
            elif not _supported(fw, version):
                reason = _unsupported(fw, version)
            elif name in _disabled():
                reason = "disabled by OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"
            else:
                reason = "not instrumented yet"
            out[name] = FrameworkStatus(name, version, fw.supported, False, reason)
    return out
