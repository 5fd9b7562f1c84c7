"""Every way to run an agent gives one ``agent`` span with its model and tool spans, named after the agent."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest
from opentelemetry import trace
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

from tests.spans import SnapshotExporter, nearest, tree

from .agents import Deps, lookup_agent

PROMPT = "Where is order 5?"


def _run(agent: Agent, deps: Deps) -> str:
    return agent.run_sync(PROMPT, deps=deps).output


def _arun(agent: Agent, deps: Deps) -> str:
    return asyncio.run(agent.run(PROMPT, deps=deps)).output


def _run_stream(agent: Agent, deps: Deps) -> str:
    async def main() -> str:
        async with agent.run_stream(PROMPT, deps=deps) as result:
            return await result.get_output()

    return asyncio.run(main())


def _run_stream_sync(agent: Agent, deps: Deps) -> str:
    with agent.run_stream_sync(PROMPT, deps=deps) as result:
        return "".join(result.stream_text(delta=True, debounce_by=None))


def _run_stream_events(agent: Agent, deps: Deps) -> str:
    async def main() -> str:
        output = ""
        async with agent.run_stream_events(PROMPT, deps=deps) as events:
            async for event in events:
                output = getattr(event, "result", None) and event.result.output or output
        return output

    return asyncio.run(main())


def _iter(agent: Agent, deps: Deps) -> str:
    async def main() -> str:
        async with agent.iter(PROMPT, deps=deps) as run:
            async for _ in run:
                pass
        return run.result.output

    return asyncio.run(main())


ENTRY_POINTS: dict[str, Callable[[Agent, Deps], str]] = {
    "run_sync": _run, "run": _arun, "run_stream": _run_stream, "run_stream_sync": _run_stream_sync,
    "run_stream_events": _run_stream_events, "iter": _iter,
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_each_entry_point_gives_one_complete_run(entry: str, instrumented: Any, exporter: SnapshotExporter) -> None:
    """run / run_sync / run_stream / run_stream_sync / run_stream_events / iter: one agent span with its
    output, two model spans and one tool span under it, all ended, nothing left current."""
    output = ENTRY_POINTS[entry](lookup_agent(), Deps(marker="R"))
    assert output.startswith("answer: found R")
    spans = exporter.semantic()
    assert sorted(s.semantic_kind for s in spans) == ["agent", "model", "model", "tool"], tree(spans)
    agent = exporter.semantic("agent")[0]
    assert agent.name == "invoke_agent support"
    assert agent.attributes["gen_ai.agent.name"] == "support"
    assert agent.attributes["input.value"] == PROMPT
    assert agent.attributes["output.value"] == output
    for s in spans:
        assert s is agent or nearest(s, spans, "agent") == agent
        assert s.end_time <= agent.end_time
    assert not trace.get_current_span().get_span_context().is_valid


def test_name_inference_still_works(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PydanticAI names an unnamed agent after the caller's variable; wrapping only ``Agent.iter`` keeps that."""
    weather_bot = Agent(TestModel(custom_output_text="sunny"))
    weather_bot.run_sync("weather?")
    assert weather_bot.name == "weather_bot"
    assert exporter.semantic("agent")[0].name == "invoke_agent weather_bot"


def test_iter_without_name_falls_back_to_agent(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``iter()`` does not infer a name (pydantic-ai's own behaviour): the span is ``invoke_agent agent``."""
    _iter(lookup_agent(name=None), Deps())
    assert exporter.semantic("agent")[0].name == "invoke_agent agent"


def test_iter_broken_out_of_is_abandoned(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Leaving an ``iter()`` loop early ends the run as abandoned, not failed."""

    async def main() -> None:
        async with lookup_agent().iter(PROMPT, deps=Deps()) as run:
            async for _ in run:
                break

    asyncio.run(main())
    agent = exporter.semantic("agent")[0]
    assert agent.attributes["otel_agents.stream.abandoned"] is True
    assert agent.status is trace.StatusCode.UNSET


def test_tool_sees_its_span_in_sync_and_async_runs(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Inside the (sync, worker-thread) tool, the current span is our tool span, for every entry point."""
    for entry, run in ENTRY_POINTS.items():
        seen: list[int] = []
        exporter.clear()
        run(lookup_agent(), Deps(probe=lambda tag: seen.append(trace.get_current_span().get_span_context().span_id)))
        assert seen == [exporter.semantic("tool")[0].span_id], entry


def test_user_model_class_defined_after_instrument(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Issue #34 item 3: a ``pydantic_ai.models.Model`` subclass the user writes after instrument() (its own
    ``request``) gets one model span per request, with each request's usage and finish reason as the model
    returned them (ground truth kept by the model), and the tool call's id on the tool span."""
    from pydantic_ai import Agent as PAgent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models import Model
    from pydantic_ai.usage import RequestUsage

    truth: list[tuple[tuple[int, int], str]] = []

    class InHouse(Model):
        @property
        def model_name(self) -> str:
            return "in-house-1"

        @property
        def system(self) -> str:
            return "in-house"

        async def request(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> ModelResponse:
            answered = any(isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", ()))
            counts, finish = ((20, 6), "stop") if answered else ((9, 3), "tool_call")
            truth.append((counts, finish))
            part = TextPart("A100 has shipped.") if answered else \
                ToolCallPart("lookup", {"order_id": "A100"}, tool_call_id="call_ih")
            return ModelResponse(parts=[part], usage=RequestUsage(input_tokens=counts[0], output_tokens=counts[1]),
                                 model_name="in-house-1", finish_reason=finish)

    agent: PAgent[None, str] = PAgent(InHouse(), name="support")

    @agent.tool_plain
    def lookup(order_id: str) -> str:
        return f"{order_id}: shipped"

    assert agent.run_sync("Where is A100?").output == "A100 has shipped."
    models = exporter.semantic("model")
    assert len(models) == len(truth) == 2, tree(exporter.semantic())
    for span, (counts, finish) in zip(models, truth):
        a = span.attributes
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == counts
        assert a["gen_ai.response.finish_reasons"] == (finish,)
    [tool] = exporter.semantic("tool")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_ih"
