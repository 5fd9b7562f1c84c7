"""Offline PydanticAI agents for the tests: ``FunctionModel`` and ``TestModel`` only, no network."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, \
    UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import DeferredToolRequests
from pydantic_ai.usage import RequestUsage

STREAM_TEXT = "one two three four five six"


class LookupFailed(Exception):
    """The user's own exception, raised by a tool."""


@dataclass
class Deps:
    """Per-run data the tool reads: the marker to echo, the probe tag, whether to fail."""

    marker: str = ""
    tag: str = ""
    fail: bool = False
    probe: Any = None
    calls: list[str] = field(default_factory=list)
    result: Any = None  # the contract kit's scenario.result: what the tool returns instead


def _prompt(messages: list[ModelMessage]) -> str:
    for m in messages:
        if isinstance(m, ModelRequest):
            for p in m.parts:
                if isinstance(p, UserPromptPart) and isinstance(p.content, str):
                    return p.content
    return ""


def _tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    last = messages[-1]
    return [p for p in getattr(last, "parts", []) if isinstance(p, ToolReturnPart) and p.outcome != "retried"]


def _lookup_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """First request: call ``lookup`` with the prompt; once the tool answered: say its result."""
    returns = _tool_returns(messages)
    if returns:
        return ModelResponse(parts=[TextPart(f"answer: {returns[0].content}")],
                             usage=RequestUsage(input_tokens=30, output_tokens=6, cache_read_tokens=4),
                             model_name="fake-llm", finish_reason="stop")
    return ModelResponse(parts=[ToolCallPart("lookup", {"query": _prompt(messages)}, tool_call_id="call_1")],
                         usage=RequestUsage(input_tokens=20, output_tokens=4), model_name="fake-llm",
                         finish_reason="tool_call")


async def _lookup_then_answer_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """The streaming twin of :func:`_lookup_then_answer` (the answer comes word by word)."""
    returns = _tool_returns(messages)
    if returns:
        words = f"answer: {returns[0].content} {STREAM_TEXT}".split(" ")
        for i, word in enumerate(words):
            yield word if i == len(words) - 1 else word + " "
        return
    yield {0: DeltaToolCall(name="lookup", json_args=json.dumps({"query": _prompt(messages)}), tool_call_id="call_1")}


def lookup_agent(name: str | None = "support", capabilities: list[Any] | None = None,
                 async_tool: bool = False) -> Agent[Deps, str]:
    """One tool (``lookup``), a FunctionModel that calls it once then answers; streams too (``capabilities``:
    the agent's own). ``async_tool``: the tool is a coroutine function (awaited on the run's event loop; a sync
    tool runs in a worker thread)."""
    agent: Agent[Deps, str] = Agent(FunctionModel(_lookup_then_answer, stream_function=_lookup_then_answer_stream,
                                                  model_name="fake-llm"),
                                    name=name, deps_type=Deps, instructions="You look orders up.",
                                    capabilities=capabilities)

    if async_tool:
        @agent.tool(name="lookup")
        async def alookup(ctx: RunContext[Deps], query: str) -> str:
            """Look an order up."""
            return lookup(ctx, query)
    else:
        agent.tool(lookup)
    return agent


def lookup(ctx: RunContext[Deps], query: str) -> str:
    """Look an order up."""
    deps = ctx.deps
    if deps.probe is not None:
        deps.probe(deps.tag)
    deps.calls.append(query)
    if deps.fail:
        raise LookupFailed("the order service is down")
    found = f"found {deps.marker}"
    return deps.result(found) if deps.result is not None else found


def streaming_agent() -> Agent:
    """Text only; TestModel streams the text word by word and reports usage."""
    return Agent(TestModel(custom_output_text=STREAM_TEXT), name="streamer")


def order_agent() -> Agent:
    """PA-1: TestModel calls every tool once with generated arguments."""
    agent = Agent(TestModel(), name="support")

    @agent.tool_plain
    def lookup_order(order_id: int) -> str:
        """Look up an order."""
        return f"order {order_id}: shipped"

    return agent


class CityInfo(BaseModel):
    city: str
    population: int


def retry_agent() -> tuple[Agent, dict[str, int]]:
    """PA-4: structured output; the tool raises ModelRetry on its first call, then succeeds."""
    calls = {"n": 0}

    def model_fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        retried = sum(isinstance(p, ToolReturnPart) and p.outcome == "retried"
                      for m in messages for p in getattr(m, "parts", []))
        if _tool_returns(messages):
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name,
                                                     {"city": "Paris", "population": 2100000},
                                                     tool_call_id="call_out")])
        return ModelResponse(parts=[ToolCallPart("census", {"city": "Paris"}, tool_call_id=f"call_{retried}")])

    agent = Agent(FunctionModel(model_fn), name="census", output_type=CityInfo)

    @agent.tool_plain
    def census(city: str) -> int:
        """Population of a city."""
        calls["n"] += 1
        if calls["n"] == 1:
            raise ModelRetry("census service busy, try again")
        return 2100000

    return agent, calls


def approval_agent() -> Agent:
    """A tool that needs approval: the run ends with ``DeferredToolRequests`` (paused)."""
    agent = Agent(TestModel(), name="approver", output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    return agent


def deferred_agent() -> Agent:
    """A tool that raises ``CallDeferred`` (runs elsewhere): the run pauses."""
    from pydantic_ai.exceptions import CallDeferred

    agent = Agent(TestModel(), name="deferrer", output_type=[str, DeferredToolRequests])

    @agent.tool_plain
    def run_job(job: str) -> str:
        """Run a long job."""
        raise CallDeferred()

    return agent


def router_agent(inner: Agent) -> Agent:
    """A router whose one tool delegates the question to ``inner`` (a nested agent run)."""

    def model_fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("ask_support", {"question": "order?"}, tool_call_id="d1")])
        return ModelResponse(parts=[TextPart("done")])

    router = Agent(FunctionModel(model_fn), name="router")

    @router.tool_plain
    async def ask_support(question: str) -> str:
        """Delegate to the support agent."""
        return (await inner.run(question)).output

    return router


def calculator_agent() -> Agent:
    """The model first sends arguments the tool's schema rejects, then valid ones, then answers."""

    def model_fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("double", {"n": "not a number"}, tool_call_id="bad")])
        if len(messages) == 3:
            return ModelResponse(parts=[ToolCallPart("double", {"n": 4}, tool_call_id="good")])
        return ModelResponse(parts=[TextPart("8")])

    agent = Agent(FunctionModel(model_fn), name="calc")

    @agent.tool_plain
    def double(n: int) -> int:
        """Twice n."""
        return 2 * n

    return agent
