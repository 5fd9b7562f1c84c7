"""The fold reads whichever vocabularies our spans were written in (``OTEL_AGENTS_VOCABULARIES``, issue 40
item 4): the example run of each framework, written with one vocabulary alone, folds to the envelope the
same run gives with all three.

One documented difference: with ``gen_ai`` alone no span carries ``input.value``/``output.value``
(OpenInference's and Langfuse's); an agent span's or a workflow's (``invoke_workflow``) input and output are
its ``gen_ai.input.messages``/``gen_ai.output.messages``, but a run whose root is neither has as
``public_output`` the run's last model answer (the text of its last model response that requested no tool),
``null`` when the model spans hold no output messages (docs/ecp.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
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
