"""A model stream let go before its end without ever being closed itself, with the real ``openai`` and
``anthropic`` clients over a mock transport: ``with_streaming_response``'s block left (it closes the HTTP response,
not the SDK's stream object, which the response still holds), unread or after one event; and a stream dropped
before its first read (its iterator never started, so never saw the drop). Each span ends at once (the block's
exit, the collection), as abandoned, with what arrived and nothing else: no output message when no event came."""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any, Callable

import httpx2
import pytest

from otel_agents._spans.finalisers import settle
from tests.spans import SnapshotExporter, tree

from .fakes import Recorder, ac1_stream, anthropic_client, chat_stream, openai_client, responses_stream

ASK = [{"role": "user", "content": "Where is order A100?"}]


def _chat(aio: bool) -> tuple[Any, Callable[[Any], Any], dict[str, Any]]:
    client = openai_client(Recorder(chat_stream(include_usage=True)), aio=aio)
    return client, lambda c: c.chat.completions, dict(model="gpt-4o", messages=ASK, stream=True)


def _responses(aio: bool) -> tuple[Any, Callable[[Any], Any], dict[str, Any]]:
    client = openai_client(Recorder(responses_stream()), aio=aio)
    return client, lambda c: c.responses, dict(model="gpt-4o", input="Where is order A100?", stream=True)


def _messages(aio: bool) -> tuple[Any, Callable[[Any], Any], dict[str, Any]]:
    client = anthropic_client(Recorder(ac1_stream(), http=httpx2), aio=aio)
    return client, lambda c: c.messages, dict(model="claude-haiku-4-5", max_tokens=64, messages=ASK, stream=True)


ROUTES = {"chat": _chat, "responses": _responses, "messages": _messages}
# What the first event of each stream says: the chat chunk's role only, the response's id, the message's id.
FIRST_EVENT_ID = {"chat": "chatcmpl-2", "responses": "resp_1", "messages": "msg_01"}


def _model_span(exporter: SnapshotExporter) -> Any:
    spans = exporter.semantic("model")
    assert len(spans) == 1, tree(exporter.spans)
    return spans[0]


@pytest.mark.parametrize("read", [0, 1], ids=["unread", "one_event"])
@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_streaming_response_block_left_early_ends_the_span(openai_on: Any, anthropic_on: Any,
                                                          exporter: SnapshotExporter, route: str, aio: bool,
                                                          read: int) -> None:
    """``with client.….with_streaming_response.create(stream=True) as response:`` left after ``read`` events of
    ``response.parse()`` (the response still referenced): the span has ended when the block is left, abandoned,
    not an error; with nothing read it has no output message and no response id (nothing arrived)."""
    client, resource, request = ROUTES[route](aio)
    kept: list[Any] = []

    def leave(stream: Any) -> None:
        for event in stream:
            kept.append(event)
            if len(kept) >= read:
                break

    if aio:
        async def main() -> Any:
            async with resource(client).with_streaming_response.create(**request) as response:
                if read:
                    async for event in await response.parse():
                        kept.append(event)
                        break
            return response

        response = asyncio.run(main())
    else:
        with resource(client).with_streaming_response.create(**request) as response:
            if read:
                leave(response.parse())
    assert len(kept) == read
    span = _model_span(exporter)  # ended with the block, while `response` still holds the stream
    a = span.attributes
    assert a["otel_agents.stream.abandoned"] is True and span.status.name != "ERROR", tree([span])
    assert a.get("gen_ai.response.id") == (FIRST_EVENT_ID[route] if read else None)
    if not read:
        assert "gen_ai.output.messages" not in a and "output.value" not in a, a
    assert response is not None


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_stream_dropped_before_its_first_read_ends_the_span(openai_on: Any, anthropic_on: Any,
                                                           exporter: SnapshotExporter, route: str, aio: bool) -> None:
    """``stream = client.….create(stream=True)`` then let go unread: its span ends when it is collected (not at
    the idle timeout, five minutes later), abandoned, with no output message (no event arrived)."""
    client, resource, request = ROUTES[route](aio)
    if aio:
        async def main() -> None:
            await resource(client).create(**request)  # the stream, dropped at once

        asyncio.run(main())
    else:
        resource(client).create(**request)
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    span = _model_span(exporter)
    a = span.attributes
    assert a["otel_agents.stream.abandoned"] is True and span.status.name != "ERROR", tree([span])
    assert "gen_ai.output.messages" not in a and not json.loads(a.get("output.value", "null") or "null"), a
