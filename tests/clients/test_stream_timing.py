"""Streamed calls through the provider clients are timed from the chunks the server really sent (OTel GenAI v1.41
``gen_ai.response.time_to_first_chunk``, with ``gen_ai.request.stream`` true); whole calls are not."""

from __future__ import annotations

import time
from typing import Any

from tests.spans import SnapshotExporter

from .fakes import Paced, Recorder, ac1_stream, ac1_whole, anthropic_client, chat_completion, chat_stream, \
    openai_client, response_body, responses_stream
from .test_anthropic import REQUEST
from .test_openai import CHAT, RESPONSES

TTFC = "gen_ai.response.time_to_first_chunk"


def _check(exporter: SnapshotExporter, server: Paced, began: float, ended: float) -> None:
    whole, streamed = exporter.semantic("model")
    assert TTFC not in whole.attributes and whole.attributes.get("gen_ai.request.stream") is not True
    ttfc = streamed.attributes[TTFC]
    assert streamed.attributes["gen_ai.request.stream"] is True
    # the first event left the server `first` seconds after the request came in (which was after the span began),
    # and it was timed as it came
    assert server.first <= server.sent[0] - server.received <= ttfc <= ended - began
    assert "langfuse.observation.completion_start_time" in streamed.attributes


def test_openai_chat_stream(openai_on: Any, exporter: SnapshotExporter) -> None:
    openai_client(Recorder(chat_completion())).chat.completions.create(**CHAT)
    server = Paced(chat_stream(include_usage=True), first=0.05, between=0.01)
    began = time.monotonic()
    for _ in openai_client(server).chat.completions.create(stream=True, **CHAT):
        pass
    _check(exporter, server, began, time.monotonic())


def test_openai_responses_stream(openai_on: Any, exporter: SnapshotExporter) -> None:
    openai_client(Recorder(response_body())).responses.create(**RESPONSES)
    server = Paced(responses_stream(), first=0.05, between=0.01)
    began = time.monotonic()
    for _ in openai_client(server).responses.create(stream=True, **RESPONSES):
        pass
    _check(exporter, server, began, time.monotonic())


def test_anthropic_messages_stream(anthropic_on: Any, exporter: SnapshotExporter) -> None:
    import httpx2

    anthropic_client(Recorder(ac1_whole(), http=httpx2)).messages.create(**REQUEST)
    server = Paced(ac1_stream(), first=0.05, between=0.01, http=httpx2)
    began = time.monotonic()
    with anthropic_client(server).messages.stream(**REQUEST) as stream:
        stream.get_final_message()
    _check(exporter, server, began, time.monotonic())
