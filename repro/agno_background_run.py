"""Agno arun(background=True): the call returns the run pending and Agno runs it in a task of its own. The run's
agent span ended at the return (no output), before its model and tool spans."""
import asyncio, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.agno import AgnoInstrumentor
AgnoInstrumentor().instrument(tracer_provider=provider)
from agno.db.in_memory import InMemoryDb
from tests.agno.agents import support_agent
async def main():
    a = support_agent(db=InMemoryDb())
    r = await a.arun("x", background=True)
    print("returned:", r.status, r.content)
    print("open right after return:", [s.name for s in opens.open.values()])
    for _ in range(100):
        got = await a.aget_run_output(run_id=r.run_id, session_id=r.session_id)
        if got and str(got.status.value).lower() in ("completed", "error"): break
        await asyncio.sleep(0.02)
    print("final:", got.status, got.content)
    await asyncio.sleep(0.1)
asyncio.run(main())
spans = exporter.get_finished_spans()
ag = [s for s in spans if s.name.startswith("invoke_agent")][0]
print("agent end <= children end:", [ag.end_time >= s.end_time for s in spans if s is not ag], "output:", ag.attributes.get("output.value"))
check(exporter, opens, "arun(background=True)")
