"""AG-4 (b), run in its own process (``agno.tracing.setup_tracing`` sets the global tracer provider and
installs OpenInference's Agno instrumentation, both process-wide): our instrumentor on our own provider,
Agno's tracing on as well. Prints a JSON report of what each side exported."""

from __future__ import annotations

import json
import os
import sys

os.environ["AGNO_TELEMETRY"] = "false"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.tracing import setup_tracing  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from otel_agents.instrumentors.agno import AgnoInstrumentor  # noqa: E402
from tests.agno.agents import desk_team, support_agent  # noqa: E402


def ours(memory: InMemorySpanExporter) -> list[dict]:
    return [{"name": s.name, "kind": s.attributes.get("otel_agents.span.kind"), "id": s.context.span_id,
             "parent": s.parent.span_id if s.parent else None, "trace": s.context.trace_id}
            for s in memory.get_finished_spans()]


def main() -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    db = InMemoryDb()
    setup_tracing(db=db)
    native_provider = trace.get_tracer_provider()
    native = InMemorySpanExporter()
    native_provider.add_span_processor(SimpleSpanProcessor(native))
    report: dict = {"native_provider": type(native_provider).__name__}

    support_agent().run("Where is A100?")
    report["agent_run"] = ours(memory)
    report["native_agent_run"] = len(native.get_finished_spans())
    memory.clear()
    native.clear()
    desk_team().run("What is the weather?")
    report["team_run"] = ours(memory)
    memory.clear()
    native.clear()

    instrumentor.uninstrument()
    support_agent().run("Where is A100?")
    report["after_uninstrument_ours"] = len(memory.get_finished_spans())
    report["after_uninstrument_native"] = len(native.get_finished_spans())
    print(json.dumps(report))


if __name__ == "__main__":
    main()
