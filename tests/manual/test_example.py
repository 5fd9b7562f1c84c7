"""The plain-Python customer-support example (``examples/plain_python/agent.py``), issue 11."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.spans import SnapshotExporter, tree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "plain_python", "agent.py")


@pytest.fixture(scope="module")
def example() -> Any:
    spec = importlib.util.spec_from_file_location("plain_python_agent_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_refund_question_gives_the_full_trajectory(example: Any, exporter: SnapshotExporter) -> None:
    answer = example.agent("Can I get a refund for order B200?")
    assert answer == ("Order B200 (coffee grinder) can be refunded: "
                      "it was delivered 12 days ago, within the 30-day window.")
    spans = exporter.semantic()
    assert [(s.semantic_kind, s.name) for s in spans] == [
        ("agent", "invoke_agent customer_support"),
        ("model", "chat support-brain"),
        ("tool", "execute_tool lookup_order"),
        ("model", "chat support-brain"),
        ("tool", "execute_tool check_refund_policy"),
        ("model", "chat support-brain"),
    ], tree(spans)
    root = spans[0]
    assert all(s.parent_id == root.span_id for s in spans[1:]), tree(spans)
    assert root.attributes["output.value"] == answer
    for model in (s for s in spans if s.semantic_kind == "model"):
        assert model.attributes["gen_ai.usage.input_tokens"] > 0
        assert model.attributes["gen_ai.usage.output_tokens"] > 0
        assert model.attributes["gen_ai.provider.name"] == "fake"
    assert "gen_ai.usage.input_tokens" not in root.attributes
    lookup, policy = spans[2], spans[4]
    assert lookup.json_attr("gen_ai.tool.call.arguments") == {"order_id": "B200"}
    assert lookup.json_attr("gen_ai.tool.call.result")["status"] == "delivered"
    assert policy.json_attr("gen_ai.tool.call.arguments") == {"order_id": "B200"}
    assert policy.json_attr("gen_ai.tool.call.result")["eligible"] is True


def test_same_brain_and_answers_as_the_framework_agents(example: Any) -> None:
    """The plain agent uses the shared tools and brain of examples/customer_support/common.py."""
    common = sys.modules["common"]
    assert example.decide is common.decide and example.FAULT_PLANS is common.FAULT_PLANS
    assert sorted(example.TOOLS_BY_NAME) == sorted(fn.__name__ for fn in common.TOOLS)
    assert example.agent("What is the status of order D400?") == \
        "Order D400 (standing desk) is still being processed and has not shipped yet."


def test_unknown_order_is_reported_by_the_tool_and_the_answer(example: Any, exporter: SnapshotExporter) -> None:
    answer = example.agent("Refund for order Z999 please")
    assert answer == "I could not find order Z999. Please check the order number."
    tools = exporter.semantic("tool")
    assert [t.attributes["gen_ai.tool.name"] for t in tools] == ["lookup_order", "check_refund_policy"]
    assert tools[0].json_attr("gen_ai.tool.call.result")["error"] == "order not found"


def test_no_order_id_needs_no_tool(example: Any, exporter: SnapshotExporter) -> None:
    assert "order number" in example.agent("Hello?")
    assert exporter.semantic("tool") == []
    assert len(exporter.semantic("model")) == 1


def test_faulty_twin_same_answer_broken_trajectory(example: Any, exporter: SnapshotExporter) -> None:
    """FAULT_PLANS["plain_python"] skips the policy check for B200 and calls the forbidden tool for C300."""
    for question in ("Can I get a refund for order B200?", "Can I get a refund for order C300?"):
        assert example.faulty_agent(question) == example.agent(question)
    runs = [s for s in exporter.semantic() if s.semantic_kind == "agent"]
    assert len(runs) == 4 and {r.attributes["gen_ai.agent.name"] for r in runs} == {"customer_support"}
    tools_of = {r.span_id: [s.attributes["gen_ai.tool.name"] for s in exporter.semantic("tool")
                            if s.parent_id == r.span_id] for r in runs}
    assert [tools_of[r.span_id] for r in runs] == [
        ["lookup_order"],  # faulty: skipped_policy
        ["lookup_order", "check_refund_policy"],
        ["lookup_order", "issue_refund", "check_refund_policy"],  # faulty: forbidden_tool, before the policy
        ["lookup_order", "check_refund_policy"],
    ]


def test_servable_over_ecp(example: Any, provider: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``otel-agents ecp serve examples/plain_python/agent.py:agent`` loads ``agent`` as a step callable;
    one step folds into an envelope with both tool calls, the evidence and the models' usage."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_target puts its folder first (tests/serve/conftest.py)
    target_module = pytest.importorskip("otel_agents.serve.target")
    session_module = pytest.importorskip("otel_agents.serve.session")
    for attr in ("agent", "faulty_agent"):
        target = target_module.load_target(f"{EXAMPLE}:{attr}")
        assert not target.stateful and target.name == "customer_support"
    target = target_module.load_target(f"{EXAMPLE}:agent")
    envelope = session_module.ECPSession(target, provider).step({"input": "Can I get a refund for order C300?"})
    assert "C300 (gift card) cannot be refunded" in envelope["public_output"]
    assert [c["name"] for c in envelope["tool_calls"]] == ["lookup_order", "check_refund_policy"]
    assert all(c["arguments"] == {"order_id": "C300"} for c in envelope["tool_calls"])
    assert "lookup_order" in envelope["evaluation_context"] and "issue_refund" not in envelope["evaluation_context"]
    assert envelope["usage"]["input_tokens"] > 0 and envelope["usage"]["output_tokens"] > 0


def test_runs_as_a_script_and_prints_its_span_tree() -> None:
    out = subprocess.run([sys.executable, EXAMPLE, "Can I get a refund for order B200?"], capture_output=True,
                         text=True, timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Order B200 (coffee grinder) can be refunded")
    assert "invoke_agent customer_support [agent]" in lines
    assert sum(1 for line in lines if line.startswith("  chat support-brain [model]") and "tokens in=" in line) == 3
    assert any(line.startswith('  execute_tool check_refund_policy [tool]  {"order_id":"B200"} -> ')
               and '"eligible": true' in line for line in lines)
