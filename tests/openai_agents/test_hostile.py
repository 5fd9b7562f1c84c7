"""Issue 35 on the OpenAI Agents SDK: a tool raising ``KeyboardInterrupt``/``SystemExit`` ends every span of
the run (workflow, agent, tool) and the exception reaches the caller unchanged."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from opentelemetry import trace

from tests.spans import SnapshotExporter, tree

from .fakes import ScriptedResponses, responses_model, tool_then_answer
from otel_agents._spans.finalisers import settle


# asyncio re-raises KeyboardInterrupt/SystemExit out of the loop, leaving the SDK's run tasks suspended: they
# are closed when collected, and the SDK's own clean-up then fails (its context tokens belong to another
# Context). Collected here, inside the test, so that noise is not left to a later test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("mode", ["run", "run_sync"])
def test_issue35_tool_raising_base_exception_ends_every_span(instrumented: Any, exporter: SnapshotExporter,
                                                            error: type[BaseException], mode: str) -> None:
    """Issue 35: the workflow and agent spans were never ended (held in our registry and in the folding
    processor until ``max_age_s``)."""
    raised = error()

    @function_tool
    def stop_everything(reason: str) -> str:
        """Stops."""
        raise raised

    agent = Agent(name="stopper", instructions="stop", tools=[stop_everything],
                  model=responses_model(ScriptedResponses([tool_then_answer("stop_everything", {"reason": "x"})],
                                                          repeat_last=True)))
    with pytest.raises(error) as info:
        if mode == "run_sync":
            Runner.run_sync(agent, "stop")
        else:
            asyncio.run(Runner.run(agent, "stop"))
    assert info.value is raised
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    assert not trace.get_current_span().get_span_context().is_valid
    spans = exporter.semantic()
    names = {s.name for s in spans}
    assert {"invoke_workflow Agent workflow", "invoke_agent stopper", "execute_tool stop_everything"} <= names, \
        tree(spans)
    assert all(s.end_time for s in spans)
    workflow = next(s for s in spans if s.name == "invoke_workflow Agent workflow")
    assert workflow.attributes["otel_agents.control_flow"] == error.__name__
    assert instrumented.open_spans() == 0
