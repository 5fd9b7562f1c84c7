"""The customer-support agent in PydanticAI, using its tools over MCP.

The same agent as ``pydantic_ai_agent.py`` (same fake model, same brain), but its tools are not
Python functions of this process: they are the MCP tools of ``mcp_server.py``, started as a
child process over stdio and reached through PydanticAI's ``MCPToolset``. With otel-agents'
``mcp`` and ``pydantic_ai`` instrumentors on, each call is one ``tool`` span (PydanticAI's,
enriched with ``mcp.method.name``, ``jsonrpc.request.id`` and the server's name) and the trace
context travels to the server in ``params._meta``. Offline, no API key.

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/mcp_agent.py:agent --collect 0``:
the server process inherits the address of ``ecp serve``'s OTLP receiver, sends it its spans, and
each step's envelope holds both processes' spans (the server-side tool calls and what they did).
Set ``CUSTOMER_SUPPORT_MCP_TRACES`` to a file to have the server write its own spans there too.

The side-effect twin's e-mail is sent by the server (``check_refund_policy`` mails the customer, see
``mcp_server.py``): only a fold of both processes' spans (``--collect``) shows it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, configure_tracing, serve_as  # noqa: E402
from pydantic_ai_agent import SYSTEM_PROMPT, brain_model  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("mcp")

SERVER = os.path.join(_HERE, "mcp_server.py")


def build(faults: Any = None, *, mail_in_server: bool = False) -> Agent:
    """The agent with the MCP server's tools; ``faults`` (a plan) builds the faulty twin, ``mail_in_server``
    the side-effect twin (its server's ``check_refund_policy`` e-mails the customer)."""
    env = dict(os.environ, CUSTOMER_SUPPORT_MCP_MAIL="1") if mail_in_server else dict(os.environ)
    # A generous start-up time: the first run starts the server process, on a busy machine too.
    server = MCPToolset(StdioTransport(command=sys.executable, args=[SERVER], env=env), id="support",
                        init_timeout=60)
    return Agent(brain_model(faults), name="customer_support", instructions=SYSTEM_PROMPT, toolsets=[server])


_agent = build()
_faulty_agent = build(FAULT_PLANS["mcp"])
_side_effect_agent = build(mail_in_server=True)


async def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return (await _agent.run(user_input)).output


async def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return (await _faulty_agent.run(user_input)).output


async def side_effect_agent(user_input: str) -> str:
    """Answer one customer message correctly, while the MCP server e-mails the customer behind the chat's
    back on refund questions (the side-effect twin: the fault is only an HTTP call, made in the server process)."""
    return (await _side_effect_agent.run(user_input)).output


serve_as(_agent.name, agent, faulty_agent, side_effect_agent)

if __name__ == "__main__":
    import asyncio

    for q in sys.argv[1:] or ["Where is my order A100?"]:
        print(asyncio.run(agent(q)), "|", asyncio.run(faulty_agent(q)))
