import asyncio, gc, os, sys, tempfile, threading, time
os.environ["HOME"] = tempfile.mkdtemp(dir="/dev/shm"); os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"; os.environ["OTEL_SDK_DISABLED"] = "false"
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.crewai import CrewAIInstrumentor
CrewAIInstrumentor().instrument(tracer_provider=provider)
from crewai import Crew, Task, Agent, Process
from crewai.tools import tool
from tests.crewai.fakes import ReactLLM, clerk, order_task, one_agent_crew, ActionsLLM

# 1. streamed crew abandoned after first chunk
agent = clerk()
s = Crew(agents=[agent], tasks=[order_task(agent)], stream=True).kickoff()
for c in s: break
del s; gc.collect(); time.sleep(0.5)
check(exporter, opens, "streamed crew abandoned after first chunk")
# 2. tool raising in a crew
@tool("boom")
def boom(order_id: str) -> str:
    """Fails always."""
    raise ValueError("boom!")
agent = clerk(ReactLLM(tool_name="boom"), tools=[boom])
r = Crew(agents=[agent], tasks=[order_task(agent)]).kickoff(); print("out:", r.raw[:80])
check(exporter, opens, "tool raising")
# 3. akickoff gather
async def g():
    c1, c2 = one_agent_crew(), one_agent_crew()
    await asyncio.gather(c1.akickoff(), c2.akickoff())
asyncio.run(g())
check(exporter, opens, "akickoff gather")
# 4. guardrail that raises an exception (not returns False)
def gr(out):
    raise RuntimeError("guardrail crashed")
agent = clerk()
try:
    r = Crew(agents=[agent], tasks=[order_task(agent, guardrail=gr, guardrail_max_retries=1)]).kickoff(); print(r.raw)
except Exception as e:
    print("raised", type(e).__name__, e)
check(exporter, opens, "guardrail raising")
# 5. streamed crew, tool raising, consumed
agent = clerk(ReactLLM(tool_name="boom"), tools=[boom])
s = Crew(agents=[agent], tasks=[order_task(agent)], stream=True).kickoff()
print(len(list(s)))
check(exporter, opens, "stream + tool raising")
# 6. streamed crew kickoff, model failing
agent = clerk(ReactLLM(fail=True))
s = Crew(agents=[agent], tasks=[order_task(agent)], stream=True).kickoff()
try:
    print(len(list(s))); print(s.result)
except Exception as e:
    print("raised", type(e).__name__, e)
check(exporter, opens, "stream + model raising")
