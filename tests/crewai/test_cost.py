"""What the instrumentation does *not* do (issue #10, overhead): under ``suppress_instrumentation()``
every wrapper calls straight through; with content off, or on a sampled-out span, no message or tool
argument is converted. Checked by behaviour and by counting calls to the converters, never by timing."""

from __future__ import annotations

from typing import Any

import pytest
from crewai.tools import tool
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from otel_agents.instrumentors.crewai import CrewAIInstrumentor, _models, _tools
from tests.crewai.fakes import GENAI_FINISH, NativeLLM, one_agent_crew
from tests.spans import SnapshotExporter, spy_calls

CONVERTERS = ((_models, "chat_messages"), (_models, "output_message"), (_models, "_request_parameters"),
              (_tools, "json_arguments"))


@pytest.fixture
def converted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the converters called during the test, in call order."""
    return spy_calls(monkeypatch, CONVERTERS)


def _instrument(provider: Any, **kwargs: Any) -> CrewAIInstrumentor:
    inst = CrewAIInstrumentor()
    inst.instrument(tracer_provider=provider, **kwargs)
    return inst


def test_suppressed_kickoff_adds_nothing(provider: Any, exporter: SnapshotExporter, app_tracer: Any,
                                         converted: list[str]) -> None:
    """Inside ``suppress_instrumentation()`` a kickoff makes no span and converts nothing, and its tool
    sees the application's span as current (nothing of ours shadows it); the next kickoff is instrumented."""
    seen: list[Any] = []

    @tool("lookup_order")
    def probed_lookup(order_id: str) -> str:
        """Look up an order by its id and return its status."""
        seen.append(trace.get_current_span())
        return f"Order {order_id}: shipped"

    inst = _instrument(provider)
    try:
        with app_tracer.start_as_current_span("app") as app:
            with suppress_instrumentation():
                result = one_agent_crew(tools=[probed_lookup]).kickoff()
        assert "shipped" in result.raw
        assert [s.name for s in exporter.spans] == ["app"]
        assert converted == [] and seen == [app]

        one_agent_crew().kickoff()
        kinds = sorted(s.semantic_kind for s in exporter.semantic())
        assert kinds == ["agent", "chain", "model", "model", "tool"]
    finally:
        inst.uninstrument()


def test_content_off_converts_no_message(provider: Any, exporter: SnapshotExporter, converted: list[str]) -> None:
    """Content off, native tool calling: no message, output or tool argument is converted (each would
    be dropped); request parameters, the tool call id and the finish reasons the provider sent are still
    recorded (they are not content)."""
    inst = _instrument(provider, capture_content=False)
    llm = NativeLLM()
    try:
        one_agent_crew(llm).kickoff()
    finally:
        inst.uninstrument()
    assert set(converted) == {"_request_parameters"}
    assert [m.attributes.get("gen_ai.response.finish_reasons") for m in exporter.semantic("model")] == \
        [(GENAI_FINISH[sent["finish_reason"]],) for sent in llm.sent]
    tool_span = exporter.semantic("tool")[0]
    assert tool_span.attributes["gen_ai.tool.call.id"] == "call_0"
    assert "gen_ai.tool.call.arguments" not in tool_span.attributes


def test_sampled_out_kickoff_converts_nothing(converted: list[str]) -> None:
    """A sampler that drops every span: the kickoff works, nothing is exported or converted."""
    exporter = SnapshotExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = _instrument(provider)
    try:
        assert "shipped" in one_agent_crew().kickoff().raw
    finally:
        inst.uninstrument()
        provider.shutdown()
    assert exporter.spans == [] and converted == []
