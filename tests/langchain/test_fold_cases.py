"""What the ECP envelope of a LangChain/LangGraph run says about failures and pauses
(issue 17: cases E-1 and E-2 in LangChain).

The envelopes come from the live folding processor on the test's provider; each passes
ecp-runtime's validation and our schema.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import interrupt

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
