"""Fixtures for the PydanticAI tests: an instrumented provider, and pydantic-ai's own instrumentation switched off after each test."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.result import StreamedRunResult, StreamedRunResultSync

from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor
from tests.instrumenting import fixtures

# What pydantic-ai defines before any test instruments it (uninstrument must restore these objects).
PATCHED = [(Agent, "iter"), (StreamedRunResult, "_marked_completed")] + \
    [(StreamedRunResultSync, name) for name in ("stream_output", "stream_text", "stream_response")]
ORIGINALS = {(owner, name): owner.__dict__[name] for owner, name in PATCHED}


@pytest.fixture(autouse=True)
def _native_instrumentation_off() -> Any:
    yield
    Agent.instrument_all(False)


instrument, instrumented = fixtures(PydanticAIInstrumentor)
