"""The message content model in LangChain (issue 15; cases M-1 … M-4 of content-and-envelopes.md).

Real ``langchain-core`` messages and runnables over the offline :class:`ScriptedChatModel`
(and LangGraph's prebuilt ReAct agent for M-3): each test asserts the exact GenAI JSON
(``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``,
``gen_ai.tool.definitions``, validated against the semconv v1.41 constraints in
``tests/genai_schema.py``) and the OpenInference attributes of the model span.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents.exporters.ecp import fold
from otel_agents.instrumentors.langchain import LangChainInstrumentor
from otel_agents.instrumentors.langchain import content as lc_content
from tests.genai_schema import validate_genai_json, json_attribute, openinference_under
from tests.langchain.fakes import ScriptedChatModel, ToolCallingChatModel, build_agent_graph, get_weather
from tests.spans import SnapshotExporter

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(92))          # 100 bytes: under the 4096-byte media budget
BIG_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20  # 5128 bytes: over it
PDF = b"%PDF-1.7\n" + b"0" * 40
B64 = base64.b64encode(PNG).decode()
BIG_B64 = base64.b64encode(BIG_PNG).decode()
PDF_B64 = base64.b64encode(PDF).decode()


def _model_span(exporter: SnapshotExporter, index: int = -1) -> dict[str, Any]:
    models = exporter.semantic("model")
    attrs = dict(models[index].attributes)
    validate_genai_json(attrs)
    return attrs




def _invoke(messages: list[Any], *replies: AIMessage, stream: bool = False, tools: list[Any] | None = None) -> Any:
    model: Any = ScriptedChatModel(replies=list(replies) or [AIMessage("ok")])
    if tools:
        model = model.bind_tools(tools)
    if stream:
        out = None
        for chunk in model.stream(messages):
            out = chunk if out is None else out + chunk
        return out
    return model.invoke(messages)


# ----------------------------------------------------------------------------- text only, system prompt

def test_text_only_with_system_prompt_m4(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """M-4: a ``SystemMessage`` is ``gen_ai.system_instructions`` and the first OpenInference input
    message (role ``system``); string contents are one text part / ``message.content``."""
    _invoke([SystemMessage("You are a refunds assistant."), HumanMessage("Where is my refund?")],
            AIMessage("Your refund was approved.", response_metadata={"stop_reason": "end_turn"}))
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.system_instructions") == [{"type": "text", "content": "You are a refunds assistant."}]
    assert json_attribute(a, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Where is my refund?"}]}]
    assert json_attribute(a, "gen_ai.output.messages") == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Your refund was approved."}],
         "finish_reason": "stop"}]
    assert openinference_under(a, "llm.input_messages") == {
        "0.message.role": "system", "0.message.content": "You are a refunds assistant.",
        "1.message.role": "user", "1.message.content": "Where is my refund?"}
    assert openinference_under(a, "llm.output_messages") == {"0.message.role": "assistant",
                                             "0.message.content": "Your refund was approved."}
    assert a["output.value"] == "Your refund was approved."
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert "gen_ai.tool.definitions" not in a and not any(k.startswith("llm.tools.") for k in a)


def test_system_prompt_as_content_blocks_m4(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """M-4: a system prompt given as Anthropic-style text blocks (with ``cache_control``) is its text parts."""
    _invoke([SystemMessage([{"type": "text", "text": "Rule one.", "cache_control": {"type": "ephemeral"}},
                            {"type": "text", "text": "Rule two."}]),
             HumanMessage("hi")])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.system_instructions") == [{"type": "text", "content": "Rule one."},
                                                   {"type": "text", "content": "Rule two."}]
    assert openinference_under(a, "llm.input_messages.0") == {
        "message.role": "system",
        "message.contents.0.message_content.type": "text", "message.contents.0.message_content.text": "Rule one.",
        "message.contents.1.message_content.type": "text", "message.contents.1.message_content.text": "Rule two."}
    assert "cache_control" not in a["input.value"]


# ----------------------------------------------------------------------------- block lists

def test_block_lists_are_parts(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Text blocks (and bare strings in a content list) are text parts; OpenInference lists them
    as ``message.contents``; an answer given as blocks is the answer text in ``output.value``."""
    _invoke([HumanMessage(["Compare these:", {"type": "text", "text": "A and B"}])],
            AIMessage([{"type": "text", "text": "A is larger.", "annotations": []},
                       {"type": "text", "text": " B is older."}]))
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Compare these:"}, {"type": "text", "content": "A and B"}]}]
    assert json_attribute(a, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "", "parts": [
        {"type": "text", "content": "A is larger."}, {"type": "text", "content": " B is older."}]}]
    assert openinference_under(a, "llm.input_messages.0.message.contents") == {
        "0.message_content.type": "text", "0.message_content.text": "Compare these:",
        "1.message_content.type": "text", "1.message_content.text": "A and B"}
    assert a["output.value"] == "A is larger. B is older."


# ----------------------------------------------------------------------------- thinking + text (M-1)

ANTHROPIC_THINKING = AIMessage(
    [{"type": "thinking", "thinking": "The refund was filed on the 3rd.", "signature": "EqQBCkYIARgCSIG"},
     {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
     {"type": "text", "text": "Your refund was approved."}],
    response_metadata={"stop_reason": "end_turn", "model_provider": "anthropic"})
V1_REASONING = AIMessage(
    [{"type": "reasoning", "reasoning": "The refund was filed on the 3rd.", "extras": {"signature": "EqQBCkYIARgCSIG"}},
     {"type": "text", "text": "Your refund was approved."}], response_metadata={"finish_reason": "stop"})
OPENAI_RESPONSES_REASONING = AIMessage(
    [{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "The refund was filed on the 3rd."}],
      "encrypted_content": "EqQBCkYIARgCSIG"},
     {"type": "text", "text": "Your refund was approved."}], response_metadata={"finish_reason": "stop"})
REASONING_CONTENT = AIMessage("Your refund was approved.",
                              additional_kwargs={"reasoning_content": "The refund was filed on the 3rd."},
                              response_metadata={"finish_reason": "stop"})


@pytest.mark.parametrize("reply", [ANTHROPIC_THINKING, V1_REASONING, OPENAI_RESPONSES_REASONING, REASONING_CONTENT],
                         ids=["anthropic-thinking", "v1-reasoning", "openai-responses", "reasoning_content"])
@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
def test_thinking_and_text_m1(reply: AIMessage, stream: bool, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """M-1: thinking is a ``reasoning`` part, the answer a ``text`` part holding the string; the
    OpenInference content is the answer; no signature or encrypted reasoning anywhere."""
    _invoke([HumanMessage("Where is my refund?")], reply, stream=stream)
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "stop", "parts": [
        {"type": "reasoning", "content": "The refund was filed on the 3rd."},
        {"type": "text", "content": "Your refund was approved."}]}]
    assert openinference_under(a, "llm.output_messages") == {"0.message.role": "assistant",
                                             "0.message.content": "Your refund was approved."}
    assert a["output.value"] == "Your refund was approved."
    everything = json.dumps([s.attributes for s in exporter.spans], default=str)
    assert "EqQBCkYIARgCSIG" not in everything and "EmwKAhgBEgy3va3pzix" not in everything
    assert "signature" not in everything


def _reasoning_graph() -> Any:
    model = ScriptedChatModel(replies=[
        AIMessage([{"type": "thinking", "thinking": "Order 42 shipped yesterday.", "signature": "SIG"},
                   {"type": "text", "text": "Your order shipped yesterday."}],
                  response_metadata={"stop_reason": "end_turn"})])
    return build_agent_graph(model, [get_weather], name="support_agent")


def test_fold_shows_thoughts_of_a_reasoning_model_only_when_asked_m1(instrumentor: Any, provider: Any,
                                                                     exporter: SnapshotExporter) -> None:
    """M-1 in the envelope: ``fold(include_thoughts=True)`` has a ``thought`` line for the model's
    reasoning, the default fold none; ``public_output`` is the answer text, not a block list."""
    finished = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(finished))
    _reasoning_graph().invoke({"messages": [HumanMessage("Where is order 42?")]})
    spans = finished.get_finished_spans()
    [plain] = fold(spans)
    [with_thoughts] = fold(spans, include_thoughts=True)
    assert plain["public_output"] == with_thoughts["public_output"] == "Your order shipped yesterday."
    assert not any(line.strip().startswith("thought") for line in plain["evaluation_context"].splitlines())
    thoughts = [line.strip() for line in with_thoughts["evaluation_context"].splitlines()
                if line.strip().startswith("thought")]
    assert thoughts == ["thought Order 42 shipped yesterday."]
    assert "SIG" not in json.dumps(with_thoughts)


# ----------------------------------------------------------------------------- one tool call, once (M-2)

ANTHROPIC_TOOL_USE = AIMessage(
    [{"type": "text", "text": "Let me check that order."},
     {"type": "tool_use", "id": "toolu_01", "name": "lookup_order", "input": {"order_id": "42"}}],
    tool_calls=[{"name": "lookup_order", "args": {"order_id": "42"}, "id": "toolu_01", "type": "tool_call"}],
    response_metadata={"stop_reason": "tool_use"})


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
def test_tool_use_block_and_tool_calls_are_one_call_m2(stream: bool, instrumentor: Any,
                                                       exporter: SnapshotExporter) -> None:
    """M-2: a call that is both a ``tool_use`` block and in ``.tool_calls`` (streamed: in
    ``tool_call_chunks``) is one ``tool_call`` part, after the plain text; finish reason ``tool_call``."""
    _invoke([HumanMessage("Where is order 42?")], ANTHROPIC_TOOL_USE, stream=stream)
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "text", "content": "Let me check that order."},
        {"type": "tool_call", "id": "toolu_01", "name": "lookup_order", "arguments": {"order_id": "42"}}]}]
    assert a["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert openinference_under(a, "llm.output_messages") == {
        "0.message.role": "assistant", "0.message.content": "Let me check that order.",
        "0.message.tool_calls.0.tool_call.id": "toolu_01",
        "0.message.tool_calls.0.tool_call.function.name": "lookup_order",
        "0.message.tool_calls.0.tool_call.function.arguments": '{"order_id":"42"}'}


def test_tool_history_in_the_next_request_m2(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """M-2 on the way back: the assistant turn in the history has its call once, the ``ToolMessage``
    is a ``tool_call_response`` part with the call's id (OpenInference ``message.tool_call_id``)."""
    _invoke([HumanMessage("Where is order 42?"), ANTHROPIC_TOOL_USE,
             ToolMessage("shipped", tool_call_id="toolu_01")],
            AIMessage("It shipped.", response_metadata={"stop_reason": "end_turn"}))
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Where is order 42?"}]},
        {"role": "assistant", "parts": [
            {"type": "text", "content": "Let me check that order."},
            {"type": "tool_call", "id": "toolu_01", "name": "lookup_order", "arguments": {"order_id": "42"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_01", "response": "shipped"}]}]
    assert openinference_under(a, "llm.input_messages.1.message") == {
        "role": "assistant", "content": "Let me check that order.",
        "tool_calls.0.tool_call.id": "toolu_01", "tool_calls.0.tool_call.function.name": "lookup_order",
        "tool_calls.0.tool_call.function.arguments": '{"order_id":"42"}'}
    assert openinference_under(a, "llm.input_messages.2.message") == {"role": "tool", "tool_call_id": "toolu_01",
                                                      "content": "shipped"}


def test_v1_tool_call_blocks_and_an_unparsed_call(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """v1 ``tool_call`` blocks are placed once; an ``invalid_tool_call`` keeps its raw arguments."""
    _invoke([HumanMessage("go")], AIMessage(
        [{"type": "tool_call", "id": "c1", "name": "a", "args": {"x": 1}}],
        tool_calls=[{"name": "a", "args": {"x": 1}, "id": "c1", "type": "tool_call"}],
        invalid_tool_calls=[{"name": "b", "args": "{oops", "id": "c2", "error": "bad json",
                             "type": "invalid_tool_call"}],
        response_metadata={"finish_reason": "tool_calls"}))
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.output.messages")[0]["parts"] == [
        {"type": "tool_call", "id": "c1", "name": "a", "arguments": {"x": 1}},
        {"type": "tool_call", "id": "c2", "name": "b", "arguments": "{oops"}]


# ----------------------------------------------------------------------------- media

@pytest.mark.parametrize("block", [
    {"type": "image_url", "image_url": {"url": "https://example.test/receipt.png"}},
    {"type": "image_url", "image_url": "https://example.test/receipt.png"},
    # LangChain itself rewrites v1/v0 URL images into OpenAI ``image_url`` blocks (without the MIME
    # type) before on_chat_model_start: the callback sees what the provider integration sees
    {"type": "image", "url": "https://example.test/receipt.png", "mime_type": "image/png"},
    {"type": "image", "source_type": "url", "url": "https://example.test/receipt.png", "mime_type": "image/png"},
    {"type": "image", "source": {"type": "url", "url": "https://example.test/receipt.png"}},
], ids=["openai", "openai-str", "v1", "v0", "anthropic"])
def test_image_by_url(block: dict[str, Any], instrumentor: Any, exporter: SnapshotExporter) -> None:
    """An image by URL is a ``uri`` part; OpenInference shows it as an image content with its URL."""
    _invoke([HumanMessage([{"type": "text", "text": "What does this receipt say?"}, block])])
    a = _model_span(exporter)
    mime = None
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "What does this receipt say?"},
        {"type": "uri", "mime_type": mime, "modality": "image", "uri": "https://example.test/receipt.png"}]}]
    assert openinference_under(a, "llm.input_messages.0.message.contents") == {
        "0.message_content.type": "text", "0.message_content.text": "What does this receipt say?",
        "1.message_content.type": "image",
        "1.message_content.image.image.url": "https://example.test/receipt.png"}


def _image_blocks(b64: str) -> list[dict[str, Any]]:
    return [{"type": "image", "base64": b64, "mime_type": "image/png"},
            {"type": "image", "source_type": "base64", "data": b64, "mime_type": "image/png"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}}]


@pytest.mark.parametrize("i", range(4), ids=["v1", "v0", "openai-data-url", "anthropic"])
def test_image_by_bytes_under_the_media_budget(i: int, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Inline image bytes within ``OTEL_AGENTS_MAX_MEDIA_BYTES`` are a ``blob`` part (base64, MIME type,
    modality); OpenInference shows a data URL; never base64 inside a text part."""
    _invoke([HumanMessage(["Describe.", _image_blocks(B64)[i]])])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Describe."},
        {"type": "blob", "mime_type": "image/png", "modality": "image", "content": B64}]}]
    assert a["llm.input_messages.0.message.contents.1.message_content.image.image.url"] == \
        f"data:image/png;base64,{B64}"
    assert a["llm.input_messages.0.message.contents.0.message_content.text"] == "Describe."


@pytest.mark.parametrize("i", range(4), ids=["v1", "v0", "openai-data-url", "anthropic"])
def test_image_by_bytes_over_the_media_budget(i: int, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Image bytes over the media budget keep MIME type, modality, size and SHA-256 only, marked
    truncated; the base64 appears nowhere (OpenInference has no URL to show, so lists no image)."""
    _invoke([HumanMessage(["Describe.", _image_blocks(BIG_B64)[i]])])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Describe."},
        {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "",
         "otel_agents.size_bytes": len(BIG_PNG), "otel_agents.sha256": hashlib.sha256(BIG_PNG).hexdigest(),
         "otel_agents.truncated": True}]}]
    assert openinference_under(a, "llm.input_messages.0.message.contents") == {
        "0.message_content.type": "text", "0.message_content.text": "Describe."}
    assert BIG_B64[:64] not in json.dumps([s.attributes for s in exporter.spans], default=str)


def test_image_by_file_id_and_audio(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A provider file id is a ``file`` part; OpenAI ``input_audio`` and v1 ``audio`` are audio blobs."""
    _invoke([HumanMessage([{"type": "image", "file_id": "file-abc", "mime_type": "image/jpeg"},
                           {"type": "input_audio", "input_audio": {"data": B64, "format": "wav"}},
                           {"type": "audio", "base64": B64, "mime_type": "audio/mpeg"}])])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages")[0]["parts"] == [
        {"type": "file", "mime_type": "image/jpeg", "modality": "image", "file_id": "file-abc"},
        {"type": "blob", "mime_type": "audio/wav", "modality": "audio", "content": B64},
        {"type": "blob", "mime_type": "audio/mpeg", "modality": "audio", "content": B64}]
    assert openinference_under(a, "llm.input_messages.0.message.contents") == {
        "0.message_content.type": "audio", "0.message_content.audio.audio.url": f"data:audio/wav;base64,{B64}",
        "1.message_content.type": "audio", "1.message_content.audio.audio.url": f"data:audio/mpeg;base64,{B64}"}


@pytest.mark.parametrize("block", [
    {"type": "file", "base64": PDF_B64, "mime_type": "application/pdf"},
    {"type": "file", "source_type": "base64", "data": PDF_B64, "mime_type": "application/pdf"},
    {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF_B64}", "filename": "policy.pdf"}},
    {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64}},
], ids=["v1", "v0", "openai", "anthropic"])
def test_documents(block: dict[str, Any], instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A document is a ``blob`` part of modality ``document`` with its MIME type, never text."""
    _invoke([HumanMessage([{"type": "text", "text": "Summarise the policy."}, block])])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Summarise the policy."},
        {"type": "blob", "mime_type": "application/pdf", "modality": "document", "content": PDF_B64}]}]
    # OpenInference has no document content type: the message's contents list its text only
    assert openinference_under(a, "llm.input_messages.0.message") == {
        "role": "user", "contents.0.message_content.type": "text",
        "contents.0.message_content.text": "Summarise the policy."}


def test_document_by_url_and_plain_text_document(instrumentor: Any, exporter: SnapshotExporter) -> None:
    _invoke([HumanMessage([{"type": "file", "url": "https://example.test/policy.pdf", "mime_type": "application/pdf"},
                           {"type": "text-plain", "text": "Refunds within 30 days.", "mime_type": "text/plain"},
                           {"type": "document", "source": {"type": "url", "url": "https://example.test/t.pdf"}}])])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages")[0]["parts"] == [
        {"type": "uri", "mime_type": "application/pdf", "modality": "document", "uri": "https://example.test/policy.pdf"},
        {"type": "blob", "mime_type": "text/plain", "modality": "document",
         "content": base64.b64encode(b"Refunds within 30 days.").decode()},
        {"type": "uri", "mime_type": None, "modality": "document", "uri": "https://example.test/t.pdf"}]


def test_tool_result_with_an_image(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A multimodal ``ToolMessage``: its text is the response, its image a media part beside it."""
    _invoke([HumanMessage("Show the chart."),
             AIMessage("", tool_calls=[{"name": "chart", "args": {}, "id": "c1", "type": "tool_call"}]),
             ToolMessage([{"type": "text", "text": "chart attached"},
                          {"type": "image", "base64": BIG_B64, "mime_type": "image/png"}], tool_call_id="c1")])
    a = _model_span(exporter)
    tool_msg = json_attribute(a, "gen_ai.input.messages")[2]
    assert tool_msg == {"role": "tool", "parts": [
        {"type": "tool_call_response", "id": "c1", "response": "chart attached"},
        {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "",
         "otel_agents.size_bytes": len(BIG_PNG), "otel_agents.sha256": hashlib.sha256(BIG_PNG).hexdigest(),
         "otel_agents.truncated": True}]}


# ----------------------------------------------------------------------------- tools bound (M-3)

@tool
def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return f"order {order_id}: shipped"


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an amount on an order."""
    return "refunded"


THREE_TOOLS_DEFINITIONS = [
    {"type": "function", "name": "get_weather", "description": "Get the weather for a city.",
     "parameters": {"properties": {"city": {"type": "string"}}, "required": ["city"], "type": "object"}},
    {"type": "function", "name": "lookup_order", "description": "Look up an order by its id.",
     "parameters": {"properties": {"order_id": {"type": "string"}}, "required": ["order_id"], "type": "object"}},
    {"type": "function", "name": "refund", "description": "Refund an amount on an order.",
     "parameters": {"properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
                    "required": ["order_id", "amount"], "type": "object"}},
]


def test_react_agent_binding_three_tools_m3(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """M-3: a LangGraph ReAct agent binds three tools; every model span records them
    (``gen_ai.tool.definitions`` and ``llm.tools.N.tool.json_schema``: Phoenix shows 3 tools)."""
    from langgraph.prebuilt import create_react_agent

    agent = create_react_agent(ToolCallingChatModel(), [get_weather, lookup_order, refund], name="support")
    agent.invoke({"messages": [HumanMessage("Paris")]})
    models = exporter.semantic("model")
    assert len(models) == 2
    for m in models:
        a = dict(m.attributes)
        validate_genai_json(a)
        assert json_attribute(a, "gen_ai.tool.definitions") == THREE_TOOLS_DEFINITIONS
        assert sorted(k for k in a if k.startswith("llm.tools.")) == [f"llm.tools.{i}.tool.json_schema"
                                                                      for i in range(3)]
        assert [json_attribute(a, f"llm.tools.{i}.tool.json_schema") for i in range(3)] == [
            {"type": "function", "function": {k: d[k] for k in ("name", "description", "parameters")}}
            for d in THREE_TOOLS_DEFINITIONS]


@pytest.mark.parametrize("spec,expected", [
    ({"name": "lookup_order", "description": "Look up.", "input_schema": {"type": "object"}},
     {"type": "function", "name": "lookup_order", "description": "Look up.", "parameters": {"type": "object"}}),
    ({"type": "function", "name": "lookup_order", "parameters": {"type": "object"}},
     {"type": "function", "name": "lookup_order", "parameters": {"type": "object"}}),
    ({"toolSpec": {"name": "lookup_order", "inputSchema": {"json": {"type": "object"}}}},
     {"type": "function", "name": "lookup_order", "parameters": {"type": "object"}}),
    ({"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
     {"type": "web_search_20250305", "name": "web_search"}),
    ({"type": "web_search_preview"}, {"type": "web_search_preview", "name": "web_search_preview"}),
], ids=["anthropic", "openai-responses", "bedrock-converse", "anthropic-server-tool", "openai-builtin"])
def test_tools_bound_in_provider_shapes_m3(spec: dict[str, Any], expected: dict[str, Any], instrumentor: Any,
                                           exporter: SnapshotExporter) -> None:
    """M-3 for integrations that bind tools in their provider's own request shape."""
    ScriptedChatModel(replies=[AIMessage("ok")]).bind(tools=[spec]).invoke([HumanMessage("hi")])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.tool.definitions") == [expected]
    assert "llm.tools.0.tool.json_schema" in a


# ----------------------------------------------------------------------------- content off

def test_content_off_records_no_content_of_any_kind(provider: Any, exporter: SnapshotExporter,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Content off: no text, reasoning, media data, tool definition or system prompt anywhere;
    finish reasons, model and usage stay; messages are never converted."""
    calls = []
    real = lc_content.message_parts
    monkeypatch.setattr(lc_content, "message_parts", lambda *a: calls.append(1) or real(*a))
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider, capture_content=False)
    try:
        model = ScriptedChatModel(replies=[
            AIMessage([{"type": "thinking", "thinking": "SECRET-THOUGHT", "signature": "SECRET-SIG"},
                       {"type": "text", "text": "SECRET-ANSWER"},
                       {"type": "tool_use", "id": "toolu_01", "name": "lookup_order", "input": {"order_id": "SECRET-ARG"}}],
                      tool_calls=[{"name": "lookup_order", "args": {"order_id": "SECRET-ARG"}, "id": "toolu_01"}],
                      response_metadata={"stop_reason": "tool_use"}),
            AIMessage("SECRET-FINAL", response_metadata={"stop_reason": "end_turn"})])
        graph = build_agent_graph(model, [lookup_order], name="support")
        graph.invoke({"messages": [SystemMessage("SECRET-SYSTEM"),
                                   HumanMessage([{"type": "text", "text": "SECRET-PROMPT"},
                                                 {"type": "image", "base64": B64, "mime_type": "image/png"},
                                                 {"type": "file", "base64": PDF_B64, "mime_type": "application/pdf"}])]})
    finally:
        inst.uninstrument()
    spans = exporter.spans
    everything = json.dumps([(s.name, s.attributes, s.events) for s in spans], default=str)
    for secret in ("SECRET", B64[:32], PDF_B64[:32], "gen_ai.tool.definitions", "gen_ai.system_instructions",
                   "llm.tools.", '"parameters"', "reasoning"):
        assert secret not in everything, secret
    models = exporter.semantic("model")
    assert [m.attributes["gen_ai.response.finish_reasons"] for m in models] == [("tool_call",), ("stop",)]
    assert all(m.attributes["gen_ai.request.model"] == "scripted-model" for m in models)
    assert calls == []  # nothing converted to be dropped


@tool
def chart(order_id: str) -> list:
    """Draw the order's chart."""
    return [{"type": "text", "text": "chart attached"}, {"type": "image", "base64": BIG_B64, "mime_type": "image/png"}]


def test_tool_span_result_that_is_media_is_summarised(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A tool returning an image: the tool span's result lists the text and the image as a media
    part, summarised past the media budget (no base64 on the span)."""
    chart.invoke({"name": "chart", "args": {"order_id": "42"}, "id": "c1", "type": "tool_call"})
    [span] = exporter.semantic("tool")
    assert json.loads(span.attributes["gen_ai.tool.call.result"]) == [
        {"type": "text", "content": "chart attached"},
        {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "",
         "otel_agents.size_bytes": len(BIG_PNG), "otel_agents.sha256": hashlib.sha256(BIG_PNG).hexdigest(),
         "otel_agents.truncated": True}]
    assert BIG_B64[:64] not in json.dumps(span.attributes)


def test_unknown_blocks_are_generic_parts_without_encrypted_content(instrumentor: Any,
                                                                    exporter: SnapshotExporter) -> None:
    """A provider block with no GenAI part type (Anthropic's web search result) is a generic part
    of its own type, its nested ``encrypted_content`` left out; a server tool call is a
    ``server_tool_call`` part."""
    _invoke([HumanMessage("news?")], AIMessage([
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "news"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": [{"type": "web_search_result", "url": "https://example.test/n", "title": "News",
                      "encrypted_content": "EncryptedXYZ"}]},
        {"type": "text", "text": "Here is the news."}], response_metadata={"stop_reason": "end_turn"}))
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.output.messages")[0]["parts"] == [
        {"type": "server_tool_call", "id": "srvtoolu_1", "name": "web_search", "arguments": {"query": "news"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": [{"type": "web_search_result", "url": "https://example.test/n", "title": "News"}]},
        {"type": "text", "content": "Here is the news."}]
    assert "EncryptedXYZ" not in json.dumps(a)
    assert a["output.value"] == "Here is the news."


def test_declared_calls_read_every_message_shape_as_getattr_would() -> None:
    """The three call lists are read off a message model without pydantic's raise for the ones it lacks (a
    HumanMessage has none, an AIMessage no chunks), giving what getattr gives; a mapping is read with getattr."""
    from langchain_core.messages import AIMessageChunk

    from otel_agents.instrumentors._sdk_client import field_of

    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}
    chunk = AIMessageChunk(content="", tool_call_chunks=[{"name": "f", "args": '{"a"', "id": "c2", "index": 0}])
    messages = [HumanMessage("hi"), SystemMessage("be terse"), AIMessage("", tool_calls=[call]), chunk,
                AIMessage("", invalid_tool_calls=[{"name": "g", "args": "{", "id": "c3", "error": "bad"}]),
                ToolMessage("5", tool_call_id="c1")]
    for message in messages:
        for name in ("tool_calls", "invalid_tool_calls", "tool_call_chunks"):
            assert field_of(message, name) == getattr(message, name, None), (type(message).__name__, name)
    assert list(lc_content._declared_calls(messages[2])) == ["c1"]
    assert list(lc_content._declared_calls(chunk)) == ["c2"]
    assert list(lc_content._declared_calls(messages[4])) == ["c3"]
    assert lc_content._declared_calls(messages[0]) == {}
    # a mapping stands for no message model: its keys are not its calls (getattr finds none)
    assert lc_content._declared_calls({"tool_calls": [call]}) == {}


class _NoFinishReasonModel(ToolCallingChatModel):
    """The fake model, its replies without a finish reason (a provider that sends none)."""

    def reply(self, messages: list[Any]) -> Any:
        msg = super().reply(messages)
        msg.response_metadata = {k: v for k, v in msg.response_metadata.items() if k != "finish_reason"}
        return msg


@pytest.mark.parametrize("sent", [True, False], ids=["finish-reason-sent", "none-sent"])
def test_gen_ai_alone_a_graph_answer_is_the_agent_output_message(provider: Any, exporter: SnapshotExporter,
                                                                  sent: bool) -> None:
    """Written in OTel GenAI alone (no ``output.value``), a LangGraph agent's span has its response as
    ``gen_ai.output.messages``: the last AI message of its ``MessagesState`` (the semconv's output message is one
    response), as the last model span returned it, its finish reason included (the provider's, kept in the
    message's ``response_metadata``; it was left out), not the whole state (conversation, tool calls and results)
    as one assistant text. A reply that carried none has none (empty, never a default). Ground truth: the graph's
    own result."""
    from otel_agents._spans import Settings

    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider, settings=Settings(vocabularies="gen_ai", capture_content=True))
    try:
        model = (ToolCallingChatModel if sent else _NoFinishReasonModel)(usage=None, llm_output_usage=None)
        result = build_agent_graph(model, [get_weather], name="weather_agent").invoke(
            {"messages": [HumanMessage("Paris")]})
    finally:
        inst.uninstrument()
    answer = result["messages"][-1]
    assert answer.type == "ai" and answer.content == "It is sunny in Paris"
    assert answer.response_metadata.get("finish_reason") == ("stop" if sent else None)
    [agent] = exporter.semantic("agent")
    attrs = dict(agent.attributes)
    validate_genai_json(attrs)
    assert "output.value" not in attrs
    assert json_attribute(attrs, "gen_ai.output.messages") == [
        {"role": "assistant", "parts": [{"type": "text", "content": answer.content}],
         "finish_reason": "stop" if sent else ""}]
    last_model = max(exporter.semantic("model"), key=lambda s: s.start_time)
    assert json_attribute(attrs, "gen_ai.output.messages") == \
        json_attribute(dict(last_model.attributes), "gen_ai.output.messages")


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
def test_a_finish_reason_the_model_did_not_send_is_not_invented(stream: bool, instrumentor: Any,
                                                                exporter: SnapshotExporter) -> None:
    """A reply with tool calls and no finish reason in its metadata (an integration that reports none)
    has no finish reason on its span: not ``tool_call`` guessed from the calls (the spans tell the truth)."""
    _invoke([HumanMessage("Where is order 42?")],
            AIMessage("", tool_calls=[{"name": "lookup_order", "args": {"order_id": "42"}, "id": "call_1",
                                       "type": "tool_call"}]), stream=stream)
    a = _model_span(exporter)
    assert "gen_ai.response.finish_reasons" not in a
    [message] = json_attribute(a, "gen_ai.output.messages")
    assert message["finish_reason"] == ""
    assert [p["type"] for p in message["parts"]] == ["tool_call"]
