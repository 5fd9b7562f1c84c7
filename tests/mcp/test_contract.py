"""The cross-cutting cases X-1 … X-13 (``tests/contract/kit.py``) for MCP, on ``mcp`` 1.x and 2.x.

The kit's runs are many and concurrent, so client and server run in one process here (the
cross-process behaviour is ``test_mcp.py``'s). ``mcp`` 1.x: the SDK's ``ClientSession`` to a
``FastMCP`` server over its in-memory streams (``mcp.shared.memory``). ``mcp`` 2.x, which removed that
helper, has two in-process paths, each a suite here: ``mcp.Client(server)`` (the default ``auto`` mode:
the 2026 protocol's per-request envelope through a ``DirectDispatcher`` pair, no JSON-RPC framing) and
``mcp.Client(server, mode="legacy")`` (the ``initialize`` handshake and JSON-RPC over in-memory
streams, as stdio and Streamable HTTP do). An MCP client is called by an agent: the scenario's agent
span is opened by hand through the instrumentor's own span layer (the kit needs one above every tool span);
the tool span the kit probes in is the server's ``execute_tool lookup_order``, current while the tool runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from otel_agents.instrumentors.mcp import MCPInstrumentor
from otel_agents.instrumentors.mcp import _protocol
from otel_agents.semconv import Kind
from tests.contract.kit import ContractSuite, Scenario
from tests.mcp.harness import MCP2, in_process_client
from tests.mcp.server_app import server_class
from tests.spans import SpanSnapshot

pytestmark = pytest.mark.timeout(300)


class LookupFailed(Exception):
    """The user's own error: the MCP tool answered ``isError``."""


class MCPScenario(Scenario):
    """An agent calls ``lookup_order`` on the in-memory MCP server ``orders`` (client and server span)."""

    instrumentor_cls = MCPInstrumentor
    kinds = ("agent", "tool")
    streams = False  # MCP's client has no streaming entry point to abandon (a tool call is one request)

    def __init__(self) -> None:
        super().__init__()
        self.server = self._server()
        self.async_server = self._server(awaited=True)

    def _server(self, awaited: bool = False) -> Any:
        """The ``orders`` server; its ``lookup_order`` a coroutine function when ``awaited`` (see :meth:`run_unwinding`)."""
        scenario = self
        server = server_class()("orders", log_level="WARNING")

        def lookup_order(order_id: str, note: str = "", tag: str = "") -> Any:
            """Look up an order by id."""
            scenario.probe(tag)
            if order_id.startswith("fail"):
                raise LookupFailed(f"no order {order_id}")
            return scenario.result(f"{order_id} shipped {note}")

        if not awaited:
            server.tool()(lookup_order)
            return server

        @server.tool(name="lookup_order")
        async def lookup_order_async(order_id: str, note: str = "", tag: str = "") -> Any:
            """Look up an order by id."""
            return lookup_order(order_id, note, tag)

        return server

    mode = "auto"  # mcp 2.x: how ``mcp.Client`` connects to the in-process server (see the module docstring)

    async def _call(self, order_id: str, marker: str, tag: str, server: Any = None) -> Any:
        async with in_process_client(server or self.server, self.mode) as session:
            arguments = {"order_id": order_id, "note": marker, "tag": tag}
            telemetry = MCPInstrumentor().telemetry  # the running instrumentor's span layer (None: not instrumented)
            if telemetry is None:
                return await session.call_tool("lookup_order", arguments)
            with telemetry.span(Kind.AGENT, "orders-agent") as agent:
                agent.set_input(f"Where is order {order_id}? {marker}")
                return await session.call_tool("lookup_order", arguments)

    @staticmethod
    def _answer(result: Any) -> Any:
        if result.is_error if MCP2 else result.isError:  # the models' fields are snake_case in 2.x
            raise LookupFailed(result.content[0].text)
        return [c.model_dump() for c in result.content], result.structured_content if MCP2 else result.structuredContent

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        return self._answer(await self._call("A100", marker, tag))

    def run(self, marker: str = "", tag: str = "") -> Any:
        return asyncio.run(self.arun(marker, tag))

    def run_failing(self) -> None:
        self._answer(asyncio.run(self._call("fail-A100", "", "")))

    def run_unwinding(self) -> Any:
        """``mcp`` 2.x runs a sync tool in a worker thread (AnyIO's ``to_thread``), whose forked child never reaches
        the agent and tool spans on the loop's thread; a coroutine function tool is awaited on that thread."""
        return self._answer(asyncio.run(self._call("A100", "", "", self.async_server)))

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(result: Any) -> Any:
            raise AttributeError("CallToolResult has no attribute 'content'")

        monkeypatch.setattr(_protocol, "tool_result", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        from mcp.client.session import ClientSession

        return ClientSession, "call_tool"

    def open_entries(self, instrumentor: Any) -> int:
        # (the facts per session hold no span and live as long as the session does: weakly keyed)
        return instrumentor.open_runs()

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        tools = [s for s in spans if s.semantic_kind == "tool"]
        assert sorted(s.kind for s in tools) == ["CLIENT", "SERVER"], [(s.name, s.kind) for s in tools]
        client = next(s for s in tools if s.kind == "CLIENT")
        server = next(s for s in tools if s.kind == "SERVER")
        assert server.parent_id == client.span_id  # the context travelled in params._meta


class MCPLegacyScenario(MCPScenario):
    """mcp 2.x's ``Client(server, mode="legacy")``: the handshake and JSON-RPC over in-memory streams."""

    mode = "legacy"


class TestMCPContract(ContractSuite):
    scenario_cls = MCPScenario


@pytest.mark.skipif(not MCP2, reason="mcp 2.x's second in-process path (mcp 1.x has one: TestMCPContract)")
class TestMCPLegacyModeContract(ContractSuite):
    scenario_cls = MCPLegacyScenario
