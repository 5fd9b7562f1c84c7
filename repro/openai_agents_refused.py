"""OpenAI Agents SDK: the model calls a tool the agent lacks (``lokup``), and a tool with invalid JSON arguments."""
import asyncio
import sys

sys.path.insert(0, ".")
from repro._show import provider, show  # noqa: E402
from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
from agents import Agent, Runner, function_tool  # noqa: E402
from tests.openai_agents.fakes import ScriptedResponses, call, responses_model, say  # noqa: E402


@function_tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


case = sys.argv[1] if len(sys.argv) > 1 else "unknown"
if case == "unknown":
    script = [call(("lokup", {"query": "a"})), say("done")]
else:  # invalid JSON arguments, then wrong-typed arguments
    bad = {"output": [{"type": "function_call", "id": "fc_x", "call_id": "call_x", "name": "lookup",
                       "arguments": "{not json", "status": "completed"}]}
    script = [bad, call(("lookup", {"query": 5, "zzz": 1})), call(("lookup", {})), say("done")]
agent = Agent(name="support", instructions="help", tools=[lookup],
              model=responses_model(ScriptedResponses(script)))
try:
    r = asyncio.run(Runner.run(agent, "go"))
    print("OUTPUT", r.final_output)
    for item in r.new_items:
        print("  item", type(item).__name__, getattr(getattr(item, "raw_item", None), "get", lambda k: None)("output") if isinstance(getattr(item, "raw_item", None), dict) else "")
except Exception as exc:
    print("RAISED", type(exc).__name__, exc)
show()
