"""The span layer's failed attempt (``SemanticSpan.record_failed_attempt``): a failure another attempt of the same
call may still answer (LiteLLM's Router falling back after a stream broke before its first chunk). Its exception
event is written at once; the span's status, ``error.type``, token counts and metrics are the answer's when a
finish reason settles it, and the failure's, exactly as ``record_error`` writes them, when nothing does or when
the failure is raised on to the caller. Spans go to the SDK's in-memory exporter, metric points to its in-memory
reader."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import StatusCode

from otel_agents._spans import Settings, Telemetry, Usage
from otel_agents.semconv import attributes as A


class StreamBroke(ConnectionError):
    """The failure of an attempt (qualified name ``tests.test_span_failed_attempts.StreamBroke``)."""


def _raised(message: str = "peer closed before the first chunk") -> StreamBroke:
    try:
        raise StreamBroke(message)
    except StreamBroke as exc:  # with its traceback, as a caller catches it
        return exc


class Recorded:
    """What a test's spans and metric points were: the SDK's in-memory exporter and reader."""

    def __init__(self, sampled: bool = True) -> None:
        self.exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider(sampler=None if sampled else ALWAYS_OFF)
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.tracer_provider = tracer_provider

    def telemetry(self, content: bool = True) -> Telemetry:
        return Telemetry(self.tracer_provider, MeterProvider(metric_readers=[self.reader]), framework="test",
                         settings=Settings(capture_content=content))

    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.exporter.get_finished_spans()

    def token_sums(self) -> dict[Any, int]:
        """The tokens counted by ``gen_ai.client.token.usage``, by ``gen_ai.token.type``."""
        data = self.reader.get_metrics_data()
        return {p.attributes["gen_ai.token.type"]: p.sum for rm in data.resource_metrics for sm in rm.scope_metrics
                for m in sm.metrics if m.name == "gen_ai.client.token.usage" for p in m.data.data_points}

    def duration_error_types(self) -> dict[Any, int]:
        """The calls counted by ``gen_ai.client.operation.duration``, by ``error.type`` (``None``: not failed)."""
        data = self.reader.get_metrics_data()
        return {p.attributes.get(A.ERROR_TYPE): p.count for rm in data.resource_metrics for sm in rm.scope_metrics
                for m in sm.metrics if m.name == "gen_ai.client.operation.duration" for p in m.data.data_points}


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    r = Recorded()
    yield r
    r.tracer_provider.shutdown()


def _usage(span: ReadableSpan) -> dict[str, Any]:
    return {k: v for k, v in span.attributes.items() if k.startswith(("gen_ai.usage.", "llm.token_count."))}


def _events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(e.name, dict(e.attributes)) for e in span.events]


QUALIFIED = f"{__name__}.StreamBroke"


def test_a_failed_attempt_a_later_answer_settles_leaves_the_span_the_answer_s(recorded: Recorded) -> None:
    """The attempt's exception event (type, message, stacktrace, as ``record_error`` writes them), then the
    answer's finish reason: no status ERROR, no ``error.type`` on the span or on its duration point, the answer's
    finish reason and token counts (a count given while the attempt was pending, held until the reason, is
    replaced by the more complete one given after it)."""
    telemetry = recorded.telemetry()
    failure = _raised()
    span = telemetry.start_span("model", "gpt-4o")
    span.record_failed_attempt(failure)
    span.set_usage(Usage(3))
    span.set_finish_reasons(["stop"])  # the answering attempt's response ended
    span.set_usage(Usage(9, 4))
    span.end()
    twin = telemetry.start_span("model", "gpt-4o")
    twin.record_error(failure)
    twin.end()
    answered, failed = recorded.spans()
    assert answered.status.status_code is StatusCode.UNSET and A.ERROR_TYPE not in answered.attributes
    assert answered.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert (answered.attributes[A.GEN_AI_USAGE_INPUT_TOKENS], answered.attributes[A.GEN_AI_USAGE_OUTPUT_TOKENS]) \
        == (9, 4)
    assert _events(answered) == _events(failed)
    [(name, event)] = _events(answered)
    assert (name, event["exception.type"], event["exception.message"]) == (
        "exception", QUALIFIED, "peer closed before the first chunk")
    assert "in _raised" in event["exception.stacktrace"]
    assert recorded.duration_error_types() == {None: 1, QUALIFIED: 1}


@pytest.mark.parametrize("order", ["usage_then_reason", "reason_then_usage", "reason_alone"])
def test_the_answer_s_token_counts_are_the_span_s_whichever_comes_first(recorded: Recorded, order: str) -> None:
    """The failed attempt's counts, given before it failed, are withdrawn; the answer's, given before its finish
    reason (smolagents' order) or after it (LiteLLM's stream's), are the span's and the token metric's, exactly;
    an answer that gives none leaves none (not the failed attempt's in its place)."""
    span = recorded.telemetry().start_span("model", "gpt-4o")
    span.set_usage(Usage(50, 7, cache_read_tokens=40))  # the attempt that then failed
    span.record_failed_attempt(_raised())
    if order == "usage_then_reason":
        span.set_usage(Usage(9, 4))
    span.set_finish_reasons(["stop"])
    if order == "reason_then_usage":
        span.set_usage(Usage(9, 4))
    span.end()
    [answered] = recorded.spans()
    assert answered.status.status_code is StatusCode.UNSET
    if order == "reason_alone":
        assert (_usage(answered), recorded.token_sums()) == ({}, {})
    else:
        assert _usage(answered) == {A.GEN_AI_USAGE_INPUT_TOKENS: 9, A.LLM_TOKEN_COUNT_PROMPT: 9,
                                    A.GEN_AI_USAGE_OUTPUT_TOKENS: 4, A.LLM_TOKEN_COUNT_COMPLETION: 4,
                                    A.LLM_TOKEN_COUNT_TOTAL: 13}
        assert recorded.token_sums() == {"input": 9, "output": 4}


@pytest.mark.parametrize("content", [True, False], ids=["content", "no_content"])
def test_a_failed_attempt_raised_on_after_an_answer_fails_the_span(recorded: Recorded, content: bool) -> None:
    """A finish reason settled the attempt, yet its very exception is recorded again (raised on to the caller):
    the call failed, as when it is recorded again while pending. Status ERROR and ``error.type`` as
    ``record_error`` writes them, one ``exception`` event, the duration point's ``error.type``; the answer's
    finish reason and token counts stay (that response was generated)."""
    telemetry = recorded.telemetry(content)
    failure = _raised()
    span = telemetry.start_span("model", "gpt-4o")
    span.record_failed_attempt(failure)
    span.set_finish_reasons(["stop"])
    span.set_usage(Usage(9, 4))
    span.record_error(failure)
    span.end()
    twin = telemetry.start_span("model", "gpt-4o")
    twin.record_error(failure)
    twin.end()
    raised, failed = recorded.spans()
    assert (raised.status.status_code, raised.status.description) == (StatusCode.ERROR, failed.status.description)
    assert raised.attributes[A.ERROR_TYPE] == QUALIFIED
    assert _events(raised) == _events(failed) and len(raised.events) == 1
    assert raised.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert (raised.attributes[A.GEN_AI_USAGE_INPUT_TOKENS], raised.attributes[A.GEN_AI_USAGE_OUTPUT_TOKENS]) == (9, 4)
    assert recorded.duration_error_types() == {QUALIFIED: 2}


@pytest.mark.parametrize("content", [True, False], ids=["content", "no_content"])
@pytest.mark.parametrize("how", ["ended", "ended_with_it", "recorded_again", "stopped"])
def test_a_failed_attempt_nothing_answers_fails_the_span_as_record_error_would(recorded: Recorded, how: str,
                                                                                content: bool) -> None:
    """Nothing settles the attempt: the span ends (a caller swallowed the failure, or left the stream), ends with
    it (``end(error=...)``), records it again (raised on to the caller: a finish reason written after that settles
    nothing) or is stopped (a cancellation: control flow). The span is what ``record_error`` makes of the failure:
    status ERROR with its description, ``error.type`` its qualified class name, one ``exception`` event (its
    message only with content on), the duration point's ``error.type``; no token counts (those given while it
    was pending were held for an answer: dropped, from the span and the token metric)."""
    telemetry = recorded.telemetry(content)
    failure = _raised()
    span = telemetry.start_span("model", "gpt-4o")
    span.record_failed_attempt(failure)
    span.set_usage(Usage(3, 0))
    if how == "recorded_again":
        span.record_error(failure)
        span.set_finish_reasons(["stop"])  # a framework's default, after the failure reached it: no answer
    span.end(error=failure if how == "ended_with_it" else KeyboardInterrupt() if how == "stopped" else None)
    twin = telemetry.start_span("model", "gpt-4o")
    twin.record_error(failure)
    twin.end()
    unanswered, failed = recorded.spans()
    assert unanswered.status.status_code is StatusCode.ERROR
    assert unanswered.status.description == failed.status.description == (
        "StreamBroke: peer closed before the first chunk" if content else "StreamBroke")
    assert unanswered.attributes[A.ERROR_TYPE] == QUALIFIED
    assert _events(unanswered) == _events(failed) and len(unanswered.events) == 1
    assert _usage(unanswered) == {} and recorded.token_sums() == {}
    assert recorded.duration_error_types() == {QUALIFIED: 2}


@pytest.mark.parametrize("then", ["another_exception", "incomplete", "in_band"])
def test_an_error_after_a_failed_attempt_is_the_span_s(recorded: Recorded, then: str) -> None:
    """The fallback failed too (its own exception), its stream was cut short, or the call reported a failure
    in-band: that error is the span's (status, ``error.type``, duration point), the attempt stays an event."""
    telemetry = recorded.telemetry()
    span = telemetry.start_span("model", "gpt-4o")
    span.record_failed_attempt(_raised())
    if then == "another_exception":
        span.record_error(TimeoutError("the fallback did not answer"))
    elif then == "incomplete":
        span.mark_incomplete("finish_reason")
    else:
        span.set_error("overloaded")
    span.end()
    [ended] = recorded.spans()
    expected = {"another_exception": "TimeoutError", "incomplete": A.STREAM_INCOMPLETE, "in_band": "overloaded"}[then]
    assert (ended.status.status_code, ended.attributes[A.ERROR_TYPE]) == (StatusCode.ERROR, expected)
    assert [e["exception.type"] for _, e in _events(ended)] == (
        [QUALIFIED, "TimeoutError"] if then == "another_exception" else [QUALIFIED])
    assert recorded.duration_error_types() == {expected: 1}


@pytest.mark.parametrize("answered", [True, False])
def test_a_sampled_out_span_s_duration_point_is_the_outcome_s(answered: bool) -> None:
    """A span that records nothing (sampled out) still feeds the duration metric: without ``error.type`` when the
    attempt was answered, with the failure's when it was not."""
    recorded = Recorded(sampled=False)
    span = recorded.telemetry().start_span("model", "gpt-4o")
    span.record_failed_attempt(_raised())
    if answered:
        span.set_finish_reasons(["stop"])
    span.end()
    assert recorded.spans() == ()
    assert recorded.duration_error_types() == {None if answered else QUALIFIED: 1}
