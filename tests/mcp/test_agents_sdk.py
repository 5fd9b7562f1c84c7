"""MCP-1 (b) and MCP-2 as the case states them: an OpenAI Agents SDK agent with
``mcp_servers=[MCPServerStdio(...)]`` / ``[MCPServerStreamableHttp(...)]`` (the real
``OpenAIResponsesModel`` over a mock transport), our Agents SDK and MCP instrumentors on.
The Agents SDK's ``function`` span of the call is the one client-side tool span, enriched with
the MCP attributes; the server's span is its child."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json
from tests.mcp.harness import MCP2, REFUND_ERROR, SERVER_APP, http_server, server_env, server_spans
from tests.openai_agents.fakes import ScriptedResponses, responses_model, tool_then_answer
from tests.spans import SpanSnapshot

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def agents_sdk(provider: Any) -> Any:
    from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor

    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    assert inst.open_spans() == 0
    inst.uninstrument()


def stdio_server(spans_file: Any) -> Any:
    from agents.mcp import MCPServerStdio

    return MCPServerStdio({"command": sys.executable, "args": [SERVER_APP, "stdio"], "env": server_env(spans_file)},
                          name="orders", client_session_timeout_seconds=60)


async def run_agent(server: Any, tool: str, args: dict) -> str:
    from agents import Agent, Runner

    model = responses_model(ScriptedResponses([tool_then_answer(tool, args)], repeat_last=True))
    async with server:
        agent = Agent(name="support", instructions="help", model=model, mcp_servers=[server])
        result = await Runner.run(agent, "help me")
    return result.final_output


def the_call(client: list[SpanSnapshot], server: list[SpanSnapshot], tool: str) -> tuple[SpanSnapshot, SpanSnapshot]:
    """The one client-side tool span (the Agents SDK's, enriched) and the server's span under it."""
    calls = [s for s in client if s.semantic_kind == "tool"]
    assert [s.attributes["gen_ai.tool.name"] for s in calls] == [tool]
    call = calls[0]
    assert call.attributes["otel_agents.framework"] == "openai_agents"
    assert call.attributes["mcp.method.name"] == "tools/call"
    assert call.attributes["otel_agents.mcp.server.name"] == "orders"
    served, = [s for s in server if s.semantic_kind == "tool"]
    assert served.parent_id == call.span_id and served.trace_id == call.trace_id
    assert call.attributes["jsonrpc.request.id"] == served.attributes["jsonrpc.request.id"]
    agent, = [s for s in client if s.semantic_kind == "agent"]
    assert call.parent_id == agent.span_id
    return call, served


async def test_mcp1_b_agents_sdk_mcp_server_stdio(instrument, agents_sdk, exporter, spans_file, client_file) -> None:
    """MCP-1 (b) over stdio: one tool span ``lookup_order`` (the SDK's, enriched), the server's
    ``execute_tool lookup_order`` its child with ``db.query`` under it; the fold has one call with
    the server's name."""
    instrument()
    output = await run_agent(stdio_server(spans_file), "lookup_order", {"order_id": "A100"})
    assert "wireless headphones" in output
    server = server_spans(spans_file)
    call, served = the_call(exporter.spans, server, "lookup_order")
    assert call.status != StatusCode.ERROR
    db, = [s for s in server if s.name == "db.query"]
    assert db.parent_id == served.span_id
    envelope, = fold(list(read_otlp_json(client_file)) + list(read_otlp_json(spans_file)))
    assert [(c["name"], c["agent"], c["server"], c["status"]) for c in envelope["tool_calls"]] == \
        [("lookup_order", "support", "orders", "ok")]


async def test_mcp1_b_agents_sdk_mcp_server_streamable_http(instrument, agents_sdk, exporter, spans_file) -> None:
    """MCP-1 (b) over Streamable HTTP on loopback: the same tree, and ``mcp.session.id`` on the
    SDK's tool span equal to the server's."""
    from agents.mcp import MCPServerStreamableHttp

    instrument()
    with http_server(spans_file) as url:
        server = MCPServerStreamableHttp({"url": url}, name="orders", client_session_timeout_seconds=60)
        output = await run_agent(server, "lookup_order", {"order_id": "A100"})
    assert "wireless headphones" in output
    call, served = the_call(exporter.spans, server_spans(spans_file), "lookup_order")
    if not MCP2:  # on 2.x neither side learns the session id over this transport yet (#30 note)
        assert call.attributes["mcp.session.id"] == served.attributes["mcp.session.id"]


async def test_mcp2_agents_sdk_is_error_fails_the_tool_not_the_agent(instrument, agents_sdk, exporter, spans_file,
                                                                     client_file) -> None:
    """MCP-2 called by an agent: ``refund`` answers ``isError``; the SDK's tool span is ERROR with
    ``error.type=tool_error`` and the error text as its result, the server's span ERROR too; the
    agent and the run are OK; the fold shows the call with status error."""
    instrument()
    output = await run_agent(stdio_server(spans_file), "refund", {"order_id": "B200"})
    assert REFUND_ERROR in output  # the model saw the error and went on
    call, served = the_call(exporter.spans, server_spans(spans_file), "refund")
    for span in (call, served):
        assert span.status == StatusCode.ERROR and span.attributes["error.type"] == "tool_error"
        assert REFUND_ERROR in span.attributes["gen_ai.tool.call.result"]
    for span in exporter.spans:
        if span.semantic_kind != "tool":
            assert span.status != StatusCode.ERROR, span.name
    envelope, = fold(list(read_otlp_json(client_file)) + list(read_otlp_json(spans_file)))
    assert envelope["status"] != "failed"
    assert [(c["name"], c["status"]) for c in envelope["tool_calls"]] == [("refund", "error")]
    lines = [line.strip() for line in envelope["evaluation_context"].splitlines()]
    assert [line.split(" latency_ms=")[0] for line in lines if line.startswith("tool ")] == \
        ['tool refund args={"order_id":"B200"} status=error']
    # one error line for the call: the server's span of it is not a second failed step
    assert [line for line in lines if line.startswith("error ")] == \
        [f"error tool refund: Error executing tool refund{'' if MCP2 else ': refund service down'}"]
    assert envelope["metrics"]["errors"] == 1
