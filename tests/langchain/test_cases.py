"""Cases LC-1 … LC-6 of ``../shared/cases/langchain.md`` with real langchain-core and LangGraph
objects over offline fake models."""

from __future__ import annotations

import asyncio
import json
import logging
import warnings
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManager
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, Generation, LLMResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from opentelemetry import trace

from tests.langchain.fakes import ToolCallingChatModel, build_agent_graph, get_weather
from tests.spans import SnapshotExporter, ancestors, nearest, parent_of, tree


def _nothing_current() -> bool:
    return not trace.get_current_span().get_span_context().is_valid


def _one(spans: list[Any], name: str) -> Any:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, f"{name!r}: {len(found)} spans\n{tree(spans)}"
    return found[0]


def _chain() -> Any:
    return ChatPromptTemplate.from_messages([("human", "{q}")]) | ToolCallingChatModel(tool=None) | StrOutputParser()


# -- LC-1 ---------------------------------------------------------------------------------------
def _lc1_tool(app_tracer: Any) -> Any:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        with app_tracer.start_as_current_span("user-in-tool"):
            return f"found {city}"

    return lookup


def _assert_lc1(exporter: SnapshotExporter, lambda_name: str) -> None:
    spans = exporter.spans
    app, lam = _one(spans, "app"), _one(spans, lambda_name)
    tool_span = _one(spans, "execute_tool lookup")
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    assert lam.parent_id == app.span_id, tree(spans)
    assert _one(spans, "user-in-lambda").parent_id == lam.span_id, tree(spans)
    assert _one(spans, "user-in-tool").parent_id == tool_span.span_id, tree(spans)
    assert tool_span.parent_id == lam.span_id, tree(spans)


def test_lc1_user_spans_nest_under_lambda_and_tool_sync(instrumentor: Any, exporter: SnapshotExporter,
                                                        app_tracer: Any) -> None:
    """LC-1 (sync): a user span inside a RunnableLambda nests under the lambda's span, one inside
    a @tool under the tool's span; one trace."""
    lookup = _lc1_tool(app_tracer)

    def body(city: str) -> str:
        with app_tracer.start_as_current_span("user-in-lambda"):
            return lookup.invoke({"city": city})

    with app_tracer.start_as_current_span("app"):
        assert RunnableLambda(body, name="my_lambda").invoke("Paris") == "found Paris"
    assert _nothing_current()
    _assert_lc1(exporter, "my_lambda")


async def test_lc1_user_spans_nest_under_lambda_and_tool_async(instrumentor: Any, exporter: SnapshotExporter,
                                                               app_tracer: Any) -> None:
    """LC-1 (async): the same with ``ainvoke`` and an async lambda."""
    lookup = _lc1_tool(app_tracer)

    async def body(city: str) -> str:
        with app_tracer.start_as_current_span("user-in-lambda"):
            return await lookup.ainvoke({"city": city})

    with app_tracer.start_as_current_span("app"):
        assert await RunnableLambda(body, name="my_alambda").ainvoke("Paris") == "found Paris"
    assert _nothing_current()
    _assert_lc1(exporter, "my_alambda")


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_lc1_user_spans_nest_under_graph_node(mode: str, instrumentor: Any, exporter: SnapshotExporter,
                                              app_tracer: Any) -> None:
    """LC-1 (LangGraph): code in a graph node sees the node's span, also when LangGraph runs
    the node in its executor."""
    from langgraph.graph import END, START, MessagesState, StateGraph

    def step(state: MessagesState) -> dict[str, Any]:
        with app_tracer.start_as_current_span("user-in-node"):
            return {"messages": [AIMessage("done")]}

    graph = StateGraph(MessagesState)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_edge("step", END)
    app = graph.compile(name="one_step")
    inputs = {"messages": [HumanMessage("go")]}
    if mode == "invoke":
        app.invoke(inputs)
    else:
        asyncio.run(app.ainvoke(inputs))
    assert _nothing_current()
    spans = exporter.spans
    assert _one(spans, "user-in-node").parent_id == _one(spans, "step").span_id, tree(spans)
    assert _one(spans, "step").parent_id == _one(spans, "invoke_agent one_step").span_id


# -- LC-2 ---------------------------------------------------------------------------------------
async def test_lc2_async_runs_do_not_swallow_each_other(instrumentor: Any, exporter: SnapshotExporter,
                                                        app_tracer: Any) -> None:
    """LC-2: three awaited runs in one task, then three with asyncio.gather, then an application
    span: six separate root traces, the application span a root, nothing current after each await."""
    chain = _chain()
    for i in range(3):
        await chain.ainvoke({"q": f"q{i}"})
        assert _nothing_current()
    await asyncio.gather(*(chain.ainvoke({"q": f"g{i}"}) for i in range(3)))
    assert _nothing_current()
    with app_tracer.start_as_current_span("app"):
        pass
    spans = exporter.semantic()
    roots = [s for s in spans if s.parent_id is None]
    assert len(roots) == 6 and {s.name for s in roots} == {"RunnableSequence"}, tree(spans)
    assert len({s.trace_id for s in spans}) == 6
    for model in exporter.semantic("model"):
        assert parent_of(model, spans).name == "RunnableSequence"
    app = _one(exporter.spans, "app")
    assert app.parent_id is None and app.trace_id not in {s.trace_id for s in spans}


# -- LC-3 ---------------------------------------------------------------------------------------
def _assert_complete_usage(span: Any) -> None:
    a = span.attributes
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"], a["llm.token_count.total"]) == (11, 7, 18)
    assert (a["llm.token_count.prompt"], a["llm.token_count.completion"]) == (11, 7)
    assert a["gen_ai.usage.cache_read.input_tokens"] == 3
    assert a["gen_ai.usage.reasoning.output_tokens"] == 2
    assert span.status.name == "UNSET" and span.end_time


@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream", "astream"])
def test_lc3_partial_llm_output_usage_loses_to_usage_metadata(mode: str, instrumentor: Any,
                                                             exporter: SnapshotExporter,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """LC-3: ``llm_output`` reports only completion tokens, ``usage_metadata`` has everything:
    the model span carries the complete counts (cache and reasoning included), and no error."""
    model = ToolCallingChatModel(tool=None)
    with caplog.at_level(logging.WARNING):
        if mode == "invoke":
            model.invoke("hi")
        elif mode == "ainvoke":
            asyncio.run(model.ainvoke("hi"))
        elif mode == "stream":
            list(model.stream("hi"))
        else:
            async def consume() -> None:
                async for _ in model.astream("hi"):
                    pass
            asyncio.run(consume())
    [span] = exporter.semantic("model")
    _assert_complete_usage(span)
    assert not caplog.records, [r.getMessage() for r in caplog.records]


def test_lc3_llm_output_usage_used_when_the_message_has_none(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-3 (fallback): a provider that reports usage only in ``llm_output["token_usage"]``."""
    model = ToolCallingChatModel(tool=None, usage=None,
                                 llm_output_usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7})
    model.invoke("hi")
    [span] = exporter.semantic("model")
    a = span.attributes
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"], a["llm.token_count.total"]) == (5, 2, 7)


# -- LC-4 ---------------------------------------------------------------------------------------
def test_lc4_callbacks_with_serialized_none_and_names_in_kwargs(instrumentor: Any, exporter: SnapshotExporter,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """LC-4: start callbacks with ``serialized=None`` and the name only as a keyword argument
    (or none at all) give spans with sensible low-cardinality names, and nothing is logged."""
    with caplog.at_level(logging.WARNING):
        manager = CallbackManager.configure()
        run = manager.on_chain_start(None, {"q": "x"}, name="my_step")
        run.on_chain_end({"a": 1})
        manager.on_chain_start(None, {"q": "x"}).on_chain_end({})
        [llm] = manager.on_chat_model_start(None, [[HumanMessage("hi")]])
        llm.on_llm_end(LLMResult(generations=[[ChatGeneration(message=AIMessage("yo"))]]))
        [completion] = manager.on_llm_start(None, ["Say hi"], name="my_llm")
        completion.on_llm_end(LLMResult(generations=[[Generation(text="hi")]]))
        manager.on_tool_start(None, "Paris", name="lookup").on_tool_end("found")
        manager.on_tool_start(None, "Paris").on_tool_end("found")
        manager.on_retriever_start(None, "where", name="docs").on_retriever_end([])
    names = [s.name for s in exporter.semantic()]
    assert names == ["my_step", "chain", "chat", "text_completion", "execute_tool lookup", "execute_tool tool",
                     "retrieval docs"], names
    assert all(s.end_time for s in exporter.spans)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    assert instrumentor.handler.open_entries() == 0


# -- LC-5 ---------------------------------------------------------------------------------------
def _build(kind: str) -> Any:
    if kind == "hand_graph":
        return build_agent_graph(ToolCallingChatModel(), [get_weather], name="weather_agent")
    from langgraph.prebuilt import create_react_agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_react_agent(ToolCallingChatModel(), [get_weather], name="weather_agent")


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
@pytest.mark.parametrize("kind", ["hand_graph", "create_react_agent"])
def test_lc5_langgraph_agent(kind: str, mode: str, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-5: one agent span for the graph, one model span per model call, one tool span per
    tool call under the agent (through the ``tools`` node, never under a model span), with the
    tool call's id, arguments and result."""
    graph = _build(kind)
    inputs = {"messages": [HumanMessage("Paris")]}
    result = graph.invoke(inputs) if mode == "invoke" else asyncio.run(graph.ainvoke(inputs))
    assert result["messages"][-1].content == "It is sunny in Paris"
    spans = exporter.semantic()
    [agent] = exporter.semantic("agent")
    assert agent.name == "invoke_agent weather_agent" and agent.parent_id is None, tree(spans)
    assert agent.attributes["gen_ai.agent.name"] == "weather_agent"
    assert len(exporter.semantic("model")) == 2, tree(spans)
    [tool_span] = exporter.semantic("tool")
    assert nearest(tool_span, spans, "agent") == agent
    assert not any(a.semantic_kind in ("model", "tool") for a in ancestors(tool_span, spans)), tree(spans)
    assert parent_of(tool_span, spans).name == "tools" and parent_of(parent_of(tool_span, spans), spans) == agent
    a = tool_span.attributes
    assert a["gen_ai.tool.name"] == "get_weather" and a["gen_ai.tool.call.id"] == "call_1"
    assert a["gen_ai.tool.description"] == "Get the weather for a city."
    assert json.loads(a["gen_ai.tool.call.arguments"]) == {"city": "Paris"}
    assert a["gen_ai.tool.call.result"] == "sunny in Paris"
    first_model = exporter.semantic("model")[0]
    out = json.loads(first_model.attributes["gen_ai.output.messages"])
    assert out[0]["parts"][0] == {"type": "tool_call", "id": "call_1", "name": "get_weather",
                                  "arguments": {"city": "Paris"}}
    assert first_model.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert "It is sunny in Paris" in agent.attributes["output.value"]
    assert all(s.status.name == "UNSET" for s in spans)


# -- LC-6 ---------------------------------------------------------------------------------------
def test_lc6_stream_to_the_end_records_the_full_output(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-6: a chain streamed to its end ends with the full output (and its input, which LangChain
    only reports at the end of a stream)."""
    assert "".join(_chain().stream({"q": "hi"})) == "Hello there, friend."
    assert _nothing_current()
    seq = _one(exporter.semantic(), "RunnableSequence")
    assert seq.attributes["output.value"] == "Hello there, friend."
    assert json.loads(seq.attributes["input.value"]) == {"q": "hi"}
    assert not seq.attributes.get("otel_agents.stream.abandoned")
    [model] = exporter.semantic("model")
    assert model.attributes["output.value"] == "Hello there, friend."
    _assert_complete_usage(model)


async def test_lc6_astream_to_the_end_records_the_full_output(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-6 (async)."""
    chunks = [c async for c in _chain().astream({"q": "hi"})]
    assert "".join(chunks) == "Hello there, friend."
    seq = _one(exporter.semantic(), "RunnableSequence")
    assert seq.attributes["output.value"] == "Hello there, friend."
    assert not seq.attributes.get("otel_agents.stream.abandoned")


def _assert_abandoned(exporter: SnapshotExporter, instrumentor: Any, *names: str) -> None:
    assert _nothing_current()
    assert instrumentor.handler.open_entries() == 0
    spans = exporter.semantic()
    for name in names:
        span = _one(spans, name)
        assert span.end_time and span.attributes.get("otel_agents.stream.abandoned") is True, name
        assert span.status.name == "UNSET", name


def test_lc6_stream_broken_after_first_chunk(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-6: breaking out of a chain's stream after the first chunk ends its spans at once
    (no garbage collection needed), marked abandoned, not errors; nothing open or current."""
    for chunk in _chain().stream({"q": "hi"}):
        assert chunk == "Hello"
        break
    _assert_abandoned(exporter, instrumentor, "RunnableSequence", "chat fake-model-1")


async def test_lc6_astream_broken_after_first_chunk(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-6 (async): ``async for … break`` and the generator closed. LangChain closes the inner
    async generators through the event loop's finaliser, a few loop iterations later (no GC)."""
    stream = _chain().astream({"q": "hi"})
    async for _ in stream:
        break
    await stream.aclose()
    for _ in range(50):
        if not instrumentor.handler.open_entries():
            break
        await asyncio.sleep(0)
    _assert_abandoned(exporter, instrumentor, "RunnableSequence", "chat fake-model-1")


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_lc6_graph_stream_broken_after_first_chunk(mode: str, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-6 (LangGraph): a graph's stream closed early ends its agent span as abandoned."""
    graph = build_agent_graph(ToolCallingChatModel(), [get_weather], name="weather_agent")
    inputs = {"messages": [HumanMessage("Paris")]}
    if mode == "stream":
        for _ in graph.stream(inputs, stream_mode="messages"):
            break
    else:
        async def consume() -> None:
            stream = graph.astream(inputs)
            async for _ in stream:
                break
            await stream.aclose()
        asyncio.run(consume())
    _assert_abandoned(exporter, instrumentor, "invoke_agent weather_agent")
    [agent] = exporter.semantic("agent")
    assert agent.attributes["otel_agents.control_flow"] == "GeneratorExit"


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_lc6_model_stream_broken_after_first_chunk(mode: str, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-6 (a chat model's own stream)."""
    model = ToolCallingChatModel(tool=None)
    if mode == "stream":
        for _ in model.stream("hi"):
            break
    else:
        async def consume() -> None:
            stream = model.astream("hi")
            async for _ in stream:
                break
            await stream.aclose()
        asyncio.run(consume())
    _assert_abandoned(exporter, instrumentor, "chat fake-model-1")


async def test_lc6_astream_events_broken_early(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LC-6 (``astream_events``): breaking out after a few events cancels the run; its spans end
    as abandoned."""
    graph = build_agent_graph(ToolCallingChatModel(), [get_weather], name="weather_agent")
    stream = graph.astream_events({"messages": [HumanMessage("Paris")]}, version="v2")
    seen = 0
    async for _ in stream:
        seen += 1
        if seen == 5:
            break
    await stream.aclose()
    _assert_abandoned(exporter, instrumentor, "invoke_agent weather_agent")


@pytest.mark.parametrize("target", ["model", "graph"])
def test_lc6_astream_events_closed_after_first_event(target: str, instrumentor: Any,
                                                     exporter: SnapshotExporter) -> None:
    """Issue #34 (matrix ``graph.astream_events`` × ``break_close``): closed right after its first event,
    ``astream_events`` cancels its run before LangChain has a run manager, so LangChain never reports the
    run's end; the root run's span still ends at once, abandoned (not at eviction), and only once."""
    runnable = ToolCallingChatModel(tool=None) if target == "model" else \
        build_agent_graph(ToolCallingChatModel(), [get_weather], name="weather_agent")
    inputs = "hi" if target == "model" else {"messages": [HumanMessage("Paris")]}

    async def first_event_only() -> None:
        stream = runnable.astream_events(inputs, version="v2")
        async for _ in stream:
            break
        await stream.aclose()
        assert instrumentor.handler.open_entries() == 0  # ended with the stream, not by the run map's bound

    asyncio.run(first_event_only())
    name = "chat fake-model-1" if target == "model" else "invoke_agent weather_agent"
    _assert_abandoned(exporter, instrumentor, name)
    assert len(exporter.semantic()) == 1, [s.name for s in exporter.semantic()]
    assert not exporter.semantic()[0].attributes.get("otel_agents.span.evicted")


def test_lc6_model_astream_dropped_in_asyncio_run(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Issue #34 (matrix ``model.astream`` × ``break_drop``): an async model stream left after its first chunk
    and dropped without ``aclose()`` just before ``asyncio.run`` returns. LangChain reports that end only from
    a task the loop's shutdown cancels before it runs; the model span still ends abandoned, when the stream
    is dropped."""
    model = ToolCallingChatModel(tool=None)

    async def consume() -> None:
        async for _ in model.astream("hi"):
            break

    async def main() -> None:
        await asyncio.ensure_future(consume())  # (the loop finalises the stream while main still runs)

    asyncio.run(main())
    _assert_abandoned(exporter, instrumentor, "chat fake-model-1")
    assert not exporter.semantic()[0].attributes.get("otel_agents.span.evicted")


def test_lc6_model_astream_finalised_while_our_lock_is_held(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A dropped ``astream()`` is finalised wherever its last reference goes, by the garbage collector in any
    thread, also one that holds the handler's lock: no deadlock; the model span ends abandoned once the lock is
    free (the work goes to a thread of its own)."""
    model = ToolCallingChatModel(tool=None)
    handler = instrumentor.handler

    async def main() -> None:
        stream = model.astream("hi")
        async for _ in stream:
            break
        with handler._lock:
            del stream  # the finaliser runs here, the lock held (as when the collector runs it mid-callback)
        for _ in range(4000):  # a generous poll for the other thread, not a timing assertion
            if exporter.semantic("model"):
                break
            await asyncio.sleep(0.005)

    asyncio.run(main())
    _assert_abandoned(exporter, instrumentor, "chat fake-model-1")


@pytest.mark.parametrize("mode", ["invoke", "stream"])
def test_user_model_class_defined_after_instrument(mode: str, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Issue #34 item 3: a ``BaseChatModel`` subclass the user writes after instrument() (its own ``_generate``)
    in a LangGraph agent gets one model span per request (LangChain's callbacks reach every subclass), with
    each request's usage and finish reason as the model returned them (ground truth kept by the model), and
    the tool call's id on the tool span."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.outputs import ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool

    truth: list[tuple[tuple[int, int], str]] = []

    class InHouseChat(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "in-house"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            answered = any(m.type == "tool" for m in messages)
            counts, finish = ((20, 6), "stop") if answered else ((9, 3), "tool_calls")
            truth.append((counts, "stop" if answered else "tool_call"))
            usage = {"input_tokens": counts[0], "output_tokens": counts[1], "total_tokens": sum(counts)}
            message = AIMessage("It is sunny in Paris", usage_metadata=usage, response_metadata={"finish_reason": finish}) \
                if answered else AIMessage("", usage_metadata=usage, response_metadata={"finish_reason": finish},
                                           tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_ih"}])
            return ChatResult(generations=[ChatGeneration(message=message)])

    graph = build_agent_graph(InHouseChat(), [get_weather], name="weather_agent")
    inputs = {"messages": [HumanMessage("Paris")]}
    if mode == "invoke":
        result = graph.invoke(inputs)
        assert result["messages"][-1].content == "It is sunny in Paris"
    else:
        list(graph.stream(inputs))
    models = exporter.semantic("model")
    assert len(models) == len(truth) == 2, tree(exporter.semantic())
    for span, (counts, finish) in zip(models, truth):
        a = span.attributes
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == counts
        assert a["gen_ai.response.finish_reasons"] == (finish,)
    [tool_span] = exporter.semantic("tool")
    assert tool_span.attributes["gen_ai.tool.call.id"] == "call_ih"


class _SlowStart(ToolCallingChatModel):
    """The fake model, its stream's first chunk 50 ms after the request."""

    def _stream(self, *args: Any, **kwargs: Any) -> Any:
        import time

        time.sleep(0.05)
        yield from super()._stream(*args, **kwargs)


def test_a_streamed_model_call_is_timed_from_its_chunks(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A streamed call's model span has gen_ai.response.time_to_first_chunk (from LangChain's on_llm_new_token: the
    chunk really came 50 ms in) and gen_ai.request.stream true; the same call invoked whole has neither."""
    chain = ChatPromptTemplate.from_messages([("human", "{q}")]) | _SlowStart(tool=None) | StrOutputParser()
    chain.invoke({"q": "hi"})
    assert "".join(chain.stream({"q": "hi"})) == chain.invoke({"q": "hi"})
    whole, streamed, _ = [s for s in exporter.semantic() if s.semantic_kind == "model"]
    assert "gen_ai.response.time_to_first_chunk" not in whole.attributes
    assert "gen_ai.request.stream" not in whole.attributes
    ttfc = streamed.attributes["gen_ai.response.time_to_first_chunk"]
    assert 0.05 <= ttfc <= (streamed.end_time - streamed.start_time) / 1e9
    assert streamed.attributes["gen_ai.request.stream"] is True
