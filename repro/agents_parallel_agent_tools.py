"""Agents SDK: two agents-as-tools called in parallel in one response: each inner agent under its own tool span?
And a handoff in a streamed run."""
import asyncio
from _common import provider, show, exporter
from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
inst = OpenAIAgentsInstrumentor(); inst.instrument(tracer_provider=provider)
from agents import Agent, Runner, handoff
from tests.openai_agents.fakes import ScriptedResponses, responses_model, say, call
h = ScriptedResponses({"boss": [call(("ask_a", {"input": "qa"}), ("ask_b", {"input": "qb"})), say("both done")],
                       "A": [say("from A")], "B": [say("from B")]})
m = responses_model(h)
A = Agent(name="A", instructions="A", model=m); B = Agent(name="B", instructions="B", model=m)
boss = Agent(name="boss", instructions="boss", model=m, tools=[A.as_tool("ask_a", "a"), B.as_tool("ask_b", "b")])
print(Runner.run_sync(boss, "go").final_output)
spans = exporter.get_finished_spans()
byid = {s.context.span_id: s for s in spans}
for s in spans:
    p = byid.get(s.parent.span_id) if s.parent else None
    print(f"{s.name:40} <- {p.name if p else None:30} in={str(s.attributes.get('input.value'))[:30]} out={str(s.attributes.get('output.value'))[:30]}")
exporter.clear()
h2 = ScriptedResponses({"triage": [call(("transfer_to_billing", {}))], "billing": [say("billed")]})
m2 = responses_model(h2)
billing = Agent(name="billing", instructions="billing", model=m2)
triage = Agent(name="triage", instructions="triage", model=m2, handoffs=[billing])
async def s():
    r = Runner.run_streamed(triage, "bill me")
    async for _ in r.stream_events(): pass
    print(r.final_output)
asyncio.run(s())
spans = exporter.get_finished_spans()
byid = {s.context.span_id: s for s in spans}
for s in spans:
    p = byid.get(s.parent.span_id) if s.parent else None
    print(f"{s.name:40} <- {p.name if p else None:30} {s.status.status_code.name} out={str(s.attributes.get('output.value'))[:30]}")
print("open", inst.open_spans())
