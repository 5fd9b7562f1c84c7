"""A process that sends parts of agent runs to an OTLP/HTTP endpoint, as an instrumented agent or tool server would.

    python emit.py ROLE ENDPOINT SPEC.json

SPEC.json: ``[{"trace_id": hex32, "agent_span_id": hex16, "tools": ["lookup_order", ...]}, ...]``.

* ``ROLE=root``: for each trace, the agent span (with exactly the given trace and span ids) and one
  model span under it: the agent's process.
* ``ROLE=tools``: for each trace, one tool span per name, each a child of the (remote) agent span:
  a tool server's process.

Spans go through the SDK's ``BatchSpanProcessor`` and its OTLP/HTTP protobuf exporter with gzip (the
batching and compression of a real deployment); the process exits once they are exported. An ENDPOINT
``file:PATH`` writes OTLP/JSON lines to PATH instead (``OTLPJsonFileExporter``: one file per process);
``grpc:HOST:PORT`` sends OTLP/gRPC (gzip); ``configure`` takes the provider ``otel_agents.configure()`` builds
from the environment alone (``OTEL_AGENTS_EXPORTERS``, ``OTEL_EXPORTER_OTLP_*``), as an application would.
"""

from __future__ import annotations

import json
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from otel_agents._spans import Settings, Telemetry
from otel_agents.semconv import Kind


class _Chosen(RandomIdGenerator):
    """Hands out the ids queued in ``next_ids`` first (the agent span's), then random ones."""

    def __init__(self) -> None:
        self.trace_ids: list[int] = []
        self.span_ids: list[int] = []

    def generate_trace_id(self) -> int:
        return self.trace_ids.pop() if self.trace_ids else super().generate_trace_id()

    def generate_span_id(self) -> int:
        return self.span_ids.pop() if self.span_ids else super().generate_span_id()


def _exporter(endpoint: str):
    if endpoint.startswith("grpc:"):  # OTLP/gRPC, as the Collector's loadbalancing exporter sends
        from grpc import Compression as GrpcCompression
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter(endpoint=endpoint.removeprefix("grpc:"), insecure=True, compression=GrpcCompression.Gzip)
    if endpoint.startswith("file:"):
        from otel_agents.exporters.file import OTLPJsonFileExporter

        return OTLPJsonFileExporter(endpoint.removeprefix("file:"))
    return OTLPSpanExporter(endpoint=endpoint, compression=Compression.Gzip)


class _Counted(SpanExporter):
    """``inner``, the spans of its failed exports counted: :func:`main` exits 1 when some were lost, so a test
    waiting for them fails where they were lost, not later as an envelope without them."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.lost = 0

    def export(self, spans):
        result = self.inner.export(spans)
        if result is not SpanExportResult.SUCCESS:
            self.lost += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


def main(role: str, endpoint: str, spec_path: str) -> None:
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    ids = _Chosen()
    exporter = None
    if endpoint == "configure":  # exporters and all from the environment
        import otel_agents

        provider = otel_agents.configure(frameworks=[]).tracer_provider
        provider.id_generator = ids  # before the first tracer: each takes the provider's
    else:
        provider = TracerProvider(resource=Resource.create({"service.name": f"emit-{role}"}), id_generator=ids)
        exporter = _Counted(_exporter(endpoint))
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50, max_export_batch_size=64))
    telemetry = Telemetry(provider, framework="manual", settings=Settings(capture_content=True))
    for run in spec:
        trace_id, agent_id = int(run["trace_id"], 16), int(run["agent_span_id"], 16)
        if role == "root":
            ids.trace_ids.append(trace_id)
            ids.span_ids.append(agent_id)
            agent = telemetry.start_span(Kind.AGENT, "support", parent=trace.set_span_in_context(trace.INVALID_SPAN))
            agent.set_input("Where is my order?")
            model = telemetry.start_span(Kind.MODEL, "fake-model", parent=agent)
            model.end()
            agent.set_output("It shipped.")
            agent.end()
        else:
            parent = trace.NonRecordingSpan(trace.SpanContext(trace_id, agent_id, is_remote=True,
                                                              trace_flags=trace.TraceFlags(1)))
            for name in run["tools"]:
                tool = telemetry.start_span(Kind.TOOL, name, parent=trace.set_span_in_context(parent),
                                            attributes={"gen_ai.tool.name": name})
                tool.set_input({"order_id": "A100"})
                tool.set_output("shipped")
                tool.end()
    provider.shutdown()  # exports everything still batched
    if exporter is not None and exporter.lost:
        sys.exit(f"emit.py {role}: {exporter.lost} span(s) not exported to {endpoint}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
