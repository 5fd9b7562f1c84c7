"""The customer-support tools served over MCP: a small stdio server (the ``mcp`` SDK's ``FastMCP``, ``MCPServer`` in 2.x).

It serves the very functions of :mod:`common` (``lookup_order``, ``check_refund_policy``,
``issue_refund``) as MCP tools named ``support``; ``mcp_agent.py`` is the PydanticAI agent that
uses them over MCP. Run by hand: ``python examples/customer_support/mcp_server.py`` (it speaks
MCP on stdin/stdout).

Telemetry: when ``CUSTOMER_SUPPORT_MCP_TRACES`` names a file, the server is instrumented
(``otel_agents.configure``: the MCP instrumentor) and writes its spans there as OTLP/JSON lines;
each ``tools/call`` span is then a child of the agent's tool span, through ``params._meta``
(``otel-agents fold`` the agent's and the server's files together to see one tree). Otherwise, with
``OTEL_AGENTS_EXPORTERS`` set (``mcp_agent.py`` run as a script passes its environment on), its spans
go where that says, as the agent's do (``common.configure_tracing``): one trace in the backend.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from common import TOOLS, configure_tracing  # noqa: E402


def build():
    """The server ``support`` with the three tools: ``FastMCP`` in ``mcp`` 1.x, renamed ``MCPServer`` in 2.x."""
    try:
        from mcp.server.fastmcp import FastMCP as MCPServer
    except ImportError:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer

    server = MCPServer("support", log_level="WARNING")
    for fn in TOOLS:
        server.add_tool(fn)
    return server


if __name__ == "__main__":
    traces = os.environ.get("CUSTOMER_SUPPORT_MCP_TRACES")
    if traces:
        import otel_agents
        from otel_agents import presets

        otel_agents.configure(service_name="customer-support-mcp-server", exporters=[presets.file(traces)],
                              frameworks=["mcp"])
    elif os.environ.get("OTEL_AGENTS_EXPORTERS"):  # each span sent as it ends: the client may kill us at any time
        configure_tracing("mcp-server", frameworks=["mcp"], export_each_span=True)
    build().run("stdio")
