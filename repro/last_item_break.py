"""Break out of a run's stream on its last item (the final answer / result): the run is over, not abandoned."""
import asyncio, gc, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
import otel_agents
from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor
from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
from otel_agents.instrumentors.agno import AgnoInstrumentor
from otel_agents.instrumentors.claude_agent_sdk import ClaudeAgentSDKInstrumentor
for I in (SmolagentsInstrumentor, AutoGenAgentChatInstrumentor, AgnoInstrumentor, ClaudeAgentSDKInstrumentor):
    I().instrument(tracer_provider=provider)

from smolagents.memory import FinalAnswerStep
from smolagents.agents import ActionOutput
from tests.smolagents.fakes import ScriptedModel, tool_calling_agent, LOOKUP_THEN_ANSWER
a = tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER))
for ev in a.run("q", stream=True):
    if isinstance(ev, FinalAnswerStep): break
gc.collect()
check(exporter, opens, "smolagents: break at FinalAnswerStep")
a = tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER))
for ev in a.run("q", stream=True):
    if isinstance(ev, ActionOutput) and ev.is_final_answer: break
gc.collect()
check(exporter, opens, "smolagents: break at the final ActionOutput")

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import TaskResult
from autogen_agentchat.messages import TextMessage
from tests.autogen_agentchat.fakes import replay, call, text
async def ag():
    def lookup(order: str) -> str:
        """Look up."""
        return "shipped"
    a = AssistantAgent("a", model_client=replay(call("lookup", {"order": "1"}), text("A done")), tools=[lookup])
    async for m in a.run_stream(task="x"):
        if isinstance(m, TaskResult): break
    gc.collect(); await asyncio.sleep(0.05)
asyncio.run(ag())
check(exporter, opens, "autogen: break at TaskResult")

from agno.run.agent import RunCompletedEvent
from tests.agno.agents import support_agent
for ev in support_agent().run("x", stream=True, stream_events=True):
    if isinstance(ev, RunCompletedEvent): break
gc.collect()
check(exporter, opens, "agno: break at RunCompletedEvent")

import claude_agent_sdk as sdk
from tests.claude_agent_sdk.conftest import in_process, support_server
async def cl():
    async for m in sdk.query(prompt="Where is order A100?", options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process()):
        if isinstance(m, sdk.ResultMessage): break
    gc.collect(); await asyncio.sleep(0.05)
asyncio.run(cl())
check(exporter, opens, "claude: break at ResultMessage")
