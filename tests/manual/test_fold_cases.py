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
