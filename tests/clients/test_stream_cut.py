"""A model stream that ends cleanly at the transport level but without the event that closes its response (a proxy
closing the connection early), read by the real ``openai`` and ``anthropic`` clients over a mock transport: the span
says the response was cut (status ERROR, ``error.type`` ``stream_incomplete``, not abandoned: nobody left it),
keeps what arrived (compared with the events the fake served), and has no finish reason or usage the missing
event would have given. And a Responses item of a type we do not know keeps its fields, redacted."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import StatusCode

from otel_agents.instrumentors.openai import OpenAIInstrumentor
from tests.genai_schema import validate_genai_json
from tests.spans import SnapshotExporter, tree

from .fakes import (Recorder, ac1_stream, anthropic_client, chat_stream, cut_short, openai_client, response_body,
                    responses_stream)

ASK = [{"role": "user", "content": "Where is order A100?"}]
TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "llm.token_count.prompt",
          "llm.token_count.completion", "llm.token_count.total")


def _finishes(data: Any) -> bool:
    return data != "[DONE]" and any(c.get("finish_reason") for c in data["choices"])


def _chat_served(kept: list[Any]) -> list[dict[str, Any]]:
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in kept)
    return [{"type": "text", "content": text}]


def _responses_served(kept: list[Any]) -> list[dict[str, Any]]:
    parts = [{"type": "reasoning", "content": s["text"]} for e in kept if e["type"] == "response.output_item.done"
             for s in e["item"].get("summary", ())]
    text = "".join(e["delta"] for e in kept if e["type"] == "response.output_text.delta")
    return parts + [{"type": "text", "content": text}]


def _anthropic_served(kept: list[Any]) -> list[dict[str, Any]]:
    blocks = {e["index"]: e["content_block"] for e in kept if e["type"] == "content_block_start"}
    deltas = [e for e in kept if e["type"] == "content_block_delta"]
    parts = []
    for index, block in sorted(blocks.items()):
        joined = {key: "".join(e["delta"].get(key, "") for e in deltas if e["index"] == index)
                  for key in ("thinking", "text", "partial_json")}
        if block["type"] == "thinking":
            parts.append({"type": "reasoning", "content": joined["thinking"]})
        elif block["type"] == "text":
            parts.append({"type": "text", "content": joined["text"]})
        else:
            parts.append({"type": "tool_call", "id": block["id"], "name": block["name"],
                          "arguments": json.loads(joined["partial_json"])})
    return parts


def _consume(client: Any, api: str, aio: bool) -> None:
    def create(c: Any) -> Any:
        if api == "chat":
            return c.chat.completions.create(model="gpt-4o", messages=ASK, stream=True)
        if api == "responses":
            return c.responses.create(model="gpt-4o", input="Where is order A100?", stream=True)
        return c.messages.create(model="claude-haiku-4-5", max_tokens=256, messages=ASK, stream=True)

    async def read_async() -> None:
        async for _ in await create(client):
            pass

    if aio:
        asyncio.run(read_async())
    else:
        for _ in create(client):
            pass


# (the API, the full body, where it is cut, the parts served before the cut)
CUTS = {
    "chat": (lambda: chat_stream(include_usage=True), _finishes, _chat_served),
    "responses": (responses_stream, lambda e: e["type"] == "response.completed", _responses_served),
    "anthropic": (ac1_stream, lambda e: e["type"] == "message_delta", _anthropic_served),
}


@pytest.mark.parametrize("api,aio", [("chat", False), ("responses", False), ("responses", True), ("anthropic", False)])
def test_stream_cut_before_its_terminal_event(openai_on: Any, anthropic_on: Any, exporter: SnapshotExporter,
                                              api: str, aio: bool) -> None:
    """Cut before the chunk with the finish reason (chat), ``response.completed`` (responses), ``message_delta``
    and ``message_stop`` (anthropic): the span failed as cut short, its output what the fake served, with an
    empty (schema-required) finish reason, no gen_ai.response.finish_reasons, and no usage but the input counts
    ``message_start`` gives as final (anthropic). Fails before: status UNSET, no error.type."""
    body, at, served = CUTS[api]
    cut, kept = cut_short(body(), at)
    recorder = Recorder(cut, http=httpx2) if api == "anthropic" else Recorder(cut)
    client = anthropic_client(recorder, aio=aio) if api == "anthropic" else openai_client(recorder, aio=aio)
    _consume(client, api, aio)
    (span,) = exporter.semantic("model")
    a = span.attributes
    assert (span.status, a.get("error.type")) == (StatusCode.ERROR, "stream_incomplete"), tree([span])
    assert span.status_description.startswith("stream ended without ")
    assert "otel_agents.stream.abandoned" not in a
    assert json.loads(a["gen_ai.output.messages"]) == [{"role": "assistant", "parts": served(kept),
                                                        "finish_reason": ""}]
    assert "gen_ai.response.finish_reasons" not in a and "llm.finish_reason" not in a
    if api == "anthropic":  # message_start's input counts are final in the API; its output count is interim
        usage = kept[0]["message"]["usage"]
        assert a["gen_ai.usage.input_tokens"] == sum(usage[k] for k in ("input_tokens", "cache_read_input_tokens",
                                                                          "cache_creation_input_tokens"))
        assert not {"gen_ai.usage.output_tokens", "llm.token_count.completion", "llm.token_count.total"} & set(a)
    else:
        assert not set(TOKENS) & set(a), a
    validate_genai_json(a)


def test_anthropic_cut_after_message_delta_keeps_its_reason_and_usage(anthropic_on: Any,
                                                                      exporter: SnapshotExporter) -> None:
    """Cut between ``message_delta`` (the stop reason and final usage) and ``message_stop``: what the model said
    stands (its stop reason, the final output count), and the span still says the stream was cut."""
    cut, kept = cut_short(ac1_stream(), lambda e: e["type"] == "message_stop")
    _consume(anthropic_client(Recorder(cut, http=httpx2)), "anthropic", False)
    (span,) = exporter.semantic("model")
    a = span.attributes
    assert (span.status, a.get("error.type")) == (StatusCode.ERROR, "stream_incomplete")
    delta = kept[-1]
    assert a["gen_ai.response.finish_reasons"] == ("tool_call",) and delta["delta"]["stop_reason"] == "tool_use"
    assert a["gen_ai.usage.output_tokens"] == delta["usage"]["output_tokens"]


def test_whole_stream_is_not_marked(openai_on: Any, anthropic_on: Any, exporter: SnapshotExporter) -> None:
    """The same streams served whole: no error, their finish reasons (the control of the cases above)."""
    for api, (body, _, _) in CUTS.items():
        recorder = Recorder(body(), http=httpx2) if api == "anthropic" else Recorder(body())
        _consume(anthropic_client(recorder) if api == "anthropic" else openai_client(recorder), api, False)
    spans = exporter.semantic("model")
    assert [s.attributes["gen_ai.response.finish_reasons"] for s in spans] == [("stop",), ("stop",), ("tool_call",)]
    assert all(s.status is StatusCode.UNSET and "error.type" not in s.attributes for s in spans), tree(spans)


def test_stream_cut_with_content_off(exporter: SnapshotExporter, provider: TracerProvider,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With content off the cut is told the same way, and no finish reason is written."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        _consume(openai_client(Recorder(cut_short(chat_stream(include_usage=True), _finishes)[0])), "chat", False)
    finally:
        inst.uninstrument()
    (span,) = exporter.semantic("model")
    assert (span.status, span.attributes.get("error.type")) == (StatusCode.ERROR, "stream_incomplete")
    assert not {"gen_ai.response.finish_reasons", "gen_ai.output.messages"} & set(span.attributes)


SECRET = "sk-proj-" + "a" * 40
UNKNOWN = {"type": "frobnicate_call", "id": "fx_1", "status": "completed", "query": {"order": "A100", "key": SECRET},
           "encrypted_content": "OPAQUE-TOKEN"}


def test_unknown_responses_item_keeps_its_fields(openai_on: Any, exporter: SnapshotExporter) -> None:
    """An output item (whole response, and a cut stream's ``response.output_item.done``) and an input item of a
    type we do not know: a GenAI generic part of its type with its other fields, as the fake sent them, a secret
    among them redacted, its opaque ``encrypted_content`` left out. Fails before: a part holding only the type."""
    whole = response_body()
    whole["output"].append(dict(UNKNOWN))
    done = {"type": "response.output_item.done", "output_index": 0, "item": dict(UNKNOWN), "sequence_number": 1}
    created = {"type": "response.created", "sequence_number": 0,
               "response": {**whole, "status": "in_progress", "output": [], "usage": None}}
    stream = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in (created, done)).encode()
    client = openai_client(Recorder(whole, stream))
    client.responses.create(model="gpt-4o", input=[{"role": "user", "content": "Where is A100?"}, dict(UNKNOWN)])
    _consume(client, "responses", False)
    expected = {k: v for k, v in UNKNOWN.items() if k != "encrypted_content"}
    expected["query"] = {"order": "A100", "key": "[REDACTED]"}
    first, cut = exporter.semantic("model")
    assert json.loads(first.attributes["gen_ai.output.messages"])[0]["parts"][-1] == expected
    assert json.loads(first.attributes["gen_ai.input.messages"])[-1]["parts"] == [expected]
    assert json.loads(cut.attributes["gen_ai.output.messages"])[0]["parts"] == [expected]
    assert SECRET not in json.dumps(dict(first.attributes)) + json.dumps(dict(cut.attributes))
    validate_genai_json(first.attributes)


def test_fold_reads_a_cut_stream_as_a_failed_step(openai_on: Any, provider: TracerProvider) -> None:
    """The ECP fold of a cut stream: the model step says ``stream=incomplete`` and no ``finish=``, its ``error``
    line names the event that never came, the run counts one error, and the envelope has no usage (none was
    final). Fails before: a clean ``model`` line and no error."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_agents.exporters.ecp import fold
    from tests.exporters.conftest import check

    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    _consume(openai_client(Recorder(cut_short(chat_stream(include_usage=True), _finishes)[0])), "chat", False)
    [envelope] = check(fold(memory.get_finished_spans()))
    assert envelope["evaluation_context"].splitlines() == [
        "model gpt-4o-2024-08-06 stream=incomplete",
        "error model gpt-4o-2024-08-06: stream ended without finish_reason"]
    assert envelope["metrics"]["errors"] == 1 and "usage" not in envelope
    [record] = json.loads(envelope["logs"])
    assert (record["status"], record["attributes"]["error.type"]) == ("error", "stream_incomplete")


def _usage_chunk(data: Any) -> bool:
    return data != "[DONE]" and not data["choices"] and data.get("usage") is not None


# (what the server sends, whether the request asks for stream_options.include_usage, the cut it is)
USAGE_ENDINGS = {
    "cut before its usage chunk": (lambda: cut_short(chat_stream(include_usage=True), _usage_chunk)[0], True,
                                   "usage chunk"),
    "no usage chunk, [DONE]": (lambda: chat_stream(include_usage=False), True, None),  # a server ignoring the option
    "usage chunk, cut before [DONE]": (lambda: cut_short(chat_stream(include_usage=True), lambda d: d == "[DONE]")[0],
                                       True, None),
    "not asked, cut before [DONE]": (lambda: cut_short(chat_stream(include_usage=False), lambda d: d == "[DONE]")[0],
                                     False, None),
}


@pytest.mark.parametrize("aio", [False, True])
@pytest.mark.parametrize("ending", list(USAGE_ENDINGS))
def test_chat_stream_asked_for_usage_is_cut_without_its_usage_chunk_and_done(
        openai_on: Any, exporter: SnapshotExporter, ending: str, aio: bool) -> None:
    """``stream_options.include_usage`` asked: the API sends a usage chunk after the last finish reason, before
    ``data: [DONE]``, and says an interrupted stream may lack it. A stream that ends after its finish reasons with
    neither was cut (``stream ended without usage chunk``); the finish reason it sent stands, and no usage. Not cut:
    a server that sends ``[DONE]`` without a usage chunk (it ignores the option: no usage, no error), a stream
    with its usage chunk but no ``[DONE]`` (nothing of the response missing), and one that did not ask. Fails
    before for the first: status UNSET."""
    make, asked, missing = USAGE_ENDINGS[ending]
    client = openai_client(Recorder(make()), aio=aio)
    options = {"stream_options": {"include_usage": True}} if asked else {}

    async def read_async() -> None:
        async for _ in await client.chat.completions.create(model="gpt-4o", messages=ASK, stream=True, **options):
            pass

    if aio:
        asyncio.run(read_async())
    else:
        for _ in client.chat.completions.create(model="gpt-4o", messages=ASK, stream=True, **options):
            pass
    (span,) = exporter.semantic("model")
    a = span.attributes
    assert a["gen_ai.response.finish_reasons"] == ("stop",)  # sent, whatever came after
    if missing is None:
        assert span.status is StatusCode.UNSET and "error.type" not in a, tree([span])
    else:
        assert (span.status, a.get("error.type")) == (StatusCode.ERROR, "stream_incomplete"), tree([span])
        assert span.status_description == f"stream ended without {missing}"
    assert ("gen_ai.usage.input_tokens" in a) is (ending == "usage chunk, cut before [DONE]")
