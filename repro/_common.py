"""Shared setup for the repro scripts: a provider exporting to memory, a tree printer, open-span checks."""
import logging, warnings, sys
from opentelemetry import trace, context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

logging.basicConfig(level=logging.WARNING)
warnings.simplefilter("default")


class Opens:
    """Counts spans started and not ended."""
    def __init__(self): self.open = {}
    def on_start(self, span, parent_context=None): self.open[span.context.span_id] = span
    def on_end(self, span): self.open.pop(span.context.span_id, None)
    def shutdown(self): pass
    def force_flush(self, t=0): return True
    def _on_ending(self, span): pass


def setup():
    exporter = InMemorySpanExporter()
    opens = Opens()
    provider = TracerProvider()
    provider.add_span_processor(opens)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider, exporter, opens


def tree(exporter, keys=("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons",
                         "otel_agents.run.stop_reason", "otel_agents.stream.abandoned", "error.type",
                         "otel_agents.control_flow")):
    spans = exporter.get_finished_spans()
    ids = {s.context.span_id: s for s in spans}
    kids = {}
    for s in spans:
        p = s.parent.span_id if s.parent else None
        kids.setdefault(p if p in ids else None, []).append(s)
    out = []
    def walk(s, d):
        attrs = {k.split(".")[-1]: s.attributes[k] for k in keys if k in (s.attributes or {})}
        out.append("  " * d + f"{s.name} [{s.status.status_code.name}] {attrs}")
        for k in sorted(kids.get(s.context.span_id, []), key=lambda x: x.start_time): walk(k, d + 1)
    for r in sorted(kids.get(None, []), key=lambda x: x.start_time):
        out.append(f"-- trace {r.context.trace_id:032x}"[:20]); walk(r, 0)
    return "\n".join(out)


def check(exporter, opens, label=""):
    print(f"==== {label}")
    print(tree(exporter))
    cur = trace.get_current_span()
    print("open spans:", [s.name for s in opens.open.values()], "current:", cur.is_recording() and cur.name)
    exporter.clear()
