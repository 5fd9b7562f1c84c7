"""The common base of our instrumentors: a thin ``BaseInstrumentor`` subclass.

Subclasses set ``framework`` (a key of :data:`FRAMEWORKS`). By default ``_install(telemetry)``
builds ``Installation(telemetry)`` from the instrumentor package's ``_wiring`` module (the one
module that imports the framework) and ``_remove()`` calls its ``remove()``; a subclass with
another shape overrides both. This base builds the
:class:`~otel_agents._spans.Telemetry` from the ``instrument()`` keyword
arguments, and refuses a framework that is absent or installed at a version we do
not support — also on the zero-code path, which skips the base class's own check.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any, Collection

from opentelemetry.instrumentation.dependencies import DependencyConflictError, get_dependency_conflicts
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

import wrapt

from .._spans import Settings, Telemetry, guard
from ._frameworks import FRAMEWORKS

logger = logging.getLogger("otel_agents")
_warned: set[str] = set()
_failed: set[str] = set()  # frameworks whose install failure was logged (once each)


class OtelAgentsInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Base of the framework instrumentors.

    ``instrument()`` keyword arguments: ``tracer_provider``, ``meter_provider``,
    ``capture_content`` (``None`` = follow
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``), ``vocabularies`` (``None`` = follow
    ``OTEL_AGENTS_VOCABULARIES``), ``settings`` (a full :class:`~otel_agents._spans.Settings`).
    """

    framework: str = ""
    telemetry: Telemetry | None = None
    _installed: bool = False
    _generation: int = 0
    _installation: Any = None  # the default _install's ``_wiring.Installation``
    install_error: Exception | None = None
    """What installing our wrappers last raised (a framework release that moved what ``_wiring`` imports), else
    ``None``: logged once as a WARNING, the framework then runs untraced; :func:`otel_agents.instrument` and
    :func:`otel_agents.instrumentation_status` report it as ``failed: …``."""

    def instrumentation_dependencies(self) -> Collection[str]:
        """The supported framework versions, one pip requirement (``FRAMEWORKS[framework].requirement``, e.g.
        ``"crewai >=1.15.30,<2"``): ``instrument()`` does nothing, with one warning, when another is installed."""
        return (FRAMEWORKS[self.framework].requirement,)

    def _check_dependency_conflicts(self) -> Any:
        conflict = super()._check_dependency_conflicts()
        if conflict is not None and getattr(conflict, "found", None) and self.framework not in _warned:
            _warned.add(self.framework)
            logger.warning("otel_agents: %s is installed as %s, but this version of otel-agents supports %s; "
                           "not instrumenting it", self.framework, conflict.found, conflict.required)
        return conflict

    def _instrument(self, **kwargs: Any) -> None:
        # opentelemetry-instrument checks only the distribution's `instruments` extras (ours name no
        # framework, see pyproject.toml), then calls instrument(skip_dep_check=True) on every entry
        # point: check this framework here. Its loader logs the error at debug level when the framework
        # is absent, and once, as an error naming both versions, when the version is unsupported.
        conflict = get_dependency_conflicts(self.instrumentation_dependencies())
        if conflict is not None:
            raise DependencyConflictError(conflict)
        settings = kwargs.get("settings") or Settings(capture_content=kwargs.get("capture_content"),
                                                      vocabularies=kwargs.get("vocabularies"))
        telemetry = self.telemetry = Telemetry(kwargs.get("tracer_provider"), kwargs.get("meter_provider"),
                                               settings=settings, framework=self.framework,
                                               scope=f"otel_agents.instrumentors.{self.framework}")
        self._generation += 1
        module = FRAMEWORKS[self.framework].import_name
        if module in sys.modules:
            self._install_or_report(telemetry)
            return
        # Not imported yet: install when the application imports it, so instrumenting never pays
        # for importing a framework the application does not use (CrewAI alone takes seconds).
        generation = self._generation

        def install_on_import(_module: Any) -> None:
            if self._generation != generation or self._installed:
                return  # uninstrumented (or re-instrumented) before the framework was imported
            self._install_or_report(telemetry)

        wrapt.register_post_import_hook(install_on_import, module)

    def _install_or_report(self, telemetry: Telemetry) -> None:
        """Install, or log why not: never raise into the application (``instrument()`` at its start-up, or
        its ``import`` of the framework), and never stop ``opentelemetry-instrument`` loading the instrumentors
        after ours (its loader re-raises an instrumentor's exception and loads none of the rest)."""
        self.install_error = None
        try:
            self._install(telemetry)
        except Exception as exc:  # noqa: BLE001 - the framework runs untraced, the application runs
            self.install_error = exc
            if self.framework not in _failed:
                _failed.add(self.framework)
                logger.warning("otel_agents: could not instrument %s (it runs untraced): %r", self.framework, exc,
                               exc_info=exc)
            with guard(f"{self.framework}.install"):
                self._remove()  # what a partial install put on, if it got as far as keeping it
            return
        self._installed = True

    def _uninstrument(self, **kwargs: Any) -> None:
        self._generation += 1  # cancels a pending install-on-import
        if self._installed:
            self._remove()
            self._installed = False
        self.telemetry = None

    def _install(self, telemetry: Telemetry) -> None:
        package = type(self).__module__.rpartition(".")[0]
        self._installation = importlib.import_module(f"{package}._wiring").Installation(telemetry)  # imports the framework

    def _remove(self) -> None:
        if self._installation is not None:
            self._installation.remove()
            self._installation = None
