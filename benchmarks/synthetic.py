"""A synthetic trace set for the exporter benchmarks: one typical agent run, made by
the real span layer, then stamped out with fresh ids.

The template run (6 spans) is an agent that asks a model, calls a tool, delegates
to a sub-agent whose tool fails, and answers — every kind of fact the ECP fold
reads (messages, tool calls, an error, usage, delegation). Copies share the
template's (immutable) attribute mappings and get new trace and span ids and
shifted timestamps, so a large set costs little memory to build.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterator

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, TraceFlags

from otel_agents._spans import ChatMessage, Settings, Telemetry, ToolCallRequest, Usage


def template_run() -> list[ReadableSpan]:
    """The template: one agent run from the span layer (content on), its spans in end order."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tel = Telemetry(provider, framework="manual", settings=Settings(capture_content=True))
    question = "What is the weather in Paris?"
    with tel.span("agent", "supervisor") as agent:
        agent.set_agent("supervisor")
        agent.set_input(question)
        with tel.span("model", "gpt-4o") as model:
            model.set_model(request_model="gpt-4o", response_model="gpt-4o-2024-08-06", provider="openai",
                            parameters={"temperature": 0.2, "max_tokens": 256})
            model.set_messages(input=[ChatMessage("system", "Be brief."), ChatMessage("user", question)],
                               output=[ChatMessage("assistant", None, [ToolCallRequest("search", {"q": "Paris"},
                                                                                       "call_1")],
                                                   finish_reason="tool_calls")])
            model.set_usage(Usage(input_tokens=100, output_tokens=20))
        with tel.span("tool", "search") as tool:
            tool.set_tool("search", call_id="call_1", arguments={"q": "Paris"})
            tool.set_tool_result({"forecast": "sunny", "temperature_c": 21})
        with tel.span("agent", "researcher") as sub:
            sub.set_agent("researcher")
            try:
                with tel.span("tool", "lookup") as failing:
                    failing.set_tool("lookup", arguments="Atlantis")
                    raise ValueError("unknown city")
            except ValueError:
                pass
        with tel.span("model", "gpt-4o") as model:
            model.set_model(request_model="gpt-4o", response_model="gpt-4o-2024-08-06", provider="openai")
            model.set_messages(output=[ChatMessage("assistant", "It is sunny in Paris.", finish_reason="stop")])
            model.set_usage(Usage(input_tokens=150, output_tokens=10))
        agent.set_output("It is sunny in Paris.")
    spans = list(memory.get_finished_spans())
    provider.shutdown()
    return spans


def _copy(span: ReadableSpan, trace_id: int, ids: dict[int, int], shift: int) -> ReadableSpan:
    ctx = span.context
    parent = span.parent
    return ReadableSpan(
        name=span.name,
        context=SpanContext(trace_id, ids[ctx.span_id], False, TraceFlags(TraceFlags.SAMPLED)),
        parent=(SpanContext(trace_id, ids[parent.span_id], False, TraceFlags(TraceFlags.SAMPLED))
                if parent is not None and parent.span_id in ids else None),
        resource=span.resource, attributes=span.attributes, events=span.events, links=span.links,
        kind=span.kind, status=span.status, start_time=span.start_time + shift, end_time=span.end_time + shift,
        instrumentation_scope=span.instrumentation_scope)


def copies(template: list[ReadableSpan], runs: int, *, start: int = 0) -> Iterator[list[ReadableSpan]]:
    """``runs`` copies of the template run, each with a fresh trace id and span ids."""
    counter = itertools.count(start * 64 + 1)
    for i in range(start, start + runs):
        ids = {s.context.span_id: next(counter) for s in template}
        yield [_copy(s, (0xABC << 64) + i + 1, ids, i * 1_000_000) for s in template]


def trace_set(spans: int) -> list[ReadableSpan]:
    """About ``spans`` spans (whole runs) of copies of the template, in end order per run."""
    template = template_run()
    out: list[ReadableSpan] = []
    for run in copies(template, max(1, spans // len(template))):
        out.extend(run)
    return out


def attributes_of(template: list[ReadableSpan]) -> list[tuple[str, Any, dict[str, Any], int | None]]:
    """(name, kind, attributes, parent index) of each template span, parents first (for replaying)."""
    order = sorted(template, key=lambda s: (s.start_time, s.context.span_id))
    index = {s.context.span_id: i for i, s in enumerate(order)}
    return [(s.name, s.kind, dict(s.attributes or {}),
             index.get(s.parent.span_id) if s.parent is not None else None) for s in order]
