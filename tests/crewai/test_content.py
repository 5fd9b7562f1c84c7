"""CrewAI message content (issue 15, cases M-1 … M-4): CrewAI's own message dicts and crews on scripted
``BaseLLM`` subclasses; every GenAI JSON attribute asserted exactly and validated against the semconv
v1.41 constraints (``tests/genai_schema.py``), with its OpenInference twin."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

from tests.crewai.fakes import GENAI_FINISH, NativeLLM, OrderFlow, ReactLLM, ReplyLLM, one_agent_crew
from tests.genai_schema import validate_genai_json, json_attribute, openinference_under

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))  # 48 bytes
PNG_B64 = base64.b64encode(PNG).decode()
PDF_B64 = base64.b64encode(b"%PDF-1.4\n" + b"x" * 91).decode()
SIGNATURE = "EqQBCkYIBxgCKkD-signature-never-recorded"
SYSTEM = "You are Order Clerk. Knows every order.\nYour personal goal is: Answer order questions"
LOOKUP_SCHEMA = {"properties": {"order_id": {"title": "Order Id", "type": "string"}}, "required": ["order_id"],
                 "type": "object"}


def _model_attrs(exporter: Any, index: int = 0) -> dict[str, Any]:
    attrs = dict(exporter.semantic("model")[index].attributes)
    validate_genai_json(attrs)
    return attrs


def test_text_only(instrumented: Any, exporter: Any) -> None:
    ReplyLLM(reply="It shipped.").call([{"role": "user", "content": "Where is A100?"}])
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.input.messages") == [{"role": "user", "parts": [{"type": "text",
                                                                               "content": "Where is A100?"}]}]
    assert json_attribute(attrs, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "",
                                                    "parts": [{"type": "text", "content": "It shipped."}]}]
    assert openinference_under(attrs, "llm.input_messages") == {"0.message.role": "user", "0.message.content": "Where is A100?"}
    assert openinference_under(attrs, "llm.output_messages") == {"0.message.role": "assistant", "0.message.content": "It shipped."}
    assert "gen_ai.system_instructions" not in attrs and "gen_ai.tool.definitions" not in attrs


def test_multi_part_content_and_image_by_url(instrumented: Any, exporter: Any) -> None:
    """A content list (CrewAI's AddImageTool shape): a text and a ``uri`` image part, OpenInference contents."""
    ReplyLLM(reply="A cat.").call([{"role": "user", "content": [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "https://example.test/cat.jpg"}}]}])
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "What is in this picture?"},
        {"type": "uri", "mime_type": None, "modality": "image", "uri": "https://example.test/cat.jpg"}]}]
    assert openinference_under(attrs, "llm.input_messages") == {
        "0.message.role": "user",
        "0.message.contents.0.message_content.type": "text",
        "0.message.contents.0.message_content.text": "What is in this picture?",
        "0.message.contents.1.message_content.type": "image",
        "0.message.contents.1.message_content.image.image.url": "https://example.test/cat.jpg"}


@pytest.mark.parametrize("budget", [1024, 16])
def test_image_by_bytes_under_and_over_the_media_budget(instrument: Any, exporter: Any, budget: int) -> None:
    """An inline data URL is a ``blob`` part: its data within ``max_media_bytes``; past it type, size and
    SHA-256 only (never the base64 text)."""
    instrument(max_media_bytes=budget)
    ReplyLLM(reply="A PNG.").call([{"role": "user", "content": [
        {"type": "text", "text": "Describe"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}]}])
    attrs = _model_attrs(exporter)
    blob = json_attribute(attrs, "gen_ai.input.messages")[0]["parts"][1]
    oi_url = "llm.input_messages.0.message.contents.1.message_content.image.image.url"
    if budget >= len(PNG):
        assert blob == {"type": "blob", "mime_type": "image/png", "modality": "image", "content": PNG_B64}
        assert attrs[oi_url] == f"data:image/png;base64,{PNG_B64}"
    else:
        assert blob == {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "",
                        "otel_agents.size_bytes": len(PNG), "otel_agents.sha256": hashlib.sha256(PNG).hexdigest(),
                        "otel_agents.truncated": True}
        assert oi_url not in attrs
        assert all(PNG_B64[:16] not in str(v) for v in attrs.values())


def test_documents(instrumented: Any, exporter: Any) -> None:
    """OpenAI ``file`` blocks (inline data, provider file id) and an Anthropic ``document`` by URL."""
    ReplyLLM(reply="Signed.").call([{"role": "user", "content": [
        {"type": "text", "text": "Compare"},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF_B64}", "filename": "a.pdf"}},
        {"type": "file", "file": {"file_id": "file-abc123"}},
        {"type": "document", "source": {"type": "url", "url": "https://example.test/terms.pdf",
                                        "media_type": "application/pdf"}}]}])
    parts = json_attribute(_model_attrs(exporter), "gen_ai.input.messages")[0]["parts"]
    assert parts == [
        {"type": "text", "content": "Compare"},
        {"type": "blob", "mime_type": "application/pdf", "modality": "document", "content": PDF_B64},
        {"type": "file", "mime_type": None, "modality": "document", "file_id": "file-abc123"},
        {"type": "uri", "mime_type": "application/pdf", "modality": "document", "uri": "https://example.test/terms.pdf"}]


def test_thinking_and_tool_call_once_in_the_history_m1_m2(instrumented: Any, exporter: Any) -> None:
    """M-1/M-2: an assistant message whose content holds a thinking block (with signature), a text block and a
    ``tool_use`` block, and the same call in ``tool_calls``: a reasoning part (no signature), the text, ONE
    tool_call part; the tool result one tool_call_response part."""
    ReplyLLM(reply="It shipped.").call([
        {"role": "user", "content": "Where is A100?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should look it up.", "signature": SIGNATURE},
            {"type": "text", "text": "Let me check that order."},
            {"type": "tool_use", "id": "toolu_01", "name": "lookup_order", "input": {"order_id": "A100"}}],
         "tool_calls": [{"id": "toolu_01", "type": "function",
                         "function": {"name": "lookup_order", "arguments": '{"order_id": "A100"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_01", "content": "Order A100: shipped"}])
    attrs = _model_attrs(exporter)
    assert json_attribute(attrs, "gen_ai.input.messages")[1:] == [
        {"role": "assistant", "parts": [
            {"type": "reasoning", "content": "I should look it up."},
            {"type": "text", "content": "Let me check that order."},
            {"type": "tool_call", "id": "toolu_01", "name": "lookup_order", "arguments": {"order_id": "A100"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "toolu_01",
                                    "response": "Order A100: shipped"}]}]
    assert openinference_under(attrs, "llm.input_messages.1") == {
        "message.role": "assistant", "message.content": "Let me check that order.",
        "message.tool_calls.0.tool_call.id": "toolu_01",
        "message.tool_calls.0.tool_call.function.name": "lookup_order",
        "message.tool_calls.0.tool_call.function.arguments": '{"order_id":"A100"}'}
    assert SIGNATURE not in json.dumps(attrs)


def test_native_crew_tools_offered_tool_call_and_system_prompt_m2_m3_m4(instrumented: Any, exporter: Any) -> None:
    """M-3: the tool schemas CrewAI passes to a function-calling LLM are gen_ai.tool.definitions and
    llm.tools.N; M-2: its tool-call answer is one tool_call part; M-4: the role/goal/backstory prompt is
    gen_ai.system_instructions and the first OpenInference message, role system."""
    llm = NativeLLM()
    one_agent_crew(llm).kickoff()
    first = _model_attrs(exporter)
    assert json_attribute(first, "gen_ai.system_instructions") == [{"type": "text", "content": SYSTEM}]
    assert first["llm.input_messages.0.message.role"] == "system"
    assert first["llm.input_messages.0.message.content"] == SYSTEM
    assert [m["role"] for m in json_attribute(first, "gen_ai.input.messages")] == ["user"]
    params = {**LOOKUP_SCHEMA, "additionalProperties": False}
    assert json_attribute(first, "gen_ai.tool.definitions") == [{
        "type": "function", "name": "lookup_order",
        "description": "Look up an order by its id and return its status.", "parameters": params}]
    assert json.loads(first["llm.tools.0.tool.json_schema"]) == {"type": "function", "function": {
        "name": "lookup_order", "description": "Look up an order by its id and return its status.",
        "parameters": params}}
    assert json_attribute(first, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "tool_call",
                                                                "parts": [{"type": "tool_call", "id": "call_0",
                                                                           "name": "lookup_order",
                                                                           "arguments": {"order_id": "A100"}}]}]
    assert GENAI_FINISH[llm.sent[0]["finish_reason"]] == "tool_call"  # what the fake's completion event carried


def test_react_crew_tools_described_in_the_prompt_m3(instrumented: Any, exporter: Any) -> None:
    """M-3 on the ReAct text path: no schemas are passed to the LLM, the tools its prompt describes (the
    agent executor's) are the tools offered."""
    one_agent_crew(ReactLLM()).kickoff()
    for i in range(2):
        attrs = _model_attrs(exporter, i)
        assert json_attribute(attrs, "gen_ai.tool.definitions") == [{
            "type": "function", "name": "lookup_order",
            "description": "Look up an order by its id and return its status.",
            "parameters": {**LOOKUP_SCHEMA, "title": "Lookup_Order"}}]
        assert json_attribute(attrs, "gen_ai.system_instructions")[0]["content"].startswith("You are Order Clerk.")


def test_content_off_records_no_content(instrument: Any, exporter: Any) -> None:
    instrument(capture_content=False)
    one_agent_crew(NativeLLM(tool_args={"order_id": "MARKER"})).kickoff()
    ReplyLLM(reply="MARKER").call([{"role": "user", "content": [
        {"type": "text", "text": "MARKER"}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
        {"type": "thinking", "thinking": "MARKER", "signature": SIGNATURE}]}])
    models = exporter.semantic("model")
    assert len(models) == 3
    for s in exporter.spans:
        assert not any(k.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system", "gen_ai.tool.definitions",
                                     "llm.input", "llm.output", "llm.tools")) for k in s.attributes)
        for key, value in s.attributes.items():
            assert "MARKER" not in str(value) and PNG_B64[:16] not in str(value), (key, value)
            assert "Knows every order" not in str(value), (key, value)


def test_a_value_written_nowhere_is_not_built(instrument: Any, exporter: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step's input and output are built (a crew's tasks, a task as the agent receives it, an output's text, a
    flow method's result) only when its span writes them (``records_value``): with content off never; in OTel GenAI
    alone a flow's chains write none (``input.value``/``output.value`` are OpenInference's and Langfuse's), while the
    crew's and the agent's are still written, as their messages."""
    from otel_agents.instrumentors.crewai import _orchestration

    built: list[str] = []
    for name in ("_crew_tasks", "_task_input", "_raw", "_first"):
        real = getattr(_orchestration, name)
        monkeypatch.setattr(_orchestration, name, lambda *a, _real=real, _name=name: built.append(_name) or _real(*a))

    inst = instrument(capture_content=False)
    one_agent_crew().kickoff()
    assert built == [] and exporter.semantic("agent")
    exporter.clear()
    inst.uninstrument()

    inst = instrument(vocabularies="gen_ai", capture_content=True)
    assert OrderFlow().kickoff() == "Order A100: shipped"
    assert "_first" not in built and {"_crew_tasks", "_task_input", "_raw"} <= set(built)
    chains = [s for s in exporter.spans if s.name in ("OrderFlow", "receive", "handle")]
    assert len(chains) == 3 and not any(k.startswith(("input.", "output.", "gen_ai.input", "gen_ai.output"))
                                        for s in chains for k in s.attributes)
    for span in (*exporter.semantic("agent"), *(s for s in exporter.spans if s.name == "invoke_workflow crew")):
        assert "gen_ai.input.messages" in span.attributes and "gen_ai.output.messages" in span.attributes
    exporter.clear()
    inst.uninstrument()

    built.clear()
    instrument(capture_content=True)  # all three vocabularies: every value built and written
    assert OrderFlow().kickoff() == "Order A100: shipped"
    assert {"_first", "_crew_tasks", "_task_input", "_raw"} <= set(built)
    assert all("output.value" in s.attributes for s in exporter.spans if s.name in ("receive", "handle"))
