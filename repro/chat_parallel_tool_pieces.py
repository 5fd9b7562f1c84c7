"""Chat stream with two tool calls whose argument fragments interleave (index 0 and 1), the second's id arriving
in its first fragment only; and a refusal streamed."""
from _common import provider, show
from tests.clients.fakes import *
from otel_agents.instrumentors.openai import OpenAIInstrumentor
OpenAIInstrumentor().instrument(tracer_provider=provider)
def ch(delta, finish=None):
    return (None, {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
tc = lambda i, **f: {"tool_calls": [{"index": i, **f}]}
body = sse([ch({"role": "assistant"}),
            ch(tc(0, id="call_a", type="function", function={"name": "f", "arguments": ""})),
            ch(tc(1, id="call_b", type="function", function={"name": "g", "arguments": '{"y"'})),
            ch(tc(0, function={"arguments": '{"x": 1'})),
            ch(tc(1, function={"arguments": ': 2}'})),
            ch(tc(0, function={"arguments": '}'})),
            ch({}, "tool_calls"), (None, "[DONE]")])
c = openai_client(Recorder(body))
for _ in c.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}], stream=True): pass
show("interleaved tool calls")
body = sse([ch({"role": "assistant", "refusal": ""}), ch({"refusal": "I can't "}), ch({"refusal": "help."}), ch({}, "stop"), (None, "[DONE]")])
c = openai_client(Recorder(body))
for _ in c.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}], stream=True): pass
show("refusal streamed")
