"""LlamaIndex cases LI-1 … LI-5 (``../shared/cases/llama-index.md``) with real llama-index-core objects."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.span import SimpleSpan
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.retrievers import VectorIndexRetriever
from llama_index.core.tools import FunctionTool
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
from tests.llama_index import fakes
from tests.spans import SnapshotExporter, SpanSnapshot, ancestors, assert_refused_unknown_tool, parent_of, tree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def idx() -> Any:
    """A small vector index, built once and before instrumenting (so no spans from it)."""
    return fakes.index()


def one(spans: list[SpanSnapshot], name: str) -> SpanSnapshot:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, f"{len(found)} spans named {name!r}:\n{tree(spans)}"
    return found[0]


def named(spans: list[SpanSnapshot], name: str) -> list[SpanSnapshot]:
    return [s for s in spans if s.name == name]


def single_trace(spans: list[SpanSnapshot]) -> None:
    assert len({s.trace_id for s in spans}) == 1, tree(spans)


# -- LI-1 -------------------------------------------------------------------------------
def test_li1_query_engine_spans_under_one_query(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-1: retriever, embedding and model spans with inputs and outputs under one query span."""
    response = fakes.query_engine(idx).query("What is the capital of France?")

    spans = exporter.semantic()
    single_trace(spans)
    query = one(spans, "RetrieverQueryEngine")
    assert query.parent_id is None and query.semantic_kind == "chain"
    assert query.attributes["input.value"] == "What is the capital of France?"
    assert query.attributes["output.value"] == str(response)

    retriever = one(spans, "retrieval VectorIndexRetriever")
    assert retriever.parent_id == query.span_id
    assert retriever.attributes["gen_ai.retrieval.query.text"] == "What is the capital of France?"
    documents = retriever.json_attr("gen_ai.retrieval.documents")
    assert len(documents) == 2 and all("capital" in d["content"] for d in documents)
    assert retriever.attributes["retrieval.documents.0.document.content"] == documents[0]["content"]
    assert retriever.attributes["gen_ai.request.top_k"] == 2  # the retriever's similarity_top_k

    embedding = one(spans, "embeddings MockEmbedding")
    assert embedding.parent_id == retriever.span_id
    assert embedding.attributes["gen_ai.operation.name"] == "embeddings"
    assert embedding.attributes["gen_ai.embeddings.dimension.count"] == fakes.EMBED_DIM
    assert embedding.attributes["embedding.embeddings.0.embedding.text"] == "What is the capital of France?"

    synthesizer = one(spans, "CompactAndRefine")
    assert synthesizer.parent_id == query.span_id
    model = one(spans, "text_completion MockLLM")
    assert model.parent_id == synthesizer.span_id
    assert "What is the capital of France?" in model.attributes["gen_ai.input.messages"]
    assert model.json_attr("gen_ai.output.messages")[0]["parts"][0]["content"] == str(response)
    assert model.attributes["gen_ai.request.max_tokens"] == 8
    assert [s.semantic_kind for s in spans].count("model") == 1
    assert all(s.status is StatusCode.UNSET for s in spans)


def test_li1_async_query_has_one_model_span(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-1: ``aquery`` (MockLLM's ``acomplete`` falls back to ``complete``) still gives one model span."""
    asyncio.run(fakes.query_engine(idx).aquery("What is the capital of Spain?"))
    spans = exporter.semantic()
    single_trace(spans)
    assert len(exporter.semantic("model")) == 1, tree(spans)
    model = exporter.semantic("model")[0]
    assert parent_of(model, spans).name == "CompactAndRefine"


def test_li1_failing_llm_records_error_up_the_tree(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-1: an LLM that raises: ERROR on the model span and its ancestors, every span ended and
    exported, the user's exception unchanged, nothing left current."""
    error = RuntimeError("model is down")
    engine = fakes.query_engine(idx, llm=fakes.FailingLLM(error=error))
    with pytest.raises(RuntimeError) as raised:
        engine.query("What is the capital of France?")
    assert raised.value is error
    assert not trace.get_current_span().get_span_context().is_valid

    spans = exporter.semantic()
    model = one(spans, "text_completion FailingLLM")
    assert model.status is StatusCode.ERROR and model.attributes["error.type"] == "RuntimeError"
    for ancestor in ancestors(model, spans):
        assert ancestor.status is StatusCode.ERROR, tree(spans)
        assert ancestor.attributes["error.type"] == "RuntimeError"
    assert one(spans, "retrieval VectorIndexRetriever").status is StatusCode.UNSET
    assert all(s.end_time >= s.start_time > 0 for s in spans)
    assert instrumented.open_span_count() == 0


# -- LI-2 -------------------------------------------------------------------------------
def _run_agent(agent: FunctionAgent, message: str = "What is 2+3?") -> Any:
    async def go() -> Any:
        return await agent.run(user_msg=message)

    return asyncio.run(go())


@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "non-streaming"])
def test_li2_function_agent_is_an_agent(instrumented: Any, exporter: SnapshotExporter, app_tracer: Any,
                                        streaming: bool) -> None:
    """LI-2: a FunctionAgent run inside an application span: one trace, an agent span named after
    the agent, steps under it, each tool call one tool span under its step, one model span per call."""
    with app_tracer.start_as_current_span("app") as app:
        result = _run_agent(fakes.calculator(streaming=streaming))
    assert str(result) == "The answer is 5."

    spans = exporter.spans
    single_trace(spans)
    agent = one(spans, "invoke_agent calculator")
    assert agent.parent_id == app.get_span_context().span_id
    assert agent.semantic_kind == "agent"
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.agent.name"] == "calculator"
    assert agent.attributes["gen_ai.agent.description"] == "Adds numbers"
    assert agent.attributes["input.value"] == "What is 2+3?"
    assert agent.attributes["output.value"] == "The answer is 5."

    steps = [s for s in spans if s.semantic_kind == "chain"]
    assert {s.name for s in steps} >= {"init_run", "setup_agent", "run_agent_step", "parse_agent_output",
                                       "call_tool", "aggregate_tool_results"}
    assert all(s.parent_id == agent.span_id for s in steps), tree(spans)

    tool = one(spans, "execute_tool add")
    assert parent_of(tool, spans).name == "call_tool"
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
    assert tool.attributes["gen_ai.tool.call.result"] == "5"
    assert tool.attributes["gen_ai.tool.call.id"] == "call-1"

    models = [s for s in spans if s.semantic_kind == "model"]
    assert [s.name for s in models] == ["chat MockFunctionCallingLLM"] * 2, tree(spans)
    assert all(parent_of(m, spans).name == "run_agent_step" for m in models)
    first, second = sorted(models, key=lambda s: s.start_time)
    assert "gen_ai.response.finish_reasons" not in first.attributes  # the mock sends none
    assert first.json_attr("gen_ai.output.messages")[0]["parts"][0]["name"] == "add"
    assert first.json_attr("gen_ai.system_instructions") == [{"type": "text", "content": "You are a calculator."}]
    assert second.attributes["output.value"] == "The answer is 5."
    assert not any("_prepare_chat_with_tools" in s.name for s in spans)
    assert instrumented.open_span_count() == 0


def test_li2_agent_workflow_is_a_workflow_of_agents(instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-2: an AgentWorkflow → an invoke_workflow chain; each agent that takes over an agent span;
    the handoff is a tool call of the first agent, the answer the second agent's."""
    result = _run_agent(fakes.handoff_workflow())  # type: ignore[arg-type]
    assert str(result) == "The answer is 5."

    spans = exporter.semantic()
    single_trace(spans)
    workflow = one(spans, "invoke_workflow AgentWorkflow")
    assert workflow.parent_id is None
    assert workflow.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert workflow.attributes["output.value"] == "The answer is 5."
    triage, calculator = one(spans, "invoke_agent triage"), one(spans, "invoke_agent calculator")
    assert triage.parent_id == workflow.span_id and calculator.parent_id == workflow.span_id
    assert triage.end_time <= calculator.start_time
    assert calculator.attributes["output.value"] == "The answer is 5."

    handoff, add = one(spans, "execute_tool handoff"), one(spans, "execute_tool add")
    assert "ctx" not in json.loads(handoff.attributes["gen_ai.tool.call.arguments"])
    assert [a.name for a in ancestors(handoff, spans)][1:] == ["invoke_agent triage", "invoke_workflow AgentWorkflow"]
    assert [a.name for a in ancestors(add, spans)][1:] == ["invoke_agent calculator", "invoke_workflow AgentWorkflow"]
    models = exporter.semantic("model")
    assert len(models) == 3
    assert sum(1 for m in models if triage in ancestors(m, spans)) == 1


def test_li2_current_agent_span_inside_tools(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Inside a tool, ``otel_agents.current_agent_span()`` is the agent that called it, each of two
    concurrent runs getting its own (X-1's helper)."""
    import otel_agents

    seen: dict[str, int] = {}

    def add(a: int, b: int) -> int:
        """Add two integers."""
        agent = otel_agents.current_agent_span()
        seen[f"{agent.name}/{a}"] = agent.span.get_span_context().span_id
        return a + b

    def agent(a: int) -> FunctionAgent:
        return FunctionAgent(name="calculator", description="adds", tools=[FunctionTool.from_defaults(fn=add)],
                             llm=fakes.scripted_llm(fakes.tool_call("add", {"a": a, "b": 1}), "ok"))

    async def go() -> None:
        await asyncio.gather(agent(1).run(user_msg="1+1"), agent(2).run(user_msg="2+1"))

    asyncio.run(go())
    agents = exporter.semantic("agent")
    for a in (1, 2):
        tool = next(s for s in exporter.semantic("tool")
                    if json.loads(s.attributes["gen_ai.tool.call.arguments"])["a"] == a)
        owner = next(s for s in ancestors(tool, exporter.spans) if s.semantic_kind == "agent")
        assert seen[f"invoke_agent calculator/{a}"] == owner.span_id
    assert len({s.trace_id for s in agents}) == 2


def test_li2_tool_error_is_recorded_and_the_agent_recovers(instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-2: a tool that raises: its span is ERROR; the agent handles it and its run is not an error."""

    def explode(x: int) -> int:
        """Always fails."""
        raise ValueError("tool exploded")

    agent = FunctionAgent(name="fragile", description="fails", tools=[FunctionTool.from_defaults(fn=explode)],
                          llm=fakes.scripted_llm(fakes.tool_call("explode", {"x": 1}), "The tool failed."))
    assert str(_run_agent(agent)) == "The tool failed."
    spans = exporter.semantic()
    tool = one(spans, "execute_tool explode")
    assert tool.status is StatusCode.ERROR and tool.attributes["error.type"] == "ValueError"
    assert one(spans, "invoke_agent fragile").status is StatusCode.UNSET


def test_li2_a_call_of_a_tool_the_agent_lacks_is_a_refused_tool_span(instrumented: Any,
                                                                     exporter: SnapshotExporter) -> None:
    """The model calls ``explode`` (raises) and ``ad`` (no such tool) in one turn: the agent answers the second
    with an error ("Tool ad not found…") and runs nothing. That call is a refused tool span under its
    ``call_tool`` step: ERROR, ``error.type`` ``unknown_tool``, ``otel_agents.tool.denied``, its id, arguments and
    the agent's answer, zero length; the tool that raised keeps its own error. Ground truth: the tool results."""

    def explode(x: int) -> int:
        """Always fails."""
        raise ValueError("tool exploded")

    calls = fakes.tool_call("explode", {"x": 1}, "call-1")
    calls.blocks.append(fakes.ToolCallBlock(tool_call_id="call-2", tool_name="ad", tool_kwargs={"a": 2}))
    results: list = []

    def answer(messages: Any) -> str:
        results.extend(m.content for m in messages if m.role.value == "tool")
        return "done"

    agent = FunctionAgent(name="calc", description="adds", tools=[FunctionTool.from_defaults(fn=explode)],
                          llm=fakes.scripted_llm(calls, answer))
    assert str(_run_agent(agent)) == "done"
    [not_found] = [r for r in results if "not found" in r]
    spans = exporter.semantic()
    tools = sorted((s for s in spans if s.semantic_kind == "tool"), key=lambda s: s.attributes["gen_ai.tool.call.id"])
    assert [s.name for s in tools] == ["execute_tool explode", "execute_tool ad"], tree(spans)
    raised, refused = tools
    assert raised.attributes["error.type"] == "ValueError" and "otel_agents.tool.denied" not in raised.attributes
    assert_refused_unknown_tool(refused, {"a": 2}, not_found)
    assert parent_of(refused, spans).name == "call_tool"
    assert instrumented.open_span_count() == 0


def test_li2_model_error_propagates_to_the_agent(instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-2: a model call that raises: model, step and agent spans are ERROR; the caller gets the error."""
    error = RuntimeError("model unavailable")
    with pytest.raises(RuntimeError) as raised:
        _run_agent(fakes.calculator(llm=fakes.scripted_llm(error)))
    assert raised.value is error
    spans = exporter.semantic()
    model = one(spans, "chat MockFunctionCallingLLM")
    assert [a.name for a in ancestors(model, spans)] == ["run_agent_step", "invoke_agent calculator"]
    assert all(s.status is StatusCode.ERROR for s in [model, *ancestors(model, spans)])
    assert instrumented.open_span_count() == 0


def test_li2_cancelled_run_is_control_flow_not_error(instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-2: ``cancel_run()`` while a tool runs: spans end, none is ERROR, the cancellation is marked."""

    async def go() -> BaseException | None:
        started = asyncio.Event()

        async def wait_forever() -> str:
            """Waits until cancelled."""
            started.set()
            await asyncio.sleep(60)
            return "never"

        agent = FunctionAgent(name="waiter", description="waits",
                              tools=[FunctionTool.from_defaults(async_fn=wait_forever)],
                              llm=fakes.scripted_llm(fakes.tool_call("wait_forever", {}), "done"))
        handler = agent.run(user_msg="wait")
        await started.wait()
        await handler.cancel_run()
        try:
            await handler
        except BaseException as exc:  # noqa: BLE001 - the workflow's own cancellation error
            return exc
        return None

    raised = asyncio.run(go())
    assert type(raised).__name__ == "WorkflowCancelledByUser"
    spans = exporter.semantic()
    assert all(s.status is not StatusCode.ERROR for s in spans), tree(spans)
    assert one(spans, "execute_tool wait_forever").attributes["otel_agents.control_flow"].endswith("CancelledError")
    assert "otel_agents.control_flow" in one(spans, "invoke_agent waiter").attributes
    assert instrumented.open_span_count() == 0


def test_li2_one_span_when_a_subclass_calls_its_base(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """One span per logical call: an override that calls ``super()`` is not a second retriever span."""

    class LoggingRetriever(VectorIndexRetriever):
        def retrieve(self, str_or_query_bundle: Any) -> Any:
            return super().retrieve(str_or_query_bundle)

    retriever = LoggingRetriever(index=idx, similarity_top_k=1)
    nodes = retriever.retrieve("capital of Germany")
    assert len(nodes) == 1
    assert [s.name for s in exporter.semantic("retriever")] == ["retrieval LoggingRetriever"]


# -- LI-3 -------------------------------------------------------------------------------
def _stream_spans(exporter: SnapshotExporter) -> tuple[SpanSnapshot, SpanSnapshot, list[SpanSnapshot]]:
    spans = exporter.semantic()
    single_trace(spans)
    return one(spans, "RetrieverQueryEngine"), one(spans, "CompactAndRefine"), exporter.semantic("model")


def test_li3_stream_consumed_in_full(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-3: a streaming query read to the end: the model call nests under the query, every span
    ends, and the root's output is the streamed text."""
    response = fakes.query_engine(idx, streaming=True).query("What is the capital of France?")
    assert not any(s.name == "RetrieverQueryEngine" for s in exporter.spans)  # open until read
    text = "".join(response.response_gen)
    assert text

    query, synthesizer, models = _stream_spans(exporter)
    assert query.attributes["output.value"] == text
    assert "otel_agents.stream.abandoned" not in query.attributes
    assert len(models) == 1 and models[0].parent_id == synthesizer.span_id
    assert models[0].attributes["gen_ai.request.stream"] is True
    assert models[0].end_time <= synthesizer.end_time <= query.end_time
    assert instrumented.open_span_count() == 0


def test_li3_stream_read_with_helpers(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-3: ``get_response()`` (the response object's own reader) works on the wrapped stream."""
    response = fakes.query_engine(idx, streaming=True).query("What is the capital of France?")
    answer = response.get_response().response
    query, _, _ = _stream_spans(exporter)
    assert query.attributes["output.value"] == answer


def test_li3_stream_abandoned_half_way(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-3: one token read, then the response dropped: every span ends, marked abandoned."""
    response = fakes.query_engine(idx, streaming=True).query("What is the capital of France?")
    first = next(iter(response.response_gen))
    del response

    query, synthesizer, models = _stream_spans(exporter)
    for span in (query, synthesizer, *models):
        assert span.attributes.get("otel_agents.stream.abandoned") is True, span.name
        assert span.status is StatusCode.UNSET
    assert query.attributes["output.value"] == first
    assert instrumented.open_span_count() == 0


def test_li3_stream_never_consumed(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-3: a streaming response never read: its spans end, abandoned, when it is dropped (no model
    call ever happened, so no model span)."""
    response = fakes.query_engine(idx, streaming=True).query("What is the capital of France?")
    del response
    query, synthesizer, models = _stream_spans(exporter)
    assert models == []
    assert query.attributes["otel_agents.stream.abandoned"] is True
    assert synthesizer.attributes["otel_agents.stream.abandoned"] is True


def test_li3_stream_that_fails_marks_its_spans(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-3: the model fails when the stream is first read: the reader gets the error unchanged,
    the model span and the query spans holding the stream end with ERROR."""
    error = RuntimeError("stream broke")
    response = fakes.query_engine(idx, streaming=True, llm=fakes.FailingLLM(error)).query("capital?")
    with pytest.raises(RuntimeError) as raised:
        list(response.response_gen)
    assert raised.value is error
    query, synthesizer, models = _stream_spans(exporter)
    assert [s.status for s in (query, synthesizer, *models)] == [StatusCode.ERROR] * 3
    assert "output.value" not in query.attributes and "output.value" not in synthesizer.attributes  # none streamed
    assert instrumented.open_span_count() == 0


def _wait_for(condition: Any, deadline_s: float = 20.0) -> bool:
    """Poll ``condition`` (for the idle watchdog thread); a generous deadline, not a timing assertion."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_li3_unread_stream_ends_after_idle_timeout(idx: Any, instrumented: Any, exporter: SnapshotExporter,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """LI-3: a response kept but never read ends, abandoned, after OTEL_AGENTS_STREAM_IDLE_TIMEOUT;
    reading it later still yields the whole answer."""
    monkeypatch.setenv("OTEL_AGENTS_STREAM_IDLE_TIMEOUT", "0.05")
    response = fakes.query_engine(idx, streaming=True).query("What is the capital of France?")
    assert _wait_for(lambda: any(s.name == "RetrieverQueryEngine" for s in exporter.spans))
    query = one(exporter.semantic(), "RetrieverQueryEngine")
    assert query.attributes["otel_agents.stream.abandoned"] is True
    assert "".join(response.response_gen) == "text " * 7 + "text"


def test_li3_async_stream_consumed(idx: Any, instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-3: ``aquery`` with streaming: the async stream nests its (single) model call and fills the root."""

    async def go() -> str:
        response = await fakes.query_engine(idx, streaming=True).aquery("What is the capital of France?")
        return "".join([token async for token in response.async_response_gen()])

    text = asyncio.run(go())
    query, synthesizer, models = _stream_spans(exporter)
    assert query.attributes["output.value"] == text
    assert len(models) == 1 and models[0].parent_id == synthesizer.span_id


@pytest.mark.parametrize("how", ["consumed", "closed", "dropped"])
def test_li3_model_stream_spans_end(instrumented: Any, exporter: SnapshotExporter, how: str) -> None:
    """LI-3: a model's own stream: its span ends when read to the end, closed early or dropped unread."""
    stream = MockLLM(max_tokens=4).stream_complete("hello")
    assert exporter.semantic() == []  # the call has returned, the stream has not ended
    if how == "consumed":
        chunks = [c.delta for c in stream]
    elif how == "closed":
        next(stream)
        stream.close()
    del stream
    model = one(exporter.semantic(), "text_completion MockLLM")
    if how == "consumed":
        assert model.attributes["output.value"].startswith("text")
        assert "otel_agents.stream.abandoned" not in model.attributes
        assert len(chunks) == 4
    else:
        assert model.attributes["otel_agents.stream.abandoned"] is True
    assert model.status is StatusCode.UNSET
    assert instrumented.open_span_count() == 0


def test_li3_kept_model_stream_ends_after_idle_timeout(instrumented: Any, exporter: SnapshotExporter,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """LI-3: a model stream kept but not read ends, abandoned, after the idle timeout; reading it
    afterwards still works."""
    monkeypatch.setenv("OTEL_AGENTS_STREAM_IDLE_TIMEOUT", "0.05")
    stream = MockLLM(max_tokens=2).stream_complete("hello")
    assert _wait_for(lambda: bool(exporter.semantic("model")))
    assert one(exporter.semantic(), "text_completion MockLLM").attributes["otel_agents.stream.abandoned"] is True
    assert [c.delta for c in stream] == ["text ", "text"]
    assert instrumented.open_span_count() == 0


def test_li3_async_model_stream_closed_unread(instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-3: ``astream_chat`` awaited then closed without reading: the span ends, abandoned."""

    async def go() -> None:
        stream = await MockFunctionCallingLLM().astream_chat([ChatMessage(role="user", content="hi")])
        await stream.aclose()

    asyncio.run(go())
    model = one(exporter.semantic(), "chat MockFunctionCallingLLM")
    assert model.attributes["otel_agents.stream.abandoned"] is True
    assert instrumented.open_span_count() == 0


# -- LI-4 -------------------------------------------------------------------------------
def summarize(text: str) -> str:
    """Summarize a text with a model call of its own."""
    return MockLLM(max_tokens=3).complete(f"Summarize: {text}").text


def test_li4_model_called_inside_a_tool(instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-4: a FunctionTool whose function calls ``MockLLM.complete``: the model span is the tool's child."""
    FunctionTool.from_defaults(fn=summarize).call(text="hello world")
    spans = exporter.semantic()
    tool, model = one(spans, "execute_tool summarize"), one(spans, "text_completion MockLLM")
    assert model.parent_id == tool.span_id and tool.parent_id is None


def test_li4_model_inside_a_tool_inside_an_agent(instrumented: Any, exporter: SnapshotExporter) -> None:
    """LI-4: the same tool called by a FunctionAgent: agent → call_tool → tool → model."""
    agent = FunctionAgent(name="writer", description="summarizes",
                          tools=[FunctionTool.from_defaults(fn=summarize)],
                          llm=fakes.scripted_llm(fakes.tool_call("summarize", {"text": "hello"}), "ok"))
    _run_agent(agent)
    spans = exporter.semantic()
    model = one(spans, "text_completion MockLLM")
    assert [a.name for a in ancestors(model, spans)] == ["execute_tool summarize", "call_tool", "invoke_agent writer"]


# -- LI-5 -------------------------------------------------------------------------------
LI5_SCRIPT = textwrap.dedent("""
    import importlib.abc, sys

    class NoProviders(importlib.abc.MetaPathFinder):
        # behave as if no provider package (llama-index-llms-*, -embeddings-*) were installed
        def find_spec(self, name, path=None, target=None):
            if name.startswith(("llama_index.llms.", "llama_index.embeddings.")):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, NoProviders())

    from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
    assert not any(m == "llama_index" or m.startswith("llama_index.") for m in sys.modules), "imported at import time"

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)

    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    index = VectorStoreIndex.from_documents([Document(text="Paris is the capital of France.")],
                                            embed_model=MockEmbedding(embed_dim=4))
    index.as_query_engine(llm=MockLLM(max_tokens=2)).query("capital?")
    names = sorted({s.name for s in exporter.get_finished_spans()})
    providers = [m for m in sys.modules if m.startswith(("llama_index.llms.", "llama_index.embeddings."))]
    print("SPANS", names)
    print("PROVIDERS", providers)
""")


def test_li5_works_with_llama_index_core_alone() -> None:
    """LI-5: in a fresh process where no provider package can be imported, importing our
    instrumentor imports no LlamaIndex at all, and instrumenting and querying work."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run([sys.executable, "-c", LI5_SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "text_completion MockLLM" in done.stdout and "retrieval VectorIndexRetriever" in done.stdout
    assert "PROVIDERS []" in done.stdout


# -- uninstrument -------------------------------------------------------------------------
class ForeignSpanHandler(BaseSpanHandler[SimpleSpan]):
    """Another instrumentation's span handler, registered after ours."""

    seen: list[str] = []

    def new_span(self, id_: str, bound_args: Any, instance: Any = None, parent_span_id: Any = None,
                 tags: Any = None, **kwargs: Any) -> SimpleSpan:
        self.seen.append(id_)
        return SimpleSpan(id_=id_, parent_id=parent_span_id)

    def prepare_to_exit_span(self, id_: str, bound_args: Any, instance: Any = None, result: Any = None,
                             **kwargs: Any) -> Any:
        return self.open_spans.get(id_)

    def prepare_to_drop_span(self, id_: str, bound_args: Any, instance: Any = None, err: Any = None,
                             **kwargs: Any) -> Any:
        return self.open_spans.get(id_)


def test_uninstrument_removes_only_our_handlers(provider: Any, exporter: SnapshotExporter) -> None:
    """X-4 for the dispatcher: uninstrument removes our two handlers and keeps one added after them."""
    dispatcher = get_dispatcher()
    before = (list(dispatcher.span_handlers), list(dispatcher.event_handlers))
    inst = LlamaIndexInstrumentor()
    inst.instrument(tracer_provider=provider)
    foreign = ForeignSpanHandler()
    foreign.seen = []
    dispatcher.add_span_handler(foreign)
    try:
        inst.uninstrument()
        assert dispatcher.span_handlers == [*before[0], foreign]
        assert dispatcher.event_handlers == before[1]
        FunctionTool.from_defaults(fn=summarize).call(text="x")
        assert exporter.semantic() == []
        assert any(i.startswith("FunctionTool.call") for i in foreign.seen)
    finally:
        dispatcher.span_handlers = [h for h in dispatcher.span_handlers if h is not foreign]


def test_uninstrument_ends_spans_still_open(provider: Any, exporter: SnapshotExporter) -> None:
    """Spans still open at ``uninstrument()`` (a stream being read) end at once, marked evicted."""
    inst = LlamaIndexInstrumentor()
    inst.instrument(tracer_provider=provider)
    stream = MockLLM(max_tokens=3).stream_complete("hello")
    next(stream)
    inst.uninstrument()
    model = one(exporter.semantic(), "text_completion MockLLM")
    assert model.attributes["otel_agents.span.evicted"] is True
    assert [c.delta for c in stream] == ["text ", "text"]  # the user's stream is untouched


# -- workflows --------------------------------------------------------------------------
def test_custom_workflow_steps_nest_user_spans(instrumented: Any, exporter: SnapshotExporter,
                                               app_tracer: Any) -> None:
    """A plain Workflow: a chain named after it, each step (async, and sync in the runtime's
    executor thread) a chain under it, and the user's own span inside a step nests under the step."""
    from llama_index.core.workflow import Event, StartEvent, StopEvent, Workflow, step

    class Halfway(Event):
        value: int

    class Doubler(Workflow):
        @step
        async def start(self, ev: StartEvent) -> Halfway:
            with app_tracer.start_as_current_span("user-work"):
                return Halfway(value=ev.get("value") * 2)

        @step
        def finish(self, ev: Halfway) -> StopEvent:
            return StopEvent(result=ev.value + 1)

    async def go() -> Any:
        return await Doubler(timeout=10).run(value=20)

    assert asyncio.run(go()) == 41
    spans = exporter.spans
    single_trace(spans)
    run = one(spans, "Doubler")
    assert run.semantic_kind == "chain" and run.parent_id is None
    assert run.attributes["output.value"] == "41"
    start, finish = one(spans, "start"), one(spans, "finish")
    assert start.parent_id == run.span_id and finish.parent_id == run.span_id
    assert one(spans, "user-work").parent_id == start.span_id
    assert json.loads(finish.attributes["input.value"]) == {"event": "Halfway", "value": 40}


def test_user_model_classes_defined_after_instrument(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Issue #34 item 3: LLM classes the user writes after instrument() get one model span per request, with each
    request's usage as the model returned it (ground truth kept by the model): a ``CustomLLM`` subclass (its own
    ``complete``/``stream_complete``; ``chat`` comes from the base) and a ``FunctionCallingLLM`` subclass (here
    of LlamaIndex's mock, overriding ``achat`` with a ``super()`` call) running a ``FunctionAgent``."""
    from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    truth: list[tuple[int, int]] = []

    class InHouseLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="in-house-1")

        def _answer(self, prompt: str) -> tuple[str, dict]:
            counts = (len(prompt.split()), 3)
            truth.append(counts)
            return "It is sunny.", {"usage": {"prompt_tokens": counts[0], "completion_tokens": counts[1]}}

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            text, raw = self._answer(prompt)
            return CompletionResponse(text=text, raw=raw)

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            text, raw = self._answer(prompt)

            def gen() -> Any:
                yield CompletionResponse(text=text[:3], delta=text[:3])
                yield CompletionResponse(text=text, delta=text[3:], raw=raw)
            return gen()

    llm = InHouseLLM()
    assert llm.complete("What is the weather?").text == "It is sunny."
    assert "".join(r.delta for r in llm.stream_complete("And tomorrow in Paris?")) == "It is sunny."
    assert llm.chat([ChatMessage(role="user", content="Hi there")]).message.content == "It is sunny."
    models = exporter.semantic("model")
    assert len(models) == len(truth) == 3, tree(exporter.semantic())
    assert [(m.attributes["gen_ai.usage.input_tokens"], m.attributes["gen_ai.usage.output_tokens"])
            for m in models] == truth

    exporter.clear()
    calls: list[int] = []

    class InHouseFunctionLLM(MockFunctionCallingLLM):
        async def achat(self, messages: Any, **kwargs: Any) -> Any:
            calls.append(1)
            return await super().achat(messages, **kwargs)

    base = fakes.scripted_llm(fakes.tool_call("add", {"a": 2, "b": 3}), "The answer is 5.")
    agent_llm = InHouseFunctionLLM(response_generator=base.response_generator)
    assert str(_run_agent(fakes.calculator(llm=agent_llm, streaming=False))) == "The answer is 5."
    models = exporter.semantic("model")
    assert len(models) == len(calls) == 2, tree(exporter.semantic())
    assert one(exporter.spans, "execute_tool add").attributes["gen_ai.tool.call.id"] == "call-1"


# -- issue 34: stops and rejected answers ------------------------------------------------------------
def test_react_agent_rejected_answer_is_a_failed_step(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A ``ReActAgent`` answer its parser cannot read is sent back to the model (``retry_messages``): the
    ``run_agent_step`` that produced it is a failed step (``error.type`` ``output_rejected``, LlamaIndex's
    feedback as the description), the next answer is the agent's."""
    agent = ReActAgent(name="reactor", description="answers", tools=[FunctionTool.from_defaults(fn=fakes.add)],
                       llm=fakes.scripted_llm("Thought: hmm", "Thought: I can answer.\nAnswer: five"))
    async def run() -> Any:
        return await agent.run(user_msg="2+3?", memory=fakes.cheap_memory())

    result = asyncio.run(run())
    assert str(result) == "five"
    spans = exporter.semantic()
    steps = named(spans, "run_agent_step")
    assert [s.status for s in steps] == [StatusCode.ERROR, StatusCode.UNSET], tree(spans)
    assert steps[0].attributes["error.type"] == "output_rejected"
    assert "Could not parse output" in steps[0].status_description
    agent_span = one(spans, "invoke_agent reactor")
    assert agent_span.status is not StatusCode.ERROR and agent_span.attributes["output.value"] == "five"


@pytest.mark.parametrize("multi", [False, True], ids=["FunctionAgent", "AgentWorkflow"])
def test_early_stopping_generate_is_a_max_turns_stop(multi: bool, instrumented: Any,
                                                     exporter: SnapshotExporter) -> None:
    """``max_iterations`` reached with ``early_stopping_method="generate"``: LlamaIndex asks the model for a last
    answer (the run's output) and the agent span says the run was cut off (stop reason ``max_turns``); a run
    that finishes within its cap has no stop reason."""
    def agent() -> FunctionAgent:
        return fakes.calculator(fakes.scripted_llm(fakes.tool_call("add", {"a": 2, "b": 3}),
                                                   fakes.tool_call("add", {"a": 2, "b": 3}), "It is 5."))

    async def run(runner: Any, max_iterations: int) -> Any:
        return await runner.run(user_msg="2+3?", memory=fakes.cheap_memory(), max_iterations=max_iterations,
                                early_stopping_method="generate")

    def runner() -> Any:
        return AgentWorkflow(agents=[agent()], root_agent="calculator") if multi else agent()

    assert str(asyncio.run(run(runner(), 2))) == "It is 5."
    [stopped] = [s for s in exporter.semantic("agent")]
    assert stopped.attributes["otel_agents.run.stop_reason"] == "max_turns"
    exporter.clear()
    assert str(asyncio.run(run(runner(), 5))) == "It is 5."
    assert all("otel_agents.run.stop_reason" not in s.attributes for s in exporter.semantic())


def test_agent_workflow_cancel_run_is_a_cancelled_stop(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``handler.cancel_run()`` on an ``AgentWorkflow`` while a tool runs: the active agent's span has the stop
    reason ``cancelled`` (the workflow's own span is a chain: the agent carries the run's stop)."""

    async def go() -> None:
        started = asyncio.Event()

        async def wait_forever() -> str:
            """Waits until cancelled."""
            started.set()
            await asyncio.sleep(60)
            return "never"

        waiter = FunctionAgent(name="waiter", description="waits",
                               tools=[FunctionTool.from_defaults(async_fn=wait_forever)],
                               llm=fakes.scripted_llm(fakes.tool_call("wait_forever", {}), "done"))
        handler = AgentWorkflow(agents=[waiter], root_agent="waiter").run(user_msg="wait")
        await started.wait()
        await handler.cancel_run()
        with pytest.raises(Exception) as raised:
            await handler
        assert type(raised.value).__name__ == "WorkflowCancelledByUser"

    asyncio.run(go())
    assert one(exporter.semantic(), "invoke_agent waiter").attributes["otel_agents.run.stop_reason"] == "cancelled"
    assert instrumented.open_span_count() == 0


def test_model_span_server_is_where_the_llm_connects(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 inference span: server.address/port of the LLM's ``api_base`` (LlamaIndex's instrumentor
    alone), the host the fake received the request on; a mock LLM with no endpoint gets neither."""
    import httpx
    from llama_index.core.llms import ChatMessage as LIChatMessage
    from llama_index.llms.openai import OpenAI

    from tests.clients.fakes import chat_completion

    hosts: list[tuple[str, int]] = []

    def serve(request: Any) -> Any:
        hosts.append((request.url.host, request.url.port))
        return httpx.Response(200, json=chat_completion())

    llm = OpenAI(model="gpt-4o", api_key="test-key", max_retries=0, api_base="http://127.0.0.1:8011/v1",
                 http_client=httpx.Client(transport=httpx.MockTransport(serve)))
    llm.chat([LIChatMessage(role="user", content="Where is order A100?")])
    MockLLM(max_tokens=3).complete("hello")
    served, mock = exporter.semantic("model")
    assert hosts == [("127.0.0.1", 8011)]
    assert (served.attributes["server.address"], served.attributes["server.port"]) == hosts[0]
    assert not {"server.address", "server.port"} & set(mock.attributes)
