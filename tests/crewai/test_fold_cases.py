"""What the ECP envelope of a CrewAI run says (issue 17: case E-1 in CrewAI, the crew's input,
delegations).

The envelopes come from the live folding processor on the test's provider; each passes
ecp-runtime's validation and our schema.
"""

from __future__ import annotations

from typing import Any

import pytest
from crewai import Agent, Crew, Process, Task
from crewai.flow.flow import Flow, listen, start

from tests.crewai.fakes import ReactLLM, clerk, one_agent_crew
from tests.exporters.conftest import check
from tests.spans import SnapshotExporter


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


def test_crew_root_records_the_tasks_when_kickoff_got_no_inputs(instrumented: Any, exporter: SnapshotExporter,
                                                                envelopes: list) -> None:
    """Issue 17: a crew kicked off without ``inputs`` records its tasks as the run's input (the
    question lives in the task); with ``inputs`` the inputs stay the input."""
    one_agent_crew().kickoff()
    (crew,) = [s for s in exporter.semantic() if s.name == "invoke_workflow crew"]
    assert crew.json_attr("input.value") == {"tasks": [{"description": "What is the status of order A100?",
                                                        "expected_output": "The order's status"}]}
    exporter.clear()
    one_agent_crew().kickoff(inputs={"order": "A100"})
    (crew,) = [s for s in exporter.semantic() if s.name == "invoke_workflow crew"]
    assert crew.json_attr("input.value") == {"order": "A100"}
    check(envelopes)


def test_delegation_tool_run_folds_to_a_delegation_tree(instrumented: Any, envelopes: list) -> None:
    """Issue 17: a CrewAI delegation ('Delegate work to coworker') folds to a delegation tree: the
    coworker is ``delegated_by`` the delegating agent, under its tool line."""
    manager_llm = ReactLLM(model="scripted-manager", tool_name="Delegate work to coworker",
                           tool_args={"task": "Look up order A100", "context": "A customer asks.",
                                      "coworker": "Order Clerk"})
    manager = Agent(role="Support Lead", goal="Resolve tickets", backstory="Delegates.", llm=manager_llm,
                    allow_delegation=True, max_retry_limit=0)
    task = Task(name="ticket", description="A customer asks about order A100.", expected_output="An answer",
                agent=manager)
    Crew(agents=[manager, clerk()], tasks=[task], process=Process.sequential).kickoff()
    [env] = check(envelopes)
    agents = {a["name"]: a for a in env["agents"]}
    assert agents["Support Lead"]["parent"] is None
    assert agents["Order Clerk"]["parent"] == "Support Lead"
    assert agents["Order Clerk"]["parent_span_id"] == agents["Support Lead"]["span_id"]
    lines = env["evaluation_context"].splitlines()
    delegate = next(i for i, line in enumerate(lines) if line.strip().startswith("tool Delegate work to coworker"))
    coworker = lines.index("      agent Order Clerk delegated_by=Support Lead")
    assert lines[delegate].startswith("    tool ") and coworker == delegate + 1, lines
