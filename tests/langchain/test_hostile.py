"""Issue 35 on LangChain: hostile tool results never change the program, and every tool span ends and is
never left current."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.tools import tool
from opentelemetry import trace

from tests.hostile import LenRaisingList, UnboundProxy
from tests.spans import SnapshotExporter


def _nothing_current() -> bool:
    return not trace.get_current_span().get_span_context().is_valid


@tool
def hostile_list(q: str) -> Any:
    """A tool whose result LangChain itself cannot format."""
    return LenRaisingList([1, 2])


@pytest.mark.parametrize("call", ["invoke", "ainvoke", "tool_call"])
def test_issue35_result_langchain_cannot_handle_ends_the_tool_span(instrumentor: Any, exporter: SnapshotExporter,
                                                                 call: str) -> None:
    """Issue 35: a list whose ``__len__`` raises fails inside LangChain after ``on_tool_start`` and before
    ``on_tool_end``/``on_tool_error``: the tool span was never ended and stayed current, so every later
    run in the thread nested under it. Now LangChain's own error propagates unchanged, the span ends
    with it, and nothing is left current."""
    with pytest.raises(RuntimeError, match="no len for you"):
        if call == "invoke":
            hostile_list.invoke({"q": "x"})
        elif call == "ainvoke":
            asyncio.run(hostile_list.ainvoke({"q": "x"}))
        else:
            hostile_list.invoke({"name": "hostile_list", "args": {"q": "x"}, "id": "c1", "type": "tool_call"})
    assert _nothing_current()
    [span] = exporter.semantic("tool")
    assert span.end_time and span.status.name == "ERROR"
    assert span.attributes["error.type"] == "RuntimeError"
    hostile_list.name  # noqa: B018 - the tool object still works
    exporter.clear()
    from tests.langchain.fakes import get_weather

    get_weather.invoke({"city": "Paris"})  # the next run is a root trace of its own
    [after] = exporter.semantic("tool")
    assert after.parent_id is None


def test_issue35_result_whose_getattr_raises(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Issue 35: a result whose ``__getattr__`` raises something other than ``AttributeError`` made
    ``on_tool_end`` fail: the span was never ended. Now it ends, OK, with the result recorded by repr."""

    @tool
    def current_user() -> Any:
        """The current user."""
        return UnboundProxy()

    result = current_user.invoke({})
    assert type(result) is UnboundProxy
    assert _nothing_current()
    [span] = exporter.semantic("tool")
    assert span.end_time and span.status.name != "ERROR"
    assert "LocalProxy unbound" in span.attributes["gen_ai.tool.call.result"]
