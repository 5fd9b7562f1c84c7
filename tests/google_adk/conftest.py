"""Fixtures for the Google ADK tests: no connection to a non-loopback address, an instrumented provider,
and ADK's own spans collected apart (ADK traces to the global tracer provider)."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_agents._spans import Settings
from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor
from tests.agno.conftest import no_outbound  # noqa: F401 - the same socket guard, autouse
from tests.spans import SnapshotExporter


@pytest.fixture
def instrument(provider: Any) -> Callable[..., GoogleADKInstrumentor]:
    """``instrument(**settings)``: our instrumentor on the test's provider; uninstrumented at teardown."""
    inst = GoogleADKInstrumentor()

    def start(**settings: Any) -> GoogleADKInstrumentor:
        inst.instrument(tracer_provider=provider, settings=Settings(**settings) if settings else None)
        return inst

    yield start
    inst.uninstrument()


@pytest.fixture
def instrumented(instrument: Callable[..., GoogleADKInstrumentor]) -> GoogleADKInstrumentor:
    return instrument()


_ADK_EXPORTER = SnapshotExporter()
_ADK_PROVIDER = TracerProvider()
_ADK_PROVIDER.add_span_processor(SimpleSpanProcessor(_ADK_EXPORTER))


@pytest.fixture
def adk_spans(monkeypatch: pytest.MonkeyPatch) -> SnapshotExporter:
    """ADK's own spans: its module tracer (``gcp.vertex.agent``) pointed at a provider of this test."""
    from google.adk.telemetry import tracing

    _ADK_EXPORTER.clear()
    monkeypatch.setattr(tracing, "tracer", _ADK_PROVIDER.get_tracer("gcp.vertex.agent"))
    return _ADK_EXPORTER
