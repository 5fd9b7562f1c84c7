"""The vocabulary switch (issue 40 item 4): ``OTEL_AGENTS_VOCABULARIES`` and the ``vocabularies`` argument
of ``instrument()``/``configure()``/``Settings`` select which of ``gen_ai``, ``openinference``, ``langfuse``
the span layer writes; the fold side is tests/exporters/test_fold_vocabularies.py."""

from __future__ import annotations

import itertools
import json
import logging

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agents
from otel_agents._spans import (ChatMessage, Settings, Telemetry, TextPart, ToolCallPart, ToolCallResponsePart,
                                ToolDefinition, Usage)
from otel_agents._spans.settings import ENV_VOCABULARIES
from otel_agents.semconv import vocabularies as V


def _model_span(settings: Settings) -> dict:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    telemetry = Telemetry(provider, settings=settings, framework="test")
    with telemetry.span("agent", "support") as agent:
        agent.set_agent("support")
        agent.set_input("where is A1?")
        span = telemetry.start_span("model", "gpt-x")
        span.set_model(request_model="gpt-x", provider="openai", parameters={"temperature": 0.2})
        span.set_messages(input=[ChatMessage("user", parts=[TextPart("where is A1?")])],
                          output=[ChatMessage("assistant", parts=[ToolCallPart("lookup", {"id": "A1"}, "c1")],
                                              finish_reason="tool_calls")],
                          tools=[ToolDefinition("lookup", "find an order", {"type": "object"})])
        span.set_usage(Usage(10, 2))
        span.end()
        agent.set_output("delivered")
    provider.shutdown()
    return {s.name: dict(s.attributes) for s in memory.get_finished_spans()}


def test_all_three_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VOCABULARIES, raising=False)
    model = _model_span(Settings())["chat gpt-x"]
    assert {"gen_ai.input.messages", "llm.input_messages.0.message.role", "langfuse.observation.type",
            "openinference.span.kind", "gen_ai.response.finish_reasons", "llm.finish_reason"} <= set(model)
    assert model["llm.finish_reason"] == "tool_call" and model["gen_ai.response.finish_reasons"] == ("tool_call",)


@pytest.mark.parametrize("vocabulary", V.VOCABULARIES)
def test_one_vocabulary_alone(vocabulary: str) -> None:
    spans = _model_span(Settings(vocabularies=vocabulary))
    for name, attrs in spans.items():
        stray = [k for k in attrs if not V.written(k, frozenset({vocabulary}))]
        assert not stray, (name, stray)
        assert attrs["otel_agents.span.kind"] and attrs["otel_agents.framework"] == "test"  # ours: always
    model = spans["chat gpt-x"]
    expected = {
        V.GEN_AI: {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions",
                   "gen_ai.usage.input_tokens", "gen_ai.request.temperature", "gen_ai.operation.name"},
        V.OPENINFERENCE: {"llm.input_messages.0.message.role", "llm.tools.0.tool.json_schema", "input.value",
                          "llm.token_count.prompt", "llm.invocation_parameters", "openinference.span.kind",
                          "llm.finish_reason"},
        V.LANGFUSE: {"langfuse.observation.type", "input.value", "output.value", "gen_ai.usage.input_tokens",
                     "gen_ai.request.model", "gen_ai.operation.name", "gen_ai.response.finish_reasons"},
    }[vocabulary]
    assert expected <= set(model), expected - set(model)


def _every_setter(settings: Settings) -> list[tuple[str, dict]]:
    """One span of each kind, through every setter the instrumentors use: ``[(name, attributes)]`` in end order."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    telemetry = Telemetry(provider, settings=settings, framework="test")
    with telemetry.span("agent", "support", attributes={"session.id": "s1", "user.id": "u1"}) as agent:
        agent.set_agent("support", id="a1", description="answers questions")
        agent.set_input("where is A1?")
        with telemetry.span("chain", "plan") as chain:
            chain.set_input({"question": "where is A1?", "api_key": "sk-" + "x" * 40})
            chain.set_output(["look it up"])
        model = telemetry.start_span("model", "gpt-x")
        model.set_model(request_model="gpt-x", response_model="gpt-x-1", provider="openai", response_id="r1",
                        parameters={"temperature": 0.2, "max_tokens": 64, "stop": "END"})
        model.set_messages(
            system=["Be brief."],
            input=[ChatMessage("system", "You are support."), ChatMessage("user", "where is A1?"),
                   ChatMessage("assistant", parts=[TextPart("Let me look."), ToolCallPart("lookup", {"id": "A0"}, "c0")]),
                   ChatMessage("tool", parts=[ToolCallResponsePart({"status": "lost"}, "c0")])],
            output=[ChatMessage("assistant", parts=[TextPart("Checking."), ToolCallPart("lookup", '{"id": "A1"}', "c1")],
                                finish_reason="tool_calls")],
            tools=[ToolDefinition("lookup", "find an order", {"type": "object", "properties": {"id": {"type": "string"}}}),
                   ToolDefinition("refund", None, None)])
        model.set_usage(Usage(10, 2, 12, cache_read_tokens=4, reasoning_tokens=1))
        model.end()
        final = telemetry.start_span("model", "gpt-x")
        final.set_messages(input=[ChatMessage("user", "where is A1?")],
                           output=[ChatMessage("assistant", "It is delivered.", finish_reason="stop")])
        final.end()
        with telemetry.span("tool", "lookup") as tool:
            tool.set_tool("lookup", call_id="c1", description="find an order", arguments='{"id": "A1"}')
            tool.set_tool_result({"status": "delivered"})
        with telemetry.span("retriever", "orders") as retriever:
            retriever.set_retrieval(query="A1", documents=[{"id": "d1", "content": "A1 delivered", "score": 0.9,
                                                            "metadata": {"source": "db"}}], data_source="orders")
        with telemetry.span("embedding", "embed") as embedding:
            embedding.set_model(request_model="embed-1")
            embedding.set_embedding(texts=["A1"], dimension=3)
        failing = telemetry.start_span("tool", "refund")
        failing.set_tool("refund", call_id="c2", arguments={"id": "A1"})
        failing.end(error=ValueError("no refund for A1"))
        agent.set_output("It is delivered.")
    provider.shutdown()
    return [(s.name, dict(s.attributes)) for s in memory.get_finished_spans()]


def _selections() -> list[frozenset[str]]:
    return [frozenset(c) for n in (1, 2) for c in itertools.combinations(V.VOCABULARIES, n)]


@pytest.mark.parametrize("selection", _selections(), ids=lambda s: "+".join(sorted(s)))
def test_a_selection_writes_what_all_three_write_of_it(selection: frozenset[str]) -> None:
    """Written in some vocabularies, a span carries exactly the attributes it carries in all three that belong to
    them (or to none), with the same values; the additions are the input and the answer of an agent span
    written in OTel GenAI alone, as ``gen_ai.input.messages`` and ``gen_ai.output.messages`` (it has no
    ``input.value``/``output.value``), and on a tool span whose result is JSON, ``otel_agents.tool.result.json``
    where ``output.mime_type`` (which says so with all three) is not written."""
    everything = _every_setter(Settings(vocabularies=V.VOCABULARIES))
    chosen = _every_setter(Settings(vocabularies=selection))
    assert [name for name, _ in chosen] == [name for name, _ in everything]
    for (name, attrs), (_, full) in zip(chosen, everything):
        expected = {k: v for k, v in full.items() if V.written(k, selection)}
        if selection == {V.GEN_AI} and attrs["otel_agents.span.kind"] == "agent":
            assert json.loads(attrs.pop("gen_ai.input.messages")) == [
                {"role": "user", "parts": [{"type": "text", "content": "where is A1?"}]}]
            assert json.loads(attrs.pop("gen_ai.output.messages")) == [
                {"role": "assistant", "parts": [{"type": "text", "content": "It is delivered."}], "finish_reason": ""}]
        if attrs["otel_agents.span.kind"] == "tool" and full.get("output.mime_type") == "application/json":
            assert attrs.pop("otel_agents.tool.result.json", False) is (not V.written("output.mime_type", selection))
        assert attrs == expected, name
        assert list(attrs) == list(expected), name  # in the same order


def test_the_key_filter_answers_as_written_and_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = ["gen_ai.input.messages", "llm.input_messages.3.message.role", "input.value", "langfuse.observation.type",
            "otel_agents.framework", "error.type", "gen_ai.usage.input_tokens", "session.id"]
    for selection in _selections():
        keep = V.key_filter(selection)
        assert keep is V.key_filter(selection)
        assert [keep[k] for k in keys] == [V.written(k, selection) for k in keys]
    monkeypatch.setattr(V, "_FILTER_KEYS", 4)
    keep = V.KeyFilter(frozenset({V.GEN_AI}))
    assert [keep[k] for k in keys] == [V.written(k, frozenset({V.GEN_AI})) for k in keys]
    assert len(keep) <= 4


def test_settings_accept_strings_and_iterables() -> None:
    assert Settings(vocabularies=" GEN_AI , langfuse ").selected_vocabularies() == {"gen_ai", "langfuse"}
    assert Settings(vocabularies=["openinference"]).selected_vocabularies() == {"openinference"}


@pytest.mark.parametrize("bad", ["gen_ai,otel", "", ["phoenix"]])
def test_an_unknown_or_empty_selection_is_refused_by_name(bad: object) -> None:
    with pytest.raises(ValueError) as err:
        Settings(vocabularies=bad)
    assert "gen_ai, openinference, langfuse" in str(err.value)
    if bad and bad != "":
        assert ("'otel'" if isinstance(bad, str) else "'phoenix'") in str(err.value)


def test_instrument_and_configure_refuse_before_changing_anything() -> None:
    with pytest.raises(ValueError, match=r"unknown vocabulary 'jaeger'; allowed: gen_ai, openinference, langfuse"):
        otel_agents.instrument(frameworks=[], vocabularies="jaeger")
    with pytest.raises(ValueError, match="'jaeger'"):
        otel_agents.configure(exporters=[], frameworks=[], set_global=False, vocabularies=["jaeger"])


def test_the_environment_selects_and_a_bad_value_warns_and_keeps_all(monkeypatch: pytest.MonkeyPatch,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(ENV_VOCABULARIES, "openinference")
    assert not any(k.startswith(("gen_ai.", "langfuse.")) for k in _model_span(Settings())["chat gpt-x"])
    monkeypatch.setenv(ENV_VOCABULARIES, "openinference,zipkin")
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        model = _model_span(Settings())["chat gpt-x"]
    assert "gen_ai.input.messages" in model and "langfuse.observation.type" in model
    assert any(ENV_VOCABULARIES in r.getMessage() and "'zipkin'" in r.getMessage() for r in caplog.records)
    assert _model_span(Settings(vocabularies="gen_ai")).keys()  # the argument wins over the environment
    assert "llm.input_messages.0.message.role" not in _model_span(Settings(vocabularies="gen_ai"))["chat gpt-x"]


def test_decorators_follow_the_selection_of_configure() -> None:
    memory = InMemorySpanExporter()
    config = otel_agents.configure(exporters=[memory], frameworks=[], set_global=False, vocabularies="gen_ai")
    try:
        @otel_agents.tool
        def lookup(order_id: str) -> str:
            return "delivered"

        lookup("A1")
    finally:
        config.shutdown()
    (span,) = memory.get_finished_spans()
    assert span.attributes["gen_ai.tool.name"] == "lookup"
    assert not any(k.startswith(("tool.", "input.", "output.", "openinference.", "langfuse.")) for k in span.attributes)


def _run_spans(settings: Settings, body) -> dict[str, dict]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    body(Telemetry(provider, settings=settings, framework="test"))
    provider.shutdown()
    return {s.name: dict(s.attributes) for s in memory.get_finished_spans()}


def _user(text: str) -> list[dict]:
    return [{"role": "user", "parts": [{"type": "text", "content": text}]}]


def test_gen_ai_alone_an_agent_input_keeps_the_richer_record() -> None:
    """OTel GenAI alone, an agent's ``set_input`` writes ``gen_ai.input.messages`` through ``set_messages``: real
    messages (``set_messages(input=...)``, ``set_input(messages=...)``, a list of ChatMessage) are never replaced by
    a flattened value, in either order; a later value replaces an earlier value (a streamed run's placeholder)."""
    conversation = [ChatMessage("system", "Be brief."), ChatMessage("user", "where is A1?"),
                    ChatMessage("assistant", "Which order?"), ChatMessage("user", "A1")]

    def body(telemetry: Telemetry) -> None:
        with telemetry.span("agent", "messages_then_value") as a:
            a.set_messages(input=conversation)
            a.set_input("A1")
        with telemetry.span("agent", "value_then_messages") as a:
            a.set_input("A1")
            a.set_input("A1", messages=conversation)
        with telemetry.span("agent", "list_then_value") as a:
            a.set_input(conversation)
            a.set_input({"question": "A1"})
        with telemetry.span("agent", "value_then_value") as a:
            a.set_input("placeholder")
            a.set_input({"question": "A1"})

    spans = _run_spans(Settings(vocabularies="gen_ai", capture_content=True), body)
    chat = [{"role": "user", "parts": [{"type": "text", "content": "where is A1?"}]},
            {"role": "assistant", "parts": [{"type": "text", "content": "Which order?"}]}] + _user("A1")
    for name in ("messages_then_value", "value_then_messages", "list_then_value"):
        attrs = spans[f"invoke_agent {name}"]
        assert json.loads(attrs["gen_ai.input.messages"]) == chat, name
        assert json.loads(attrs["gen_ai.system_instructions"]) == [{"type": "text", "content": "Be brief."}], name
    assert json.loads(spans["invoke_agent value_then_value"]["gen_ai.input.messages"]) == _user('{"question":"A1"}')
    assert not [k for attrs in spans.values() for k in attrs if k.startswith(("input.", "llm."))]


def test_gen_ai_alone_a_workflow_keeps_its_input_and_output_a_plain_chain_has_no_messages() -> None:
    """``invoke_workflow`` (a CrewAI crew, a LangGraph graph root's orchestration) has ``gen_ai.input.messages`` and
    ``gen_ai.output.messages`` in the semconv (v1.41, ``span.gen_ai.invoke_workflow.internal``): OTel GenAI alone
    writes its input and output there; a plain chain has no such attribute and none is invented. All three
    vocabularies write ``input.value``/``output.value`` only, as before."""
    def body(telemetry: Telemetry) -> None:
        with telemetry.span("chain", "crew", workflow=True) as crew:
            crew.set_input({"question": "A1?"})
            with telemetry.span("chain", "plan") as plan:
                plan.set_input("A1?")
                plan.set_output("look it up")
            crew.set_output("delivered")

    alone = _run_spans(Settings(vocabularies="gen_ai", capture_content=True), body)
    assert json.loads(alone["invoke_workflow crew"]["gen_ai.input.messages"]) == _user('{"question":"A1?"}')
    assert json.loads(alone["invoke_workflow crew"]["gen_ai.output.messages"])[0]["parts"] == [
        {"type": "text", "content": "delivered"}]
    assert not {"gen_ai.input.messages", "gen_ai.output.messages"} & set(alone["plan"])
    every = _run_spans(Settings(capture_content=True), body)
    assert not {"gen_ai.input.messages", "gen_ai.output.messages"} & set(every["invoke_workflow crew"])
    assert every["invoke_workflow crew"]["input.value"] == '{"question":"A1?"}'


def test_gen_ai_alone_an_input_that_cannot_be_compared_loses_only_itself(caplog: pytest.LogCaptureFixture) -> None:
    class Hostile:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no comparing me")
        __hash__ = object.__hash__

    def body(telemetry: Telemetry) -> None:
        with telemetry.span("agent", "support") as a:
            a.set_input(Hostile())
            a.set_output("fine")

    with caplog.at_level(logging.DEBUG):
        spans = _run_spans(Settings(vocabularies="gen_ai", capture_content=True), body)
    assert json.loads(spans["invoke_agent support"]["gen_ai.output.messages"])[0]["parts"][0]["content"] == "fine"


def test_gen_ai_alone_an_agent_output_keeps_the_richer_record() -> None:
    """OTel GenAI alone, ``set_output(value, messages=...)`` writes the messages as ``gen_ai.output.messages``
    (through ``set_messages``) and a later flattened value never replaces them; a value alone is one assistant
    message, replaced by a later value or by messages. All three vocabularies: ``output.value`` of the value."""
    answer = [ChatMessage("assistant", "It is delivered.")]

    def body(telemetry: Telemetry) -> None:
        with telemetry.span("agent", "messages_then_value") as a:
            a.set_output({"messages": ["..."]}, messages=answer)
            a.set_output({"state": 1})
        with telemetry.span("agent", "value_then_messages") as a:
            a.set_output({"state": 1})
            a.set_output({"messages": ["..."]}, messages=answer)

    alone = _run_spans(Settings(vocabularies="gen_ai", capture_content=True), body)
    out = [{"role": "assistant", "parts": [{"type": "text", "content": "It is delivered."}], "finish_reason": ""}]
    for name in ("messages_then_value", "value_then_messages"):
        assert json.loads(alone[f"invoke_agent {name}"]["gen_ai.output.messages"]) == out, name
    every = _run_spans(Settings(capture_content=True), body)
    assert every["invoke_agent messages_then_value"]["output.value"] == '{"state":1}'
    assert every["invoke_agent value_then_messages"]["output.value"] == '{"messages":["..."]}'
    assert "gen_ai.output.messages" not in every["invoke_agent value_then_messages"]


@pytest.mark.parametrize("vocabularies", [None, "gen_ai", "openinference", "langfuse", "gen_ai,langfuse"])
@pytest.mark.parametrize("content", [True, False])
def test_records_value_says_whether_set_input_and_set_output_write_anything(vocabularies, content) -> None:
    """``records_value`` is true exactly where ``set_input``/``set_output`` write something: what an instrumentor
    checks before building a value (a framework's event as data) that would be dropped. In OTel GenAI alone only
    an agent's and a workflow's input and output are written (as their messages); content off: nothing."""
    settings = Settings(capture_content=content, **({"vocabularies": vocabularies} if vocabularies else {}))
    said: dict[str, bool] = {}

    def body(telemetry: Telemetry) -> None:
        for kind, name, options in (("agent", "support", {}), ("chain", "crew", {"workflow": True}),
                                    ("chain", "plan", {}), ("tool", "lookup", {}), ("retriever", "docs", {})):
            with telemetry.span(kind, name, **options) as span:
                said[name] = span.records_value
                span.set_input({"question": "A1?"})
                span.set_output("delivered")
        ended = telemetry.start_span("chain", "late")
        ended.end()
        said["late"] = ended.records_value

    spans = _run_spans(settings, body)
    assert said.pop("late") is False
    for name, records in said.items():
        [attrs] = [a for span_name, a in spans.items() if span_name.endswith(name)]
        written = {k for k in attrs if k in ("input.value", "output.value", "gen_ai.input.messages",
                                             "gen_ai.output.messages")}
        assert records is bool(written), (name, attrs)
    assert said["support"] is content and said["plan"] is (content and vocabularies != "gen_ai")
