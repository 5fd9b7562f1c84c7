"""The Anthropic client instrumentor: AC-1 (streams assembled), AC-2 (the SDK's own span does not double
ours), content, media, errors, raw responses, uninstrument."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_agents.instrumentors.anthropic import AnthropicInstrumentor
from otel_agents._spans.finalisers import settle
from tests.genai_schema import validate_genai_json
from tests.spans import SnapshotExporter, tree

from .fakes import LOOKUP_TOOL, Recorder, ac1_stream, ac1_whole, anthropic_client, anthropic_message

import httpx2

QUESTION = [{"role": "user", "content": "Where is order A100?"}]
REQUEST = dict(model="claude-haiku-4-5", max_tokens=256, messages=QUESTION, tools=[LOOKUP_TOOL],
               system="You are a support agent.")


def model_spans(exporter: SnapshotExporter) -> list:
    return exporter.semantic("model")


def _assert_ac1_span(span: Any) -> None:
    a = span.attributes
    assert a["gen_ai.usage.output_tokens"] == 42
    assert a["gen_ai.usage.input_tokens"] == 25 + 20 + 100  # all input tokens (OTel GenAI), as for the whole message
    assert a["gen_ai.usage.cache_read.input_tokens"] == 100
    assert a["gen_ai.usage.cache_creation.input_tokens"] == 20
    assert a["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert a["gen_ai.response.id"] == "msg_01"
    out = json.loads(a["gen_ai.output.messages"])
    assert out == [{"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "reasoning", "content": "The user wants order status."},
        {"type": "text", "content": "Let me check that order."},
        {"type": "tool_call", "id": "toolu_01", "name": "lookup_order", "arguments": {"order_id": "A100"}}]}]
    assert not any("sig-SECRET" in str(v) for v in a.values())
    validate_genai_json(a)


def _comparable(span: Any) -> dict[str, Any]:
    # what only a streamed request has (it streamed; when its first chunk came)
    skip = ("gen_ai.request.stream", "llm.invocation_parameters", "gen_ai.response.time_to_first_chunk",
            "langfuse.observation.completion_start_time")
    return {k: v for k, v in span.attributes.items() if k not in skip}


def test_ac1_whole_message_is_the_reference(anthropic_on: Any, exporter: SnapshotExporter) -> None:
    """AC-1 (reference): the message returned whole gives the span the streamed one must equal."""
    client = anthropic_client(Recorder(ac1_whole(), http=httpx2))
    client.messages.create(**REQUEST)
    (span,) = model_spans(exporter)
    _assert_ac1_span(span)
    assert span.name == "chat claude-haiku-4-5"
    assert span.attributes["gen_ai.provider.name"] == "anthropic"
    assert json.loads(span.attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "You are a support agent."}]
    tools = json.loads(span.attributes["gen_ai.tool.definitions"])
    assert tools[0]["name"] == "lookup_order" and tools[0]["parameters"]["required"] == ["order_id"]


def _stream_sync(client: Any, resource: str, how: str) -> Any:
    messages = client.beta.messages if resource == "beta" else client.messages
    if how == "create":
        for _ in messages.create(stream=True, **REQUEST):
            pass
        return None
    with messages.stream(**REQUEST) as stream:
        return stream.get_final_message()


async def _stream_async(client: Any, resource: str, how: str) -> Any:
    messages = client.beta.messages if resource == "beta" else client.messages
    if how == "create":
        async for _ in await messages.create(stream=True, **REQUEST):
            pass
        return None
    async with messages.stream(**REQUEST) as stream:
        return await stream.get_final_message()


@pytest.mark.parametrize("resource", ["messages", "beta"])
@pytest.mark.parametrize("how", ["create", "stream"])
@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_ac1_streamed_message_is_assembled(anthropic_on: Any, exporter: SnapshotExporter, resource: str, how: str,
                                           aio: bool) -> None:
    """AC-1: a streamed message (create(stream=True) and messages.stream() + get_final_message(), sync and
    async, messages and beta.messages) gives one model span equal to the one for the whole message: final
    output tokens 42, input and cache counts from message_start, tool_call finish, a reasoning part without
    the signature, the text, and the tool call with its arguments assembled from input_json_delta fragments."""
    client = anthropic_client(Recorder(ac1_whole(), ac1_stream(), http=httpx2), aio=aio)
    if aio:
        asyncio.run(client.messages.create(**REQUEST))
        final = asyncio.run(_stream_async(client, resource, how))
    else:
        client.messages.create(**REQUEST)
        final = _stream_sync(client, resource, how)
    if final is not None:
        assert final.usage.output_tokens == 42 and final.content[2].input == {"order_id": "A100"}
    whole, streamed = model_spans(exporter)
    _assert_ac1_span(streamed)
    assert streamed.attributes["gen_ai.request.stream"] is True
    assert _comparable(streamed) == _comparable(whole)


def test_ac2_one_model_span_with_the_sdk_tracing_on(anthropic_on: Any, exporter: SnapshotExporter,
                                                    monkeypatch: pytest.MonkeyPatch, provider: TracerProvider) -> None:
    """AC-2: with the SDK's own spans on (default, and with open_telemetry={"tracer_provider": ...}) or off
    (ANTHROPIC_OPEN_TELEMETRY=false, open_telemetry=False), plain and streamed, exactly one span per request
    that any vocabulary counts as a model call, carrying our content and usage; none of theirs parentless."""
    monkeypatch.delenv("ANTHROPIC_OPEN_TELEMETRY", raising=False)
    clients = [
        anthropic_client(Recorder(ac1_whole(), ac1_stream(), http=httpx2)),
        anthropic_client(Recorder(ac1_whole(), ac1_stream(), http=httpx2), open_telemetry={"tracer_provider": provider}),
        anthropic_client(Recorder(ac1_whole(), ac1_stream(), http=httpx2), open_telemetry=False),
    ]
    monkeypatch.setenv("ANTHROPIC_OPEN_TELEMETRY", "false")
    clients.append(anthropic_client(Recorder(ac1_whole(), ac1_stream(), http=httpx2)))
    old = trace._TRACER_PROVIDER  # the SDK's default is the global provider: make it ours for this test
    trace._TRACER_PROVIDER = provider
    try:
        for client in clients:
            exporter.clear()
            client.messages.create(**REQUEST)
            for _ in client.messages.create(stream=True, **REQUEST):
                pass
            counted = [s for s in exporter.spans if s.attributes.get("otel_agents.span.kind") == "model"
                       or s.attributes.get("openinference.span.kind") == "LLM"
                       or s.attributes.get("gen_ai.operation.name") == "chat"]
            assert len(counted) == 2, tree(exporter.spans)
            for s in counted:
                _assert_ac1_span(s)
            assert all(s.parent_id is None or s.parent_id in {x.span_id for x in exporter.spans}
                       for s in exporter.spans), tree(exporter.spans)
    finally:
        trace._TRACER_PROVIDER = old


def test_ac2_the_sdk_span_exists_without_us(exporter: SnapshotExporter, provider: TracerProvider,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """AC-2 (control): without our instrumentor the SDK does open its own chat span, so the test above can fail;
    after uninstrument() it is back."""
    monkeypatch.delenv("ANTHROPIC_OPEN_TELEMETRY", raising=False)
    client = anthropic_client(Recorder(ac1_whole(), http=httpx2), open_telemetry={"tracer_provider": provider})
    inst = AnthropicInstrumentor()
    inst.instrument(tracer_provider=provider)
    inst.uninstrument()
    client.messages.create(**REQUEST)
    native = [s for s in exporter.spans if s.name == "anthropic.messages.create"]
    assert len(native) == 1 and native[0].attributes["gen_ai.operation.name"] == "chat"
    assert exporter.semantic() == []


def test_ac2_order_does_not_matter(exporter: SnapshotExporter, provider: TracerProvider) -> None:
    """AC-2: a client built before instrument() and one built after give the same single span each."""
    before = anthropic_client(Recorder(ac1_whole(), http=httpx2), open_telemetry={"tracer_provider": provider})
    before.messages.create(**REQUEST)  # the SDK has made its tracer already
    exporter.clear()
    inst = AnthropicInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        after = anthropic_client(Recorder(ac1_whole(), http=httpx2), open_telemetry={"tracer_provider": provider})
        before.messages.create(**REQUEST)
        after.messages.create(**REQUEST)
    finally:
        inst.uninstrument()
    assert [s.name for s in exporter.spans] == ["chat claude-haiku-4-5"] * 2


def test_tool_results_media_and_system_blocks(anthropic_on: Any, exporter: SnapshotExporter) -> None:
    """Request content: tool_use/tool_result history, an image and a PDF document become parts (media as
    blob parts, never base64 in text), system text blocks become system instructions."""
    png = base64.b64encode(b"\x89PNG" + b"\0" * 16).decode()
    pdf = base64.b64encode(b"%PDF-1.4 tiny").decode()
    client = anthropic_client(Recorder(anthropic_message([{"type": "text", "text": "Shipped."}]), http=httpx2))
    client.messages.create(model="claude-haiku-4-5", max_tokens=64, system=[{"type": "text", "text": "Be terse."}],
                           messages=[
                               {"role": "user", "content": [
                                   {"type": "text", "text": "What is in these?"},
                                   {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
                                   {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                                   "data": pdf}}]},
                               {"role": "assistant", "content": [
                                   {"type": "thinking", "thinking": "hm", "signature": "sig-SECRET"},
                                   {"type": "redacted_thinking", "data": "REDACTED-SECRET"},
                                   {"type": "tool_use", "id": "toolu_9", "name": "lookup_order",
                                    "input": {"order_id": "A100"}}]},
                               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9",
                                                             "content": [{"type": "text", "text": "shipped"}]}]},
                           ])
    (span,) = model_spans(exporter)
    a = span.attributes
    messages = json.loads(a["gen_ai.input.messages"])
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    user, assistant, tool = (m["parts"] for m in messages)
    assert user[1] == {"type": "blob", "modality": "image", "mime_type": "image/png", "content": png}
    assert user[2]["type"] == "blob" and user[2]["mime_type"] == "application/pdf"
    assert assistant == [{"type": "reasoning", "content": "hm"},
                         {"type": "tool_call", "id": "toolu_9", "name": "lookup_order", "arguments": {"order_id": "A100"}}]
    assert tool == [{"type": "tool_call_response", "id": "toolu_9", "response": "shipped"}]
    assert json.loads(a["gen_ai.system_instructions"]) == [{"type": "text", "content": "Be terse."}]
    assert not any("SECRET" in str(v) for v in a.values())
    assert a["output.value"] == "Shipped."
    validate_genai_json(a)


def test_api_error_marks_the_span_and_reaches_the_caller(anthropic_on: Any, exporter: SnapshotExporter) -> None:
    """An API error (HTTP 529) reaches the caller unchanged; the model span is ERROR with its type."""
    import anthropic

    client = anthropic_client(Recorder({"_status": 529, "type": "error",
                                        "error": {"type": "overloaded_error", "message": "Overloaded"}}, http=httpx2))
    with pytest.raises(anthropic.APIStatusError):
        client.messages.create(**REQUEST)
    (span,) = model_spans(exporter)
    assert span.status.name == "ERROR" and span.attributes["error.type"].startswith("anthropic.")


def test_raw_response_paths(anthropic_on: Any, exporter: SnapshotExporter, recwarn: pytest.WarningsRecorder) -> None:
    """with_raw_response and with_streaming_response (sync and async, plain and streamed): one span each, usage
    recorded, the caller's parse() gets the same object we saw; no un-awaited coroutine."""
    import gc

    client = anthropic_client(Recorder(ac1_whole(), ac1_stream(), ac1_whole(), ac1_stream(), http=httpx2))
    raw = client.messages.with_raw_response.create(**REQUEST)
    assert raw.parse().usage.output_tokens == 42
    with client.messages.with_streaming_response.create(stream=True, **REQUEST) as response:
        for _ in response.parse():
            pass
    aclient = anthropic_client(Recorder(ac1_whole(), ac1_stream(), http=httpx2), aio=True)

    async def main() -> None:
        raw = await aclient.messages.with_raw_response.create(**REQUEST)
        assert (await raw.parse()).id == "msg_01"
        async with aclient.messages.with_streaming_response.create(stream=True, **REQUEST) as response:
            async for _ in await response.parse():
                pass

    asyncio.run(main())
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    spans = model_spans(exporter)
    assert len(spans) == 4, tree(exporter.spans)
    for s in spans:
        _assert_ac1_span(s)
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def test_abandoned_and_closed_streams_end(anthropic_on: Any, exporter: SnapshotExporter) -> None:
    """A stream closed after one event, or dropped, ends its span as abandoned (not ERROR), with what arrived."""
    import gc

    client = anthropic_client(Recorder(ac1_stream(), http=httpx2))
    stream = client.messages.create(stream=True, **REQUEST)
    next(iter(stream))
    stream.close()
    stream = client.messages.create(stream=True, **REQUEST)
    next(iter(stream))
    del stream
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    spans = model_spans(exporter)
    assert len(spans) == 2
    for s in spans:
        assert s.attributes["otel_agents.stream.abandoned"] is True and s.status.name != "ERROR"
        assert s.attributes["gen_ai.response.id"] == "msg_01"


async def _leave_after_first_event_async(client: Any, how: str) -> None:
    if how == "create":
        stream = await client.messages.create(stream=True, **REQUEST)
        async for _ in stream:
            break
        await stream.close()
        return
    async with client.messages.stream(**REQUEST) as stream:
        async for _ in stream:
            break


def _leave_after_first_event(client: Any, how: str) -> None:
    if how == "create":
        stream = client.messages.create(stream=True, **REQUEST)
        next(iter(stream))
        stream.close()
        return
    with client.messages.stream(**REQUEST) as stream:
        next(iter(stream))


@pytest.mark.parametrize("how", ["create", "stream"])
@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_fault4_stream_left_after_message_start_reports_no_interim_output_tokens(
        anthropic_on: Any, exporter: SnapshotExporter, how: str, aio: bool) -> None:
    """Issue #34 fault 4: create(stream=True) / messages.stream() left after the first event (message_start,
    whose usage says output_tokens 1): no output token count is recorded (the final one never came), the input
    counts message_start gave (final in the API) are; the span ends abandoned, without a finish reason."""
    client = anthropic_client(Recorder(ac1_stream(), http=httpx2), aio=aio)
    if aio:
        asyncio.run(_leave_after_first_event_async(client, how))
    else:
        _leave_after_first_event(client, how)
    (span,) = model_spans(exporter)
    a = span.attributes
    assert a["otel_agents.stream.abandoned"] is True and span.status.name != "ERROR"
    assert "gen_ai.usage.output_tokens" not in a and "llm.token_count.completion" not in a
    assert "llm.token_count.total" not in a
    assert a["gen_ai.usage.input_tokens"] == 25 + 20 + 100 and a["gen_ai.usage.cache_read.input_tokens"] == 100
    assert "gen_ai.response.finish_reasons" not in a


def test_content_off(exporter: SnapshotExporter, provider: TracerProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    """With NO_CONTENT: no messages, system, tools or output; model, usage and finish reasons stay."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    inst = AnthropicInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        client = anthropic_client(Recorder(ac1_whole(), ac1_stream(), http=httpx2))
        client.messages.create(**REQUEST)
        for _ in client.messages.create(stream=True, **REQUEST):
            pass
    finally:
        inst.uninstrument()
    for span in model_spans(exporter):
        a = span.attributes
        assert a["gen_ai.usage.output_tokens"] == 42 and a["gen_ai.response.finish_reasons"] == ("tool_call",)
        assert not [k for k in a if "messages" in k or k in ("input.value", "output.value", "gen_ai.system_instructions",
                                                             "gen_ai.tool.definitions")]
        assert "A100" not in json.dumps(a) and "order status" not in json.dumps(a)


def test_other_endpoints_are_left_alone(anthropic_on: Any, exporter: SnapshotExporter) -> None:
    """count_tokens is not a model call: no span."""
    client = anthropic_client(Recorder({"input_tokens": 12}, http=httpx2))
    assert client.messages.count_tokens(model="claude-haiku-4-5", messages=QUESTION).input_tokens == 12
    assert exporter.semantic() == []


def test_output_type_and_server_of_the_request_as_sent(anthropic_on: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 inference span: gen_ai.output.type ``json`` when the request asks for a JSON schema
    (``output_config.format``; the beta's ``output_format``), none when it asks for no format; server.address/port
    from the client's base URL. Compared with the request the fake received."""
    recorder = Recorder(ac1_whole(), http=httpx2)
    client = anthropic_client(recorder, base_url="http://127.0.0.1:8011")
    schema = {"type": "json_schema", "schema": {"type": "object", "properties": {"status": {"type": "string"}}}}
    client.messages.create(output_config={"format": schema}, **REQUEST)
    client.messages.create(**REQUEST)
    asked, plain = model_spans(exporter)
    assert recorder.requests[0]["output_config"]["format"]["type"] == "json_schema"
    assert "output_config" not in recorder.requests[1]
    assert asked.attributes["gen_ai.output.type"] == "json"
    assert "gen_ai.output.type" not in plain.attributes
    for span in (asked, plain):
        assert (span.attributes["server.address"], span.attributes["server.port"]) == ("127.0.0.1", 8011)
        assert "gen_ai.request.choice.count" not in span.attributes  # Messages asks for one answer: none sent
