"""Fixtures for the OpenAI Agents SDK tests: no network but loopback (the SDK's default processor
exports to OpenAI when it has a key: none is set, and any attempt fails the test), our instrumentor
on the test's provider, and the finished spans as ``ReadableSpan`` for the ECP fold."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
from tests.crewai.netguard import block_network


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every test: no OpenAI key in the environment, and no connection to a non-loopback address."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    refused = block_network(monkeypatch.setattr)
    yield refused
    assert refused == [], f"a connection to {refused} was attempted"


@pytest.fixture
def memory(provider: Any) -> InMemorySpanExporter:
    mem = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(mem))
    return mem


@pytest.fixture
def instrumented(provider: Any) -> Iterator[OpenAIAgentsInstrumentor]:
    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    assert inst.open_spans() == 0, "spans left open after the test's runs"
    inst.uninstrument()


@pytest.fixture
def tool_writes(monkeypatch: pytest.MonkeyPatch) -> dict[int, int]:
    """How many times each span (by span id) had its tool definitions rendered (set_messages(tools=...) or
    set_tool_definitions): a model span records the tools offered once, not once per source."""
    from otel_agents._spans import SemanticSpan

    counts: dict[int, int] = {}
    render = SemanticSpan._tools_into

    def counted(self: Any, attrs: dict[str, Any], tools: Any) -> None:
        span_id = self.span.get_span_context().span_id
        counts[span_id] = counts.get(span_id, 0) + 1
        render(self, attrs, tools)

    monkeypatch.setattr(SemanticSpan, "_tools_into", counted)
    return counts
