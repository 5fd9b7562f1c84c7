"""The common base of our four instrumentors: a thin ``BaseInstrumentor`` subclass.

Subclasses set ``framework`` (a key of :data:`FRAMEWORKS`) and implement
``_install(telemetry)`` and ``_remove()``; this base builds the
:class:`~otel_agents._spans.Telemetry` from the ``instrument()`` keyword
arguments, and warns once when the framework is installed at a version we do not
support (the zero-code path would otherwise skip it silently).
"""

from __future__ import annotations

import logging
from typing import Any, Collection

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor

from .._spans import Settings, Telemetry
from ._frameworks import FRAMEWORKS

logger = logging.getLogger("otel_agents")
_warned: set[str] = set()


class OtelAgentsInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Base of the framework instrumentors.

    ``instrument()`` keyword arguments: ``tracer_provider``, ``meter_provider``,
    ``capture_content`` (``None`` = follow
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``), ``settings`` (a full
    :class:`~otel_agents._spans.Settings`).
    """

    framework: str = ""
    telemetry: Telemetry | None = None

    def instrumentation_dependencies(self) -> Collection[str]:
        return (FRAMEWORKS[self.framework].requirement,)

    def _check_dependency_conflicts(self) -> Any:
        conflict = super()._check_dependency_conflicts()
        if conflict is not None and getattr(conflict, "found", None) and self.framework not in _warned:
            _warned.add(self.framework)
            logger.warning("otel_agents: %s is installed as %s, but this version of otel-agents supports %s; "
                           "not instrumenting it", self.framework, conflict.found, conflict.required)
        return conflict

    def _instrument(self, **kwargs: Any) -> None:
        settings = kwargs.get("settings") or Settings(capture_content=kwargs.get("capture_content"))
        self.telemetry = Telemetry(kwargs.get("tracer_provider"), kwargs.get("meter_provider"),
                                   settings=settings, framework=self.framework,
                                   scope=f"otel_agents.instrumentors.{self.framework}")
        self._install(self.telemetry)

    def _uninstrument(self, **kwargs: Any) -> None:
        self._remove()
        self.telemetry = None

    def _install(self, telemetry: Telemetry) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _remove(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError
