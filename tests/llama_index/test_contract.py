"""The cross-cutting cases X-1 … X-7 for the LlamaIndex instrumentor, through the contract kit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor, _extract
from tests.contract.kit import ContractSuite, Scenario
from tests.llama_index import fakes
from tests.spans import SpanSnapshot


class LlamaIndexScenario(Scenario):
    """A ``FunctionAgent`` (``scout``) over a scripted ``MockFunctionCallingLLM``: one
    ``lookup`` tool call, then an answer quoting the tool's result.

    The marker goes into the system prompt, the agent description, the user
    message, the tool arguments, the tool result and the answer. The agent runs
    with an in-process memory that does not tokenize (see
    :func:`fakes.cheap_memory`) so that X-6's 5 MB message stays fast.

    Streams: the agent consumes its model streams itself, so the stream a user
    can abandon is a streaming query engine's response (LI-3's path): ``run_stream``
    reads it fully, or reads one token and drops it.
    """

    instrumentor_cls = LlamaIndexInstrumentor
    streams_model = True  # its consumed streaming run streams the model
    plain_run_streams_model = True  # FunctionAgent streams the model in a plain run too
    hangs_on = (StopIteration, asyncio.CancelledError)  # the workflow waits forever on either

    def __init__(self) -> None:
        super().__init__()
        self._index = fakes.index()  # built before instrumenting: no spans from it

    def _agent(self, marker: str, tag: str, *, fail: bool = False, async_tool: bool = False) -> FunctionAgent:
        def lookup(city: str) -> str:
            """Look up facts about a city."""
            self.probe(tag)
            return self.result(f"{city} is a capital {marker}")

        async def alookup(city: str) -> str:
            """Look up facts about a city."""
            return lookup(city)

        if fail:
            llm = fakes.scripted_llm(RuntimeError("model unavailable"))
        else:
            llm = fakes.scripted_llm(fakes.tool_call("lookup", {"city": f"Paris {marker}"}),
                                     lambda messages: f"Answer: {fakes.last_tool_result(messages)}")
        return FunctionAgent(name="scout", description=f"Finds facts {marker}",
                             system_prompt=f"You are a scout. {marker}",
                             tools=[FunctionTool.from_defaults(fn=lookup, name="lookup",
                                                               async_fn=alookup if async_tool else None)], llm=llm)

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        agent = self._agent(marker, tag)
        result = await agent.run(user_msg=f"Tell me about Paris {marker}", memory=fakes.cheap_memory())
        return str(result)

    def run(self, marker: str = "", tag: str = "") -> Any:
        return fakes.run_sync(lambda: self.arun(marker, tag))

    def run_unwinding(self) -> Any:
        """The agent awaits a tool's ``async_fn`` on its loop (a sync ``fn`` only runs in a worker thread)."""
        async def go() -> Any:
            return str(await self._agent("", "", async_tool=True).run(user_msg="Tell me about Paris",
                                                                        memory=fakes.cheap_memory()))

        return fakes.run_sync(go)

    def run_failing(self) -> None:
        async def go() -> Any:
            return await self._agent("", "", fail=True).run(user_msg="Tell me about Paris", memory=fakes.cheap_memory())

        fakes.run_sync(go)

    def run_stream(self, consume: bool) -> None:
        response = fakes.query_engine(self._index, streaming=True).query("What is the capital of France?")
        if consume:
            for _ in response.response_gen:
                pass
        else:
            next(iter(response.response_gen))
        del response

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(messages: Any) -> Any:
            raise AttributeError("'ChatMessage' object has no attribute 'blocks'")

        monkeypatch.setattr(_extract, "chat_messages", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        return FunctionTool, "acall"

    def open_entries(self, instrumentor: Any) -> int:
        return instrumentor.open_span_count()

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        names = [s.name for s in spans]
        assert names.count("invoke_agent scout") == 1
        assert names.count("execute_tool lookup") == 1
        assert names.count("chat MockFunctionCallingLLM") == 2, names  # one per model call


class TestLlamaIndexContract(ContractSuite):
    scenario_cls = LlamaIndexScenario
