"""Streamed responses in the span layer: ``gen_ai.response.time_to_first_chunk`` (and Langfuse's completion start
time) on the model span, the ``time_to_first_chunk`` and ``time_per_output_chunk`` histograms (OTel GenAI v1.41:
model/gen-ai/registry.yaml, model/gen-ai/metrics.yaml): written for streams only, from the times chunks really
arrived, never for a call that did not stream."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.sdk.trace import TracerProvider

from otel_agents._spans import Settings, Telemetry, wrap_stream
from otel_agents._spans import model as model_module
from otel_agents._spans.streams import watch_stream

TTFC = "gen_ai.response.time_to_first_chunk"
STREAM = "gen_ai.request.stream"
COMPLETION_START = "langfuse.observation.completion_start_time"
FIRST = "gen_ai.client.operation.time_to_first_chunk"
PER_CHUNK = "gen_ai.client.operation.time_per_output_chunk"


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def telemetry(provider, reader) -> Telemetry:
    return Telemetry(provider, MeterProvider(metric_readers=[reader]), framework="test")


def points(reader: InMemoryMetricReader) -> dict[str, list]:
    data = reader.get_metrics_data()
    if data is None:
        return {}
    return {m.name: list(m.data.data_points) for rm in data.resource_metrics for sm in rm.scope_metrics
            for m in sm.metrics}


def model_span(telemetry: Telemetry):
    span = telemetry.start_span("model", "gpt-4o")
    span.set_model(request_model="gpt-4o", provider="openai")
    return span


def test_chunk_times_are_the_ones_reported(telemetry, exporter, reader) -> None:
    span = model_span(telemetry)
    start = span._start
    for at in (0.5, 0.75, 1.5):  # the times the chunks arrived (monotonic)
        span.chunk_received(start + at)
    span.set_model(response_model="gpt-4o-2024")  # with the last chunk: on every point, the first's too
    span.end()
    [finished] = exporter.spans
    assert finished.attributes[TTFC] == 0.5
    assert finished.attributes[STREAM] is True
    got = points(reader)
    [first] = got[FIRST]
    assert (first.count, first.sum) == (1, 0.5)
    [per_chunk] = got[PER_CHUNK]
    assert per_chunk.count == 2 and per_chunk.sum == pytest.approx(0.25 + 0.75)
    assert (per_chunk.min, per_chunk.max) == (pytest.approx(0.25), pytest.approx(0.75))
    for point in (first, per_chunk):
        assert point.attributes["gen_ai.response.model"] == "gpt-4o-2024"
        assert "error.type" not in point.attributes


def test_langfuse_completion_start_is_the_span_start_plus_the_time_to_first_chunk(telemetry, exporter) -> None:
    span = model_span(telemetry)
    span.chunk_received(span._start + 1.25)
    span.end()
    [finished] = exporter.spans
    text = finished.attributes[COMPLETION_START]
    assert text.endswith("Z")
    at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert at.timestamp() * 1e9 == pytest.approx(finished.start_time + 1.25e9, abs=1e3)  # to the microsecond


def test_a_call_that_did_not_stream_gets_none_of_it(telemetry, exporter, reader) -> None:
    span = model_span(telemetry)
    span.end()
    [finished] = exporter.spans
    assert not {TTFC, STREAM, COMPLETION_START} & set(finished.attributes)
    got = points(reader)
    assert got["gen_ai.client.operation.duration"][0].count == 1
    assert FIRST not in got and PER_CHUNK not in got


def test_a_wrapped_model_stream_times_every_chunk(telemetry, exporter, reader) -> None:
    def chunks():
        for i in range(4):
            time.sleep(0.02)
            yield i

    before = time.monotonic()
    span = model_span(telemetry)
    assert list(wrap_stream(chunks(), span)) == [0, 1, 2, 3]
    elapsed = time.monotonic() - before
    [finished] = exporter.spans
    ttfc = finished.attributes[TTFC]
    assert 0.02 <= ttfc < elapsed
    got = points(reader)
    [per_chunk] = got[PER_CHUNK]
    assert per_chunk.count == 3 and 0.06 <= per_chunk.sum and ttfc + per_chunk.sum <= elapsed
    assert per_chunk.min >= 0.02


def test_an_async_model_stream_and_a_watched_one_are_timed(telemetry, exporter, reader) -> None:
    async def chunks():
        for i in range(3):
            await asyncio.sleep(0.01)
            yield i

    async def consume():
        return [c async for c in wrap_stream(chunks(), model_span(telemetry))]

    assert asyncio.run(consume()) == [0, 1, 2]
    watched = model_span(telemetry)
    handle = watch_stream(watched)
    handle.chunk("a")
    handle.chunk("b")
    handle.finish()
    assert all(s.attributes[TTFC] >= 0 for s in exporter.spans) and len(exporter.spans) == 2
    got = points(reader)
    assert sum(p.count for p in got[FIRST]) == 2
    assert sum(p.count for p in got[PER_CHUNK]) == 2 + 1


def test_a_stream_of_another_kind_is_not_a_models_output(telemetry, exporter, reader) -> None:
    agent = telemetry.start_span("agent", "helper")
    assert list(wrap_stream(iter([1, 2, 3]), agent)) == [1, 2, 3]
    agent.chunk_received()
    agent.end()
    [finished] = exporter.spans
    assert TTFC not in finished.attributes
    got = points(reader)
    assert FIRST not in got and PER_CHUNK not in got


def test_the_frameworks_own_measurement_replaces_ours(telemetry, exporter, reader) -> None:
    span = model_span(telemetry)
    span.chunk_received(span._start + 0.5)
    span.chunk_received(span._start + 0.6)
    span.set_time_to_first_chunk(0.4)
    span.end()
    only = model_span(telemetry)  # measured by the framework, no chunk seen by us
    only.set_time_to_first_chunk(0.3)
    only.end()
    assert [s.attributes[TTFC] for s in exporter.spans] == [0.4, 0.3]
    got = points(reader)
    assert sum(p.count for p in got[FIRST]) == 2 and sum(p.sum for p in got[FIRST]) == pytest.approx(0.4 + 0.3)
    assert sum(p.count for p in got[PER_CHUNK]) == 1


@pytest.mark.parametrize("value", [None, -0.1, float("nan"), float("inf"), "0.5", True])
def test_no_measurement_no_attribute(telemetry, exporter, reader, value) -> None:
    span = model_span(telemetry)
    span.set_time_to_first_chunk(value)
    span.end()
    [finished] = exporter.spans
    assert TTFC not in finished.attributes
    assert FIRST not in points(reader)


def test_chunks_after_the_end_change_nothing(telemetry, exporter, reader) -> None:
    span = model_span(telemetry)
    span.end()
    span.chunk_received()
    span.set_time_to_first_chunk(0.5)
    [finished] = exporter.spans
    assert TTFC not in finished.attributes
    assert FIRST not in points(reader)


def test_held_chunk_times_are_bounded_and_every_gap_is_recorded(telemetry, reader, monkeypatch) -> None:
    monkeypatch.setattr(model_module, "_CHUNKS_HELD", 8)
    span = model_span(telemetry)
    for i in range(50):
        span.chunk_received(span._start + 1 + i * 0.01)
        assert len(span._chunks) <= 9
    span.end()
    got = points(reader)
    assert sum(p.count for p in got[PER_CHUNK]) == 49
    assert sum(p.sum for p in got[PER_CHUNK]) == pytest.approx(0.49)
    assert got[FIRST][0].sum == pytest.approx(1)


def test_a_sampled_out_stream_still_counts_in_the_metrics(reader) -> None:
    telemetry = Telemetry(TracerProvider(sampler=ALWAYS_OFF), MeterProvider(metric_readers=[reader]))
    span = model_span(telemetry)
    span.chunk_received()
    span.chunk_received()
    span.end()
    got = points(reader)
    assert got[FIRST][0].count == 1 and got[PER_CHUNK][0].count == 1


@pytest.mark.parametrize("vocabularies, written", [
    ("openinference", set()),
    ("langfuse", {STREAM, COMPLETION_START}),  # Langfuse reads gen_ai.request.*: its model parameters
    ("gen_ai", {TTFC, STREAM}),
])
def test_only_the_selected_vocabularies(provider, exporter, vocabularies, written) -> None:
    telemetry = Telemetry(provider, settings=Settings(vocabularies=vocabularies))
    span = model_span(telemetry)
    span.chunk_received()
    span.end()
    [finished] = exporter.spans
    assert {TTFC, STREAM, COMPLETION_START} & set(finished.attributes) == written


def test_request_stream_is_written_for_streaming_requests_only(telemetry, exporter) -> None:
    """OTel GenAI v1.41: gen_ai.request.stream is set if and only if the request streams; a framework's "stream":
    False stays in llm.invocation_parameters (what it was asked) and writes no gen_ai.request.stream."""
    for stream in (False, True):
        span = telemetry.start_span("model", "gpt-4o")
        span.set_model(request_model="gpt-4o", parameters={"stream": stream, "temperature": 0.5})
        span.end()
    plain, streamed = exporter.spans
    assert "gen_ai.request.stream" not in plain.attributes
    assert json.loads(plain.attributes["llm.invocation_parameters"]) == {"stream": False, "temperature": 0.5}
    assert streamed.attributes["gen_ai.request.stream"] is True
