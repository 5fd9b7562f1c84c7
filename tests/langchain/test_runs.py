"""Parenting across batch/abatch/gather, what gets a span (folding), model/tool/retriever
attributes, errors, suppression, bounds, and uninstrument."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from typing import Any

import pytest
import wrapt
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel
from langchain_core.tools import ToolException, tool
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation

from otel_agents.instrumentors.langchain import LangChainInstrumentor
from tests.langchain.fakes import FakeRetriever, ToolCallingChatModel, build_agent_graph, get_weather
from tests.spans import SnapshotExporter, ancestors, parent_of, tree

CONFIG_MODULES = ("langchain_core.runnables.config", "langgraph._internal._runnable")


def _chain() -> Any:
    return ChatPromptTemplate.from_messages([("human", "{q}")]) | ToolCallingChatModel(tool=None) | StrOutputParser()


def _assert_runs_apart(exporter: SnapshotExporter, n: int, root_name: str) -> None:
    spans = exporter.semantic()
    traces: dict[int, list[Any]] = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    assert len(traces) == n, tree(spans)
    for members in traces.values():
        roots = [s for s in members if s.parent_id is None]
        assert [r.name for r in roots] == [root_name], tree(members)
        for s in members:
            if s is not roots[0]:
                assert roots[0] in ancestors(s, members), tree(members)


# -- parenting across LangChain's concurrency ----------------------------------------------------
@pytest.mark.parametrize("mode", ["batch", "abatch", "gather"])
def test_chain_runs_stay_apart(mode: str, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """``batch`` (thread pool), ``abatch`` and ``asyncio.gather``: one trace per input, the model
    span under its own sequence."""
    chain, inputs = _chain(), [{"q": f"q{i}"} for i in range(4)]
    if mode == "batch":
        chain.batch(inputs)
    elif mode == "abatch":
        asyncio.run(chain.abatch(inputs))
    else:
        async def main() -> None:
            await asyncio.gather(*(chain.ainvoke(i) for i in inputs))
        asyncio.run(main())
    _assert_runs_apart(exporter, 4, "RunnableSequence")
    assert not trace.get_current_span().get_span_context().is_valid


@pytest.mark.parametrize("mode", ["batch", "abatch"])
def test_graph_runs_stay_apart(mode: str, instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A LangGraph agent batched: LangGraph's executor threads, ToolNode's thread pool."""
    graph = build_agent_graph(ToolCallingChatModel(), [get_weather], name="weather_agent")
    inputs = [{"messages": [HumanMessage(f"city{i}")]} for i in range(3)]
    if mode == "batch":
        graph.batch(inputs)
    else:
        asyncio.run(graph.abatch(inputs))
    _assert_runs_apart(exporter, 3, "invoke_agent weather_agent")
    for tool_span in exporter.semantic("tool"):
        city = json.loads(tool_span.attributes["gen_ai.tool.call.arguments"])["city"]
        assert tool_span.attributes["gen_ai.tool.call.result"] == f"sunny in {city}"


def test_parallel_branches_share_their_parent(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """RunnableParallel runs its branches in threads; each branch nests under the parallel run."""
    parallel = RunnableParallel(a=RunnableLambda(lambda x: x, name="a"), b=_chain())
    parallel.invoke({"q": "hi"})
    spans = exporter.semantic()
    [root] = [s for s in spans if s.parent_id is None]
    assert {parent_of(s, spans).span_id for s in spans if s.name in ("a", "RunnableSequence")} == {root.span_id}


# -- what gets a span ------------------------------------------------------------------------------
def test_prompt_templates_and_parsers_are_folded_into_their_chain(instrumentor: Any,
                                                                  exporter: SnapshotExporter) -> None:
    """Prompt templates and output parsers get no span: the sequence's own input and output show
    them; the model is the sequence's child. On their own they make no span at all."""
    assert _chain().invoke({"q": "hi"}) == "Hello there, friend."
    spans = exporter.semantic()
    assert [s.name for s in spans] == ["RunnableSequence", "chat fake-model-1"], tree(spans)
    assert json.loads(spans[0].attributes["input.value"]) == {"q": "hi"}
    assert spans[0].attributes["output.value"] == "Hello there, friend."
    exporter.clear()
    ChatPromptTemplate.from_messages([("human", "{q}")]).invoke({"q": "hi"})
    StrOutputParser().invoke("text")
    assert exporter.semantic() == []
    assert instrumentor.handler.open_entries() == 0


def test_langgraph_bookkeeping_runs_are_hidden(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """LangGraph's hidden runs (``langsmith:hidden``) never show up."""
    build_agent_graph(ToolCallingChatModel(), [get_weather]).invoke({"messages": [HumanMessage("Paris")]})
    names = {s.name for s in exporter.semantic()}
    assert names == {"invoke_agent LangGraph", "agent", "route", "tools", "chat fake-model-1",
                     "execute_tool get_weather"}, names


# -- attributes ----------------------------------------------------------------------------------
def test_model_span_attributes(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Model, provider, request parameters, system instructions, input and output messages."""
    model = ToolCallingChatModel(tool=None, temperature=0.3)
    model.invoke([SystemMessage("Be brief."), HumanMessage("hi")], stop=["END"])
    [span] = exporter.semantic("model")
    a = span.attributes
    assert span.name == "chat fake-model-1" and span.kind == "CLIENT"
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == "fake-model-1"
    assert a["gen_ai.provider.name"] == "fakeprovider"
    assert a["gen_ai.request.temperature"] == 0.3
    assert a["gen_ai.request.stop_sequences"] == ("END",)
    assert json.loads(a["gen_ai.system_instructions"]) == [{"type": "text", "content": "Be brief."}]
    assert json.loads(a["gen_ai.input.messages"]) == [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    assert json.loads(a["gen_ai.output.messages"])[0]["parts"] == [{"type": "text", "content": "Hello there, friend."}]
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.response.id"] == "resp-2"


def test_model_span_server_output_type_and_choice_count(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 inference span, from what LangChain hands its callbacks (LangChain's instrumentor alone):
    server.address/port of the base URL the integration was given, gen_ai.output.type of the response_format
    with_structured_output asks for, gen_ai.request.choice.count from ``n`` (not 1); compared with the requests
    the fake received. A default endpoint (not passed on to callbacks), no format and no ``n``: none written."""
    import httpx
    from langchain_openai import ChatOpenAI
    from pydantic import BaseModel

    from tests.clients.fakes import Recorder, chat_completion

    class Order(BaseModel):
        status: str

    answer = chat_completion()
    answer["choices"] = [{"index": i, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": '{"status": "shipped"}'}} for i in range(2)]
    recorder = Recorder(answer)

    def chat_openai(**options: Any) -> Any:
        return ChatOpenAI(model="gpt-4o", api_key="test-key", max_retries=0,
                          http_client=httpx.Client(transport=httpx.MockTransport(recorder)), **options)

    local = chat_openai(n=2, base_url="http://127.0.0.1:8011/v1")
    local.with_structured_output(Order, method="json_schema").invoke("Where is order A100?")
    local.with_structured_output(Order, method="json_mode").invoke("Where is order A100? Answer in JSON.")
    chat_openai().invoke("Where is order A100?")
    schema, json_mode, plain = exporter.semantic("model")
    sent = recorder.requests
    assert [r.get("response_format", {}).get("type") for r in sent] == ["json_schema", "json_object", None]
    assert [r.get("n") for r in sent] == [2, 2, None]
    for span in (schema, json_mode):
        a = span.attributes
        assert (a["gen_ai.output.type"], a["gen_ai.request.choice.count"]) == ("json", 2)
        assert (a["server.address"], a["server.port"]) == ("127.0.0.1", 8011)
    assert not {"gen_ai.output.type", "gen_ai.request.choice.count", "server.address"} & set(plain.attributes)


def test_retriever_span(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Retrievers → retriever spans with the query and the documents."""
    docs = FakeRetriever().invoke("where is Paris")
    assert len(docs) == 2
    [span] = exporter.semantic("retriever")
    a = span.attributes
    assert span.name == "retrieval FakeRetriever"
    assert a["gen_ai.retrieval.query.text"] == "where is Paris"
    stored = json.loads(a["gen_ai.retrieval.documents"])
    assert [d["id"] for d in stored] == ["doc-1", "doc-2"] and stored[0]["score"] == 0.9
    assert a["retrieval.documents.0.document.content"] == "Paris is in France (where is Paris)"


def test_tool_errors(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A tool that raises: its span is an error and the exception reaches the caller unchanged.
    A ToolException that LangChain turns into the result (``handle_tool_error``) is an error too."""

    @tool
    def broken(city: str) -> str:
        """Always fails."""
        raise ValueError(f"no weather for {city}")

    @tool
    def handled(city: str) -> str:
        """Fails in a handled way."""
        raise ToolException("service unavailable")

    handled.handle_tool_error = True

    with pytest.raises(ValueError, match="no weather for Paris"):
        broken.invoke({"city": "Paris"})
    call = {"name": "handled", "args": {"city": "Paris"}, "id": "call_9", "type": "tool_call"}
    assert handled.invoke(call).status == "error"
    first, second = exporter.semantic("tool")
    assert first.status.name == "ERROR" and first.attributes["error.type"] == "ValueError"
    assert second.status.name == "ERROR" and second.attributes["gen_ai.tool.call.id"] == "call_9"
    assert second.attributes["gen_ai.tool.call.result"] == "service unavailable"


def test_a_handled_tool_error_is_an_in_band_failure_not_an_exception_of_ours(instrumentor: Any,
                                                                              exporter: SnapshotExporter) -> None:
    """A failure LangChain turned into the tool's result (``handle_tool_error``, ``handle_validation_error``) reaches
    no callback as an exception: the span says what LangChain said (``error.type`` ``tool_error``, the message
    as the description, as an MCP ``isError`` result), with no exception event naming a class of ours."""

    @tool
    def handled(city: str, days: int) -> str:
        """Fails in a handled way."""
        raise ToolException("service unavailable")

    handled.handle_tool_error = True
    handled.handle_validation_error = True
    replies = [handled.invoke({"name": "handled", "args": args, "id": f"call_{i}", "type": "tool_call"})
               for i, args in enumerate(({"city": "Paris", "days": 1}, {"city": "Paris", "days": "many"}))]
    assert [(r.status, r.content) for r in replies] == [("error", "service unavailable"),
                                                        ("error", "Tool input validation error")]
    spans = exporter.semantic("tool")
    assert [(s.status.name, s.attributes["error.type"], s.status_description, s.events) for s in spans] == [
        ("ERROR", "tool_error", reply.content, ()) for reply in replies]


def test_no_internal_warnings_in_normal_runs(instrumentor: Any, exporter: SnapshotExporter,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """None of our extractors fails on ordinary runs (a failure would be logged as a warning)."""
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        build_agent_graph(ToolCallingChatModel(), [get_weather]).invoke({"messages": [HumanMessage("Paris")]})
        list(_chain().stream({"q": "hi"}))
        asyncio.run(_chain().ainvoke({"q": "hi"}))
        FakeRetriever().invoke("q")
    assert [r for r in caplog.records if r.name == "otel_agents"] == []


# -- suppression, bounds ---------------------------------------------------------------------------
def test_suppress_instrumentation(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """Inside ``suppress_instrumentation()`` a run and everything under it (also on LangGraph's
    executor threads) makes no span, and the tool body sees none."""
    seen: list[bool] = []

    @tool
    def probe(city: str) -> str:
        """Records whether a span is current."""
        seen.append(trace.get_current_span().get_span_context().is_valid)
        return city

    graph = build_agent_graph(ToolCallingChatModel(tool="probe"), [probe])
    with suppress_instrumentation():
        graph.invoke({"messages": [HumanMessage("Paris")]})
        asyncio.run(graph.ainvoke({"messages": [HumanMessage("Paris")]}))
    assert exporter.spans == [] and seen == [False, False]
    assert instrumentor.handler.open_entries() == 0
    graph.invoke({"messages": [HumanMessage("Paris")]})
    assert exporter.semantic("tool") and seen[-1] is True


def test_runs_never_reported_ended_are_bounded(provider: Any, exporter: SnapshotExporter) -> None:
    """A run LangChain is never told has ended (code of the user's own starting a run through LangChain's
    callback manager and never ending it) stays open only until the run map's bound pushes it out, or until
    ``uninstrument()``."""
    from langchain_core.callbacks import CallbackManager

    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider, max_open_runs=2)
    try:
        CallbackManager.configure().on_chain_start({}, {"q": "hi"}, name="left_open")
        assert inst.handler.open_entries() == 1  # a start and nothing else
        for _ in range(3):
            _chain().invoke({"q": "hi"})
        assert inst.handler.open_entries() == 0
        [evicted] = [s for s in exporter.semantic() if s.attributes.get("otel_agents.span.evicted")]
        assert evicted.name == "left_open" and evicted.end_time
    finally:
        inst.uninstrument()


# -- uninstrument --------------------------------------------------------------------------------
def _config_functions() -> list[Any]:
    return [vars(importlib.import_module(m))["_set_config_context"] for m in CONFIG_MODULES]


def test_uninstrument_restores_langchain(provider: Any, exporter: SnapshotExporter) -> None:
    """X-4 (details): uninstrument removes our configure hook and our wrappers, and stops spans;
    instrumenting again works (and does not double anything)."""
    from langchain_core.tracers import context as hooks

    originals = _config_functions()
    hooks_before = list(hooks._configure_hooks)
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    assert all(isinstance(f, wrapt.FunctionWrapper) for f in _config_functions())
    assert len(hooks._configure_hooks) == len(hooks_before) + 1
    inst.uninstrument()
    assert all(now is before for now, before in zip(_config_functions(), originals))
    assert hooks._configure_hooks == hooks_before
    _chain().invoke({"q": "hi"})
    assert exporter.spans == []
    inst.instrument(tracer_provider=provider)
    try:
        _chain().invoke({"q": "hi"})
        assert [s.name for s in exporter.semantic()] == ["RunnableSequence", "chat fake-model-1"]
    finally:
        inst.uninstrument()


def test_uninstrument_keeps_a_later_wrapper_working(provider: Any, exporter: SnapshotExporter,
                                                    app_tracer: Any) -> None:
    """X-4 (details): another library wraps ``_set_config_context`` after us; our uninstrument
    leaves its wrapper in place and working, ours inert under it; instrumenting again reuses ours."""
    module = importlib.import_module("langchain_core.runnables.config")
    original = vars(module)["_set_config_context"]
    calls: list[int] = []

    def theirs(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        calls.append(1)
        return wrapped(*args, **kwargs)

    seen: list[bool] = []
    lam = RunnableLambda(lambda x: seen.append(trace.get_current_span().get_span_context().is_valid), name="probe")
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    ours = vars(module)["_set_config_context"]
    wrapt.wrap_function_wrapper(module, "_set_config_context", theirs)
    try:
        inst.uninstrument()
        lam.invoke(1)
        assert calls and seen == [False] and exporter.spans == []
        inst.instrument(tracer_provider=provider)
        assert vars(module)["_set_config_context"].__wrapped__ is ours  # not wrapped a second time
        lam.invoke(1)
        assert seen == [False, True] and [s.name for s in exporter.semantic()] == ["probe"]
        inst.uninstrument()
    finally:
        setattr(module, "_set_config_context", original)


def test_a_run_that_ends_with_open_children_closes_them(instrumentor: Any, exporter: SnapshotExporter) -> None:
    """A parent run that ends while a child is still open (what a broken stream looks like) ends
    the child as abandoned and is marked abandoned itself; no callback made a span current, and the
    tool's end reported later finds nothing left to do."""
    from langchain_core.callbacks import CallbackManager

    outer = CallbackManager.configure().on_chain_start(None, {"q": 1}, name="outer")
    slow = outer.get_child().on_tool_start({"name": "slow", "description": "Takes long."}, "x")
    outer.on_chain_end({"partial": True})
    assert [s.name for s in exporter.semantic()] == ["outer", "execute_tool slow"]
    assert all(s.attributes.get("otel_agents.stream.abandoned") for s in exporter.semantic())
    assert not trace.get_current_span().get_span_context().is_valid
    slow.on_tool_end("done")
    assert [s.name for s in exporter.semantic()] == ["outer", "execute_tool slow"]
    assert not trace.get_current_span().get_span_context().is_valid
    assert instrumentor.handler.open_entries() == 0


def test_circular_and_odd_inputs(instrumentor: Any, exporter: SnapshotExporter,
                                 caplog: pytest.LogCaptureFixture) -> None:
    """X-6 (chains): a circular, deeply nested input is recorded as valid JSON, without errors."""
    circular: dict[str, Any] = {"name": "loop", "items": [1, {b"bytes": {1, 2}}]}
    circular["self"] = circular
    deep: dict[str, Any] = {"messages": [HumanMessage("hi")]}
    for _ in range(50):
        deep = {"inner": deep}
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        RunnableLambda(lambda x: "ok", name="odd").invoke({"circular": circular, "deep": deep})
    [span] = exporter.semantic()
    json.loads(span.attributes["input.value"])
    assert [r for r in caplog.records if r.name == "otel_agents"] == []
