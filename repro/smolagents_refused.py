"""smolagents ToolCallingAgent: the model calls a tool the agent lacks (``lokup``); then arguments the tool rejects
(a missing / extra argument), then a string of invalid JSON as arguments."""
import sys

sys.path.insert(0, ".")
from repro._show import provider, show  # noqa: E402
from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor  # noqa: E402

SmolagentsInstrumentor().instrument(tracer_provider=provider)
from tests.smolagents.fakes import ScriptedModel, tool_calling_agent  # noqa: E402

case = sys.argv[1] if len(sys.argv) > 1 else "unknown"
if case == "unknown":
    script = [[("lokup", {"order_id": "A100"})], [("final_answer", {"answer": "done"})]]
elif case == "badargs":
    script = [[("lookup_order", {"zzz": "A100"})], [("final_answer", {"answer": "done"})]]
else:
    script = [[("lookup_order", "{not json")], [("final_answer", {"answer": "done"})]]
agent = tool_calling_agent(ScriptedModel(script))
try:
    print("OUTPUT", agent.run("go"))
    for step in agent.memory.steps:
        for attr in ("error", "observations"):
            if getattr(step, attr, None):
                print("  step", getattr(step, "step_number", None), attr, repr(getattr(step, attr))[:200])
except Exception as exc:
    print("RAISED", type(exc).__name__, exc)
show()
