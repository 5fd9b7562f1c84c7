"""Issue 35 on Agno: hostile tool results never change the run, and every span ends."""

from __future__ import annotations

from typing import Any

from agno.run.base import RunStatus

from tests.hostile import RowsHolder, UnboundProxy
from tests.spans import SnapshotExporter, tree

from .agents import support_agent
from .fakes import tool_then_answer


def test_issue35_tool_result_whose_attributes_raise(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Issue 35: a tool result whose attribute access raises (werkzeug's LocalProxy): our
    ``hasattr(result, "__anext__")`` raised out of ``FunctionCall.execute``, the run ended
    ``RunStatus.error`` and the tool span never ended."""

    def current_user() -> Any:
        """The current user."""
        return UnboundProxy()

    agent = support_agent(script=tool_then_answer("current_user", {}), tools=[current_user])
    result = agent.run("who am I?")
    assert result.status != RunStatus.error, result.content
    spans = exporter.semantic()
    [tool] = [s for s in spans if s.semantic_kind == "tool"]
    assert tool.end_time and tool.status.name != "ERROR", tree(spans)
    assert "LocalProxy unbound" in tool.attributes["gen_ai.tool.call.result"]


def test_issue35_tool_result_model_holding_a_generator_is_not_consumed(instrumented: Any,
                                                                      exporter: SnapshotExporter) -> None:
    """Issue 35: recording a tool's result never iterates a generator the result holds."""
    kept: list[RowsHolder] = []

    def report() -> Any:
        """A report."""
        holder = RowsHolder(name="report", rows=(i for i in range(3)))
        kept.append(holder)
        return holder

    agent = support_agent(script=tool_then_answer("report", {}), tools=[report])
    agent.run("report please")
    assert list(kept[0].rows) == [0, 1, 2]
    [tool] = exporter.semantic("tool")
    assert tool.end_time
