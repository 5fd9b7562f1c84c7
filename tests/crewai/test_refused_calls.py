"""Tool calls CrewAI refuses without running the tool (ReAct text path): the spans and the ECP
envelope say the call was refused, never that the tool ran and returned CrewAI's refusal text.

Ground truth is the fake tool's own count of its runs.
"""

from __future__ import annotations

from typing import Any

import pytest
from crewai import Crew
from crewai.tools import tool

from tests.crewai.fakes import ActionsLLM, NativeLLM, clerk, order_task
from tests.exporters.conftest import check
from tests.spans import SnapshotExporter, SpanSnapshot, tree


def counted_tool(runs: list) -> Any:
    @tool("lookup_order")
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id and return its status."""
        runs.append(order_id)
        return f"Order {order_id}: shipped"

    return lookup_order


def kickoff(actions: list, runs: list, **tool_kw: Any) -> None:
    lookup = counted_tool(runs)
    for key, value in tool_kw.items():
        setattr(lookup, key, value)
    agent = clerk(ActionsLLM(actions=actions), tools=[lookup])
    Crew(agents=[agent], tasks=[order_task(agent)]).kickoff()


def tools_of(exporter: SnapshotExporter) -> list[SpanSnapshot]:
    return [s for s in exporter.semantic() if s.semantic_kind == "tool"]


def assert_refused(span: SpanSnapshot, error_type: str) -> None:
    assert span.status.name == "ERROR", span.attributes
    assert span.attributes["error.type"] == error_type
    assert span.attributes["otel_agents.tool.denied"] is True


def test_repeated_identical_call_is_refused_not_ok(instrumented: Any, exporter: SnapshotExporter,
                                                   envelopes: list) -> None:
    """The model asks for the same tool with the same input twice in a row: CrewAI refuses the second
    call ("I tried reusing the same input…") without running the tool. Its span is ERROR,
    ``error.type`` ``repeated_call`` (CrewAI's ``ToolFailureReason``), ``otel_agents.tool.denied``; the
    envelope's tool call has status error. CrewAI refuses only an immediate repeat: the same input
    after another call runs again, and its span is ok."""
    runs: list[str] = []
    a100, b200 = ("lookup_order", {"order_id": "A100"}), ("lookup_order", {"order_id": "B200"})
    kickoff([a100, a100, b200, a100], runs)
    assert runs == ["A100", "B200", "A100"]  # the tool ran three times: not for the immediate repeat
    spans = tools_of(exporter)
    assert len(spans) == 4, tree(exporter.semantic())
    first, second, third, fourth = spans
    for ran in (first, third, fourth):
        assert ran.status.name == "UNSET" and "otel_agents.tool.denied" not in ran.attributes
        assert "shipped" in ran.attributes["gen_ai.tool.call.result"]
    assert_refused(second, "repeated_call")
    assert second.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A100"}
    [env] = check(envelopes)
    calls = env["tool_calls"]
    assert [c["status"] for c in calls] == ["ok", "error", "ok", "ok"], calls
    assert calls[1]["name"] == "lookup_order" and calls[1]["arguments"] == {"order_id": "A100"}
    assert "reusing the same input" in calls[1]["error"]
    assert env["metrics"]["tool_errors"] == 1
    assert [line.split(" status=")[1].split()[0] for line in env["evaluation_context"].splitlines()
            if line.strip().startswith("tool lookup_order")] == ["ok", "error", "ok", "ok"]


def test_usage_limit_reached_is_refused(instrumented: Any, exporter: SnapshotExporter, envelopes: list) -> None:
    """A tool whose ``max_usage_count`` is spent is not run: ERROR ``usage_limit``, refused."""
    runs: list[str] = []
    kickoff([("lookup_order", {"order_id": "A100"}), ("lookup_order", {"order_id": "B200"})], runs,
            max_usage_count=1)
    assert runs == ["A100"]
    first, second = tools_of(exporter)
    assert first.status.name == "UNSET"
    assert_refused(second, "usage_limit")
    [env] = check(envelopes)
    assert [c["status"] for c in env["tool_calls"]] == ["ok", "error"]


@pytest.mark.parametrize(("action", "message"), [
    (("no_such_tool", {"order_id": "A100"}), "don't exist"),
    (("lookup_order", "not json at all"), "not a valid key, value dictionary"),
], ids=["unknown_tool", "unparsable_input"])
def test_call_that_does_not_parse_is_a_refused_tool_span(action: tuple, message: str, instrumented: Any,
                                                         exporter: SnapshotExporter, envelopes: list) -> None:
    """An ``Action`` naming no tool of the agent's, or an ``Action Input`` that is no dict: CrewAI answers
    without reaching the tool (and reports it as ``invalid_input``). The call is one tool span under the
    agent, refused, named as the model wrote it; the envelope lists it as a failed tool call."""
    runs: list[str] = []
    kickoff([action], runs)
    assert runs == []
    spans = exporter.semantic()
    (span,) = tools_of(exporter)
    assert span.name == f"execute_tool {action[0]}"
    assert next(s for s in spans if s.span_id == span.parent_id).semantic_kind == "agent", tree(spans)
    assert_refused(span, "invalid_input")
    assert message in span.status_description
    [env] = check(envelopes)
    (call,) = env["tool_calls"]
    assert call["name"] == action[0] and call["status"] == "error" and message in call["error"]


def test_native_call_of_an_unknown_tool_is_refused(instrumented: Any, exporter: SnapshotExporter,
                                                   envelopes: list) -> None:
    """Native function calling: a call of a tool the agent does not have is refused with CrewAI's
    reason ``unknown_tool`` as ``error.type`` (not the model's tool name, which CrewAI puts in its code)."""
    runs: list[str] = []
    agent = clerk(NativeLLM(tool_name="no_such_tool"), tools=[counted_tool(runs)])
    Crew(agents=[agent], tasks=[order_task(agent)]).kickoff()
    assert runs == []
    (span,) = tools_of(exporter)
    assert span.name == "execute_tool no_such_tool"
    assert_refused(span, "unknown_tool")
    [env] = check(envelopes)
    assert [(c["name"], c["status"]) for c in env["tool_calls"]] == [("no_such_tool", "error")]


@pytest.mark.parametrize("llm_cls", [ActionsLLM, NativeLLM], ids=["react", "native"])
def test_call_blocked_by_a_before_tool_call_hook_is_denied(llm_cls: type, instrumented: Any,
                                                           exporter: SnapshotExporter, envelopes: list) -> None:
    """A ``before_tool_call`` hook that returns False blocks the call: the tool does not run, and its one
    tool span is denied (``permission_denied``, as a denial by a hook elsewhere), not an ok call whose
    result is CrewAI's "Tool execution blocked by hook"."""
    from crewai.hooks.tool_hooks import register_before_tool_call_hook, unregister_before_tool_call_hook

    runs: list[str] = []
    asked: list[str] = []

    def block(context: Any) -> bool:
        asked.append(context.tool_name)
        return False

    llm = ActionsLLM(actions=[("lookup_order", {"order_id": "A100"})]) if llm_cls is ActionsLLM else NativeLLM()
    agent = clerk(llm, tools=[counted_tool(runs)])
    register_before_tool_call_hook(block)
    try:
        Crew(agents=[agent], tasks=[order_task(agent)]).kickoff()
    finally:
        unregister_before_tool_call_hook(block)
    assert asked == ["lookup_order"] and runs == []
    spans = exporter.semantic()
    (span,) = tools_of(exporter)
    assert span.name == "execute_tool lookup_order"
    assert next(s for s in spans if s.span_id == span.parent_id).semantic_kind == "agent", tree(spans)
    assert_refused(span, "permission_denied")
    [env] = check(envelopes)
    assert [(c["name"], c["status"]) for c in env["tool_calls"]] == [("lookup_order", "error")]
