"""A ``Response``'s pydantic items and tools are read by field (not dumped whole): the parts and tool
definitions must be exactly those of the same objects given as their ``model_dump(exclude_none=True)``
dicts, the shape the converter reads the SDK's own span data in."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.responses import (FileSearchTool, FunctionTool, ResponseFunctionToolCall, ResponseFunctionWebSearch,
                                    ResponseInputText, ResponseOutputMessage, ResponseOutputRefusal,
                                    ResponseOutputText, ResponseReasoningItem, WebSearchTool)

from otel_agents.instrumentors.openai_agents import _convert

SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string", "default": None}}, "required": ["order_id"]}

OUTPUT_ITEMS = [
    ResponseOutputMessage(id="m", type="message", role="assistant", status="completed",
                          content=[ResponseOutputText(type="output_text", text="Refunded.", annotations=[]),
                                   ResponseOutputRefusal(type="refusal", refusal="Not that."),
                                   ResponseOutputText(type="output_text", text="", annotations=[])]),
    ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="call_1", name="lookup_order",
                             arguments='{"order_id": "B200"}'),
    ResponseFunctionToolCall(type="function_call", call_id="call_2", name="", arguments=""),
    ResponseReasoningItem(id="r", type="reasoning", summary=[{"type": "summary_text", "text": "Check the policy."}]),
    ResponseFunctionWebSearch(id="ws", type="web_search_call", status="completed",
                              action={"type": "search", "query": "refund policy"}),
]

TOOLS = [
    FunctionTool(type="function", name="lookup_order", description="Look up an order.", parameters=SCHEMA, strict=True),
    FunctionTool(type="function", name="no_schema", parameters=None, strict=None),
    WebSearchTool(type="web_search"),
    FileSearchTool(type="file_search", vector_store_ids=["vs_1"]),
]


def _dumped(items: list[Any]) -> list[Any]:
    return [i.model_dump(exclude_none=True) for i in items]


@pytest.mark.parametrize("status", ["completed", "incomplete", "failed", None])
@pytest.mark.parametrize("items", [OUTPUT_ITEMS] + [[item] for item in OUTPUT_ITEMS])
def test_output_items_read_by_field_as_their_dumps(items: list[Any], status: str | None) -> None:
    assert _convert.output_message(items, status=status) == _convert.output_message(_dumped(items), status=status)


def test_content_models_read_by_field_as_their_dumps() -> None:
    content = [ResponseInputText(type="input_text", text="Where is B200?"), {"type": "input_text", "text": "Now."},
               ResponseOutputRefusal(type="refusal", refusal="No.")]
    assert _convert._content_parts(content) == _convert._content_parts(
        [c if isinstance(c, dict) else c.model_dump(exclude_none=True) for c in content])


def test_tools_read_by_field_as_their_dumps() -> None:
    assert _convert.tool_definitions(TOOLS) == _convert.tool_definitions(_dumped(TOOLS))
    assert [t.name for t in _convert.tool_definitions(TOOLS)] == ["lookup_order", "no_schema", "web_search", "file_search"]


def test_an_extra_field_is_read_as_its_dump_holds_it() -> None:
    """The ``openai`` models keep fields they do not know as extras; a dump holds them, and so does the read."""
    call = ResponseFunctionToolCall.model_validate({"type": "function_call", "call_id": "call_9", "name": "f",
                                                    "arguments": "{}", "namespace": "x"})
    tool = WebSearchTool.model_validate({"type": "web_search", "name": "search_the_web"})
    assert _convert.output_message([call], status="completed") == _convert.output_message(_dumped([call]),
                                                                                         status="completed")
    assert _convert.tool_definitions([tool]) == _convert.tool_definitions(_dumped([tool]))
    assert _convert.tool_definitions([tool])[0].name == "search_the_web"


def test_a_model_without_a_type_is_dumped() -> None:
    """A model the fast read does not know (no ``type`` field: a ``RootModel`` wrapping a tool's dict) is
    dumped and read as the dict it dumps to."""
    from pydantic import RootModel

    tool = RootModel[dict]({"type": "function", "name": "wrapped", "description": "d", "parameters": SCHEMA})
    assert _convert.tool_definitions([tool]) == _convert.tool_definitions([tool.model_dump(exclude_none=True)])
    assert _convert.tool_definitions([tool])[0].name == "wrapped"


@pytest.mark.parametrize(("status", "reason", "expected"), [
    ("incomplete", None, "incomplete"),  # no reason sent: the status itself, as the openai client's reader writes
    ("incomplete", "max_output_tokens", "max_output_tokens"),  # even when a call was cut short with the text
    ("failed", None, "error"),
    ("completed", None, "tool_call"),
    (None, None, None),  # a model of the user's own that sent no status: no finish reason invented
])
def test_finish_reason_is_the_openai_clients_for_the_same_response(status: str | None, reason: str | None,
                                                                   expected: str | None) -> None:
    """One rule for a Response's status in both instrumentors (``_responses_items.finish_reason``): the Agents SDK's
    converter invented ``length`` for an incomplete response with no reason, and said ``tool_call`` for a failed or
    cut one that held a call."""
    from openai.types.responses import Response

    from otel_agents.instrumentors.openai import _responses

    items = OUTPUT_ITEMS[:2]
    response = Response.model_construct(id="r", model="m", output=items, status=status, usage=None,
                                        incomplete_details={"reason": reason} if reason else None)
    assert _convert.output_message(items, status=status, incomplete_reason=reason).finish_reason == expected
    assert _responses.response_outcome(response).messages[0].finish_reason == expected
