"""Agno human-in-the-loop: a paused run (a tool needing confirmation) continued with continue_run/acontinue_run.
The continued run's tool call and model request: are they under an agent span, in one trace?"""
import asyncio, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.agno import AgnoInstrumentor
AgnoInstrumentor().instrument(tracer_provider=provider)
from agno.tools import tool
from tests.agno.agents import support_agent
from tests.agno.fakes import tool_then_answer

@tool(requires_confirmation=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    return "refunded"

agent = support_agent(script=tool_then_answer("refund", {"order_id": "A1"}), tools=[refund])
run = agent.run("refund A1")
print("paused:", run.is_paused)
for req in run.active_requirements:
    req.confirm()
run = agent.continue_run(run_response=run)
print("continued:", run.status, run.content)
check(exporter, opens, "run then continue_run")

agent = support_agent(script=tool_then_answer("refund", {"order_id": "A1"}), tools=[refund])
async def main():
    run = await agent.arun("refund A1")
    for req in run.active_requirements:
        req.confirm()
    run = await agent.acontinue_run(run_response=run)
    print("continued:", run.status, run.content)
asyncio.run(main())
check(exporter, opens, "arun then acontinue_run")

agent = support_agent(script=tool_then_answer("refund", {"order_id": "A1"}), tools=[refund])
run = agent.run("refund A1")
for req in run.active_requirements:
    req.confirm()
events = list(agent.continue_run(run_response=run, stream=True))
print("streamed continuation events:", len(events))
check(exporter, opens, "run then continue_run(stream=True)")

from agno.agent import Agent
from agno.team import Team
from tests.agno.fakes import ScriptedModel, Reply, tool_results
member = Agent(name="Refunds", id="refunds", telemetry=False, tools=[refund],
               model=ScriptedModel(id="member-1", script=tool_then_answer("refund", {"order_id": "A1"})))
def leader(messages):
    if messages[-1].role != "tool":
        return Reply(tool_calls=[("delegate_task_to_member", {"member_id": "refunds", "task": "refund A1"})])
    return Reply(text=f"Desk says: {messages[-1].content}")
team = Team(name="Desk", members=[member], model=ScriptedModel(id="leader-1", script=leader), telemetry=False)
run = team.run("refund A1")
print("team paused:", run.is_paused)
for req in run.active_requirements:
    req.confirm()
run = team.continue_run(run_response=run)
print("team continued:", run.status, run.content)
check(exporter, opens, "team run then continue_run")
