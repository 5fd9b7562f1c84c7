"""A stream returned by create(stream=True) and dropped before its first read: does our span end (docstring: 'A
stream closed, dropped or idle before its end ends as abandoned')?"""
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
s = c.chat.completions.create(stream=True, **CHAT)
del s
gc.collect(); settle()
show("openai: dropped unread")
s = c.chat.completions.create(stream=True, **CHAT)
next(iter(s))
del s
gc.collect(); settle()
show("openai: dropped after one chunk")
ac = anthropic_client(Recorder(ac1_stream(), http=httpx2))
s = ac.messages.create(stream=True, model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
del s
gc.collect(); settle()
show("anthropic: dropped unread")
