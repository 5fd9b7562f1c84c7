"""Shared by the repro scripts: a provider with an in-memory exporter and the live ECP fold; ``show()`` prints the
span tree (kind, status, error.type, denied, tool name/id) and the envelope's tool calls."""
from __future__ import annotations

import json

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents.exporters.ecp import ECPFoldingProcessor

memory = InMemorySpanExporter()
envelopes: list = []
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(memory))
provider.add_span_processor(ECPFoldingProcessor(envelopes.append))


def show() -> None:
    spans = sorted(memory.get_finished_spans(), key=lambda s: s.start_time)
    ids = {s.context.span_id: s for s in spans}

    def depth(s):
        d = 0
        while s.parent is not None and s.parent.span_id in ids:
            s, d = ids[s.parent.span_id], d + 1
        return d

    for s in spans:
        a = s.attributes
        extra = {k: a[k] for k in ("error.type", "otel_agents.tool.denied", "gen_ai.tool.name", "gen_ai.tool.call.id",
                                   "gen_ai.tool.call.arguments", "gen_ai.tool.call.result") if k in a}
        print("  " * depth(s) + f"{s.name} [{a.get('otel_agents.span.kind', a.get('gen_ai.operation.name'))}] "
              f"{s.status.status_code.name} {s.status.description or ''} len={s.end_time - s.start_time} {extra}")
        for e in s.events:
            print("  " * depth(s) + f"   event {e.name} {dict(e.attributes or {}).get('exception.type')}")
    for env in envelopes:
        print("envelope", json.dumps({k: v for k, v in env.items() if k in ("status", "error", "metrics", "evidence")})[:600])
        print("envelope status", env.get("status"), "tool_calls",
              json.dumps([(c.get("name"), c.get("id"), c.get("status")) for c in env.get("tool_calls", [])]))
