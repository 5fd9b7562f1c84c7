"""OTel's ``suppress_instrumentation()`` around Agents SDK runs: a trace started inside a suppressed block
costs our processor nothing (no span, no bookkeeping), a trace started outside one is traced as before,
spans started inside the block included. The real SDK over the scripted Responses API (``fakes``)."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, Runner, custom_span, function_tool, trace as sdk_trace
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation

from otel_agents.instrumentors.openai_agents import _processor
from tests.spans import SnapshotExporter, parent_of, tree

from .fakes import ScriptedResponses, call, responses_model, say


def processor_of(instrumented: Any) -> Any:
    return instrumented._installation.processor


def sizes(processor: Any) -> dict[str, int]:
    """The sizes of every map our processor keeps."""
    return {"spans": len(processor.spans), "traces": len(processor.traces), "aliases": len(processor._aliases),
            "suppressed": len(getattr(processor, "_suppressed", ()))}


def handoff_run(processor: Any) -> tuple[Agent, list[dict[str, int]]]:
    """triage → (tool ``check``) → handoff → billing; ``seen`` gets our processor's map sizes inside the tool."""
    seen: list[dict[str, int]] = []

    @function_tool
    def check(order_id: str) -> str:
        """Check an order."""
        seen.append(sizes(processor))
        return "eligible"

    handler = ScriptedResponses({"triage": [call(("check", {"order_id": "A1"})), call(("transfer_to_billing", {}))],
                                 "billing": [say("refund ok")]})
    model = responses_model(handler)
    billing = Agent(name="billing", instructions="billing", model=model)
    triage = Agent(name="triage", instructions="triage", model=model, handoffs=[billing], tools=[check])
    return triage, seen


def test_run_inside_suppress_instrumentation_keeps_nothing(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A run whose SDK trace starts inside ``suppress_instrumentation()``: no span, and our processor keeps
    nothing for it while it runs (only the trace's id, forgotten at its end)."""
    processor = processor_of(instrumented)
    agent, seen = handoff_run(processor)
    with suppress_instrumentation():
        assert Runner.run_sync(agent, "refund?").final_output == "refund ok"

    assert exporter.spans == [], tree(exporter.spans)
    assert seen == [{"spans": 0, "traces": 0, "aliases": 0, "suppressed": 1}]
    assert sizes(processor) == {"spans": 0, "traces": 0, "aliases": 0, "suppressed": 0}


def test_suppressed_trace_ids_are_bounded(instrumented: Any, exporter: SnapshotExporter,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Suppressed traces never ended (a caller that starts an SDK trace and drops it) are forgotten oldest
    first past the cap; ending them later is harmless."""
    processor = processor_of(instrumented)
    monkeypatch.setattr(_processor, "_MAX_SUPPRESSED", 2)
    with suppress_instrumentation():
        traces = [sdk_trace(f"dropped {i}") for i in range(3)]
        for t in traces:
            t.start()
    assert sizes(processor)["suppressed"] == 2
    for t in traces:
        t.finish()
    assert sizes(processor) == {"spans": 0, "traces": 0, "aliases": 0, "suppressed": 0}
    assert exporter.spans == [], tree(exporter.spans)


def test_trace_started_outside_a_suppressed_block_is_traced_as_before(instrumented: Any,
                                                                      exporter: SnapshotExporter) -> None:
    """The mixed case: the SDK trace starts outside ``suppress_instrumentation()``, a run inside it. The
    decision is the trace's, taken at its start: the trace is ours, its spans go through our processor as
    before (the ones started inside the block are non-recording, as the OTel context asks, and export
    nothing), and the spans after the block hang under the workflow span as usual."""
    processor = processor_of(instrumented)
    agent, seen = handoff_run(processor)
    with sdk_trace("mixed"):
        with custom_span("before"):
            pass
        with suppress_instrumentation():
            assert Runner.run_sync(agent, "refund?").final_output == "refund ok"
        with custom_span("after"):
            pass

    names = sorted(s.name for s in exporter.spans)
    assert names == ["after", "before", "invoke_workflow mixed"], tree(exporter.spans)
    root = next(s for s in exporter.spans if s.name == "invoke_workflow mixed")
    for name in ("before", "after"):
        span = next(s for s in exporter.spans if s.name == name)
        assert parent_of(span, exporter.spans) == root, tree(exporter.spans)
    # inside the block our processor kept the run's tree (the trace, the triage agent and the tool)
    [inside] = seen
    assert inside["traces"] == 1 and inside["spans"] >= 2 and inside["suppressed"] == 0, inside
    assert sizes(processor) == {"spans": 0, "traces": 0, "aliases": 0, "suppressed": 0}
    assert not trace.get_current_span().get_span_context().is_valid  # nothing left current


def test_normal_run_after_a_suppressed_one_is_traced(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A suppressed run changes nothing for the next run: the handoff tree is whole."""
    processor = processor_of(instrumented)
    agent, seen = handoff_run(processor)
    with suppress_instrumentation():
        Runner.run_sync(agent, "refund?")
    agent, seen = handoff_run(processor)
    assert Runner.run_sync(agent, "refund?").final_output == "refund ok"

    spans = exporter.spans
    by_name = {s.name: s for s in spans}
    t, b = by_name["invoke_agent triage"], by_name["invoke_agent billing"]
    handoff, tool = by_name["execute_tool transfer_to_billing"], by_name["execute_tool check"]
    assert parent_of(handoff, spans) == t and parent_of(b, spans) == handoff, tree(spans)
    assert parent_of(tool, spans) == t and parent_of(t, spans) == by_name["invoke_workflow Agent workflow"]
    assert len([s for s in spans if s.semantic_kind == "model"]) == 3, tree(spans)
    assert b.attributes["output.value"] == "refund ok"
    assert seen[0]["traces"] == 1 and seen[0]["suppressed"] == 0
    assert sizes(processor) == {"spans": 0, "traces": 0, "aliases": 0, "suppressed": 0}


def test_trace_started_inside_a_suppressed_block_stays_quiet_after_it(instrumented: Any,
                                                                     exporter: SnapshotExporter) -> None:
    """The other mixed case: the SDK trace starts inside ``suppress_instrumentation()`` and a run goes on in it
    after the block. The trace's decision holds for all of it: no span, no bookkeeping."""
    processor = processor_of(instrumented)
    agent, seen = handoff_run(processor)
    t = sdk_trace("quiet")
    with suppress_instrumentation():
        t.start(mark_as_current=True)
    try:
        assert Runner.run_sync(agent, "refund?").final_output == "refund ok"
    finally:
        t.finish(reset_current=True)
    assert exporter.spans == [], tree(exporter.spans)
    assert seen == [{"spans": 0, "traces": 0, "aliases": 0, "suppressed": 1}]
    assert sizes(processor) == {"spans": 0, "traces": 0, "aliases": 0, "suppressed": 0}
