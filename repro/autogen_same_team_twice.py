"""AutoGen: a team's run started while that team is already running fails at once (AutoGen's ValueError "already
running"); the run already under way must keep its stop reason and output (our bookkeeping of running teams)."""
import asyncio, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
AutoGenAgentChatInstrumentor().instrument(tracer_provider=provider)
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_agentchat.conditions import TextMentionTermination
from tests.autogen_agentchat.fakes import text, ScriptedClient

async def main():
    t = RoundRobinGroupChat([AssistantAgent("x", model_client=ScriptedClient(lambda m: text("done TERMINATE"), delay=0.05))],
                            termination_condition=TextMentionTermination("TERMINATE"))
    res = await asyncio.gather(t.run(task="a"), t.run(task="b"), return_exceptions=True)
    print([type(x).__name__ for x in res], res[0].stop_reason)
asyncio.run(main())
for s in exporter.get_finished_spans():
    if s.name.startswith("invoke_workflow"):
        print(s.name, s.status.status_code.name, {k: v for k, v in s.attributes.items() if k in ("otel_agents.run.stop_reason", "output.value", "error.type")})
