"""MCP in process (mcp 1.x): read_timeout_seconds timing out, progress notifications, a tool raising,
many sessions at once, list_tools pagination."""
import asyncio, datetime, sys
from _common import provider, show, exporter
from otel_agents.instrumentors.mcp import MCPInstrumentor
MCPInstrumentor().instrument(tracer_provider=provider)
from tests.mcp.harness import in_process_client
from mcp.server.fastmcp import FastMCP, Context
from opentelemetry import trace

server = FastMCP("orders", log_level="WARNING")

@server.tool()
async def slow() -> str:
    """Slow."""
    await asyncio.sleep(1)
    return "ok"

@server.tool()
async def progress(ctx: Context) -> str:
    """reports progress"""
    for i in range(3):
        await ctx.report_progress(i, 3, f"step {i}")
    return "done"

@server.tool()
def boom() -> str:
    """raises"""
    raise RuntimeError("kaput")

@server.tool()
def lookup(order_id: str) -> str:
    """lookup"""
    return f"{order_id} shipped"

async def main():
    async with in_process_client(server) as s:
        try:
            await s.call_tool("slow", {}, read_timeout_seconds=datetime.timedelta(seconds=0.1))
        except Exception as e:
            print("timeout raised", type(e).__name__, e)
        await asyncio.sleep(1.2)
        show("read_timeout_seconds")
        seen = []
        async def cb(p, total, msg): seen.append((p, total, msg))
        r = await s.call_tool("progress", {}, progress_callback=cb)
        print("progress seen", seen)
        show("progress")
        r = await s.call_tool("boom", {})
        print("boom", r.isError)
        show("boom")
        print("current", trace.get_current_span())
    async def one(i):
        async with in_process_client(server) as s:
            await s.call_tool("lookup", {"order_id": f"A{i}"})
    await asyncio.gather(*[one(i) for i in range(5)])
    spans = exporter.get_finished_spans()
    byid = {x.context.span_id: x for x in spans}
    for x in spans:
        if x.kind.name == "SERVER" and "lookup" in x.name:
            p = byid.get(x.parent.span_id) if x.parent else None
            print("server", x.attributes.get("gen_ai.tool.call.arguments") or x.attributes.get("input.value"), "<- client",
                  p.attributes.get("gen_ai.tool.call.arguments") or p.attributes.get("input.value") if p else None)
    exporter.clear()
asyncio.run(main())
