"""An MCP stdio server that dies in the middle of a tools/call: does the client's span end, and does the caller
get its error (no hang)?"""
import asyncio, sys, os, tempfile, textwrap
from _common import provider, show
from otel_agents.instrumentors.mcp import MCPInstrumentor
MCPInstrumentor().instrument(tracer_provider=provider)
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SERVER = textwrap.dedent('''
    import os
    from mcp.server.fastmcp import FastMCP
    app = FastMCP("dying", log_level="WARNING")
    @app.tool()
    def die() -> str:
        """dies"""
        os._exit(3)
    app.run("stdio")
''')
path = os.path.join(tempfile.mkdtemp(), "dying.py"); open(path, "w").write(SERVER)

async def main():
    params = StdioServerParameters(command=sys.executable, args=[path])
    try:
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                try:
                    res = await asyncio.wait_for(s.call_tool("die", {}), 10)
                    print("result", res)
                except BaseException as e:
                    print("call raised", type(e).__name__, e)
                    raise
    except BaseException as e:
        print("session raised", type(e).__name__)
asyncio.run(main())
show("server died mid-call")
