"""Fixtures for the exporter tests: a provider whose finished spans are kept as SDK
``ReadableSpan``s (what the exporters consume), a span-layer ``Telemetry`` on it, and
``check``: every envelope must pass ecp-runtime's own step-result validation and
our JSON Schema."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents._spans import Settings, Telemetry
from otel_agents.exporters.ecp import envelope_schema

_VALIDATOR = Draft202012Validator(envelope_schema())


def check(envelopes: list[dict]) -> list[dict]:
    """Assert each envelope passes ``validate_step_result`` and our schema; return them."""
    from ecp_runtime.conformance import validate_step_result

    for envelope in envelopes:
        validate_step_result(envelope)
        errors = sorted(_VALIDATOR.iter_errors(envelope), key=str)
        assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    return envelopes


class Recorder:
    """A tracer provider with an in-memory exporter, plus the span layer on top of it."""

    def __init__(self, *processors) -> None:
        self.memory = InMemorySpanExporter()
        self.provider = TracerProvider()
        for p in processors:
            self.provider.add_span_processor(p)
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.telemetry = Telemetry(self.provider, framework="manual", settings=Settings(capture_content=True))
        self.app = self.provider.get_tracer("tests.app")

    @property
    def spans(self):
        return list(self.memory.get_finished_spans())


@pytest.fixture
def rec():
    r = Recorder()
    yield r
    r.provider.shutdown()
