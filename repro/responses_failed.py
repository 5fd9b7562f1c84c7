"""A Responses stream that ends with response.failed (the API's own failure, with its error code), and one whose
server sends an `error` event mid-stream (the SDK raises APIError from the iterator); a whole response with
status failed."""
import json
from _common import provider, show
from tests.clients.fakes import *
from otel_agents.instrumentors.openai import OpenAIInstrumentor
OpenAIInstrumentor().instrument(tracer_provider=provider)
whole = response_body()
failed = {**whole, "status": "failed", "output": [], "usage": None, "error": {"code": "server_error", "message": "The model failed"}}
created = {**whole, "status": "in_progress", "output": [], "usage": None}
body = sse([("response.created", {"type": "response.created", "response": created, "sequence_number": 0}),
            ("response.failed", {"type": "response.failed", "response": failed, "sequence_number": 1})])
c = openai_client(Recorder(body))
for ev in c.responses.create(model="gpt-4o", input="x", stream=True): print(ev.type)
show("stream ending response.failed")
body = sse([("response.created", {"type": "response.created", "response": created, "sequence_number": 0}),
            ("error", {"type": "error", "code": "rate_limit_exceeded", "message": "Too fast", "param": None, "sequence_number": 1})])
c = openai_client(Recorder(body))
try:
    for ev in c.responses.create(model="gpt-4o", input="x", stream=True): print(ev.type)
except Exception as e: print("raised", type(e).__name__, e)
show("stream with an error event")
c = openai_client(Recorder(failed))
r = c.responses.create(model="gpt-4o", input="x")
print(r.status)
show("whole response failed")
