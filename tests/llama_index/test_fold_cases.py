"""What the ECP envelope of a LlamaIndex run says about failures (issue 17: case E-1 in LlamaIndex).

The envelopes come from the live folding processor on the test's provider; each passes
ecp-runtime's validation and our schema.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
from tests.exporters.conftest import check


@pytest.fixture
def instrumented(provider: Any) -> Any:
    inst = LlamaIndexInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    inst.uninstrument()


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
