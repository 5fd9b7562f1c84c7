"""Our instrumentor and a real peer instrumentation of the same framework (OpenInference, OpenLLMetry, the OTel GenAI
instrumentations) on one provider, in both orders, over the benchmark workloads (``benchmarks/workloads``: the
customer-support example or the test suite's fakes, each over its scripted model), inside an application span.

Each case runs in a forked child (an instrumentation patches for good: a child starts from the parent's imports,
unpatched) and is compared with the same run traced by ours alone and by the peer alone; what differs today is
listed below the helpers, case by case (and in the README's "Next to other instrumentations"), and checked as it is:

* the user's result is what the uninstrumented run returns, nothing escapes and our code logs no internal error;
* our spans are those of ours alone, each once, under the same spans of ours (a peer's span may sit between);
* the peer's spans are those of the peer alone (we hide none of theirs);
* the fold of the mixed trace gives the runs of ours alone, each step once;
* uninstrumenting the one instrumented first leaves the other working: the case where one wrapper sits inside the
  other's (a wrapt ``unwrap`` that puts back what the outer wrapper wraps would drop the outer one).

Runs in ``.venv-peers`` (Makefile ISOLATED ``peers``, extra ``test-peers``) and in the benchmark venv; the peers
are not installed in ``.venv`` (their entry points would be loaded by the zero-code tests), where it is skipped.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.peers import needs_the_peers

needs_the_peers("openinference.instrumentation.langchain")  # (it stands for the extra test-peers)

os.environ.setdefault("AGNO_TELEMETRY", "false")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from benchmarks.workloads import instrumentor_variant  # noqa: E402
from otel_agents.exporters.ecp import fold  # noqa: E402
from tests import forking  # noqa: E402
from tests.crewai.netguard import block_network  # noqa: E402
from tests.exporters.conftest import check  # noqa: E402
from tests.exporters.fold_paths import steps  # noqa: E402

# Every framework a peer instruments with an instrumentor (PydanticAI's OpenInference package is a span processor
# over pydantic-ai's own instrumentation, and AutoGen's other variant is autogen-core's native tracing: neither
# has an order to test).
FRAMEWORKS = ("langchain", "llama_index", "crewai", "smolagents", "openai_agents", "agno", "autogen_agentchat",
              "openai", "anthropic", "mcp")
CASES = [(fw, peer) for fw in FRAMEWORKS
         for peer in importlib.import_module(f"benchmarks.workloads.{fw}").CLASSES if peer != "ours"]
OURS = "otel_agents."
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # CrewAI's crew ids in span names


def _workload(fw: str) -> Any:
    return importlib.import_module(f"benchmarks.workloads.{fw}")


def _record(span: ReadableSpan) -> dict[str, Any]:
    return {"id": span.context.span_id, "parent": span.parent.span_id if span.parent else None,
            "trace": span.context.trace_id, "scope": span.instrumentation_scope.name, "name": span.name,
            "ours": span.instrumentation_scope.name.startswith(OURS)}


def _phase(run: Any, provider: TracerProvider, memory: InMemorySpanExporter) -> dict[str, Any]:
    """One run inside an application span: its result, its spans and the steps of the fold of its trace."""
    memory.clear()
    with provider.get_tracer("app").start_as_current_span("POST /ask") as app:
        result = run()
        left_current = trace.get_current_span() is not app  # a span the run made current and did not take off
    spans = memory.get_finished_spans()
    return {"result": repr(result), "spans": [_record(s) for s in spans], "left_current": left_current,
            "fold": [repr(steps(e)) for e in check(fold(spans))]}


def _child(fw: str, order: list[str], remove: str | None, tmp_path: Path) -> dict[str, Any]:
    """Fork: build the workload (as the benchmarks do: the OpenAI Agents example resets the SDK's trace processors
    when it is imported), instrument ``order`` (labels of the workload's ``CLASSES``) on one provider and run it;
    then uninstrument ``remove`` and run it again; then, when ``remove`` is a peer, take ours off and put it back
    (what the README says to do when a peer's ``uninstrument`` took ours with it) and run it a third time."""

    def child() -> dict[str, Any]:
        refused = block_network()
        errors: list[str] = []

        class Errors(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if "internal error" in record.getMessage():  # not the warnings that say what we did about a peer
                    errors.append(record.getMessage())

        logging.getLogger("otel_agents").addHandler(Errors(logging.WARNING))
        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        run = _workload(fw).workload()
        instrumentors = {}
        for label in order:
            instrumentors[label], install = instrumentor_variant(label, provider, _workload(fw).CLASSES)
            install()
        report = {"both": _phase(run, provider, memory)}
        if remove is not None:
            instrumentors[remove].uninstrument()
            report["after"] = _phase(run, provider, memory)
            if remove != "ours":
                instrumentors["ours"].uninstrument()
                instrumentors["ours"].instrument(tracer_provider=provider)
                report["again"] = _phase(run, provider, memory)
        report.update(errors=errors, refused=refused)
        return report

    _imported(fw)
    return forking.run(child, tmp_path / f"{fw}-{'-'.join(order) or 'none'}.json", timeout=120)


@cache
def _imported(fw: str) -> None:
    """Import in this process what the children use (the framework, the example, each instrumentation), so that
    each child starts with them imported: built here and thrown away, never run (the children run theirs)."""
    _workload(fw).workload()
    for target in _workload(fw).CLASSES.values():
        importlib.import_module(target.partition(":")[0])


_alone: dict[tuple[str, str], dict[str, Any]] = {}


def _traced_alone(fw: str, label: str | None, tmp_path: Path) -> dict[str, Any]:
    """The run instrumented by ``label`` alone (``None``: uninstrumented), once per session."""
    if (fw, label) not in _alone:
        _alone[fw, label] = _child(fw, [label] if label else [], None, tmp_path)
    return _alone[fw, label]


def _tree(spans: list[dict[str, Any]], mine: Any) -> list[tuple[str, ...]]:
    """Each span that ``mine(span)`` picks as the path of picked spans from its root down to it (spans of others in
    between left out), sorted: equal for two runs with the same spans under the same parents, each as often."""
    by_id = {s["id"]: s for s in spans}
    paths = []
    for span in spans:
        if not mine(span):
            continue
        path, at = [], span
        while at is not None:
            if mine(at):
                path.append(f"{at['scope']}:{_UUID.sub('<uuid>', at['name'])}")
            at = by_id.get(at["parent"])
        paths.append(tuple(reversed(path)))
    return sorted(paths)


def _ours(span: dict[str, Any]) -> bool:
    return span["ours"]


def _theirs(span: dict[str, Any]) -> bool:
    return not span["ours"] and span["scope"] != "app"


# What happens today that is not "each traces as when alone", each case checked as it is (a change makes the test
# fail: then update the table and the README's "Next to other instrumentations").
# OpenInference's MCP instrumentation propagates the trace context over the transport and makes no span.
NO_SPANS_OF_THEIR_OWN = {("mcp", "openinference")}
# Instrumented first, then uninstrumented while ours is on, the peer takes ours off the methods both wrap (wrapt's
# `unwrap` sets the attribute to what the outermost wrapper, ours, wraps: the peer's own wrapper; OpenInference's
# openai sets `OpenAI.request` back to the function it read, over our wrapper of it). Ours taken off and put back
# (`uninstrument()`, `instrument()`) traces as before, as the README says to do.
TAKES_OURS_WITH_IT = {("crewai", "openinference"), ("crewai", "openllmetry"), ("smolagents", "openinference"),
                      ("smolagents", "otel_genai"), ("agno", "openinference"), ("agno", "otel_genai"),
                      ("openai", "openinference")}
# Every span of theirs is there, but some under another parent of theirs: ours, opened with an explicit parent
# (our agent's span), sits between their agent span and their step's (smolagents, Agno); the OpenAI Agents SDK's
# (each a trace processor of the SDK, as ours is) not analysed yet.
THEIRS_NEST_DIFFERENTLY = {("smolagents", "openinference", "peer first"), ("agno", "openinference", "peer first"),
                           ("openai_agents", "openllmetry", "peer first"), ("openai_agents", "openllmetry", "ours first"),
                           ("openai_agents", "otel_genai", "peer first"), ("openai_agents", "otel_genai", "ours first")}
# The OTel GenAI Agno instrumentation (1.3b0) leaves alone every method that has a `__wrapped__` (any wrapper's,
# taken for its own): instrumented after ours, it wraps nothing, and makes no span even once ours is off.
THEIRS_MISSING = {("agno", "otel_genai", "ours first")}
# LlamaIndex's dispatcher calls the span handlers' exits in the order of their entries, so two handlers that each
# make their span current detach out of order: ours is parented to the context before the dispatcher's entry, and
# the context the handlers leave is put back after their exits (our wrappers of the dispatcher), so ours nests as
# alone, in both orders, and nothing ended stays current. Before, ours nested under another span of ours, the
# peer's first, under the peer's: the fold left the tool call out.


# LangChain's tool callbacks: our handler makes no span current from a callback (the tool body gets ours through its
# child config's context), so a peer's handler that attaches its own cannot be undone by ours or undo ours. Before,
# with the OTel GenAI instrumentation after ours, their BaseTool.run wrapper (outside ours) detached, after the run,
# a token taken while our ended tool span was current.
LEAVES_A_SPAN_CURRENT: set[tuple[str, str, str]] = set()


def _leaves(tree: list[tuple[str, ...]]) -> list[str]:
    """Each span of a tree, without its parents: the same spans, each as often, whatever their nesting."""
    return sorted(path[-1] for path in tree)


@pytest.mark.parametrize("first", ["peer first", "ours first"])
@pytest.mark.parametrize(("fw", "peer"), CASES, ids=[f"{fw}-{peer}" for fw, peer in CASES])
def test_side_by_side_in_both_orders(fw: str, peer: str, first: str, tmp_path: Path) -> None:
    plain = _traced_alone(fw, None, tmp_path)["both"]
    ours_alone = _tree(_traced_alone(fw, "ours", tmp_path)["both"]["spans"], _ours)
    peer_alone = _tree(_traced_alone(fw, peer, tmp_path)["both"]["spans"], _theirs)
    assert ours_alone and bool(peer_alone) != ((fw, peer) in NO_SPANS_OF_THEIR_OWN), "alone, each makes its spans"
    order = [peer, "ours"] if first == "peer first" else ["ours", peer]
    got = _child(fw, order, order[0], tmp_path)
    assert got["errors"] == [] and got["refused"] == []  # no internal error of ours, no connection but loopback
    both = got["both"]
    assert both["result"] == plain["result"]
    # nothing the handlers of both made current stays so after the run (LlamaIndex's dispatcher and LangChain's
    # tool callbacks: each handler's detach undid the other's)
    assert both["left_current"] == ((fw, peer, first) in LEAVES_A_SPAN_CURRENT)
    ours_as_alone = lambda spans: _tree(spans, _ours) == ours_alone  # noqa: E731
    assert ours_as_alone(both["spans"])
    theirs = _tree(both["spans"], _theirs)
    if (fw, peer, first) in THEIRS_MISSING:
        assert not theirs
    elif (fw, peer, first) in THEIRS_NEST_DIFFERENTLY:
        assert _leaves(theirs) == _leaves(peer_alone) and theirs != peer_alone
    else:
        assert theirs == peer_alone
    assert len({s["trace"] for s in both["spans"]}) == 1
    # the runs ours alone folds to (LangChain's workload is two invocations: two runs), each step once
    assert both["fold"] == _traced_alone(fw, "ours", tmp_path)["both"]["fold"]
    # the one instrumented first taken off: the other traces as when it is alone
    after = got["after"]
    assert after["result"] == plain["result"]
    if order[0] == "ours":
        assert not _tree(after["spans"], _ours)
        assert _tree(after["spans"], _theirs) == ([] if (fw, peer, first) in THEIRS_MISSING else peer_alone)
    else:
        assert ours_as_alone(after["spans"]) != ((fw, peer) in TAKES_OURS_WITH_IT)
        assert ours_as_alone(got["again"]["spans"])
