"""PA-3: with or without pydantic-ai's own instrumentation, whatever the span-processor order,
each run, model request and tool call appears exactly once in our kinds."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic_ai import Agent
from pydantic_ai.models.instrumented import InstrumentationSettings

from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor
from otel_agents._spans.finalisers import settle
from tests.spans import SnapshotExporter, SpanSnapshot, by_id, nearest, tree

from .agents import Deps, lookup_agent

MARKER = "PA3-MARKER-Z"

# One run = agent → (model, tool, model); the shape we expect in our kinds every time.
EXPECTED = [("agent", None), ("model", "agent"), ("tool", "agent"), ("model", "agent")]


def shape(run: list[SpanSnapshot], everything: list[SpanSnapshot]) -> list[tuple[str, str | None]]:
    """Each semantic span's kind and the kind of its nearest semantic ancestor (through any
    native span in between), in start order."""
    out = []
    for s in run:
        up = next((a for a in (nearest(s, everything, k) for k in ("tool", "agent")) if a is not None), None)
        out.append((s.semantic_kind, up.semantic_kind if up else None))
    return out


def run_twice() -> None:
    """A plain run and a streamed run of the same agent, like an application would."""
    agent = lookup_agent()
    agent.run_sync(f"order {MARKER}", deps=Deps(marker=MARKER))
    result = agent.run_stream_sync(f"order {MARKER}", deps=Deps(marker=MARKER))
    result.get_output()  # no `with`: pydantic-ai's own spans end only when `result` is collected
    del result
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread


@pytest.mark.parametrize("native", ["off", "same-provider", "own-provider"])
@pytest.mark.parametrize("exporter_first", [True, False], ids=["exporter-first", "exporter-last"])
def test_pa3_each_run_once_in_our_kinds(native: str, exporter_first: bool) -> None:
    """PA-3: native instrumentation off, on in the same provider, on in its own provider; our exporter's
    processor registered before or after another one: the same spans, once each, in both exporters."""
    ours, other = SnapshotExporter(), SnapshotExporter()
    provider = TracerProvider()
    first, second = (ours, other) if exporter_first else (other, ours)
    provider.add_span_processor(SimpleSpanProcessor(first))
    inst = PydanticAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    provider.add_span_processor(SimpleSpanProcessor(second))  # registered after instrument(), on purpose
    native_provider = TracerProvider()
    native_exporter = SnapshotExporter()
    native_provider.add_span_processor(SimpleSpanProcessor(native_exporter))
    if native != "off":
        target = provider if native == "same-provider" else native_provider
        Agent.instrument_all(InstrumentationSettings(tracer_provider=target))
    try:
        run_twice()
    finally:
        Agent.instrument_all(False)
        inst.uninstrument()
    for exp in (ours, other):
        spans = exp.semantic()
        traces = {s.trace_id for s in spans}
        assert len(traces) == 2, tree(spans)
        for trace_id in traces:
            run = [s for s in spans if s.trace_id == trace_id]
            assert shape(run, exp.spans) == EXPECTED, tree(exp.spans)
    assert [s.attributes for s in ours.semantic()] == [s.attributes for s in other.semantic()]
    natives = [s for s in (ours.spans if native == "same-provider" else native_exporter.spans)
               if not s.semantic_kind]
    if native == "off":
        assert natives == []
    else:  # the user's own instrumentation still works, alongside ours, in the same two traces
        assert [s.name for s in natives].count("invoke_agent support") == 2
        assert len([s for s in natives if s.name.startswith("execute_tool")]) == 2
        assert {s.trace_id for s in natives} == {s.trace_id for s in ours.semantic()}


def test_pa3_our_content_switch_with_native_content_on(provider: Any, exporter: SnapshotExporter,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """PA-3: our content switch governs our spans even when pydantic-ai's own spans record content."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    inst = PydanticAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider, include_content=True))
    try:
        run_twice()
    finally:
        Agent.instrument_all(False)
        inst.uninstrument()
    ours = exporter.semantic()
    assert len(ours) == 8
    assert not any(MARKER in str(v) for s in ours for v in s.attributes.values())
    native = [s for s in exporter.spans if not s.semantic_kind]
    assert any(MARKER in str(v) for s in native for v in s.attributes.values()), "native content was on"
    assert all(by_id(exporter.spans).get(s.parent_id) is not None or s.parent_id is None for s in exporter.spans)
