"""Agno workflow human-in-the-loop: a step needing confirmation pauses the workflow; continue_run/acontinue_run runs
the rest. Are the resumed steps under a workflow span, in one trace?"""
import asyncio, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.agno import AgnoInstrumentor
AgnoInstrumentor().instrument(tracer_provider=provider)
from agno.workflow import Step, Workflow
from agno.workflow.types import HumanReview
from agno.db.in_memory import InMemoryDb
from tests.agno.agents import support_agent

def flow():
    return Workflow(name="W", telemetry=False, db=InMemoryDb(), steps=[
        Step(name="first", agent=support_agent()),
        Step(name="second", agent=support_agent(), human_review=HumanReview(requires_confirmation=True))])

w = flow()
run = w.run("go")
print("paused:", run.is_paused, run.status)
for req in run.active_step_requirements:
    req.confirm()
run = w.continue_run(run)
print("continued:", run.status)
check(exporter, opens, "workflow run then continue_run")

w = flow()
async def main():
    run = await w.arun("go")
    for req in run.active_step_requirements:
        req.confirm()
    run = await w.acontinue_run(run)
    print("continued:", run.status)
    run = await w.arun("go", stream=False)
asyncio.run(main())
check(exporter, opens, "workflow arun then acontinue_run")

w = flow()
run = w.run("go")
for req in run.active_step_requirements:
    req.confirm()
events = list(w.continue_run(run, stream=True, stream_events=True))
print("streamed continuation:", [type(e).__name__ for e in events][-2:])
check(exporter, opens, "workflow continue_run(stream=True)")

w = flow()
async def main2():
    run = await w.arun("go")
    for req in run.active_step_requirements:
        req.confirm()
    stream = await w.acontinue_run(run, stream=True, stream_events=True)
    events = [e async for e in stream]
    print("astreamed continuation:", [type(e).__name__ for e in events][-2:])
asyncio.run(main2())
check(exporter, opens, "workflow acontinue_run(stream=True)")
