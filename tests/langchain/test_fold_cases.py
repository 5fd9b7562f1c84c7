"""What the ECP envelope of a LangChain/LangGraph run says about failures and pauses
(issue 17: cases E-1 and E-2 in LangChain; ``Command.PARENT`` handoffs as delegations).

The envelopes come from the live folding processor on the test's provider; each passes
ecp-runtime's validation and our schema.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from tests.exporters.conftest import check
from tests.langchain.fakes import ToolCallingChatModel, build_agent_graph


def _inventory(_: Any) -> Any:
    raise ValueError("inventory service down")


def test_e1_failing_lcel_sequence_says_it_failed(instrumentor: Any, envelopes: list) -> None:
    """E-1 in LangChain: an LCEL sequence of chains only, whose second step raises. The
    envelope names the failed step and the failed run root, with the exception."""
    chain = RunnableLambda(lambda q: q, name="parse") | RunnableLambda(_inventory, name="inventory")
    with pytest.raises(ValueError):
        chain.invoke("order A100")
    [env] = check(envelopes)
    assert env["status"] == "done" and env["public_output"] is None
    lines = env["evaluation_context"].splitlines()
    assert lines == ["error chain inventory: ValueError: inventory service down",
                     "error chain RunnableSequence: ValueError: inventory service down"]
    assert env["metrics"]["errors"] == 2 and env["metrics"]["steps"] == 0


def test_e2_paused_langgraph_run_does_not_leak_its_state(instrumentor: Any, envelopes: list) -> None:
    """E-2: an agent interrupted by ``interrupt()`` inside a tool folds to ``paused`` with a null
    ``public_output`` (the returned state holds the user's prompt, not an answer)."""

    @tool
    def transfer(city: str) -> str:
        """Needs approval."""
        return interrupt(f"approve {city}?")

    graph = build_agent_graph(ToolCallingChatModel(tool="transfer"), [transfer], name="bank",
                              checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("Move my money to Paris")]}, {"configurable": {"thread_id": "t1"}})
    [env] = check(envelopes)
    assert env["status"] == "paused"
    assert env["public_output"] is None
    assert "paused tool transfer" in env["evaluation_context"]
    assert env["metrics"]["errors"] == 0


@tool
def transfer_to_billing(reason: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Hand the conversation over to billing."""
    return Command(goto="billing", graph=Command.PARENT,
                   update={"messages": [ToolMessage("Transferred to billing", tool_call_id=tool_call_id)]})


def test_parent_command_handoff_is_a_delegation(instrumentor: Any, envelopes: list) -> None:
    """Issue 17: a LangGraph supervisor whose ``triage`` agent hands off with
    ``Command(goto="billing", graph=Command.PARENT)`` folds to a delegation tree: ``billing`` is
    ``delegated_by`` triage (not by the enclosing graph), in ``agents`` and in the evidence."""
    triage = build_agent_graph(ToolCallingChatModel(tool="transfer_to_billing", argument="reason"),
                               [transfer_to_billing], name="triage")
    billing = build_agent_graph(ToolCallingChatModel(tool=None, answer="Refund issued"), [], name="billing")
    graph = StateGraph(MessagesState)
    graph.add_node("triage", triage, destinations=("billing",))
    graph.add_node("billing", billing)
    graph.add_edge(START, "triage")
    graph.add_edge("billing", END)
    result = graph.compile(name="support").invoke({"messages": [HumanMessage("refund order A100")]})
    assert result["messages"][-1].content == "It is Transferred to billing"  # billing answered
    [env] = check(envelopes)
    agents = {a["name"]: a for a in env["agents"]}
    assert agents["support"]["parent"] is None
    assert agents["triage"]["parent"] == "support"
    assert agents["billing"]["parent"] == "triage"
    assert agents["billing"]["parent_span_id"] == agents["triage"]["span_id"]
    lines = env["evaluation_context"].splitlines()
    assert "  agent triage delegated_by=support" in lines
    assert "  agent billing delegated_by=triage" in lines
    assert env["metrics"]["errors"] == 0 and env["status"] == "done"

