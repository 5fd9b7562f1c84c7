"""The OpenAI Agents SDK over a scripted Responses API: output guardrail tripping, run_streamed abandoned,
concurrent runs, agent cancelled."""
import asyncio, gc, json
from _common import provider, show, exporter
from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
from otel_agents._spans.finalisers import settle
inst = OpenAIAgentsInstrumentor(); inst.instrument(tracer_provider=provider)
from agents import (Agent, Runner, GuardrailFunctionOutput, output_guardrail, OutputGuardrailTripwireTriggered,
                    function_tool, RunConfig)
from tests.openai_agents.fakes import ScriptedResponses, responses_model, say, call, tool_then_answer
from opentelemetry import trace

@output_guardrail
async def no_secret(ctx, agent, output):
    return GuardrailFunctionOutput(output_info="x", tripwire_triggered="secret" in str(output))

m = responses_model(ScriptedResponses([say("the secret is 42")], repeat_last=True))
a = Agent(name="guarded", instructions="i", model=m, output_guardrails=[no_secret])
try:
    Runner.run_sync(a, "hi")
except OutputGuardrailTripwireTriggered as e:
    print("tripped")
show("output guardrail tripped")
print("open:", inst.open_spans())

@function_tool
def slow(x: str) -> str:
    """slow"""
    return "ok"
m = responses_model(ScriptedResponses([call(("slow", {"x": "1"})), say("done")], repeat_last=True))
a = Agent(name="streamer", instructions="i", model=m, tools=[slow])
async def abandon():
    r = Runner.run_streamed(a, "hi")
    async for ev in r.stream_events():
        if ev.type == "run_item_stream_event":
            break
    r.cancel()
    await asyncio.sleep(0.05)
asyncio.run(abandon())
gc.collect(); settle()
show("run_streamed abandoned then cancel()")
print("open:", inst.open_spans())

async def abandon2():
    r = Runner.run_streamed(a, "hi")
    async for ev in r.stream_events():
        break
asyncio.run(abandon2())
gc.collect(); settle()
show("run_streamed abandoned, no cancel, loop closed")
print("open:", inst.open_spans())

m = responses_model(ScriptedResponses([say("done")], repeat_last=True))
async def concurrent():
    agents_ = [Agent(name=f"a{i}", instructions="i", model=m) for i in range(3)]
    await asyncio.gather(*[Runner.run(x, "hi") for x in agents_])
asyncio.run(concurrent())
spans = exporter.get_finished_spans()
byid = {s.context.span_id: s for s in spans}
for s in spans:
    if s.name.startswith("chat"):
        p = byid.get(s.parent.span_id); gp = byid.get(p.parent.span_id) if p and p.parent else None
        print(s.name, "->", p.name if p else None, "->", gp.name if gp else None, s.context.trace_id == p.context.trace_id)
show("concurrent")
print("open:", inst.open_spans(), "current:", trace.get_current_span())
