"""Fixtures for the Google ADK tests: no connection to a non-loopback address, an instrumented provider,
and ADK's own spans collected apart (ADK traces to the global tracer provider)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor
from tests.agno.conftest import no_outbound  # noqa: F401 - the same socket guard, autouse
from tests.instrumenting import fixtures
from tests.spans import SnapshotExporter


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


instrument, instrumented = fixtures(GoogleADKInstrumentor)
