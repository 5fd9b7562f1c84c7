"""The cross-cutting cases X-1 … X-7 (``tests/contract/kit.py``) for AutoGen AgentChat."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_core.tools import BaseTool

from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
from otel_agents.instrumentors.autogen_agentchat import _models
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SpanSnapshot

from .fakes import ScriptedClient, tool_then_answer


class AutoGenScenario(Scenario):
    """An AssistantAgent over :class:`ScriptedClient` that calls ``lookup`` once (which probes), then answers
    with its result (``reflect_on_tool_use``)."""

    instrumentor_cls = AutoGenAgentChatInstrumentor
    hangs_on = (StopIteration, asyncio.CancelledError)  # AgentChat's runtime waits forever on either

    def _agent(self, marker: str, tag: str, fail: bool = False, async_tool: bool = False) -> AssistantAgent:
        probe = self.probe

        def lookup(order_id: str) -> str:
            """Look up an order."""
            probe(tag)
            return self.result(f"order {order_id} {marker} shipped")

        async def alookup(order_id: str) -> str:
            """Look up an order."""
            return lookup(order_id)

        alookup.__name__ = "lookup"

        client = ScriptedClient(tool_then_answer("lookup", {"order_id": "A100"}, answer="Done:"),
                                error=ValueError("provider down") if fail else None)
        return AssistantAgent("Support", model_client=client, tools=[alookup if async_tool else lookup],
                              reflect_on_tool_use=True,
                              description=f"Helps with {marker}" if marker else "Helps with orders")

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        result = await self._agent(marker, tag).run(task=f"Where is order {marker}?")
        return result.messages[-1].content

    def run(self, marker: str = "", tag: str = "") -> Any:
        return asyncio.run(self.arun(marker, tag))

    def run_unwinding(self) -> Any:
        """AgentChat awaits an async tool on its loop (a sync one runs in the loop's thread pool)."""
        return asyncio.run(self._agent("", "", async_tool=True).run(task="Where is order A100?"))

    def run_failing(self) -> None:
        asyncio.run(self._agent("", "", fail=True).run(task="Where is my order?"))

    def run_stream(self, consume: bool) -> None:
        async def main() -> None:
            stream = self._agent("", "").run_stream(task="Where is my order?")
            if consume:
                async for _ in stream:
                    pass
            else:
                await stream.__anext__()
                del stream

        asyncio.run(main())

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(result: Any) -> Any:
            raise AttributeError("CreateResult has no attribute 'usage'")

        monkeypatch.setattr(_models, "usage_of", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return BaseTool, "run_json"

    def open_entries(self, instrumentor: Any) -> int:
        return instrumentor.open_runs()

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        kinds = [s.semantic_kind for s in spans]
        assert kinds.count("agent") == 1 and kinds.count("tool") == 1 and kinds.count("model") == 2, kinds


class TestAutoGenContract(ContractSuite):
    scenario_cls = AutoGenScenario
