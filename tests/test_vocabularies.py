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
    them (or to none), with the same values; the one addition is the answer of an agent span written in OTel
    GenAI alone, as ``gen_ai.output.messages`` (it has no ``output.value``)."""
    everything = _every_setter(Settings(vocabularies=V.VOCABULARIES))
    chosen = _every_setter(Settings(vocabularies=selection))
    assert [name for name, _ in chosen] == [name for name, _ in everything]
    for (name, attrs), (_, full) in zip(chosen, everything):
        expected = {k: v for k, v in full.items() if V.written(k, selection)}
        if selection == {V.GEN_AI} and attrs["otel_agents.span.kind"] == "agent":
            assert json.loads(attrs.pop("gen_ai.output.messages")) == [
                {"role": "assistant", "parts": [{"type": "text", "content": "It is delivered."}], "finish_reason": ""}]
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
