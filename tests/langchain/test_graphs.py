"""LangGraph specifics: interrupts (paused runs), ``Command``/``ParentCommand`` control flow,
nested graphs as agents, session and user ids."""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypedDict

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from tests.hostile import HostileStr, StrRaises
from tests.langchain.fakes import ToolCallingChatModel, build_agent_graph, get_weather
from tests.spans import SnapshotExporter, parent_of, tree


class State(TypedDict):
    x: str


def _ask(state: State) -> dict[str, Any]:
    return {"x": interrupt("approve?")}


def _interrupting_graph(name: str | None = None) -> Any:
    graph = StateGraph(State)
    graph.add_node("ask", _ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile(name=name) if name else graph.compile(checkpointer=InMemorySaver())


def _attr(exporter: SnapshotExporter, name: str, key: str) -> Any:
    return next(s for s in exporter.semantic() if s.name == name).attributes.get(key)


@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream"])
def test_interrupt_marks_the_run_paused(mode: str, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """``interrupt()`` in a node: the node's GraphInterrupt is control flow (no error), the root
    agent span is marked paused (ECP status "paused"); resuming with ``Command(resume=…)`` is a
    new, unpaused run."""
    graph = _interrupting_graph()
    config = {"configurable": {"thread_id": f"t-{mode}"}}
    if mode == "invoke":
        result = graph.invoke({"x": ""}, config)
        assert "__interrupt__" in result
    elif mode == "ainvoke":
        asyncio.run(graph.ainvoke({"x": ""}, config))
    else:
        list(graph.stream({"x": ""}, config))
    spans = exporter.semantic()
    assert all(s.status.name == "UNSET" for s in spans), tree(spans)
    assert _attr(exporter, "invoke_agent LangGraph", "otel_agents.run.paused") is True
    assert _attr(exporter, "ask", "otel_agents.control_flow") == "langgraph.errors.GraphInterrupt"
    assert _attr(exporter, "invoke_agent LangGraph", "otel_agents.stream.abandoned") is None
    exporter.clear()
    assert graph.invoke(Command(resume="yes"), config) == {"x": "yes"}
    assert _attr(exporter, "invoke_agent LangGraph", "otel_agents.run.paused") is None


def test_interrupt_inside_a_tool(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """An interrupt raised in a tool run by ToolNode: the tool and the agent are paused (the
    ``tools`` node in between is not), none is an error."""

    @tool
    def transfer(city: str) -> str:
        """Needs approval."""
        return interrupt(f"approve {city}?")

    graph = build_agent_graph(ToolCallingChatModel(tool="transfer"), [transfer], name="bank",
                              checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("Paris")]}, {"configurable": {"thread_id": "t1"}})
    spans = exporter.semantic()
    assert all(s.status.name == "UNSET" for s in spans), tree(spans)
    for name in ("invoke_agent bank", "execute_tool transfer"):
        assert _attr(exporter, name, "otel_agents.run.paused") is True, name
    assert _attr(exporter, "tools", "otel_agents.run.paused") is None
    assert instrumentor.handler.open_entries() == 0


def test_nested_graph_is_an_agent_and_its_interrupt_pauses_the_outer_run(instrumentor: Any,
                                                                          exporter: SnapshotExporter) -> None:
    """A compiled graph used as a node of another graph gets an agent span of its own, under the
    outer graph's node span; its interrupt pauses the outer run too."""
    outer = StateGraph(State)
    outer.add_node("delegate", _interrupting_graph(name="approver"))
    outer.add_edge(START, "delegate")
    app = outer.compile(checkpointer=InMemorySaver(), name="boss")
    asyncio.run(app.ainvoke({"x": ""}, {"configurable": {"thread_id": "t1"}}))
    spans = exporter.semantic()
    inner = next(s for s in spans if s.name == "invoke_agent approver")
    assert inner.semantic_kind == "agent" and parent_of(inner, spans).name == "delegate", tree(spans)
    assert [s.name for s in exporter.semantic("agent")] == ["invoke_agent boss", "invoke_agent approver"]
    paused = [s.name for s in spans if s.attributes.get("otel_agents.run.paused")]
    assert paused == ["invoke_agent boss", "invoke_agent approver", "ask"], tree(spans)
    assert all(s.status.name == "UNSET" for s in spans), tree(spans)


def test_runnables_inside_a_node_stay_chains(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Only graphs become agents: a chain that runs inside a node (same metadata as a nested
    graph's root run) stays a chain."""
    from langchain_core.runnables import RunnableLambda

    steps = RunnableLambda(lambda s: s, name="first") | RunnableLambda(lambda s: {"x": "done"}, name="second")
    graph = StateGraph(State)
    graph.add_node("work", lambda s: steps.invoke(s))
    graph.add_edge(START, "work")
    graph.compile(name="worker").invoke({"x": ""})
    kinds = {s.name: s.semantic_kind for s in exporter.semantic()}
    assert kinds == {"invoke_agent worker": "agent", "work": "chain", "RunnableSequence": "chain",
                     "first": "chain", "second": "chain"}, kinds


def test_parent_command_and_goto_are_not_errors(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """``Command(graph=Command.PARENT)`` raises ParentCommand through the subgraph: control flow,
    not an error, and not a pause; the outer run carries on."""

    def hand_back(state: State) -> Command:
        return Command(graph=Command.PARENT, goto="after", update={"x": "from sub"})

    sub = StateGraph(State)
    sub.add_node("hand_back", hand_back)
    sub.add_edge(START, "hand_back")
    outer = StateGraph(State)
    outer.add_node("sub", sub.compile(name="helper"))
    outer.add_node("after", lambda s: {"x": s["x"] + "+after"})
    outer.add_edge(START, "sub")
    assert outer.compile().invoke({"x": ""}) == {"x": "from sub+after"}
    spans = exporter.semantic()
    assert all(s.status.name == "UNSET" for s in spans), tree(spans)
    assert _attr(exporter, "invoke_agent helper", "otel_agents.control_flow") == "langgraph.errors.ParentCommand"
    assert not any(s.attributes.get("otel_agents.run.paused") for s in spans)


def test_recursion_limit_is_an_error(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """GraphRecursionError is a real error on the root; the user's exception passes unchanged."""
    graph = StateGraph(State)
    graph.add_node("loop", lambda s: {"x": s["x"] + "."})
    graph.add_edge(START, "loop")
    graph.add_edge("loop", "loop")
    with pytest.raises(GraphRecursionError):
        graph.compile(name="looper").invoke({"x": ""}, {"recursion_limit": 3})
    [agent] = exporter.semantic("agent")
    assert agent.status.name == "ERROR"
    assert agent.attributes["error.type"] == "langgraph.errors.GraphRecursionError"


@pytest.mark.parametrize(("config", "session", "user"), [
    ({"configurable": {"thread_id": "thread-7"}, "metadata": {"user_id": "u-1"}}, "thread-7", "u-1"),
    ({"metadata": {"session_id": "s-1", "thread_id": "t-1", "user_id": 42}}, "s-1", "42"),
    ({"metadata": {"conversation_id": "c-1"}}, "c-1", None),
    # an id that cannot be written as text loses only itself: the next session key, the user id and tags land
    ({"metadata": {"session_id": StrRaises(), "thread_id": "t-1", "user_id": "u-1"}}, "t-1", "u-1"),
    ({"metadata": {"session_id": 10 ** 5000, "user_id": "u-1"}}, None, "u-1"),
    ({"metadata": {"session_id": "s-1", "user_id": StrRaises()}}, "s-1", None),
    ({"metadata": {"session_id": HostileStr("s-h"), "user_id": "u-1"}}, "s-h", "u-1"),  # a str subclass: its value
])
def test_session_and_user_from_metadata(config: dict, session: str, user: str | None, instrumentor: Any,
                                        exporter: SnapshotExporter) -> None:
    """``session_id``/``conversation_id``/``thread_id`` (LangGraph copies the checkpointer's
    ``configurable.thread_id`` into metadata) → ``session.id`` and ``gen_ai.conversation.id``,
    ``user_id`` → ``user.id``, on every span of the run; the caller's tags → ``tag.tags``."""
    graph = build_agent_graph(ToolCallingChatModel(), [get_weather], name="assistant")
    graph.invoke({"messages": [HumanMessage("Paris")]}, {**config, "tags": ["nightly"]})
    spans = exporter.semantic()
    assert {s.semantic_kind for s in spans} == {"agent", "chain", "model", "tool"}
    for s in spans:
        assert s.attributes.get("session.id") == session, s.name
        assert s.attributes.get("gen_ai.conversation.id") == session, s.name
        assert s.attributes.get("user.id") == user, s.name
        assert s.attributes.get("tag.tags") == ("nightly",), s.name


def test_session_on_a_plain_model_call(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """The same keys on a run that is not a graph."""
    ToolCallingChatModel(tool=None).invoke("hi", {"metadata": {"session_id": "s-9", "user_id": "u-9"}})
    [span] = exporter.semantic()
    assert (span.attributes["session.id"], span.attributes["user.id"]) == ("s-9", "u-9")


def test_run_context_and_langchain_tags_combine(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """``otel_agents.using_session``/``using_tags`` around a run reach every span, also those
    opened on LangGraph's executor threads; LangChain tags are added to ``using_tags``' tags."""
    import otel_agents

    graph = build_agent_graph(ToolCallingChatModel(), [get_weather], name="assistant")
    with otel_agents.using_session("conv-1"), otel_agents.using_tags(["beta"]):
        graph.invoke({"messages": [HumanMessage("Paris")]}, {"tags": ["nightly"]})
    spans = exporter.semantic()
    assert {s.attributes.get("session.id") for s in spans} == {"conv-1"}
    assert {s.attributes.get("tag.tags") for s in spans} == {("beta", "nightly")}


def test_current_agent_span_inside_concurrent_runs(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """X-1 (helper): inside each of 10 concurrent runs, ``otel_agents.current_agent_span()``
    called in the tool returns that run's own agent span."""
    import otel_agents

    found: dict[str, Any] = {}

    @tool
    def whoami(city: str) -> str:
        """Reports the agent span."""
        found[city] = otel_agents.current_agent_span()
        return city

    graph = build_agent_graph(ToolCallingChatModel(tool="whoami"), [whoami], name="assistant")

    async def main() -> None:
        await asyncio.gather(*(graph.ainvoke({"messages": [HumanMessage(f"c{i}")]}) for i in range(10)))

    asyncio.run(main())
    agents = {s.span_id: s for s in exporter.semantic("agent")}
    tools_by_city = {json.loads(s.attributes["gen_ai.tool.call.arguments"])["city"]: s
                     for s in exporter.semantic("tool")}
    assert len(found) == 10
    for city, agent_span in found.items():
        assert agent_span is not None and agent_span.span.get_span_context().span_id in agents
        assert agent_span.span.get_span_context().trace_id == tools_by_city[city].trace_id

