"""The cross-cutting cases X-1 … X-7 (``tests/contract/kit.py``) for Agno."""

from __future__ import annotations

from typing import Any

import pytest
from agno.agent import Agent

from otel_agents.instrumentors.agno import AgnoInstrumentor
from otel_agents.instrumentors.agno import _convert
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SpanSnapshot

from .fakes import Reply, ScriptedModel, tool_results


class AgnoRunError(Exception):
    """What the scenario raises when Agno reports a failed run (Agno returns ``status=error``, it does not raise)."""


class AgnoScenario(Scenario):
    """An agent over :class:`ScriptedModel` that calls ``lookup`` once (which probes), then answers with its result."""

    instrumentor_cls = AgnoInstrumentor
    streams_model = True  # its consumed streaming run streams the model
    ids = ("session", "user")

    def _agent(self, marker: str, tag: str, fail: bool = False) -> Agent:
        probe = self.probe

        def lookup(order_id: str) -> str:
            """Look up an order."""
            probe(tag)
            return self.result(f"order {order_id} {marker} shipped")

        def script(messages: list) -> Reply:
            if fail:
                return Reply(error=ValueError("provider down"))
            results = tool_results(messages)
            if not results:
                return Reply(tool_calls=[("lookup", {"order_id": "A100"})])
            return Reply(text=f"Done: {results[-1].content}")

        return Agent(name="Support", model=ScriptedModel(script=script), tools=[lookup], telemetry=False,
                     description=f"Helps with {marker}" if marker else None)

    def run(self, marker: str = "", tag: str = "") -> Any:
        return self._agent(marker, tag).run(f"Where is order {marker}?").content

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        return (await self._agent(marker, tag).arun(f"Where is order {marker}?")).content

    def run_with_ids(self, session: Any = None, user: Any = None) -> Any:
        return self._agent("", "").run("Where is order?", session_id=session, user_id=user).content

    def run_failing(self) -> None:
        result = self._agent("", "", fail=True).run("Where is my order?")
        if result.status.value.lower() == "error":
            raise AgnoRunError(result.content)

    def run_stream(self, consume: bool) -> None:
        stream = self._agent("", "").run("Where is my order?", stream=True)
        if consume:
            for _ in stream:
                pass
        else:
            next(iter(stream))
            del stream

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(metrics: Any) -> Any:
            raise AttributeError("MessageMetrics has no attribute 'input_tokens'")

        monkeypatch.setattr(_convert, "usage", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return Agent, "run"

    def open_entries(self, instrumentor: Any) -> int:
        return instrumentor.open_runs()

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        kinds = [s.semantic_kind for s in spans]
        assert kinds.count("agent") == 1 and kinds.count("tool") == 1 and kinds.count("model") == 2, kinds


class TestAgnoContract(ContractSuite):
    scenario_cls = AgnoScenario
