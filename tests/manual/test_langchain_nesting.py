"""Decorated code and LangChain/LangGraph spans nest in both directions (issue 11):
a decorated tool used by a LangGraph agent, and LangChain runs called inside a decorated agent.

Needs the LangChain instrumentor (``otel_agents.instrumentors.langchain``)."""

from __future__ import annotations

from typing import Any, Sequence

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph.prebuilt")
langchain_instrumentor = pytest.importorskip("otel_agents.instrumentors.langchain")

from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.tools import tool as lc_tool  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402

import otel_agents  # noqa: E402
from tests.spans import SnapshotExporter, nearest, tree  # noqa: E402


class OneToolCallModel(BaseChatModel):
    """Asks for ``tool_name(order_id="A1")`` once, then answers with the tool's result."""

    tool_name: str = "lookup_order"

    @property
    def _llm_type(self) -> str:
        return "one-tool-call-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "OneToolCallModel":
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if results:
            message = AIMessage(content=f"Answer: {results[-1].content}")
        else:
            message = AIMessage(content="", tool_calls=[{"name": self.tool_name, "args": {"order_id": "A1"},
                                                          "id": "call_1", "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture
def langchain(provider: Any) -> Any:
    inst = langchain_instrumentor.LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    inst.uninstrument()


def test_decorated_tool_used_by_a_langgraph_agent(langchain: Any, exporter: SnapshotExporter) -> None:
    """The framework's tool span is the one tool span (no duplicate from the decorator), it sits
    under the LangGraph agent span, and current_agent_span() inside the tool is that agent's span."""
    seen: list[Any] = []

    @otel_agents.tool
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        seen.append(otel_agents.current_agent_span())
        return f"{order_id} shipped"

    graph = create_react_agent(OneToolCallModel(), [lc_tool(lookup_order)], name="support_graph")
    result = graph.invoke({"messages": [("user", "where is A1?")]})
    assert result["messages"][-1].content == "Answer: A1 shipped"

    spans = exporter.semantic()
    tools = [s for s in spans if s.semantic_kind == "tool"]
    assert [t.name for t in tools] == ["execute_tool lookup_order"], tree(spans)
    tool_span = tools[0]
    assert tool_span.attributes["otel_agents.framework"] == "langchain"
    assert tool_span.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A1"}
    agent_span = nearest(tool_span, spans, "agent")
    assert agent_span is not None and agent_span.attributes["otel_agents.framework"] == "langchain", tree(spans)
    assert seen[0] is not None
    assert seen[0].span.get_span_context().span_id == agent_span.span_id


def test_decorated_tool_with_its_own_name_nests_under_the_framework_tool(langchain: Any,
                                                                        exporter: SnapshotExporter) -> None:
    """A decorated function the framework calls under another tool name is a call of its own: a child span."""

    @otel_agents.tool(name="order_db")
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        return f"{order_id} shipped"

    graph = create_react_agent(OneToolCallModel(), [lc_tool(lookup_order)])
    graph.invoke({"messages": [("user", "where is A1?")]})
    spans = exporter.semantic()
    names = {s.name: s for s in spans}
    assert names["execute_tool order_db"].parent_id == names["execute_tool lookup_order"].span_id, tree(spans)
    assert names["execute_tool order_db"].attributes["otel_agents.framework"] == "manual"


def test_langchain_runs_inside_a_decorated_agent(langchain: Any, exporter: SnapshotExporter) -> None:
    """A RunnableLambda and a LangGraph agent called inside a decorated agent nest under it, in one trace,
    carry its run context, and current_agent_span() finds the innermost agent either way."""
    seen: dict[str, Any] = {}

    @otel_agents.tool
    def price(order_id: str) -> float:
        seen["price"] = otel_agents.current_agent_span()
        return 9.5

    def summarise(text: str) -> str:
        seen["lambda"] = otel_agents.current_agent_span()
        return f"{text} (EUR {price('A1')})"

    @lc_tool
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        seen["lc_tool"] = otel_agents.current_agent_span()
        return f"{order_id} shipped"

    summary = RunnableLambda(summarise, name="summarise")
    graph = create_react_agent(OneToolCallModel(), [lookup_order], name="support_graph")

    @otel_agents.agent(name="outer")
    def outer(question: str) -> str:
        answer = graph.invoke({"messages": [("user", question)]})["messages"][-1].content
        return summary.invoke(answer)

    with otel_agents.using_session("conv-9"):
        assert outer("where is A1?") == "Answer: A1 shipped (EUR 9.5)"

    spans = exporter.semantic()
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    names = {s.name: s for s in spans}
    root = names["invoke_agent outer"]
    assert root.parent_id is None
    lambda_span = names["summarise"]
    assert lambda_span.parent_id == root.span_id, tree(spans)
    assert names["execute_tool price"].parent_id == lambda_span.span_id, tree(spans)
    inner_agent = next(s for s in spans if s.semantic_kind == "agent" and s is not root)
    assert inner_agent.parent_id == root.span_id, tree(spans)
    assert all(s.attributes.get("session.id") == "conv-9" for s in spans), tree(spans)
    root_id = seen["lambda"].span.get_span_context().span_id
    assert root_id == root.span_id and seen["price"] is seen["lambda"]
    assert seen["lc_tool"].span.get_span_context().span_id == inner_agent.span_id
    assert seen["lc_tool"].parent is seen["lambda"]
