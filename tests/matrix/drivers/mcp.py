"""MCP cells: a FastMCP server in the same process (the SDK's in-memory transport), its ``get_weather`` tool
answering from the matrix's script, called by ``ClientSession.call_tool``. No model: the client's tool call
is the run (its span is ours when called bare), the server's ``tools/call`` span its child."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import CreateMessageResult, SamplingMessage, TextContent

from otel_agents.instrumentors.mcp import MCPInstrumentor
from tests.matrix.truth import CITY, TOOL, Truth

INSTRUMENTOR = MCPInstrumentor


def _server(truth: Truth) -> FastMCP:
    server = FastMCP("weather")

    @server.tool(name=TOOL)
    async def get_weather(city: str, ctx: Context) -> str:
        """Get the weather for a city."""
        report = await truth.atool(city=city)
        if truth.ending != "sampling":
            return report
        # sampling: the tool asks the client's model to put its report in a sentence
        answer = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=report))], max_tokens=64)
        return answer.content.text

    return server


def _sampling_callback(truth: Truth) -> Any:
    """The client's model, as MCP sees it: no usage on the wire; ``endTurn`` is MCP's ``end_turn``."""
    async def answer(context: Any, params: Any) -> CreateMessageResult:
        call = truth.reply(has_tool_result=True)
        call.sent(usage=False, finish="end_turn")
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=call.turn.text),
                                   model="truth-model", stopReason="endTurn")
    return answer


async def _call(truth: Truth) -> Any:
    callback = _sampling_callback(truth) if truth.ending == "sampling" else None
    async with create_connected_server_and_client_session(_server(truth)._mcp_server,
                                                          sampling_callback=callback) as session:
        result = await session.call_tool(TOOL, {"city": CITY})
    if result.isError:
        truth.error_output = result.content[0].text
    else:
        truth.output = json.dumps(result.structuredContent, separators=(",", ":"))
    return (result.isError, [getattr(c, "text", None) for c in result.content])


ENTRIES = {
    "ClientSession.call_tool": lambda t: (lambda: _call(t), lambda r: r),
}
