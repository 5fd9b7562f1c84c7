"""Issue 35: an agent failing with an exception whose ``__str__`` raises gets the agent's error answer, not
``-32603 internal error: RuntimeError`` with a server traceback."""

from __future__ import annotations

from tests.serve.test_server import AGENTS, rpc, run_stdio


def test_issue35_unprintable_agent_error_is_the_agents_error() -> None:
    out = run_stdio(f"{AGENTS}:unprintable", [rpc("agent/step", {"input": "x"}, 1), rpc("agent/step", {"input": "y"}, 2)])
    for answer in out:
        error = answer["error"]
        assert error["code"] == -32000, error
        assert error["message"].startswith("agent raised _UnprintableError"), error
        assert error["data"]["type"] == "_UnprintableError" and len(error["data"]["trace_id"]) == 32
