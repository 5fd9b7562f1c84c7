"""Token counts pass one check in the span layer (``otel_agents._spans.usage.token_count``) before they are recorded.

A provider (or a framework, or a user's ``Usage``) may report a count that is not one: past 64 bits (OTLP cannot
carry it: the pinned encoder, 1.45, drops it with an error and a traceback logged for each span; an encoder that
raises fails the whole batch, the application's own spans with it), negative, a ``bool``, a fraction, NaN, an
infinity, text. Such a count is left out, never replaced by a default; the valid counts beside it are recorded,
and every attribute encodes (``tests.spans.encode_otlp``).
"""

from __future__ import annotations

import math

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents._spans import Telemetry, Usage, token_count, token_sum
from tests.spans import encode_otlp

NOT_COUNTS = [2 ** 63, 2 ** 70, -1, True, False, 3.5, math.nan, math.inf, -math.inf, 1e30, "12", b"12", [1], object]
TOKEN_KEYS = ("gen_ai.usage.input_tokens", "llm.token_count.prompt", "gen_ai.usage.output_tokens",
              "llm.token_count.completion", "llm.token_count.total", "gen_ai.usage.cache_read.input_tokens",
              "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.reasoning.output_tokens")


class NumpyLike:
    def __index__(self) -> int:
        return 9


@pytest.mark.parametrize("value", NOT_COUNTS, ids=repr)
def test_what_is_not_a_token_count_is_left_out(value) -> None:
    assert token_count(value) is None
    assert token_sum(5, value) is None  # a sum with a part left out would not be true


@pytest.mark.parametrize("value, count", [(0, 0), (7, 7), (2 ** 63 - 1, 2 ** 63 - 1), (12.0, 12), (NumpyLike(), 9)])
def test_a_token_count_is_kept_as_an_int(value, count) -> None:
    assert token_count(value) == count and type(token_count(value)) is int


def test_a_total_is_made_only_from_counts() -> None:
    assert Usage(3, 4).total_tokens == 7
    assert Usage(True, 4).total_tokens is None and Usage(-3, 10).total_tokens is None  # never 5 nor 6
    assert Usage(2 ** 63 - 1, 1).total_tokens is None  # the sum past 64 bits
    assert token_sum(None, None) is None and token_sum(None, 4) == 4 and token_sum(2 ** 62, 2 ** 62) is None


def _model_span(usage_or_fields, mutate=None):
    memory = InMemorySpanExporter()
    reader = InMemoryMetricReader()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(memory))
    t = Telemetry(tp, MeterProvider(metric_readers=[reader]), framework="test")
    with t.span("agent", "app"):
        span = t.start_span("model", "m")
        usage = Usage(**usage_or_fields)
        if mutate:
            for k, v in mutate.items():
                setattr(usage, k, v)
        span.set_usage(usage)
        span.end()
    spans = memory.get_finished_spans()
    encode_otlp(spans)  # every attribute encodes
    points = [p.attributes["gen_ai.token.type"] + "=" + str(p.sum)
              for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics for m in sm.metrics
              if m.name == "gen_ai.client.token.usage" for p in m.data.data_points]
    model = next(s for s in spans if s.name != "app")
    return {k: v for k, v in model.attributes.items() if k in TOKEN_KEYS}, sorted(points)


@pytest.mark.parametrize("bad", NOT_COUNTS, ids=repr)
def test_a_span_records_the_counts_and_leaves_out_the_rest(bad) -> None:
    attrs, points = _model_span(dict(input_tokens=bad, output_tokens=7, cache_read_tokens=bad,
                                     cache_creation_tokens=2, reasoning_tokens=bad))
    assert attrs == {"gen_ai.usage.output_tokens": 7, "llm.token_count.completion": 7,
                     "gen_ai.usage.cache_creation.input_tokens": 2}
    assert points == ["output=7"]


@pytest.mark.parametrize("bad", NOT_COUNTS, ids=repr)
def test_a_count_assigned_after_the_usage_was_made_is_checked_when_recorded(bad) -> None:
    attrs, points = _model_span(dict(input_tokens=3, output_tokens=7),
                                mutate=dict(input_tokens=bad, total_tokens=bad, reasoning_tokens=bad))
    assert attrs == {"gen_ai.usage.output_tokens": 7, "llm.token_count.completion": 7}
    assert points == ["output=7"]


def test_an_events_integer_past_64_bits_does_not_fail_the_export() -> None:
    """Events go through the span layer too (``SemanticSpan.add_event``): the Claude Agent SDK's rate-limit event
    carries the CLI's numbers as they came (a reset time, a count): one past 64 bits did not encode."""
    from otel_agents.instrumentors.claude_agent_sdk._tracker import Tracker, Turn

    memory = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(memory))
    t = Telemetry(tp, framework="test")
    turn = Turn(t.start_span("agent", "claude"))
    Tracker(t, turn).on_frame({"type": "rate_limit_event",
                               "rate_limit_info": {"status": "allowed", "resetsAt": 2 ** 64, "utilization": 0.5,
                                                   "window": 5, "nested": {"x": 1}}})
    turn.span.end()
    (span,) = memory.get_finished_spans()
    encode_otlp([span])  # every attribute encodes
    (event,) = span.events
    assert event.name == "claude_agent_sdk.rate_limit"
    assert dict(event.attributes) == {"status": "allowed", "resetsAt": str(2 ** 64), "utilization": 0.5, "window": 5}
