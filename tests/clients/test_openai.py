"""The OpenAI client instrumentor: AC-3 (every entry point, usage only when reported), OA-2's client side
(a Responses stream read to response.completed and closed), embeddings, content, errors."""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
from typing import Any

import pydantic
import pytest
from opentelemetry.sdk.trace import TracerProvider

from otel_agents.instrumentors.openai import OpenAIInstrumentor
from otel_agents._spans.finalisers import settle
from tests.genai_schema import validate_genai_json
from tests.spans import SnapshotExporter, tree

from .fakes import (Recorder, chat_completion, chat_stream, embeddings_body, openai_client, response_body,
                    responses_stream)

CHAT = dict(model="gpt-4o", messages=[{"role": "system", "content": "Be terse."},
                                      {"role": "user", "content": "Where is order A100?"}],
            tools=[{"type": "function", "function": {"name": "lookup_order", "description": "Look up an order.",
                                                     "parameters": {"type": "object",
                                                                    "properties": {"order_id": {"type": "string"}}}}}])
RESPONSES = dict(model="gpt-4o", input="Where is order A100?", instructions="Be terse.")
TOKEN_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "llm.token_count.prompt",
              "llm.token_count.completion", "llm.token_count.total", "gen_ai.usage.cache_read.input_tokens")


def model_spans(exporter: SnapshotExporter) -> list:
    return exporter.semantic("model")


def _assert_usage(span: Any, cached: int | None = 4) -> None:
    a = span.attributes
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (11, 7), tree([span])
    assert a.get("gen_ai.usage.cache_read.input_tokens") == cached


def _assert_no_usage(span: Any) -> None:
    assert not [k for k in span.attributes if k in TOKEN_KEYS or "token" in k], span.attributes


def test_chat_create_whole(openai_on: Any, exporter: SnapshotExporter) -> None:
    """chat.completions.create: one model span with messages, system, tools, output and usage."""
    client = openai_client(Recorder(chat_completion()))
    client.chat.completions.create(**CHAT)
    (span,) = model_spans(exporter)
    a = span.attributes
    assert span.name == "chat gpt-4o" and a["gen_ai.provider.name"] == "openai"
    assert a["gen_ai.response.model"] == "gpt-4o-2024-08-06" and a["gen_ai.response.id"] == "chatcmpl-1"
    _assert_usage(span)
    assert a["output.value"] == "Order A100 has shipped." and a["gen_ai.response.finish_reasons"] == ("stop",)
    assert json.loads(a["gen_ai.system_instructions"]) == [{"type": "text", "content": "Be terse."}]
    assert json.loads(a["gen_ai.tool.definitions"])[0]["name"] == "lookup_order"
    validate_genai_json(a)


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_ac3_chat_stream_with_and_without_usage(openai_on: Any, exporter: SnapshotExporter, aio: bool) -> None:
    """AC-3: a chat stream with stream_options.include_usage (last chunk: choices [] + usage) gives 11/7 (cached
    4); the same stream without it gives no token attribute at all, and our instrumentor does not add
    stream_options to the user's request."""
    recorder = Recorder(chat_stream(include_usage=True), chat_stream(include_usage=False))
    client = openai_client(recorder, aio=aio)

    async def consume_async() -> None:
        async for _ in await client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **CHAT):
            pass
        async for _ in await client.chat.completions.create(stream=True, **CHAT):
            pass

    if aio:
        asyncio.run(consume_async())
    else:
        for _ in client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **CHAT):
            pass
        for _ in client.chat.completions.create(stream=True, **CHAT):
            pass
    with_usage, without = model_spans(exporter)
    _assert_usage(with_usage)
    _assert_no_usage(without)
    for s in (with_usage, without):
        assert s.attributes["output.value"] == "Order A100 has shipped."
    assert "stream_options" not in recorder.requests[1]


def test_chat_stream_tool_call_fragments(openai_on: Any, exporter: SnapshotExporter) -> None:
    """Streamed tool-call arguments are joined from their fragments; finish reason tool_call."""
    client = openai_client(Recorder(chat_stream(include_usage=True, tool_call=True)))
    for _ in client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **CHAT):
        pass
    (span,) = model_spans(exporter)
    out = json.loads(span.attributes["gen_ai.output.messages"])
    assert out[0]["parts"] == [{"type": "tool_call", "id": "call_1", "name": "lookup_order",
                                "arguments": {"order_id": "A100"}}]
    assert span.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)


class Answer(pydantic.BaseModel):
    order_id: str
    status: str


def test_ac3_parse_is_one_span_with_the_parsed_output(openai_on: Any, exporter: SnapshotExporter) -> None:
    """AC-3: chat.completions.parse(response_format=Answer) is one span (not doubled by the create inside),
    its output the parsed object."""
    client = openai_client(Recorder(chat_completion(json.dumps({"order_id": "A100", "status": "shipped"}))))
    result = client.chat.completions.parse(response_format=Answer, model="gpt-4o", messages=CHAT["messages"])
    assert result.choices[0].message.parsed == Answer(order_id="A100", status="shipped")
    (span,) = model_spans(exporter)
    assert json.loads(span.attributes["output.value"]) == {"order_id": "A100", "status": "shipped"}
    _assert_usage(span)


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_ac3_responses_entry_points(openai_on: Any, exporter: SnapshotExporter, aio: bool) -> None:
    """AC-3: responses.create (whole), responses.create(stream=True), responses.stream(), and a stream the
    caller stops reading at response.completed and closes: one span each, usage 11/7 cached 4 (reasoning 3)
    from the final event, the text, the reasoning summary (never the encrypted reasoning)."""
    recorder = Recorder(response_body(), responses_stream(), responses_stream(), responses_stream())
    client = openai_client(recorder, aio=aio)

    def sync() -> None:
        client.responses.create(**RESPONSES)
        for _ in client.responses.create(stream=True, **RESPONSES):
            pass
        with client.responses.stream(**RESPONSES) as stream:
            assert stream.get_final_response().usage.output_tokens == 7
        stream = client.responses.create(stream=True, **RESPONSES)
        for event in stream:
            if event.type == "response.completed":
                break
        stream.close()

    async def aio_() -> None:
        await client.responses.create(**RESPONSES)
        async for _ in await client.responses.create(stream=True, **RESPONSES):
            pass
        async with client.responses.stream(**RESPONSES) as stream:
            assert (await stream.get_final_response()).usage.output_tokens == 7
        stream = await client.responses.create(stream=True, **RESPONSES)
        async for event in stream:
            if event.type == "response.completed":
                break
        await stream.close()

    asyncio.run(aio_()) if aio else sync()
    spans = model_spans(exporter)
    assert len(spans) == 4, tree(exporter.spans)
    for s in spans:
        _assert_usage(s)
        a = s.attributes
        assert a["gen_ai.usage.reasoning.output_tokens"] == 3
        assert a["output.value"] == "Order A100 has shipped." and a["gen_ai.response.id"] == "resp_1"
        assert "otel_agents.stream.abandoned" not in a
        out = json.loads(a["gen_ai.output.messages"])
        assert out[0]["parts"][0] == {"type": "reasoning", "content": "Check the order."}
        assert "ENCRYPTED" not in json.dumps(a)
        validate_genai_json(a)


def test_ac3_oa2_async_streaming_response_path(openai_on: Any, exporter: SnapshotExporter) -> None:
    """AC-3 / OA-2 (client side): the Agents SDK's path — async responses.with_streaming_response.create(
    stream=True), await response.parse(), read to response.completed, close — and with_raw_response.create:
    one span each with usage 11/7/4 and the text; no 'coroutine was never awaited' warning."""
    client = openai_client(Recorder(responses_stream(), response_body()), aio=True)

    async def main() -> None:
        manager = client.responses.with_streaming_response.create(stream=True, **RESPONSES)
        response = await manager.__aenter__()
        try:
            stream = await response.parse()
            async for event in stream:
                if event.type == "response.completed":
                    break
        finally:
            await manager.__aexit__(None, None, None)
        raw = await client.responses.with_raw_response.create(**RESPONSES)
        assert raw.parse().id == "resp_1"

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
        gc.collect()
        settle()  # a collected stream's span ends in the finaliser thread
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]
    spans = model_spans(exporter)
    assert len(spans) == 2, tree(exporter.spans)
    for s in spans:
        _assert_usage(s)
        assert s.attributes["output.value"] == "Order A100 has shipped."


def test_ac3_chat_raw_and_streaming_response_paths(openai_on: Any, exporter: SnapshotExporter) -> None:
    """AC-3: chat with_raw_response / with_streaming_response (sync and async): one span each, with usage."""
    client = openai_client(Recorder(chat_completion(), chat_stream(include_usage=True)))
    assert client.chat.completions.with_raw_response.create(**CHAT).parse().id == "chatcmpl-1"
    with client.chat.completions.with_streaming_response.create(stream=True, **CHAT) as response:
        for _ in response.parse():
            pass
    aclient = openai_client(Recorder(chat_completion(), chat_stream(include_usage=True)), aio=True)

    async def main() -> None:
        raw = await aclient.chat.completions.with_raw_response.create(**CHAT)
        assert raw.parse().id == "chatcmpl-1"
        async with aclient.chat.completions.with_streaming_response.create(stream=True, **CHAT) as response:
            async for _ in await response.parse():
                pass

    asyncio.run(main())
    spans = model_spans(exporter)
    assert len(spans) == 4
    for s in spans:
        _assert_usage(s)


def test_responses_function_call_and_history(openai_on: Any, exporter: SnapshotExporter) -> None:
    """Responses input items (message, function_call, function_call_output) and a function-call output."""
    client = openai_client(Recorder(response_body(function_call=True)))
    client.responses.create(model="gpt-4o", input=[
        {"role": "user", "content": [{"type": "input_text", "text": "Where is A100?"},
                                     {"type": "input_image", "image_url": "https://example.com/a.png"}]},
        {"type": "function_call", "call_id": "call_0", "name": "lookup_order", "arguments": "{\"order_id\": \"A1\"}"},
        {"type": "function_call_output", "call_id": "call_0", "output": "not found"},
    ], tools=[{"type": "function", "name": "lookup_order", "parameters": {"type": "object"}, "strict": False}])
    (span,) = model_spans(exporter)
    a = span.attributes
    messages = json.loads(a["gen_ai.input.messages"])
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    image = messages[0]["parts"][1]
    assert (image["type"], image["modality"], image["uri"]) == ("uri", "image", "https://example.com/a.png")
    assert messages[2]["parts"] == [{"type": "tool_call_response", "id": "call_0", "response": "not found"}]
    out = json.loads(a["gen_ai.output.messages"])
    assert out[0]["finish_reason"] == "tool_call" and out[0]["parts"][-1]["name"] == "lookup_order"
    validate_genai_json(a)


# The built-in client tools' calls (Responses API output items) and the items answering them in a later request.
CLIENT_TOOL_CALLS = [
    ({"type": "shell_call", "id": "sh_1", "call_id": "call_sh", "status": "completed",
      "action": {"commands": ["ls -la"], "timeout_ms": 1000}},
     {"type": "shell_call_output", "call_id": "call_sh",
      "output": [{"stdout": "total 0", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
     "shell", {"commands": ["ls -la"], "timeout_ms": 1000}),
    ({"type": "apply_patch_call", "id": "ap_1", "call_id": "call_ap", "status": "completed",
      "operation": {"type": "create_file", "path": "notes.txt", "diff": "+hello"}},
     {"type": "apply_patch_call_output", "call_id": "call_ap", "status": "completed", "output": "created"},
     "apply_patch", {"type": "create_file", "path": "notes.txt", "diff": "+hello"}),
    ({"type": "custom_tool_call", "id": "ct_1", "call_id": "call_ct", "name": "grep", "input": "42"},
     {"type": "custom_tool_call_output", "call_id": "call_ct", "output": "2 matches"},
     "grep", "42"),  # free text, not JSON: kept as the model wrote it
]


@pytest.mark.parametrize("call, answer, name, asked", CLIENT_TOOL_CALLS, ids=[c[2] for c in CLIENT_TOOL_CALLS])
def test_responses_client_tool_calls_are_tool_calls(openai_on: Any, exporter: SnapshotExporter, call: dict,
                                                    answer: dict, name: str, asked: Any) -> None:
    """A response calling a built-in tool the client runs (shell, apply_patch) or a custom tool is a tool call, as a
    function call is: a ``tool_call`` part with the call's id, the tool's name and what the model asked for, and the
    finish reason ``tool_call``; the next request's answer item is that call's ``tool_call_response``."""
    called = {**response_body(), "output": [call]}
    client = openai_client(Recorder(called, response_body()))
    client.responses.create(**RESPONSES)
    client.responses.create(model="gpt-4o", input=[{"role": "user", "content": "Do it"}, call, answer])
    first, second = model_spans(exporter)
    [out] = json.loads(first.attributes["gen_ai.output.messages"])
    assert out["finish_reason"] == "tool_call" and first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert out["parts"] == [{"type": "tool_call", "id": call["call_id"], "name": name, "arguments": asked}]
    given = json.loads(second.attributes["gen_ai.input.messages"])
    assert [m["role"] for m in given] == ["user", "assistant", "tool"]
    assert given[1]["parts"] == out["parts"]
    [response] = given[2]["parts"]
    assert (response["type"], response["id"], response["response"]) == (
        "tool_call_response", call["call_id"], answer["output"])
    validate_genai_json(first.attributes)
    validate_genai_json(second.attributes)


def test_embeddings(openai_on: Any, exporter: SnapshotExporter) -> None:
    """embeddings.create → one embedding span: model, inputs, dimension, input tokens; no vectors."""
    client = openai_client(Recorder(embeddings_body(n=2, dim=3)))
    client.embeddings.create(model="text-embedding-3-small", input=["refund policy", "order status"],
                             encoding_format="float")
    (span,) = exporter.semantic("embedding")
    a = span.attributes
    assert span.name == "embeddings text-embedding-3-small" and a["gen_ai.operation.name"] == "embeddings"
    assert a["gen_ai.embeddings.dimension.count"] == 3 and a["gen_ai.usage.input_tokens"] == 6
    assert a["embedding.embeddings.1.embedding.text"] == "order status"
    assert model_spans(exporter) == []


def test_error_and_uninstrument(exporter: SnapshotExporter, provider: TracerProvider) -> None:
    """A 500 reaches the caller unchanged with an ERROR span; after uninstrument() no span at all."""
    import openai

    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    client = openai_client(Recorder({"_status": 500, "error": {"message": "upstream 500", "type": "server_error"}},
                                    chat_completion()))
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(**CHAT)
    (span,) = model_spans(exporter)
    assert span.status.name == "ERROR" and span.attributes["error.type"] == "openai.InternalServerError"
    inst.uninstrument()
    exporter.clear()
    client.chat.completions.create(**CHAT)
    assert exporter.spans == []


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_fault5_chat_stream_left_early_invents_no_finish_reason(openai_on: Any, exporter: SnapshotExporter,
                                                                 aio: bool) -> None:
    """Issue #34 fault 5: a chat stream left after two chunks never received a finish reason: the span has no
    gen_ai.response.finish_reasons and its output message's (schema-required) finish_reason is empty, not an
    invented "stop"; the span ends abandoned with what arrived."""
    client = openai_client(Recorder(chat_stream(include_usage=True)), aio=aio)

    async def leave_async() -> None:
        stream = await client.chat.completions.create(stream=True, **CHAT)
        seen = 0
        async for _ in stream:
            seen += 1
            if seen == 2:
                break
        await stream.close()

    if aio:
        asyncio.run(leave_async())
    else:
        stream = client.chat.completions.create(stream=True, **CHAT)
        for i, _ in enumerate(stream):
            if i == 1:
                break
        stream.close()
    (span,) = model_spans(exporter)
    a = span.attributes
    assert a["otel_agents.stream.abandoned"] is True
    assert "gen_ai.response.finish_reasons" not in a
    out = json.loads(a["gen_ai.output.messages"])
    assert out == [{"role": "assistant", "parts": [{"type": "text", "content": "Order A100 "}], "finish_reason": ""}]
    _assert_no_usage(span)
    validate_genai_json(a)


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_fault6_service_tier_requested_and_served(openai_on: Any, exporter: SnapshotExporter, aio: bool) -> None:
    """Issue #34 fault 6: chat and responses, whole and streamed: the tier asked for is
    openai.request.service_tier, the tier the response says served it openai.response.service_tier (a Responses
    stream's terminal event, not response.created's echo); a request and response without one get neither."""
    recorder = Recorder(chat_completion(service_tier="default"), chat_stream(include_usage=True, service_tier="flex"),
                        response_body(service_tier="priority"), responses_stream(service_tier="default"),
                        chat_completion())
    client = openai_client(recorder, aio=aio)

    async def aio_() -> None:
        await client.chat.completions.create(service_tier="auto", **CHAT)
        async for _ in await client.chat.completions.create(stream=True, service_tier="flex", **CHAT):
            pass
        await client.responses.create(service_tier="priority", **RESPONSES)
        async with client.responses.stream(service_tier="auto", **RESPONSES) as stream:
            await stream.get_final_response()
        await client.chat.completions.create(**CHAT)

    def sync() -> None:
        client.chat.completions.create(service_tier="auto", **CHAT)
        for _ in client.chat.completions.create(stream=True, service_tier="flex", **CHAT):
            pass
        client.responses.create(service_tier="priority", **RESPONSES)
        with client.responses.stream(service_tier="auto", **RESPONSES) as stream:
            stream.get_final_response()
        client.chat.completions.create(**CHAT)

    asyncio.run(aio_()) if aio else sync()
    spans = model_spans(exporter)
    tiers = [(s.attributes.get("openai.request.service_tier"), s.attributes.get("openai.response.service_tier"))
             for s in spans]
    assert tiers == [("auto", "default"), ("flex", "flex"), ("priority", "priority"), ("auto", "default"),
                     (None, None)]


def test_content_off(exporter: SnapshotExporter, provider: TracerProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    """With NO_CONTENT the outcome is converted without its parts, yet ids, usage and the finish reasons
    (a Responses "completed" told apart by its function call) are what the API returned; no content anywhere."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        call = [{"id": "call_1", "name": "lookup_order", "arguments": {"order_id": "A100"}}]
        client = openai_client(Recorder(
            chat_completion(None, tool_calls=call, finish_reason="tool_calls"),
            chat_completion(json.dumps({"order_id": "A100", "status": "shipped"})),
            chat_completion(finish_reason="length"),
            response_body(function_call=True), response_body(), response_body(status="incomplete")))
        client.chat.completions.create(**CHAT)
        parsed = client.chat.completions.parse(response_format=Answer, model="gpt-4o", messages=CHAT["messages"])
        assert parsed.choices[0].message.parsed == Answer(order_id="A100", status="shipped")
        assert client.chat.completions.with_raw_response.create(**CHAT).parse().choices[0].finish_reason == "length"
        for _ in range(3):
            client.responses.create(**RESPONSES)
    finally:
        inst.uninstrument()
    spans = model_spans(exporter)
    assert [s.attributes["gen_ai.response.finish_reasons"] for s in spans] == [
        ("tool_call",), ("stop",), ("length",), ("tool_call",), ("stop",), ("incomplete",)]
    assert [s.attributes["gen_ai.response.id"] for s in spans] == ["chatcmpl-1"] * 3 + ["resp_1"] * 3
    for span in spans:
        a = span.attributes
        assert a["gen_ai.usage.output_tokens"] == 7 and a["gen_ai.request.model"] == "gpt-4o"
        assert not [k for k in a if "messages" in k or k in ("input.value", "output.value", "gen_ai.system_instructions",
                                                             "gen_ai.tool.definitions", "llm.output_messages")]
        assert "A100" not in json.dumps(a) and "shipped" not in json.dumps(a), a


def test_request_and_response_attributes_of_the_openai_conventions(openai_on: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 (span.openai.inference.client, attributes.gen_ai.inference.client): openai.api.type on every
    call; gen_ai.output.type from the output format asked (json_schema/json_object → json, text → text; none asked,
    none written); gen_ai.request.choice.count when ``n`` is not 1; openai.response.system_fingerprint as the
    response (whole or streamed) names it."""
    schema = {"type": "json_schema", "json_schema": {"name": "order", "schema": {"type": "object"}}}
    whole = chat_completion()
    whole["system_fingerprint"] = "fp_44709d6fcb"
    client = openai_client(Recorder(whole, response_body()))
    client.chat.completions.create(response_format=schema, n=2, **CHAT)
    client.chat.completions.create(response_format={"type": "text"}, n=1, **CHAT)
    client.chat.completions.create(**CHAT)
    client.responses.create(text={"format": {"type": "json_object"}}, **RESPONSES)
    asked, text, plain, responses = model_spans(exporter)
    assert asked.attributes["openai.api.type"] == "chat_completions"
    assert asked.attributes["gen_ai.output.type"] == "json" and asked.attributes["gen_ai.request.choice.count"] == 2
    assert asked.attributes["openai.response.system_fingerprint"] == "fp_44709d6fcb"
    assert text.attributes["gen_ai.output.type"] == "text" and "gen_ai.request.choice.count" not in text.attributes
    assert not {"gen_ai.output.type", "gen_ai.request.choice.count"} & set(plain.attributes)
    assert responses.attributes["openai.api.type"] == "responses"
    assert responses.attributes["gen_ai.output.type"] == "json"
    assert "openai.response.system_fingerprint" not in responses.attributes


class _PeerOnTheSubclass:
    """Another instrumentation of the client as OpenInference's ``openai`` instrumentor does it: a wrapt wrapper
    on ``openai.OpenAI.request`` / ``AsyncOpenAI.request`` (the subclasses, over the base's function looked up
    at that moment), and, on uninstrument, the saved attribute set back on the subclass."""

    def __init__(self) -> None:
        self.calls = 0

    def instrument(self) -> None:
        import openai
        import wrapt

        def count(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            self.calls += 1
            return wrapped(*args, **kwargs)

        self.saved = openai.OpenAI.request, openai.AsyncOpenAI.request
        wrapt.wrap_function_wrapper("openai", "OpenAI.request", count)
        wrapt.wrap_function_wrapper("openai", "AsyncOpenAI.request", count)

    def uninstrument(self) -> None:
        import openai

        openai.OpenAI.request, openai.AsyncOpenAI.request = self.saved


@pytest.fixture
def peer() -> Any:
    import openai

    peer = _PeerOnTheSubclass()
    yield peer
    for cls in (openai.OpenAI, openai.AsyncOpenAI):  # what the peer's uninstrument leaves behind
        if "request" in cls.__dict__:
            delattr(cls, "request")


def _one_call_each_way(exporter: SnapshotExporter) -> list:
    """A whole chat call, a streamed one and an async one: the model spans they made."""
    exporter.clear()
    openai_client(Recorder(chat_completion())).chat.completions.create(**CHAT)
    stream = openai_client(Recorder(chat_stream(include_usage=True))).chat.completions.create(
        **CHAT, stream=True, stream_options={"include_usage": True})
    assert [c for c in stream]

    async def main() -> None:
        await openai_client(Recorder(chat_completion()), aio=True).chat.completions.create(**CHAT)

    asyncio.run(main())
    return model_spans(exporter)


def test_another_instrumentation_on_the_client_subclass_first(exporter: SnapshotExporter, provider: TracerProvider,
                                                              peer: Any) -> None:
    """OpenInference's openai instrumentor wraps ``OpenAI.request``, the subclass, over the base's function: with
    it instrumented first (the launcher loads both entry points named ``openai``, in no set order), a wrapper on
    the base alone never ran, and every call had its span only. Each call is one span of ours, whatever the order;
    the peer still runs; uninstrumenting either leaves the other working."""
    peer.instrument()
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        spans = _one_call_each_way(exporter)
        assert len(spans) == 3 and peer.calls == 3, tree(exporter.spans)
        _assert_usage(spans[1])  # the stream assembled, once
        inst.uninstrument()
        assert _one_call_each_way(exporter) == [] and peer.calls == 6
        inst.instrument(tracer_provider=provider)
        assert len(_one_call_each_way(exporter)) == 3 and peer.calls == 9
    finally:
        inst.uninstrument()


def test_instrumenting_again_after_another_instrumentation_left(exporter: SnapshotExporter,
                                                                provider: TracerProvider, peer: Any) -> None:
    """Ours, the peer, the peer off (it sets ``OpenAI.request`` back to what it saved: our wrapper, now on the
    subclass too), ours off, ours on again: the calls are traced again (they were not: the stale wrapper of ours
    on the subclass, inert, hid the base's new one)."""
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    peer.instrument()
    assert len(_one_call_each_way(exporter)) == 3
    peer.uninstrument()
    inst.uninstrument()
    assert _one_call_each_way(exporter) == []
    inst.instrument(tracer_provider=provider)
    try:
        assert len(_one_call_each_way(exporter)) == 3
    finally:
        inst.uninstrument()


def test_a_client_subclass_overriding_request_is_one_span(openai_on: Any, exporter: SnapshotExporter) -> None:
    """A user's client subclass whose ``request`` adds something and calls ``super()``: one span per call, also
    for a subclass defined after ``instrument()``."""
    import openai

    class Tagged(openai.OpenAI):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            return super().request(*args, **kwargs)

    client = openai_client(Recorder(chat_completion()))
    tagged = Tagged(api_key="sk-test", base_url="http://fake/v1", http_client=client._client)
    tagged.chat.completions.create(**CHAT)
    (span,) = model_spans(exporter)
    assert span.name == "chat gpt-4o" and span.attributes["gen_ai.response.id"] == "chatcmpl-1"


def _failed_response() -> dict[str, Any]:
    return {**response_body(), "status": "failed", "output": [], "usage": None,
            "error": {"code": "server_error", "message": "The model failed to answer"}}


def _created(response: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.created", "response": {**response, "status": "in_progress", "error": None},
            "sequence_number": 0}


@pytest.mark.parametrize("how", ["whole", "stream_failed", "stream_error_event"])
def test_a_response_the_api_reports_failed_fails_the_span(openai_on: Any, exporter: SnapshotExporter,
                                                          how: str) -> None:
    """The API's own failure in its answer, not an HTTP error (the SDK raises nothing): a ``failed`` response, whole
    or as a stream's ``response.failed``, or a stream's ``error`` event (which openai hands on as an event). The
    span is ERROR with the API's error code as ``error.type`` and its message as the description — not UNSET with
    the finish reason ``error`` alone, nor a cut stream's ``stream_incomplete``."""
    from tests.clients.fakes import sse

    failed = _failed_response()
    if how == "whole":
        body: Any = failed
    elif how == "stream_failed":
        body = sse([("response.created", _created(failed)),
                    ("response.failed", {"type": "response.failed", "response": failed, "sequence_number": 1})])
    else:
        failed["error"] = {"code": "rate_limit_exceeded", "message": "Too many tokens per minute"}
        body = sse([("response.created", _created(failed)),
                    ("error", {"type": "error", **failed["error"], "param": None, "sequence_number": 1})])
    client = openai_client(Recorder(body))
    if how == "whole":
        assert client.responses.create(**RESPONSES).status == "failed"
    else:
        assert [e.type for e in client.responses.create(stream=True, **RESPONSES)][-1] in ("response.failed", "error")
    (span,) = model_spans(exporter)
    assert span.status.name == "ERROR", tree([span])
    assert span.attributes["error.type"] == failed["error"]["code"]
    assert span.status_description == failed["error"]["message"]
    if how != "stream_error_event":
        assert span.attributes["gen_ai.response.finish_reasons"] == ("error",)
