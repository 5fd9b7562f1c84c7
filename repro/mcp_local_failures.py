"""MCP: a tools/call the client session itself fails (its read timeout; the server's connection closing) is
recorded as if the server had answered with a JSON-RPC error: rpc.response.status_code = the SDK's local code
(408 / -32001 for a timeout, -32000 for a closed connection), though no response came."""
import asyncio, datetime, sys
from _common import provider, exporter
from otel_agents.instrumentors.mcp import MCPInstrumentor
MCPInstrumentor().instrument(tracer_provider=provider)
from tests.mcp.harness import in_process_client, MCP2, IN_PROCESS_MODES
from tests.mcp.server_app import server_class
server = server_class()("orders", log_level="WARNING")
@server.tool()
async def slow() -> str:
    """Slow."""
    await asyncio.sleep(0.5)
    return "ok"
async def main(mode):
    async with in_process_client(server, mode) as s:
        try:
            await s.call_tool("slow", {}, read_timeout_seconds=0.1 if MCP2 else datetime.timedelta(seconds=0.1))
        except Exception as e:
            print(mode, "raised", type(e).__name__, e, "context:", type(e.__context__).__name__)
        await asyncio.sleep(0.6)
for mode in IN_PROCESS_MODES:
    asyncio.run(main(mode))
    for s in exporter.get_finished_spans():
        if s.kind.name == "CLIENT":
            print(mode, s.name, s.status.status_code.name, {k: v for k, v in s.attributes.items() if "rpc" in k or "error" in k})
    exporter.clear()
