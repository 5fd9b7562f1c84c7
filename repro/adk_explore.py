"""Google ADK over a scripted BaseLlm: concurrent runs, before_tool_callback answering, after_tool_callback
replacing, a tool raising inside a ParallelAgent."""
import asyncio
from _common import provider, show, exporter
from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor
inst = GoogleADKInstrumentor(); inst.instrument(tracer_provider=provider)
from tests.google_adk.fakes import ScriptedLlm, Text, call, run_agent, run_agent_async
from tests.google_adk.agents import support_agent, lookup_order, refund
from google.adk.agents import ParallelAgent
from opentelemetry import trace

def before_tool(tool, args, tool_context):
    return {"cached": True}
a = support_agent(ScriptedLlm([call("lookup_order", order_id="A1"), Text("done")]), before_tool_callback=before_tool)
r = run_agent(a)
show("before_tool_callback answering")
def after_tool(tool, args, tool_context, tool_response):
    return {"replaced": 1}
a = support_agent(ScriptedLlm([call("lookup_order", order_id="A1"), Text("done")]), after_tool_callback=after_tool)
r = run_agent(a)
show("after_tool_callback replacing")

async def conc():
    agents = [support_agent(ScriptedLlm([call("lookup_order", order_id=f"A{i}"), Text(f"done {i}")]), name=f"s{i}") for i in range(3)]
    await asyncio.gather(*[run_agent_async(x, f"msg {i}", session_id=f"sess{i}") if 'session_id' in run_agent_async.__code__.co_varnames else run_agent_async(x, f"msg {i}") for i, x in enumerate(agents)])
asyncio.run(conc())
spans = exporter.get_finished_spans()
byid = {s.context.span_id: s for s in spans}
def chain(s):
    out = []
    while s is not None:
        out.append(s.name); s = byid.get(s.parent.span_id) if s.parent else None
    return out
for s in spans:
    if s.name.startswith("execute_tool"):
        print(chain(s), s.attributes.get("gen_ai.tool.call.arguments"), s.attributes.get("output.value"))
exporter.clear()
p = ParallelAgent(name="par", sub_agents=[support_agent(ScriptedLlm([call("refund", order_id="A1"), Text("x")]), name="r1", tools=[refund]),
                                          support_agent(ScriptedLlm([Text("fine")]), name="r2")])
try:
    run_agent(p)
except Exception as e:
    print("raised", type(e).__name__)
show("parallel with a raising tool")
print("open", inst.open_spans() if hasattr(inst, "open_spans") else "?", trace.get_current_span())
