"""Fixtures for the LlamaIndex tests: our instrumentor on the test's provider."""

from __future__ import annotations

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
from tests.instrumenting import fixtures

instrument, instrumented = fixtures(LlamaIndexInstrumentor)
