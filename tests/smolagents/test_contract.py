"""The cross-cutting cases X-1 … X-7 (``tests/contract/kit.py``) for smolagents."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from smolagents.agents import MultiStepAgent

from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor
from otel_agents.instrumentors.smolagents import _convert
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SpanSnapshot

from .fakes import LookupFailed, ScriptedModel, StreamingModel, make_lookup, tool_calling_agent


def _script(marker: str, order: str = "A100") -> list:
    return [[("lookup_order", {"order_id": order})], [("final_answer", {"answer": f"done {marker}"})]]


class SmolagentsScenario(Scenario):
    """A ``ToolCallingAgent`` over a scripted model: ``lookup_order`` once, then ``final_answer``."""

    instrumentor_cls = SmolagentsInstrumentor
    streams_model = True  # its consumed streaming run streams the model
    cancel_stops_run = False  # arun is the sync run in a worker thread: cancelling its awaiter does not stop it

    def _agent(self, marker: str, tag: str, order: str = "A100", stream: bool = False) -> Any:
        model = (StreamingModel if stream else ScriptedModel)(_script(marker, order))
        return tool_calling_agent(model, tools=[make_lookup(probe=lambda _: self.probe(tag), marker=marker, result=self.result)],
                                  stream_outputs=stream)

    def run(self, marker: str = "", tag: str = "") -> Any:
        return self._agent(marker, tag).run(f"Where is order A100? {marker}")

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        return await asyncio.to_thread(self.run, marker, tag)

    def run_failing(self) -> None:
        class Broken(ScriptedModel):
            def generate(self, *args: Any, **kwargs: Any) -> Any:
                raise LookupFailed("provider down")

        tool_calling_agent(Broken([])).run("Where is my order?")

    def run_stream(self, consume: bool) -> None:
        stream = self._agent("", "", stream=True).run("Where is my order?", stream=True)
        if consume:
            list(stream)
        else:
            next(iter(stream))

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(token_usage: Any) -> Any:
            raise AttributeError("TokenUsage has no attribute 'input_tokens'")

        monkeypatch.setattr(_convert, "usage", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return MultiStepAgent, "run"

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        kinds = [s.semantic_kind for s in spans]
        assert kinds.count("agent") == 1 and kinds.count("model") == 2, kinds
        assert kinds.count("tool") == 2, kinds  # lookup_order and final_answer


class TestSmolagentsContract(ContractSuite):
    scenario_cls = SmolagentsScenario
