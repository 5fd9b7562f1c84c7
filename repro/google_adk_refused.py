"""Google ADK LlmAgent: the model calls a tool the agent lacks (``lokup``); then arguments the tool rejects."""
import sys

sys.path.insert(0, ".")
from repro._show import provider, show  # noqa: E402
from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor  # noqa: E402

GoogleADKInstrumentor().instrument(tracer_provider=provider)
from tests.google_adk.agents import support_agent  # noqa: E402
from tests.google_adk.fakes import ScriptedLlm, call, run_agent  # noqa: E402

case = sys.argv[1] if len(sys.argv) > 1 else "unknown"
first = call("lokup", order_id="A100") if case == "unknown" else call("lookup_order", zzz=1)
r = run_agent(support_agent(ScriptedLlm([first, "done"])))
print("ERROR", repr(r.error))
for e in r.events:
    for p in (e.content.parts if e.content else []):
        if p.function_response:
            print("  told", p.function_response.response)
show()
