"""Plain-Python model spans record messages with the part model (issue 15, cases M-1, M-3, M-4)."""

from __future__ import annotations

import json
from typing import Any

import otel_agents
from otel_agents.manual import (ChatMessage, ReasoningPart, TextPart, ToolCallPart, ToolDefinition, current_span,
                                media_part)
from tests.genai_schema import validate_genai_json


def test_decorated_model_records_parts_tools_and_system_instructions(exporter: Any) -> None:
    """A decorated model function fills its span through ``current_span().set_messages``: instructions (M-4),
    a multimodal user message, reasoning apart from the answer (M-1), one tool call, the tools offered (M-3)."""
    params = {"type": "object", "properties": {"order_id": {"type": "string"}}}

    @otel_agents.span("model", "acme-1", provider="acme")
    def call_model(url: str) -> str:
        current_span().set_messages(
            system=["You look orders up."],
            input=[ChatMessage("user", parts=[TextPart("Which order is this?"), media_part(url)])],
            output=[ChatMessage("assistant", parts=[ReasoningPart("The label says A100."), TextPart("Checking."),
                                                    ToolCallPart("lookup_order", {"order_id": "A100"}, "c1")],
                                finish_reason="tool_calls")],
            tools=[ToolDefinition("lookup_order", "Look up an order.", params)])
        return "Checking."

    call_model("https://example.test/label.jpg")
    [span] = exporter.semantic("model")
    attrs = dict(span.attributes)
    validate_genai_json(attrs)
    assert json.loads(attrs["gen_ai.system_instructions"]) == [{"type": "text", "content": "You look orders up."}]
    assert json.loads(attrs["gen_ai.input.messages"]) == [{"role": "user", "parts": [
        {"type": "text", "content": "Which order is this?"},
        {"type": "uri", "mime_type": None, "modality": "image", "uri": "https://example.test/label.jpg"}]}]
    assert json.loads(attrs["gen_ai.output.messages"]) == [{"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "reasoning", "content": "The label says A100."}, {"type": "text", "content": "Checking."},
        {"type": "tool_call", "id": "c1", "name": "lookup_order", "arguments": {"order_id": "A100"}}]}]
    assert json.loads(attrs["gen_ai.tool.definitions"]) == [
        {"type": "function", "name": "lookup_order", "description": "Look up an order.", "parameters": params}]
    assert attrs["llm.input_messages.0.message.role"] == "system"
    assert attrs["llm.input_messages.1.message.contents.1.message_content.image.image.url"] == \
        "https://example.test/label.jpg"
    assert attrs["llm.output_messages.0.message.content"] == "Checking."
    assert json.loads(attrs["llm.tools.0.tool.json_schema"])["function"]["name"] == "lookup_order"
