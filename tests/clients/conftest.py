"""Fixtures: each client instrumentor on the test's provider, taken off afterwards."""

from __future__ import annotations

import pytest

pytest.importorskip("anthropic")
pytest.importorskip("openai")

from otel_agents.instrumentors.anthropic import AnthropicInstrumentor  # noqa: E402
from otel_agents.instrumentors.openai import OpenAIInstrumentor  # noqa: E402


@pytest.fixture
def anthropic_on(provider):
    inst = AnthropicInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    inst.uninstrument()


@pytest.fixture
def openai_on(provider):
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    inst.uninstrument()
