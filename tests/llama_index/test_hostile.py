"""Issue 35 on LlamaIndex: recording a run never consumes what a tool returned, and a tool call LlamaIndex
fails to report the end of still ends its span and leaves nothing current."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from opentelemetry import trace

from tests.hostile import UnprintableError
from tests.llama_index import fakes
from tests.spans import SnapshotExporter


def _nothing_current() -> bool:
    return not trace.get_current_span().get_span_context().is_valid


def test_issue35_a_generator_a_tool_returns_is_not_consumed(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Issue 35: a tool that returns a generator found it consumed after an instrumented run (the step
    event holding the ``ToolOutput`` was serialised with ``model_dump``, which iterated it)."""
    returned: list = []

    def rows() -> Any:
        """Rows of a report."""
        gen = (i for i in range(3))
        returned.append(gen)
        return gen

    agent = FunctionAgent(name="reporter", description="reports", tools=[FunctionTool.from_defaults(fn=rows)],
                          llm=fakes.scripted_llm(fakes.tool_call("rows", {}), "done"))

    async def run() -> Any:
        return await agent.run(user_msg="rows please")

    asyncio.run(run())
    assert returned and list(returned[0]) == [0, 1, 2]
    assert exporter.semantic("tool")


@pytest.mark.parametrize("mode", ["call", "acall"])
def test_issue35_tool_raising_an_unprintable_error_ends_its_span(instrumented: Any, exporter: SnapshotExporter,
                                                                mode: str) -> None:
    """Issue 35: ``FunctionTool.call`` of a function raising an exception whose ``__str__`` raises:
    LlamaIndex's dispatcher fails formatting it before ``span_drop``, so the tool span was never ended
    and stayed current. Now it ends ERROR with the exception that propagates, and nothing stays current."""

    def explode() -> None:
        """Fails unprintably."""
        raise UnprintableError()

    tool = FunctionTool.from_defaults(fn=explode)
    with pytest.raises(BaseException) as raised:
        tool.call() if mode == "call" else asyncio.run(tool.acall())
    assert isinstance(raised.value.__context__, UnprintableError) or isinstance(raised.value, UnprintableError)
    assert _nothing_current()
    assert instrumented.open_span_count() == 0
    [span] = exporter.semantic("tool")
    assert span.end_time and span.status.name == "ERROR"
