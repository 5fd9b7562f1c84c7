"""PydanticAI message content (issue 15, cases M-1 … M-4): real pydantic-ai types and FunctionModel/TestModel,
every GenAI JSON attribute asserted exactly and validated against the semconv v1.41 constraints
(``tests/genai_schema.py``), with its OpenInference twin."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import (BinaryContent, DocumentUrl, ImageUrl, ModelMessage, ModelRequest, ModelResponse,
                                  TextPart, ThinkingPart, ToolCallPart, ToolReturnPart)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from otel_agents.exporters.ecp import fold
from tests.genai_schema import validate_genai_json, json_attribute, openinference_under

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))  # 48 bytes
PNG_B64 = base64.b64encode(PNG).decode()
PDF = b"%PDF-1.4\n" + b"x" * 91  # 100 bytes
SIGNATURE = "EqQBCkYIBxgCKkD-signature-never-recorded"


def _answer(text: str) -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)], model_name="fake-llm", finish_reason="stop")
    return FunctionModel(fn, model_name="fake-llm")


def _model_attrs(exporter: Any, index: int = 0) -> dict[str, Any]:
    """The index-th model span's attributes, every GenAI JSON attribute validated."""
    attrs = dict(exporter.semantic("model")[index].attributes)
    validate_genai_json(attrs)
    return attrs




def test_text_only_with_instructions_m4(instrumented: Any, exporter: Any) -> None:
    """M-4: ``instructions=`` are gen_ai.system_instructions and the first OpenInference message (role
    system); the prompt one user text part; the answer one text part and output.value."""
    agent = Agent(_answer("Refunds take 5 days."), name="support", instructions="You answer refund questions.")
    assert agent.run_sync("How long do refunds take?").output == "Refunds take 5 days."
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.system_instructions") == [{"type": "text", "content": "You answer refund questions."}]
    assert json_attribute(attrs, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "How long do refunds take?"}]}]
    assert json_attribute(attrs, "gen_ai.output.messages") == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Refunds take 5 days."}], "finish_reason": "stop"}]
    assert openinference_under(attrs, "llm.input_messages") == {
        "0.message.role": "system", "0.message.content": "You answer refund questions.",
        "1.message.role": "user", "1.message.content": "How long do refunds take?"}
    assert openinference_under(attrs, "llm.output_messages") == {"0.message.role": "assistant",
                                                 "0.message.content": "Refunds take 5 days."}
    assert attrs["output.value"] == "Refunds take 5 days."
    assert "gen_ai.tool.definitions" not in attrs and not any(k.startswith("llm.tools.") for k in attrs)


def test_system_prompt_and_instructions_m4(instrumented: Any, exporter: Any) -> None:
    """M-4: a ``system_prompt=`` (a SystemPromptPart in the history) is a system instruction too, after the
    current instructions; neither is a gen_ai.input.messages entry."""
    agent = Agent(_answer("ok"), name="support", system_prompt="Be terse.", instructions="Cite the policy.")
    agent.run_sync("hi")
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.system_instructions") == [{"type": "text", "content": "Cite the policy."},
                                                        {"type": "text", "content": "Be terse."}]
    assert json_attribute(attrs, "gen_ai.input.messages") == [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    roles = [attrs[f"llm.input_messages.{i}.message.role"] for i in range(3)]
    assert roles == ["system", "system", "user"]
    assert attrs["llm.input_messages.0.message.content"] == "Cite the policy."
    assert attrs["llm.input_messages.1.message.content"] == "Be terse."


def test_multi_part_user_content_and_image_by_url(instrumented: Any, exporter: Any) -> None:
    """A ``Sequence[UserContent]`` prompt: text and an ``ImageUrl`` are a text and a ``uri`` part, and
    OpenInference ``message.contents`` (never the JSON of the list as text)."""
    agent = Agent(_answer("A cat."), name="vision")
    agent.run_sync(["What is in this picture?", ImageUrl("https://example.test/cat.jpg")])
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "What is in this picture?"},
        {"type": "uri", "mime_type": "image/jpeg", "modality": "image", "uri": "https://example.test/cat.jpg"}]}]
    assert openinference_under(attrs, "llm.input_messages") == {
        "0.message.role": "user",
        "0.message.contents.0.message_content.type": "text",
        "0.message.contents.0.message_content.text": "What is in this picture?",
        "0.message.contents.1.message_content.type": "image",
        "0.message.contents.1.message_content.image.image.url": "https://example.test/cat.jpg"}
    agent_span = exporter.semantic("agent")[0]
    assert json.loads(agent_span.attributes["input.value"]) == [
        {"type": "text", "content": "What is in this picture?"},
        {"type": "uri", "mime_type": "image/jpeg", "modality": "image", "uri": "https://example.test/cat.jpg"}]


def test_gen_ai_alone_a_multimodal_prompt_is_the_agent_input_message(instrument: Any, exporter: Any) -> None:
    """Written in OTel GenAI alone (no ``input.value``), the agent span's input is ``gen_ai.input.messages``: the
    prompt the run was given as one user message of typed parts (the image a ``uri`` part), as the model span has
    it, never the JSON of the parts list as one text."""
    instrument(vocabularies="gen_ai", capture_content=True)
    Agent(_answer("A cat."), name="vision").run_sync(["What is in this picture?",
                                                      ImageUrl("https://example.test/cat.jpg")])
    agent_attrs = dict(exporter.semantic("agent")[0].attributes)
    validate_genai_json(agent_attrs)
    assert "input.value" not in agent_attrs
    assert json_attribute(agent_attrs, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "What is in this picture?"},
        {"type": "uri", "mime_type": "image/jpeg", "modality": "image", "uri": "https://example.test/cat.jpg"}]}]
    assert json_attribute(agent_attrs, "gen_ai.input.messages") == json_attribute(_model_attrs(exporter),
                                                                                  "gen_ai.input.messages")


def test_image_by_bytes_under_the_media_budget(instrument: Any, exporter: Any) -> None:
    """``BinaryContent`` within ``max_media_bytes`` is a ``blob`` part with its base64 data, and an
    OpenInference image data URL."""
    instrument(max_media_bytes=1024)
    Agent(_answer("A PNG."), name="vision").run_sync(["Describe", BinaryContent(PNG, media_type="image/png")])
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Describe"},
        {"type": "blob", "mime_type": "image/png", "modality": "image", "content": PNG_B64}]}]
    assert attrs["llm.input_messages.0.message.contents.1.message_content.type"] == "image"
    assert attrs["llm.input_messages.0.message.contents.1.message_content.image.image.url"] == \
        f"data:image/png;base64,{PNG_B64}"


def test_image_by_bytes_over_the_media_budget(instrument: Any, exporter: Any) -> None:
    """Past ``max_media_bytes`` the bytes are never inlined: type, size and SHA-256 only, marked
    truncated — in the model span and in the agent span's input."""
    instrument(max_media_bytes=16)
    Agent(_answer("A PNG."), name="vision").run_sync(["Describe", BinaryContent(PNG, media_type="image/png")])
    attrs = _model_attrs(exporter)
    summary = {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "",
               "otel_agents.size_bytes": len(PNG), "otel_agents.sha256": hashlib.sha256(PNG).hexdigest(),
               "otel_agents.truncated": True}
    assert json_attribute(attrs, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Describe"}, summary]}]
    assert openinference_under(attrs, "llm.input_messages") == {  # no URL to show for the image: only the text
        "0.message.role": "user",
        "0.message.contents.0.message_content.type": "text",
        "0.message.contents.0.message_content.text": "Describe"}
    agent_input = json.loads(exporter.semantic("agent")[0].attributes["input.value"])
    assert agent_input == [{"type": "text", "content": "Describe"}, summary]
    assert all(PNG_B64[:16] not in str(v) for s in exporter.spans for v in s.attributes.values())


def test_documents_by_url_and_by_bytes(instrument: Any, exporter: Any) -> None:
    """``DocumentUrl`` is a ``uri`` part and a PDF ``BinaryContent`` a ``blob`` part, modality ``document``
    (OpenInference has no document content type: only the text is listed there)."""
    instrument(max_media_bytes=4096)
    Agent(_answer("Signed."), name="docs").run_sync(
        ["Compare these", DocumentUrl("https://example.test/terms.pdf"), BinaryContent(PDF, media_type="application/pdf")])
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Compare these"},
        {"type": "uri", "mime_type": "application/pdf", "modality": "document", "uri": "https://example.test/terms.pdf"},
        {"type": "blob", "mime_type": "application/pdf", "modality": "document",
         "content": base64.b64encode(PDF).decode()}]}]
    assert openinference_under(attrs, "llm.input_messages") == {
        "0.message.role": "user",
        "0.message.contents.0.message_content.type": "text",
        "0.message.contents.0.message_content.text": "Compare these"}


def _thinking_model() -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ThinkingPart("The refund is within policy.", signature=SIGNATURE,
                                                 provider_name="anthropic"),
                                    TextPart("Your refund was approved.")],
                             model_name="fake-llm", finish_reason="stop")
    return FunctionModel(fn, model_name="fake-llm")


def test_thinking_and_text_m1(instrumented: Any, exporter: Any, provider: Any) -> None:
    """M-1: a ``ThinkingPart`` is a ``reasoning`` part (never its signature), the answer a plain ``text``
    part; OpenInference content and output.value are the answer only; the envelope's public_output is the
    answer; ``fold(include_thoughts=True)`` shows the thought, the default fold does not."""
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    Agent(_thinking_model(), name="refunds").run_sync("Can I get a refund?")
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "stop", "parts": [
        {"type": "reasoning", "content": "The refund is within policy."},
        {"type": "text", "content": "Your refund was approved."}]}]
    assert openinference_under(attrs, "llm.output_messages") == {"0.message.role": "assistant",
                                                 "0.message.content": "Your refund was approved."}
    assert attrs["output.value"] == "Your refund was approved."
    assert all(SIGNATURE not in str(v) for s in exporter.spans for v in s.attributes.values())

    [default] = fold(memory.get_finished_spans())
    assert default["public_output"] == "Your refund was approved."
    assert "thought" not in default["evaluation_context"]
    [thoughts] = fold(memory.get_finished_spans(), include_thoughts=True)
    assert thoughts["evaluation_context"].splitlines() == [
        "agent refunds",
        "  model fake-llm finish=stop tokens_in=55 tokens_out=11",  # FunctionModel's token estimate
        "    thought The refund is within policy."]
    assert thoughts["public_output"] == "Your refund was approved."
    assert SIGNATURE not in json.dumps(thoughts)


def test_tool_call_once_m2(instrumented: Any, exporter: Any) -> None:
    """M-2: a response with text and a tool call is one text part and exactly one ``tool_call`` part,
    finish reason ``tool_call``; in the next request's history the same, then one ``tool_call_response``."""
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[TextPart("Let me check that order."),
                                        ToolCallPart("lookup_order", {"order_id": "A100"}, tool_call_id="toolu_01")],
                                 finish_reason="tool_call")
        return ModelResponse(parts=[TextPart("It shipped.")], finish_reason="stop")

    agent = Agent(FunctionModel(fn, model_name="fake-llm"), name="support")

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict:
        """Look up an order."""
        return {"status": "shipped"}

    agent.run_sync("Where is A100?")
    first, second = _model_attrs(exporter, 0), _model_attrs(exporter, 1)
    call = {"type": "tool_call", "id": "toolu_01", "name": "lookup_order", "arguments": {"order_id": "A100"}}
    assert json_attribute(first, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "text", "content": "Let me check that order."}, call]}]
    assert openinference_under(first, "llm.output_messages") == {
        "0.message.role": "assistant", "0.message.content": "Let me check that order.",
        "0.message.tool_calls.0.tool_call.id": "toolu_01",
        "0.message.tool_calls.0.tool_call.function.name": "lookup_order",
        "0.message.tool_calls.0.tool_call.function.arguments": '{"order_id":"A100"}'}
    assert json_attribute(second, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Where is A100?"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "Let me check that order."}, call]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_01",
                                    "response": {"status": "shipped"}}]}]
    assert second["llm.input_messages.2.message.tool_call_id"] == "toolu_01"
    assert json.loads(second["llm.input_messages.2.message.content"]) == {"status": "shipped"}


class Refund(BaseModel):
    approved: bool
    reason: str


def test_tools_offered_m3(instrumented: Any, exporter: Any) -> None:
    """M-3: every model span records the function tools and the output tool offered
    (gen_ai.tool.definitions, llm.tools.N.tool.json_schema)."""
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"approved": True, "reason": "ok"})])

    agent = Agent(FunctionModel(fn, model_name="fake-llm"), name="refunds", output_type=Refund)

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        return "shipped"

    @agent.tool_plain
    def check_policy(days: int) -> bool:
        """Whether a refund after this many days is allowed."""
        return days < 30

    agent.run_sync("refund?")
    attrs = _model_attrs(exporter)
    defs = json_attribute(attrs, "gen_ai.tool.definitions")
    assert [d["name"] for d in defs] == ["lookup_order", "check_policy", "final_result"]
    assert defs[0] == {"type": "function", "name": "lookup_order", "description": "Look up an order.",
                       "parameters": {"additionalProperties": False, "properties": {"order_id": {"type": "string"}},
                                      "required": ["order_id"], "type": "object"}}
    assert defs[2]["parameters"]["required"] == ["approved", "reason"]
    assert json.loads(attrs["llm.tools.1.tool.json_schema"]) == {"type": "function", "function": {
        "name": "check_policy", "description": "Whether a refund after this many days is allowed.",
        "parameters": {"additionalProperties": False, "properties": {"days": {"type": "integer"}},
                       "required": ["days"], "type": "object"}}}
    assert "llm.tools.2.tool.json_schema" in attrs and "llm.tools.3.tool.json_schema" not in attrs


def test_tool_returning_an_image(instrument: Any, exporter: Any, provider: Any) -> None:
    """A tool that returns ``BinaryContent``: its span's result and the envelope's ``tool_calls[].result``
    are a GenAI media part (summarised past the media budget), and the next request's tool message is the
    text pydantic-ai sends the model plus a ``blob`` part."""
    instrument(max_media_bytes=16)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("snapshot", {}, tool_call_id="c1")])
        return ModelResponse(parts=[TextPart("A chart.")])

    agent = Agent(FunctionModel(fn, model_name="fake-llm"), name="charts")

    @agent.tool_plain
    def snapshot() -> BinaryContent:
        """Take a picture of the chart."""
        return BinaryContent(PNG, media_type="image/png")

    agent.run_sync("Show me the chart")
    summary = {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "",
               "otel_agents.size_bytes": len(PNG), "otel_agents.sha256": hashlib.sha256(PNG).hexdigest(),
               "otel_agents.truncated": True}
    tool = exporter.semantic("tool")[0]
    assert json.loads(tool.attributes["gen_ai.tool.call.result"]) == summary
    second = _model_attrs(exporter, 1)
    identifier = BinaryContent(PNG, media_type="image/png").identifier
    assert json_attribute(second, "gen_ai.input.messages")[2] == {"role": "tool", "parts": [
        {"type": "tool_call_response", "id": "c1", "response": f"See file {identifier}."}, summary]}
    [envelope] = fold(memory.get_finished_spans())
    assert envelope["tool_calls"][0]["result"] == {
        "type": "blob", "mime_type": "image/png", "modality": "image",
        "size_bytes": len(PNG), "sha256": hashlib.sha256(PNG).hexdigest()}
    assert all(PNG_B64[:16] not in str(v) for s in exporter.spans for v in s.attributes.values())


def test_content_off_records_no_text_reasoning_media_tools_or_instructions(instrument: Any, exporter: Any) -> None:
    """Content off: no prompt, reasoning, media, tool definition or instruction anywhere; finish reasons stay."""
    instrument(capture_content=False)

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ThinkingPart("MARKER thinking", signature=SIGNATURE, provider_name="x"),
                                        ToolCallPart("snapshot", {"q": "MARKER"}, tool_call_id="c1")],
                                 finish_reason="tool_call")
        return ModelResponse(parts=[TextPart("MARKER answer")], finish_reason="stop")

    agent = Agent(FunctionModel(fn, model_name="fake-llm"), name="support", instructions="MARKER instructions")

    @agent.tool_plain
    def snapshot(q: str) -> BinaryContent:
        """Take a picture."""  # a tool's description is its identity (kept with content off, like its name)
        return BinaryContent(PNG, media_type="image/png")

    agent.run_sync(["MARKER prompt", BinaryContent(PNG, media_type="image/png"), ImageUrl("https://x.test/MARKER.png")])
    models = exporter.semantic("model")
    assert [m.attributes["gen_ai.response.finish_reasons"] for m in models] == [("tool_call",), ("stop",)]
    assert [s.name for s in exporter.semantic("tool")] == ["execute_tool snapshot"]
    for s in exporter.spans:
        for key, value in s.attributes.items():
            assert "MARKER" not in str(value), (key, value)
            assert PNG_B64[:16] not in str(value) and SIGNATURE not in str(value)
        assert not any(k.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system", "gen_ai.tool.definitions",
                                     "llm.input", "llm.output", "llm.tools", "input.value", "output.value"))
                       for k in s.attributes)


@pytest.mark.filterwarnings("ignore:`RetryPromptPart` is deprecated")  # older histories still hold them
def test_request_history_converts_every_part_once() -> None:
    """Unit level, over the real types: a retry prompt, a thinking part in the history and a request
    with instructions give the expected messages (ThinkingPart a reasoning part, never its signature)."""
    from otel_agents._spans import ReasoningPart, TextPart as Text, ToolCallPart as Call
    from otel_agents.instrumentors.pydantic_ai import _convert
    from pydantic_ai.messages import RetryPromptPart, UserPromptPart

    history = [
        ModelRequest(parts=[UserPromptPart("double 4")], instructions="Use the tool."),
        ModelResponse(parts=[ThinkingPart("call double", signature=SIGNATURE, provider_name="x"),
                             ToolCallPart("double", {"n": "four"}, tool_call_id="t1")]),
        ModelRequest(parts=[RetryPromptPart("n must be an integer", tool_name="double", tool_call_id="t1")],
                     instructions="Use the tool."),
    ]
    messages, instructions = _convert.chat_messages(history)
    assert instructions == ["Use the tool."]
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    assert messages[1].parts == [ReasoningPart("call double"), Call("double", {"n": "four"}, "t1")]
    assert messages[2].tool_call_id == "t1" and "n must be an integer" in messages[2].content
    assert messages[0].parts == [Text("double 4")]
    assert SIGNATURE not in repr(messages)
    # a tool return that mixes text and a file keeps both
    part = ToolReturnPart("snap", ["caption", BinaryContent(PNG, media_type="image/png")], tool_call_id="c")
    response, blob = _convert.tool_return_parts(part)
    assert response.id == "c" and "caption" in response.response and blob.mime_type == "image/png"
