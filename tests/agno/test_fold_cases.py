"""What the ECP envelope of an Agno run says about a pause (issue 17: E-2 in Agno).

The envelope comes from the live folding processor on the test's provider and passes ecp-runtime's
validation and our schema.
"""

from __future__ import annotations

from typing import Any

from tests.agno.agents import support_agent
from tests.agno.fakes import tool_then_answer
from tests.exporters.conftest import check


def test_e2_paused_agno_run_does_not_leak_its_state(instrumented: Any, envelopes: list) -> None:
    """E-2 in Agno: a run waiting for a tool confirmation folds to ``status: paused`` with a ``paused``
    line; its ``public_output`` is null (the model has not answered yet)."""
    from agno.tools import tool

    @tool(requires_confirmation=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    result = support_agent(script=tool_then_answer("refund", {"order_id": "A1"}), tools=[refund]).run("refund A1")
    assert result.is_paused
    [env] = check(envelopes)
    assert env["status"] == "paused"
    assert env["public_output"] is None
    assert any(line.strip().startswith("paused ") for line in env["evaluation_context"].splitlines())
