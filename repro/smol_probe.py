import gc, sys, threading
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor
SmolagentsInstrumentor().instrument(tracer_provider=provider)
from tests.smolagents.fakes import *
from smolagents import CodeAgent, ToolCallingAgent

C = lambda code: f"Thought: go\n<code>\n{code}\n</code>"
# 1. CodeAgent code raises then recovers
a = code_agent(ScriptedModel([C("x = 1/0"), C("final_answer(lookup_order('A100'))")]))
print(a.run("q"))
check(exporter, opens, "code raises then answers")
# 2. streaming outputs abandoned
a = code_agent(StreamingModel([C("print(lookup_order('A100'))"), C("final_answer('done')")]), stream_outputs=True)
g = a.run("q", stream=True)
for i, ev in enumerate(g):
    if i == 3: break
del g; gc.collect()
check(exporter, opens, "stream_outputs abandoned after 3 events")
# 3. managed agent, CodeAgent manager calling it from code
sub = tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER), name="helper", description="helps")
mgr = code_agent(ScriptedModel([C("r = helper(task='find A100')\nfinal_answer(r)")]), managed_agents=[sub])
print(mgr.run("q"))
check(exporter, opens, "managed from code")
# 4. planning + max_steps
a = code_agent(ScriptedModel(lambda n, m: "plan" if n == 0 else C("print(1)")), planning_interval=2, max_steps=3)
print(a.run("q"))
check(exporter, opens, "planning + max_steps")
# 5. two runs in threads
outs = []
def run(n):
    ag = tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER), name=f"ag{n}")
    outs.append(ag.run("q"))
ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]
check(exporter, opens, "threads")
# 6. run reset=False twice
a = tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER + LOOKUP_THEN_ANSWER))
a.run("q"); a.run("q2", reset=False)
check(exporter, opens, "reset=False")
# 7. final_answer_checks raising an exception themselves (not returning False)
def chk(ans, mem, **kw):
    raise RuntimeError("check crashed")
a = tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER + [[("final_answer", {"answer": "x"})]]), final_answer_checks=[chk], max_steps=4)
try:
    print(a.run("q"))
except Exception as e:
    print("raised", type(e), e)
check(exporter, opens, "final answer check raises")
