"""Cross-cutting cases X-1 … X-7 (``../shared/cases/cross-cutting.md``) for LangChain/LangGraph,
through the contract kit. The scenario is a small hand-built LangGraph agent over an offline
fake chat model: one tool call, then the answer."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from otel_agents.instrumentors.langchain import LangChainInstrumentor, extract
from tests.contract.kit import ContractSuite, Scenario
from tests.langchain.fakes import ToolCallingChatModel, build_lean_agent_graph
from tests.spans import SpanSnapshot, ancestors, parent_of, tree


class WeatherServiceDown(RuntimeError):
    """The user's own exception, raised by the tool in :meth:`LangChainScenario.run_failing`."""


class LangChainScenario(Scenario):
    """Graph ``weather_agent``: the model asks ``get_weather(city=<prompt>)``, the tool answers
    ``"sunny in <city>"`` (so the marker in the prompt reaches the tool arguments, the result and
    the answer), the model replies ``"It is sunny in <city>"``."""

    instrumentor_cls = LangChainInstrumentor
    ids = ("session", "user")

    def __init__(self) -> None:
        super().__init__()
        scenario = self

        @tool
        def get_weather(city: str, config: RunnableConfig) -> str:
            """Get the weather for a city."""
            options = config.get("configurable", {})
            scenario.probe(options.get("tag", ""))
            if options.get("fail"):
                raise WeatherServiceDown("the weather service is down")
            return scenario.result(f"sunny in {city}")

        self.graph = build_lean_agent_graph(ToolCallingChatModel(), [get_weather], name="weather_agent")

    @staticmethod
    def _input(marker: str) -> dict[str, Any]:
        return {"messages": [HumanMessage(f"Paris {marker}".rstrip())]}

    def run(self, marker: str = "", tag: str = "") -> Any:
        result = self.graph.invoke(self._input(marker), {"configurable": {"tag": tag}})
        return result["messages"][-1].content

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        result = await self.graph.ainvoke(self._input(marker), {"configurable": {"tag": tag}})
        return result["messages"][-1].content

    def run_failing(self) -> None:
        self.graph.invoke(self._input(""), {"configurable": {"fail": True}})

    def run_with_ids(self, session: Any = None, user: Any = None) -> Any:
        metadata = {k: v for k, v in (("session_id", session), ("user_id", user)) if v is not None}
        result = self.graph.invoke(self._input(""), {"configurable": {"tag": ""}, "metadata": metadata})
        return result["messages"][-1].content

    def run_stream(self, consume: bool) -> None:
        if consume:
            list(self.graph.stream(self._input(""), stream_mode="values"))
            return
        for _ in self.graph.stream(self._input(""), stream_mode="values"):
            break  # the generator is dropped (and closed) right here

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(messages: Any) -> Any:
            raise AttributeError("'HumanMessage' object has no attribute 'content'")

        monkeypatch.setattr(extract, "chat_messages", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return importlib.import_module("langchain_core.runnables.config"), "_set_config_context"

    def open_entries(self, instrumentor: Any) -> int:
        return instrumentor.handler.open_entries() if instrumentor.handler is not None else 0

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        agents = [s for s in spans if s.semantic_kind == "agent"]
        assert [a.name for a in agents] == ["invoke_agent weather_agent"], tree(spans)
        for span in spans:
            if span.semantic_kind == "tool":
                lineage = ancestors(span, spans)
                assert not any(a.semantic_kind in ("model", "tool") for a in lineage), tree(spans)
                assert parent_of(span, spans).name == "tools", tree(spans)


class TestLangChainContract(ContractSuite):
    """X-1 … X-7 with the LangGraph scenario (sync and async runs, streams, failures)."""

    scenario_cls = LangChainScenario
