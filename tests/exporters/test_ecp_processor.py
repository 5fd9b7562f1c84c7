"""``ECPFoldingProcessor``: runs folded live as their spans end (issue 7).

No timed assertions: the age limit runs on an injected fake clock.
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import threading

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from otel_agents._spans import ChatMessage, wrap_stream
from otel_agents.exporters.ecp import ECPFoldingProcessor, fold

from .conftest import Recorder, check
from .test_ecp_fold import agent_run


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return FakeClock()


def recorder(**kwargs):
    got: list[dict] = []
    processor = ECPFoldingProcessor(got.append, **kwargs)
    return Recorder(processor), processor, got


def test_envelopes_match_fold_of_the_same_spans():
    """Issue 7: the processor hands on, per finished run, exactly what ``fold`` gives for its spans."""
    rec, processor, got = recorder()
    for name in ("one", "two"):
        agent_run(rec.telemetry, name=name)
        assert len(got) == (1 if name == "one" else 2)  # handed on as soon as the run ended
    assert check(got) == fold(rec.spans)
    assert (processor.open_runs, processor.tracked_spans, sum(processor.dropped.values())) == (0, 0, 0)


def test_the_spans_the_sdk_hands_over_are_read_through_their_fields():
    """The SDK's own span classes are read through their fields, not a property call each (``span.context``,
    ``span.parent``, a read-only proxy of the attributes): ``on_start`` gets the class ``Tracer.start_span``
    makes (``_Span``, missed before), ``on_end`` a ``ReadableSpan``."""
    from otel_agents.exporters.ecp import _processor

    seen: list[type] = []

    class Types(SpanProcessor):
        def on_start(self, span, parent_context=None):
            seen.append(type(span))

        def on_end(self, span):
            seen.append(type(span))

    rec = Recorder(Types())
    agent_run(rec.telemetry, name="one")
    assert seen and all(t in _processor._SDK_SPANS for t in seen), set(seen)


def test_queue_when_no_callback():
    processor = ECPFoldingProcessor()
    rec = Recorder(processor)
    agent_run(rec.telemetry)
    assert processor.queue.qsize() == 1
    assert check(processor.drain()) == fold(rec.spans)
    assert processor.drain() == []


def test_waits_for_a_stream_that_ends_after_its_agent():
    """Issue 7 edge case: a child ending after its parent (a stream) is waited for, not cut off."""
    rec, processor, got = recorder()
    tel = rec.telemetry
    with tel.span("agent", "streamer") as agent:
        agent.set_agent("streamer")
        model = tel.start_span("model", "gpt-4o")
        stream = wrap_stream(iter(["a", "b"]), model, on_end=lambda span, abandoned: span.set_messages(
            output=[ChatMessage("assistant", "ab", finish_reason="stop")]))
    assert got == [] and processor.open_runs == 1  # the agent ended, its stream has not
    assert list(stream) == ["a", "b"]
    [env] = check(got)
    assert env["metrics"]["model_calls"] == 1 and "incomplete" not in env
    assert got == fold(rec.spans)


def test_sub_agent_waits_for_its_parent_agent():
    """A sub-agent that ends long before its parent is not mistaken for a run of its own."""
    rec, processor, got = recorder()
    tel = rec.telemetry
    with tel.span("agent", "boss") as boss:
        boss.set_agent("boss")
        with tel.span("agent", "helper") as helper:
            helper.set_agent("helper")
        assert got == []
    [env] = check(got)
    assert [(a["name"], a["parent"]) for a in env["agents"]] == [("boss", None), ("helper", "boss")]


def test_two_runs_under_an_open_http_span_are_handed_on_one_by_one():
    """Issue 7 edge case: runs under a still-open non-semantic span are each handed on when they end."""
    rec, processor, got = recorder()
    with rec.app.start_as_current_span("POST /chat", kind=trace.SpanKind.SERVER):
        for i, name in enumerate(("first", "second"), start=1):
            with rec.telemetry.span("agent", name) as agent:
                agent.set_agent(name)
            assert len(got) == i
    assert check(got) == fold(rec.spans)
    assert processor.tracked_spans == 0


def test_orphan_run():
    """Issue 7 edge case: a span whose parent is unknown to the processor opens its own run."""
    rec, processor, got = recorder()
    ghost = SpanContext(random.getrandbits(128), random.getrandbits(64), is_remote=False,
                        trace_flags=TraceFlags(TraceFlags.SAMPLED))
    with rec.telemetry.span("tool", "lonely", parent=trace.set_span_in_context(NonRecordingSpan(ghost))) as tool:
        tool.set_tool("lonely", arguments={})
    assert check(got) == fold(rec.spans)


def test_never_ending_run_is_folded_at_the_age_limit(clock, caplog):
    """Issue 7 edge case: a root that never ends is folded with its ended spans once it is too old."""
    rec, processor, got = recorder(max_age_s=60, clock=clock)
    tel = rec.telemetry
    root = tel.start_span("agent", "forever")
    root.set_agent("forever")
    with root.activate():
        with tel.span("tool", "step") as tool:
            tool.set_tool("step", arguments={"n": 1})
    assert got == []
    clock.now += 61
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        assert processor.force_flush()
    [env] = check(got)
    assert env["incomplete"].startswith("age limit of 60 s reached (1 span(s) still open)")
    assert env["public_output"] is None
    assert [c["name"] for c in env["tool_calls"]] == ["step"]
    assert env["tool_calls"][0]["agent"] is None  # the agent span never ended
    assert processor.dropped["runs_expired"] == 1
    root.end()  # too late: counted, not folded into a second envelope
    assert len(got) == 1 and processor.dropped["late_spans"] == 1
    assert (processor.open_runs, processor.tracked_spans) == (0, 0)
    assert sum("ECP folding processor dropped" in r.getMessage() for r in caplog.records) == 1


def test_age_limit_is_also_checked_when_other_spans_end(clock):
    rec, processor, got = recorder(max_age_s=10, clock=clock)
    stuck = rec.telemetry.start_span("agent", "stuck")
    clock.now += 11
    with rec.telemetry.span("agent", "quick") as quick:
        quick.set_agent("quick")
    # the stuck run had no ended span: nothing to hand on for it; the quick run is folded normally
    assert [e["agents"][0]["name"] for e in check(got)] == ["quick"]
    assert processor.open_runs == 0 and processor.dropped["runs_expired"] == 1
    stuck.end()


def test_open_runs_are_bounded(caplog):
    """Bounds: past ``max_open_runs`` the oldest run is folded early and marked incomplete; logged once."""
    rec, processor, got = recorder(max_open_runs=2)
    tel = rec.telemetry
    opened = []
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        for i in range(4):
            span = tel.start_span("agent", f"a{i}")
            with span.activate():
                with tel.span("tool", f"t{i}") as tool:
                    tool.set_tool(f"t{i}", arguments={})
            opened.append(span)
    assert processor.open_runs == 2
    assert [e["tool_calls"][0]["name"] for e in check(got)] == ["t0", "t1"]
    assert all(e["incomplete"].startswith("evicted: more than 2 open runs") for e in got)
    for span in opened:
        span.end()
    assert len(got) == 4 and "incomplete" not in got[3]
    assert processor.dropped["runs_evicted"] == 2 and processor.dropped["late_spans"] == 2
    assert sum("ECP folding processor dropped" in r.getMessage() for r in caplog.records) == 1
    assert (processor.open_runs, processor.tracked_spans) == (0, 0)


def test_spans_per_run_are_bounded():
    """Bounds: spans past ``max_spans_per_run`` are dropped (children included) and counted."""
    rec, processor, got = recorder(max_spans_per_run=3)
    tel = rec.telemetry
    with tel.span("agent", "big") as agent:
        agent.set_agent("big")
        for i in range(4):
            with tel.span("tool", f"t{i}") as tool:
                tool.set_tool(f"t{i}", arguments={})
                with tel.span("model", "m"):
                    pass
    [env] = check(got)
    assert len(json.loads(env["logs"])) == 3
    assert env["incomplete"] == "6 span(s) over the cap of 3 per run were dropped"
    assert processor.dropped["spans_over_cap"] == 6
    assert processor.tracked_spans == 0


def test_memory_stays_flat_over_many_runs():
    """Bounds: after many runs (ok, failing, streamed, abandoned) nothing is held."""
    rec, processor, got = recorder()
    tel = rec.telemetry
    for i in range(300):
        try:
            with tel.span("agent", "a"):
                with tel.span("tool", "t") as tool:
                    tool.set_tool("t", arguments={"i": i})
                    if i % 3 == 0:
                        raise KeyError(i)
                model = tel.start_span("model", "m")
                stream = wrap_stream(iter("xyz"), model)
                if i % 2:
                    list(stream)
                else:
                    next(iter(stream))
                    stream.close()
        except KeyError:
            pass
    assert len(got) == 300
    assert (processor.open_runs, processor.tracked_spans, sum(processor.dropped.values())) == (0, 0, 0)


def test_result_does_not_depend_on_the_processor_position():
    """Issue 7: two processors, before and after one that edits spans at start, hand on equal envelopes."""

    class Tagger(SpanProcessor):
        def on_start(self, span, parent_context=None):
            span.set_attribute("otel_agents.test.tag", "tagged")

    first, last = [], []
    rec = Recorder(ECPFoldingProcessor(first.append), Tagger(), ECPFoldingProcessor(last.append))
    agent_run(rec.telemetry)
    assert check(first) == last
    assert '"otel_agents.test.tag":"tagged"' in first[0]["logs"]


def test_callback_errors_never_reach_the_program():
    def broken(envelope):
        raise RuntimeError("grader down")

    processor = ECPFoldingProcessor(broken)
    rec = Recorder(processor)
    agent_run(rec.telemetry)  # no exception
    assert processor.dropped["callback_errors"] == 1


def test_a_callback_error_is_logged_once_as_the_callbacks(caplog):
    """The user's callback failed, not otel_agents: the warning names the callback, once; never "internal error"."""
    from otel_agents._spans.guard import reset_reported_sites

    def grader_down(envelope):
        raise RuntimeError("grader down")

    reset_reported_sites()
    rec = Recorder(ECPFoldingProcessor(grader_down))
    with caplog.at_level(logging.DEBUG, logger="otel_agents"):
        agent_run(rec.telemetry)
        agent_run(rec.telemetry)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("otel_agents: your ECP envelope callback (configure(ecp=), on_envelope=) "
                                  f"{__name__}.test_a_callback_error_is_logged_once_as_the_callbacks.<locals>."
                                  "grader_down raised RuntimeError('grader down')"), warnings[0]
    assert not any("internal error" in r.getMessage() for r in caplog.records)


def test_full_queue_drops_and_counts():
    processor = ECPFoldingProcessor(max_queued=1)
    rec = Recorder(processor)
    agent_run(rec.telemetry)
    agent_run(rec.telemetry)
    assert len(processor.drain()) == 1 and processor.dropped["envelopes_dropped"] == 1


def test_shutdown_folds_open_runs_and_ignores_later_spans():
    rec, processor, got = recorder()
    span = rec.telemetry.start_span("agent", "open")
    with span.activate():
        with rec.telemetry.span("tool", "t") as tool:
            tool.set_tool("t", arguments={})
    processor.shutdown()
    [env] = check(got)
    assert env["incomplete"].startswith("the processor shut down")
    span.end()
    assert len(got) == 1


def test_concurrent_runs_stay_apart():
    """Runs in parallel threads each get their own envelope with their own tool calls."""
    rec, processor, got = recorder()

    def work(n):
        for i in range(10):
            with rec.telemetry.span("agent", f"agent{n}") as agent:
                agent.set_agent(f"agent{n}")
                with rec.telemetry.span("tool", f"tool{n}") as tool:
                    tool.set_tool(f"tool{n}", arguments={"i": i})

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    envs = check(got)
    assert len(envs) == 60
    for env in envs:
        agent = env["agents"][0]["name"]
        assert [c["name"] for c in env["tool_calls"]] == ["tool" + agent[len("agent"):]]
    assert processor.tracked_spans == 0


def test_invalid_bounds_are_rejected():
    with pytest.raises(ValueError):
        ECPFoldingProcessor(max_open_runs=0)


def test_grace_period_lets_a_late_child_join_its_run(clock):
    """Watermark: with ``grace_s`` a child that *starts* after its parent ended (late framework events) still joins."""
    rec, processor, got = recorder(grace_s=5, clock=clock)
    tel = rec.telemetry
    agent = tel.start_span("agent", "slow_events")
    agent.set_agent("slow_events")
    agent.end()
    clock.now += 4
    with tel.span("tool", "late", parent=agent) as tool:  # starts after the agent span ended
        tool.set_tool("late", arguments={})
    assert got == []  # the run is waiting out its grace period again
    clock.now += 5
    with rec.app.start_as_current_span("unrelated"):  # any later span lets the processor look at the clock
        pass
    [env] = check(got)
    assert [c["name"] for c in env["tool_calls"]] == ["late"] and "incomplete" not in env
    assert env == fold(rec.spans)[0]
    assert (processor.open_runs, processor.tracked_spans) == (0, 0)


def test_force_flush_folds_runs_waiting_out_their_grace(clock):
    rec, processor, got = recorder(grace_s=60, clock=clock)
    agent_run(rec.telemetry)
    assert got == []
    processor.force_flush()
    assert check(got) == fold(rec.spans)


def test_without_grace_a_late_child_opens_a_run_of_its_own():
    rec, processor, got = recorder()
    agent = rec.telemetry.start_span("agent", "a")
    agent.end()
    with rec.telemetry.span("tool", "late", parent=agent) as tool:
        tool.set_tool("late", arguments={})
    assert [e["tool_calls"] for e in check(got)][0] == []
    assert [c["name"] for c in got[1]["tool_calls"]] == ["late"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_with_no_open_runs_and_a_free_lock():
    """Issue #35: fork while a run is open and another thread holds the processor's lock (a span
    ending there). The child must not deadlock on the lock, must not hold the parent's run, and its
    shutdown must not fold the parent's run a second time (as ``incomplete``)."""
    rec, processor, got = recorder()
    tel = rec.telemetry
    held, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with processor._lock:
            held.set()
            release.wait(10)

    with tel.span("agent", "parent") as agent:
        agent.set_agent("parent")
        holder = threading.Thread(target=hold_the_lock)
        holder.start()
        held.wait(10)
        pid = os.fork()
        if pid == 0:  # the child: report through the exit status, never return into pytest
            code = 1
            try:
                signal.alarm(10)  # a deadlock ends the child (status: killed by SIGALRM)
                assert processor.open_runs == 0
                with tel.span("agent", "worker", parent=Context()) as worker:
                    worker.set_agent("worker")
                processor.shutdown()
                code = 0 if [e["agents"][0]["name"] for e in got] == ["worker"] else 2
            finally:
                os._exit(code)
        release.set()
        holder.join()
        status = os.waitpid(pid, 0)[1]
    assert os.waitstatus_to_exitcode(status) == 0
    assert [(e["agents"][0]["name"], "incomplete" in e) for e in got] == [("parent", False)]


# -- other instrumentations' spans (issue 25) --------------------------------------------------------------

def openllmetry_workflow(app, clock, *, gap_s: float, between=lambda: None) -> None:
    """OpenLLMetry's LlamaIndex shape: a ``workflow`` span that gets its kind after it started and ends when
    ``run()`` hands back its handler, before the workflow's steps (a model call, a tool call) start."""
    root = app.start_span("FunctionAgent.workflow")
    root.set_attributes({"traceloop.span.kind": "workflow", "traceloop.entity.name": "FunctionAgent.workflow"})
    root.end()
    clock.now += gap_s
    between()
    context = trace.set_span_in_context(root)
    model = app.start_span("MockLLM.task", context=context)
    model.set_attributes({"traceloop.span.kind": "task", "gen_ai.operation.name": "chat",
                          "gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 2})
    model.end()
    step = app.start_span("add.tool", context=context)
    step.set_attributes({"traceloop.span.kind": "tool", "traceloop.entity.name": "add",
                         "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"a": 2, "b": 3}}),
                         "traceloop.entity.output": "5"})
    step.end()


def test_a_foreign_root_that_ends_before_its_children_is_one_envelope(clock):
    """Before, the processor folded no foreign span (their kind is set after they start), and a root ending
    before its children cut the run in pieces. Now the group waits ``foreign_grace_s`` (default 1 s) for late
    children, then folds as ``fold`` does: one envelope."""
    rec, processor, got = recorder(clock=clock)
    openllmetry_workflow(rec.app, clock, gap_s=0.5)
    assert got == [] and processor.open_runs == 1  # all ended, waiting out the grace period
    clock.now += 1
    processor.force_flush()
    [env] = check(got)
    assert env == fold(rec.spans)[0]
    assert (env["metrics"]["model_calls"], env["usage"]["total_tokens"]) == (1, 7)
    assert [(c["name"], c["arguments"], c["result"]) for c in env["tool_calls"]] == [("add", {"a": 2, "b": 3}, 5)]
    assert (processor.open_runs, processor.tracked_spans, sum(processor.dropped.values())) == (0, 0, 0)


def test_children_later_than_the_foreign_grace_period_are_runs_of_their_own(clock):
    """The limit: the group is folded at the first span event (or flush) after its grace period; a child
    starting after that opens a group of its own (the root alone, with no fact, gives no envelope)."""
    rec, processor, got = recorder(clock=clock, foreign_grace_s=0.25)
    openllmetry_workflow(rec.app, clock, gap_s=0.5, between=processor.force_flush)
    processor.force_flush()
    assert [(e["metrics"]["model_calls"], len(e["tool_calls"])) for e in check(got)] == [(1, 0), (0, 1)]


def test_plain_spans_outside_our_runs_are_forgotten_as_they_end():
    """An HTTP request with a database call under it (no vocabulary): nothing handed on, nothing held."""
    rec, processor, got = recorder()
    with rec.app.start_as_current_span("GET /orders", kind=trace.SpanKind.SERVER):
        with rec.app.start_as_current_span("SELECT orders", kind=trace.SpanKind.CLIENT,
                                           attributes={"db.system": "postgresql"}):
            assert processor.tracked_spans == 2
    processor.force_flush()
    assert got == []
    assert (processor.open_runs, processor.tracked_spans, sum(processor.dropped.values())) == (0, 0, 0)


def test_our_run_under_a_foreign_root_is_handed_on_once():
    """OpenInference's LangGraph ``CHAIN`` above our agent: ours is handed on as it ends; the foreign run
    around it is not handed on a second time."""
    rec, processor, got = recorder()
    with rec.app.start_as_current_span("LangGraph", attributes={"openinference.span.kind": "CHAIN",
                                                                 "output.value": "A100 has shipped."}):
        agent_run(rec.telemetry, name="support")
    processor.force_flush()
    [env] = check(got)
    assert [a["name"] for a in env["agents"]] == ["support", "researcher"]
    assert processor.tracked_spans == 0


def test_foreign_groups_never_evict_our_runs():
    """Groups are held apart, under their own cap: plain traffic cannot push our runs out."""
    rec, processor, got = recorder(max_open_runs=1)
    with rec.app.start_as_current_span("GET /a"):
        with rec.app.start_as_current_span("GET /b", context=trace.set_span_in_context(trace.INVALID_SPAN)):
            agent_run(rec.telemetry, name="one")
    assert [a["name"] for a in check(got)[0]["agents"]] == ["one", "researcher"]
    assert "incomplete" not in got[0] and sum(processor.dropped.values()) == 0
