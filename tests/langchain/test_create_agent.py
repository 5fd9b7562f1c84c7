"""LangChain 1.x's ``create_agent`` where the matrix (tests/matrix, entries ``create_agent ...``) does not reach:
the structured-output hook when ``instrument()`` runs before ``langchain.agents`` is imported, and its removal."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import sys
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from otel_agents.instrumentors.langchain import LangChainInstrumentor

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    assert "langchain.agents.factory" not in sys.modules, "instrument() imported langchain.agents"
    assert "langgraph.prebuilt.tool_node" not in sys.modules, "instrument() imported LangGraph's ToolNode"
    from tests.matrix.drivers import langchain as driver  # imports langchain.agents now
    from tests.matrix.truth import Truth
    result = driver._agent(Truth("output_retry")).invoke(driver.INPUT)
    assert result["structured_response"].answer == "It is sunny in Paris", result
    rejected = [s for s in exporter.get_finished_spans() if s.name == "structured_output"]
    assert len(rejected) == 1 and rejected[0].status.status_code.name == "ERROR", \\
        [s.name for s in exporter.get_finished_spans()]
    assert rejected[0].attributes["error.type"].endswith("StructuredOutputValidationError"), rejected[0].attributes
    from langgraph.prebuilt.tool_node import ToolNode
    assert hasattr(ToolNode.__dict__["_validate_tool_call"], "__wrapped__"), "ToolNode imported later: not wrapped"
    inst.uninstrument()
    import langchain.agents.factory as factory
    assert not hasattr(factory._handle_structured_output_error, "__wrapped__"), "wrapper left after uninstrument()"
    assert not hasattr(ToolNode.__dict__["_validate_tool_call"], "__wrapped__"), "wrapper left after uninstrument()"
    print("ok")
""")


def test_rejected_structured_output_is_a_failed_step_when_instrumented_before_langchain_agents_import() -> None:
    """``instrument()`` does not import ``langchain.agents``; imported later, its structured-output retry still
    gives one failed ``structured_output`` step per rejected answer, and ``uninstrument()`` removes the wrapper."""
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def test_calls_refused_by_the_tool_call_limit_are_refused_tool_spans(instrumentor: Any, exporter: Any,
                                                                     envelopes: list) -> None:
    """``ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")``: the model asks for the tool three
    times; the middleware's ``after_model`` node answers the 2nd and 3rd calls with an error ``ToolMessage``
    ("Tool call limit exceeded…") and the tool never runs for them. Each refused call is a tool span of its
    own under the agent: ERROR, ``error.type`` ``usage_limit``, ``otel_agents.tool.denied``, the call's id and
    arguments; the envelope lists the three calls in order (ok, error, error). Ground truth: the tool's runs."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolCallLimitMiddleware
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from tests.exporters.conftest import check
    from tests.langchain.fakes import ScriptedChatModel
    from tests.spans import nearest, tree

    runs: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        runs.append(city)
        return f"sunny in {city}"

    cities = ["Paris", "Oslo", "Rome"]
    replies = [AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": c}, "id": f"call_{c}",
                                                  "type": "tool_call"}]) for c in cities]
    model = ScriptedChatModel(replies=[*replies, AIMessage(content="It is sunny in Paris.")])
    agent = create_agent(model, [get_weather], name="weather_agent",
                         middleware=[ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")])
    result = agent.invoke({"messages": [HumanMessage("Weather in Paris?")]})

    assert runs == ["Paris"]  # the tool ran once
    refusals = [m for m in result["messages"] if m.type == "tool" and m.status == "error"]
    assert [m.tool_call_id for m in refusals] == ["call_Oslo", "call_Rome"]
    spans = exporter.semantic()
    tools = [s for s in spans if s.semantic_kind == "tool"]
    assert [s.attributes["gen_ai.tool.call.id"] for s in tools] == ["call_Paris", "call_Oslo", "call_Rome"], \
        tree(spans)
    ran, *refused = tools
    assert ran.status.name == "UNSET" and "otel_agents.tool.denied" not in ran.attributes
    for span, city, message in zip(refused, cities[1:], refusals):
        assert span.name == "execute_tool get_weather"
        assert span.status.name == "ERROR" and span.attributes["error.type"] == "usage_limit", span.attributes
        assert span.attributes["otel_agents.tool.denied"] is True
        assert span.json_attr("gen_ai.tool.call.arguments") == {"city": city}
        assert span.attributes["gen_ai.tool.call.result"] == message.content
        assert "limit" in span.status_description
        assert span.start_time == span.end_time  # zero length: no tool ran
        assert nearest(span, spans, "agent").name == "invoke_agent weather_agent"
    [env] = check(envelopes)
    calls = env["tool_calls"]
    assert [(c["id"], c["status"]) for c in calls] == [("call_Paris", "ok"), ("call_Oslo", "error"),
                                                       ("call_Rome", "error")], calls
    assert env["metrics"]["tool_errors"] == 2


def test_a_call_of_a_tool_the_agent_lacks_is_a_refused_tool_span(instrumentor: Any, exporter: Any,
                                                                  envelopes: list) -> None:
    """The model asks for ``get_weather`` and for ``get_wether`` (no such tool) in one turn: ``ToolNode`` answers
    the second with an error ``ToolMessage`` ("Error: get_wether is not a valid tool…") and runs nothing, which no
    callback reports. It is a refused tool span under its ``tools`` node: ERROR, ``error.type`` ``unknown_tool``,
    ``otel_agents.tool.denied``, the call's id and arguments, LangGraph's answer as the result, zero length; the
    envelope lists both calls (ok, error). Ground truth: the tool's runs and the agent's messages."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import tool

    from tests.exporters.conftest import check
    from tests.langchain.fakes import ScriptedChatModel
    from tests.spans import assert_refused_unknown_tool, parent_of, tree

    runs: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        runs.append(city)
        return f"sunny in {city}"

    calls = [{"name": name, "args": {"city": "Paris"}, "id": f"call_{i}", "type": "tool_call"}
             for i, name in enumerate(("get_weather", "get_wether"))]
    model = ScriptedChatModel(replies=[AIMessage(content="", tool_calls=calls), AIMessage(content="Sunny.")])
    result = create_agent(model, [get_weather], name="weather_agent").invoke(
        {"messages": [HumanMessage("Weather in Paris?")]})

    assert runs == ["Paris"]
    [answer] = [m for m in result["messages"] if m.type == "tool" and m.status == "error"]
    assert answer.tool_call_id == "call_1" and "not a valid tool" in answer.content
    spans = exporter.semantic()
    tools = sorted((s for s in spans if s.semantic_kind == "tool"), key=lambda s: s.attributes["gen_ai.tool.call.id"])
    assert [s.name for s in tools] == ["execute_tool get_weather", "execute_tool get_wether"], tree(spans)
    ran, refused = tools
    assert ran.status.name == "UNSET" and "otel_agents.tool.denied" not in ran.attributes
    assert_refused_unknown_tool(refused, {"city": "Paris"}, answer.content)
    assert parent_of(refused, spans).name == "tools"
    [env] = check(envelopes)
    # in the order the calls started: ToolNode runs the two at once, so either may come first
    assert sorted((c["id"], c["status"]) for c in env["tool_calls"]) == [("call_0", "ok"), ("call_1", "error")]
