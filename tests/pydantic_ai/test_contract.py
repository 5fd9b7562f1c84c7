"""The cross-cutting cases X-1 … X-7 (``tests/contract/kit.py``) for PydanticAI."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent

from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor
from otel_agents.instrumentors.pydantic_ai import _convert
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SpanSnapshot

from .agents import Deps, LookupFailed, lookup_agent


class PydanticAIScenario(Scenario):
    """``lookup_agent``: a FunctionModel that calls the ``lookup`` tool once, then answers with its result."""

    instrumentor_cls = PydanticAIInstrumentor
    streams_model = True  # its consumed streaming run streams the model

    def __init__(self) -> None:
        super().__init__()
        self.agent = lookup_agent()

    def _deps(self, marker: str, tag: str, fail: bool = False) -> Deps:
        return Deps(marker=marker, tag=tag, fail=fail, probe=self.probe, result=self.result)

    def run(self, marker: str = "", tag: str = "") -> Any:
        return self.agent.run_sync(f"Where is order {marker}?", deps=self._deps(marker, tag)).output

    def run_unwinding(self) -> Any:
        """PydanticAI awaits an async tool on its loop (a sync one runs in a worker thread)."""
        return lookup_agent(async_tool=True).run_sync("Where is order ?", deps=self._deps("", "")).output

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        return (await self.agent.run(f"Where is order {marker}?", deps=self._deps(marker, tag))).output

    def run_failing(self) -> None:
        self.agent.run_sync("Where is my order?", deps=self._deps("", "", fail=True))

    def run_stream(self, consume: bool) -> None:
        with self.agent.run_stream_sync("Where is my order?", deps=self._deps("", "")) as result:
            chunks = iter(result.stream_text(delta=True, debounce_by=None))
            if consume:
                list(chunks)
            else:
                next(chunks)

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(usage: Any) -> Any:
            raise AttributeError("RequestUsage has no attribute 'input_tokens'")

        monkeypatch.setattr(_convert, "model_usage", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return Agent, "iter"

    def open_entries(self, instrumentor: Any) -> int:
        return instrumentor.open_runs()

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        kinds = [s.semantic_kind for s in spans]
        assert kinds.count("agent") == 1 and kinds.count("tool") == 1, kinds


class TestPydanticAIContract(ContractSuite):
    scenario_cls = PydanticAIScenario

    def test_x5_users_exception_passes_unchanged(self, scenario: PydanticAIScenario, instrumented: Any) -> None:
        """X-5 corollary: the user's own exception reaches them unchanged."""
        with pytest.raises(LookupFailed):
            scenario.run_failing()
