"""``TraceGatherer``: groupbytrace semantics and its bounds, on a fake clock (no waiting, no timing)."""

from __future__ import annotations

import json
import logging

import pytest

from otel_agents.exporters.ecp import TraceGatherer, fold
from otel_agents.semconv import Kind

from ..exporters.conftest import Recorder, check


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _runs(rec: Recorder, n: int, tools: int = 1) -> list[list]:
    """``n`` runs (agent → ``tools`` tool spans), each a list of its spans, root last (the order they end)."""
    out = []
    for i in range(n):
        agent = rec.telemetry.start_span(Kind.AGENT, "support")
        for _ in range(tools):
            tool = rec.telemetry.start_span(Kind.TOOL, "lookup_order", parent=agent,
                                            attributes={"gen_ai.tool.name": "lookup_order"})
            tool.end()
        agent.set_output(f"answer {i}")
        agent.end()
        out.append(rec.spans)
        rec.memory.clear()
    return out


@pytest.fixture
def rec():
    r = Recorder()
    yield r
    r.provider.shutdown()


def _gatherer(clock: Clock, **kw) -> tuple[TraceGatherer, list[dict]]:
    got: list[dict] = []
    return TraceGatherer(got.append, trace_idle=1.0, trace_timeout=10.0, clock=clock, **kw), got


def test_a_trace_is_folded_once_its_root_arrived_and_it_went_quiet(rec) -> None:
    clock = Clock()
    g, got = _gatherer(clock)
    [run] = _runs(rec, 1, tools=2)
    g.add(run[:1])           # a tool span, from one process
    clock.now = 5.0
    assert g.fold_ready() == 0 and not got   # no root yet: waits (up to trace_timeout)
    g.add(run[1:])           # the rest, root included, from another
    clock.now = 5.9
    assert g.fold_ready() == 0               # quiet for 0.9 s < trace_idle
    clock.now = 6.0
    assert g.fold_ready() == 1
    assert check(got) == fold(run) and "incomplete" not in got[0]
    assert (g.held_traces, g.held_spans, g.traces, g.runs) == (0, 0, 1, 1)


def test_a_run_that_cannot_be_folded_is_a_problem_and_the_other_runs_are_folded(rec, monkeypatch) -> None:
    """Damaged input that breaks the envelope of one run (here forced) loses that run alone, named with its trace
    and root span (``on_problem``); the other runs are folded."""
    from otel_agents.exporters.ecp import _envelope

    [first, second] = _runs(rec, 2)
    trace_id = first[-1].context.trace_id
    broken = first[-1].context.span_id
    real = _envelope.build_envelope
    monkeypatch.setattr(_envelope, "build_envelope", lambda run, **kw: (
        1 / 0 if run.root.span_id == broken else real(run, **kw)))
    problems: list[str] = []
    clock = Clock()
    g, got = _gatherer(clock, on_problem=problems.append)
    g.add(first)
    g.add(second)
    clock.now = 2.0
    assert g.fold_ready() == 2 and g.runs == 1
    assert [e["public_output"] for e in got] == ["answer 1"]
    assert problems == [f"trace {trace_id:032x}: the run of span {broken:016x} could not be folded: "
                        "ZeroDivisionError('division by zero')"]


def test_a_trace_without_its_root_is_folded_at_the_timeout_marked_incomplete(rec) -> None:
    clock = Clock()
    g, got = _gatherer(clock)
    [run] = _runs(rec, 1)
    g.add(run[:-1])  # the tool span only: its parent (the agent) never arrives
    clock.now = 9.9
    assert g.fold_ready() == 0
    clock.now = 10.0
    assert g.fold_ready() == 1
    [envelope] = check(got)
    assert envelope["incomplete"] == "the trace's root span did not arrive within 10 s"
    assert g.dropped["traces_without_root"] == 1


def test_traces_and_spans_held_stay_within_their_bounds(rec, caplog) -> None:
    clock = Clock()
    g, got = _gatherer(clock, max_traces=10, max_spans=25, max_spans_per_trace=4)
    runs = _runs(rec, 120, tools=1)
    with caplog.at_level(logging.WARNING, logger="otel_agents.collect"):
        for run in runs:
            g.add(run)                   # never idle: only the bounds fold
            assert g.held_traces <= 10 and g.held_spans <= 25
    assert g.dropped["traces_evicted"] == 110 and len(got) == 110
    assert all(e["incomplete"].startswith("folded early: the receiver held more than 10 traces or 25 spans")
               for e in got)
    # counted in the log at the 1st, 10th and 100th eviction, not once per trace
    assert [r.getMessage().split("(traces_evicted: ")[1].split(" ")[0] for r in caplog.records] == ["1", "10", "100"]
    assert g.flush("shutdown") == (10, 20)
    assert len(got) == 120 and "incomplete" not in got[-1]  # a held trace with its root folds whole at shutdown


def test_a_rooted_trace_whose_span_lost_its_parent_is_incomplete(rec) -> None:
    """The root came, but a remote agent's server span never did (its process died mid-call, after its
    agent's spans were exported): every envelope of the trace says which parent is missing."""
    from opentelemetry.trace import SpanKind

    clock = Clock()
    g, got = _gatherer(clock)
    caller = rec.telemetry.start_span(Kind.AGENT, "support")
    served = rec.telemetry.start_span(Kind.AGENT, "Orders Agent", parent=caller, span_kind=SpanKind.SERVER)
    worker = rec.telemetry.start_span(Kind.AGENT, "orders_worker", parent=served)
    rec.telemetry.start_span(Kind.TOOL, "lookup_order", parent=worker,
                             attributes={"gen_ai.tool.name": "lookup_order"}).end()
    worker.end()
    caller.end()
    g.add(rec.spans)  # every span but the server's
    clock.now = 1.0
    assert g.fold_ready() == 1
    lost = f"{served.span.get_span_context().span_id:016x}"
    assert [e["incomplete"] for e in check(got)] == [f"1 span(s) name a parent span that never arrived ({lost})"] * 2
    served.end()


def test_spans_over_the_per_trace_cap_are_dropped_and_said_and_the_run_keeps_its_root(rec) -> None:
    """Spans arrive as they end, so the root comes last, over the cap. It used to be dropped with the rest, and
    each tool span held was folded as a run of its own (4 envelopes for one run, no answer); the root is the
    parent of spans held, so it is kept: one envelope, the run's answer, the cut said."""
    clock = Clock()
    g, got = _gatherer(clock, max_spans_per_trace=4)
    [run] = _runs(rec, 1, tools=6)  # 7 spans, root last: the root is over the cap
    g.add(run)
    g.flush("shutdown")
    assert g.dropped["spans_over_cap"] == 2
    [env] = check(got)
    assert env["incomplete"] == "2 span(s) over the cap of 4 per trace were dropped"
    assert env["public_output"] == "answer 0" and len(env["tool_calls"]) == 4
    assert g.held_spans == 0


def test_over_the_cap_only_parents_of_spans_held_are_kept_up_to_twice_the_cap(rec) -> None:
    """A chain that arrives leaf first (each span the parent of the one before) is kept only up to twice the
    cap; a span over the cap that is nobody's parent (the stray tool) is dropped."""
    clock = Clock()
    g, got = _gatherer(clock, max_spans_per_trace=3)
    agent = rec.telemetry.start_span(Kind.AGENT, "support")
    chain = [agent]
    for i in range(9):  # agent <- c0 <- c1 <- ... <- c8
        chain.append(rec.telemetry.start_span(Kind.CHAIN, f"c{i}", parent=chain[-1]))
    for span in reversed(chain[1:]):
        span.end()
    rec.telemetry.start_span(Kind.TOOL, "stray", parent=agent, attributes={"gen_ai.tool.name": "x"}).end()
    agent.end()
    g.add(rec.spans)  # c8 ... c0, stray, agent
    assert (g.held_spans, g.dropped["spans_over_cap"]) == (6, 5)  # c8..c3 held; c2, c1, c0, stray, agent not
    g.flush("shutdown")
    names = {r["name"] for e in check(got) for r in json.loads(e["logs"])}
    assert {"c8", "c3"} <= names and not names & {"c2", "stray", "support"}


def test_a_span_after_its_trace_was_folded_is_counted_and_a_repeated_one_dropped(rec) -> None:
    """A span that came late (raise --trace-idle) starts a partial trace, counted. OTLP delivery is at-least-once:
    an exporter that did not get the answer sends the request again, here after the trace was folded. That made
    a second envelope of the same run (graded twice); now the repeated spans are dropped and counted."""
    clock = Clock()
    g, got = _gatherer(clock)
    [run] = _runs(rec, 1, tools=2)
    g.add(run[1:])
    clock.now = 2.0
    g.fold_ready()
    g.add(run[1:])  # the same request again
    clock.now = 4.0
    g.fold_ready()
    assert len(got) == 1 and g.held_traces == 0
    assert g.dropped["spans_repeated"] == len(run[1:]) and "late_spans" not in g.dropped
    g.add(run)  # a late tool span beside the repeats: it alone is held, as a late span
    assert g.dropped["spans_repeated"] == 2 * len(run[1:]) and g.dropped["late_spans"] == 1
    assert g.held_spans == 1


def test_the_late_part_of_a_trace_folded_before_is_marked_incomplete(rec) -> None:
    """A run longer than trace_timeout: its first span (exported by a batch as it ended) is folded alone, without
    root; the rest comes later, root included. That part's envelope lacks the first tool call, so it says it is
    part of a trace, not a whole run (it was unmarked: one tool call of two, graded as the run's)."""
    clock = Clock()
    g, got = _gatherer(clock)
    [run] = _runs(rec, 1, tools=2)  # tool, tool, agent
    g.add(run[:1])
    clock.now = 10.0
    assert g.fold_ready() == 1
    g.add(run[1:])
    clock.now = 11.0
    assert g.fold_ready() == 1
    first, rest = check(got)
    assert first["incomplete"] == "the trace's root span did not arrive within 10 s"
    assert len(rest["tool_calls"]) == 1 and rest["public_output"] == "answer 0"
    assert rest["incomplete"] == ("a late part of the trace: 1 span(s) of it arrived before and were folded "
                                  "into another envelope")
    assert g.dropped["late_spans"] == 1


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError):
        TraceGatherer(print, max_traces=0)
    with pytest.raises(ValueError):
        TraceGatherer(print, trace_idle=5, trace_timeout=1)


def test_prices_are_loaded_with_the_first_model_span_not_before(rec, monkeypatch) -> None:
    """genai-prices (0.3-0.4 s of CPU to import) is loaded when the first model span arrives, before its trace
    is folded (the fold that prices it does not wait), and never for a receiver that gets only tool and agent
    spans (every `ecp collect` paid it at start-up)."""
    from otel_agents.exporters.ecp import _gather

    loads: list[int] = []
    monkeypatch.setattr(_gather, "load_prices", lambda: loads.append(1) or True)
    clock = Clock()
    g, got = _gatherer(clock)
    g.add([s for run in _runs(rec, 2) for s in run])
    clock.now = 5.0
    assert g.fold_ready() == 2 and loads == []
    agent = rec.telemetry.start_span(Kind.AGENT, "support")
    model = rec.telemetry.start_span(Kind.MODEL, "chat", parent=agent)
    model.end()
    agent.end()
    g.add(rec.spans[:1])  # the model span alone: the prices load now, its trace not folded yet
    assert loads == [1] and g.held_traces == 1
    g.add(rec.spans[1:])
    clock.now = 10.0
    assert g.fold_ready() == 1 and loads == [1]
    assert len(got) == 3
