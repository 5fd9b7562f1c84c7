"""MCP-1 (b) and MCP-2 with an agent framework driving the MCP client: the framework's tool span is
the one client-side ``tool`` span of each call (enriched), and the server's span is its child.

LangChain's MCP adapters (``langchain-mcp-adapters``, the SDK's ``ClientSession``), PydanticAI's
``MCPToolset`` (FastMCP 3's client, whose own client spans are switched off while we instrument,
and whose ``traceparent`` in ``_meta`` ours replaces), FastMCP's ``Client`` called bare, and
LlamaIndex's ``McpToolSpec``. The OpenAI Agents SDK's MCP servers: ``test_agents_sdk.py``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json
from tests.mcp.harness import REFUND_ERROR, SERVER_APP, server_env, server_spans, stdio_session
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
    assert not [s for s in client if s.scope == "fastmcp"]  # FastMCP's own client spans are off
    for call, serving in zip(calls, served):
        assert call.attributes["otel_agents.framework"] != "mcp"  # the framework's own span, enriched
        assert call.attributes["mcp.method.name"] == "tools/call"
        assert call.attributes["jsonrpc.request.id"] == serving.attributes["jsonrpc.request.id"]
        assert call.attributes["otel_agents.mcp.server.name"] == "orders"
        assert serving.trace_id == call.trace_id
        assert serving.parent_id == call.span_id, [a.name for a in ancestors(serving, everything)]
    db = [s for s in server if s.name == "db.query"]
    assert len(db) == 1 and db[0].parent_id == served[0].span_id
    return calls


def assert_fold(client_file: Any, spans_file: Any, names: list[str], answer: str = "can be refunded") -> None:
    envelope, = fold(list(read_otlp_json(client_file)) + list(read_otlp_json(spans_file)))
    assert [(c["name"], c["agent"], c.get("server")) for c in envelope["tool_calls"]] == \
        [(n, "customer_support", "orders") for n in names]
    assert answer in envelope["public_output"]


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
    """MCP-1 (b): a PydanticAI agent with ``MCPToolset`` (FastMCP 3's client) over stdio. FastMCP's
    own ``tools/call`` client span (routed to the test's provider here) is switched off while we
    instrument: one client-side tool span per call, the server's span its child."""
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
    assert_one_tool_span_per_call(exporter.spans, server_spans(spans_file), names)
    assert_fold(client_file, spans_file, names)


async def test_fastmcp_client_bare_call_one_span_one_traceparent(instrument, provider, exporter, app_tracer,
                                                                spans_file, monkeypatch) -> None:
    """MCP-1 (a) through FastMCP 3's ``Client`` (which traces itself and injects its own
    ``traceparent``): our tool span is the one client span, the server's span is its child (our
    context replaces the one FastMCP put in ``_meta``); after ``uninstrument()`` FastMCP's own
    span is back."""
    import fastmcp.client.telemetry
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    monkeypatch.setattr(fastmcp.client.telemetry, "get_tracer", lambda *a: provider.get_tracer("fastmcp"))
    inst = instrument()
    transport = StdioTransport(command=sys.executable, args=[SERVER_APP, "stdio"], env=server_env(spans_file))
    async with Client(transport, init_timeout=60) as client:
        with app_tracer.start_as_current_span("app"):
            await client.call_tool("lookup_order", {"order_id": "A100"})
        inst.uninstrument()
        await client.call_tool("check_refund_policy", {"order_id": "A100"})
    spans, server = exporter.spans, server_spans(spans_file)
    app, = [s for s in spans if s.name == "app"]
    call, = [s for s in spans if s.semantic_kind == "tool"]
    assert call.name == "execute_tool lookup_order" and call.parent_id == app.span_id
    assert call.attributes["otel_agents.framework"] == "mcp"
    served = [s for s in server if s.semantic_kind == "tool"]
    assert served[0].parent_id == call.span_id and served[0].trace_id == app.trace_id
    theirs = [s.name for s in spans if s.scope == "fastmcp"]
    assert theirs == ["tools/call check_refund_policy"]  # only after uninstrument()


def assert_mcp2_by_agent(client: list[SpanSnapshot], server: list[SpanSnapshot], framework: str) -> None:
    """MCP-2 called by an agent: the framework's tool span ``refund`` is the one client-side tool
    span, ERROR with ``error.type=tool_error`` and the error text as its result; the server's span
    (its child) is ERROR too; nothing else failed (the model saw the error and answered)."""
    from opentelemetry.trace import StatusCode

    call, = [s for s in client if s.semantic_kind == "tool"]
    served, = [s for s in server if s.semantic_kind == "tool"]
    assert call.attributes["otel_agents.framework"] == framework
    assert call.attributes["mcp.method.name"] == "tools/call" and served.parent_id == call.span_id
    for span in (call, served):
        assert span.status == StatusCode.ERROR and span.attributes["error.type"] == "tool_error", span.attributes
        assert REFUND_ERROR in span.attributes["gen_ai.tool.call.result"]
    assert [s.name for s in client if s.status == StatusCode.ERROR] == [call.name]


async def test_mcp2_pydantic_ai_is_error_fails_the_tool_span(instrument, provider, exporter, spans_file) -> None:
    """MCP-2 with PydanticAI's ``MCPToolset``: the model calls ``refund``, the server answers
    ``isError``, the model answers; the run is OK."""
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart, RetryPromptPart
    from pydantic_ai.models.function import FunctionModel

    from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor

    def respond(messages: list, info: Any) -> ModelResponse:
        answered = [p for m in messages for p in m.parts if isinstance(p, (ToolReturnPart, RetryPromptPart))]
        if answered:
            return ModelResponse(parts=[TextPart(f"Sorry: {answered[-1].content}")])
        return ModelResponse(parts=[ToolCallPart("refund", {"order_id": "B200"}, tool_call_id="call_1")])

    pydantic_ai = PydanticAIInstrumentor()
    pydantic_ai.instrument(tracer_provider=provider)
    instrument()
    try:
        toolset = MCPToolset(StdioTransport(command=sys.executable, args=[SERVER_APP, "stdio"],
                                            env=server_env(spans_file)), init_timeout=60)
        agent = Agent(FunctionModel(respond), name="customer_support", toolsets=[toolset])
        async with agent:
            result = await agent.run("refund B200")
    finally:
        pydantic_ai.uninstrument()
    assert REFUND_ERROR in result.output
    assert_mcp2_by_agent(exporter.spans, server_spans(spans_file), "pydantic_ai")


async def test_mcp2_langchain_mcp_adapters_is_error_fails_the_tool_span(instrument, provider, exporter,
                                                                        spans_file) -> None:
    """MCP-2 with LangChain's MCP adapters in a LangGraph agent: ``refund`` answers ``isError``."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_mcp_adapters.tools import load_mcp_tools
    from langgraph.prebuilt import create_react_agent

    from otel_agents.instrumentors.langchain import LangChainInstrumentor

    class ToolCallingFake(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    model = ToolCallingFake(responses=[
        AIMessage("", tool_calls=[{"name": "refund", "args": {"order_id": "B200"}, "id": "call_1"}]),
        AIMessage("Sorry, the refund service is down.")])
    langchain = LangChainInstrumentor()
    langchain.instrument(tracer_provider=provider)
    instrument()
    try:
        async with stdio_session(spans_file) as session:
            tools = [t for t in await load_mcp_tools(session) if t.name == "refund"]
            graph = create_react_agent(model, tools, name="customer_support")
            state = await graph.ainvoke({"messages": [HumanMessage("refund B200")]})
    finally:
        langchain.uninstrument()
    assert REFUND_ERROR in str(state["messages"][-2].content)  # the tool message the model saw
    assert_mcp2_by_agent(exporter.spans, server_spans(spans_file), "langchain")


async def test_mcp1_b_llama_index_mcp_tool_spec(instrument, provider, exporter, spans_file, client_file) -> None:
    """MCP-1 (b): a LlamaIndex ``FunctionAgent`` over ``McpToolSpec(BasicMCPClient(...))`` tools
    (``llama-index-tools-mcp``; its client opens a session, so a stdio server process, per request)."""
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.tools.mcp import BasicMCPClient, McpToolSpec

    from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor

    from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock

    brain = example("llama_index_agent")
    plan = [("lookup_order", {"order_id": "B200"}), ("check_refund_policy", {"order_id": "B200"})]

    def respond(messages: Any, **kwargs: Any) -> Any:
        # The tool spec's tools return the CallToolResult itself (the example's brain reads JSON text):
        # a fixed plan, then the last tool message as the answer.
        done = [m for m in messages if m.role == MessageRole.TOOL]
        if len(done) < len(plan):
            name, args = plan[len(done)]
            blocks: list = [ToolCallBlock(tool_call_id=f"call_{len(done) + 1}", tool_name=name, tool_kwargs=args)]
        else:
            blocks = [TextBlock(text=str(done[-1].content))]
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)

    llama_index = LlamaIndexInstrumentor()
    llama_index.instrument(tracer_provider=provider)
    instrument()
    try:
        client = BasicMCPClient(sys.executable, args=[SERVER_APP, "stdio"], env=server_env(spans_file), timeout=60)
        spec = McpToolSpec(client, allowed_tools=["lookup_order", "check_refund_policy"])
        agent = FunctionAgent(name="customer_support", description="Answers questions about orders and refunds.",
                              system_prompt=brain.SYSTEM_PROMPT, tools=await spec.to_tool_list_async(),
                              llm=brain.BrainLLM(response_generator=respond))
        output = await agent.run(user_msg=QUESTION)
    finally:
        llama_index.uninstrument()
    assert "30-day window" in str(output.response.content)
    names = ["lookup_order", "check_refund_policy"]
    assert_one_tool_span_per_call(exporter.spans, server_spans(spans_file), names)
    assert_fold(client_file, spans_file, names, answer="30-day window")
