import asyncio, json, warnings, gc
from _common import provider, show, exporter
import httpx, httpx2
from tests.clients.fakes import *
from otel_agents.instrumentors.openai import OpenAIInstrumentor
from otel_agents.instrumentors.anthropic import AnthropicInstrumentor
from opentelemetry import trace
OpenAIInstrumentor().instrument(tracer_provider=provider)
AnthropicInstrumentor().instrument(tracer_provider=provider)
import openai, anthropic
CHAT = dict(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])

# 1. retry 429 then 200
n = {"i": 0}
def h(req):
    n["i"] += 1
    if n["i"] == 1:
        return httpx.Response(429, json={"error": {"message": "slow"}}, headers={"retry-after-ms": "1"})
    return httpx.Response(200, json=chat_completion())
c = openai.OpenAI(api_key="k", max_retries=2, http_client=httpx.Client(transport=httpx.MockTransport(h)))
c.chat.completions.create(**CHAT)
show("openai retry 429->200")

# 2. 500 raises (after retries)
def h500(req): return httpx.Response(500, json={"error": {"message": "boom"}})
c = openai.OpenAI(api_key="k", max_retries=0, http_client=httpx.Client(transport=httpx.MockTransport(h500)))
try: c.chat.completions.create(**CHAT)
except Exception as e: print("raised", type(e).__name__)
show("openai 500")

# 3. timeout
def hto(req): raise httpx.ReadTimeout("timed out", request=req)
c = openai.OpenAI(api_key="k", max_retries=1, http_client=httpx.Client(transport=httpx.MockTransport(hto)))
try: c.chat.completions.create(**CHAT)
except Exception as e: print("raised", type(e).__name__)
show("openai timeout")

# 4. n=2 stream with tool calls
c = openai_client(Recorder(chat_stream(include_usage=True, tool_call=True, choices=2)))
for _ in c.chat.completions.create(stream=True, n=2, stream_options={"include_usage": True}, **CHAT): pass
show("openai n=2 stream tools")
# 5. stream() helper left early
c = openai_client(Recorder(chat_stream(include_usage=True)))
with c.chat.completions.stream(stream_options={"include_usage": True}, **CHAT) as s:
    for ev in s:
        break
show("openai stream() helper left early")
c = openai_client(Recorder(chat_stream(include_usage=True)))
with c.chat.completions.stream(stream_options={"include_usage": True}, **CHAT) as s:
    fc = s.get_final_completion()
show("openai stream() get_final_completion")
# 6. with_streaming_response exited early without parse
c = openai_client(Recorder(chat_stream(include_usage=True)))
with c.chat.completions.with_streaming_response.create(stream=True, **CHAT) as r:
    pass
gc.collect()
show("with_streaming_response exited without reading")
# 7. anthropic stream helper
ac = anthropic_client(Recorder(ac1_stream(), http=httpx2))
with ac.messages.stream(model="claude", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as s:
    m = s.get_final_message()
show("anthropic stream get_final_message")
ac = anthropic_client(Recorder(ac1_stream(), http=httpx2))
with ac.messages.stream(model="claude", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as s:
    for t in s.text_stream:
        break
show("anthropic stream left early")
# 8. anthropic retry
n["i"] = 0
def ha(req):
    n["i"] += 1
    if n["i"] == 1:
        return httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error", "message": "x"}}, headers={"retry-after-ms": "1"})
    return httpx2.Response(200, json=ac1_whole())
ac = anthropic.Anthropic(api_key="k", max_retries=2, http_client=httpx2.Client(transport=httpx2.MockTransport(ha)))
ac.messages.create(model="claude", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
show("anthropic retry 529->200")
print("current:", trace.get_current_span())
