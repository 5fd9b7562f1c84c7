"""AutoGen AgentChat AssistantAgent: the model calls a tool the agent lacks (``lokup``); arguments the tool
rejects; invalid JSON arguments."""
import asyncio
import sys

sys.path.insert(0, ".")
from repro._show import provider, show  # noqa: E402
from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor  # noqa: E402

AutoGenAgentChatInstrumentor().instrument(tracer_provider=provider)
from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_core import FunctionCall  # noqa: E402
from autogen_core.models import CreateResult, RequestUsage  # noqa: E402
from tests.autogen_agentchat.fakes import call, lookup_order, replay, text  # noqa: E402

case = sys.argv[1] if len(sys.argv) > 1 else "unknown"
first = {"unknown": lambda: call("lokup", {"order_id": "A100"}), "badargs": lambda: call("lookup_order", {"zzz": 1}),
         "badjson": lambda: CreateResult(finish_reason="function_calls", cached=False, usage=RequestUsage(11, 3),
                                         content=[FunctionCall(id="call-1", name="lookup_order",
                                                               arguments="{not json")])}[case]()
agent = AssistantAgent("support", model_client=replay(first, text("done")), tools=[lookup_order],
                       reflect_on_tool_use=True)
try:
    r = asyncio.run(agent.run(task="go"))
    for m in r.messages:
        print("  msg", type(m).__name__, str(getattr(m, "content", ""))[:200])
except Exception as exc:
    print("RAISED", type(exc).__name__, exc)
show()
