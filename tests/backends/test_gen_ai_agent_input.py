"""Written in OTel GenAI alone (``vocabularies="gen_ai"``: no ``input.value``), every framework's run keeps its
input: the agent span (``invoke_agent``) and a multi-agent workflow (``invoke_workflow``) carry it as
``gen_ai.input.messages`` (OTel GenAI semconv v1.41, ``span.gen_ai.invoke_agent.internal`` and
``span.gen_ai.invoke_workflow.internal``), equal to what the example run gave the framework; with content
capture off, no span has it. The run of each framework is the shared offline example over a fake model
(tests/backends/runs.py); Google ADK's runs in its own venv (Makefile ``google_adk_TESTS``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents import configure, uninstrument
from tests.backends import runs

_RUNS = ("invoke_agent", "invoke_workflow")
# What each example gives its framework, where it is not runs.QUESTION.
GIVEN: dict[str, Any] = {
    "manual": runs.MANUAL_QUESTION, "openai_agents": runs.MANUAL_QUESTION, "anthropic": runs.MANUAL_QUESTION,
    "openai": runs.MANUAL_QUESTION,
    "crewai": {"question": runs.QUESTION},  # Crew.kickoff(inputs=...): the crew's input is that object
}


def _spans(framework: str, capture_content: bool) -> list[Any]:
    reason = runs.skip_reason(framework)
    if reason:
        pytest.skip(reason)
    memory = InMemorySpanExporter()
    config = configure(exporters=[memory], frameworks=[] if framework == "manual" else [framework],
                       set_global=False, vocabularies="gen_ai", capture_content=capture_content)
    try:
        runs.RUNS[framework]()
    finally:
        config.shutdown()
        uninstrument()
    return sorted(memory.get_finished_spans(), key=lambda s: s.start_time)


@pytest.mark.parametrize("framework", sorted(runs.RUNS))
def test_the_agent_span_carries_the_input_the_framework_was_given(framework: str) -> None:
    spans = _spans(framework, True)
    entries = [s for s in spans if s.attributes.get("gen_ai.operation.name") in _RUNS]
    assert entries and all("gen_ai.input.messages" in s.attributes for s in entries), \
        [(s.name, sorted(s.attributes)) for s in entries]
    assert not [s.name for s in spans if "input.value" in s.attributes]
    [message] = json.loads(entries[0].attributes["gen_ai.input.messages"])  # the run's first agent or workflow
    assert message["role"] == "user" and [p["type"] for p in message["parts"]] == ["text"], message
    given = GIVEN.get(framework, runs.QUESTION)
    text = message["parts"][0]["content"]
    assert (text if isinstance(given, str) else json.loads(text)) == given


@pytest.mark.parametrize("framework", sorted(runs.RUNS))
def test_no_input_messages_with_content_capture_off(framework: str) -> None:
    spans = _spans(framework, False)
    assert any(s.attributes.get("gen_ai.operation.name") == "invoke_agent" for s in spans)
    leaked = [s.name for s in spans
              if {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"} & set(s.attributes)]
    assert not leaked, leaked
