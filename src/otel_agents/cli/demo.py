"""``otel-agents demo``: the main job, offline and without an API key.

Until the ECP demo lands, it runs a small customer-support run through the span
layer and prints the semantic span tree it produced.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the offline demo")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from .._spans import ChatMessage, Telemetry, ToolCallRequest, Usage

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    t = Telemetry(provider, framework="demo")
    with t.span("agent", "support") as agent:
        agent.set_input("Where is order A100?")
        model = t.start_span("model", "fake-model", parent=agent)
        model.set_model(request_model="fake-model", provider="fake")
        model.set_messages(input=[ChatMessage("user", "Where is order A100?")],
                           output=[ChatMessage("assistant", tool_calls=[ToolCallRequest("lookup_order", {"order_id": "A100"}, "c1")],
                                               finish_reason="tool_calls")])
        model.set_usage(Usage(12, 6))
        model.end()
        with t.span("tool", "lookup_order") as tool:
            tool.set_tool("lookup_order", call_id="c1", arguments={"order_id": "A100"})
            tool.set_tool_result({"status": "shipped"})
        agent.set_output("Order A100 has shipped.")
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time)
    depth = {}
    for s in spans:
        d = depth.get(s.parent.span_id, -1) + 1 if s.parent else 0
        depth[s.context.span_id] = d
        print(f"{'  ' * d}{s.name}  [{s.attributes.get('otel_agents.span.kind')}]")
    return 0
