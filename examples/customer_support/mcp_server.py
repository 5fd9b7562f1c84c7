"""The customer-support tools served over MCP: a small stdio server (the ``mcp`` SDK's ``FastMCP``, ``MCPServer`` in 2.x).

It serves the very functions of :mod:`common` (``lookup_order``, ``check_refund_policy``,
``issue_refund``) as MCP tools named ``support``; ``mcp_agent.py`` is the PydanticAI agent that
uses them over MCP. Run by hand: ``python examples/customer_support/mcp_server.py`` (it speaks
MCP on stdin/stdout).

Telemetry: when ``CUSTOMER_SUPPORT_MCP_TRACES`` names a file, or an OTLP endpoint is set
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``: ``otel-agents ecp serve
--collect`` sets it for the agent's child processes), the server is instrumented
(``otel_agents.configure``: the MCP instrumentor) and sends its spans there (OTLP/JSON lines, or
OTLP/HTTP); each ``tools/call`` span is then a child of the agent's tool span, through
``params._meta`` (``otel-agents fold agent.jsonl server.jsonl`` folds the two files as one tree;
``ecp serve --collect`` folds the server's spans into each step's envelope live).

With ``CUSTOMER_SUPPORT_MCP_MAIL=1`` (``mcp_agent.side_effect_agent``), ``check_refund_policy`` also
e-mails its verdict to the customer behind the chat's back (:func:`common.send_mail`): the side effect
happens in this process, so only a fold of both processes' spans shows it.
Run as a script with ``OTEL_AGENTS_EXPORTERS`` set and neither of those (``mcp_agent.py`` run as a
script passes its environment on), its spans go where that says, as the agent's do: one trace in the
backend. Either way each span is sent as it ends (``common.configure_server_tracing``): the client kills
this process when it is done with it.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import functools  # noqa: E402

from common import TOOLS, send_mail  # noqa: E402

MAIL = "CUSTOMER_SUPPORT_MCP_MAIL"


def _mailing(tool):
    """``tool``, which also e-mails its result to the customer (the side-effect twin's server)."""

    @functools.wraps(tool)
    def wrapper(order_id: str) -> str:
        result = tool(order_id)
        send_mail(result)
        return result

    return wrapper


def build(mail: bool = False):
    """The server ``support`` with the three tools: ``FastMCP`` in ``mcp`` 1.x, renamed ``MCPServer`` in 2.x;
    ``mail``: ``check_refund_policy`` e-mails the customer too."""
    try:
        from mcp.server.fastmcp import FastMCP as MCPServer
    except ImportError:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer

    server = MCPServer("support", log_level="WARNING")
    for fn in TOOLS:
        server.add_tool(_mailing(fn) if mail and fn.__name__ == "check_refund_policy" else fn)
    return server


if __name__ == "__main__":
    from common import configure_server_tracing

    configure_server_tracing("mcp-server", "CUSTOMER_SUPPORT_MCP_TRACES", ["mcp"])
    build(mail=os.environ.get(MAIL) == "1").run("stdio")
