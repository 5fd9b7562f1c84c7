import asyncio, gc, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.claude_agent_sdk import ClaudeAgentSDKInstrumentor
ClaudeAgentSDKInstrumentor().instrument(tracer_provider=provider)
import claude_agent_sdk as sdk
from tests.claude_agent_sdk.conftest import in_process, support_server

async def main():
    # 1. streaming-input prompt (async iterable) with query()
    async def prompts():
        yield {"type": "user", "message": {"role": "user", "content": "Where is order A100?"}, "parent_tool_use_id": None, "session_id": "s"}
    ms = [m async for m in sdk.query(prompt=prompts(), options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process())]
    print([type(m).__name__ for m in ms])
    check(exporter, opens, "async iterable prompt")
    # 2. can_use_tool allowing and PostToolUse hook
    async def allow(name, inp, ctx):
        return sdk.PermissionResultAllow()
    async def post(inp, tid, ctx):
        return {}
    opts = sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}, can_use_tool=allow,
                                  hooks={"PostToolUse": [sdk.HookMatcher(matcher=None, hooks=[post])]})
    async def one():
        yield {"type": "user", "message": {"role": "user", "content": "Where is order A100?"}, "parent_tool_use_id": None, "session_id": "s"}
    ms = [m async for m in sdk.query(prompt=one(), options=opts, transport=in_process("--permission-prompt-tool", "stdio"))]
    print([type(m).__name__ for m in ms])
    check(exporter, opens, "can_use_tool + PostToolUse")
    # 3. client: exception raised in the user's code inside async with, mid-turn
    try:
        async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process()) as c:
            await c.query("Where is order A100?")
            async for m in c.receive_response():
                if isinstance(m, sdk.AssistantMessage):
                    raise KeyError("user bug")
    except KeyError:
        pass
    check(exporter, opens, "user exception inside client turn")
    # 4. two turns in one client, concurrent with a query()
    async def cli():
        async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process()) as c:
            for q in ("Where is order A100?", "Where is order A200?"):
                await c.query(q)
                async for m in c.receive_response(): pass
    async def qq():
        return [m async for m in sdk.query(prompt="Where is order A300?", options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process())]
    await asyncio.gather(cli(), qq())
    check(exporter, opens, "client + query concurrently")
asyncio.run(main())
