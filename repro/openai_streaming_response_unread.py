"""with_streaming_response(stream=True) exited without parse(): does our span end?"""
import gc, asyncio
from _common import provider, show
from tests.clients.fakes import *
from otel_agents.instrumentors.openai import OpenAIInstrumentor
from otel_agents.instrumentors.anthropic import AnthropicInstrumentor
from otel_agents._spans.finalisers import settle
OpenAIInstrumentor().instrument(tracer_provider=provider)
AnthropicInstrumentor().instrument(tracer_provider=provider)
import httpx2
CHAT = dict(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
c = openai_client(Recorder(chat_stream(include_usage=True)))
with c.chat.completions.with_streaming_response.create(stream=True, **CHAT) as r:
    print("headers", r.headers.get("content-type"))
show("sync, before gc")
gc.collect(); settle()
show("sync, after gc")
c = openai_client(Recorder(responses_stream()), aio=True)
async def main():
    async with c.responses.with_streaming_response.create(stream=True, model="gpt-4o", input="x") as r:
        pass
asyncio.run(main())
show("async responses, before gc")
gc.collect(); settle()
show("async, after gc")
ac = anthropic_client(Recorder(ac1_stream(), http=httpx2))
with ac.messages.with_streaming_response.create(stream=True, model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}]) as r:
    pass
show("anthropic before gc")
gc.collect(); settle()
show("anthropic after gc")
del r
gc.collect(); settle()
show("after del r + gc (all three)")
