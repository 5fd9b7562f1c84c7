"""Langfuse's Python SDK keeps every span we emit (issue 26).

A user who adds Langfuse's own ``LangfuseSpanProcessor`` next to ours gets only the spans its default
filter, ``langfuse.span_filter.is_default_export_span``, lets through: spans of the Langfuse SDK, of a
known instrumentation scope (ours is not on that list), or with any ``gen_ai.*`` attribute. Agents,
models, tools, retrievers and embeddings carry ``gen_ai.operation.name``; a plain chain has no GenAI
operation, so it carries ``gen_ai.workflow.name``, the name of the run it is a step of. This test runs
each framework's example and applies the real filter to every finished span.
"""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.backends import runs
from tests.frameworks import rows_here

span_filter = pytest.importorskip("langfuse.span_filter", reason="langfuse is a dev dependency")


@pytest.mark.parametrize("framework", rows_here(list(runs.RUNS)))
def test_every_span_passes_langfuse_default_filter(run_configured, framework: str) -> None:
    memory = InMemorySpanExporter()
    run_configured(framework, [memory], vocabularies="langfuse")
    spans = memory.get_finished_spans()
    assert spans
    dropped = [f"{s.name} ({s.attributes.get('otel_agents.span.kind')})" for s in spans
               if not span_filter.is_default_export_span(s)]
    assert not dropped, f"Langfuse's default filter drops: {dropped}"
    # Our scope is not on Langfuse's list: the gen_ai.* attribute is what keeps each span.
    assert not any(span_filter.is_known_llm_instrumentor(s) for s in spans if s.instrumentation_scope.name.startswith("otel_agents"))


@pytest.mark.parametrize("framework", rows_here(list(runs.RUNS)))
def test_plain_chains_name_their_run(run_configured, framework: str) -> None:
    memory = InMemorySpanExporter()
    run_configured(framework, [memory], vocabularies="langfuse")
    spans = memory.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    chains = [s for s in spans if s.attributes.get("otel_agents.span.kind") == "chain"
              and "gen_ai.operation.name" not in s.attributes]
    if not chains:
        pytest.skip(f"{framework}'s example has no plain chain")
    for chain in chains:
        root = chain
        while root.parent is not None and root.parent.span_id in by_id:
            root = by_id[root.parent.span_id]
        run_name = chain.attributes["gen_ai.workflow.name"]
        # The outermost span's own name (an agent's or workflow's name, or a root chain's span name).
        assert run_name and run_name in root.name, (chain.name, run_name, root.name)
