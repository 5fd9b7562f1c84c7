"""MCP cells: a FastMCP server in the same process (the SDK's in-memory transport), its ``get_weather`` tool
answering from the matrix's script, called by ``ClientSession.call_tool``. No model: the client's tool call
is the run (its span is ours when called bare), the server's ``tools/call`` span its child."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session

from otel_agents.instrumentors.mcp import MCPInstrumentor
from tests.matrix.truth import CITY, TOOL, Truth

INSTRUMENTOR = MCPInstrumentor


def _server(truth: Truth) -> FastMCP:
    server = FastMCP("weather")

    @server.tool(name=TOOL)
    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    return server


async def _call(truth: Truth) -> Any:
    async with create_connected_server_and_client_session(_server(truth)._mcp_server) as session:
        result = await session.call_tool(TOOL, {"city": CITY})
    if result.isError:
        truth.error_output = result.content[0].text
    else:
        truth.output = json.dumps(result.structuredContent, separators=(",", ":"))
    return (result.isError, [getattr(c, "text", None) for c in result.content])


ENTRIES = {
    "ClientSession.call_tool": lambda t: (lambda: _call(t), lambda r: r),
}
