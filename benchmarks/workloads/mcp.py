"""MCP: a client session to the customer-support tool server, in memory, calling its two tools.

The server is ``examples/customer_support/mcp_server.py``'s (``FastMCP`` with the three tools);
client and server run in this process over the ``mcp`` SDK's in-memory streams
(``create_connected_server_and_client_session``), so both sides' instrumentation runs and no
child process or socket adds noise. One run = one session (initialize, then ``tools/call``
``lookup_order`` and ``check_refund_policy``, the refund question's trajectory) in a fresh event loop.
"""

from __future__ import annotations

from typing import Any, Callable

from . import instrumentor_variant, restoring
from ._support import example, runner

NAME = "mcp"
FRAMEWORK_DISTS = ("mcp",)
PEERS = {
    "openinference": "openinference-instrumentation-mcp",
    "openllmetry": "opentelemetry-instrumentation-mcp",
}
# each variant's instrumentor, "module:Class" (tests/peers runs them side by side)
CLASSES = {
    "ours": "otel_agents.instrumentors.mcp:MCPInstrumentor",
    "openinference": "openinference.instrumentation.mcp:MCPInstrumentor",
    "openllmetry": "opentelemetry.instrumentation.mcp:McpInstrumentor",
}


def workload() -> Callable[[], Any]:
    from mcp.shared.memory import create_connected_server_and_client_session

    server = example("mcp_server").build()

    async def session() -> list[Any]:
        async with create_connected_server_and_client_session(server._mcp_server) as client:
            results = []
            for tool in ("lookup_order", "check_refund_policy"):
                result = await client.call_tool(tool, {"order_id": "B200"})
                if result.isError:
                    raise RuntimeError(f"{tool} failed: {result.content}")
                results.append(result.content)
            return results

    return runner(session)


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)
    if variant not in ("ours", "ours_no_content"):
        # Peers' uninstrument() leave patches behind here: OpenLLMetry 0.62.4 unwraps dotted paths its
        # `unwrap` resolves to nothing; OpenInference's openai package sets `OpenAI.request` on the
        # subclass, shadowing the base class's method any later instrumentation wraps. Put every
        # attribute back as it was before the peer was installed.
        return restoring(("mcp",), install_, instrumentor.uninstrument)
    return install_, instrumentor.uninstrument
