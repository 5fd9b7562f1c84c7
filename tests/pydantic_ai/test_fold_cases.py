"""What the ECP envelope of a PydanticAI run says about delegation (issue 17: agent-as-tool).

The envelopes come from the live folding processor on the test's provider; each passes
ecp-runtime's validation and our schema.
"""

from __future__ import annotations

from typing import Any

from tests.exporters.conftest import check
from tests.pydantic_ai.agents import order_agent, router_agent


def test_agent_as_tool_folds_to_a_delegation_tree(instrumented: Any, envelopes: list) -> None:
    """An agent calling another agent inside a tool: one run whose inner agent is ``delegated_by`` the
    outer one, its line under the tool's line."""
    router_agent(order_agent()).run_sync("where is my order?")
    [env] = check(envelopes)
    assert [(a["name"], a["parent"]) for a in env["agents"]] == [("router", None), ("support", "router")]
    assert env["agents"][1]["parent_span_id"] == env["agents"][0]["span_id"]
    lines = env["evaluation_context"].splitlines()
    tool = next(i for i, line in enumerate(lines) if line.startswith("  tool ask_support "))
    assert lines[tool + 1] == "    agent support delegated_by=router", lines
    assert [(c["name"], c["agent"]) for c in env["tool_calls"]] == [("ask_support", "router"),
                                                                    ("lookup_order", "support")]


def test_e2_paused_pydantic_ai_run_does_not_leak_its_state(instrumented: Any, envelopes: list) -> None:
    """E-2 in PydanticAI: a run paused for a tool approval folds to ``status: paused`` with a ``paused``
    line, and its ``public_output`` is not the deferred-requests object the run returned (no answer yet)."""
    from pydantic_ai import DeferredToolRequests

    from tests.pydantic_ai.agents import approval_agent

    result = approval_agent().run_sync("delete /tmp/x")
    assert isinstance(result.output, DeferredToolRequests)
    [env] = check(envelopes)
    assert env["status"] == "paused"
    assert env["public_output"] is None
    assert any(line.strip().startswith("paused ") for line in env["evaluation_context"].splitlines())
