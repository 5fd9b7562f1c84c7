"""What the ECP envelope of a failing CrewAI Flow says (issue 17: case E-1 in CrewAI).

The envelopes come from the live folding processor on the test's provider; each passes
ecp-runtime's validation and our schema.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from crewai.flow.flow import Flow, listen, start

from otel_agents.instrumentors.crewai import CrewAIInstrumentor
from tests.exporters.conftest import check


@pytest.fixture
def instrumented(provider: Any) -> Iterator[CrewAIInstrumentor]:
    inst = CrewAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    inst.uninstrument()


class FailingOrderFlow(Flow):
    """A flow whose second method raises: chains only (a flow and one chain per method)."""

    @start()
    def receive(self) -> str:
        return "A100"

    @listen(receive)
    def reserve(self, order_id: str) -> str:
        raise ValueError("inventory service down")


def test_e1_failing_flow_says_it_failed(instrumented: Any, envelopes: list) -> None:
    """E-1 in CrewAI: the failed method and the failed flow each have an ``error chain`` line."""
    with pytest.raises(ValueError, match="inventory service down"):
        FailingOrderFlow().kickoff()
    [env] = check(envelopes)
    assert env["status"] == "done" and env["public_output"] is None
    lines = env["evaluation_context"].splitlines()
    assert "error chain reserve: ValueError: inventory service down" in lines, lines
    assert lines[-1].startswith("error chain FailingOrderFlow: ValueError"), lines
    assert env["metrics"]["errors"] == 2
