"""The benchmarks' exported-bytes measurement (issue 40 item 4): a run's bytes are what its spans add to an
OTLP request, and the proposed byte targets compare like with like."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from benchmarks.exported_bytes import proposed_targets, wire_size


def _spans(n: int) -> list:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.get_empty())
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("t")
    for i in range(n):
        attributes = {"gen_ai.input.messages": "x" * 120, "gen_ai.usage.input_tokens": i}
        tracer.start_span("chat m", attributes=attributes).end()
    return list(memory.get_finished_spans())


def test_bytes_per_run_is_what_the_spans_add_to_a_request() -> None:
    one, two = _spans(1), _spans(2)
    per_span = wire_size(one)["bytes_per_run"]
    # the request grows by exactly one span's bytes when a span is added (the envelope's length prefixes keep
    # their width at these sizes), and the resource and scope are not counted in bytes_per_run
    assert len(encode_spans(two).SerializeToString()) - len(encode_spans(one).SerializeToString()) == per_span
    assert wire_size(two)["bytes_per_run"] == 2 * per_span
    assert wire_size(one)["request_bytes"] > per_span > 120
    assert wire_size(one)["spans"] == 1 and wire_size([])["bytes_per_run"] == 0


def _measured(**variants: tuple[int, int]) -> dict:
    return {"variants": {name: {"spans": spans, "bytes_per_run": size} for name, (spans, size) in variants.items()}}


def test_proposed_byte_targets() -> None:
    measured = _measured(ours=(6, 9000), ours_gen_ai=(6, 3000), ours_openinference=(6, 6000), ours_langfuse=(6, 2900),
                         ours_gen_ai_no_content=(6, 1800), openinference=(3, 7000), otel_genai=(1, 400))
    targets = proposed_targets(measured, ["openinference", "otel_genai"], without_content={"otel_genai"})
    # ours in gen_ai alone against all three, the other two vocabularies beside it
    assert targets["ours_one_vocabulary_bytes_vs_ours"] == {
        "target": 0.5, "ratio": 0.333, "exact": True, "verdict": "met", "vocabulary": "gen_ai",
        "others": {"openinference": 0.667, "langfuse": 0.322}}
    # in OpenInference's vocabulary; ours makes 2× its spans (over 1.5×), so per span
    assert targets["ours_openinference_bytes_per_span_vs_openinference"]["ratio"] == round((6000 / 6) / (7000 / 3), 3)
    # a peer recording no content: ours in gen_ai with content off, per span (6 spans against 1)
    assert targets["ours_gen_ai_no_content_bytes_per_span_vs_otel_genai"] == {
        "target": 1.0, "ratio": 0.75, "exact": True, "verdict": "met"}
    measured["variants"]["ours_gen_ai"]["bytes_per_run"] = 5000
    assert proposed_targets(measured, [], set())["ours_one_vocabulary_bytes_vs_ours"]["verdict"] == "missed"
    # a peer that made no span has no ratio
    measured["variants"]["otel_genai"]["spans"] = 0
    assert not any(k.endswith("_vs_otel_genai") for k in proposed_targets(measured, ["otel_genai"], {"otel_genai"}))
