"""The MCP tool server of the tests (the SDK's ``FastMCP``; ``MCPServer`` in mcp 2.x), also run as a child process.

Tools: ``lookup_order`` (its body opens an application span ``db.query`` carrying the
``user.id`` baggage it received) and ``check_refund_policy`` (the customer-support example's),
``refund`` (raises: the SDK answers ``isError``), ``login``
(a password argument, for redaction), ``relay_lookup`` (asks the MCP server at ``MCP_TEST_RELAY_URL``,
Streamable HTTP, its ``lookup_order``: a chain of MCP servers). A prompt ``greeting`` and a resource
``orders://{id}``.

As a process: ``python server_app.py stdio`` or ``python server_app.py http PORT``; its spans
go to the OTLP/JSON file named by ``MCP_TEST_SPANS`` (our ``OTLPJsonFileExporter``), and it is
instrumented unless ``MCP_TEST_INSTRUMENT=0``. The content switch is the usual environment variable.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from opentelemetry import baggage, trace
from opentelemetry.sdk.trace import TracerProvider

_EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "customer_support")
sys.path.insert(0, os.path.abspath(_EXAMPLE))
import common  # noqa: E402  (the customer-support example's tools: the agents' brain reads their results)


def server_class() -> Any:
    """The SDK's high-level server: ``FastMCP`` (mcp 1.x), renamed ``MCPServer`` in 2.x."""
    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer

        return MCPServer
    return FastMCP


def build(tracer: trace.Tracer, **settings: Any) -> Any:
    """The server ``orders``; tool bodies open their spans with ``tracer``."""
    server = server_class()("orders", **settings)

    @server.tool()
    def lookup_order(order_id: str) -> str:
        """Look up an order by id."""
        with tracer.start_as_current_span("db.query") as span:
            span.set_attribute("baggage.user.id", str(baggage.get_baggage("user.id")))
            return common.lookup_order(order_id)

    @server.tool()
    def check_refund_policy(order_id: str) -> str:
        """Check whether an order can be refunded."""
        return common.check_refund_policy(order_id)

    @server.tool()
    def refund(order_id: str) -> str:
        """Refund an order."""
        raise ValueError("refund service down")

    @server.tool()
    def login(user: str, password: str) -> str:
        """Log in."""
        return f"welcome {user}"

    @server.tool()
    async def relay_lookup(order_id: str) -> str:
        """Look up an order by asking the orders server behind this one."""
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async with streamable_http_client(os.environ["MCP_TEST_RELAY_URL"]) as streams:
            async with ClientSession(*streams[:2]) as session:
                await session.initialize()
                result = await session.call_tool("lookup_order", {"order_id": order_id})
        return result.content[0].text

    @server.prompt()
    def greeting(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    @server.resource("orders://{order_id}")
    def order_resource(order_id: str) -> str:
        """One order as JSON."""
        return json.dumps(common.ORDERS.get(order_id, {}))

    return server


def main() -> None:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from otel_agents.exporters.file import OTLPJsonFileExporter
    from otel_agents.instrumentors.mcp import MCPInstrumentor

    provider = TracerProvider(resource=Resource.create({"service.name": "orders-mcp-server"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(os.environ["MCP_TEST_SPANS"])))
    if os.environ.get("MCP_TEST_INSTRUMENT", "1") == "1":
        MCPInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("tests.mcp.server")
    if sys.argv[1] == "http":
        address = {"host": "127.0.0.1", "port": int(sys.argv[2])}
        if server_class().__name__ == "FastMCP":  # 1.x: address in the settings; 2.x: in run()
            build(tracer, **address, log_level="WARNING").run("streamable-http")
        else:
            build(tracer, log_level="WARNING").run("streamable-http", **address)
    else:
        build(tracer, log_level="WARNING").run("stdio")


if __name__ == "__main__":
    main()
