"""Agno traced by us and by OpenInference's Agno instrumentation on the same provider: every fold path gives
one step per real step (the tool calls, model calls and agents of ours alone), in either instrumentation order.

The known case: the folding processor counted each of Agno's tool calls twice (OpenInference's ``TOOL`` span
under its own ``AGENT`` span beside ours), and a team's agent again; ``fold()`` did not.

Runs in ``.venv-peers`` (Makefile ISOLATED ``peers``), as tests/peers/test_agno_native_tracing.py says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_agents.exporters.ecp import ECPFoldingProcessor, fold
from otel_agents.instrumentors.agno import AgnoInstrumentor
from tests.agno.agents import desk_team, support_agent
from tests.exporters.conftest import check
from tests.exporters.fold_paths import every_path, steps
from tests.peers import needs_the_peers

openinference_agno = needs_the_peers("openinference.instrumentation.agno")

RUNS: dict[str, Callable[[], Any]] = {
    "agent": lambda: support_agent().run("Where is A100?"),
    "team": lambda: desk_team().run("What is the weather?"),
}


def _traced(run: Callable[[], Any], peer: str | None) -> tuple[list[ReadableSpan], list[dict]]:
    """The finished spans of one run, and the envelopes the folding processor handed on live."""
    memory, live = InMemorySpanExporter(), []
    provider = TracerProvider()
    provider.add_span_processor(ECPFoldingProcessor(live.append, foreign_grace_s=0))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentors = [AgnoInstrumentor()]
    if peer is not None:
        theirs = openinference_agno.AgnoInstrumentor()
        instrumentors.insert(0 if peer == "theirs first" else 1, theirs)
    for instrumentor in instrumentors:
        instrumentor.instrument(tracer_provider=provider)
    try:
        run()
    finally:
        for instrumentor in reversed(instrumentors):
            instrumentor.uninstrument()
    provider.shutdown()
    return list(memory.get_finished_spans()), live


@pytest.mark.parametrize("order", ["ours first", "theirs first"])
@pytest.mark.parametrize("name", RUNS)
def test_each_step_once_on_every_fold_path(name: str, order: str, tmp_path: Path) -> None:
    alone, _ = _traced(RUNS[name], None)
    [expected] = [steps(e) for e in check(fold(alone))]
    spans, live = _traced(RUNS[name], order)
    scopes = {s.instrumentation_scope.name for s in spans if s.attributes.get("openinference.span.kind") == "TOOL"
              and "otel_agents.span.kind" not in s.attributes}
    assert scopes == {"openinference.instrumentation.agno"}  # their view of each tool call is there
    paths = every_path(spans, tmp_path)
    paths["live (in the run)"] = live
    for path, envelopes in paths.items():
        assert [steps(e) for e in check(envelopes)] == [expected], path
