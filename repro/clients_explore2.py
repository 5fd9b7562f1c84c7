import asyncio, json, gc
from _common import provider, show, exporter
from tests.clients.fakes import *
from otel_agents.instrumentors.openai import OpenAIInstrumentor
from otel_agents.instrumentors.anthropic import AnthropicInstrumentor
from otel_agents._spans.finalisers import settle
OpenAIInstrumentor().instrument(tracer_provider=provider)
AnthropicInstrumentor().instrument(tracer_provider=provider)
import pydantic, httpx2
CHAT = dict(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
class Order(pydantic.BaseModel):
    id: str
# structured output via parse
c = openai_client(Recorder(chat_completion(content='{"id": "A1"}')))
r = c.chat.completions.parse(response_format=Order, **CHAT)
print("parsed", r.choices[0].message.parsed)
show("chat parse")
# parse via raw response
c = openai_client(Recorder(chat_completion(content='{"id": "A1"}')))
raw = c.chat.completions.with_raw_response.parse(response_format=Order, **CHAT)
print("raw parsed", raw.parse().choices[0].message.parsed)
show("chat with_raw_response.parse")
# raw + stream=True
c = openai_client(Recorder(chat_stream(include_usage=True)))
raw = c.chat.completions.with_raw_response.create(stream=True, stream_options={"include_usage": True}, **CHAT)
for _ in raw.parse(): pass
show("with_raw_response stream=True read through")
# responses stream helper left early
c = openai_client(Recorder(responses_stream()))
with c.responses.stream(model="gpt-4o", input="x") as s:
    for ev in s:
        break
show("responses.stream left early")
c = openai_client(Recorder(responses_stream()))
with c.responses.stream(model="gpt-4o", input="x") as s:
    final = s.get_final_response()
show("responses.stream get_final_response")
# anthropic async stream helper left early
ac = anthropic_client(Recorder(ac1_stream(), http=httpx2), aio=True)
async def m():
    async with ac.messages.stream(model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}]) as s:
        async for e in s:
            break
asyncio.run(m())
show("anthropic async stream left early")
# anthropic with_raw_response stream
ac = anthropic_client(Recorder(ac1_stream(), http=httpx2))
raw = ac.messages.with_raw_response.create(stream=True, model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
for _ in raw.parse(): pass
show("anthropic raw stream")
# chat parse stream helper with structured output
body = sse([(None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o", "choices": [{"index": 0, "delta": {"role": "assistant", "content": '{"id": '}, "finish_reason": None}]}),
            (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o", "choices": [{"index": 0, "delta": {"content": '"A1"}'}, "finish_reason": "stop"}]}),
            (None, "[DONE]")])
c = openai_client(Recorder(body))
with c.chat.completions.stream(response_format=Order, **CHAT) as s:
    fc = s.get_final_completion()
print("stream parsed", fc.choices[0].message.parsed)
show("chat stream helper structured")
