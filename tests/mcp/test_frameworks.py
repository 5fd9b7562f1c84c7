"""MCP-1 (b) and MCP-2 with an agent framework driving the MCP client: the framework's tool span is
the one client-side ``tool`` span of each call (enriched), and the server's span is under it.

LangChain's MCP adapters (``langchain-mcp-adapters``, the SDK's ``ClientSession``) and PydanticAI's
``MCPToolset`` (FastMCP's client, which opens its own client span and injects its own
``traceparent``), each with the customer-support example's fake model; an OpenAI Agents SDK variant
runs when that SDK's instrumentor is present.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json
from tests.mcp.harness import SERVER_APP, server_env, server_spans, stdio_session
from tests.spans import SpanSnapshot, ancestors

pytestmark = pytest.mark.timeout(180)

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "customer_support")
QUESTION = "My coffee grinder from order B200 arrived damaged. Can I get a refund?"


def example(name: str) -> Any:
    sys.path.insert(0, os.path.abspath(EXAMPLE))
    return __import__(name)


def assert_one_tool_span_per_call(client: list[SpanSnapshot], server: list[SpanSnapshot],
                                  names: list[str]) -> list[SpanSnapshot]:
    """Exactly one client-side tool span per call (the framework's, enriched with the MCP
    attributes); each server span's nearest semantic ancestor is that span, in the same trace."""
    calls = [s for s in client if s.semantic_kind == "tool"]
    assert [s.attributes["gen_ai.tool.name"] for s in calls] == names
    served = [s for s in server if s.semantic_kind == "tool"]
    assert [s.attributes["gen_ai.tool.name"] for s in served] == names
    everything = client + server
    for call, serving in zip(calls, served):
        assert call.attributes["otel_agents.framework"] != "mcp"  # the framework's own span, enriched
        assert call.attributes["mcp.method.name"] == "tools/call"
        assert call.attributes["jsonrpc.request.id"] == serving.attributes["jsonrpc.request.id"]
        assert call.attributes["otel_agents.mcp.server.name"] == "orders"
        assert serving.trace_id == call.trace_id
        semantic = [a for a in ancestors(serving, everything) if a.semantic_kind]
        assert semantic[0].span_id == call.span_id
    db = [s for s in server if s.name == "db.query"]
    assert len(db) == 1 and db[0].parent_id == served[0].span_id
    return calls


def assert_fold(client_file: Any, spans_file: Any, names: list[str]) -> None:
    envelope, = fold(list(read_otlp_json(client_file)) + list(read_otlp_json(spans_file)))
    assert [(c["name"], c["agent"], c.get("server")) for c in envelope["tool_calls"]] == \
        [(n, "customer_support", "orders") for n in names]
    assert "can be refunded" in envelope["public_output"]


async def test_mcp1_b_langchain_mcp_adapters(instrument, provider, exporter, spans_file, client_file) -> None:
    """MCP-1 (b): a LangGraph agent over tools loaded with ``langchain_mcp_adapters.load_mcp_tools``."""
    from langchain_core.messages import HumanMessage
    from langchain_mcp_adapters.tools import load_mcp_tools
    from langgraph.prebuilt import create_react_agent

    from otel_agents.instrumentors.langchain import LangChainInstrumentor

    brain = example("langchain_agent")
    langchain = LangChainInstrumentor()
    langchain.instrument(tracer_provider=provider)
    instrument()
    try:
        async with stdio_session(spans_file) as session:
            tools = [t for t in await load_mcp_tools(session) if t.name in ("lookup_order", "check_refund_policy")]
            graph = create_react_agent(brain.BrainChatModel(), tools, name="customer_support")
            state = await graph.ainvoke({"messages": [HumanMessage(QUESTION)]})
    finally:
        langchain.uninstrument()
    assert "can be refunded" in str(state["messages"][-1].content)
    names = ["lookup_order", "check_refund_policy"]
    assert_one_tool_span_per_call(exporter.spans, server_spans(spans_file), names)
    assert_fold(client_file, spans_file, names)


async def test_mcp1_b_pydantic_ai_mcp_toolset(instrument, provider, exporter, spans_file, client_file,
                                              monkeypatch) -> None:
    """MCP-1 (b): a PydanticAI agent with ``MCPToolset`` over stdio. FastMCP's own client span (sent
    to the same provider here) stays a non-semantic span between our tool span and the server's."""
    import fastmcp.client.telemetry
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset

    from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor

    monkeypatch.setattr(fastmcp.client.telemetry, "get_tracer", lambda *a: provider.get_tracer("fastmcp"))
    brain = example("pydantic_ai_agent")
    pydantic_ai = PydanticAIInstrumentor()
    pydantic_ai.instrument(tracer_provider=provider)
    instrument()
    try:
        toolset = MCPToolset(StdioTransport(command=sys.executable, args=[SERVER_APP, "stdio"],
                                            env=server_env(spans_file)),
                             init_timeout=60)  # the child's start-up under load outlasts FastMCP 4's default
        agent = Agent(brain.brain_model(), name="customer_support", toolsets=[toolset])
        async with agent:
            result = await agent.run(QUESTION)
    finally:
        pydantic_ai.uninstrument()
    assert "can be refunded" in result.output
    names = ["lookup_order", "check_refund_policy"]
    client = exporter.spans
    assert_one_tool_span_per_call(client, server_spans(spans_file), names)
    theirs = [s for s in client if s.scope == "fastmcp" and s.name.startswith("tools/call")]
    assert len(theirs) == 2 and all(s.semantic_kind is None for s in theirs)
    assert_fold(client_file, spans_file, names)

