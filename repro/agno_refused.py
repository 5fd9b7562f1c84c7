"""Agno Agent: the model calls a tool the agent lacks (``lokup``); arguments the tool rejects; invalid JSON."""
import os
import sys

os.environ.setdefault("AGNO_TELEMETRY", "false")
sys.path.insert(0, ".")
from repro._show import provider, show  # noqa: E402
from otel_agents.instrumentors.agno import AgnoInstrumentor  # noqa: E402

AgnoInstrumentor().instrument(tracer_provider=provider)
from tests.agno.agents import support_agent  # noqa: E402
from tests.agno.fakes import Reply, ScriptedModel, tool_results  # noqa: E402

case = sys.argv[1] if len(sys.argv) > 1 else "unknown"
call = {"unknown": ("lokup", {"order_id": "A100"}), "badargs": ("lookup_order", {"zzz": 1}),
        "badjson": ("lookup_order", "{not json")}[case]


class Raw(ScriptedModel):
    def _calls(self, reply):
        return [{"id": f"call_{self.requests}_{i}", "type": "function",
                 "function": {"name": n, "arguments": a if isinstance(a, str) else __import__("json").dumps(a)}}
                for i, (n, a) in enumerate(reply.tool_calls)]


def script(messages):
    results = tool_results(messages)
    if not results:
        return Reply(tool_calls=[call])
    return Reply(text=f"Told: {results[-1].content}")


agent = support_agent()
agent.model = Raw(script=script)
try:
    r = agent.run("go", stream=len(sys.argv) > 2)
    if len(sys.argv) > 2:
        r = list(r)[-1]
    print("OUTPUT", r.content)
except Exception as exc:
    print("RAISED", type(exc).__name__, exc)
show()
