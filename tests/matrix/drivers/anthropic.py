"""Anthropic client cells: the real ``anthropic`` client over a mock transport, one model call answering the
matrix's script; streams served event by event (:mod:`._sse`): ``message_start`` carries the input count
(and an interim output count, never final), ``message_delta`` the stop reason and the output count."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2

from otel_agents.instrumentors.anthropic import AnthropicInstrumentor
from tests.clients.fakes import anthropic_message
from tests.matrix.drivers._sse import Server
from tests.matrix.truth import ANSWER, CITY, Call, Truth

INSTRUMENTOR = AnthropicInstrumentor
MODEL = "claude-haiku-4-5"
KW = {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": CITY}]}


def _whole(call: Call) -> dict:
    call.usage, call.finish = call.turn.usage, "end_turn"
    u = call.turn.usage
    return anthropic_message([{"type": "text", "text": ANSWER}], usage={"input_tokens": u[0], "output_tokens": u[1]})


def _started(call: Call) -> None:
    call.usage = (call.turn.usage[0], None)  # the input count is final; message_start's output count is not


def _delta(call: Call) -> None:
    call.usage, call.finish, call.answered = call.turn.usage, "end_turn", True


def _events(call: Call) -> list:
    u = call.turn.usage
    start = anthropic_message([], stop_reason=None, usage={"input_tokens": u[0], "output_tokens": 1})
    words = ANSWER.split(" ")
    return [("message_start", {"type": "message_start", "message": start}, _started),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}, None),
            *[("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": w if i == 0 else " " + w}}, None)
              for i, w in enumerate(words)],
            ("content_block_stop", {"type": "content_block_stop", "index": 0}, None),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": u[1]}}, _delta),
            ("message_stop", {"type": "message_stop"}, None)]


def _client(t: Truth, aio: bool) -> Any:
    transport = httpx2.MockTransport(Server(t, httpx2, _whole, _events, aio))
    if aio:
        return anthropic.AsyncAnthropic(api_key="test-key", max_retries=0,
                                        http_client=httpx2.AsyncClient(transport=transport))
    return anthropic.Anthropic(api_key="test-key", max_retries=0, http_client=httpx2.Client(transport=transport))


def _managed(t: Truth, aio: bool) -> Any:
    client = _client(t, aio)
    if aio:
        async def agen() -> Any:
            async with client.messages.stream(**KW) as stream:
                async for event in stream:
                    yield event
        return agen()

    def gen() -> Any:
        with client.messages.stream(**KW) as stream:
            yield from stream
    return gen()


def _text(message: Any) -> Any:
    return [getattr(b, "text", None) for b in message.content]


def _event(event: Any) -> Any:
    return event.type


ENTRIES = {
    "messages.create": lambda t: (lambda: _client(t, False).messages.create(**KW), _text),
    "AsyncAnthropic messages.create": lambda t: (lambda: _client(t, True).messages.create(**KW), _text),
    "messages.create(stream=True)": lambda t: (lambda: _client(t, False).messages.create(**KW, stream=True), _event),
    "AsyncAnthropic messages.create(stream=True)": lambda t: (
        lambda: _client(t, True).messages.create(**KW, stream=True), _event),
    "messages.stream": lambda t: (lambda: _managed(t, False), _event),
    "AsyncAnthropic messages.stream": lambda t: (lambda: _managed(t, True), _event),
}
