"""MCP: a tool that elicits input from the client (elicitation/create) and logs to it, list_tools with
pagination from a low-level server."""
import asyncio
from _common import provider, show, exporter
from otel_agents.instrumentors.mcp import MCPInstrumentor
MCPInstrumentor().instrument(tracer_provider=provider)
from tests.mcp.harness import in_process_client
from mcp.server.fastmcp import FastMCP, Context
from mcp import types
import pydantic
server = FastMCP("orders", log_level="WARNING")
class Confirm(pydantic.BaseModel):
    ok: bool
@server.tool()
async def refund(order_id: str, ctx: Context) -> str:
    """refund"""
    await ctx.info("asking")
    r = await ctx.elicit("Confirm refund?", Confirm)
    return f"{r.action} {getattr(r, 'data', None)}"
async def elicit_cb(context, params):
    return types.ElicitResult(action="accept", content={"ok": True})
async def log_cb(params): print("log", params.data)
async def main():
    async with in_process_client(server, elicitation_callback=elicit_cb, logging_callback=log_cb) as s:
        r = await s.call_tool("refund", {"order_id": "A1"})
        print("result", r.content[0].text, r.isError)
    show("elicitation")
asyncio.run(main())

from mcp.server.lowlevel import Server
from mcp.shared.memory import create_connected_server_and_client_session
low = Server("paged")
@low.list_tools()
async def lt(req: types.ListToolsRequest) -> types.ListToolsResult:
    cursor = req.params.cursor if req.params else None
    if cursor is None:
        return types.ListToolsResult(tools=[types.Tool(name="a", inputSchema={"type": "object"})], nextCursor="p2")
    return types.ListToolsResult(tools=[types.Tool(name="b", inputSchema={"type": "object"})])
async def paged():
    async with create_connected_server_and_client_session(low) as s:
        r1 = await s.list_tools()
        r2 = await s.list_tools(cursor=r1.nextCursor)
        print([t.name for t in r1.tools], [t.name for t in r2.tools])
    show("paged list_tools")
asyncio.run(paged())
