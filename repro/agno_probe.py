import asyncio, gc, sys, threading
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.agno import AgnoInstrumentor
AgnoInstrumentor().instrument(tracer_provider=provider)
from agno.agent import Agent
from tests.agno.agents import support_agent, desk_team, lookup_order
from tests.agno.fakes import Reply, ScriptedModel, tool_then_answer
from pydantic import BaseModel

# 1. two agents in asyncio.gather
async def g():
    a, b = support_agent(), support_agent()
    await asyncio.gather(a.arun("x"), b.arun("y"))
asyncio.run(g())
check(exporter, opens, "arun gather")
# 2. threads
def t():
    support_agent().run("x")
ts = [threading.Thread(target=t) for _ in range(2)]; [x.start() for x in ts]; [x.join() for x in ts]
check(exporter, opens, "threads")
# 3. tool hook
def hook(function_name, function_call, arguments):
    return function_call(**arguments) + " (hooked)"
a = support_agent(tool_hooks=[hook])
r = a.run("x"); print(r.content)
check(exporter, opens, "tool hook")
# 4. tool hook raising
def bad_hook(function_name, function_call, arguments):
    raise RuntimeError("hook broke")
a = support_agent(tool_hooks=[bad_hook])
try:
    r = a.run("x"); print(r.content, r.status)
except Exception as e:
    print("raised", e)
check(exporter, opens, "tool hook raising")
# 5. retries: model raising once, retries=1
n = []
def flaky(messages):
    n.append(1)
    if len(n) == 1: raise RuntimeError("flaky")
    return Reply(text="ok after retry")
a = Agent(name="R", model=ScriptedModel(script=lambda m: flaky(m)), retries=2, delay_between_retries=0, telemetry=False)
r = a.run("x"); print(r.content, r.status)
check(exporter, opens, "retries")
# 6. structured output
class Out(BaseModel):
    answer: str
a = Agent(name="S", model=ScriptedModel(script=lambda m: Reply(text='{"answer": "42"}')), output_schema=Out, telemetry=False)
r = a.run("x"); print(r.content)
check(exporter, opens, "structured")
# 7. stream abandoned (sync), then run another in same thread
a = support_agent()
s = a.run("x", stream=True)
for ev in s: break
del s; gc.collect()
support_agent().run("y")
check(exporter, opens, "abandoned stream then another run")
# 8. async stream abandoned in gather with another run
async def h():
    a = support_agent()
    async def part():
        s = a.arun("x", stream=True)
        async for ev in s: break
        await s.aclose()
    await asyncio.gather(part(), support_agent().arun("z"))
asyncio.run(h())
check(exporter, opens, "astream closed + gather")
# 9. team arun gather
async def k():
    await asyncio.gather(desk_team().arun("weather?"), desk_team().arun("weather?"))
asyncio.run(k())
check(exporter, opens, "team gather")
