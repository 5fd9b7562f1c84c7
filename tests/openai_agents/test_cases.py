"""Field cases OA-1 … OA-6 (``../shared/cases/agents-sdk-clients-mcp.md``) and the SDK's own cases:
the real Agents SDK on the real ``OpenAIResponsesModel`` over a mock transport, no key, no network."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from typing import Any

import pytest
from agents import (Agent, GuardrailFunctionOutput, InputGuardrailTripwireTriggered, MaxTurnsExceeded, RunConfig,
                    Runner, TracingProcessor, custom_span, function_tool, input_guardrail, set_trace_processors,
                    set_tracing_disabled)
from agents.tracing import get_trace_provider
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from otel_agents._spans import semantic_span_for
from otel_agents.exporters.ecp import fold
from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
from tests.exporters.conftest import check
from tests.genai_schema import validate_genai_json
from tests.spans import SnapshotExporter, ancestors, parent_of, tree

from .fakes import (RaisingResponsesModel, ScriptedResponses, call, cut_off, fail, responses_model, say,
                    user_model_class, tool_then_answer)


def run_mode(mode: str, agent: Agent, prompt: str, **kwargs: Any) -> Any:
    """One run through ``Runner.run`` / ``run_sync`` / ``run_streamed`` (consumed to the end)."""
    if mode == "run_sync":
        return Runner.run_sync(agent, prompt, **kwargs).final_output

    async def main() -> Any:
        if mode == "run":
            return (await Runner.run(agent, prompt, **kwargs)).final_output
        result = Runner.run_streamed(agent, prompt, **kwargs)
        async for _ in result.stream_events():
            pass
        return result.final_output

    return asyncio.run(main())


MODES = ["run", "run_sync", "run_streamed"]


def one(exporter: SnapshotExporter, name: str) -> Any:
    [span] = [s for s in exporter.spans if s.name == name]
    return span


def lines_of(memory: Any) -> list[str]:
    [env] = check(fold(memory.get_finished_spans()))
    return [line.strip() for line in env["evaluation_context"].splitlines()]


@function_tool
def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    if order_id == "broken":
        raise ValueError("inventory service down")
    return f"Order {order_id}: shipped"


# -- OA-1 ----------------------------------------------------------------------------------------------
def test_oa1_handoff_is_a_delegation(instrumented: Any, exporter: SnapshotExporter, memory: Any) -> None:
    """OA-1: triage → tool transfer_to_billing (target recorded) → agent billing; each agent holds its own
    model spans; the fold shows ``agent billing delegated_by=triage``."""
    handler = ScriptedResponses({"triage": [call(("transfer_to_billing", {}))], "billing": [say("refund ok")]})
    model = responses_model(handler)
    billing = Agent(name="billing", instructions="billing", model=model)
    triage = Agent(name="triage", instructions="triage", model=model, handoffs=[billing])
    assert Runner.run_sync(triage, "refund?").final_output == "refund ok"

    spans = exporter.semantic()
    assert len({s.trace_id for s in spans}) == 1
    t, b = one(exporter, "invoke_agent triage"), one(exporter, "invoke_agent billing")
    handoff = one(exporter, "execute_tool transfer_to_billing")
    assert handoff.attributes["otel_agents.handoff.target"] == "billing"
    assert handoff.attributes["gen_ai.tool.call.id"].startswith("call_")
    assert parent_of(handoff, spans) == t and parent_of(b, spans) == handoff, tree(spans)
    for agent, n in ((t, 1), (b, 1)):
        assert len([s for s in spans if s.semantic_kind == "model" and s.parent_id == agent.span_id]) == n, tree(spans)
    assert b.end_time <= handoff.end_time <= t.end_time
    assert t.attributes["output.value"] == "refund ok" and b.attributes["input.value"] == "refund?"
    assert "agent billing delegated_by=triage" in lines_of(memory)


# -- OA-2 ----------------------------------------------------------------------------------------------
def _oa2_runs(exporter: SnapshotExporter) -> tuple[list[Any], list[Any]]:
    seen: list[Any] = []

    def step(body: dict) -> dict:
        current = semantic_span_for(trace.get_current_span())
        seen.append(current.kind.value if current is not None else None)
        return say("Your refund was approved.")

    handler = ScriptedResponses([step], repeat_last=True)
    agent = Agent(name="support", instructions="be terse", model=responses_model(handler))
    run_mode("run", agent, "refund?")
    run_mode("run_streamed", agent, "refund?")
    return exporter.semantic("model"), seen


def test_oa2_one_model_span_per_request(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OA-2 (Agents SDK instrumentor alone): two requests, two model spans under the agent, each with
    11/7/4 tokens and the text, the streamed one included; our model span is the current span while
    the SDK calls the OpenAI client (so a client instrumentor does not open a second one)."""
    models, seen = _oa2_runs(exporter)
    assert len(models) == 2
    assert seen == ["model", "model"]
    for m in models:
        assert parent_of(m, exporter.spans).semantic_kind == "agent"
        a = m.attributes
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"],
                a["gen_ai.usage.cache_read.input_tokens"]) == (11, 7, 4)
        assert a["output.value"] == "Your refund was approved."


@pytest.mark.parametrize("frameworks", [["openai_agents", "openai"], ["openai"]], ids=["both", "client_alone"])
def test_oa2_with_the_client_instrumentor(provider: Any, exporter: SnapshotExporter, frameworks: list[str]) -> None:
    """OA-2 with our OpenAI client instrumentor on too, and with it alone: still exactly one model span per
    request (run and run_streamed), each with 11/7/4 tokens and the response text, the streamed one included;
    under the agent's span whenever the Agents SDK instrumentor is on."""
    pytest.importorskip("otel_agents.instrumentors.openai")
    import otel_agents

    otel_agents.instrument(provider, frameworks=frameworks)
    try:
        models, _ = _oa2_runs(exporter)
    finally:
        otel_agents.uninstrument()
    assert len(models) == 2, tree(exporter.spans)
    for m in models:
        if "openai_agents" in frameworks:
            assert parent_of(m, exporter.spans).semantic_kind == "agent"
        a = m.attributes
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"],
                a["gen_ai.usage.cache_read.input_tokens"]) == (11, 7, 4), m.name
        assert a["output.value"] == "Your refund was approved.", m.name


# -- OA-3 ----------------------------------------------------------------------------------------------
class TheirProcessor(TracingProcessor):
    def __init__(self) -> None:
        self.spans: list[str] = []

    def on_trace_start(self, t: Any) -> None: ...
    def on_trace_end(self, t: Any) -> None: ...
    def on_span_start(self, s: Any) -> None: ...

    def on_span_end(self, s: Any) -> None:
        self.spans.append(s.span_data.type)

    def shutdown(self) -> None: ...
    def force_flush(self) -> None: ...


def _processors() -> tuple:
    return get_trace_provider()._multi_processor._processors


@pytest.mark.parametrize("theirs", [False, True], ids=["silenced", "their_processor"])
@pytest.mark.parametrize("order", ["instrument_first", "set_first"])
def test_oa3_spans_survive_set_trace_processors(provider: Any, exporter: SnapshotExporter, order: str,
                                                theirs: bool) -> None:
    """OA-3: ``set_trace_processors([])`` / ``([theirs])`` before or after instrument(): the full tree;
    uninstrument() removes only ours and leaves the user's list as they set it."""
    before = _processors()
    mine = TheirProcessor()
    wanted = [mine] if theirs else []
    inst = OpenAIAgentsInstrumentor()
    try:
        if order == "set_first":
            set_trace_processors(wanted)
        inst.instrument(tracer_provider=provider)
        if order == "instrument_first":
            set_trace_processors(wanted)
        agent = Agent(name="support", instructions="x", tools=[lookup_order],
                      model=responses_model(ScriptedResponses([tool_then_answer("lookup_order", {"order_id": "A1"})],
                                                              repeat_last=True)))
        Runner.run_sync(agent, "where is A1?")
        kinds = sorted(s.semantic_kind for s in exporter.semantic())
        assert kinds == ["agent", "chain", "model", "model", "tool"], tree(exporter.spans)
        assert (mine.spans != []) is theirs
        inst.uninstrument()
        assert list(_processors()) == wanted
        exporter.clear()
        mine.spans.clear()
        Runner.run_sync(agent, "where is A1?")
        assert exporter.semantic() == [] and (mine.spans != []) is theirs
    finally:
        inst.uninstrument()
        set_trace_processors(list(before))


def test_oa3_uninstrument_puts_back_every_original(provider: Any) -> None:
    """OA-3: ``uninstrument()`` puts back the very functions the SDK had where ours wrapped them, so instrumenting
    again never stacks a wrapper (before, with wrapt 2, whose ``FunctionWrapper`` is no ``ObjectProxy``, every
    one stayed on, inert: each instrument/uninstrument cycle added a layer to every trace and tool call)."""
    from agents.result import RunResultStreaming
    from agents.run_internal import tool_execution, turn_resolution
    from agents.tracing.provider import DefaultTraceProvider, SynchronousMultiTracingProcessor
    from agents.util import _error_tracing

    sites = [(DefaultTraceProvider, "create_trace"), (DefaultTraceProvider, "set_disabled"),
             (SynchronousMultiTracingProcessor, "set_processors"), (_error_tracing, "attach_error_to_span"),
             (turn_resolution, "check_for_final_output_from_tools"),
             (tool_execution._FunctionToolBatchExecutor, "_maybe_execute_tool_approval"), (RunResultStreaming, "cancel")]
    originals = [owner.__dict__[name] for owner, name in sites]
    before = _processors()
    for _ in range(2):
        inst = OpenAIAgentsInstrumentor()
        inst.instrument(tracer_provider=provider)
        assert all(owner.__dict__[name] is not was for (owner, name), was in zip(sites, originals))
        inst.uninstrument()
        assert [owner.__dict__[name] is was for (owner, name), was in zip(sites, originals)] == [True] * len(sites)
        assert _processors() == before


def test_oa3_spans_survive_a_list_replaced_without_set_trace_processors(provider: Any, exporter: SnapshotExporter,
                                                                       caplog: Any) -> None:
    """OA-3: another instrumentation that replaces the SDK's processor tuple itself, under the SDK's lock and
    without ``set_trace_processors`` (OpenInference's ``instrument()``, exclusive by default, 2.x): our processor
    is back before the next run's trace starts, with one warning; theirs stays and sees the run too.
    (OpenInference's instrumentor is not installed in this venv; checked with it in the benchmark venv.)"""
    before = _processors()
    theirs = TheirProcessor()
    inst = OpenAIAgentsInstrumentor()
    try:
        inst.instrument(tracer_provider=provider)
        multi = get_trace_provider()._multi_processor
        with multi._lock:
            multi._processors = (theirs,)
        agent = Agent(name="support", instructions="x", tools=[lookup_order],
                      model=responses_model(ScriptedResponses([tool_then_answer("lookup_order", {"order_id": "A1"})],
                                                              repeat_last=True)))
        with caplog.at_level(logging.WARNING, logger="otel_agents"):
            Runner.run_sync(agent, "where is A1?")
            Runner.run_sync(agent, "where is A1?")
        kinds = sorted(s.semantic_kind for s in exporter.semantic())
        assert kinds == ["agent", "agent", "chain", "chain", "model", "model", "model", "model", "tool", "tool"], \
            tree(exporter.spans)
        assert theirs.spans != []
        assert sum("replaced the OpenAI Agents SDK's trace processors" in r.getMessage()
                   for r in caplog.records) == 1
        inst.uninstrument()
        assert list(_processors()) == [theirs]
    finally:
        inst.uninstrument()
        set_trace_processors(list(before))


def test_oa3_tracing_disabled_is_said(provider: Any, exporter: SnapshotExporter, caplog: Any,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """OA-3: with the SDK's tracing disabled we see no runs (documented); a warning says so at the switch,
    and ``otel-agents doctor`` says why when ``OPENAI_AGENTS_DISABLE_TRACING`` is set."""
    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        with caplog.at_level(logging.WARNING, logger="otel_agents"):
            set_tracing_disabled(True)
        agent = Agent(name="support", instructions="x", model=responses_model(ScriptedResponses([say("ok")])))
        Runner.run_sync(agent, "hi")
        assert exporter.semantic() == []
        assert any("set_trace_processors([])" in r.getMessage() for r in caplog.records)
    finally:
        set_tracing_disabled(False)
        inst.uninstrument()
    env = {"OPENAI_AGENTS_DISABLE_TRACING": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "otel_agents.cli", "doctor"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "OPENAI_AGENTS_DISABLE_TRACING=1" in out.stdout and "no spans" in out.stdout


# -- OA-4 ----------------------------------------------------------------------------------------------
def _errored_up(exporter: SnapshotExporter, error_type: str) -> None:
    spans = exporter.semantic()
    root = next(s for s in spans if s.semantic_kind == "chain")
    agent = next(s for s in spans if s.semantic_kind == "agent")
    for s in (root, agent):
        assert s.status == StatusCode.ERROR and error_type in s.attributes["error.type"], tree(spans)
    assert all(s.end_time for s in spans)


@pytest.mark.parametrize("mode", MODES)
def test_oa4a_max_turns_fails_all_the_way_up(instrumented: Any, exporter: SnapshotExporter, memory: Any,
                                             mode: str) -> None:
    """OA-4 (a): max_turns exceeded: the exception reaches the caller; agent and root are ERROR."""
    handler = ScriptedResponses([lambda body: call(("lookup_order", {"order_id": "A1"}))], repeat_last=True)
    agent = Agent(name="support", instructions="x", model=responses_model(handler), tools=[lookup_order])
    with pytest.raises(MaxTurnsExceeded):
        run_mode(mode, agent, "where?", max_turns=2)
    _errored_up(exporter, "MaxTurnsExceeded")
    assert any(line.startswith("error") and "MaxTurnsExceeded" in line for line in lines_of(memory))


@pytest.mark.parametrize("mode", MODES)
def test_oa4b_model_error_fails_all_the_way_up(instrumented: Any, exporter: SnapshotExporter, memory: Any,
                                               mode: str) -> None:
    """OA-4 (b): the model step raises RuntimeError: unchanged to the caller; model, agent, root ERROR; the
    envelope has an error line."""
    agent = Agent(name="support", instructions="x", model=RaisingResponsesModel(RuntimeError("upstream 500")))
    with pytest.raises(RuntimeError, match="upstream 500"):
        run_mode(mode, agent, "where?")
    _errored_up(exporter, "RuntimeError")
    assert any(line.startswith("error") and "RuntimeError" in line for line in lines_of(memory))
    [model] = exporter.semantic("model")
    assert model.status == StatusCode.ERROR and model.attributes["error.type"] == "RuntimeError"


def test_oa4b_http_500_fails_all_the_way_up(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OA-4 (b) over HTTP: a 500 from the API is the client's InternalServerError, recorded with its type."""
    import openai

    agent = Agent(name="support", instructions="x", model=responses_model(ScriptedResponses([fail()])))
    with pytest.raises(openai.InternalServerError):
        Runner.run_sync(agent, "where?")
    _errored_up(exporter, "InternalServerError")


@pytest.mark.parametrize("mode", MODES)
def test_oa4c_tool_error_is_the_tools_only(instrumented: Any, exporter: SnapshotExporter, mode: str) -> None:
    """OA-4 (c): a tool raising ValueError: the tool span is ERROR with the type and carries the error
    text the model received (whatever the SDK version words it as); the agent and the run are OK."""
    handler = ScriptedResponses([call(("lookup_order", {"order_id": "broken"})), say("sorry")])
    agent = Agent(name="support", instructions="x", model=responses_model(handler), tools=[lookup_order])
    assert run_mode(mode, agent, "where?") == "sorry"
    [tool] = exporter.semantic("tool")
    assert tool.status == StatusCode.ERROR and tool.attributes["error.type"] == "ValueError"
    # the text the SDK sent back to the model (0.20 quotes the exception; 0.24 sends a generic message)
    [sent] = [item["output"] for body in handler.requests for item in body.get("input", [])
              if isinstance(item, dict) and item.get("type") == "function_call_output"]
    assert tool.attributes["gen_ai.tool.call.result"] == sent
    for s in exporter.semantic():
        if s.semantic_kind != "tool":
            assert s.status != StatusCode.ERROR, s.name


# -- OA-5 ----------------------------------------------------------------------------------------------
def test_oa5_agent_input_and_output_in_every_entry_point(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OA-5: run / run_sync / run_streamed give the same agent and model attributes."""
    seen = []
    for mode in MODES:
        exporter.clear()
        agent = Agent(name="support", instructions="be terse",
                      model=responses_model(ScriptedResponses([say("Your refund was approved.")])))
        assert run_mode(mode, agent, "refund?") == "Your refund was approved."
        [a], [m] = exporter.semantic("agent"), exporter.semantic("model")
        assert a.attributes["input.value"] == "refund?"
        assert a.attributes["output.value"] == "Your refund was approved."
        assert m.end_time <= a.end_time
        assert m.json_attr("gen_ai.system_instructions") == [{"type": "text", "content": "be terse"}]
        assert m.json_attr("gen_ai.input.messages") == [{"role": "user", "parts": [{"type": "text", "content": "refund?"}]}]
        validate_genai_json(m.attributes)
        # Only the streamed run's model call came in chunks (OTel GenAI v1.41: timed for streams only).
        streamed = ("gen_ai.response.time_to_first_chunk", "gen_ai.request.stream")
        assert all((k in m.attributes) == (mode == "run_streamed") for k in streamed), (mode, m.attributes)
        keep = ("input.value", "output.value", "gen_ai.agent.name", "otel_agents.span.kind")
        seen.append(({k: a.attributes[k] for k in keep},
                     {k: v for k, v in m.attributes.items()
                      if k.startswith(("gen_ai.", "llm.")) and k != "gen_ai.response.id" and k not in streamed}))
    assert seen[0] == seen[1] == seen[2]


# -- OA-6 ----------------------------------------------------------------------------------------------
def _oa6_agents(app_tracer: Any) -> Agent:
    @function_tool
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        with app_tracer.start_as_current_span("db.query"):
            return f"Order {order_id}: shipped"

    handler = ScriptedResponses({
        "boss": [call(("ask_researcher", {"input": "A100"})), say("A100 has shipped.")],
        "researcher": [call(("lookup_order", {"order_id": "A100"})), say("shipped")],
    })
    model = responses_model(handler)
    researcher = Agent(name="researcher", instructions="researcher", model=model, tools=[lookup_order])
    return Agent(name="boss", instructions="boss", model=model,
                 tools=[researcher.as_tool(tool_name="ask_researcher", tool_description="Ask the researcher")])


@pytest.mark.parametrize("how", ["run", "run_streamed", "create_task"])
def test_oa6_agents_as_tools_and_user_spans_in_one_tree(instrumented: Any, exporter: SnapshotExporter,
                                                        memory: Any, app_tracer: Any, how: str) -> None:
    """OA-6: http.request → agent boss → tool ask_researcher → agent researcher → tool lookup_order → db.query,
    one trace, nothing a new root; the fold shows ``agent researcher delegated_by=boss``."""
    boss = _oa6_agents(app_tracer)

    async def main() -> None:
        with app_tracer.start_as_current_span("http.request"):
            if how == "create_task":
                await asyncio.create_task(Runner.run(boss, "Where is A100?"))
            elif how == "run":
                await Runner.run(boss, "Where is A100?")
            else:
                result = Runner.run_streamed(boss, "Where is A100?")
                async for _ in result.stream_events():
                    pass

    asyncio.run(main())
    spans = exporter.spans
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    db = one(exporter, "db.query")
    chain = [db] + ancestors(db, spans)
    names = [s.name for s in chain]
    assert names[:6] == ["db.query", "execute_tool lookup_order", "invoke_agent researcher",
                         "execute_tool ask_researcher", "invoke_agent boss", "invoke_workflow Agent workflow"], names
    assert names[-1] == "http.request"
    roots = [s for s in spans if s.parent_id is None]
    assert [r.name for r in roots] == ["http.request"]
    assert "agent researcher delegated_by=boss" in lines_of(memory)


# -- the SDK's own cases ---------------------------------------------------------------------------------
def test_parallel_tool_calls_keep_their_ids(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Two calls in one response: two tool spans, each with its own call id, under the agent."""
    handler = ScriptedResponses([call(("lookup_order", {"order_id": "A1"}), ("lookup_order", {"order_id": "A2"})),
                                 say("both shipped")])
    agent = Agent(name="support", instructions="x", model=responses_model(handler), tools=[lookup_order])
    Runner.run_sync(agent, "A1 and A2?")
    tools = exporter.semantic("tool")
    assert len(tools) == 2
    ids = {t.attributes["gen_ai.tool.call.id"]: t.attributes["gen_ai.tool.call.arguments"] for t in tools}
    assert len(ids) == 2 and sorted(ids.values()) == ['{"order_id":"A1"}', '{"order_id":"A2"}']


def test_input_guardrail_tripping_fails_the_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A tripped input guardrail: a ``guardrail {name}`` chain span (OpenInference GUARDRAIL, triggered=true,
    ERROR), and the run fails with InputGuardrailTripwireTriggered."""

    @input_guardrail
    def no_refunds(ctx: Any, agent: Any, text: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info="refund", tripwire_triggered="refund" in str(text))

    agent = Agent(name="support", instructions="x", input_guardrails=[no_refunds],
                  model=responses_model(ScriptedResponses([say("ok")], repeat_last=True)))
    with pytest.raises(InputGuardrailTripwireTriggered):
        Runner.run_sync(agent, "refund?")
    g = one(exporter, "guardrail no_refunds")
    assert g.semantic_kind == "chain" and g.attributes["openinference.span.kind"] == "GUARDRAIL"
    assert g.attributes["langfuse.observation.type"] == "guardrail"
    assert g.attributes["otel_agents.guardrail.triggered"] is True and g.status == StatusCode.ERROR
    # the SDK's word (GuardrailFunctionOutput.tripwire_triggered), in-band: no exception class of ours named
    assert g.attributes["error.type"] == "tripwire_triggered" and not [e for e in g.events if e.name == "exception"]
    assert parent_of(g, exporter.spans).semantic_kind == "agent"
    _errored_up(exporter, "InputGuardrailTripwireTriggered")
    exporter.clear()
    Runner.run_sync(agent, "where is A1?")
    g = one(exporter, "guardrail no_refunds")
    assert g.attributes["otel_agents.guardrail.triggered"] is False and g.status != StatusCode.ERROR


def test_workflow_name_group_id_and_custom_spans(instrumented: Any, exporter: SnapshotExporter) -> None:
    """RunConfig.workflow_name names the root; group_id is every span's session.id; a custom span is a chain."""

    @function_tool
    def step(order_id: str) -> str:
        """A step with a custom span."""
        with custom_span("cache lookup", {"key": order_id}):
            return "hit"

    handler = ScriptedResponses([call(("step", {"order_id": "A1"})), say("done")])
    agent = Agent(name="support", instructions="x", model=responses_model(handler), tools=[step])
    Runner.run_sync(agent, "go", run_config=RunConfig(workflow_name="refunds", group_id="thread-7"))
    root = one(exporter, "invoke_workflow refunds")
    assert root.attributes["gen_ai.workflow.name"] == "refunds" and root.attributes["output.value"] == "done"
    assert {s.attributes.get("session.id") for s in exporter.semantic()} == {"thread-7"}
    custom = one(exporter, "cache lookup")
    assert custom.semantic_kind == "chain" and parent_of(custom, exporter.spans).name == "execute_tool step"


def test_reasoning_and_usage(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A reasoning summary is a reasoning part (never text); cached and reasoning tokens are recorded."""
    handler = ScriptedResponses([say("42", reasoning="Think about the order.")])
    agent = Agent(name="support", instructions="x", model=responses_model(handler))
    Runner.run_sync(agent, "?")
    [m] = exporter.semantic("model")
    out = validate_genai_json(m.attributes)["gen_ai.output.messages"]
    assert out[0]["parts"] == [{"type": "reasoning", "content": "Think about the order."},
                               {"type": "text", "content": "42"}]
    assert m.attributes["gen_ai.usage.reasoning.output_tokens"] == 2
    assert m.attributes["gen_ai.usage.cache_read.input_tokens"] == 4
    assert m.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    defs = m.json_attr("gen_ai.tool.definitions") if "gen_ai.tool.definitions" in m.attributes else []
    assert defs == []


def test_content_off(provider: Any, exporter: SnapshotExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    """Content off: no messages, inputs, outputs, arguments or results; usage and finish reasons stay."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        handler = ScriptedResponses([call(("lookup_order", {"order_id": "SECRET1"})), say("SECRET2")])
        agent = Agent(name="support", instructions="SECRET3", model=responses_model(handler), tools=[lookup_order])
        Runner.run_sync(agent, "SECRET4")
    finally:
        inst.uninstrument()
    spans = exporter.semantic()
    assert sorted(s.semantic_kind for s in spans) == ["agent", "chain", "model", "model", "tool"]
    for s in spans:
        assert "SECRET" not in str(s.attributes), s.name
    assert exporter.semantic("model")[0].attributes["gen_ai.usage.input_tokens"] == 11
    assert exporter.semantic("model")[0].attributes["gen_ai.response.finish_reasons"] == ("tool_call",)


@pytest.mark.parametrize("content", ["true", "false"])
def test_trace_metadata_is_run_metadata_whatever_the_content_switch(provider: Any, exporter: SnapshotExporter,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    content: str) -> None:
    """RunConfig.trace_metadata is the application's labels, as otel_agents.using_metadata's are: on the trace's
    root, merged over the enclosing using_metadata (the trace's keys win), with content capture on or off
    (OpenInference never masks metadata; the SDK's trace_include_sensitive_data leaves it). It was content: gone
    with content off, and with it on the using_metadata keys were replaced on the root."""
    import otel_agents

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", content)
    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        handler = ScriptedResponses([call(("lookup_order", {"order_id": "A1"})), say("done")])
        agent = Agent(name="support", instructions="x", model=responses_model(handler), tools=[lookup_order])
        with otel_agents.using_metadata({"tenant": "t-1", "tier": "silver"}):
            Runner.run_sync(agent, "go", run_config=RunConfig(trace_metadata={"tier": "gold", "experiment": "e7"}))
    finally:
        inst.uninstrument()
    spans = exporter.semantic()
    assert sorted(s.semantic_kind for s in spans) == ["agent", "chain", "model", "model", "tool"]
    [root] = exporter.semantic("chain")
    assert json.loads(root.attributes["metadata"]) == {"tenant": "t-1", "tier": "gold", "experiment": "e7"}
    for s in spans:
        if s is not root:
            assert json.loads(s.attributes["metadata"]) == {"tenant": "t-1", "tier": "silver"}, s.name


def refund_agent(ran: list[str]) -> Agent:
    """An agent whose model calls ``refund(order_id="A1")``, a ``needs_approval`` tool (each order it refunds goes
    into ``ran``), then answers ``Refunded.``."""

    @function_tool(needs_approval=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        ran.append(order_id)
        return "refunded"

    handler = ScriptedResponses([call(("refund", {"order_id": "A1"})), say("Refunded.")])
    return Agent(name="support", instructions="x", model=responses_model(handler), tools=[refund])


@pytest.mark.parametrize("mode", MODES)
def test_e2_a_tool_awaiting_approval_pauses_the_run(instrumented: Any, exporter: SnapshotExporter, envelopes: list,
                                                    mode: str) -> None:
    """E-2 in the Agents SDK: a ``needs_approval`` tool the model calls is not run; the run returns with
    ``interruptions``. The tool span and the agent span are marked paused (the tool's span was ``ok`` with the
    SDK's internal result object dumped as its output), and the envelope is ``status: paused`` with a ``paused``
    line and no output leaked from the run's state."""
    ran: list[str] = []
    agent = refund_agent(ran)
    assert run_mode(mode, agent, "Refund SECRET-ORDER-9") is None and ran == []
    [tool], [agent_span] = exporter.semantic("tool"), exporter.semantic("agent")
    assert "tool_approval_item" not in json.dumps(tool.attributes)  # no SDK object dumped as the tool's output
    for span in (tool, agent_span):
        assert span.attributes.get("otel_agents.run.paused") is True, span.name
        assert span.status != StatusCode.ERROR
    assert "gen_ai.tool.call.result" not in tool.attributes and "output.value" not in tool.attributes
    [env] = check(envelopes)
    assert env["status"] == "paused" and env["public_output"] is None
    assert any(line.strip().startswith("paused ") for line in env["evaluation_context"].splitlines())


def test_e2_a_pending_approval_is_paused_without_sensitive_data(instrumented: Any, exporter: SnapshotExporter,
                                                                 envelopes: list) -> None:
    """``trace_include_sensitive_data=False``: the SDK records no output on the function span at all (0.20 neither
    its result object), yet the tool waiting for approval and its agent are paused, and the envelope says so."""
    agent = refund_agent([])
    result = Runner.run_sync(agent, "Refund A1", run_config=RunConfig(trace_include_sensitive_data=False))
    assert [i.tool_name for i in result.interruptions] == ["refund"]
    [tool], [agent_span] = exporter.semantic("tool"), exporter.semantic("agent")
    assert tool.attributes.get("otel_agents.run.paused") is True
    assert agent_span.attributes.get("otel_agents.run.paused") is True
    [env] = check(envelopes)
    assert env["status"] == "paused"


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_that_returns_none_is_not_paused(instrumented: Any, exporter: SnapshotExporter, envelopes: list,
                                                 mode: str) -> None:
    """A tool that ran and returned ``None`` (0.24 records a pending approval's output as ``None`` too) is not
    paused, nor is its agent or the run; one whose ``needs_approval`` callable says no runs and is not paused
    either."""
    ran: list[str] = []

    async def never(_ctx: Any, _params: dict, _call_id: str) -> bool:
        return False

    @function_tool
    def note(text: str) -> None:
        """Write a note."""
        ran.append(text)

    @function_tool(needs_approval=never)
    def archive(text: str) -> None:
        """Archive a note."""
        ran.append(f"archived {text}")

    handler = ScriptedResponses([call(("note", {"text": "hi"}), ("archive", {"text": "hi"})), say("Noted.")])
    agent = Agent(name="support", instructions="x", model=responses_model(handler), tools=[note, archive])
    assert run_mode(mode, agent, "Note hi") == "Noted." and sorted(ran) == ["archived hi", "hi"]
    tools, [agent_span] = exporter.semantic("tool"), exporter.semantic("agent")
    assert sorted(t.attributes["gen_ai.tool.name"] for t in tools) == ["archive", "note"]
    for span in [*tools, agent_span, *exporter.semantic("chain")]:
        assert "otel_agents.run.paused" not in span.attributes, span.name
        assert span.status != StatusCode.ERROR, span.name
    [env] = check(envelopes)
    assert env["status"] == "done" and env["public_output"] == "Noted."


def test_an_approved_tool_runs_and_is_not_paused(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The run paused on a tool waiting for approval, resumed with the call approved: the tool runs in the second
    run, and its span there has its result and is not paused (the first run's tool span is). The resumed run is one
    tree under a workflow span of its own, as every run is (the SDK carries on the first run's trace without
    starting it again), ended, nothing left current."""
    ran: list[str] = []
    agent = refund_agent(ran)
    first = Runner.run_sync(agent, "Refund A1")
    state = first.to_state()
    [pending] = first.interruptions
    state.approve(pending)
    before = {s.span_id for s in exporter.spans}
    assert Runner.run_sync(agent, state).final_output == "Refunded." and ran == ["A1"]
    second = [s for s in exporter.semantic() if s.span_id not in before]
    [root] = [s for s in second if s.parent_id is None]
    assert root.name == "invoke_workflow Agent workflow" and all(s.end_time for s in second), tree(second)
    assert {s.name for s in second if parent_of(s, second) is root} >= {"invoke_agent support"}, tree(second)
    assert not trace.get_current_span().get_span_context().is_valid
    paused, done = exporter.semantic("tool")
    assert paused.attributes.get("otel_agents.run.paused") is True
    assert "otel_agents.run.paused" not in done.attributes and done.status != StatusCode.ERROR
    assert done.attributes["gen_ai.tool.call.result"] == "refunded"


def test_tool_definitions_offered(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The tools offered to the model are tool definitions (name, description, JSON schema)."""
    handler = ScriptedResponses([say("ok")])
    agent = Agent(name="support", instructions="x", model=responses_model(handler), tools=[lookup_order])
    Runner.run_sync(agent, "?")
    [m] = exporter.semantic("model")
    [d] = m.json_attr("gen_ai.tool.definitions")
    assert d["name"] == "lookup_order" and d["description"] == "Look up an order by its id."
    assert d["parameters"]["properties"]["order_id"]["type"] == "string"


@function_tool
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    return f"Refund for {order_id}: issued"


def _offered(m: Any) -> list[str]:
    return [d["name"] for d in m.json_attr("gen_ai.tool.definitions")]


@pytest.mark.parametrize("mode", MODES)
def test_every_model_span_records_the_tools_offered(instrumented: Any, exporter: SnapshotExporter,
                                                     tool_writes: dict[int, int], mode: str) -> None:
    """Responses API, whole and streamed, with a tool call and a handoff: every model span records the tools its
    request offered (its agent's tools, then its handoffs), each written once; one model span per request."""
    handler = ScriptedResponses({"triage": [call(("lookup_order", {"order_id": "A100"})),
                                            call(("transfer_to_billing", {}))],
                                 "billing": [say("refund ok")]})
    model = responses_model(handler)
    billing = Agent(name="billing", instructions="billing", model=model, tools=[issue_refund])
    triage = Agent(name="triage", instructions="triage", model=model, tools=[lookup_order], handoffs=[billing])
    assert run_mode(mode, triage, "refund?") == "refund ok"
    models = exporter.semantic("model")
    assert len(models) == len(handler.requests) == 3, tree(exporter.semantic())
    assert [_offered(m) for m in models] == [["lookup_order", "transfer_to_billing"]] * 2 + [["issue_refund"]]
    for m in models:
        assert tool_writes[m.span_id] == 1, m.name


def test_a_failed_request_records_the_tools_it_offered(instrumented: Any, exporter: SnapshotExporter,
                                                        tool_writes: dict[int, int]) -> None:
    """The API answers 500 (no Response to echo them): the failed request's model span still records the tools
    it offered."""
    import openai

    agent = Agent(name="support", instructions="x", model=responses_model(ScriptedResponses([fail()])),
                  tools=[lookup_order])
    with pytest.raises(openai.InternalServerError):
        Runner.run_sync(agent, "where?")
    [m] = exporter.semantic("model")
    assert m.status == StatusCode.ERROR and _offered(m) == ["lookup_order"]
    assert tool_writes[m.span_id] == 1


def test_a_streamed_response_the_api_ended_incomplete_fails_its_model_span(instrumented: Any,
                                                                           exporter: SnapshotExporter) -> None:
    """The API ends a streamed response ``incomplete`` (``max_output_tokens``): the SDK's runner raises
    ModelBehaviorError at the ``response.incomplete`` event and closes the model's stream, which never raises.
    The request failed all the same: its model span says so (it was left UNSET and marked abandoned), as the
    agent's does. (Not streamed, the SDK's model raises it itself, from 0.21 on, through our span.)"""
    from agents.exceptions import ModelBehaviorError

    agent = Agent(name="support", instructions="x", model=responses_model(ScriptedResponses([cut_off("Your ord")])))

    async def run() -> None:
        async for _ in Runner.run_streamed(agent, "where?").stream_events():
            pass

    with pytest.raises(ModelBehaviorError):
        asyncio.run(run())
    [m] = exporter.semantic("model")
    assert m.status == StatusCode.ERROR and m.attributes["error.type"].endswith("ModelBehaviorError")
    assert "otel_agents.stream.abandoned" not in m.attributes
    [a] = exporter.semantic("agent")
    assert a.status == StatusCode.ERROR


@pytest.mark.parametrize("model_class", ["sdk", "user"])
def test_tools_offered_are_content_the_sdk_keeps_back(instrumented: Any, exporter: SnapshotExporter,
                                                       model_class: str) -> None:
    """``trace_include_sensitive_data=False``: the SDK gives no content, and the model spans record no tools
    offered either, on the SDK's model class and on one of the user's own."""
    script = [call(("lookup_order", {"order_id": "A100"})), say("shipped")]
    model = responses_model(ScriptedResponses(script)) if model_class == "sdk" else user_model_class()(script)
    agent = Agent(name="support", instructions="x", model=model, tools=[lookup_order])
    Runner.run_sync(agent, "where?", run_config=RunConfig(trace_include_sensitive_data=False))
    models = exporter.semantic("model")
    assert len(models) == 2
    for m in models:
        assert not [k for k in m.attributes if k.startswith(("gen_ai.tool.definitions", "llm.tools"))], m.name


def test_instrument_does_not_import_the_sdk() -> None:
    """Installed on import: instrument() before the application imports ``agents`` does not import it,
    and the first import instruments it."""
    code = ("import sys, otel_agents\n"
            "done = otel_agents.instrument(frameworks=['openai_agents'])\n"
            "assert done == ['openai_agents'] and 'agents' not in sys.modules, sys.modules.keys()\n"
            "import agents\n"
            "from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor\n"
            "assert OpenAIAgentsInstrumentor()._installation is not None\n"
            "print(otel_agents.instrumentation_status()['openai_agents'].instrumented)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


# -- issue #34 fault 1: a model class of the user's own --------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_fault1_user_model_class_gets_one_model_span_per_request(instrumented: Any, exporter: SnapshotExporter,
                                                                  memory: Any, mode: str) -> None:
    """Issue #34 fault 1: an ``agents.Model`` subclass of the user's own, defined after instrument(), which the
    SDK does not trace: one model span per request under the agent, with that call's usage, tool calls and
    text (ground truth recorded by the model), the finish reason only when it gave one, no provider invented; the
    tool span keeps the model's call id; the envelope's public_output is the answer and its usage the sum."""
    in_house = user_model_class()(
        [call(("lookup_order", {"order_id": "A100"})), say("Order A100: shipped")])
    agent = Agent(name="support", instructions="be terse", model=in_house, tools=[lookup_order])
    assert run_mode(mode, agent, "Where is A100?") == "Order A100: shipped"

    spans = exporter.semantic()
    models = exporter.semantic("model")
    assert len(models) == len(in_house.truth) == 2, tree(spans)
    for span, truth in zip(models, in_house.truth):
        a = span.attributes
        assert parent_of(span, spans).name == "invoke_agent support", tree(spans)
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == truth["usage"]
        assert a.get("gen_ai.response.finish_reasons") == ((truth["finish_reason"],) if truth["finish_reason"] else None)
        assert "gen_ai.provider.name" not in a
        out = validate_genai_json(a)["gen_ai.output.messages"]
        assert out[0]["finish_reason"] == (truth["finish_reason"] or "")
        calls = [(p["name"], json.loads(p["arguments"]) if isinstance(p["arguments"], str) else p["arguments"], p["id"])
                 for p in out[0]["parts"] if p["type"] == "tool_call"]
        assert calls == truth["tool_calls"]
        texts = [p["content"] for p in out[0]["parts"] if p["type"] == "text"]
        assert ("".join(texts) or None) == truth["text"]
    [tool] = exporter.semantic("tool")
    assert tool.attributes["gen_ai.tool.call.id"] == in_house.truth[0]["tool_calls"][0][2]
    [env] = check(fold(memory.get_finished_spans()))
    assert env["public_output"] == "Order A100: shipped"
    assert (env["usage"]["input_tokens"], env["usage"]["output_tokens"]) == (26, 10)
    assert [c["name"] for c in env["tool_calls"]] == ["lookup_order"]


def test_user_model_class_stream_cut_before_response_completed(instrumented: Any, exporter: SnapshotExporter,
                                                               memory: Any) -> None:
    """A model class of the user's own whose stream ends after its items without ``response.completed`` (the SDK
    then fails the run: no final response): its model span failed as cut short (``error.type``
    ``stream_incomplete``), with the items the model yielded (ground truth recorded by the model) and no finish
    reason or usage. Fails before: status unset and no output at all."""
    from agents.exceptions import ModelBehaviorError

    in_house = user_model_class()([say("Order A100: shipped")], cut=True)
    agent = Agent(name="support", model=in_house)
    with pytest.raises(ModelBehaviorError):
        run_mode("run_streamed", agent, "Where is A100?")
    [model] = exporter.semantic("model")
    a = model.attributes
    assert (model.status.name, a.get("error.type")) == ("ERROR", "stream_incomplete"), tree(exporter.spans)
    [truth] = in_house.truth
    out = validate_genai_json(a)["gen_ai.output.messages"]
    assert out == [{"role": "assistant", "parts": [{"type": "text", "content": truth["text"]}], "finish_reason": ""}]
    assert truth["usage"] is None and not [k for k in a if k.startswith("gen_ai.usage.")]
    assert "gen_ai.response.finish_reasons" not in a
    assert any(line.startswith("model ") and line.endswith(" stream=incomplete") for line in lines_of(memory))


@pytest.mark.parametrize("mode", MODES)
def test_fault1_sdk_model_subclass_is_still_one_span_per_request(instrumented: Any, exporter: SnapshotExporter,
                                                                  mode: str) -> None:
    """A subclass of the SDK's own OpenAIResponsesModel, defined after instrument(), overriding get_response and
    stream_response with a super() call: the SDK's response span and our hook are one model span per request
    (the hook's span, filled from the SDK's), with the provider's usage, never two."""
    from agents import OpenAIResponsesModel

    class Audited(OpenAIResponsesModel):
        calls = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            type(self).calls += 1
            return await super().get_response(*args, **kwargs)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            type(self).calls += 1
            return super().stream_response(*args, **kwargs)

    base = responses_model(ScriptedResponses([tool_then_answer("lookup_order", {"order_id": "A100"})],
                                             repeat_last=True))
    model = Audited(model=base.model, openai_client=base._client)
    agent = Agent(name="support", instructions="be terse", model=model, tools=[lookup_order])
    assert run_mode(mode, agent, "Where is A100?") == "Done: Order A100: shipped"
    models = exporter.semantic("model")
    assert len(models) == Audited.calls == 2, tree(exporter.semantic())
    for m in models:
        a = m.attributes
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (11, 7)
        assert a["gen_ai.provider.name"] == "openai" and parent_of(m, exporter.spans).semantic_kind == "agent"


@pytest.mark.parametrize("mode", MODES)
def test_service_tier_served_is_on_the_model_span(instrumented: Any, exporter: SnapshotExporter, mode: str) -> None:
    """Issue #34 fault 6, the Agents SDK's side: the tier the Response says served it (the SDK's response span
    carries the Response) is openai.response.service_tier on the model span, whole and streamed."""
    agent = Agent(name="support", instructions="x", model=responses_model(ScriptedResponses([say("ok")])))
    run_mode(mode, agent, "?")
    [m] = exporter.semantic("model")
    assert m.attributes["openai.response.service_tier"] == "default"


def test_tool_use_behavior_answering_is_the_agent_output(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``tool_use_behavior="stop_on_first_tool"``: the tool's result is the final output and the model is not
    asked again: one model span (the request that asked for the tool), and the agent's output is that result."""
    handler = ScriptedResponses([call(("lookup_order", {"order_id": "A100"}))])
    agent = Agent(name="support", instructions="Help.", model=responses_model(handler), tools=[lookup_order],
                  tool_use_behavior="stop_on_first_tool")
    result = Runner.run_sync(agent, "Where is A100?")
    assert len(handler.requests) == 1
    assert len(exporter.semantic("model")) == 1
    [agent_span] = exporter.semantic("agent")
    assert agent_span.attributes["output.value"] == result.final_output


def test_uninstrument_mid_handoff_ends_every_span(provider: Any, exporter: SnapshotExporter) -> None:
    """uninstrument() while a handed-off agent runs: the SDK's span ends no longer reach us, so the handoff's
    tool span and the agent that handed off (held until the delegate is done) end then, not never."""
    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider)

    @function_tool
    def stop_tracing() -> str:
        """Stop tracing."""
        inst.uninstrument()
        return "stopped"

    handler = ScriptedResponses({"triage": [call(("transfer_to_billing", {}))],
                                 "billing": [call(("stop_tracing", {})), say("refund ok")]})
    model = responses_model(handler)
    billing = Agent(name="billing", instructions="billing", model=model, tools=[stop_tracing])
    triage = Agent(name="triage", instructions="triage", model=model, handoffs=[billing])
    try:
        assert Runner.run_sync(triage, "refund?").final_output == "refund ok"
    finally:
        if inst.is_instrumented_by_opentelemetry:
            inst.uninstrument()
    names = {s.name for s in exporter.spans}
    assert {"invoke_agent triage", "execute_tool transfer_to_billing", "invoke_agent billing"} <= names
    assert inst.open_spans() == 0 and trace.get_current_span() is trace.INVALID_SPAN


@pytest.mark.parametrize("kind", ["chain", "agent"])
def test_uninstrument_racing_a_span_start_leaves_nothing_open(provider: Any, exporter: SnapshotExporter,
                                                              kind: str) -> None:
    """uninstrument() on another thread while a run's span (its trace's root, or its agent) is being opened: the
    start had passed the processor's "still active" check, and its span lands in the maps after uninstrument()
    ended what they held; the SDK then no longer reports the end to us. That span ends all the same, at once, and
    nothing stays open. (The interleaving of the two threads is made here in one: uninstrument() runs inside the
    span's opening.)"""
    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    processor, telemetry = inst._installation.processor, inst.telemetry
    start_span = type(telemetry).start_span
    raced: list[Any] = []

    def racing_start(self: Any, span_kind: Any, *args: Any, **kwargs: Any) -> Any:
        span = start_span(self, span_kind, *args, **kwargs)
        if str(getattr(span_kind, "value", span_kind)) == kind and not raced:
            raced.append(span)
            inst.uninstrument()
        return span

    handler = ScriptedResponses([say("ok")])
    agent = Agent(name="support", instructions="Help.", model=responses_model(handler))
    type(telemetry).start_span = racing_start
    try:
        assert Runner.run_sync(agent, "hi").final_output == "ok"
    finally:
        type(telemetry).start_span = start_span
        if inst.is_instrumented_by_opentelemetry:
            inst.uninstrument()
    assert raced and raced[0].ended, "the span opened as uninstrument() ran never ended"
    assert len(processor) == 0
    assert all(s.end_time for s in exporter.semantic())
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_model_span_server_and_output_type_as_sent(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 inference span: server.address/port where the SDK's model class connects (its client's
    base_url), gen_ai.output.type ``json`` for an agent whose output type the SDK sends as a JSON schema
    (``text.format``); a plain-text agent asks for no format and gets none. Compared with the requests the fake
    received. (The Responses API has no ``n``: no choice count.)"""
    import httpx
    from agents import OpenAIResponsesModel
    from openai import AsyncOpenAI
    from pydantic import BaseModel

    class Status(BaseModel):
        status: str

    handler = ScriptedResponses([say('{"status": "shipped"}'), say("It shipped.")])
    client = AsyncOpenAI(api_key="test-key", max_retries=0, base_url="http://127.0.0.1:8011/v1",
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    model = OpenAIResponsesModel(model="gpt-4.1-mini", openai_client=client)
    assert Runner.run_sync(Agent(name="clerk", model=model, output_type=Status), "A100?").final_output.status == \
        "shipped"
    Runner.run_sync(Agent(name="clerk", model=model), "A100?")
    asked, plain = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    assert handler.requests[0]["text"]["format"]["type"] == "json_schema"
    assert "format" not in (handler.requests[1].get("text") or {})
    assert asked.attributes["gen_ai.output.type"] == "json"
    assert "gen_ai.output.type" not in plain.attributes
    for span in (asked, plain):
        assert (span.attributes["server.address"], span.attributes["server.port"]) == ("127.0.0.1", 8011)


def test_gen_ai_alone_the_agent_input_is_the_conversation_it_was_given(provider: Any,
                                                                        exporter: SnapshotExporter) -> None:
    """Written in OTel GenAI alone (no ``input.value``, which holds the last user text), a run given a conversation
    (a list of input items) has it whole on its agent span as ``gen_ai.input.messages`` (the items of the agent's
    first request; its instructions are no part of its input, as with a Chat Completions model)."""
    from otel_agents._spans import Settings

    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider, settings=Settings(vocabularies="gen_ai", capture_content=True))
    try:
        agent = Agent(name="support", instructions="Answer briefly.",
                      model=responses_model(ScriptedResponses([say("It shipped.")])))
        items = [{"role": "user", "content": "Where is A1?"}, {"role": "assistant", "content": "Which order?"},
                 {"role": "user", "content": "A1, please."}]
        assert Runner.run_sync(agent, items).final_output == "It shipped."
    finally:
        inst.uninstrument()
    agent_span = one(exporter, "invoke_agent support")
    assert "input.value" not in agent_span.attributes
    messages = json.loads(agent_span.attributes["gen_ai.input.messages"])
    assert [(m["role"], [p.get("content") for p in m["parts"]]) for m in messages] == [
        ("user", ["Where is A1?"]), ("assistant", ["Which order?"]), ("user", ["A1, please."])]
    assert "gen_ai.system_instructions" not in agent_span.attributes


def test_a_custom_spans_input_is_not_set_where_it_is_written_nowhere(provider: Any, exporter: SnapshotExporter,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A custom span's data is its input (``input.value``), OpenInference's and Langfuse's: in OTel GenAI alone it
    is written nowhere and not handed to the span only to be dropped; with all three vocabularies it is written."""
    from otel_agents._spans import SemanticSpan, Settings

    given: list[str] = []
    set_input = SemanticSpan.set_input
    monkeypatch.setattr(SemanticSpan, "set_input",
                        lambda self, *a, **k: given.append(self.name) or set_input(self, *a, **k))

    @function_tool
    def step(order_id: str) -> str:
        """A step with a custom span."""
        with custom_span("cache lookup", {"key": order_id}):
            return "hit"

    for vocabularies in ("gen_ai", None):
        given.clear()
        inst = OpenAIAgentsInstrumentor()
        inst.instrument(tracer_provider=provider, settings=Settings(vocabularies=vocabularies, capture_content=True))
        try:
            handler = ScriptedResponses([call(("step", {"order_id": "A1"})), say("done")])
            Runner.run_sync(Agent(name="support", instructions="x", model=responses_model(handler), tools=[step]), "go")
        finally:
            inst.uninstrument()
        custom = one(exporter, "cache lookup")
        if vocabularies == "gen_ai":
            assert "cache lookup" not in given and given  # (the agent's and the run's inputs are still set)
            assert not any(k.startswith("input.") for k in custom.attributes)
            exporter.clear()
        else:
            assert "cache lookup" in given and json.loads(custom.attributes["input.value"]) == {"key": "A1"}


@pytest.mark.parametrize("raw", ["{not json", '{"query": 5, "extra": 1}', "[1]"],
                         ids=["not-json", "invalid", "not-object"])
def test_arguments_the_sdk_rejects_before_the_tool_runs_are_a_refused_call(raw: str, instrumented: Any,
                                                                           exporter: SnapshotExporter,
                                                                           memory: Any) -> None:
    """A function call whose arguments are not JSON, fail the tool's parameters or are no JSON object: the SDK raises
    ``ModelBehaviorError`` ("Invalid JSON input for tool ...") before the function runs, traces its function span
    with the error and tells the model its ``failure_error_function`` text. Our tool span is a refused call, not a
    failed run of the tool: ERROR, ``error.type`` ``validation_error``, ``otel_agents.tool.denied``, the SDK's
    exception kept as its event, the text the model was told as result and description; the envelope lists it as
    failed. Ground truth: the function call output the model was sent."""
    ran: list = []

    @function_tool
    def lookup(query: str) -> str:
        """Look something up."""
        ran.append(query)
        return f"found {query}"

    bad = {"output": [{"type": "function_call", "id": "fc_r", "call_id": "call_r", "name": "lookup",
                       "arguments": raw, "status": "completed"}]}
    script = ScriptedResponses([bad, say("sorry")])
    agent = Agent(name="support", instructions="help", tools=[lookup], model=responses_model(script))
    assert asyncio.run(Runner.run(agent, "go")).final_output == "sorry" and ran == []
    [told] = [i["output"] for i in script.requests[1]["input"] if i.get("type") == "function_call_output"]
    [tool] = exporter.semantic("tool")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_r"
    assert tool.status == StatusCode.ERROR and tool.attributes["error.type"] == "validation_error", tool.attributes
    assert tool.attributes["otel_agents.tool.denied"] is True
    assert [(e[0], e[1]["exception.type"]) for e in tool.events] == \
        [("exception", "agents.exceptions.ModelBehaviorError")]
    assert tool.attributes["gen_ai.tool.call.result"] == told == tool.status_description
    [env] = check(fold(memory.get_finished_spans()))
    assert [(c["id"], c["status"]) for c in env["tool_calls"]] == [("call_r", "error")]


def test_a_call_of_a_tool_the_agent_lacks_fails_the_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The SDK does not answer a call of a tool the agent lacks: it raises ``ModelBehaviorError`` ("Tool lokup not
    found in agent support") and the run fails. The run's error is the truth: the agent span fails with it; no tool
    span is made up (the SDK traced none)."""
    from agents.exceptions import ModelBehaviorError

    agent = Agent(name="support", instructions="help",
                  model=responses_model(ScriptedResponses([call(("lokup", {"query": "a"})), say("unused")])))
    with pytest.raises(ModelBehaviorError, match="Tool lokup not found"):
        asyncio.run(Runner.run(agent, "go"))
    assert exporter.semantic("tool") == []
    [run] = exporter.semantic("agent")
    assert run.status == StatusCode.ERROR and run.attributes["error.type"] == "agents.exceptions.ModelBehaviorError"
