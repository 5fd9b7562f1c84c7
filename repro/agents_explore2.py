"""Agents SDK: a run cancelled mid tool (asyncio.wait_for), a tool with a timeout, the Chat Completions model
streamed, the client instrumentor on together with a retry inside the Agents SDK's request."""
import asyncio, gc, json
from _common import provider, show, exporter
from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
from otel_agents.instrumentors.openai import OpenAIInstrumentor
from otel_agents._spans.finalisers import settle
inst = OpenAIAgentsInstrumentor(); inst.instrument(tracer_provider=provider)
OpenAIInstrumentor().instrument(tracer_provider=provider)
import httpx
from agents import Agent, Runner, function_tool, OpenAIChatCompletionsModel, OpenAIResponsesModel
from openai import AsyncOpenAI
from tests.openai_agents.fakes import ScriptedResponses, responses_model, say, call
from tests.clients.fakes import chat_stream
from opentelemetry import trace

@function_tool
async def slow(x: str) -> str:
    """slow"""
    await asyncio.sleep(5)
    return "ok"
m = responses_model(ScriptedResponses([call(("slow", {"x": "1"})), say("done")], repeat_last=True))
a = Agent(name="canc", instructions="i", model=m, tools=[slow])
async def cancel():
    try:
        await asyncio.wait_for(Runner.run(a, "hi"), 2)
    except BaseException as e:
        print("raised", type(e).__name__)
asyncio.run(cancel())
gc.collect(); settle()
show("run cancelled mid tool")
print("open:", inst.open_spans())

# chat completions model streamed
n = {"i": 0}
def h(req):
    body = json.loads(req.content)
    n["i"] += 1
    if n["i"] == 1:
        return httpx.Response(429, json={"error": {"message": "slow down"}}, headers={"retry-after-ms": "1"})
    return httpx.Response(200, content=chat_stream(include_usage=True), headers={"content-type": "text/event-stream"})
client = AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=2, http_client=httpx.AsyncClient(transport=httpx.MockTransport(h)))
a = Agent(name="cc", instructions="i", model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client))
async def streamed():
    r = Runner.run_streamed(a, "hi")
    async for _ in r.stream_events(): pass
    print("final", r.final_output)
asyncio.run(streamed())
show("chat completions model streamed, 429 then 200")
print("open:", inst.open_spans())
