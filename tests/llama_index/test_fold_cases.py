"""What the ECP envelope of a LlamaIndex run says about failures (issue 17: case E-1 in LlamaIndex).

The envelopes come from the live folding processor on the test's provider; each passes
ecp-runtime's validation and our schema.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.exporters.conftest import check


def test_e1_failing_workflow_step_says_it_failed(instrumented: Any, envelopes: list) -> None:
    """E-1: a ``Workflow`` whose second step raises ``ValueError("inventory service down")``.
    The run is chains only; its envelope still names the failed step and the failed workflow."""
    from llama_index.core.workflow import Event, StartEvent, StopEvent, Workflow, step

    class Checked(Event):
        order: str

    class OrderWorkflow(Workflow):
        @step
        async def receive(self, ev: StartEvent) -> Checked:
            return Checked(order=ev.get("order"))

        @step
        async def reserve(self, ev: Checked) -> StopEvent:
            raise ValueError("inventory service down")

    async def go() -> Any:
        return await OrderWorkflow(timeout=10).run(order="A100")

    with pytest.raises(ValueError, match="inventory service down"):
        asyncio.run(go())
    [env] = check(envelopes)
    assert env["status"] == "done" and env["public_output"] is None
    lines = env["evaluation_context"].splitlines()
    assert "error chain reserve: ValueError: inventory service down" in lines, lines
    assert lines[-1].startswith("error chain OrderWorkflow: ValueError"), lines
    assert env["metrics"]["errors"] == len(lines) >= 2


def test_agent_workflow_handoff_is_a_delegation(instrumented: Any, envelopes: list) -> None:
    """Issue 17: an ``AgentWorkflow`` handoff (triage → calculator) folds to a delegation tree:
    the receiving agent is ``delegated_by`` the one that handed off, in ``agents`` and in the
    evidence, though its span is the workflow's child (triage has ended when it starts)."""
    from tests.llama_index import fakes

    async def go() -> Any:
        return await fakes.handoff_workflow().run(user_msg="What is 2+3?")

    assert str(asyncio.run(go())) == "The answer is 5."
    [env] = check(envelopes)
    agents = {a["name"]: a for a in env["agents"]}
    assert agents["triage"]["parent"] is None
    assert agents["calculator"]["parent"] == "triage"
    assert agents["calculator"]["parent_span_id"] == agents["triage"]["span_id"]
    lines = [x.strip() for x in env["evaluation_context"].splitlines()]
    assert "agent calculator delegated_by=triage" in lines
    assert any(x.startswith("tool handoff ") for x in lines)
