"""Google ADK's field cases ADK-1 … ADK-5 (``../shared/cases/adk-smolagents-agno-autogen.md``) and its own
cases: tool call, tool error, streaming, parallel tool calls, delegation (transfer, AgentTool, workflow
agents), a failed run, content off, uninstrument, folding. The real ADK runs over a scripted ``BaseLlm``."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
from datetime import datetime
from typing import Any

import pytest
from google.adk.agents import LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.genai import types
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from otel_agents._spans import SemanticSpan
from otel_agents._spans.finalisers import settle
from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor
from tests._loopback import QuietHandler, serve
from tests.exporters.conftest import check
from tests.genai_schema import validate_genai_json
from tests.spans import SnapshotExporter, ancestors, assert_reasoning_then_answer, parent_of, tree

from .agents import lookup_order, refund, support_agent
from .fakes import Raise, Raw, ScriptedLlm, Stream, Text, call, calls, run_agent


def tool_then_answer(tool: str = "lookup_order", answer: str = "Your order A100 has shipped.", **args: Any) -> list:
    return [call(tool, **(args or {"order_id": "A100"})), Text(answer, input_tokens=30, output_tokens=7)]


def only(spans: list, name: str) -> Any:
    [span] = [s for s in spans if s.name == name]
    return span


# -- ADK-1 ------------------------------------------------------------------------------------------------
def test_adk1_one_model_span_per_request(instrumented: Any, exporter: SnapshotExporter, adk_spans: SnapshotExporter) -> None:
    """ADK-1: one agent span, two model spans under it each with its own usage (the run's input tokens are the
    sum), the tool span under the agent; ADK's own spans are not in our kinds and parent none of ours."""
    result = run_agent(support_agent(ScriptedLlm(tool_then_answer())))
    assert result.error is None and result.final_text == "Your order A100 has shipped."
    spans = exporter.semantic()
    [agent] = exporter.semantic("agent")
    assert agent.name == "invoke_agent support" and agent.parent_id is None
    models = exporter.semantic("model")
    assert len(models) == 2 and all(m.parent_id == agent.span_id for m in models), tree(spans)
    assert [m.attributes["gen_ai.usage.input_tokens"] for m in models] == [10, 30]
    assert [m.attributes["gen_ai.usage.output_tokens"] for m in models] == [5, 7]
    assert sum(m.attributes["gen_ai.usage.input_tokens"] for m in models) == 40
    [tool] = exporter.semantic("tool")
    assert tool.name == "execute_tool lookup_order" and tool.parent_id == agent.span_id
    # ADK's own spans: present (ADK traces itself), never of our kinds, never the parent of ours
    adk = adk_spans.spans
    assert {s.scope for s in adk} == {"gcp.vertex.agent"} and any(s.name.startswith("invoke_agent") for s in adk)
    assert all(s.semantic_kind is None for s in adk)
    adk_ids = {s.span_id for s in adk}
    assert not [s for s in spans if s.parent_id in adk_ids]
    assert all(s.scope == "otel_agents.instrumentors.google_adk" for s in exporter.spans)


def test_adk1_parallel_agents_get_one_agent_span_each(instrumented: Any, exporter: SnapshotExporter,
                                                     adk_spans: SnapshotExporter) -> None:
    """ADK-1 (variant): two tool-using agents under a ParallelAgent: one agent span each, two model spans each."""
    left = support_agent(ScriptedLlm(tool_then_answer(answer="left done")), name="left")
    right = support_agent(ScriptedLlm(tool_then_answer(answer="right done")), name="right")
    result = run_agent(ParallelAgent(name="both", sub_agents=[left, right]))
    assert result.error is None
    spans = exporter.semantic()
    [workflow] = exporter.semantic("chain")
    assert workflow.name == "invoke_workflow both" and workflow.attributes["gen_ai.operation.name"] == "invoke_workflow"
    agents = exporter.semantic("agent")
    assert sorted(a.name for a in agents) == ["invoke_agent left", "invoke_agent right"], tree(spans)
    for agent in agents:
        assert agent.parent_id == workflow.span_id
        under = [s for s in spans if s.parent_id == agent.span_id]
        assert sorted(s.semantic_kind for s in under) == ["model", "model", "tool"], tree(spans)
    assert not [s for s in spans if s.parent_id in {a.span_id for a in adk_spans.spans}]


# -- ADK-2 ------------------------------------------------------------------------------------------------
def test_adk2_transfer_nests_under_the_agent_that_made_it(instrument: Any, exporter: SnapshotExporter,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """ADK-2: one trace; transfer_to_agent is a tool span under the root agent recording the target; the helper's
    agent span is under it; the root's span ends with a status set; no context detached in a context it was not
    attached in (neither OTel's 'Failed to detach context' nor our 'span.detach' report)."""
    instrument(status_ok=True)
    helper = support_agent(ScriptedLlm(tool_then_answer()), name="helper")
    root = LlmAgent(name="root", model=ScriptedLlm([call("transfer_to_agent", agent_name="helper")]),
                    sub_agents=[helper], instruction="Route the customer.")
    with caplog.at_level(logging.ERROR), caplog.at_level(logging.DEBUG, logger="otel_agents"):
        result = run_agent(root)
    assert result.error is None and result.final_text == "Your order A100 has shipped."
    spans = exporter.semantic()
    assert len({s.trace_id for s in spans}) == 1
    root_span = only(spans, "invoke_agent root")
    transfer = only(spans, "execute_tool transfer_to_agent")
    assert transfer.parent_id == root_span.span_id and transfer.attributes["otel_agents.handoff.target"] == "helper"
    helper_span = only(spans, "invoke_agent helper")
    assert helper_span.parent_id == transfer.span_id, tree(spans)
    assert helper_span.attributes["otel_agents.agent.parent"] == "root"
    assert root_span.status is StatusCode.OK and helper_span.status is StatusCode.OK
    assert "Failed to detach context" not in caplog.text and "span.detach" not in caplog.text


def test_adk2_transfer_folds_to_a_delegation(instrumented: Any, envelopes: list) -> None:
    """ADK-2 in the envelope: the agents tree shows the helper delegated by root."""
    helper = support_agent(ScriptedLlm(tool_then_answer()), name="helper")
    root = LlmAgent(name="root", model=ScriptedLlm([call("transfer_to_agent", agent_name="helper")]), sub_agents=[helper])
    run_agent(root)
    [env] = check(envelopes)
    assert env["status"] == "done" and env["public_output"] == "Your order A100 has shipped."
    assert "agent helper delegated_by=root" in env["evaluation_context"]
    assert [(a["name"], a["parent"]) for a in env["agents"]] == [("root", None), ("helper", "root")]


def test_agent_tool_runs_its_agent_under_the_tool_span(instrumented: Any, exporter: SnapshotExporter,
                                                      adk_spans: SnapshotExporter) -> None:
    """An AgentTool is a tool span recording its agent; that agent's span (its own Runner) nests under it,
    with ADK's own spans on: none of ours hangs from one of ADK's."""
    specialist = support_agent(ScriptedLlm(tool_then_answer(answer="A100 shipped")), name="specialist")
    root = LlmAgent(name="root", model=ScriptedLlm([call("specialist", request="A100?"), "Done: A100 shipped"]),
                    tools=[AgentTool(agent=specialist)])
    result = run_agent(root)
    assert result.error is None and result.final_text == "Done: A100 shipped"
    spans = exporter.semantic()
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    root_span = only(spans, "invoke_agent root")
    tool = only(spans, "execute_tool specialist")
    assert tool.parent_id == root_span.span_id and tool.attributes["otel_agents.handoff.target"] == "specialist"
    inner = only(spans, "invoke_agent specialist")
    assert inner.parent_id == tool.span_id, tree(spans)
    assert inner.attributes["otel_agents.agent.parent"] == "root"
    assert len([s for s in spans if s.semantic_kind == "agent"]) == 2  # one plugin per runner: no duplicates
    assert sorted(s.semantic_kind for s in spans if s.parent_id == inner.span_id) == ["model", "model", "tool"]
    assert adk_spans.spans and not [s for s in spans if s.parent_id in {a.span_id for a in adk_spans.spans}]


def test_sequential_and_loop_agents_are_chains(instrumented: Any, exporter: SnapshotExporter) -> None:
    """SequentialAgent and LoopAgent → `invoke_workflow` chains; the output_key state flows between agents."""
    first = support_agent(ScriptedLlm(["draft"]), name="writer", output_key="draft", tools=[])
    second = support_agent(ScriptedLlm(["final"]), name="editor", tools=[])
    loop = LoopAgent(name="polish", sub_agents=[support_agent(ScriptedLlm(["again", "again"]), name="polisher", tools=[])],
                     max_iterations=2)
    result = run_agent(SequentialAgent(name="pipeline", sub_agents=[first, second, loop]))
    assert result.error is None
    spans = exporter.semantic()
    pipeline = only(spans, "invoke_workflow pipeline")
    assert pipeline.parent_id is None and pipeline.semantic_kind == "chain"
    polish = only(spans, "invoke_workflow polish")
    assert polish.parent_id == pipeline.span_id
    assert [s.name for s in spans if s.parent_id == pipeline.span_id and s.semantic_kind == "agent"] == [
        "invoke_agent writer", "invoke_agent editor"]
    polishers = [s for s in spans if s.name == "invoke_agent polisher"]
    assert len(polishers) == 2 and all(p.parent_id == polish.span_id for p in polishers), tree(spans)
    assert pipeline.attributes["output.value"] == "again"


# -- ADK-3 ------------------------------------------------------------------------------------------------
def test_adk3a_tool_error_fails_tool_agent_and_root(instrumented: Any, exporter: SnapshotExporter) -> None:
    """ADK-3 (a): the tool raises ValueError; ADK aborts; tool, agent and root spans end ERROR with an exception
    event; the caller gets ADK's exception unchanged; nothing is left current."""
    result = run_agent(support_agent(ScriptedLlm([call("refund", order_id="A100")]), tools=[refund]))
    assert isinstance(result.error, ValueError) and "refunds for A100 are closed" in str(result.error)
    spans = exporter.semantic()
    tool = only(spans, "execute_tool refund")
    agent = only(spans, "invoke_agent support")
    for span in (tool, agent):
        assert span.status is StatusCode.ERROR, tree(spans)
        assert any(name == "exception" for name, _ in span.events)
        assert span.attributes["error.type"] == "ValueError"
    assert not [s for s in spans if s.status is not StatusCode.ERROR and any(n == "exception" for n, _ in s.events)]
    assert trace.get_current_span() is trace.INVALID_SPAN
    assert instrumented.open_runs() == 0


def test_adk3b_blocked_response_fails_the_model_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """ADK-3 (b): a final response with error_code/error_message and no content: the model span ends ERROR and
    its status description is the message."""
    blocked = LlmResponse(error_code="SAFETY", error_message="Response blocked for safety")
    run_agent(support_agent(ScriptedLlm([Raw(blocked)])))
    [model] = exporter.semantic("model")
    assert model.status is StatusCode.ERROR
    assert model.status_description == "Response blocked for safety"
    assert model.attributes["error.type"] == "SAFETY"


def test_adk3c_after_model_callback_raising_fails_its_step(instrumented: Any, exporter: SnapshotExporter) -> None:
    """ADK-3 (c): an after_model_callback raises after a good response: the agent span that owns the step ends
    ERROR; no span ends OK (or unset) with an exception event."""

    def broken(callback_context: Any, llm_response: Any) -> None:
        raise RuntimeError("callback broke")

    result = run_agent(support_agent(ScriptedLlm(["fine"]), after_model_callback=broken))
    assert isinstance(result.error, RuntimeError)
    spans = exporter.semantic()
    agent = only(spans, "invoke_agent support")
    assert agent.status is StatusCode.ERROR and agent.attributes["error.type"] == "RuntimeError"
    assert not [s for s in spans if s.status is not StatusCode.ERROR and any(n == "exception" for n, _ in s.events)]


def test_after_model_callback_replacing_the_answer(instrumented: Any, exporter: SnapshotExporter,
                                                   envelopes: list) -> None:
    """An ``after_model_callback`` that replaces the model's answer: the model span keeps what the model returned,
    the agent span and the envelope's ``public_output`` say what the user got."""
    from google.genai import types

    def redact(callback_context: Any, llm_response: Any) -> Any:
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="[redacted]")]))

    result = run_agent(support_agent(ScriptedLlm(["Your card ends in 4242."]), after_model_callback=redact))
    assert result.final_text == "[redacted]"
    spans = exporter.semantic()
    [model] = [s for s in spans if s.attributes.get("otel_agents.span.kind") == "model"]
    assert "4242" in model.attributes["gen_ai.output.messages"]
    assert "[redacted]" in only(spans, "invoke_agent support").attributes["output.value"]
    [env] = check(envelopes)
    assert env["public_output"] == "[redacted]"


def test_before_model_callback_answering_makes_no_model_span(instrumented: Any, exporter: SnapshotExporter,
                                                             envelopes: list) -> None:
    """A ``before_model_callback`` that answers in the model's place: the model is never called, so no model span;
    the callback's answer is the run's output."""
    from google.genai import types

    def cached(callback_context: Any, llm_request: Any) -> Any:
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="From the cache.")]))

    llm = ScriptedLlm(["never sent"])
    result = run_agent(support_agent(llm, before_model_callback=cached))
    assert result.final_text == "From the cache." and not llm.requests
    assert not [s for s in exporter.semantic() if s.attributes.get("otel_agents.span.kind") == "model"]
    [env] = check(envelopes)
    assert env["public_output"] == "From the cache." and env["metrics"]["model_calls"] == 0


def test_before_model_callback_raising_makes_no_model_span(instrumented: Any, exporter: SnapshotExporter,
                                                           envelopes: list) -> None:
    """A ``before_model_callback`` that raises (in a second agent of a pipeline, after a first one's good run): the
    model is never called, so no model span; before, a ``chat`` span ended ERROR with the callback's exception, a
    model failure that never happened (and a model call the envelope counted). The agent whose step it was fails
    with it, and the run; the first agent's model calls are all there."""
    def broken(callback_context: Any, llm_request: Any) -> None:
        raise RuntimeError("callback broke")

    never = ScriptedLlm(["never sent"])
    pipeline = SequentialAgent(name="pipeline", sub_agents=[
        support_agent(ScriptedLlm([call("lookup_order", order_id="A100"), "Shipped."])),
        LlmAgent(name="second", model=never, before_model_callback=broken)])
    result = run_agent(pipeline)
    assert isinstance(result.error, RuntimeError) and not never.requests
    spans = exporter.semantic()
    second = only(spans, "invoke_agent second")
    assert second.status is StatusCode.ERROR and second.attributes["error.type"] == "RuntimeError"
    models = [s for s in spans if s.attributes.get("otel_agents.span.kind") == "model"]
    assert [s.parent_id for s in models] == [only(spans, "invoke_agent support").span_id] * 2, tree(spans)
    assert all(s.status is not StatusCode.ERROR for s in models)
    [env] = check(envelopes)
    assert env["metrics"]["model_calls"] == 2


def test_model_exception_fails_model_and_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A failed run: the model raises; the model span and the agent span end ERROR; ADK's exception reaches
    the caller unchanged."""
    boom = ConnectionError("model unreachable")
    result = run_agent(support_agent(ScriptedLlm([Raise(boom)])))
    assert result.error is boom
    [model] = exporter.semantic("model")
    [agent] = exporter.semantic("agent")
    assert model.status is StatusCode.ERROR and model.attributes["error.type"] == "ConnectionError"
    assert agent.status is StatusCode.ERROR
    assert instrumented.open_runs() == 0


# -- ADK-4 ------------------------------------------------------------------------------------------------
def test_stream_cut_short_is_incomplete_not_abandoned(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A model whose SSE stream ends by itself after its partial chunks, without the final (non-partial) response
    that closes it (the caller read on to the end): the model span is failed as cut short (``error.type``
    ``stream_incomplete``, status ERROR), not abandoned (nobody left it), with the text the partials carried and
    no finish reason or usage (only the final response gives them). Fails before: the span said abandoned."""
    chunks = ["Your ", "order ", "A100 "]
    result = run_agent(support_agent(ScriptedLlm([Stream(chunks, None)])),
                       run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert sum(1 for e in result.events if e.partial) == len(chunks)  # the caller got every chunk served
    [model] = exporter.semantic("model")
    a = model.attributes
    assert (model.status, a.get("error.type")) == (StatusCode.ERROR, "stream_incomplete"), tree([model])
    assert "otel_agents.stream.abandoned" not in a
    assert model.json_attr("gen_ai.output.messages") == [
        {"role": "assistant", "parts": [{"type": "text", "content": "".join(chunks)}], "finish_reason": ""}]
    assert not {"gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} & set(a)
    validate_genai_json(a)


@pytest.mark.parametrize("how", ["break", "aclose", "drop", "cancel"])
def test_stream_left_mid_answer_is_abandoned(instrumented: Any, exporter: SnapshotExporter, how: str) -> None:
    """The ``run_async`` caller leaves while the model is still streaming its answer, after its first partial
    event: it ``break``s out of ``async for``, ``aclose()``s the events, or drops them; ADK then cancels the task
    running the run. The model and agent spans end abandoned (``otel_agents.stream.abandoned``), as ``Runner.run``'s
    do when its caller leaves, the model's with the text it had streamed; the cancellation ADK made to stop the run
    stays control flow, no error. A task cancelled mid-stream (``cancel``) is cancelled, not abandoned. The caller
    gets what it would without us; nothing stays open or current. Fails before (break, aclose, drop): no span said
    abandoned (the agent said only ``cancelled``)."""
    agent = support_agent(ScriptedLlm([Stream(["Your ", "order "], "Your order A100", hold=True)]))
    seen: list = []

    async def main() -> None:
        runner = Runner(app_name="support", agent=agent, session_service=InMemorySessionService())
        await runner.session_service.create_session(app_name="support", user_id="u1", session_id="s1")
        events = runner.run_async(user_id="u1", session_id="s1", run_config=RunConfig(streaming_mode=StreamingMode.SSE),
                                  new_message=types.Content(role="user", parts=[types.Part(text="Where?")]))

        async def consume() -> None:
            async for event in events:
                seen.append(event)
                if event.partial and how == "break":
                    break
                if event.partial and how == "cancel":
                    task.cancel()  # the next step of the events is cancelled

        if how in ("break", "cancel"):
            task = asyncio.ensure_future(consume())
            await asyncio.gather(task, return_exceptions=True)
            assert task.cancelled() is (how == "cancel")
        else:
            seen.append(await events.__anext__())
            if how == "aclose":
                await events.aclose()
        del events
        gc.collect()
        assert not trace.get_current_span().get_span_context().is_valid

    asyncio.run(main())
    gc.collect()
    settle()
    assert seen and all(e.partial for e in seen) and (how == "cancel" or len(seen) == 1)
    assert instrumented.open_runs() == 0
    [model] = exporter.semantic("model")
    [agent_span] = exporter.semantic("agent")
    cancelled = "asyncio.exceptions.CancelledError"
    for span in (model, agent_span):
        a = span.attributes
        assert span.status is StatusCode.UNSET and "error.type" not in a, tree([model, agent_span])
        assert a.get("otel_agents.stream.abandoned") is (None if how == "cancel" else True), tree([model, agent_span])
        assert a.get("otel_agents.control_flow") == cancelled, tree([model, agent_span])
    assert agent_span.attributes.get("otel_agents.run.stop_reason") == "cancelled"
    assert model.parent_id == agent_span.span_id
    assert model.json_attr("gen_ai.output.messages")[0]["parts"][0]["content"].startswith("Your ")
    assert "gen_ai.response.finish_reasons" not in model.attributes
    assert not [o for o in gc.get_objects() if isinstance(o, SemanticSpan) and not o.ended]


def test_adk4_streamed_partials_count_once(instrumented: Any, exporter: SnapshotExporter) -> None:
    """ADK-4: SSE streaming, five partial chunks then the final aggregated response with usage: one model span,
    its output the final text once, usage once; the agent's output the final text once."""
    chunks = ["Your ", "order ", "A100 ", "has ", "shipped."]
    result = run_agent(support_agent(ScriptedLlm([Stream(chunks, "Your order A100 has shipped.", 12, 6)])),
                       run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert result.error is None and sum(1 for e in result.events if e.partial) == 5
    [model] = exporter.semantic("model")
    out = model.json_attr("gen_ai.output.messages")
    assert out == [{"role": "assistant", "parts": [{"type": "text", "content": "Your order A100 has shipped."}],
                    "finish_reason": "stop"}]
    assert model.attributes["gen_ai.usage.input_tokens"] == 12 and model.attributes["gen_ai.usage.output_tokens"] == 6
    assert model.attributes["gen_ai.request.stream"] is True
    [agent] = exporter.semantic("agent")
    assert agent.attributes["output.value"] == "Your order A100 has shipped."
    validate_genai_json(model.attributes)


def test_adk4_a_streamed_request_is_timed_from_its_first_chunk(instrumented: Any, exporter: SnapshotExporter) -> None:
    """ADK-4: SSE streaming, the first partial 50 ms after the request: the model span's time to first chunk is
    measured from the request (the span opens only once the model answered, with the request's start time), its
    Langfuse completion start that much after the span's start; the tool call answered whole in SSE mode is its
    stream's first chunk; without SSE neither request has one."""
    chunks = ["Your ", "order ", "A100 ", "has ", "shipped."]
    for mode in (StreamingMode.SSE, StreamingMode.NONE):
        exporter.clear()
        answer = Stream(chunks, "Your order A100 has shipped.", first=0.05) if mode is StreamingMode.SSE else \
            Text("Your order A100 has shipped.")  # (the fake's Stream would stream whatever the request)
        script = [call("lookup_order", order_id="A100"), answer]
        result = run_agent(support_agent(ScriptedLlm(script)), run_config=RunConfig(streaming_mode=mode))
        assert result.error is None
        tool_call, answer = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
        if mode is StreamingMode.NONE:
            assert not {"gen_ai.response.time_to_first_chunk", "gen_ai.request.stream"} & \
                (set(tool_call.attributes) | set(answer.attributes))
            continue
        assert 0 <= tool_call.attributes["gen_ai.response.time_to_first_chunk"] < 0.05
        ttfc = answer.attributes["gen_ai.response.time_to_first_chunk"]
        assert 0.05 <= ttfc <= (answer.end_time - answer.start_time) / 1e9
        assert answer.attributes["gen_ai.request.stream"] is True
        start = datetime.fromisoformat(answer.attributes["langfuse.observation.completion_start_time"].replace("Z", "+00:00"))
        assert start.timestamp() * 1e9 == pytest.approx(answer.start_time + ttfc * 1e9, abs=1e3)


def test_adk4_all_partial_stream_assembles_the_text(instrumented: Any, exporter: SnapshotExporter) -> None:
    """ADK-4 (variant): every response partial (as in run_live): the output is the assembled text, not empty."""
    result = run_agent(support_agent(ScriptedLlm([Stream(["Shipped ", "today."], None)])),
                       run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert result.error is None
    [model] = exporter.semantic("model")
    [message] = model.json_attr("gen_ai.output.messages")
    assert message["parts"] == [{"type": "text", "content": "Shipped today."}]
    [agent] = exporter.semantic("agent")
    assert agent.attributes["output.value"] == "Shipped today."


# -- ADK-5 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("content", [True, False], ids=["content-on", "content-off"])
def test_adk5_session_and_user_ids(instrument: Any, exporter: SnapshotExporter, content: bool) -> None:
    """ADK-5: two runs in session sess-1 of user u1: two root traces; the root and every span carry session.id,
    user.id and gen_ai.conversation.id, with content capture on or off."""
    instrument(capture_content=content)
    agent = support_agent(ScriptedLlm(tool_then_answer() + tool_then_answer()))
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    runner = Runner(app_name="support", agent=agent, session_service=InMemorySessionService())
    run_agent(agent, runner=runner)
    run_agent(agent, "And my other order?", runner=runner)
    spans = exporter.semantic()
    roots = [s for s in spans if s.parent_id is None]
    assert len(roots) == 2 and roots[0].trace_id != roots[1].trace_id
    for span in spans:
        assert span.attributes["session.id"] == "sess-1" and span.attributes["gen_ai.conversation.id"] == "sess-1"
        assert span.attributes["user.id"] == "u1"


# -- the framework's own cases ----------------------------------------------------------------------------
def test_tool_call_records_content_parts_and_tools(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A tool call: the model span has the system instruction, the tools offered, the tool_call part; the tool
    span has arguments and result; the GenAI JSON is schema-valid."""
    run_agent(support_agent(ScriptedLlm(tool_then_answer())))
    first, second = exporter.semantic("model")
    assert first.json_attr("gen_ai.system_instructions")[0]["content"].startswith("You help customers")
    assert [t["name"] for t in first.json_attr("gen_ai.tool.definitions")] == ["lookup_order"]
    assert first.json_attr("gen_ai.input.messages")[-1]["parts"] == [{"type": "text", "content": "Where is my order A100?"}]
    [out] = first.json_attr("gen_ai.output.messages")
    assert out["finish_reason"] == "stop"  # the model sent STOP (Gemini's reason for a function call too)
    assert out["parts"] == [{"type": "tool_call", "id": "call-lookup_order-0", "name": "lookup_order",
                             "arguments": {"order_id": "A100"}}]
    roles = [m["role"] for m in second.json_attr("gen_ai.input.messages")]
    assert roles == ["user", "assistant", "tool"]
    assert second.json_attr("gen_ai.input.messages")[-1]["parts"][0]["type"] == "tool_call_response"
    assert first.attributes["gen_ai.request.model"] == "scripted-1"
    assert first.attributes["gen_ai.response.model"] == "scripted-1-0001"
    [tool] = exporter.semantic("tool")
    assert tool.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A100"}
    assert tool.json_attr("gen_ai.tool.call.result") == {"order_id": "A100", "status": "shipped"}
    assert tool.attributes["gen_ai.tool.call.id"] == "call-lookup_order-0"
    for span in exporter.semantic():
        validate_genai_json(span.attributes)


def test_m1_a_thought_is_a_reasoning_part_never_the_answer(instrumented: Any, exporter: SnapshotExporter,
                                                            envelopes: list) -> None:
    """M-1: Gemini answers with a thought part (with its signature) and a text part: the model span's output is a
    reasoning part with the thought and a text part with the answer, the OpenInference content the answer alone;
    the signature nowhere; the agent's output and the envelope's public_output the answer."""
    from google.genai import types

    answer, thought = "Your refund was approved.", "The user wants a refund; policy allows it."
    reply = LlmResponse(content=types.Content(role="model", parts=[
        types.Part(text=thought, thought=True, thought_signature=b"SIGNATURE-BYTES"), types.Part(text=answer)]),
        model_version="scripted-1-0001", finish_reason=types.FinishReason.STOP, usage_metadata=None)
    result = run_agent(support_agent(ScriptedLlm([Raw(reply)])))
    assert result.final_text == answer
    [model], [agent] = exporter.semantic("model"), exporter.semantic("agent")
    assert_reasoning_then_answer(model, agent, thought, answer)
    for span in exporter.spans:
        assert not any("SIGNATURE" in str(v) or "U0lHTkFUVVJF" in str(v) for v in span.attributes.values())
    [envelope] = check(envelopes)
    assert envelope["public_output"] == answer


def test_parallel_tool_calls(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Two function calls in one response: two tool spans under the agent, each with its own call id."""
    script = [calls(("lookup_order", {"order_id": "A1"}), ("lookup_order", {"order_id": "A2"})), "Both shipped."]
    result = run_agent(support_agent(ScriptedLlm(script)))
    assert result.error is None
    [agent] = exporter.semantic("agent")
    tools = exporter.semantic("tool")
    assert len(tools) == 2 and all(t.parent_id == agent.span_id for t in tools)
    assert sorted(t.attributes["gen_ai.tool.call.id"] for t in tools) == ["call-lookup_order-0", "call-lookup_order-1"]
    assert sorted(t.json_attr("gen_ai.tool.call.arguments")["order_id"] for t in tools) == ["A1", "A2"]


@pytest.mark.parametrize("hook", ["before_run", "after_run", "before_agent", "after_agent", "before_model",
                                  "after_model", "on_event", "before_tool", "after_tool"])
def test_a_failing_hook_never_reaches_the_run(hook: str, instrumented: Any, exporter: SnapshotExporter,
                                              caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Our failure in any plugin callback is reported (once, naming the callback) and swallowed: ADK's run goes on
    and answers as without us."""
    from otel_agents._spans.guard import reset_reported_sites
    from otel_agents.instrumentors.google_adk._hooks import Hooks

    def fail(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"{hook} broke")

    monkeypatch.setattr(Hooks, hook, fail)
    reset_reported_sites()
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        result = run_agent(support_agent(ScriptedLlm(tool_then_answer())))
    assert result.error is None and result.final_text == "Your order A100 has shipped."
    site = "google_adk." + {"on_event": "event"}.get(hook, hook)
    assert any(f"internal error in {site} " in r.getMessage() and f"{hook} broke" in r.getMessage()
               for r in caplog.records)


def test_content_off_records_no_content(instrument: Any, exporter: SnapshotExporter) -> None:
    """Content off: no messages, arguments, results, inputs or outputs; usage, names and finish reasons stay."""
    instrument(capture_content=False)
    run_agent(support_agent(ScriptedLlm(tool_then_answer())))
    spans = exporter.semantic()
    for span in spans:
        for key in span.attributes:
            assert not key.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system_instructions", "input.",
                                       "output.", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
                                       "llm.input_messages", "llm.output_messages")), key
        assert "A100" not in str(span.attributes)
    [first, _] = exporter.semantic("model")
    assert first.attributes["gen_ai.usage.input_tokens"] == 10
    assert first.attributes["gen_ai.response.finish_reasons"] == ("stop",)  # what the model sent: STOP


def test_uninstrument_restores_adk(instrument: Any, exporter: SnapshotExporter) -> None:
    """After uninstrument: no spans from new or existing runners, the Runner class is ADK's own again; a second
    instrument() works and adds one plugin only."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    original = Runner.__dict__["__init__"]
    inst = instrument()
    assert Runner.__dict__["__init__"] is not original
    agent = support_agent(ScriptedLlm(tool_then_answer() * 3))
    kept = Runner(app_name="support", agent=agent, session_service=InMemorySessionService())
    inst.uninstrument()
    assert Runner.__dict__["__init__"] is original
    run_agent(agent, runner=kept)
    run_agent(agent)
    assert exporter.semantic() == []
    from otel_agents.instrumentors.google_adk._plugin import OtelAgentsPlugin

    assert not any(isinstance(p, OtelAgentsPlugin) for p in
                   Runner(app_name="x", agent=support_agent(ScriptedLlm([])), session_service=InMemorySessionService())
                   .plugin_manager.plugins)
    inst.instrument(tracer_provider=exporter_provider(exporter))
    fresh = Runner(app_name="support", agent=agent, session_service=InMemorySessionService())
    assert sum(isinstance(p, OtelAgentsPlugin) for p in fresh.plugin_manager.plugins) == 1
    run_agent(agent, runner=fresh)
    assert len(exporter.semantic("agent")) == 1


def exporter_provider(exporter: SnapshotExporter) -> Any:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def test_application_span_parents_the_run(instrumented: Any, exporter: SnapshotExporter, app_tracer: Any,
                                          adk_spans: SnapshotExporter) -> None:
    """The run's first span opens under the caller's span (outside ADK's invocation span)."""
    with app_tracer.start_as_current_span("handle_request") as app:
        run_agent_in_span()
    [agent] = exporter.semantic("agent")
    assert agent.parent_id == app.get_span_context().span_id


def test_adk_tracer_set_after_a_run_never_parents_ours(instrumented: Any, exporter: SnapshotExporter,
                                                       app_tracer: Any, adk_spans: SnapshotExporter,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """An application that sets ADK's module tracer after ``instrument()`` and after a first run: the ADK modules
    imported during that run (``node_tracing``, which opens the invocation span) hold our stand-in, ``tracing``
    the application's tracer. Before, our agent span opened under ADK's recording ``invoke_agent`` span (the
    run's parent was taken when the agent span opened, not when the run started); it depended on which test had
    imported ``node_tracing`` first. Now it opens under the caller's span, ADK's spans beside ours."""
    from google.adk.telemetry import node_tracing, tracing

    monkeypatch.setattr(node_tracing, "tracer", instrumented._installation.native.stand_in)
    with app_tracer.start_as_current_span("handle_request") as app:
        run_agent_in_span()
    [agent] = exporter.semantic("agent")
    assert agent.parent_id == app.get_span_context().span_id, tree(exporter.spans)
    assert "invoke_agent support" in [s.name for s in adk_spans.spans]  # ADK's own span was recording
    assert tracing.tracer is not instrumented._installation.native.stand_in


def run_agent_in_span() -> None:
    run_agent(support_agent(ScriptedLlm(["hello"])))


def test_long_running_tool_marks_the_run_paused(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A long-running tool (human in the loop): the tool span and the agent span are marked paused."""
    from google.adk.tools.long_running_tool import LongRunningFunctionTool

    def ask_manager(order_id: str) -> dict:
        """Ask a manager to approve a refund."""
        return {"status": "pending"}

    run_agent(support_agent(ScriptedLlm([call("ask_manager", order_id="A1"), "Waiting for approval."]),
                            tools=[LongRunningFunctionTool(func=ask_manager)]))
    [tool] = exporter.semantic("tool")
    [agent] = exporter.semantic("agent")
    assert tool.attributes.get("otel_agents.run.paused") is True
    assert agent.attributes.get("otel_agents.run.paused") is True


def test_e2_paused_run_does_not_leak_its_state(instrumented: Any, envelopes: list) -> None:
    """E-2 in ADK: a run paused on a long-running tool folds to ``status: paused`` with a ``paused`` line; its
    ``public_output`` is the assistant's text before the pause, never the user's message."""
    from google.adk.tools.long_running_tool import LongRunningFunctionTool

    def ask_manager(order_id: str) -> dict:
        """Ask a manager to approve a refund."""
        return {"status": "pending"}

    run_agent(support_agent(ScriptedLlm([call("ask_manager", order_id="A1"), "Waiting for approval."]),
                            tools=[LongRunningFunctionTool(func=ask_manager)]), "Refund SECRET-ORDER-9 please")
    [env] = check(envelopes)
    assert env["status"] == "paused"
    assert env["public_output"] in (None, "Waiting for approval."), env["public_output"]
    assert any(line.strip().startswith("paused ") for line in env["evaluation_context"].splitlines())


def test_every_envelope_is_valid(instrumented: Any, envelopes: list) -> None:
    """Folding: the envelopes of a tool run, a failed run and a streamed run pass ecp-runtime and our schema."""
    run_agent(support_agent(ScriptedLlm(tool_then_answer())))
    run_agent(support_agent(ScriptedLlm([call("refund", order_id="A100")]), tools=[refund]))
    run_agent(support_agent(ScriptedLlm([Stream(["a", "b"], "ab")])), run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    got = check(envelopes)
    assert [e["status"] for e in got] == ["done", "done", "done"]
    assert got[0]["public_output"] == "Your order A100 has shipped." and got[2]["public_output"] == "ab"
    assert [a["status"] for a in got[1]["agents"]] == ["error"]
    assert [c["status"] for c in got[1]["tool_calls"]] == ["error"]


# -- issue #34 fault 7: ADK's own spans ------------------------------------------------------------------
def test_fault7_adk_own_spans_stood_down_while_instrumented(adk_spans: SnapshotExporter, instrument: Any,
                                                             exporter: SnapshotExporter) -> None:
    """Issue #34 fault 7: with ADK's tracer exporting (set before instrument(), as an application's setup
    does), an instrumented run makes no span of ADK's own (scope gcp.vertex.agent), so no second tree beside
    ours; ours are all there. uninstrument() gives ADK its tracing back."""
    inst = instrument()
    result = run_agent(support_agent(ScriptedLlm(tool_then_answer())))
    assert result.error is None
    assert adk_spans.spans == []
    assert sorted(s.semantic_kind for s in exporter.semantic()) == ["agent", "model", "model", "tool"]
    inst.uninstrument()
    exporter.clear()
    run_agent(support_agent(ScriptedLlm(tool_then_answer())))
    assert exporter.semantic() == []
    assert {s.scope for s in adk_spans.spans} == {"gcp.vertex.agent"}
    assert any(s.name.startswith("execute_tool") for s in adk_spans.spans)


def test_fault7_fold_counts_each_step_once_with_adk_spans_left_on(instrumented: Any, provider: Any,
                                                                  app_tracer: Any, monkeypatch: Any) -> None:
    """Issue #34 fault 7, the fold's side: ADK's own spans left on (its tracer set after instrument(), on the
    same provider), beside our tree under the step's span: the fold still counts each step once: one
    envelope, usage the sum of the model's calls (40/12, not doubled), the tool call once with its result,
    the run once in evaluation_context."""
    from google.adk.telemetry import tracing
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_agents.exporters.ecp import fold
    from tests.exporters.conftest import check

    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    monkeypatch.setattr(tracing, "tracer", provider.get_tracer("gcp.vertex.agent"))
    llm = ScriptedLlm(tool_then_answer())
    with app_tracer.start_as_current_span("agent/step"):
        result = run_agent(support_agent(llm))
    assert result.final_text == "Your order A100 has shipped."
    spans = memory.get_finished_spans()
    adk = [s for s in spans if s.instrumentation_scope.name == "gcp.vertex.agent"]
    assert {s.attributes.get("gen_ai.operation.name") for s in adk} >= {"invoke_agent", "execute_tool"}, \
        "the scenario needs ADK's own GenAI spans"
    [env] = check(fold(spans))
    assert env["public_output"] == "Your order A100 has shipped."
    assert (env["usage"]["input_tokens"], env["usage"]["output_tokens"]) == (40, 12)
    [tool_call] = env["tool_calls"]
    assert tool_call["name"] == "lookup_order" and tool_call["result"] == {"order_id": "A100", "status": "shipped"}
    lines = [line.strip() for line in env["evaluation_context"].splitlines()]
    assert lines.count("agent support") == 1 and sum(line.startswith("model ") for line in lines) == 2


def test_user_model_class_defined_after_instrument(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Issue #34 item 3: a ``BaseLlm`` subclass the user writes after instrument() (ADK does not trace it: its
    own spans are stood down) gets one model span per request from our plugin's model callbacks, with each
    request's usage and finish reason as the model returned them (ground truth kept by the model)."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types
    from pydantic import PrivateAttr

    from .fakes import usage

    class InHouseLlm(BaseLlm):
        model: str = "in-house-1"
        _truth: list = PrivateAttr(default_factory=list)

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            answered = any(p.function_response for c in llm_request.contents for p in c.parts or ())
            if answered:
                part, counts = types.Part(text="A100 has shipped."), (21, 4)
            else:
                part = types.Part(function_call=types.FunctionCall(name="lookup_order", args={"order_id": "A100"},
                                                                   id="call-in-house-1"))
                counts = (12, 3)
            # Gemini sends STOP for a function call too: that is what the span records (OTel value "stop")
            self._truth.append((counts, "stop"))
            yield LlmResponse(content=types.Content(role="model", parts=[part]), finish_reason=types.FinishReason.STOP,
                              usage_metadata=usage(*counts))

    llm = InHouseLlm()
    result = run_agent(support_agent(llm))
    assert result.final_text == "A100 has shipped."
    models = exporter.semantic("model")
    assert len(models) == len(llm._truth) == 2, tree(exporter.semantic())
    for span, (counts, finish) in zip(models, llm._truth):
        a = span.attributes
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == counts
        assert a["gen_ai.response.finish_reasons"] == (finish,) and span.name == "chat in-house-1"
    [tool] = exporter.semantic("tool")
    assert tool.attributes["gen_ai.tool.call.id"] == "call-in-house-1"


def test_adks_tracer_stood_down_still_decorates(instrumented: Any, exporter: SnapshotExporter, app_tracer: Any) -> None:
    """ADK's module tracer, stood down while we are instrumented, is still usable as OTel's
    ``start_as_current_span`` is, as a function decorator too (as the stand-in was before it became a class):
    the application's function runs once per call, with a non-recording stand-in of the caller's span current
    (made at each call, not at decoration), and no span of it is exported."""
    import asyncio

    from google.adk.telemetry import tracing

    seen: list = []

    @tracing.tracer.start_as_current_span("app step")
    def step(x: int) -> int:
        seen.append(trace.get_current_span())
        return x + 1

    @tracing.tracer.start_as_current_span("app async step")
    async def astep(x: int) -> int:
        await asyncio.sleep(0)
        seen.append(trace.get_current_span())
        return x * 2

    with app_tracer.start_as_current_span("first request") as first:
        assert step(1) == 2
    with app_tracer.start_as_current_span("second request") as second:
        assert step(2) == 3 and asyncio.run(astep(3)) == 6
    assert [s.get_span_context().span_id for s in seen] == [first.get_span_context().span_id] + \
        [second.get_span_context().span_id] * 2
    assert not any(s.is_recording() for s in seen)
    assert sorted(s.name for s in exporter.spans) == ["first request", "second request"]


def test_a_runner_made_before_instrument_is_traced(instrument: Any, exporter: SnapshotExporter) -> None:
    """A runner made before instrument() (a module-level runner), or while an earlier instrument() was on, has
    no live plugin of ours: its runs are traced all the same, by one plugin."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    from otel_agents.instrumentors.google_adk._plugin import OtelAgentsPlugin

    agent = support_agent(ScriptedLlm(tool_then_answer() * 3))
    early = Runner(app_name="support", agent=agent, session_service=InMemorySessionService())
    inst = instrument()
    run_agent(agent, runner=early)
    assert [s.name for s in exporter.semantic("agent")] == ["invoke_agent support"]
    inst.uninstrument()
    inst.instrument(tracer_provider=exporter_provider(exporter))
    run_agent(agent, runner=early, session_id="sess-2")
    assert len(exporter.semantic("agent")) == 2
    assert sum(isinstance(p, OtelAgentsPlugin) for p in early.plugin_manager.plugins) == 1


def test_the_output_asked_for_is_recorded(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41: a request whose GenerateContentConfig asks for JSON has gen_ai.output.type json and, asking
    for two candidates, gen_ai.request.choice.count 2; a request asking neither has neither."""
    from google.genai import types

    config = types.GenerateContentConfig(response_mime_type="application/json", candidate_count=2)
    assert run_agent(support_agent(ScriptedLlm([Text('{"status": "shipped"}')]), tools=[],
                                   generate_content_config=config)).error is None
    assert run_agent(support_agent(ScriptedLlm([Text("Shipped.")]), tools=[])).error is None
    asked, plain = exporter.semantic("model")
    assert asked.attributes["gen_ai.output.type"] == "json"
    assert asked.attributes["gen_ai.request.choice.count"] == 2
    assert not {"gen_ai.output.type", "gen_ai.request.choice.count"} & set(plain.attributes)


def test_the_server_a_gemini_model_was_given_is_recorded(instrumented: Any, exporter: SnapshotExporter,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """OTel GenAI v1.41 inference span: the real ``Gemini`` model given a ``base_url`` (a generateContent server on
    loopback) has server.address/port of it, the host and port the server was reached on; a model without one
    (its default endpoint, in a client made on first use) has neither."""
    import json as _json
    import urllib.parse

    from google.adk.models.google_llm import Gemini

    reached: list[str] = []

    class Generate(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers["Content-Length"]))
            reached.append(self.headers["Host"])
            body = _json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": "Shipped."}]},
                                                "finishReason": "STOP"}],
                                "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2,
                                                  "totalTokenCount": 7},
                                "modelVersion": "gemini-2.5-flash-001"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    with serve(Generate) as url:
        port = urllib.parse.urlsplit(url).port
        assert run_agent(support_agent(Gemini(model="gemini-2.5-flash", base_url=url), tools=[])).error is None
    assert run_agent(support_agent(ScriptedLlm([Text("Shipped.")]), tools=[])).error is None
    served, scripted = exporter.semantic("model")
    assert reached == [f"127.0.0.1:{port}"]
    assert (served.attributes["server.address"], served.attributes["server.port"]) == ("127.0.0.1", port)
    assert served.attributes["gen_ai.response.model"] == "gemini-2.5-flash-001"
    assert not {"server.address", "server.port"} & set(scripted.attributes)


def test_gen_ai_alone_a_message_with_media_is_the_agent_input_message(instrument: Any,
                                                                      exporter: SnapshotExporter) -> None:
    """Written in OTel GenAI alone (no ``input.value``, which holds only the message's text), the agent span has the
    user message the run was given as ``gen_ai.input.messages``: its text and its file part, as the model span's
    input has it, not flattened to its text."""
    import asyncio

    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    instrument(vocabularies="gen_ai", capture_content=True)
    message = types.Content(role="user", parts=[
        types.Part(text="Is this parcel mine?"),
        types.Part(file_data=types.FileData(file_uri="https://example.test/parcel.jpg", mime_type="image/jpeg"))])

    async def main() -> None:
        runner = Runner(app_name="support", agent=support_agent(ScriptedLlm([Text("It is.")])),
                        session_service=InMemorySessionService())
        await runner.session_service.create_session(app_name="support", user_id="u1", session_id="s1")
        async for _ in runner.run_async(user_id="u1", session_id="s1", new_message=message):
            pass

    asyncio.run(main())
    [agent] = exporter.semantic("agent")
    assert "input.value" not in agent.attributes
    validate_genai_json(dict(agent.attributes))
    [given] = json.loads(agent.attributes["gen_ai.input.messages"])
    assert given["role"] == "user" and [p["type"] for p in given["parts"]] == ["text", "uri"], given
    assert given["parts"][1]["uri"] == "https://example.test/parcel.jpg"
    [model] = exporter.semantic("model")
    assert json.loads(model.attributes["gen_ai.input.messages"])[-1] == given


def _told(result: Any, call_id: str) -> dict:
    """The function response ADK gave the model for ``call_id``."""
    return next(p.function_response.response for e in result.events for p in (e.content.parts if e.content else [])
                if p.function_response and p.function_response.id == call_id)


def test_a_call_of_a_tool_the_agent_lacks_is_a_refused_tool_span(instrumented: Any, exporter: SnapshotExporter,
                                                                  envelopes: list) -> None:
    """The model calls ``lokup``: ADK stands a bare ``BaseTool`` in for it, raises ``ValueError`` into the tool error
    callbacks and, none answering, tells the model no tool has that name; nothing runs. The tool span is a refused
    one: ERROR, ``error.type`` ``unknown_tool`` (not ``ValueError``, kept as its ``exception`` event),
    ``otel_agents.tool.denied``; the envelope lists the call as failed."""
    result = run_agent(support_agent(ScriptedLlm([call("lokup", order_id="A100"), "sorry"])))
    assert result.error is None and "no tool with that name" in _told(result, "call-lokup-0")["error"]
    [tool] = exporter.semantic("tool")
    assert tool.name == "execute_tool lokup" and tool.attributes["gen_ai.tool.call.id"] == "call-lokup-0"
    assert tool.status == StatusCode.ERROR and tool.attributes["error.type"] == "unknown_tool", tool.attributes
    assert tool.attributes["otel_agents.tool.denied"] is True
    assert [e[0] for e in tool.events] == ["exception"]
    assert parent_of(tool, exporter.semantic()).name == "invoke_agent support"
    [env] = check(envelopes)
    assert [(c["id"], c["status"]) for c in env["tool_calls"]] == [("call-lokup-0", "error")]


@pytest.mark.parametrize("arguments, validation", [({"zzz": 1}, False), ({"order_id": {"a": 1}}, True)],
                         ids=["mandatory-missing", "wrong-type"])
def test_arguments_a_function_tool_rejects_are_a_refused_tool_span(arguments: dict, validation: bool, instrumented: Any,
                                                                   exporter: SnapshotExporter, envelopes: list,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``lookup_order`` called without its mandatory ``order_id``, or (with ADK's argument validation on) with a
    value that is not a string: ``FunctionTool`` answers ``{"error": ...}`` and never calls the function. Its span
    is not an ok call whose result is ADK's complaint: ERROR, ``error.type`` ``validation_error``,
    ``otel_agents.tool.denied``, ADK's answer as the result and description; the envelope lists it as failed."""
    if validation:
        monkeypatch.setenv("ADK_ENABLE_FUNCTION_TOOL_ARG_VALIDATION", "1")
    ran: list = []

    def lookup_order(order_id: str) -> dict:
        """Look up an order by its id."""
        ran.append(order_id)
        return {"status": "shipped"}

    agent = support_agent(ScriptedLlm([call("lookup_order", **arguments), "sorry"]), tools=[lookup_order])
    told = _told(run_agent(agent), "call-lookup_order-0")
    assert ran == [] and list(told) == ["error"]
    [tool] = exporter.semantic("tool")
    assert tool.status == StatusCode.ERROR and tool.attributes["error.type"] == "validation_error", tool.attributes
    assert tool.attributes["otel_agents.tool.denied"] is True
    assert tool.json_attr("gen_ai.tool.call.arguments") == arguments
    assert tool.json_attr("gen_ai.tool.call.result") == told and tool.status_description == told["error"]
    [env] = check(envelopes)
    assert [(c["id"], c["status"]) for c in env["tool_calls"]] == [("call-lookup_order-0", "error")]


def test_a_tool_answering_an_error_dict_itself_is_an_ok_call(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A tool that ran and returned ``{"error": ...}`` in its own words is an ordinary call (not refused)."""

    def lookup_order(order_id: str) -> dict:
        """Look up an order by its id."""
        return {"error": f"Invoking `lookup_order()` failed: no order {order_id}"}

    run_agent(support_agent(ScriptedLlm([call("lookup_order", order_id="Z9"), "sorry"]), tools=[lookup_order]))
    [tool] = exporter.semantic("tool")
    assert tool.status == StatusCode.UNSET and "otel_agents.tool.denied" not in tool.attributes
