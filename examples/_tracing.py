"""Tracing set-up shared by the examples: print the run's span tree, and export it wherever you configured.

Each example records its spans in memory to print them as a tree. The spans also go where your
environment sends them:

- under ``opentelemetry-instrument`` (or after ``otel_agents.configure()`` in your own code) the global
  SDK ``TracerProvider`` already exists: the recorder joins it, so the spans also reach its exporters,
  and a framework the launcher already instrumented is left as it is (no "already instrumented");
- else, with ``OTEL_AGENTS_EXPORTERS`` set (``file``, ``console``, ``phoenix``, …), ``otel_agents.configure()``
  builds the provider from it;
- else the spans are only printed.

Copying one example out of this folder? Copy this file beside it.
"""

from __future__ import annotations

import os
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agents
from otel_agents.exporters.tree import format_span_tree


class Tracing:
    """A tracer provider for one example run (see the module docstring) and the spans it recorded."""

    def __init__(self) -> None:
        provider = trace.get_tracer_provider()
        self._config = None
        if not isinstance(provider, TracerProvider):
            if os.environ.get("OTEL_AGENTS_EXPORTERS"):
                self._config = otel_agents.configure(frameworks=[])
                provider = self._config.tracer_provider
            else:
                provider = TracerProvider()
        self.tracer_provider: TracerProvider = provider
        self.exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        otel_agents.manual.set_providers(provider)  # decorated functions record on it too
        self._ours: list[Any] = []

    def instrument(self, instrumentor: Any) -> None:
        """Instrument one framework on this provider, unless something (the launcher) already did."""
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument(tracer_provider=self.tracer_provider)
            self._ours.append(instrumentor)

    def tree(self) -> str:
        """The recorded spans as an indented tree (:func:`otel_agents.exporters.tree.format_span_tree`)."""
        return format_span_tree(self.exporter.get_finished_spans())

    def close(self) -> None:
        """Undo what :meth:`instrument` did (the decorators too) and flush the provider's exporters."""
        for instrumentor in self._ours:
            instrumentor.uninstrument()
        self._ours.clear()
        otel_agents.manual.set_providers()  # decorated code follows instrument()/configure() again
        self.tracer_provider.force_flush()
