"""smolagents: the field cases SM-1 … SM-3 and the framework's own cases, offline over scripted models."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import StatusCode
from smolagents import Model
from smolagents.models import ChatMessage

from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor
from tests.genai_schema import validate_genai_json
from tests.spans import SnapshotExporter, ancestors, parent_of, tree

from .fakes import (LOOKUP_THEN_ANSWER, MODEL_ID, InheritingModel, LookupFailed, ScriptedModel, StreamingModel,
                    SuperCallingModel, code_agent, make_lookup, tool_calling_agent)


def _one_trace(spans: list) -> None:
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    ids = {s.span_id for s in spans}
    assert len([s for s in spans if s.parent_id not in ids]) == 1, tree(spans)


# -- SM-1 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("model_cls", [ScriptedModel, SuperCallingModel, InheritingModel])
def test_sm1_every_generate_is_one_model_span(model_cls: type, instrumented: Any, exporter: SnapshotExporter) -> None:
    """SM-1: a Model subclass's generate (own, super()-calling, inherited) gives exactly one model span per call."""
    model = model_cls(LOOKUP_THEN_ANSWER)
    assert tool_calling_agent(model).run("Where is A100?") == "A100 has shipped"
    spans = exporter.semantic()
    _one_trace(spans)
    models = exporter.semantic("model")
    assert len(models) == model.calls == 2, tree(spans)
    for span in models:
        parent = parent_of(span, spans)
        assert parent.semantic_kind in ("chain", "agent") and parent.name.startswith("step"), tree(spans)
        assert span.attributes["gen_ai.request.model"] == MODEL_ID
        assert span.name == f"chat {MODEL_ID}"
        assert span.attributes["gen_ai.usage.output_tokens"] == 5
        validate_genai_json(span.attributes)
    assert [m.attributes["gen_ai.usage.input_tokens"] for m in models] == [11, 12]


def test_sm1_model_defined_after_instrument(instrumented: Any, exporter: SnapshotExporter) -> None:
    """SM-1: a Model subclass defined after instrument() is covered too."""

    class LateModel(Model):
        def generate(self, messages: Any, **kwargs: Any) -> ChatMessage:
            return ScriptedModel(["done"]).generate(messages)

    late = LateModel(model_id=MODEL_ID)
    late.generate([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    assert len(exporter.semantic("model")) == 2  # the late model, and the ScriptedModel it calls (another object)
    assert {s.attributes["gen_ai.request.model"] for s in exporter.semantic("model")} == {MODEL_ID}


def test_sm1_no_token_usage_means_no_token_attributes(instrumented: Any, exporter: SnapshotExporter,
                                                      envelopes: list) -> None:
    """SM-1: token_usage=None gives model spans without token attributes and no usage totals (not 0)."""
    tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER, usage=False)).run("Where is A100?")
    for span in exporter.semantic():
        assert not any("token" in key for key in span.attributes), (span.name, span.attributes)
    assert envelopes
    usage = envelopes[-1].get("usage") or {}
    assert usage.get("input_tokens") in (None,) and usage.get("output_tokens") in (None,), usage


def test_sm1_model_span_content(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The model span carries the system prompt, messages, offered tools and the tool-call answer as parts."""
    tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER)).run("Where is A100?")
    first = exporter.semantic("model")[0]
    assert "gen_ai.system_instructions" in first.attributes
    inputs = first.json_attr("gen_ai.input.messages")
    assert any("Where is A100?" in json.dumps(m) for m in inputs)
    tools = {t["name"] for t in first.json_attr("gen_ai.tool.definitions")}
    assert {"lookup_order", "final_answer"} <= tools
    output = first.json_attr("gen_ai.output.messages")
    call = next(p for p in output[0]["parts"] if p["type"] == "tool_call")
    assert call["name"] == "lookup_order" and call["id"] == "call_0"


# -- SM-2 ---------------------------------------------------------------------------------------------
CODE = "<code>\nr = lookup_order(order_id='A100')\nh = helper(task='check A100')\nfinal_answer(r)\n</code>"


def test_sm2_tools_called_from_code_nest_under_their_step(instrumented: Any, exporter: SnapshotExporter,
                                                          envelopes: list) -> None:
    """SM-2: a CodeAgent's code calls a tool, a managed agent and final_answer on the executor's worker thread."""
    helper = tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER), name="helper", description="Looks orders up.")
    manager = code_agent(ScriptedModel([CODE]), managed_agents=[helper], name="manager")
    assert manager.run("Where is A100?") == "Order A100: shipped"
    spans = exporter.semantic()
    _one_trace(spans)
    root = next(s for s in spans if s.parent_id is None)
    assert root.name == "invoke_agent manager"
    for s in exporter.semantic("tool"):
        assert parent_of(s, spans).semantic_kind in ("chain", "agent"), tree(spans)
    step = next(s for s in spans if s.name == "step 1" and parent_of(s, spans) is root)
    assert "lookup_order(order_id='A100')" in step.attributes["input.value"]
    code_tools = [s for s in exporter.semantic("tool") if s.parent_id == step.span_id]
    assert [s.name for s in code_tools] == ["execute_tool lookup_order", "execute_tool helper",
                                            "execute_tool final_answer"], tree(spans)
    delegation = code_tools[1]
    assert delegation.attributes["gen_ai.tool.name"] == "helper"
    helper_run = next(s for s in exporter.semantic("agent") if s.name == "invoke_agent helper")
    assert helper_run.parent_id == delegation.span_id
    assert helper_run.attributes["otel_agents.agent.parent"] == "manager"
    finals = [s for s in exporter.semantic("tool") if s.name == "execute_tool final_answer" and
              any(a.span_id == root.span_id for a in ancestors(s, spans)) and
              not any(a.name == "invoke_agent helper" for a in ancestors(s, spans))]
    assert len(finals) == 1
    assert json.loads(finals[0].attributes["gen_ai.tool.call.arguments"]) == {"answer": "Order A100: shipped"}
    assert root.attributes["output.value"] == "Order A100: shipped"
    # the fold: final_answer is the answer, not a tool call
    manager_envelope = envelopes[-1]
    assert manager_envelope["public_output"] == "Order A100: shipped"
    names = [c.get("tool_name") or c.get("name") for c in manager_envelope["tool_calls"]]
    assert "final_answer" not in names and "lookup_order" in names, names


def test_sm2_code_execution_error_is_the_steps_error(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A CodeAgent step whose code fails: the step span is ERROR with the logs; the run goes on and answers."""
    bad = "<code>\nprint('looking')\nlookup_order(order_id='FAIL')\n</code>"
    good = "<code>\nfinal_answer('sorry')\n</code>"
    assert code_agent(ScriptedModel([bad, good])).run("Where is FAIL?") == "sorry"
    spans = exporter.semantic()
    step1 = next(s for s in spans if s.name == "step 1")
    assert step1.status == StatusCode.ERROR
    tool = next(s for s in spans if s.name == "execute_tool lookup_order")
    assert tool.status == StatusCode.ERROR and tool.parent_id == step1.span_id
    assert tool.attributes["error.type"].endswith("LookupFailed")
    root = next(s for s in spans if s.semantic_kind == "agent")
    assert root.status != StatusCode.ERROR and root.attributes["output.value"] == "sorry"


# -- SM-3 ---------------------------------------------------------------------------------------------
def test_sm3_streamed_model_output(instrumented: Any, exporter: SnapshotExporter, app_tracer: Any) -> None:
    """SM-3: generate_stream gives one model span per call, current only while advanced, with output and usage."""
    agent = tool_calling_agent(StreamingModel(LOOKUP_THEN_ANSWER), stream_outputs=True)
    between = []
    for event in agent.run("Where is A100?", stream=True):
        with app_tracer.start_as_current_span("consumer-work"):
            between.append(event)
    spans = exporter.spans
    models = exporter.semantic("model")
    assert len(models) == 2
    for app in (s for s in spans if s.name == "consumer-work"):
        assert app.parent_id is None, "the consumer's work was parented to one of our spans"
    first = models[0]
    assert first.attributes["gen_ai.usage.input_tokens"] == 20 and first.attributes["gen_ai.usage.output_tokens"] == 7
    out = first.json_attr("gen_ai.output.messages")[0]["parts"]
    assert any(p["type"] == "text" and "Calling a tool." in p["content"] for p in out)
    assert any(p["type"] == "tool_call" and p["name"] == "lookup_order" for p in out)
    assert all(s.end_time for s in spans)
    assert "otel_agents.stream.abandoned" not in first.attributes


def test_sm3_consumer_stops_early(instrumented: Any, exporter: SnapshotExporter, app_tracer: Any) -> None:
    """SM-3: a consumer that stops early: every span ends (abandoned), nothing stays current."""
    agent = tool_calling_agent(StreamingModel(LOOKUP_THEN_ANSWER), stream_outputs=True)
    stream = agent.run("Where is A100?", stream=True)
    next(iter(stream))
    del stream
    with app_tracer.start_as_current_span("after"):
        pass
    spans = exporter.spans
    assert next(s for s in spans if s.name == "after").parent_id is None
    semantic = exporter.semantic()
    kinds = {s.semantic_kind for s in semantic}
    assert {"agent", "chain", "model"} <= kinds, tree(semantic)
    model = exporter.semantic("model")[0]
    assert model.attributes.get("otel_agents.stream.abandoned") is True
    agent_span = exporter.semantic("agent")[0]
    assert agent_span.attributes.get("otel_agents.stream.abandoned") is True
    assert model.end_time <= agent_span.end_time


@pytest.mark.parametrize("stop_at", ["FinalAnswerStep", "ActionOutput"])
def test_a_stream_left_on_its_last_item_is_not_abandoned(stop_at: str, instrumented: Any,
                                                          exporter: SnapshotExporter) -> None:
    """A consumer that leaves ``run(stream=True)`` on the ``FinalAnswerStep`` (the run's last item) got the whole
    run: its spans end finished, not abandoned. Left on the final ``ActionOutput`` (its step's last item, before
    smolagents ends the run), the step is finished and the run abandoned."""
    from smolagents.agents import ActionOutput
    from smolagents.memory import FinalAnswerStep

    last = {"FinalAnswerStep": FinalAnswerStep, "ActionOutput": ActionOutput}[stop_at]
    agent = tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER))
    stream = agent.run("Where is A100?", stream=True)
    for item in stream:
        if isinstance(item, last) and (last is FinalAnswerStep or item.is_final_answer):
            break
    del stream
    abandoned = sorted(s.name for s in exporter.semantic() if s.attributes.get("otel_agents.stream.abandoned"))
    assert abandoned == ([] if stop_at == "FinalAnswerStep" else ["invoke_agent ToolCallingAgent"]), \
        tree(exporter.spans)
    assert [s.name for s in sorted(exporter.semantic("chain"), key=lambda s: s.start_time)] == ["step 1", "step 2"]
    if stop_at == "FinalAnswerStep":
        assert exporter.semantic("agent")[0].attributes["output.value"] == "A100 has shipped"


# -- the framework's own cases ---------------------------------------------------------------------------
def test_tool_error_in_tool_calling_agent(instrumented: Any, exporter: SnapshotExporter) -> None:
    script = [[("lookup_order", {"order_id": "FAIL"})], [("final_answer", {"answer": "down"})]]
    assert tool_calling_agent(ScriptedModel(script)).run("Where is FAIL?") == "down"
    tool = next(s for s in exporter.semantic("tool") if s.name == "execute_tool lookup_order")
    assert tool.status == StatusCode.ERROR and any(e[0] == "exception" for e in tool.events)


def test_parallel_tool_calls(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Two tool calls in one message run on smolagents' thread pool: both tool spans sit under the step."""
    script = [[("lookup_order", {"order_id": "A100"}), ("lookup_order", {"order_id": "B200"})],
              [("final_answer", {"answer": "both"})]]
    tool_calling_agent(ScriptedModel(script)).run("Where are A100 and B200?")
    spans = exporter.semantic()
    _one_trace(spans)
    step1 = next(s for s in spans if s.name == "step 1")
    lookups = [s for s in exporter.semantic("tool") if s.name == "execute_tool lookup_order"]
    assert len(lookups) == 2 and all(s.parent_id == step1.span_id for s in lookups)


def test_max_steps_is_an_error_of_the_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """max_steps reached: smolagents returns a last answer; the agent span ends with AgentMaxStepsError."""
    script = [[("lookup_order", {"order_id": "A100"})]] * 2 + ["I give up: A100 shipped"]
    result = tool_calling_agent(ScriptedModel(script), max_steps=2).run("Where is A100?")
    assert result == "I give up: A100 shipped"
    agent = exporter.semantic("agent")[0]
    assert agent.status == StatusCode.ERROR
    assert agent.attributes["error.type"].endswith("AgentMaxStepsError")
    assert len(exporter.semantic("model")) == 3


def test_failed_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A model that raises: the model and agent spans end with ERROR, the user gets smolagents' error."""

    class Broken(ScriptedModel):
        def generate(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("provider down")

    from smolagents.utils import AgentGenerationError

    with pytest.raises(AgentGenerationError):
        tool_calling_agent(Broken([])).run("Where is A100?")
    model = exporter.semantic("model")[0]
    agent = exporter.semantic("agent")[0]
    assert model.status == StatusCode.ERROR and model.attributes["error.type"] == "RuntimeError"
    assert agent.status == StatusCode.ERROR


def test_planning_step_is_a_chain(instrumented: Any, exporter: SnapshotExporter) -> None:
    script = ["1. look up the order", [("lookup_order", {"order_id": "A100"})],
              [("final_answer", {"answer": "shipped"})]]
    tool_calling_agent(ScriptedModel(script), planning_interval=5).run("Where is A100?")
    spans = exporter.semantic()
    planning = next(s for s in spans if s.name == "planning")
    assert planning.semantic_kind == "chain" and parent_of(planning, spans).semantic_kind == "agent"
    assert "look up the order" in planning.attributes["output.value"]
    assert parent_of(exporter.semantic("model")[0], spans).span_id == planning.span_id


def test_content_off(provider: Any, exporter: SnapshotExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    inst = SmolagentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        code_agent(ScriptedModel(["<code>\nfinal_answer(lookup_order(order_id='A100'))\n</code>"])).run("SECRET-TASK")
    finally:
        inst.uninstrument()
    spans = exporter.semantic()
    assert {"agent", "chain", "model", "tool"} <= {s.semantic_kind for s in spans}
    for s in spans:
        for key, value in s.attributes.items():
            assert "SECRET-TASK" not in str(value) and "A100" not in str(value), (s.name, key)
    assert exporter.semantic("model")[0].attributes["gen_ai.usage.input_tokens"] == 11


def test_uninstrument_restores_smolagents(provider: Any, exporter: SnapshotExporter) -> None:
    from smolagents import local_python_executor
    from smolagents.agents import MultiStepAgent, ToolCallingAgent
    from smolagents.tools import Tool

    before = {(o, n): o.__dict__.get(n) for o, n in [
        (Model, "generate"), (ScriptedModel, "generate"), (Tool, "__call__"), (MultiStepAgent, "run"),
        (ToolCallingAgent, "_step_stream"), (ToolCallingAgent, "execute_tool_call"), (local_python_executor, "timeout"),
        (Model, "__init_subclass__")]}
    inst = SmolagentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    inst.uninstrument()
    after = {(o, n): o.__dict__.get(n) for o, n in before}
    assert after == before
    tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER)).run("Where is A100?")
    assert exporter.semantic() == []


def test_envelopes_validate(instrumented: Any, envelopes: list) -> None:
    """Folding: every envelope from smolagents spans passes ecp-runtime's validation and our schema."""
    from tests.exporters.conftest import check

    tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER)).run("Where is A100?")
    code_agent(ScriptedModel([CODE]), managed_agents=[
        tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER), name="helper", description="Helps.")]).run("A100?")
    assert len(envelopes) >= 2
    check(envelopes)
    assert envelopes[0]["usage"]["input_tokens"] == 11 + 12


def test_a_final_answer_the_checks_reject_fails_its_step(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``final_answer_checks`` reject the first final answer (smolagents steps on and asks the model again): that
    step's span ends ERROR with smolagents' ``AgentError``; the next step's answer is the run's output."""
    script = [[("final_answer", {"answer": "shipped"})], [("final_answer", {"answer": "A100 has shipped"})]]

    def whole_sentence(answer: Any, memory: Any, agent: Any = None) -> bool:
        return " " in str(answer)

    agent = tool_calling_agent(ScriptedModel(script), final_answer_checks=[whole_sentence], max_steps=3)
    assert agent.run("Where is A100?") == "A100 has shipped"
    steps = sorted((s for s in exporter.spans if s.name.startswith("step ")), key=lambda s: s.start_time)
    assert [(s.name, s.status) for s in steps] == [("step 1", StatusCode.ERROR), ("step 2", StatusCode.UNSET)]
    assert steps[0].attributes["error.type"].endswith("AgentError")
    # the rejected step gave its answer and failed: smolagents leaves its generator there, nobody abandoned it
    assert not any("otel_agents.stream.abandoned" in s.attributes for s in exporter.spans), tree(exporter.spans)


@pytest.mark.parametrize("model_id", ["gpt-4o", "o3"])
def test_stop_sequences_are_recorded_only_when_sent(model_id: str, instrumented: Any,
                                                    exporter: SnapshotExporter) -> None:
    """smolagents sends an agent's stop sequences only to a model with the stop parameter (not to OpenAI's o3):
    each model span records the stop sequences its request carried, and none when it carried none."""
    from smolagents import OpenAIServerModel

    from tests.clients.fakes import Recorder, chat_completion, openai_client

    calls = [[{"id": "c1", "name": "lookup_order", "arguments": {"order_id": "A100"}}],
             [{"id": "c2", "name": "final_answer", "arguments": {"answer": "shipped"}}]]
    recorder = Recorder(*(chat_completion(None, tool_calls=c, finish_reason="tool_calls") for c in calls))
    model = OpenAIServerModel(model_id=model_id, api_key="test-key")
    model.client = openai_client(recorder)
    assert tool_calling_agent(model).run("Where is A100?") == "shipped"
    spans = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    assert len(spans) == len(recorder.requests) == 2
    for span, request in zip(spans, recorder.requests):
        sent = request.get("stop")
        assert (sent is None) == (model_id == "o3"), request
        recorded = span.attributes.get("gen_ai.request.stop_sequences")
        assert (list(recorded) if recorded is not None else None) == sent, span.attributes
        assert json.loads(span.attributes.get("llm.invocation_parameters", "{}")).get("stop_sequences") == sent


def test_tool_definitions_follow_a_tool_changed_between_requests(instrumented: Any,
                                                                 exporter: SnapshotExporter) -> None:
    """A tool's definition is made once and reused while the tool is unchanged: a description changed and an
    input's schema edited in place between two requests show in the second request's definitions."""
    lookup = make_lookup()

    def script(n: int, messages: list) -> Any:
        if n == 0:
            lookup.description = "Look up an order (changed)."
            lookup.inputs["order_id"]["description"] = "the order id (changed)"
        return LOOKUP_THEN_ANSWER[min(n, 1)]

    tool_calling_agent(ScriptedModel(script), tools=[lookup]).run("Where is A100?")
    first, second = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    before = {t["name"]: t for t in first.json_attr("gen_ai.tool.definitions")}["lookup_order"]
    after = {t["name"]: t for t in second.json_attr("gen_ai.tool.definitions")}["lookup_order"]
    assert before["description"] == "Look up an order's status."
    assert before["parameters"]["properties"]["order_id"]["description"] == "the order id, e.g. A100."
    assert after["description"] == "Look up an order (changed)."
    assert after["parameters"]["properties"]["order_id"]["description"] == "the order id (changed)"


def test_model_span_server_output_type_and_choice_count(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 inference span, smolagents' instrumentor alone, the real OpenAIServerModel over a mock
    transport: server.address/port where its client connects, gen_ai.output.type of the response_format asked
    (json_schema → json), gen_ai.request.choice.count from the ``n`` its kwargs send, gen_ai.response.model/id of
    the response; compared with the requests the fake received and the response it sent. A plain call asks for
    neither output type nor choices: neither is written."""
    import httpx
    import openai
    from smolagents import OpenAIServerModel

    from tests.clients.fakes import Recorder, chat_completion

    recorder = Recorder(chat_completion())

    def model(**kwargs: Any) -> Any:
        m = OpenAIServerModel(model_id="gpt-4o", api_key="test-key", **kwargs)
        m.client = openai.OpenAI(api_key="test-key", max_retries=0, base_url="http://127.0.0.1:8011/v1",
                                 http_client=httpx.Client(transport=httpx.MockTransport(recorder)))
        return m

    schema = {"type": "json_schema", "json_schema": {"name": "order", "schema": {"type": "object"}}}
    question = [{"role": "user", "content": [{"type": "text", "text": "Where is order A100?"}]}]
    model(n=2).generate(question, response_format=schema)
    model().generate(question)
    asked, plain = exporter.semantic("model")
    assert (recorder.requests[0]["response_format"]["type"], recorder.requests[0]["n"]) == ("json_schema", 2)
    assert not {"response_format", "n"} & set(recorder.requests[1])
    assert (asked.attributes["gen_ai.output.type"], asked.attributes["gen_ai.request.choice.count"]) == ("json", 2)
    assert not {"gen_ai.output.type", "gen_ai.request.choice.count"} & set(plain.attributes)
    answer = chat_completion()
    for span in (asked, plain):
        assert (span.attributes["server.address"], span.attributes["server.port"]) == ("127.0.0.1", 8011)
        # the response the fake sent: its model and id (the raw response smolagents keeps on its message)
        assert (span.attributes["gen_ai.response.model"], span.attributes["gen_ai.response.id"]) == \
            (answer["model"], answer["id"])


def test_gen_ai_alone_a_run_with_images_has_them_in_the_agent_input(instrument: Any,
                                                                    exporter: SnapshotExporter) -> None:
    """Written in OTel GenAI alone (no ``input.value``, which holds the task's text), a run given ``images=`` has
    them in the agent's ``gen_ai.input.messages``: one user message of the task and the images as media parts,
    each as the first model span shows smolagents sent it."""
    from PIL import Image

    instrument(vocabularies="gen_ai", capture_content=True)
    tool_calling_agent(ScriptedModel(LOOKUP_THEN_ANSWER)).run("Where is the parcel in this photo?",
                                                               images=[Image.new("RGB", (2, 2), "red")])
    [agent] = exporter.semantic("agent")
    assert "input.value" not in agent.attributes
    [message] = agent.json_attr("gen_ai.input.messages")
    assert message["role"] == "user" and [p["type"] for p in message["parts"]] == ["text", "blob"], message
    assert message["parts"][0]["content"] == "Where is the parcel in this photo?"
    sent = [p for m in exporter.semantic("model")[0].json_attr("gen_ai.input.messages") for p in m["parts"]
            if p["type"] == "blob"]
    assert sent == message["parts"][1:]


@pytest.mark.parametrize("name, arguments, reason", [
    ("lokup", {"order_id": "A100"}, "unknown_tool"),
    ("lookup_order", {"order": "A100"}, "validation_error")], ids=["unknown-tool", "rejected-arguments"])
def test_a_tool_call_smolagents_refuses_is_a_refused_tool_span(name: str, arguments: dict, reason: str,
                                                                instrumented: Any, exporter: SnapshotExporter,
                                                                envelopes: list) -> None:
    """The model calls a tool the agent lacks, or ``lookup_order`` with an argument its schema does not have:
    smolagents raises before any tool runs (``AgentToolExecutionError`` / ``AgentToolCallError``), the step fails
    and the next step shows the model the error. The step's span keeps that error; under it, a refused tool span:
    ERROR, ``error.type`` ``reason``, ``otel_agents.tool.denied``, the arguments, the error's message as the result,
    zero length; the envelope lists the call as failed (the final answer is the run's output, not a tool call).
    Ground truth: the step's error."""
    probed: list[str] = []
    agent = tool_calling_agent(ScriptedModel([[(name, arguments)], [("final_answer", {"answer": "sorry"})]]),
                               tools=[make_lookup(probe=probed.append)])
    assert agent.run("Where is A100?") == "sorry"
    assert probed == []  # no tool ran
    error = agent.memory.steps[1].error
    spans = exporter.semantic()
    step1 = next(s for s in spans if s.name == "step 1")
    assert step1.status == StatusCode.ERROR
    assert step1.attributes["error.type"] == f"smolagents.utils.{type(error).__name__}"
    [refused] = [s for s in exporter.semantic("tool") if s.name == f"execute_tool {name}"]
    assert parent_of(refused, spans) == step1, tree(spans)
    assert refused.status == StatusCode.ERROR and refused.attributes["error.type"] == reason
    assert refused.attributes["otel_agents.tool.denied"] is True
    assert refused.json_attr("gen_ai.tool.call.arguments") == arguments
    assert refused.attributes["gen_ai.tool.call.result"] == error.message == refused.status_description
    assert refused.start_time == refused.end_time
    [env] = envelopes
    assert [(c["name"], c["status"]) for c in env["tool_calls"]] == [(name, "error")]
