"""Folding a real LangGraph agent run (LangChain instrumentor, offline fake model) into ECP envelopes (issue 7)."""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from otel_agents.exporters.ecp import ECPFoldingProcessor, fold  # noqa: E402
from otel_agents.instrumentors.langchain import LangChainInstrumentor  # noqa: E402
from tests.langchain.fakes import ToolCallingChatModel, build_agent_graph  # noqa: E402

from .conftest import Recorder, check  # noqa: E402


@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


@pytest.fixture
def instrumented():
    got: list[dict] = []
    rec = Recorder(ECPFoldingProcessor(got.append))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    try:
        yield rec, got
    finally:
        instrumentor.uninstrument()
        rec.provider.shutdown()


@pytest.mark.parametrize("streamed", [False, True])
def test_langgraph_agent_run_folds_into_one_valid_envelope(instrumented, streamed):
    rec, got = instrumented
    graph = build_agent_graph(ToolCallingChatModel(), [get_weather], name="weather_agent")
    inputs = {"messages": [HumanMessage("Paris")]}
    if streamed:
        list(graph.stream(inputs, stream_mode="values"))
    else:
        graph.invoke(inputs)
    [env] = check(fold(rec.spans))
    assert got == [env]  # the live processor agrees with folding the finished spans
    assert env["status"] == "done"
    assert env["public_output"] == "It is sunny in Paris"
    [call] = env["tool_calls"]
    assert (call["name"], call["arguments"], call["id"], call["status"], call["agent"]) == \
        ("get_weather", {"city": "Paris"}, "call_1", "ok", "weather_agent")
    assert call["result"] == "sunny in Paris"
    assert env["usage"] == {"input_tokens": 22, "output_tokens": 14, "total_tokens": 36}
    assert env["metrics"]["model_calls"] == 2 and env["metrics"]["cost_usd"] is None  # a fake model has no price
    assert [a["name"] for a in env["agents"]] == ["weather_agent"]
    lines = env["evaluation_context"].splitlines()
    assert lines[0] == "agent weather_agent"
    assert any(line.strip().startswith('tool get_weather args={"city":"Paris"} status=ok') for line in lines)
    assert sum(line.strip().startswith("model fake-model-1") for line in lines) == 2
