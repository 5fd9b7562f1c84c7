"""What the instrumentation does *not* do (issue #10, overhead): under ``suppress_instrumentation()``
nothing of ours runs in the run; with content off, or on a sampled-out span, no message or argument
is converted. Checked by behaviour (spans, current span, bookkeeping) and by counting calls to the
converters, never by timing."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor, _convert
from tests.spans import SnapshotExporter, spy_calls

from .agents import Deps, lookup_agent

CONVERTERS = ("chat_messages", "response_message", "tool_arguments", "request_parameters")


@pytest.fixture
def converted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the ``_convert`` functions called during the test, in call order."""
    return spy_calls(monkeypatch, [(_convert, name) for name in CONVERTERS])


def test_suppressed_run_adds_nothing(instrumented: Any, exporter: SnapshotExporter, app_tracer: Any,
                                     converted: list[str]) -> None:
    """Inside ``suppress_instrumentation()`` a run (sync and streamed) makes no span, converts nothing,
    keeps no run open, and its tool sees the application's span as current (nothing of ours shadows it);
    the next run outside is instrumented as usual."""
    seen: list[Any] = []
    deps = Deps(marker="S", probe=lambda _tag: seen.append(trace.get_current_span()))
    with app_tracer.start_as_current_span("app") as app:
        with suppress_instrumentation():
            result = lookup_agent().run_sync("order 1", deps=deps)
            with lookup_agent().run_stream_sync("order 2", deps=deps) as streamed:
                streamed.get_output()
    assert result.output == "answer: found S"
    assert [s.name for s in exporter.spans] == ["app"]
    assert converted == [] and instrumented.open_runs() == 0
    assert seen == [app, app]

    lookup_agent().run_sync("order 3", deps=Deps(marker="T"))
    assert sorted(s.semantic_kind for s in exporter.semantic()) == ["agent", "model", "model", "tool"]


def test_content_off_converts_no_message(instrument: Any, exporter: SnapshotExporter, converted: list[str]) -> None:
    """Content off: no message history, output message or tool arguments are converted (they would be
    dropped); request parameters and finish reasons, which are not content, are still recorded."""
    instrument(capture_content=False)
    lookup_agent().run_sync("order 9", deps=Deps(marker="Q"), model_settings={"temperature": 0.2})
    assert converted == ["request_parameters", "request_parameters"]
    first, second = exporter.semantic("model")
    assert first.attributes["gen_ai.request.temperature"] == 0.2
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    tool = exporter.semantic("tool")[0]
    assert tool.attributes["gen_ai.tool.call.id"] == "call_1"
    assert "gen_ai.tool.call.arguments" not in tool.attributes


def test_sampled_out_run_converts_nothing(converted: list[str]) -> None:
    """A sampler that drops every span: the run works, no span is exported, nothing is converted."""
    exporter = SnapshotExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = PydanticAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        assert lookup_agent().run_sync("order 5", deps=Deps(marker="Z")).output == "answer: found Z"
        assert inst.open_runs() == 0
    finally:
        inst.uninstrument()
        provider.shutdown()
    assert exporter.spans == [] and converted == []
