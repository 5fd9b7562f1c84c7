"""The cross-cutting cases X-1 … X-7 (``tests/contract/kit.py``) for Google ADK."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor
from otel_agents.instrumentors.google_adk import _convert
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SpanSnapshot

from .fakes import Raise, ScriptedLlm, call, run_agent_async


class ADKScenario(Scenario):
    """An LlmAgent over :class:`ScriptedLlm` that calls ``lookup`` once (which probes), then answers with its result."""

    instrumentor_cls = GoogleADKInstrumentor

    def _agent(self, marker: str, tag: str, fail: bool = False) -> LlmAgent:
        probe = self.probe

        def lookup(order_id: str) -> str:
            """Look up an order."""
            probe(tag)
            return self.result(f"order {order_id} {marker} shipped")

        script = [Raise(ValueError("provider down"))] if fail else [call("lookup", order_id="A100"), f"Done: {marker}"]
        return LlmAgent(name="Support", model=ScriptedLlm(script), tools=[lookup],
                        description=f"Helps with {marker}" if marker else "")

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        result = await run_agent_async(self._agent(marker, tag), f"Where is order {marker}?", session_id=f"s-{id(self)}-{tag}")
        if result.error is not None:
            raise result.error
        return result.final_text

    def run(self, marker: str = "", tag: str = "") -> Any:
        return asyncio.run(self.arun(marker, tag))

    def run_failing(self) -> None:
        result = asyncio.run(run_agent_async(self._agent("", "", fail=True), "Where is my order?"))
        raise result.error

    def run_stream(self, consume: bool) -> None:
        async def main() -> None:
            runner = Runner(app_name="support", agent=self._agent("", ""), session_service=InMemorySessionService())
            await runner.session_service.create_session(app_name="support", user_id="u1", session_id="s1")
            events = runner.run_async(user_id="u1", session_id="s1",
                                      new_message=types.Content(role="user", parts=[types.Part(text="Where?")]))
            if consume:
                async for _ in events:
                    pass
            else:
                await events.__anext__()  # one event, then the stream is dropped

        asyncio.run(main())

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(metadata: Any) -> Any:
            raise AttributeError("GenerateContentResponseUsageMetadata has no attribute 'prompt_token_count'")

        monkeypatch.setattr(_convert, "usage", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return Runner, "__init__"

    def open_entries(self, instrumentor: Any) -> int:
        return instrumentor.open_runs()

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        kinds = [s.semantic_kind for s in spans]
        assert kinds.count("agent") == 1 and kinds.count("tool") == 1 and kinds.count("model") == 2, kinds


class TestADKContract(ContractSuite):
    scenario_cls = ADKScenario
