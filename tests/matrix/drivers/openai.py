"""OpenAI client cells: the real ``openai`` client over a mock transport (``tests/clients/fakes.py``'s
bodies), one model call answering the matrix's script, streams served event by event (:mod:`._sse`)."""

from __future__ import annotations

from typing import Any

import httpx
import openai
from pydantic import BaseModel

from otel_agents.instrumentors.openai import OpenAIInstrumentor
from tests.clients.fakes import chat_completion, response_body, responses_stream
from tests.matrix.drivers._sse import Server, both, finish, usage
from tests.matrix.truth import ANSWER, CITY, Call, Truth, Turn

INSTRUMENTOR = OpenAIInstrumentor
MODEL = "gpt-4o"
MESSAGES = [{"role": "user", "content": CITY}]


def _chat_whole(call: Call) -> dict:
    call.finish = "stop"
    call.usage = call.turn.usage
    u = call.turn.usage
    return chat_completion(call.turn.text, usage={"prompt_tokens": u[0], "completion_tokens": u[1], "total_tokens": sum(u)})


def _chunk(delta: dict, finish_reason: str | None = None) -> dict:
    return {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]}


def _chat_events(call: Call) -> list:
    u = call.turn.usage
    words = ANSWER.split(" ")
    return [(None, _chunk({"role": "assistant", "content": ""}), None),
            *[(None, _chunk({"content": w if i == 0 else " " + w}), None) for i, w in enumerate(words)],
            (None, _chunk({}, "stop"), finish("stop")),
            (None, {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-2024-08-06",
                    "choices": [], "usage": {"prompt_tokens": u[0], "completion_tokens": u[1],
                                             "total_tokens": sum(u)}}, usage),
            (None, "[DONE]", None)]


def _resp_usage(call: Call) -> dict:
    u = call.turn.usage
    return {"input_tokens": u[0], "input_tokens_details": {"cached_tokens": 0}, "output_tokens": u[1],
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": sum(u)}


def _resp_whole(call: Call) -> dict:
    call.usage = call.turn.usage
    call.finish = "stop"  # status "completed", which the span reports as the OTel finish reason "stop"
    return response_body(call.turn.text, usage=_resp_usage(call))


def _resp_events(call: Call) -> list:
    import json as _json
    from tests.clients.fakes import sse  # noqa: F401 - same event shapes as the client tests
    body = responses_stream(ANSWER, usage=_resp_usage(call)).decode()
    out = []
    for block in body.strip().split("\n\n"):
        name, data = block.split("\n", 1)
        data = _json.loads(data[len("data: "):])
        out.append((name[len("event: "):], data, both("stop") if data["type"] == "response.completed" else None))
    return out


class Weather(BaseModel):
    """``parse``'s ``response_format`` / ``text_format``: the answer as structured output."""

    answer: str


PARSED = Weather(answer=ANSWER).model_dump_json()  # what the model sends a ``parse`` (compact JSON text)


def _structured(whole: Any) -> Any:
    """``whole`` for a ``parse``: the model answers the script's answer as ``Weather`` JSON (recorded as such)."""
    def body(call: Call) -> dict:
        call.turn = Turn(PARSED, [], call.turn.usage)
        return whole(call)
    return body


def _client(t: Truth, aio: bool, chat: bool, parse: bool = False) -> Any:
    whole = _chat_whole if chat else _resp_whole
    server = Server(t, httpx, _structured(whole) if parse else whole, _chat_events if chat else _resp_events, aio)
    transport = httpx.MockTransport(server)
    if aio:
        return openai.AsyncOpenAI(api_key="test-key", max_retries=0, http_client=httpx.AsyncClient(transport=transport))
    return openai.OpenAI(api_key="test-key", max_retries=0, http_client=httpx.Client(transport=transport))


def _text(result: Any) -> Any:
    return result.choices[0].message.content if hasattr(result, "choices") else result.output_text


def _chunk_norm(chunk: Any) -> Any:
    if hasattr(chunk, "choices"):
        return ([c.delta.content for c in chunk.choices], chunk.usage is not None)
    return getattr(chunk, "type", type(chunk).__name__)


def _managed(t: Truth, aio: bool, chat: bool) -> Any:
    """``chat.completions.stream()`` / ``responses.stream()``: the SDK's stream manager, iterated for its events."""
    client = _client(t, aio, chat)
    kwargs = dict(model=MODEL, messages=MESSAGES) if chat else dict(model=MODEL, input=CITY)
    api = client.chat.completions if chat else client.responses
    if chat:
        kwargs["stream_options"] = {"include_usage": True}
    if aio:
        async def agen() -> Any:
            async with api.stream(**kwargs) as stream:
                async for event in stream:
                    yield event
        return agen()

    def gen() -> Any:
        with api.stream(**kwargs) as stream:
            yield from stream
    return gen()


def _event_norm(event: Any) -> Any:
    return getattr(event, "type", type(event).__name__)


def _parsed(result: Any) -> Any:
    """What a ``parse`` gives the caller: the parsed object (``Weather``), and the text it was parsed from."""
    if hasattr(result, "choices"):
        message = result.choices[0].message
        return (message.parsed, message.content)
    return (result.output_parsed, result.output_text)


def _parse(t: Truth, aio: bool, chat: bool) -> Any:
    client = _client(t, aio, chat, parse=True)
    if chat:
        return client.chat.completions.parse(model=MODEL, messages=MESSAGES, response_format=Weather)
    return client.responses.parse(model=MODEL, input=CITY, text_format=Weather)


STREAM_OPTS = {"stream_options": {"include_usage": True}}
ENTRIES = {
    "chat.completions.create": lambda t: (
        lambda: _client(t, False, True).chat.completions.create(model=MODEL, messages=MESSAGES), _text),
    "AsyncOpenAI chat.completions.create": lambda t: (
        lambda: _client(t, True, True).chat.completions.create(model=MODEL, messages=MESSAGES), _text),
    "chat.completions.create(stream=True)": lambda t: (
        lambda: _client(t, False, True).chat.completions.create(model=MODEL, messages=MESSAGES, stream=True,
                                                                **STREAM_OPTS), _chunk_norm),
    "AsyncOpenAI chat.completions.create(stream=True)": lambda t: (
        lambda: (_client(t, True, True).chat.completions.create(model=MODEL, messages=MESSAGES, stream=True,
                                                                      **STREAM_OPTS)), _chunk_norm),
    "chat.completions.stream": lambda t: (lambda: _managed(t, False, True), _event_norm),
    "AsyncOpenAI chat.completions.stream": lambda t: (lambda: _managed(t, True, True), _event_norm),
    "responses.create": lambda t: (lambda: _client(t, False, False).responses.create(model=MODEL, input=CITY), _text),
    "AsyncOpenAI responses.create": lambda t: (
        lambda: _client(t, True, False).responses.create(model=MODEL, input=CITY), _text),
    "responses.create(stream=True)": lambda t: (
        lambda: _client(t, False, False).responses.create(model=MODEL, input=CITY, stream=True), _event_norm),
    "AsyncOpenAI responses.create(stream=True)": lambda t: (
        lambda: (_client(t, True, False).responses.create(model=MODEL, input=CITY, stream=True)), _event_norm),
    "responses.stream": lambda t: (lambda: _managed(t, False, False), _event_norm),
    "chat.completions.parse": lambda t: (lambda: _parse(t, False, True), _parsed),
    "AsyncOpenAI chat.completions.parse": lambda t: (lambda: _parse(t, True, True), _parsed),
    "responses.parse": lambda t: (lambda: _parse(t, False, False), _parsed),
    "AsyncOpenAI responses.parse": lambda t: (lambda: _parse(t, True, False), _parsed),
    "AsyncOpenAI responses.stream": lambda t: (lambda: _managed(t, True, False), _event_norm),
}
