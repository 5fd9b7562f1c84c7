"""Langfuse mapping conformance (issue 9): our spans, as the ``langfuse`` preset puts them on the
wire, checked against Langfuse's documented OpenTelemetry mapping (``langfuse_mapping.py``).

This is not a Langfuse server: each framework's example is exported by the real preset to a local
OTLP/HTTP receiver on 127.0.0.1, the protobuf bodies are decoded, and every semantic span must map
the way the semantic map intends — observation type from ``langfuse.observation.type``, and the
same type from ``openinference.span.kind`` and from ``gen_ai.operation.name`` wherever Langfuse maps
those (older Langfuse versions read only them); inputs/outputs read from our keys and not shadowed;
usage and model names on generations only (Langfuse sums usage over every observation).
The request itself (path, Basic auth, protobuf) is checked too.
"""

from __future__ import annotations

import base64
import json

import pytest

from otel_agents import presets
from otel_agents.semconv import KIND_TABLE, Kind
from tests.backends import langfuse_mapping as lf
from tests.backends import runs
from tests.frameworks import rows_here
from tests.backends.receiver import Receiver

PUBLIC, SECRET = "pk-lf-conformance-1234", "sk-lf-conformance-SECRET-5678"
MODEL_TYPES = {"GENERATION", "EMBEDDING"}


def _preset(receiver: Receiver) -> presets.ExporterPreset:
    return presets.langfuse(host=receiver.url, public_key=PUBLIC, secret_key=SECRET)


def _expected_type(attrs: dict) -> str:
    spec = KIND_TABLE[Kind(attrs["otel_agents.span.kind"])]
    if attrs["otel_agents.span.kind"] == "skill" and attrs.get("openinference.span.kind") == "CHAIN":
        return "CHAIN"  # a multi-step skill
    return spec.langfuse.upper()


@pytest.mark.parametrize("framework", rows_here(list(runs.RUNS)))
def test_mapping_conformance(receiver: Receiver, run_configured, framework: str) -> None:
    receiver.clear()
    sent = run_configured(framework, [_preset(receiver)], vocabularies="langfuse")  # what Langfuse reads, alone
    wire = receiver.spans()
    assert {s.span_id for s in wire} == {f"{s.span_id:016x}" for s in sent}, "every span reached the receiver"
    semantic = [s for s in wire if "otel_agents.span.kind" in s.attributes]
    assert semantic

    types = {}
    for span in semantic:
        attrs = span.attributes
        where = f"{span.name} ({attrs['otel_agents.span.kind']})"
        # Observation type: the explicit key decides, and the two fallbacks agree where Langfuse maps them.
        observed = lf.observation_type(attrs)
        types[span.span_id] = observed
        assert observed == _expected_type(attrs), where
        for key in ("openinference.span.kind", "gen_ai.operation.name"):
            assert lf.type_from(key, attrs) in (None, observed), f"{where}: {key} says otherwise"
        # Langfuse's vocabulary alone: the explicit type, no OpenInference kind (nor any other OpenInference key).
        assert "openinference.span.kind" not in attrs and not any(k.startswith("llm.") for k in attrs), where

        # Input/output: Langfuse reads ours (OpenInference input.value/output.value), nothing shadows them.
        got_in, got_out, source = lf.input_output(attrs, span.events)
        if "input.value" in attrs or "output.value" in attrs:
            assert source == "input.value", f"{where}: Langfuse would read {source}"
            assert (got_in, got_out) == (attrs.get("input.value"), attrs.get("output.value")), where
        if attrs.get("input.mime_type") == "application/json":
            json.loads(attrs["input.value"])  # Langfuse renders JSON input as JSON
        if observed == "TOOL":
            assert got_in and got_out is not None, f"{where}: a tool shows its arguments and result"

        # Usage and model only on generations (and embeddings).
        if lf.usage(attrs):
            assert observed in MODEL_TYPES, f"{where}: usage outside a generation would be summed twice"
        if lf.model_name(attrs):
            assert observed in MODEL_TYPES, f"{where}: a model name outside a generation"
        if "gen_ai.tool.name" in attrs:  # Langfuse names the observation after it
            assert observed == "TOOL", where

    kinds = {types[s.span_id] for s in semantic}
    expected = {lf.BY_OPENINFERENCE_KIND[k] for k in runs.EXPECTED_KINDS[framework]}
    assert expected <= kinds, kinds
    if framework in runs.REPORTS_USAGE:
        generations = [s for s in semantic if types[s.span_id] == "GENERATION"]
        assert any({"input", "output"} <= lf.usage(s.attributes).keys() for s in generations)
        assert all(lf.model_name(s.attributes) for s in generations)
    # The run's root is what Langfuse shows as the trace's input and output.
    roots = [s for s in semantic if s.parent_id not in {w.span_id for w in wire}]
    assert len(roots) == 1 and all(lf.input_output(roots[0].attributes, roots[0].events)[:2]), roots


def test_langfuse_preset_request(receiver: Receiver) -> None:
    """The preset's request: POST {host}/api/public/otel/v1/traces, Basic auth of public:secret,
    OTLP protobuf that decodes to our span."""
    from otel_agents import configure

    receiver.clear()
    config = configure(exporters=[_preset(receiver)], frameworks=[], set_global=False)
    config.tracer_provider.get_tracer("t").start_span("one").end()
    config.shutdown()

    (request,) = receiver.requests
    assert request.method == "POST"
    assert request.path == "/api/public/otel/v1/traces"
    assert request.headers["authorization"] == "Basic " + base64.b64encode(f"{PUBLIC}:{SECRET}".encode()).decode()
    assert request.headers["content-type"] == "application/x-protobuf"
    assert [s.name for s in receiver.spans()] == ["one"]


def test_langfuse_preset_needs_both_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    with pytest.raises(ValueError, match="LANGFUSE_PUBLIC_KEY") as caught:
        presets.langfuse()
    assert SECRET not in str(caught.value)


def test_langfuse_preset_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGFUSE_HOST", "https://langfuse.example.internal/")
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    preset = presets.langfuse()
    assert preset.details["endpoint"] == "https://langfuse.example.internal/api/public/otel/v1/traces"
    assert preset.batch
    assert SECRET not in repr(preset) and SECRET[3:] not in repr(preset)
