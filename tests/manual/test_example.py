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
    answer = example.agent("Can I get a refund for order A1001?")
    assert answer.startswith("Order A1001 (wireless headphones) was delivered on 2025-03-02.")
    assert "is eligible for a refund" in answer
    spans = exporter.semantic()
    assert [(s.semantic_kind, s.name) for s in spans] == [
        ("agent", "invoke_agent customer_support"),
        ("model", "chat support-sim-1"),
        ("tool", "execute_tool lookup_order"),
        ("model", "chat support-sim-1"),
        ("tool", "execute_tool check_refund_policy"),
        ("model", "chat support-sim-1"),
    ], tree(spans)
    root = spans[0]
    assert all(s.parent_id == root.span_id for s in spans[1:]), tree(spans)
    assert root.attributes["output.value"] == answer
    for model in (s for s in spans if s.semantic_kind == "model"):
        assert model.attributes["gen_ai.usage.input_tokens"] > 0
        assert model.attributes["gen_ai.provider.name"] == "otel-agents-fake"
    assert "gen_ai.usage.input_tokens" not in root.attributes
    tool = spans[2]
    assert tool.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A1001"}
    assert tool.json_attr("gen_ai.tool.call.result")["status"] == "delivered"


def test_unknown_order_records_the_tool_error_and_still_answers(example: Any, exporter: SnapshotExporter) -> None:
    assert example.agent("Refund for order A9999 please") == "I could not find order A9999."
    tool = next(s for s in exporter.semantic("tool"))
    assert tool.attributes["error.type"] == "KeyError"


def test_no_order_id_needs_no_tool(example: Any, exporter: SnapshotExporter) -> None:
    assert "order id" in example.agent("Hello?")
    assert exporter.semantic("tool") == []


def test_servable_over_ecp(example: Any, provider: Any) -> None:
    """``otel-agents ecp serve examples/plain_python/agent.py:agent`` loads ``agent`` as a step callable;
    one step folds into an envelope with both tool calls and the models' usage."""
    target_module = pytest.importorskip("otel_agents.serve.target")
    session_module = pytest.importorskip("otel_agents.serve.session")
    target = target_module.load_target(f"{EXAMPLE}:agent")
    assert not target.stateful and target.name == "customer_support"
    envelope = session_module.ECPSession(target, provider).step({"input": "Can I get a refund for order A1002?"})
    assert "is not eligible for a refund" in envelope["public_output"]
    assert [c["name"] for c in envelope["tool_calls"]] == ["lookup_order", "check_refund_policy"]
    assert all(c["arguments"] == {"order_id": "A1002"} for c in envelope["tool_calls"])
    assert envelope["usage"]["input_tokens"] > 0 and envelope["usage"]["output_tokens"] > 0


def test_runs_as_a_script_and_prints_its_span_tree() -> None:
    out = subprocess.run([sys.executable, EXAMPLE, "Can I get a refund for order A1001?"], capture_output=True,
                         text=True, timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "is eligible for a refund" in lines[0]
    assert "invoke_agent customer_support [agent]" in lines
    assert sum(1 for line in lines if line.startswith("  chat support-sim-1 [model]") and "tokens in=" in line) == 3
    assert any(line.startswith('  execute_tool check_refund_policy [tool]  {"order_id":"A1001"} -> {"eligible":true')
               for line in lines)
