import asyncio, gc, sys
sys.path.insert(0, ".")
from repro._common import setup, check
provider, exporter, opens = setup()
from otel_agents.instrumentors.claude_agent_sdk import ClaudeAgentSDKInstrumentor
ClaudeAgentSDKInstrumentor().instrument(tracer_provider=provider)
import claude_agent_sdk as sdk
from tests.claude_agent_sdk.conftest import in_process, support_server, collect

async def main():
    # 1. query abandoned mid-stream (aclose after the first assistant message)
    q = sdk.query(prompt="Where is order A100?", options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process())
    async for m in q:
        if isinstance(m, sdk.AssistantMessage): break
    await q.aclose()
    await asyncio.sleep(0.1)
    check(exporter, opens, "query aclose after first assistant")
    # 2. client: receive_response abandoned (break) then next turn
    async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process()) as c:
        await c.query("Where is order A100?")
        async for m in c.receive_response():
            if isinstance(m, sdk.AssistantMessage): break
        await c.query("Where is order A200?")
        async for m in c.receive_response():
            pass
    check(exporter, opens, "client: first turn abandoned, second turn")
    # 3. hook raising
    async def bad_hook(inp, tool_use_id, ctx):
        raise RuntimeError("hook broke")
    opts = sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()},
                                  hooks={"PreToolUse": [sdk.HookMatcher(matcher=None, hooks=[bad_hook])]})
    try:
        ms = [m async for m in sdk.query(prompt="Where is order A100?", options=opts, transport=in_process())]
        print([type(m).__name__ for m in ms])
    except Exception as e:
        print("raised", type(e).__name__, e)
    check(exporter, opens, "hook raising")
    # 4. two clients gather
    async def one(q):
        async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process()) as c:
            await c.query(q)
            async for m in c.receive_response(): pass
            await c.query(q + " again")
            async for m in c.receive_response(): pass
    await asyncio.gather(one("Where is order A100?"), one("Where is order A200?"))
    check(exporter, opens, "two clients gather")
    # 5. tool raising
    try:
        ms = [m async for m in sdk.query(prompt="Where is order A100?", options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server(fail={"lookup_order"})}), transport=in_process())]
    except Exception as e:
        print("raised", type(e).__name__, e)
    check(exporter, opens, "tool raising")
    # 6. crash error result
    try:
        ms = [m async for m in sdk.query(prompt="crash please", options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}), transport=in_process(exit_status=1))]
    except Exception as e:
        print("raised", type(e).__name__, e)
    check(exporter, opens, "crash")
asyncio.run(main())
