"""Fixtures for the PydanticAI tests: an instrumented provider, and pydantic-ai's own instrumentation switched off after each test."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from pydantic_ai import Agent
from pydantic_ai.result import StreamedRunResult, StreamedRunResultSync

from otel_agents._spans import Settings
from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor

# What pydantic-ai defines before any test instruments it (uninstrument must restore these objects).
PATCHED = [(Agent, "iter"), (StreamedRunResult, "_marked_completed")] + \
    [(StreamedRunResultSync, name) for name in ("stream_output", "stream_text", "stream_response")]
ORIGINALS = {(owner, name): owner.__dict__[name] for owner, name in PATCHED}


@pytest.fixture(autouse=True)
def _native_instrumentation_off() -> Any:
    yield
    Agent.instrument_all(False)


@pytest.fixture
def instrument(provider: Any) -> Callable[..., PydanticAIInstrumentor]:
    """``instrument(**settings)``: our instrumentor on the test's provider; uninstrumented at teardown."""
    inst = PydanticAIInstrumentor()

    def start(**settings: Any) -> PydanticAIInstrumentor:
        inst.instrument(tracer_provider=provider, settings=Settings(**settings) if settings else None)
        return inst

    yield start
    inst.uninstrument()


@pytest.fixture
def instrumented(instrument: Callable[..., PydanticAIInstrumentor]) -> PydanticAIInstrumentor:
    return instrument()
