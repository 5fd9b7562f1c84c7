"""One run traced by us and by another instrumentation of the same framework at once: each step is folded once,
by every fold path, and the envelope says what ours alone says.

The fixtures in ``tests/exporters/mixed/`` are real spans: the benchmark workloads (the customer-support example
over its scripted model) traced by our instrumentor alone (``FRAMEWORK_ours``) and by ours and a peer on one
provider (``FRAMEWORK_PEER``: OpenInference's or OpenLLMetry's instrumentation of that framework), recorded by
``scripts/fixtures/record_mixed.py`` in the benchmark venv, where the peers are installed (they are not in
``.venv``; Agno's OpenInference instrumentation is, and is run live in ``tests/agno/test_peer_fold.py``).

Before the fold read instrumentation scopes, the peers' agent spans (OpenInference's ``customer_support.run``,
CrewAI's ``Order Clerk.order_status._execute_core``: no agent name, or another one) were counted as agents of
their own, LlamaIndex's model calls twice, and the folding processor counted every tool call twice, and (the
``_enclosed`` fixtures: a peer's tree beside ours under an application span) every model and tool call of
LangChain and Anthropic twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_agents._spans import Settings, Telemetry
from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json
from tests.exporters.conftest import check
from tests.exporters.fold_paths import every_path, steps

FIXTURES = Path(__file__).with_name("mixed")
MIXED = sorted(p for p in FIXTURES.glob("*.otlp.jsonl") if not p.name.endswith("_ours.otlp.jsonl"))


@pytest.mark.parametrize("path", MIXED, ids=lambda p: p.name.split(".")[0])
def test_each_step_once_on_every_fold_path(path: Path, tmp_path: Path) -> None:
    framework = path.name.split(".")[0].removesuffix("_enclosed").rsplit("_", 1)[0]
    expected = sorted(map(repr, map(steps, check(fold(read_otlp_json(FIXTURES / f"{framework}_ours.otlp.jsonl"))))))
    spans = read_otlp_json(path)
    assert {s.instrumentation_scope.name.split(".")[0] for s in spans} - {"otel_agents", "app"}  # the peer's are there
    for way, envelopes in every_path(spans, tmp_path).items():
        assert sorted(map(repr, map(steps, check(envelopes)))) == expected, way


def test_a_peers_span_is_left_out_only_for_a_step_of_ours_of_its_framework(rec: Any, tmp_path: Path) -> None:
    """OpenInference's Agno agent span with no agent name at the time of our Agno agent is our agent; its tool
    span for a call we did not record is a step (only it saw that call), and so is an agent span of another
    framework's instrumentation."""
    ours = Telemetry(rec.provider, framework="agno", scope="otel_agents.instrumentors.agno",
                     settings=Settings(capture_content=True))
    theirs = rec.provider.get_tracer("openinference.instrumentation.agno", "1.0.15")
    other = rec.provider.get_tracer("openinference.instrumentation.crewai", "1.0.0")
    with ours.span("agent", "Support") as agent:
        agent.set_agent("Support")
        with theirs.start_as_current_span("Support.run", attributes={"openinference.span.kind": "AGENT"}):
            with ours.span("tool", "lookup_order") as tool:
                tool.set_tool("lookup_order", call_id="call-1", arguments={"order_id": "A100"})
                tool.set_tool_result("shipped")
            theirs.start_span("get_weather", attributes={"openinference.span.kind": "TOOL",
                                                         "tool.name": "get_weather"}).end()
            other.start_span("Clerk._execute_core", attributes={"openinference.span.kind": "AGENT"}).end()
        agent.set_output("A100 has shipped.")
    for way, envelopes in every_path(rec.spans, tmp_path).items():
        [envelope] = check(envelopes)
        assert [c["name"] for c in envelope["tool_calls"]] == ["lookup_order", "get_weather"], way
        assert [a["name"] for a in envelope["agents"]] == ["Support", "Clerk._execute_core"], way
