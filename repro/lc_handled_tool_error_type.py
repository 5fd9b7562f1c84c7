"""A LangChain tool failure turned into its result (handle_tool_error) was recorded with error.type naming
otel-agents' own internal class (otel_agents.instrumentors.langchain.handler.HandledToolError) and a fabricated
exception event with a fake stack trace. Expected: error.type ``tool_error`` (the project's in-band tool failure),
the message as the status description, no exception event.

Run: PYTHONPATH=src /work/hv/.venv/bin/python repro/lc_handled_tool_error_type.py
"""
from langchain_core.tools import ToolException, tool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents.instrumentors.langchain import LangChainInstrumentor

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
LangChainInstrumentor().instrument(tracer_provider=provider)


@tool
def bad(x: int) -> str:
    """Always fails, handled."""
    raise ToolException("nope")


bad.handle_tool_error = True
print(bad.invoke({"name": "bad", "args": {"x": 1}, "id": "c1", "type": "tool_call"}))
(span,) = exporter.get_finished_spans()
print("error.type:", span.attributes.get("error.type"))
print("events:", [(e.name, dict(e.attributes)) for e in span.events])
assert span.attributes.get("error.type") == "tool_error", "FAULT: error.type is not tool_error"
assert not span.events, "FAULT: a fabricated exception event"
print("OK")
