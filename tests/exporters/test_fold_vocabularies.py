"""The fold reads whichever vocabularies our spans were written in (``OTEL_AGENTS_VOCABULARIES``, issue 40
item 4): the example run of each framework, written with one vocabulary alone, folds to the envelope the
same run gives with all three.

One documented difference: with ``gen_ai`` alone no span carries ``input.value``/``output.value``
(OpenInference's and Langfuse's); an agent span's or a workflow's (``invoke_workflow``) input and output are
its ``gen_ai.input.messages``/``gen_ai.output.messages`` (a model request's its ``gen_ai.output.messages``, a
tool call's its ``gen_ai.tool.call.result``), but a run whose root is none of these has as
``public_output`` the run's last model answer (the text of its last model response that requested no tool),
``null`` when the model spans hold no output messages (docs/ecp.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents import configure, uninstrument
from otel_agents.exporters.ecp import fold
from otel_agents.semconv import vocabularies as V
from tests.backends import runs

FRAMEWORKS = ["manual", "langchain", "pydantic_ai", "openai", "openai_agents", "crewai"]
# The run's root output where it is not the last model answer: what gen_ai alone folds to instead.
GEN_AI_PUBLIC_OUTPUT: dict[str, Any] = {
    "manual": None,  # the example's model function records its output as output.value only
}


def _run(framework: str, vocabularies: str | None) -> tuple[list[dict[str, Any]], list[Any]]:
    reason = runs.skip_reason(framework)
    if reason:
        pytest.skip(reason)
    memory = InMemorySpanExporter()
    config = configure(exporters=[memory], frameworks=[] if framework == "manual" else [framework],
                       set_global=False, vocabularies=vocabularies)
    try:
        runs.RUNS[framework]()
    finally:
        config.shutdown()
        uninstrument()
    spans = list(memory.get_finished_spans())
    return fold(spans), spans


def _comparable(envelopes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The envelopes without what differs between two runs of the same code: ids (renumbered in order of
    appearance), timings, and the attributes each ``logs`` record copies (they are the vocabulary's own)."""
    out = []
    for envelope in envelopes:
        e = json.loads(json.dumps(envelope))
        ids: dict[str, int] = {}

        def renumber(span_id: str | None) -> int | None:
            return None if span_id is None else ids.setdefault(span_id, len(ids))

        logs = json.loads(e.pop("logs"))
        for record in logs:
            renumber(record["span_id"])
        e["logs"] = [{k: renumber(v) if k in ("span_id", "parent_id") else v for k, v in r.items()
                      if k not in ("trace_id", "start", "duration_ms", "attributes")} for r in logs]
        e.pop("trace_id")
        e["metrics"].pop("duration_ms")
        for call in e["tool_calls"]:
            call.pop("latency_ms")
            call["span_id"] = renumber(call["span_id"])
        for agent in e["agents"]:
            agent["span_id"], agent["parent_span_id"] = renumber(agent["span_id"]), renumber(agent["parent_span_id"])
        e["evaluation_context"] = re.sub(r"latency_ms=\d+", "latency_ms=N", e["evaluation_context"])
        out.append(e)
    return out


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_each_single_vocabulary_folds_to_the_same_envelope(framework: str) -> None:
    everything, _ = _run(framework, None)
    expected = _comparable(everything)
    assert expected and expected[0]["tool_calls"] and expected[0]["public_output"]
    for vocabulary in V.VOCABULARIES:
        envelopes, spans = _run(framework, vocabulary)
        # Only the selected vocabulary's attributes were written (and those of none: otel_agents.*, error.type...).
        stray = {k for s in spans for k in (s.attributes or {}) if not V.written(k, frozenset({vocabulary}))}
        assert not stray, f"{vocabulary}: {sorted(stray)}"
        got = _comparable(envelopes)
        if vocabulary == V.GEN_AI:
            assert got[0]["public_output"] == GEN_AI_PUBLIC_OUTPUT.get(framework, expected[0]["public_output"])
            got[0]["public_output"] = expected[0]["public_output"]
        assert got == expected, vocabulary


def test_one_vocabulary_writes_fewer_attributes() -> None:
    """What a user who sends to one backend saves: per single vocabulary, the attributes written on the
    LangChain example's spans are a strict subset of all three's, and each is smaller — but for the one place
    OTel GenAI alone has for an agent's input and output: ``gen_ai.input.messages`` (the conversation the graph
    was given, as messages) and ``gen_ai.output.messages`` (its answer) on its ``invoke_agent`` span, where all three write
    ``input.value``/``output.value``."""
    _, everything = _run("langchain", None)
    total = sum(len(s.attributes) for s in everything)
    for vocabulary in V.VOCABULARIES:
        _, spans = _run("langchain", vocabulary)
        assert [s.name for s in spans] == [s.name for s in everything]
        for one, full in zip(spans, everything):
            extra = set(one.attributes) - set(full.attributes)
            if vocabulary == V.GEN_AI and one.attributes.get("gen_ai.operation.name") == "invoke_agent":
                assert extra == {"gen_ai.input.messages", "gen_ai.output.messages"}, extra
                assert "input.value" in full.attributes and "output.value" in full.attributes
                assert json.loads(one.attributes["gen_ai.input.messages"]) == [
                    {"role": "user", "parts": [{"type": "text", "content": runs.QUESTION}]}]
                # (the graph's answer: the last message of the state all three write as output.value)
                assert json.loads(one.attributes["gen_ai.output.messages"])[0]["parts"][0]["content"] == \
                    json.loads(full.attributes["output.value"])["messages"][-1]["content"]
            else:
                assert not extra, one.name
        assert sum(len(s.attributes) for s in spans) < total, vocabulary


def test_gen_ai_alone_an_agent_and_a_workflow_input_is_read_as_with_all_three() -> None:
    """The fold's reading of one of our spans written in OTel GenAI alone (``read_ours``) gives the ``input.value``
    all three vocabularies write: the text of an agent's or a workflow's one user message, JSON when it is a
    JSON value; the messages themselves when the framework gave the agent a conversation."""
    from otel_agents.exporters.ecp._vocabularies import read_ours

    def read(kind: str, operation: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        a = {"otel_agents.span.kind": kind, "gen_ai.operation.name": operation,
             "gen_ai.input.messages": json.dumps(messages)}
        read_ours(a, kind, f"{operation} x")
        return a

    agent = read("agent", "invoke_agent", [{"role": "user", "parts": [{"type": "text", "content": "Where is A1?"}]}])
    assert agent["input.value"] == "Where is A1?" and "input.mime_type" not in agent
    crew = read("chain", "invoke_workflow", [{"role": "user", "parts": [{"type": "text", "content": '{"q":"A1"}'}]}])
    assert (crew["input.value"], crew["input.mime_type"]) == ('{"q":"A1"}', "application/json")
    conversation = [{"role": "user", "parts": [{"type": "text", "content": "A1?"}]},
                    {"role": "assistant", "parts": [{"type": "text", "content": "Which?"}]}]
    chat = read("agent", "invoke_agent", conversation)
    assert json.loads(chat["input.value"]) == conversation and chat["input.mime_type"] == "application/json"


# Tool results of every kind a tool returns, as the envelope must give them whatever vocabularies were written
# (docs/ecp.md "Tool results: one rule"): a JSON-looking string stays a string, a dict stays a dict.
RESULTS: dict[str, Any] = {"a_dict": {"status": "shipped", "id": "A1"}, "a_list": [1, "two", None],
                           "a_number": 3.5, "json_text": '{"status": "shipped"}', "plain_text": "shipped"}
SELECTIONS = [None, V.GEN_AI, V.OPENINFERENCE, V.LANGFUSE]


def _fold_each_selection(frameworks: list[str], body: Any) -> dict[str | None, list[dict[str, Any]]]:
    out = {}
    for vocabularies in SELECTIONS:
        memory = InMemorySpanExporter()
        config = configure(exporters=[memory], frameworks=frameworks, set_global=False, vocabularies=vocabularies)
        try:
            body()
        finally:
            config.shutdown()
            uninstrument()
        out[vocabularies] = _comparable(fold(list(memory.get_finished_spans())))
    return out


def test_tool_results_of_every_type_fold_alike_in_every_selection() -> None:
    """A PydanticAI agent (FunctionModel) calls five tools, each returning one type; and each decorated
    ``@otel_agents.tool`` called alone is a run of its own (its result is the run's output). With OTel GenAI alone
    ``gen_ai.tool.call.result`` is text whatever was returned; ``otel_agents.tool.result.json`` tells the fold
    which texts are the JSON of a structured value."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    import otel_agents

    def model(messages: list[Any], info: Any) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(name, {}, tool_call_id=f"c{i}") for i, name in enumerate(RESULTS)])

    agent = Agent(FunctionModel(model), name="support")
    for name, value in RESULTS.items():
        agent.tool_plain(name=name)(lambda value=value: value)
    decorated = [otel_agents.tool(name=name)(lambda value=value: value) for name, value in RESULTS.items()]

    def body() -> None:
        agent.run_sync("go")
        for tool in decorated:
            tool()

    folded = _fold_each_selection(["pydantic_ai"], body)
    everything = folded[None]
    assert [call["result"] for call in everything[0]["tool_calls"]] == list(RESULTS.values())
    assert [(e["tool_calls"][0]["result"], e["public_output"]) for e in everything[1:]] == [
        (value, value if isinstance(value, str) else json.dumps(value, separators=(",", ":")))
        for value in RESULTS.values()]
    for vocabularies, envelopes in folded.items():
        assert envelopes == everything, vocabularies


def test_a_model_request_that_only_called_tools_folds_alike_in_every_selection() -> None:
    """A run that is one openai-client request answered by a tool call only: its ``public_output`` is its output
    messages as JSON (no assistant text; docs/ecp.md), with OTel GenAI alone too (read from
    ``gen_ai.output.messages``, the same messages all three write as ``output.value``)."""
    import httpx
    import openai

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={
            "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [{
                    "id": "t1", "type": "function",
                    "function": {"name": "lookup", "arguments": '{"order_id": "A1"}'}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})

    client = openai.OpenAI(api_key="sk-test", http_client=httpx.Client(transport=httpx.MockTransport(answer)))
    folded = _fold_each_selection(["openai"], lambda: client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Where is A1?"}]))
    everything = folded[None]
    assert json.loads(everything[0]["public_output"]) == [{
        "role": "assistant", "finish_reason": "tool_call",
        "parts": [{"type": "tool_call", "id": "t1", "name": "lookup", "arguments": {"order_id": "A1"}}]}]
    for vocabularies, envelopes in folded.items():
        assert envelopes == everything, vocabularies


@pytest.mark.parametrize("flushed", [False, True], ids=["pending", "handed_to_the_sdk"])
@pytest.mark.parametrize("first, last", [({"a": 1}, "[1, 2]"), ({"a": 1}, "hello"), ("hello", [1, 2])],
                         ids=["dict_then_json_text", "dict_then_text", "text_then_list"])
def test_a_tool_result_written_twice_is_the_last_in_every_selection(first: Any, last: Any, flushed: bool) -> None:
    """A tool span's result written twice (the tool's value, then the framework's text of it): its
    ``output.mime_type`` and, with OTel GenAI alone, its ``otel_agents.tool.result.json`` describe the last, and
    the envelope's result is the last as written, in every selection. ``handed_to_the_sdk``: more attributes than
    the span layer holds pending were written between, so the first marker had reached the SDK (which removes no
    attribute: the marker is then ``false``)."""
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider

    from otel_agents._spans import Settings, Telemetry

    structured = not isinstance(last, str)
    for vocabularies in SELECTIONS:
        memory = InMemorySpanExporter()
        provider = TracerProvider(span_limits=SpanLimits(max_span_attributes=1000))
        provider.add_span_processor(SimpleSpanProcessor(memory))
        telemetry = Telemetry(provider, settings=Settings(vocabularies=vocabularies, capture_content=True))
        with telemetry.span("agent", "support") as agent:
            with telemetry.span("tool", "lookup") as tool:
                tool.set_tool_result(first)
                if flushed:
                    tool.set_attributes({f"otel_agents.test.n{i}": i for i in range(200)})
                tool.set_tool_result(last)
            agent.set_output("done")
        spans = memory.get_finished_spans()
        attributes = next(s for s in spans if s.name.endswith("lookup")).attributes
        if vocabularies != V.GEN_AI:
            assert attributes["output.mime_type"] == ("application/json" if structured else "text/plain")
        else:
            assert attributes.get("otel_agents.tool.result.json") == (
                True if structured else False if flushed and not isinstance(first, str) else None)
        [envelope] = fold(list(spans))
        assert envelope["tool_calls"][0]["result"] == last, vocabularies
