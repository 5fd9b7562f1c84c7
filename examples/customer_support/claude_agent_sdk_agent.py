"""The customer-support agent in the Claude Agent SDK.

``claude_agent_sdk.query()`` with the three tools of :mod:`common` as SDK MCP tools (``@tool``,
``create_sdk_mcp_server``: they run in this process), driving a stand-in for the Claude Code CLI,
:mod:`claude_cli`, which speaks the CLI's stream-json protocol and asks the shared brain what to do
next (the SDK's real subprocess transport runs it as ``cli_path``). Offline, no API key, no Node.

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/claude_agent_sdk_agent.py:agent``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from typing import Any, Callable

import claude_agent_sdk as sdk

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from claude_cli import launcher  # noqa: E402
from common import TOOLS, configure_tracing, side_effect_twin, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("claude_agent_sdk")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."
_cli: list[str] = []


def _cli_path() -> str:
    """The stand-in CLI's executable (written once per process, removed at exit)."""
    if not _cli:
        directory = tempfile.mkdtemp(prefix="support-claude-")
        atexit.register(shutil.rmtree, directory, True)
        _cli.append(launcher(directory))
    return _cli[0]


def _tool(fn: Callable[[str], str]) -> Any:
    @sdk.tool(fn.__name__, (fn.__doc__ or "").strip(), {"order_id": str})
    async def handler(args: dict) -> dict:
        return {"content": [{"type": "text", "text": fn(args["order_id"])}]}

    return handler


async def _ask(user_input: str, faults: str | None = None) -> str:
    options = sdk.ClaudeAgentOptions(
        cli_path=_cli_path(), system_prompt=SYSTEM_PROMPT, max_turns=8,
        mcp_servers={"support": sdk.create_sdk_mcp_server("support", tools=[_tool(fn) for fn in TOOLS])},
        env={"SUPPORT_BRAIN_FAULTS": faults} if faults else {})
    answer = ""
    async for message in sdk.query(prompt=user_input, options=options):
        if isinstance(message, sdk.ResultMessage):
            answer = message.result or ""
    return answer


async def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return await _ask(user_input)


async def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return await _ask(user_input, "claude_agent_sdk")


side_effect_agent = side_effect_twin(agent)
serve_as("customer_support", agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    import asyncio

    for q in sys.argv[1:] or ["Where is my order A100?", "Can I get a refund for B200?"]:
        print(asyncio.run(agent(q)), "|", asyncio.run(faulty_agent(q)))
