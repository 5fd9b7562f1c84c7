"""The same finished spans folded by every path the fold has, for tests that compare them.

* ``fold`` — :func:`otel_agents.exporters.ecp.fold` over the SDK spans;
* ``live`` — the spans replayed through a ``TracerProvider`` with the :class:`ECPFoldingProcessor`, starts and
  ends interleaved in their real order, each made by a tracer of its instrumentation scope: our spans carry their attributes from the start (the span layer sets
  them when it creates the span), another instrumentation's are given theirs as they end (as the peers do);
* ``stream`` — written as OTLP/JSON lines (``OTLPJsonFileExporter``) and streamed back (``otel-agents fold``);
* ``collect`` — encoded as an OTLP/protobuf request, decoded as ``ecp collect`` decodes it and gathered by
  its :class:`TraceGatherer`, each span handed over as it ends.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator

from otel_agents.exporters.ecp import ECPFoldingProcessor, StreamFolder, TraceGatherer, fold
from otel_agents.exporters.file import OTLPJsonFileExporter, read_otlp_json
from otel_agents.exporters.otlp_request import PROTOBUF, decode_request

Envelope = dict[str, Any]


class _Ids(IdGenerator):
    def __init__(self) -> None:
        self.next: list[int] = []

    def generate_span_id(self) -> int:
        return self.next.pop(0)

    def generate_trace_id(self) -> int:
        return self.next.pop(0)


def live(spans: Sequence[ReadableSpan]) -> list[Envelope]:
    """The spans replayed through the folding processor (its clock at the span time)."""
    events = [(s.start_time, 1, s) for s in spans] + [(max(s.end_time, s.start_time), 2, s) for s in spans]
    events.sort(key=lambda e: (e[0], e[1], e[2].context.span_id))
    now = [0]
    got: list[Envelope] = []
    ids = _Ids()
    provider = TracerProvider(id_generator=ids)
    provider.add_span_processor(ECPFoldingProcessor(got.append, clock=lambda: now[0] / 1e9))
    opened: dict[int, Any] = {}
    for time, what, s in events:
        now[0] = time
        if what == 1:
            parent = opened.get(s.parent.span_id) if s.parent is not None else None
            ids.next = [s.context.span_id] if parent is not None else [s.context.trace_id, s.context.span_id]
            context = trace.set_span_in_context(parent if parent is not None else trace.INVALID_SPAN)
            ours = "otel_agents.span.kind" in s.attributes
            scope = s.instrumentation_scope  # each span made by a tracer of its own instrumentation scope
            tracer = provider.get_tracer(scope.name, scope.version) if scope is not None else provider.get_tracer("")
            opened[s.context.span_id] = tracer.start_span(s.name, context=context, kind=s.kind, start_time=time,
                                                          attributes=dict(s.attributes) if ours else None)
        else:
            span = opened[s.context.span_id]
            span.set_attributes(dict(s.attributes))
            span._status = s.status
            span.end(end_time=s.end_time)
    provider.shutdown()
    return got


def streamed(spans: Sequence[ReadableSpan], tmp_path: Path) -> list[Envelope]:
    """The spans written as OTLP/JSON lines, one batch per trace, then streamed back line by line."""
    path = tmp_path / "spans.otlp.jsonl"
    exporter = OTLPJsonFileExporter(path)
    for trace_id in dict.fromkeys(s.context.trace_id for s in spans):
        exporter.export([s for s in spans if s.context.trace_id == trace_id])
    exporter.shutdown()
    return stream_file(path)


def stream_file(path: Path) -> list[Envelope]:
    """``otel-agents fold FILE``: an OTLP/JSON lines file streamed line by line."""
    got: list[Envelope] = []
    folder = StreamFolder(got.append)
    with path.open(encoding="utf-8") as lines:
        for number, text in enumerate(lines, start=1):
            folder.add(read_otlp_json([text]), number)
    folder.finish()
    return got


def collected(spans: Sequence[ReadableSpan]) -> list[Envelope]:
    """The spans as ``ecp collect`` receives them: OTLP/protobuf, decoded, gathered as they end."""
    decoded = decode_request(encode_spans(list(spans)).SerializeToString(), PROTOBUF).spans
    now = [0]
    got: list[Envelope] = []
    gatherer = TraceGatherer(got.append, clock=lambda: now[0] / 1e9)
    for s in sorted(decoded, key=lambda s: s.end_time):
        now[0] = s.end_time
        gatherer.fold_ready()
        gatherer.add([s])
    gatherer.flush("end")
    return got


def every_path(spans: Sequence[ReadableSpan], tmp_path: Path) -> dict[str, list[Envelope]]:
    """The envelopes of ``spans`` by each path, by the path's name."""
    return {"fold": fold(spans), "live": live(spans), "stream": streamed(spans, tmp_path),
            "collect": collected(spans)}


_LATENCY = re.compile(r" latency_ms=[0-9.]+")


def steps(envelope: Envelope) -> tuple:
    """What an envelope says happened, without ids and timings (two runs of the same program compare equal):
    the step lines of the evidence (plain spans and the indentation they add left out), the step counts,
    usage, the tool calls and the agents."""
    metrics = envelope["metrics"]
    lines = [line.lstrip() for line in _LATENCY.sub("", envelope["evaluation_context"]).splitlines()
             if not line.lstrip().startswith("span ")]  # plain spans (a peer's views of our steps are folded so)
    return (envelope["public_output"], lines, envelope.get("usage"),
            {k: metrics[k] for k in ("steps", "model_calls", "tool_calls", "tool_errors", "errors")},
            [(c["name"], c["arguments"], c["result"], c["status"], c["agent"]) for c in envelope["tool_calls"]],
            [(a["name"], a["parent"]) for a in envelope.get("agents", [])])
