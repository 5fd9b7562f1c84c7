"""Shared setup for the repros: an in-memory exporter on a fresh provider."""
import json, sys, os
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))


def show(title):
    spans = exporter.get_finished_spans()
    print(f"== {title}: {len(spans)} spans")
    for s in spans:
        a = dict(s.attributes)
        keep = {k: v for k, v in a.items() if any(x in k for x in ("usage", "finish", "response.id", "error", "abandon", "output.value", "choice", "retr", "attempt", "incomplete", "tool.name", "operation", "mcp", "kind"))}
        print(" ", s.name, "parent=", s.parent.span_id if s.parent else None, "id=", s.context.span_id, s.status.status_code.name, keep,
              [e.name for e in s.events])
    exporter.clear()
