import asyncio, gc, os, sys, tempfile, threading, time
os.environ["HOME"] = tempfile.mkdtemp(dir="/dev/shm"); os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
sys.path.insert(0, ".")
import logging; logging.getLogger("crewai").setLevel(logging.ERROR)
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.crewai import CrewAIInstrumentor
CrewAIInstrumentor().instrument(tracer_provider=provider)
from crewai import Crew, Task, Agent, Process
from tests.crewai.fakes import ReactLLM, clerk, order_task, one_agent_crew, NativeLLM

# 1. two crews in threads
ts = [threading.Thread(target=lambda: one_agent_crew().kickoff()) for _ in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]
check(exporter, opens, "two crews in threads")
# 2. standalone agent kickoff, async
a = clerk()
r = a.kickoff("What is the status of order A100?"); print("agent kickoff:", str(r.raw)[:60])
check(exporter, opens, "Agent.kickoff")
async def g():
    return await asyncio.gather(clerk().kickoff_async("What is A100?"), clerk().kickoff_async("What is A200?"))
asyncio.run(g())
check(exporter, opens, "Agent.kickoff_async gather")
# 3. task_callback raising
def cb(out): raise RuntimeError("callback bug")
agent = clerk()
try:
    Crew(agents=[agent], tasks=[order_task(agent)], task_callback=cb).kickoff()
except Exception as e:
    print("raised", type(e).__name__, e)
check(exporter, opens, "task_callback raising")
# 4. native tools LLM
agent = clerk(NativeLLM())
r = Crew(agents=[agent], tasks=[order_task(agent)]).kickoff(); print(r.raw[:60])
check(exporter, opens, "native")
