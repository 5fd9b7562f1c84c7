"""The message content model in LlamaIndex (issue 15; cases M-1 … M-4 of content-and-envelopes.md).

Real ``llama-index-core`` messages, blocks, tools and agents over the core's own
``MockFunctionCallingLLM`` (scripted by ``tests/llama_index/fakes.py``): each test asserts the exact
GenAI JSON (validated against the semconv v1.41 constraints in ``tests/genai_schema.py``) and the
OpenInference attributes of the model span.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import (AudioBlock, CachePoint, CacheControl, ChatMessage, DocumentBlock,
                                              ImageBlock, MessageRole, TextBlock, ThinkingBlock, ToolCallBlock)
from llama_index.core.tools import FunctionTool
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents.exporters.ecp import fold
from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
from otel_agents.instrumentors.llama_index import _content as li_content
from tests.genai_schema import validate_genai_json, json_attribute, openinference_under
from tests.llama_index import fakes
from tests.spans import SnapshotExporter

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(92))          # 100 bytes: under the 4096-byte media budget
BIG_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20  # 5128 bytes: over it
PDF = b"%PDF-1.7\n" + b"0" * 40
B64 = base64.b64encode(PNG).decode()
BIG_B64 = base64.b64encode(BIG_PNG).decode()
PDF_B64 = base64.b64encode(PDF).decode()


def _model_span(exporter: SnapshotExporter, index: int = -1) -> dict[str, Any]:
    models = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    attrs = dict(models[index].attributes)
    validate_genai_json(attrs)
    return attrs


def _chat(messages: list[ChatMessage], reply: Any = "ok", *, stream: bool = False, **kwargs: Any) -> Any:
    llm = fakes.scripted_llm(reply)
    if stream:
        last = None
        for last in llm.stream_chat(messages, **kwargs):
            pass
        return last
    return llm.chat(messages, **kwargs)


def _run(agent: Any, user_msg: Any) -> Any:
    """Run a workflow agent to its end (a run needs a running event loop)."""
    async def go() -> Any:
        return await agent.run(user_msg=user_msg)

    return asyncio.run(go())


def _user(*blocks: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, blocks=list(blocks))


# ----------------------------------------------------------------------------- text only, system prompt

def test_text_only_with_system_prompt_m4(instrumented: Any, exporter: SnapshotExporter) -> None:
    """M-4: a system message is ``gen_ai.system_instructions`` and the first OpenInference input message."""
    _chat([ChatMessage(role=MessageRole.SYSTEM, content="You are a refunds assistant."),
           ChatMessage(role=MessageRole.USER, content="Where is my refund?")], "Your refund was approved.")
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.system_instructions") == [{"type": "text", "content": "You are a refunds assistant."}]
    assert json_attribute(a, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Where is my refund?"}]}]
    assert json_attribute(a, "gen_ai.output.messages") == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Your refund was approved."}],
         "finish_reason": ""}]
    assert openinference_under(a, "llm.input_messages") == {
        "0.message.role": "system", "0.message.content": "You are a refunds assistant.",
        "1.message.role": "user", "1.message.content": "Where is my refund?"}
    assert openinference_under(a, "llm.output_messages") == {"0.message.role": "assistant",
                                             "0.message.content": "Your refund was approved."}
    assert a["output.value"] == "Your refund was approved."
    assert "gen_ai.tool.definitions" not in a


def test_agent_system_prompt_m4(instrumented: Any, exporter: SnapshotExporter) -> None:
    """M-4: a FunctionAgent's ``system_prompt`` on every model span of the run."""
    _run(fakes.calculator(), "What is 2+3?")
    for i in (0, 1):
        a = _model_span(exporter, i)
        assert json_attribute(a, "gen_ai.system_instructions") == [{"type": "text", "content": "You are a calculator."}]
        assert openinference_under(a, "llm.input_messages.0.message") == {"role": "system", "content": "You are a calculator."}
        assert [m["role"] for m in json_attribute(a, "gen_ai.input.messages")][0] == "user"


# ----------------------------------------------------------------------------- block lists

def test_block_lists_are_parts(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Several text blocks are several text parts (OpenInference ``message.contents``); a cache
    marker is not content; the answer in blocks is the answer text in ``output.value``."""
    _chat([_user(TextBlock(text="Compare these:"), CachePoint(cache_control=CacheControl(type="ephemeral")),
                 TextBlock(text="A and B"))],
          ChatMessage(role=MessageRole.ASSISTANT, blocks=[TextBlock(text="A is larger."), TextBlock(text=" B is older.")]))
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

THINKING_REPLY = ChatMessage(role=MessageRole.ASSISTANT, blocks=[
    ThinkingBlock(content="The refund was filed on the 3rd.", num_tokens=9,
                  additional_information={"signature": "EqQBCkYIARgCSIG"}),
    TextBlock(text="Your refund was approved.")])


@pytest.mark.parametrize("stream", [False, True], ids=["chat", "stream_chat"])
def test_thinking_and_text_m1(stream: bool, instrumented: Any, exporter: SnapshotExporter) -> None:
    """M-1: a ``ThinkingBlock`` is a ``reasoning`` part, the answer a ``text`` part; the OpenInference
    content is the answer; the signature kept in ``additional_information`` is nowhere."""
    _chat([_user(TextBlock(text="Where is my refund?"))], THINKING_REPLY, stream=stream)
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "", "parts": [
        {"type": "reasoning", "content": "The refund was filed on the 3rd."},
        {"type": "text", "content": "Your refund was approved."}]}]
    assert openinference_under(a, "llm.output_messages") == {"0.message.role": "assistant",
                                             "0.message.content": "Your refund was approved."}
    assert a["output.value"] == "Your refund was approved."
    assert "EqQBCkYIARgCSIG" not in json.dumps([s.attributes for s in exporter.spans], default=str)


def test_fold_shows_thoughts_only_when_asked_m1(instrumented: Any, provider: Any) -> None:
    """M-1 in the envelope: a thought line with ``include_thoughts=True`` only; ``public_output`` the answer."""
    finished = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(finished))
    _run(fakes.calculator(llm=fakes.scripted_llm(THINKING_REPLY)), "Where is my refund?")
    spans = finished.get_finished_spans()
    [plain] = fold(spans)
    [with_thoughts] = fold(spans, include_thoughts=True)
    assert plain["public_output"] == with_thoughts["public_output"] == "Your refund was approved."
    assert not any(line.strip().startswith("thought") for line in plain["evaluation_context"].splitlines())
    assert [line.strip() for line in with_thoughts["evaluation_context"].splitlines()
            if line.strip().startswith("thought")] == ["thought The refund was filed on the 3rd."]


# ----------------------------------------------------------------------------- one tool call, once (M-2)

def test_tool_call_block_and_legacy_tool_calls_are_one_call_m2(instrumented: Any,
                                                               exporter: SnapshotExporter) -> None:
    """M-2: a call present as a ``ToolCallBlock`` and in the OpenAI-style ``additional_kwargs["tool_calls"]``
    is one ``tool_call`` part after the plain text; no finish reason (the mock sends none)."""
    reply = ChatMessage(role=MessageRole.ASSISTANT, blocks=[
        TextBlock(text="Let me check that order."),
        ToolCallBlock(tool_call_id="toolu_01", tool_name="lookup_order", tool_kwargs={"order_id": "42"})],
        additional_kwargs={"tool_calls": [{"id": "toolu_01", "type": "function",
                                           "function": {"name": "lookup_order", "arguments": '{"order_id": "42"}'}}]})
    _chat([_user(TextBlock(text="Where is order 42?"))], reply)
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.output.messages") == [{"role": "assistant", "finish_reason": "", "parts": [
        {"type": "text", "content": "Let me check that order."},
        {"type": "tool_call", "id": "toolu_01", "name": "lookup_order", "arguments": {"order_id": "42"}}]}]
    assert "gen_ai.response.finish_reasons" not in a  # the mock sends none: none recorded
    assert openinference_under(a, "llm.output_messages") == {
        "0.message.role": "assistant", "0.message.content": "Let me check that order.",
        "0.message.tool_calls.0.tool_call.id": "toolu_01",
        "0.message.tool_calls.0.tool_call.function.name": "lookup_order",
        "0.message.tool_calls.0.tool_call.function.arguments": '{"order_id":"42"}'}


def test_tool_history_in_the_next_request_m2(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The agent's second request: the call once in the assistant turn, the tool result a
    ``tool_call_response`` part with the call's id."""
    _run(fakes.calculator(), "What is 2+3?")
    a = _model_span(exporter, 1)
    assert json_attribute(a, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "What is 2+3?"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call-1", "name": "add",
                                         "arguments": {"a": 2, "b": 3}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call-1", "response": "5"}]}]
    assert openinference_under(a, "llm.input_messages.3.message") == {"role": "tool", "tool_call_id": "call-1", "content": "5"}
    assert openinference_under(a, "llm.input_messages.2.message") == {
        "role": "assistant", "tool_calls.0.tool_call.id": "call-1", "tool_calls.0.tool_call.function.name": "add",
        "tool_calls.0.tool_call.function.arguments": '{"a":2,"b":3}'}


# ----------------------------------------------------------------------------- media

@pytest.mark.parametrize("block", [ImageBlock(url="https://example.test/receipt.png"),
                                   ImageBlock(url="https://example.test/receipt", image_mimetype="image/png")],
                         ids=["mime-from-suffix", "mime-given"])
def test_image_by_url(block: ImageBlock, instrumented: Any, exporter: SnapshotExporter) -> None:
    """An image by URL is a ``uri`` part; OpenInference shows it as an image content with its URL."""
    _chat([_user(TextBlock(text="What does this receipt say?"), block)])
    a = _model_span(exporter)
    url = str(block.url)
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "What does this receipt say?"},
        {"type": "uri", "mime_type": "image/png", "modality": "image", "uri": url}]}]
    assert openinference_under(a, "llm.input_messages.0.message.contents") == {
        "0.message_content.type": "text", "0.message_content.text": "What does this receipt say?",
        "1.message_content.type": "image", "1.message_content.image.image.url": url}


def test_image_by_bytes_under_the_media_budget(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Image bytes within the media budget: a ``blob`` part (base64, MIME type, modality) and an
    OpenInference data URL; an ``ImageBlock`` given a data URL is the same blob."""
    _chat([_user(TextBlock(text="Describe."), ImageBlock(image=PNG),
                 ImageBlock(url=f"data:image/png;base64,{B64}"))])
    a = _model_span(exporter)
    blob = {"type": "blob", "mime_type": "image/png", "modality": "image", "content": B64}
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Describe."}, blob, blob]}]
    assert openinference_under(a, "llm.input_messages.0.message.contents") == {
        "0.message_content.type": "text", "0.message_content.text": "Describe.",
        "1.message_content.type": "image", "1.message_content.image.image.url": f"data:image/png;base64,{B64}",
        "2.message_content.type": "image", "2.message_content.image.image.url": f"data:image/png;base64,{B64}"}


def test_image_by_bytes_over_the_media_budget(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Image bytes over the media budget keep MIME type, modality, size and SHA-256, marked truncated;
    the base64 appears nowhere."""
    _chat([_user(TextBlock(text="Describe."), ImageBlock(image=BIG_PNG))])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Describe."},
        {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "",
         "otel_agents.size_bytes": len(BIG_PNG), "otel_agents.sha256": hashlib.sha256(BIG_PNG).hexdigest(),
         "otel_agents.truncated": True}]}]
    assert openinference_under(a, "llm.input_messages.0.message.contents") == {
        "0.message_content.type": "text", "0.message_content.text": "Describe."}
    assert BIG_B64[:64] not in json.dumps([s.attributes for s in exporter.spans], default=str)


def test_image_by_path_and_audio(instrumented: Any, exporter: SnapshotExporter, tmp_path: Any) -> None:
    """A local image path is a ``file://`` URI (the file is not read); audio bytes an audio blob."""
    path = tmp_path / "chart.png"
    path.write_bytes(PNG)
    _chat([_user(ImageBlock(path=path), AudioBlock(audio=PNG, format="wav"))])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages")[0]["parts"] == [
        {"type": "uri", "mime_type": "image/png", "modality": "image", "uri": path.as_uri()},
        {"type": "blob", "mime_type": "audio/wav", "modality": "audio", "content": B64}]


def test_documents(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``DocumentBlock`` s: bytes a ``blob`` part of modality ``document``, a URL a ``uri`` part; never text."""
    _chat([_user(TextBlock(text="Summarise the policy."), DocumentBlock(data=PDF, document_mimetype="application/pdf"),
                 DocumentBlock(url="https://example.test/policy.pdf", document_mimetype="application/pdf"))])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.input.messages") == [{"role": "user", "parts": [
        {"type": "text", "content": "Summarise the policy."},
        {"type": "blob", "mime_type": "application/pdf", "modality": "document", "content": PDF_B64},
        {"type": "uri", "mime_type": "application/pdf", "modality": "document",
         "uri": "https://example.test/policy.pdf"}]}]
    assert openinference_under(a, "llm.input_messages.0.message") == {
        "role": "user", "contents.0.message_content.type": "text",
        "contents.0.message_content.text": "Summarise the policy."}


# ----------------------------------------------------------------------------- tools offered (M-3)

def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return f"order {order_id}: shipped"


def refund(order_id: str, amount: float) -> str:
    """Refund an amount on an order."""
    return "refunded"


def test_function_agent_offering_three_tools_m3(instrumented: Any, exporter: SnapshotExporter) -> None:
    """M-3: every model span of a FunctionAgent with three tools records them
    (``gen_ai.tool.definitions``, ``llm.tools.N.tool.json_schema``)."""
    agent = FunctionAgent(name="support", system_prompt="Help.", llm=fakes.scripted_llm(
        fakes.tool_call("add", {"a": 2, "b": 3}), "done"),
        tools=[FunctionTool.from_defaults(fn=f) for f in (fakes.add, lookup_order, refund)])
    _run(agent, "What is 2+3?")
    expected = [
        {"type": "function", "name": "add", "description": "add(a: 'int', b: 'int') -> 'int'\nAdd two integers.",
         "parameters": {"type": "object", "properties": {"a": {"title": "A", "type": "integer"},
                                                         "b": {"title": "B", "type": "integer"}},
                        "required": ["a", "b"]}},
        {"type": "function", "name": "lookup_order",
         "description": "lookup_order(order_id: 'str') -> 'str'\nLook up an order by its id.",
         "parameters": {"type": "object", "properties": {"order_id": {"title": "Order Id", "type": "string"}},
                        "required": ["order_id"]}},
        {"type": "function", "name": "refund",
         "description": "refund(order_id: 'str', amount: 'float') -> 'str'\nRefund an amount on an order.",
         "parameters": {"type": "object", "properties": {"order_id": {"title": "Order Id", "type": "string"},
                                                         "amount": {"title": "Amount", "type": "number"}},
                        "required": ["order_id", "amount"]}},
    ]
    for i in (0, 1):
        a = _model_span(exporter, i)
        assert json_attribute(a, "gen_ai.tool.definitions") == expected
        assert [json_attribute(a, f"llm.tools.{j}.tool.json_schema") for j in range(3)] == [
            {"type": "function", "function": {k: d[k] for k in ("name", "description", "parameters")}}
            for d in expected]
        assert "llm.tools.3.tool.json_schema" not in a


def test_tools_offered_in_a_provider_shape_m3(instrumented: Any, exporter: SnapshotExporter) -> None:
    """M-3 for integrations that pass the provider's own tool specs (OpenAI's, Anthropic's) to ``chat``."""
    _chat([_user(TextBlock(text="hi"))], tools=[
        {"type": "function", "function": {"name": "lookup_order", "description": "Look up.",
                                          "parameters": {"type": "object"}}},
        {"name": "refund", "description": "Refund.", "input_schema": {"type": "object"}}])
    a = _model_span(exporter)
    assert json_attribute(a, "gen_ai.tool.definitions") == [
        {"type": "function", "name": "lookup_order", "description": "Look up.", "parameters": {"type": "object"}},
        {"type": "function", "name": "refund", "description": "Refund.", "parameters": {"type": "object"}}]


# ----------------------------------------------------------------------------- content off

def test_content_off_records_no_content_of_any_kind(provider: Any, exporter: SnapshotExporter,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Content off: no text, reasoning, media data, tool definition or system prompt anywhere;
    finish reasons stay; no message is converted."""
    calls = []
    real = li_content.message_parts
    monkeypatch.setattr(li_content, "message_parts", lambda *a: calls.append(1) or real(*a))
    inst = LlamaIndexInstrumentor()
    inst.instrument(tracer_provider=provider, capture_content=False)
    try:
        llm = fakes.scripted_llm(
            ChatMessage(role=MessageRole.ASSISTANT, blocks=[
                ThinkingBlock(content="SECRET-THOUGHT"), TextBlock(text="SECRET-TEXT"),
                ToolCallBlock(tool_call_id="c1", tool_name="lookup_order", tool_kwargs={"order_id": "SECRET-ARG"})]),
            "SECRET-FINAL")
        agent = FunctionAgent(name="support", system_prompt="SECRET-SYSTEM", llm=llm,
                              tools=[FunctionTool.from_defaults(fn=lookup_order)])
        _run(agent, _user(TextBlock(text="SECRET-PROMPT"), ImageBlock(image=PNG),
                          DocumentBlock(data=PDF, document_mimetype="application/pdf")))
    finally:
        inst.uninstrument()
    everything = json.dumps([(s.name, s.attributes, s.events) for s in exporter.spans], default=str)
    for secret in ("SECRET", B64[:32], PDF_B64[:32], "gen_ai.tool.definitions", "gen_ai.system_instructions",
                   "llm.tools.", '"parameters"', "reasoning"):
        assert secret not in everything, secret
    models = exporter.semantic("model")
    assert len(models) == 2 and not any("gen_ai.response.finish_reasons" in m.attributes for m in models)  # none sent
    assert calls == []


def test_gen_ai_alone_a_chat_message_user_msg_is_the_agent_input_message(instrument: Any,
                                                                         exporter: SnapshotExporter) -> None:
    """Written in OTel GenAI alone (no ``input.value``, which holds the message's text), an agent run given a
    ``ChatMessage`` has it as the agent's ``gen_ai.input.messages``: its blocks as parts (the image a media
    part), as the first model span shows the agent sent it, not its text alone."""
    instrument(vocabularies="gen_ai", capture_content=True)
    _run(fakes.calculator(), _user(TextBlock(text="What is 2+3, as in this picture?"),
                                   ImageBlock(url="https://example.test/sum.png", image_mimetype="image/png")))
    [agent] = exporter.semantic("agent")
    attrs = dict(agent.attributes)
    validate_genai_json(attrs)
    assert "input.value" not in attrs
    [message] = json_attribute(attrs, "gen_ai.input.messages")
    assert message["role"] == "user" and [p["type"] for p in message["parts"]] == ["text", "uri"], message
    assert message["parts"][1]["uri"] == "https://example.test/sum.png"
    assert json_attribute(_model_span(exporter, 0), "gen_ai.input.messages")[0] == message


@pytest.mark.parametrize("workflow", [False, True])
def test_gen_ai_alone_the_chat_history_is_in_the_agent_input_messages(instrument: Any, exporter: SnapshotExporter,
                                                                      workflow: bool) -> None:
    """``agent.run(user_msg, chat_history=[...])`` (an ``AgentWorkflow``'s too): the run puts the history in its
    memory and sends it to the model before the user message; written in OTel GenAI alone, the agent's (the
    workflow's) ``gen_ai.input.messages`` had the user message alone (a text one: one user message of its text).
    Now the history then the user message, as the first model span's input has them after the system prompt."""
    from llama_index.core.agent.workflow import AgentWorkflow

    instrument(vocabularies="gen_ai", capture_content=True)
    history = [ChatMessage(role=MessageRole.USER, content="My name is Ada."),
               ChatMessage(role=MessageRole.ASSISTANT, content="Hello Ada.")]
    agent = fakes.calculator()
    runner = AgentWorkflow(agents=[agent], root_agent="calculator") if workflow else agent

    async def go() -> Any:
        return await runner.run(user_msg="What is 2+3?", chat_history=history)

    asyncio.run(go())
    [span] = [s for s in exporter.semantic("chain" if workflow else "agent")
              if s.attributes.get("gen_ai.operation.name") in ("invoke_workflow", "invoke_agent")]
    attrs = dict(span.attributes)
    validate_genai_json(attrs)
    assert "input.value" not in attrs
    expected = [{"role": "user", "parts": [{"type": "text", "content": "My name is Ada."}]},
                {"role": "assistant", "parts": [{"type": "text", "content": "Hello Ada."}]},
                {"role": "user", "parts": [{"type": "text", "content": "What is 2+3?"}]}]
    assert json_attribute(attrs, "gen_ai.input.messages") == expected
    assert json_attribute(_model_span(exporter, 0), "gen_ai.input.messages") == expected  # what the model was sent


def test_gen_ai_alone_a_steps_input_and_output_are_not_built(instrument: Any, exporter: SnapshotExporter,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """In OTel GenAI alone a workflow step's input and output (an event as JSON-able data) are written nowhere
    (``input.value``/``output.value`` are OpenInference's and Langfuse's): not built only to be dropped; the
    agent's input and answer (its messages) still are. With all three vocabularies they are built and written."""
    from otel_agents.instrumentors.llama_index import _span_handler

    built = []
    real = _span_handler.extract.event_payload
    monkeypatch.setattr(_span_handler.extract, "event_payload", lambda event: built.append(1) or real(event))
    inst = instrument(vocabularies="gen_ai", capture_content=True)
    _run(fakes.calculator(), "What is 2+3?")
    assert built == []
    steps = [s for s in exporter.spans if not any(k.startswith("gen_ai.") and "messages" in k for k in s.attributes)]
    assert steps and not any("input.value" in s.attributes or "output.value" in s.attributes for s in steps)
    [agent] = exporter.semantic("agent")
    assert "gen_ai.input.messages" in agent.attributes and "gen_ai.output.messages" in agent.attributes
    exporter.clear()
    inst.uninstrument()
    instrument(vocabularies="gen_ai,openinference", capture_content=True)
    _run(fakes.calculator(), "What is 2+3?")
    assert built and any("input.value" in s.attributes for s in exporter.spans)
