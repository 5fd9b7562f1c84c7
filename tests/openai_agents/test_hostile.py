"""Issue 35 on the OpenAI Agents SDK: a tool raising ``KeyboardInterrupt``/``SystemExit`` ends every span of
the run (workflow, agent, tool) and the exception reaches the caller unchanged; a private SDK name we hook,
missing, does not stop ``instrument()`` nor the run."""

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


def test_an_agent_named_by_a_str_enum_member_is_named_by_its_value(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``Agent(name=Role.SUPPORT)`` (a ``(str, Enum)`` member): the span was ``invoke_agent Role.SUPPORT`` (the
    member's ``__str__``) while its ``gen_ai.agent.name`` said ``support``; both now say ``support``."""
    import enum

    class Role(str, enum.Enum):
        SUPPORT = "support"

    @function_tool
    def lookup(q: str) -> str:
        """Looks up."""
        return "found"

    agent = Agent(name=Role.SUPPORT, instructions="help", tools=[lookup],
                  model=responses_model(ScriptedResponses([tool_then_answer("lookup", {"q": "a"})], repeat_last=True)))
    Runner.run_sync(agent, "hi")
    agents = [(s.name, s.attributes.get("gen_ai.agent.name")) for s in exporter.semantic("agent")]
    assert agents == [("invoke_agent support", "support")], tree(exporter.semantic())


@pytest.mark.parametrize("where,name", [("tool_execution._FunctionToolBatchExecutor", "_maybe_execute_tool_approval"),
                                        ("tool_actions", "resolve_approval_status"),
                                        ("tool_planning", "collect_manual_mcp_approvals"),
                                        ("turn_resolution", "resolve_approval_rejection_message")])
def test_a_release_without_an_approval_step_still_runs(provider: Any, exporter: SnapshotExporter,
                                                       monkeypatch: pytest.MonkeyPatch, caplog: Any, where: str,
                                                       name: str) -> None:
    """One of the SDK's private approval steps (where it tells a call waits for a human's approval, or what the
    model is told of a rejection) missing when we instrument, as in a release that renamed it: ``instrument()``
    logs it (a warning the first time) and carries on, and a run that pauses for approval returns its
    interruptions with every span ended."""
    import importlib
    import logging

    from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor

    module, _, cls = where.partition(".")
    owner = importlib.import_module(f"agents.run_internal.{module}")
    owner = getattr(owner, cls) if cls else owner
    step = owner.__dict__[name]
    monkeypatch.delattr(owner, name)
    inst = OpenAIAgentsInstrumentor()
    with caplog.at_level(logging.DEBUG, logger="otel_agents"):
        inst.instrument(tracer_provider=provider)
    monkeypatch.setattr(owner, name, step, raising=False)  # the run needs it
    try:
        assert sum("openai_agents.approval_hook" in r.getMessage() for r in caplog.records) == 1

        @function_tool(needs_approval=True)
        def refund(order_id: str) -> str:
            """Refund an order."""
            return "refunded"

        agent = Agent(name="support", instructions="x", tools=[refund],
                      model=responses_model(ScriptedResponses([tool_then_answer("refund", {"order_id": "A1"})])))
        result = Runner.run_sync(agent, "Refund A1")
        assert [i.tool_name for i in result.interruptions] == ["refund"]
        spans = exporter.semantic()
        assert {s.name for s in spans} >= {"invoke_agent support", "execute_tool refund"} and all(
            s.end_time for s in spans)
        assert inst.open_spans() == 0
    finally:
        inst.uninstrument()
