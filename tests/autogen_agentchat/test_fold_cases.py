"""ECP envelopes from AutoGen runs: every envelope the live folding processor makes passes ecp-runtime's validation
and our schema, and the agents tree shows who delegated to whom."""

from __future__ import annotations

import asyncio
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import TextMentionTermination
from autogen_agentchat.teams import SelectorGroupChat, Swarm

from tests.exporters.conftest import check

from .fakes import call, replay, text
from .test_cases import agent_with_tool


def test_single_agent_run_folds_to_a_valid_envelope(instrumented: Any, envelopes: list) -> None:
    """One AssistantAgent run (tool call, then answer): one valid envelope whose public output is the answer."""
    asyncio.run(agent_with_tool().run(task="Where is A100?"))
    [env] = check(envelopes)
    assert env["public_output"] == "A100 has shipped."
    assert env["status"] == "done"


def test_team_runs_fold_with_delegation(instrumented: Any, envelopes: list) -> None:
    """A Swarm handoff and a SelectorGroupChat each fold to one valid envelope; the handoff target's line names the
    agent that handed off (``delegated_by``); the selector's turns are agent lines inside the workflow, after the
    selector's own model line."""
    triage = AssistantAgent("triage", model_client=replay(call("transfer_to_billing", {}, "h1")), handoffs=["billing"])
    billing = AssistantAgent("billing", model_client=replay(text("Refund issued. TERMINATE")))
    asyncio.run(Swarm([triage, billing], termination_condition=TextMentionTermination("TERMINATE")).run(task="refund"))
    writer = AssistantAgent("writer", model_client=replay(text("Done. TERMINATE")))
    team = SelectorGroupChat([agent_with_tool("support"), writer], model_client=replay("support", "writer"),
                             termination_condition=TextMentionTermination("TERMINATE"))
    asyncio.run(team.run(task="Where is A100?"))
    swarm_env, selector_env = check(envelopes)
    assert "delegated_by=triage" in swarm_env["evaluation_context"]
    lines = selector_env["evaluation_context"].splitlines()
    assert lines[0] == "workflow SelectorGroupChat" and lines[1].startswith("  model scripted-1")
    assert "  agent support" in lines and "  agent writer" in lines


def test_e2_paused_autogen_run_does_not_leak_its_state(instrumented: Any, envelopes: list) -> None:
    """E-2 in AutoGen: a Swarm ended by a handoff to the user folds to ``status: paused``; its ``public_output``
    is never the team's message state (the user's task in it): null, or assistant text."""
    from autogen_agentchat.conditions import HandoffTermination

    triage = AssistantAgent("triage", model_client=replay(call("transfer_to_user", {}, "h1")), handoffs=["user"])
    team = Swarm([triage], termination_condition=HandoffTermination(target="user"))
    asyncio.run(team.run(task="I want a refund for SECRET-ORDER-9"))
    [env] = check(envelopes)
    assert env["status"] == "paused"
    assert env["public_output"] is None or "SECRET-ORDER-9" not in env["public_output"]
