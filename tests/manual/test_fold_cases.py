"""What the ECP envelope of a failing plain-Python run says (issue 17: case E-1 with the decorators).

The envelopes come from the live folding processor on the test's provider; each passes
ecp-runtime's validation and our schema.
"""

from __future__ import annotations

import pytest

import otel_agents
from otel_agents import manual
from otel_agents._spans import Settings
from tests.exporters.conftest import check


@otel_agents.chain(name="reserve")
def reserve(order_id: str) -> str:
    raise ValueError("inventory service down")


@otel_agents.chain(name="order_pipeline")
def order_pipeline(order_id: str) -> str:
    return reserve(order_id)


@pytest.mark.parametrize("content", [True, False])
def test_e1_failing_decorated_chain_says_it_failed(provider, envelopes: list, content: bool) -> None:
    """E-1 with decorators: a run of chains only whose inner chain raises; with content capture
    off the line names the exception type alone."""
    manual.set_providers(provider, settings=Settings(capture_content=content))
    with pytest.raises(ValueError):
        order_pipeline("A100")
    [env] = check(envelopes)
    description = "ValueError: inventory service down" if content else "ValueError"
    assert env["evaluation_context"].splitlines() == [f"error chain reserve: {description}",
                                                      f"error chain order_pipeline: {description}"]
    assert env["metrics"]["errors"] == 2 and env["public_output"] is None


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_a_run_the_program_stopped_in_a_tool_is_cancelled_not_done(provider, envelopes: list, stop: type) -> None:
    """Ctrl-C (``KeyboardInterrupt``) or ``sys.exit()`` inside a tool: the tool did not return, so it is not ``ok``
    (it was folded ``ok`` with a ``null`` result, the tool success rate 1.0), and the run was stopped, not failed:
    ``stop_reason`` ``cancelled``, no ``error`` line, as for an asyncio cancellation."""
    manual.set_providers(provider)

    @otel_agents.tool
    def lookup_order(order_id: str) -> str:
        raise stop()

    @otel_agents.agent(name="support")
    def support(question: str) -> str:
        return lookup_order("A100")

    with pytest.raises(stop):
        support("Where is A100?")
    [env] = check(envelopes)
    [call] = env["tool_calls"]
    assert (call["status"], call["error"]) == ("error", f"cancelled ({stop.__name__})"), call
    assert env["metrics"]["stop_reason"] == "cancelled" and env["public_output"] is None
    assert env["metrics"]["errors"] == 0 and env["metrics"]["tool_success_rate"] == 0.0, env["metrics"]
    assert env["agents"][0]["status"] != "ok", env["agents"]
