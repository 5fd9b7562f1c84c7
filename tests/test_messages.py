"""The span layer's message content model: typed parts, media budget, tools offered, system
instructions, in GenAI JSON (validated against the semconv v1.41 constraints) and OpenInference form."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

from otel_agents._spans import (BlobPart, ChatMessage, FilePart, ReasoningPart, Settings, Telemetry, TextPart,
                                ToolCallPart, ToolCallResponsePart, ToolDefinition, UriPart, media_part)
from otel_agents.semconv import Kind
from tests.genai_schema import validate_genai_json

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


@pytest.fixture
def telemetry(provider: Any) -> Telemetry:
    return Telemetry(provider, settings=Settings(max_media_bytes=1024))


def _model_span(telemetry: Telemetry, exporter: Any, **messages: Any) -> dict[str, Any]:
    span = telemetry.start_span(Kind.MODEL, "m")
    span.set_messages(**messages)
    span.end()
    attrs = dict(exporter.spans[-1].attributes)
    validate_genai_json(attrs)
    return attrs


def test_parts_render_as_genai_parts_and_openinference_contents(telemetry: Telemetry, exporter: Any) -> None:
    """M-1: thinking is a reasoning part, the answer a text part; OpenInference content is the answer only."""
    attrs = _model_span(
        telemetry, exporter,
        input=[ChatMessage("user", parts=[TextPart("What is in this picture?"), BlobPart(PNG, "image", "image/png"),
                                          UriPart("https://example.test/a.jpg", "image", "image/jpeg")])],
        output=[ChatMessage("assistant", parts=[ReasoningPart("The user wants a description."),
                                                TextPart("A small PNG.")], finish_reason="end_turn")])
    inp = json.loads(attrs["gen_ai.input.messages"])
    assert inp == [{"role": "user", "parts": [
        {"type": "text", "content": "What is in this picture?"},
        {"type": "blob", "mime_type": "image/png", "modality": "image", "content": base64.b64encode(PNG).decode()},
        {"type": "uri", "mime_type": "image/jpeg", "modality": "image", "uri": "https://example.test/a.jpg"}]}]
    out = json.loads(attrs["gen_ai.output.messages"])
    assert out == [{"role": "assistant", "finish_reason": "stop", "parts": [
        {"type": "reasoning", "content": "The user wants a description."},
        {"type": "text", "content": "A small PNG."}]}]
    assert attrs["output.value"] == "A small PNG."
    assert attrs["llm.output_messages.0.message.content"] == "A small PNG."
    base = "llm.input_messages.0.message.contents"
    assert attrs[f"{base}.0.message_content.type"] == "text"
    assert attrs[f"{base}.0.message_content.text"] == "What is in this picture?"
    assert attrs[f"{base}.1.message_content.type"] == "image"
    assert attrs[f"{base}.1.message_content.image.image.url"].startswith("data:image/png;base64,")
    assert attrs[f"{base}.2.message_content.image.image.url"] == "https://example.test/a.jpg"
    assert "llm.input_messages.0.message.content" not in attrs


def test_media_over_budget_keeps_type_size_and_hash_only(telemetry: Telemetry, exporter: Any) -> None:
    big = bytes(range(256)) * 8  # 2048 bytes, over the 1024-byte budget
    attrs = _model_span(telemetry, exporter, input=[ChatMessage("user", parts=[
        TextPart("describe"), BlobPart(base64.b64encode(big).decode(), "image", "image/png"),
        BlobPart(PNG, "image", "image/png")])])
    parts = json.loads(attrs["gen_ai.input.messages"])[0]["parts"]
    assert parts[1] == {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "",
                        "otel_agents.size_bytes": 2048, "otel_agents.sha256": hashlib.sha256(big).hexdigest(),
                        "otel_agents.truncated": True}
    assert parts[2]["content"] == base64.b64encode(PNG).decode()  # under the budget: inline
    assert base64.b64encode(big).decode()[:100] not in json.dumps(attrs)
    # OpenInference: the oversized image has no URL to show, so it is not listed
    assert attrs["llm.input_messages.0.message.contents.1.message_content.image.image.url"].startswith("data:")
    assert "llm.input_messages.0.message.contents.2.message_content.type" not in attrs


def test_media_budget_from_environment(provider: Any, exporter: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_AGENTS_MAX_MEDIA_BYTES", "8")
    attrs = _model_span(Telemetry(provider), exporter, input=[ChatMessage("user", parts=[BlobPart(PNG, "image")])])
    assert json.loads(attrs["gen_ai.input.messages"])[0]["parts"][0]["otel_agents.size_bytes"] == len(PNG)


def test_data_url_is_a_blob_and_other_urls_are_uris() -> None:
    data = base64.b64encode(PNG).decode()
    assert media_part(f"data:image/png;base64,{data}") == BlobPart(data, "image", "image/png")
    assert media_part("https://x.test/doc.pdf", mime_type="application/pdf") == UriPart(
        "https://x.test/doc.pdf", "document", "application/pdf")
    assert media_part("https://x.test/a.wav", modality="audio") == UriPart("https://x.test/a.wav", "audio", None)


def test_tool_calls_and_results_once(telemetry: Telemetry, exporter: Any) -> None:
    """M-2 in the span layer: a call is one tool_call part; its result one tool_call_response part."""
    attrs = _model_span(
        telemetry, exporter,
        input=[ChatMessage("user", "Where is A100?"),
               ChatMessage("assistant", parts=[TextPart("Let me check that order."),
                                               ToolCallPart("lookup_order", {"order_id": "A100"}, "toolu_01")]),
               ChatMessage("tool", {"status": "shipped"}, tool_call_id="toolu_01")],
        output=[ChatMessage("assistant", "It shipped.", finish_reason="stop")])
    inp = json.loads(attrs["gen_ai.input.messages"])
    assert inp[1]["parts"] == [{"type": "text", "content": "Let me check that order."},
                               {"type": "tool_call", "id": "toolu_01", "name": "lookup_order",
                                "arguments": {"order_id": "A100"}}]
    assert inp[2] == {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_01",
                                                 "response": {"status": "shipped"}}]}
    assert attrs["llm.input_messages.1.message.content"] == "Let me check that order."
    assert attrs["llm.input_messages.1.message.tool_calls.0.tool_call.function.name"] == "lookup_order"
    assert attrs["llm.input_messages.2.message.tool_call_id"] == "toolu_01"
    assert json.loads(attrs["llm.input_messages.2.message.content"]) == {"status": "shipped"}


def test_system_instructions_given_apart_lead_the_openinference_messages(telemetry: Telemetry, exporter: Any) -> None:
    """M-4 in the span layer: instructions given apart are gen_ai.system_instructions and the first
    OpenInference message, with role system; they are not a gen_ai.input.messages entry."""
    attrs = _model_span(telemetry, exporter, input=[ChatMessage("user", "refund?")], system=["be terse"])
    assert json.loads(attrs["gen_ai.system_instructions"]) == [{"type": "text", "content": "be terse"}]
    assert json.loads(attrs["gen_ai.input.messages"]) == [{"role": "user", "parts": [{"type": "text",
                                                                                       "content": "refund?"}]}]
    assert attrs["llm.input_messages.0.message.role"] == "system"
    assert attrs["llm.input_messages.0.message.content"] == "be terse"
    assert attrs["llm.input_messages.1.message.role"] == "user"


def test_tools_offered(telemetry: Telemetry, exporter: Any) -> None:
    """M-3 in the span layer: gen_ai.tool.definitions and llm.tools.N.tool.json_schema."""
    params = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
    tools = [ToolDefinition("lookup_order", "Look up an order.", params), ToolDefinition("check_policy")]
    attrs = _model_span(telemetry, exporter, input=[ChatMessage("user", "hi")], tools=tools)
    assert json.loads(attrs["gen_ai.tool.definitions"]) == [
        {"type": "function", "name": "lookup_order", "description": "Look up an order.", "parameters": params},
        {"type": "function", "name": "check_policy"}]
    assert json.loads(attrs["llm.tools.0.tool.json_schema"]) == {
        "type": "function", "function": {"name": "lookup_order", "description": "Look up an order.",
                                         "parameters": params}}
    assert json.loads(attrs["llm.tools.1.tool.json_schema"]) == {"type": "function",
                                                                 "function": {"name": "check_policy"}}


def test_content_off_records_no_part_media_tool_or_instruction(provider: Any, exporter: Any) -> None:
    telemetry = Telemetry(provider, settings=Settings(capture_content=False))
    span = telemetry.start_span(Kind.MODEL, "m")
    span.set_messages(input=[ChatMessage("user", parts=[TextPart("MARKER"), BlobPart(PNG, "image", "image/png"),
                                                        FilePart("file-MARKER", "document")])],
                      output=[ChatMessage("assistant", parts=[ReasoningPart("MARKER"), TextPart("MARKER")],
                                          finish_reason="stop")],
                      system=["MARKER"], tools=[ToolDefinition("MARKER_tool", "MARKER")])
    span.set_tool_definitions([ToolDefinition("MARKER_tool")])
    span.end()
    attrs = dict(exporter.spans[-1].attributes)
    assert attrs["gen_ai.response.finish_reasons"] == ("stop",)
    leaked = [k for k, v in attrs.items() if "MARKER" in str(v) or base64.b64encode(PNG).decode()[:20] in str(v)]
    assert leaked == []
    assert not any(k.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system", "gen_ai.tool.definitions",
                                 "llm.input", "llm.output", "llm.tools")) for k in attrs)


def test_secrets_in_parts_are_redacted(telemetry: Telemetry, exporter: Any) -> None:
    key = "sk-proj-" + "A" * 40
    attrs = _model_span(
        telemetry, exporter,
        input=[ChatMessage("user", parts=[TextPart(f"my key is {key}"),
                                          UriPart(f"https://x.test/a.png?api_key={key}", "image")])],
        output=[ChatMessage("assistant", parts=[ReasoningPart(f"they gave {key}"),
                                                ToolCallPart("login", {"password": "hunter2"}, "c1")])],
        tools=[ToolDefinition("login", f"uses {key}")])
    dump = json.dumps(attrs)
    assert key not in dump and "hunter2" not in dump


def test_token_shapes_in_names_ids_and_mime_types_are_redacted(telemetry: Telemetry, exporter: Any) -> None:
    """Every string a part serialises is scanned, not only its content: a key pasted as a file id,
    a participant name, a tool call's name or id, a MIME type or a generic part's type never escapes."""
    from otel_agents._spans import GenericPart

    key = "sk-proj-" + "B" * 40
    attrs = _model_span(
        telemetry, exporter,
        input=[ChatMessage("user", parts=[FilePart(key, "document"), BlobPart(PNG, "image", f"image/png; k={key}"),
                                          GenericPart(key, {"a": 1})], name=key)],
        output=[ChatMessage("assistant", parts=[ToolCallPart(key, {"a": 1}, key)])])
    assert key not in json.dumps(attrs)

def test_legacy_shorthand_is_parts() -> None:
    m = ChatMessage("assistant", "hi", [ToolCallPart("t", {"a": 1}, "c")])
    assert m.parts == [TextPart("hi"), ToolCallPart("t", {"a": 1}, "c")]
    assert m.text == "hi" and m.content == "hi" and m.tool_calls == [ToolCallPart("t", {"a": 1}, "c")]
    tool = ChatMessage("tool", {"ok": True}, tool_call_id="c")
    assert tool.parts == [ToolCallResponsePart({"ok": True}, "c")] and tool.tool_call_id == "c"
    assert ChatMessage("assistant", parts=[ReasoningPart("x"), TextPart("a"), TextPart("b")]).text == "ab"


def test_blob_text_that_is_not_base64_is_never_inlined(telemetry: Telemetry, exporter: Any) -> None:
    """Plain text given as a blob's data (lenient base64 decoding would accept it by dropping the
    spaces and punctuation) keeps only its size and hash: inlined, its secrets would escape redaction."""
    key = "sk-proj-" + "A" * 40
    text = f"note api_key: {key}"  # decodes leniently: "noteapikeyskproj" + A*40
    wrapped = base64.encodebytes(PNG).decode()  # base64 in 76-character lines is still base64
    attrs = _model_span(telemetry, exporter, input=[ChatMessage("user", parts=[
        BlobPart(text, "image", "image/png"), BlobPart(wrapped, "image", "image/png")])])
    parts = json.loads(attrs["gen_ai.input.messages"])[0]["parts"]
    assert parts[0]["content"] == "" and parts[0]["otel_agents.truncated"] is True
    assert parts[0]["otel_agents.sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert parts[1]["content"] == wrapped
    assert key not in json.dumps(attrs)
