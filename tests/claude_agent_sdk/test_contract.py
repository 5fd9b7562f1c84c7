"""The cross-cutting cases X-1 … X-10 (``tests/contract/kit.py``) for the Claude Agent SDK.

The scenario runs the real SDK over the in-process fake CLI (:class:`.fake_cli.InProcessTransport`): one
``lookup_order`` SDK MCP tool call (whose handler probes), then the answer. The real subprocess transport is
exercised by ``test_cases.py``; here a run costs a few milliseconds.
"""

from __future__ import annotations

import asyncio
from typing import Any

import claude_agent_sdk as sdk
import pytest
from claude_agent_sdk._internal.client import InternalClient

from otel_agents.instrumentors.claude_agent_sdk import ClaudeAgentSDKInstrumentor
from otel_agents.instrumentors.claude_agent_sdk import _tracker
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SpanSnapshot

from .conftest import in_process


class _FailingTransport(sdk.Transport):  # type: ignore[misc]
    """The user's transport, which cannot reach its CLI."""

    async def connect(self) -> None:
        raise ConnectionError("the user's transport is down")

    async def write(self, data: str) -> None: ...

    def read_messages(self) -> Any:
        raise ConnectionError("not connected")

    async def close(self) -> None: ...

    def is_ready(self) -> bool:
        return False

    async def end_input(self) -> None: ...


class ClaudeScenario(Scenario):
    instrumentor_cls = ClaudeAgentSDKInstrumentor

    def _server(self, marker: str, tag: str) -> dict:
        probe, result = self.probe, self.result

        @sdk.tool("lookup_order", "Look up an order", {"order_id": str})
        async def lookup_order(args: dict) -> Any:
            probe(tag)
            return result({"content": [{"type": "text", "text": f"order {args['order_id']} {marker} shipped"}]})

        return sdk.create_sdk_mcp_server("support", tools=[lookup_order])

    def _query(self, marker: str, tag: str) -> Any:
        options = sdk.ClaudeAgentOptions(mcp_servers={"support": self._server(marker, tag)})
        return sdk.query(prompt=f"Where is order A100? {marker}", options=options, transport=in_process())

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        answer = None
        async for message in self._query(marker, tag):
            if isinstance(message, sdk.ResultMessage):
                answer = message.result
        return answer

    def run(self, marker: str = "", tag: str = "") -> Any:
        return asyncio.run(self.arun(marker, tag))

    def run_failing(self) -> None:
        async def main() -> None:
            async for _ in sdk.query(prompt="Where is order A100?", transport=_FailingTransport()):
                pass

        asyncio.run(main())

    def run_stream(self, consume: bool) -> None:
        async def main() -> None:
            stream = self._query("", "")
            if consume:
                async for _ in stream:
                    pass
            else:
                await stream.__anext__()
                await stream.aclose()

        asyncio.run(main())

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(block: Any) -> Any:
            raise KeyError("content")

        monkeypatch.setattr(_tracker, "block_parts", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return InternalClient, "process_query"

    def open_entries(self, instrumentor: Any) -> int:
        return instrumentor.open_runs()

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        kinds = sorted(s.semantic_kind for s in spans)
        assert kinds == ["agent", "model", "model", "tool"], kinds


class TestClaudeAgentSDKContract(ContractSuite):
    scenario_cls = ClaudeScenario
