"""Cases PA-1 … PA-4 (``../shared/cases/pydantic-ai.md``), plus deferred and approval-required tool calls."""

from __future__ import annotations

import asyncio
import gc
import json
import time
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

import otel_agents
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved

from tests.spans import SnapshotExporter, SpanSnapshot, assert_refused_unknown_tool, nearest, parent_of, tree

from .agents import STREAM_TEXT, Deps, approval_agent, calculator_agent, deferred_agent, lookup_agent, order_agent, \
    retry_agent, router_agent, streaming_agent
from otel_agents._spans.finalisers import settle

ABANDONED = "otel_agents.stream.abandoned"


def only(exporter: SnapshotExporter, kind: str) -> SpanSnapshot:
    spans = exporter.semantic(kind)
    assert len(spans) == 1, tree(exporter.semantic())
    return spans[0]


# -- PA-1 --------------------------------------------------------------------------------------
def test_pa1_tool_span_has_name_call_id_arguments_result(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-1: over TestModel, the tool span has name, call id, arguments and result, under the agent span."""
    result = order_agent().run_sync("Where is my order?")
    tool = only(exporter, "tool")
    agent = only(exporter, "agent")
    assert tool.name == "execute_tool lookup_order"
    assert tool.attributes["gen_ai.tool.name"] == "lookup_order"
    assert tool.attributes["gen_ai.tool.call.id"] == "pyd_ai_tool_call_id__lookup_order"
    assert tool.json_attr("gen_ai.tool.call.arguments") == {"order_id": 0}
    assert tool.attributes["gen_ai.tool.call.result"] == "order 0: shipped"
    assert tool.attributes["gen_ai.tool.description"] == "Look up an order."
    assert parent_of(tool, exporter.spans) == agent
    assert agent.name == "invoke_agent support"
    assert agent.attributes["output.value"] == result.output


def test_pa1_function_model_call_id_and_arguments(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-1: the call id the model chose and the arguments it sent, over FunctionModel."""
    lookup_agent().run_sync("order 42", deps=Deps(marker="A-1"))
    tool = only(exporter, "tool")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_1"
    assert tool.json_attr("gen_ai.tool.call.arguments") == {"query": "order 42"}
    assert tool.attributes["gen_ai.tool.call.result"] == "found A-1"
    assert nearest(tool, exporter.spans, "agent") is not None


# -- PA-2 --------------------------------------------------------------------------------------
def test_pa2_run_stream_consumed_ends_before_exit(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-2: run_stream consumed to the end: the agent span ends when the stream is done, with the output,
    before the ``async with`` is left; the model span has its token counts."""
    seen_inside: list[list[str]] = []

    async def main() -> None:
        async with streaming_agent().run_stream("hi") as result:
            chunks = [c async for c in result.stream_text(delta=True, debounce_by=None)]
            assert "".join(chunks) == STREAM_TEXT
            seen_inside.append([s.semantic_kind for s in exporter.semantic()])

    asyncio.run(main())
    assert sorted(seen_inside[0]) == ["agent", "model"], "spans were still open after the stream was consumed"
    agent, model = only(exporter, "agent"), only(exporter, "model")
    assert agent.attributes["output.value"] == STREAM_TEXT
    assert ABANDONED not in agent.attributes and agent.status is not StatusCode.ERROR
    assert model.attributes["gen_ai.usage.output_tokens"] == len(STREAM_TEXT.split())
    assert model.attributes["gen_ai.request.stream"] is True
    assert model.end_time <= agent.end_time


def test_pa2_run_stream_broken_early_is_abandoned(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-2: breaking out of run_stream ends the agent span at ``__aexit__`` with the abandoned marker,
    no output and no error; the model span keeps the tokens reported so far."""

    async def main() -> None:
        async with streaming_agent().run_stream("hi") as result:
            async for _ in result.stream_text(delta=True, debounce_by=None):
                break

    asyncio.run(main())
    agent, model = only(exporter, "agent"), only(exporter, "model")
    assert agent.attributes[ABANDONED] is True
    assert "output.value" not in agent.attributes
    assert agent.status is not StatusCode.ERROR
    assert model.attributes[ABANDONED] is True
    assert model.attributes["gen_ai.usage.output_tokens"] == 1
    assert model.attributes["gen_ai.usage.input_tokens"] > 0


def test_pa2_run_stream_sync_get_output_without_with(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-2: run_stream_sync + get_output() with no ``with``: the spans end at get_output(), while the
    result is still referenced (pydantic-ai's own spans would wait for garbage collection)."""
    result = streaming_agent().run_stream_sync("hi")
    assert result.get_output() == STREAM_TEXT
    agent, model = only(exporter, "agent"), only(exporter, "model")
    assert agent.attributes["output.value"] == STREAM_TEXT
    assert model.attributes["gen_ai.usage.output_tokens"] == len(STREAM_TEXT.split())
    assert result is not None  # still alive: the end did not come from collection
    del result
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    assert len(exporter.semantic()) == 2


def test_pa2_run_stream_sync_with_block(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-2: run_stream_sync in a ``with``: ended as soon as get_output() returns, inside the block."""
    with streaming_agent().run_stream_sync("hi") as result:
        result.get_output()
        assert [s.semantic_kind for s in exporter.semantic()] == ["agent", "model"]
    assert only(exporter, "agent").attributes["output.value"] == STREAM_TEXT


def test_pa2_run_stream_sync_abandoned_result_still_held(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-2: run_stream_sync abandoned (one chunk taken, no ``with``, result kept alive): the agent span
    ends when the iterator is dropped, with the abandoned marker, not when the result is collected."""
    result = streaming_agent().run_stream_sync("hi")
    first = next(iter(result.stream_text(delta=True, debounce_by=None)))
    assert first
    agent, model = only(exporter, "agent"), only(exporter, "model")
    assert agent.attributes[ABANDONED] is True and "output.value" not in agent.attributes
    assert agent.status is not StatusCode.ERROR
    assert model.attributes[ABANDONED] is True
    assert model.attributes["gen_ai.usage.output_tokens"] >= 1
    assert result is not None
    del result
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    assert len(exporter.semantic()) == 2, "collection must not add or re-end spans"


def test_pa2_run_stream_sync_idle_iterator_times_out(instrument: Any, exporter: SnapshotExporter) -> None:
    """PA-2: an iterator kept but no longer consumed ends its run as abandoned after the idle timeout
    (``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``), with the result and the iterator both still alive."""
    instrument(stream_idle_timeout=0.05)
    result = streaming_agent().run_stream_sync("hi")
    chunks = iter(result.stream_text(delta=True, debounce_by=None))
    next(chunks)
    deadline = time.monotonic() + 30  # generous: the watchdog thread only has to get scheduled
    while not exporter.semantic("agent") and time.monotonic() < deadline:
        time.sleep(0.02)
    agent = only(exporter, "agent")
    assert agent.attributes[ABANDONED] is True
    assert only(exporter, "model").end_time <= agent.end_time
    del chunks, result
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread


def test_pa2_stream_after_a_tool_call(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-2: a streamed run that calls a tool first: both model spans and the tool span end before the agent span."""
    with lookup_agent().run_stream_sync("order 7", deps=Deps(marker="M")) as result:
        text = "".join(result.stream_text(delta=True, debounce_by=None))
    assert text.startswith("answer: found M")
    spans = exporter.semantic()
    agent = only(exporter, "agent")
    assert [s.semantic_kind for s in spans] == ["agent", "model", "tool", "model"], tree(spans)
    assert all(s.end_time <= agent.end_time for s in spans)
    assert agent.attributes["output.value"] == text


# -- PA-4 --------------------------------------------------------------------------------------
def test_pa4_structured_output_and_model_retry(instrumented: Any, exporter: SnapshotExporter) -> None:
    """PA-4: a tool raising ModelRetry once: an errored tool span, then a successful one; the agent
    span's output is the structured result as JSON, and the run itself is not an error."""
    agent, calls = retry_agent()
    result = agent.run_sync("How many people live in Paris?")
    assert calls["n"] == 2
    tools = exporter.semantic("tool")
    assert [t.status for t in tools] == [StatusCode.ERROR, StatusCode.UNSET], tree(exporter.semantic())
    assert tools[0].attributes["error.type"] == "pydantic_ai.exceptions.ToolRetryError"
    assert "census service busy" in tools[0].status_description
    assert tools[1].attributes["gen_ai.tool.call.result"] == "2100000"
    assert tools[0].attributes["gen_ai.tool.call.id"] != tools[1].attributes["gen_ai.tool.call.id"]
    run = only(exporter, "agent")
    assert run.status is StatusCode.UNSET
    assert run.attributes["output.mime_type"] == "application/json"
    assert json.loads(run.attributes["output.value"]) == result.output.model_dump() == \
        {"city": "Paris", "population": 2100000}


# -- deferred and approval-required tool calls -----------------------------------------------------
def test_approval_required_pauses_the_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A tool needing approval: the run is marked paused (not an error) and the tool runs on resume."""
    agent = approval_agent()
    first = agent.run_sync("delete /tmp/x")
    assert isinstance(first.output, DeferredToolRequests)
    paused = only(exporter, "agent")
    assert paused.attributes["otel_agents.run.paused"] is True
    assert paused.status is StatusCode.UNSET
    assert exporter.semantic("tool") == []
    exporter.clear()
    approvals = DeferredToolResults(approvals={c.tool_call_id: ToolApproved() for c in first.output.approvals})
    agent.run_sync(message_history=first.all_messages(), deferred_tool_results=approvals)
    resumed = only(exporter, "agent")
    assert "otel_agents.run.paused" not in resumed.attributes
    assert only(exporter, "tool").attributes["gen_ai.tool.call.result"] == "deleted a"


def test_call_deferred_is_control_flow(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A tool raising CallDeferred: its span is paused control flow, not an error; the run is paused."""
    deferred_agent().run_sync("run the job")
    tool, agent = only(exporter, "tool"), only(exporter, "agent")
    assert tool.status is StatusCode.UNSET
    assert tool.attributes["otel_agents.control_flow"] == "pydantic_ai.exceptions.CallDeferred"
    assert tool.attributes["otel_agents.run.paused"] is True
    assert agent.attributes["otel_agents.run.paused"] is True


@pytest.mark.parametrize("content", [True, False])
def test_model_span_details(instrument: Any, exporter: SnapshotExporter, content: bool) -> None:
    """Model spans: model and provider, request parameters, messages (content switch), usage with
    cache tokens, finish reasons (always recorded: not content)."""
    instrument(capture_content=content)
    lookup_agent().run_sync("order 9", deps=Deps(marker="Q"), model_settings={"temperature": 0.2, "seed": 7})
    first, second = exporter.semantic("model")
    assert first.name == "chat fake-llm"
    assert first.attributes["gen_ai.request.model"] == "fake-llm"
    assert first.attributes["gen_ai.response.model"] == "fake-llm"
    assert first.attributes["gen_ai.provider.name"] == "function"
    assert first.attributes["gen_ai.request.temperature"] == 0.2
    assert first.attributes["gen_ai.request.seed"] == 7
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert (first.attributes["gen_ai.usage.input_tokens"], first.attributes["gen_ai.usage.output_tokens"]) == (20, 4)
    assert second.attributes["gen_ai.usage.cache_read.input_tokens"] == 4
    if not content:
        assert not any(k.startswith(("gen_ai.input", "gen_ai.output", "input.", "output.", "gen_ai.system"))
                       for s in exporter.semantic() for k in s.attributes)
        return
    assert first.json_attr("gen_ai.system_instructions") == [{"type": "text", "content": "You look orders up."}]
    assert first.json_attr("gen_ai.input.messages") == [{"role": "user", "parts": [{"type": "text",
                                                                                    "content": "order 9"}]}]
    assert first.json_attr("gen_ai.output.messages") == [{
        "role": "assistant", "finish_reason": "tool_call",
        "parts": [{"type": "tool_call", "id": "call_1", "name": "lookup", "arguments": {"query": "order 9"}}]}]
    history = second.json_attr("gen_ai.input.messages")
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[2]["parts"] == [{"type": "tool_call_response", "id": "call_1", "response": "found Q"}]
    assert second.attributes["output.value"] == "answer: found Q"


def test_rejected_tool_arguments_are_an_errored_tool_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Arguments that fail the tool's schema: an errored tool span (the call never ran), then the retried call."""
    assert calculator_agent().run_sync("double 4").output == "8"
    bad, good = exporter.semantic("tool")
    assert (bad.attributes["gen_ai.tool.call.id"], bad.status) == ("bad", StatusCode.ERROR)
    assert bad.json_attr("gen_ai.tool.call.arguments") == {"n": "not a number"}
    assert (good.attributes["gen_ai.tool.call.id"], good.status) == ("good", StatusCode.UNSET)
    assert good.attributes["gen_ai.tool.call.result"] == "8"


def test_a_call_of_a_tool_the_agent_lacks_is_a_refused_tool_span(instrumented: Any, exporter: SnapshotExporter,
                                                                  envelopes: list) -> None:
    """The model calls ``lookup`` and ``lokup`` (no such tool) in one response: PydanticAI answers the second with a
    retry ("Unknown tool name…", cause ``unknown_tool``) before any tool hook. It is a refused tool span under the
    agent, once though the model is asked twice more: ERROR, ``error.type`` ``unknown_tool``,
    ``otel_agents.tool.denied``, its id and arguments, PydanticAI's answer as the result, zero length; the envelope
    lists both calls (ok, error). Ground truth: the run's messages."""
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from tests.exporters.conftest import check

    from .agents import lookup

    def answer(messages: list, info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("lookup", {"query": "a"}, tool_call_id="c1"),
                                        ToolCallPart("lokup", {"query": "b"}, tool_call_id="c2")])
        return ModelResponse(parts=[TextPart(f"answer {len(messages)}")])

    agent = Agent(FunctionModel(answer), name="support", deps_type=Deps)
    agent.tool(lookup)

    @agent.output_validator
    def once_more(output: str) -> str:
        if output == "answer 3":
            raise ModelRetry("again")
        return output

    result = agent.run_sync("go", deps=Deps())
    assert result.output == "answer 5"
    [told] = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts
              if getattr(p, "tool_call_id", None) == "c2"]
    spans = exporter.semantic()
    tools = [s for s in spans if s.semantic_kind == "tool"]
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in tools) == ["c1", "c2"], tree(spans)
    [refused] = [s for s in tools if s.attributes["gen_ai.tool.call.id"] == "c2"]
    assert refused.name == "execute_tool lokup"
    assert_refused_unknown_tool(refused, {"query": "b"}, told.content)
    assert parent_of(refused, spans).name == "invoke_agent support"
    [env] = check(envelopes)
    assert sorted((c["id"], c["status"]) for c in env["tool_calls"]) == [("c1", "ok"), ("c2", "error")]


def test_nested_agent_runs_under_the_tool_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A tool that delegates to another agent: the inner agent span is a child of the tool span."""
    router_agent(order_agent()).run_sync("where is my order?")
    agents = exporter.semantic("agent")
    assert [a.name for a in agents] == ["invoke_agent router", "invoke_agent support"]
    delegate = next(t for t in exporter.semantic("tool") if t.name == "execute_tool ask_support")
    assert parent_of(agents[1], exporter.spans) == delegate
    assert agents[1].trace_id == agents[0].trace_id


def test_current_agent_span_inside_concurrent_runs(instrumented: Any, exporter: SnapshotExporter) -> None:
    """X-1 helper: ``otel_agents.current_agent_span()`` inside the tool is that run's own agent span."""
    seen: dict[str, int] = {}

    def probe(tag: str) -> None:
        span = otel_agents.current_agent_span()
        seen[tag] = span.span.get_span_context().span_id if span is not None else 0

    async def main() -> None:
        agent = lookup_agent()
        await asyncio.gather(*(agent.run(f"order {i}", deps=Deps(tag=str(i), probe=probe)) for i in range(8)))

    asyncio.run(main())
    agents = {a.attributes["input.value"]: a.span_id for a in exporter.semantic("agent")}
    assert seen == {str(i): agents[f"order {i}"] for i in range(8)}


def test_a_request_a_capability_answers_has_no_model_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``SkipModelRequest`` from a capability's ``before_model_request``, or a ``wrap_model_request`` that returns
    without calling its handler: the model is never asked, so there is no model span; the answer is the run's
    output. A request the model does answer still gets its span."""
    from dataclasses import dataclass

    from pydantic_ai import Agent, SkipModelRequest
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    asked: list[int] = []

    def model(messages: Any, info: Any) -> ModelResponse:
        asked.append(1)
        return ModelResponse(parts=[TextPart("from the model")])

    @dataclass(eq=False)
    class Skip(AbstractCapability[Any]):
        async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
            raise SkipModelRequest(ModelResponse(parts=[TextPart("from the cache")]))

    @dataclass(eq=False)
    class ShortCircuit(AbstractCapability[Any]):
        async def wrap_model_request(self, ctx: Any, *, request_context: Any, handler: Any) -> Any:
            return ModelResponse(parts=[TextPart("short-circuited")])

    assert Agent(FunctionModel(model), name="a", capabilities=[Skip()]).run_sync("hi").output == "from the cache"
    assert Agent(FunctionModel(model), name="b", capabilities=[ShortCircuit()]).run_sync("hi").output == \
        "short-circuited"
    assert not asked and not [s for s in exporter.spans if s.semantic_kind == "model"]
    outputs = {s.name: s.attributes.get("output.value") for s in exporter.spans if s.semantic_kind == "agent"}
    assert outputs == {"invoke_agent a": "from the cache", "invoke_agent b": "short-circuited"}
    assert Agent(FunctionModel(model), name="c").run_sync("hi").output == "from the model"
    assert asked and len([s for s in exporter.spans if s.semantic_kind == "model"]) == 1


def test_a_rejected_output_is_a_failed_step(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A structured output that fails validation, then one the model gets right: one ``validate_output`` chain
    span, ERROR, between the two model spans (each with its own usage); no tool span for the output tool."""
    from pydantic import BaseModel

    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    class Weather(BaseModel):
        city: str
        sky: str

    def model(messages: Any, info: Any) -> ModelResponse:
        args = {"city": "Paris"} if len(messages) == 1 else {"city": "Paris", "sky": "sunny"}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    result = Agent(FunctionModel(model), output_type=Weather, name="w").run_sync("Weather in Paris?")
    assert result.output == Weather(city="Paris", sky="sunny")
    kinds = [(s.name, s.semantic_kind, s.status) for s in sorted(exporter.spans, key=lambda s: s.start_time)
             if s.semantic_kind in ("model", "chain", "tool")]
    assert [(k, st) for _, k, st in kinds] == [("model", StatusCode.UNSET), ("chain", StatusCode.ERROR),
                                              ("model", StatusCode.UNSET)]
    rejected = [s for s in exporter.spans if s.semantic_kind == "chain"][0]
    assert rejected.name == "validate_output" and rejected.attributes["error.type"].endswith("ValidationError")


def test_an_output_run_stream_rejects_is_a_failed_step_not_a_failed_request(instrumented: Any,
                                                                            exporter: SnapshotExporter,
                                                                            envelopes: list) -> None:
    """``run_stream()`` cannot ask again for an output its validator rejects: it raises ``UnexpectedModelBehavior``
    while the streamed response is still open. The model answered in full, so its span is as in ``run()``: not
    failed, not abandoned, with the usage and output it streamed; the rejection is the ``validate_output`` step
    under the agent (as in ``run()``), and the agent span has the error. The envelope counts two errors (the step,
    the run), not three. Ground truth: what the fake streamed, the exception the caller got."""
    from pydantic_ai import Agent, ModelRetry, RunContext
    from pydantic_ai.exceptions import UnexpectedModelBehavior
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    from tests.exporters.conftest import check

    async def stream(messages: Any, info: Any) -> Any:
        for word in STREAM_TEXT.split(" "):
            yield word + " "

    agent = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart(STREAM_TEXT)]), stream_function=stream),
                  name="st")

    @agent.output_validator
    def reject(ctx: RunContext, output: str) -> str:
        if not ctx.partial_output:
            raise ModelRetry("not good enough")
        return output

    async def main() -> list:
        async with agent.run_stream("go") as result:
            return [text async for text in result.stream_text()]

    with pytest.raises(UnexpectedModelBehavior, match="retries are not supported"):
        asyncio.run(main())
    spans = exporter.semantic()
    model, step, run = only(exporter, "model"), only(exporter, "chain"), only(exporter, "agent")
    assert model.status is StatusCode.UNSET and ABANDONED not in model.attributes, model.attributes
    assert model.attributes["gen_ai.usage.output_tokens"] == len(STREAM_TEXT.split(" "))
    assert STREAM_TEXT in model.attributes["gen_ai.output.messages"]
    assert step.name == "validate_output" and step.status is StatusCode.ERROR
    assert parent_of(step, spans) == run and parent_of(model, spans) == run
    assert run.status is StatusCode.ERROR and run.attributes["error.type"].endswith("UnexpectedModelBehavior")
    [env] = check(envelopes)
    assert env["metrics"]["errors"] == 2, env["metrics"]


def _slow_start_agent(output_type: Any = str) -> Any:
    """A FunctionModel whose streamed answer's first chunk comes 50 ms after the request (and whose whole answer
    is the same text)."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    def whole(messages: Any, info: Any) -> Any:
        return ModelResponse(parts=[TextPart('{"city": "Paris", "population": 2}' if output_type is not str
                                             else STREAM_TEXT)])

    async def stream(messages: Any, info: Any) -> Any:
        await asyncio.sleep(0.05)
        for word in STREAM_TEXT.split(" "):
            yield word + " "

    return Agent(FunctionModel(whole, stream_function=stream), output_type=output_type)


def test_a_streamed_request_is_timed_from_its_first_chunk(instrumented: Any, exporter: SnapshotExporter) -> None:
    """run_stream: the model span has gen_ai.response.time_to_first_chunk (the first chunk came 50 ms in: PydanticAI's
    own measurement, or its first-chunk stamp when the run ends the span first) and gen_ai.request.stream true;
    run (not streamed) has neither (PydanticAI says stream False: not written, OTel GenAI sets it only when true)."""
    agent = _slow_start_agent()
    agent.run_sync("hi")

    async def main() -> None:
        async with agent.run_stream("hi") as result:
            assert "".join([c async for c in result.stream_text(delta=True, debounce_by=None)]).strip() == STREAM_TEXT

    asyncio.run(main())
    plain, streamed = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    assert not {"gen_ai.response.time_to_first_chunk", "gen_ai.request.stream"} & set(plain.attributes)
    assert json.loads(plain.attributes["llm.invocation_parameters"])["stream"] is False
    ttfc = streamed.attributes["gen_ai.response.time_to_first_chunk"]
    assert 0.05 <= ttfc <= (streamed.end_time - streamed.start_time) / 1e9
    assert streamed.attributes["gen_ai.request.stream"] is True


def test_native_output_is_json_output(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 gen_ai.output.type: NativeOutput asks the provider for structured (JSON) output; a plain
    text answer asks for no format (none written)."""
    from pydantic_ai import NativeOutput

    from .agents import CityInfo

    _slow_start_agent(NativeOutput(CityInfo)).run_sync("hi")
    _slow_start_agent().run_sync("hi")
    native, text = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    assert native.attributes["gen_ai.output.type"] == "json"
    assert "gen_ai.output.type" not in text.attributes


def _fallback_models(answers: bool) -> Any:
    """A ``FallbackModel`` whose first model fails with an HTTP 503 and whose second answers ``fine`` (whole or
    streamed), or fails too (``answers=False``)."""
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.fallback import FallbackModel
    from pydantic_ai.models.function import FunctionModel

    def broken(messages: list, info: Any) -> Any:
        raise ModelHTTPError(503, "primary-1", {"error": "overloaded"})

    async def broken_stream(messages: list, info: Any) -> Any:
        raise ModelHTTPError(503, "primary-1", {"error": "overloaded"})
        yield ""  # pragma: no cover - a stream function

    async def streamed(messages: list, info: Any) -> Any:
        yield "fi"
        yield "ne"

    def answer(messages: list, info: Any) -> ModelResponse:
        return ModelResponse(parts=[TextPart("fine")])

    backup = FunctionModel(answer, stream_function=streamed, model_name="backup-1") if answers else \
        FunctionModel(broken, stream_function=broken_stream, model_name="backup-1")
    return FallbackModel(FunctionModel(broken, stream_function=broken_stream, model_name="primary-1"), backup)


@pytest.mark.parametrize("stream", [False, True])
def test_a_fallback_models_failed_attempt_is_an_event_of_its_request(stream: bool, instrumented: Any,
                                                                      exporter: SnapshotExporter) -> None:
    """``FallbackModel``: the first model fails (HTTP 503), the second answers. One request, one model span (as
    PydanticAI's own instrumentation: one ``chat`` span, its failed attempts below it), the answering model as the
    response model, not failed; the failed attempt is an ``exception`` event on it (the project's rule for a
    retried attempt), not lost. Ground truth: the response's ``failed_attempts``."""
    import asyncio

    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse

    agent = Agent(_fallback_models(True), name="support")
    if stream:
        async def run() -> Any:
            async with agent.run_stream("go") as streamed:
                assert await streamed.get_output() == "fine"
                return streamed.all_messages()
        messages = asyncio.run(run())
    else:
        result = agent.run_sync("go")
        assert result.output == "fine"
        messages = result.all_messages()
    [attempt] = [a for m in messages if isinstance(m, ModelResponse) for a in m.failed_attempts or ()]
    assert attempt.model_name == "primary-1" and attempt.error.startswith("ModelHTTPError: ")
    model = only(exporter, "model")
    assert model.status == StatusCode.UNSET and "error.type" not in model.attributes
    assert model.attributes["gen_ai.response.model"] == "backup-1"
    assert [(e[0], e[1]["exception.type"], e[1]["exception.message"]) for e in model.events] == \
        [("exception", "pydantic_ai.exceptions.ModelHTTPError", attempt.error.removeprefix("ModelHTTPError: "))]


def test_a_fallback_model_whose_models_all_fail_fails_its_request(instrumented: Any,
                                                                    exporter: SnapshotExporter) -> None:
    """Both models fail: one model span, ERROR with PydanticAI's ``FallbackExceptionGroup`` (what the run raises),
    each model's failure an ``exception`` event before it."""
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import FallbackExceptionGroup

    with pytest.raises(FallbackExceptionGroup):
        Agent(_fallback_models(False), name="support").run_sync("go")
    model = only(exporter, "model")
    assert model.status == StatusCode.ERROR
    assert model.attributes["error.type"] == "pydantic_ai.exceptions.FallbackExceptionGroup"
    assert [e[1]["exception.type"].rsplit(".", 1)[1] for e in model.events] == \
        ["ModelHTTPError", "ModelHTTPError", "FallbackExceptionGroup"]
