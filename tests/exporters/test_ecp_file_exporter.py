"""``ECPFileExporter`` (issue 29): the ``ecp`` traces-exporter entry point — envelopes as JSON
lines, runs assembled by the folding processor from span starts plus exported batches.

Batches are handed to :meth:`export` by hand where the order matters (deterministic), and by the
SDK's real ``BatchSpanProcessor`` where it does not. No timed assertions: age limits run on a fake
clock. The zero-code and fork cases run in subprocesses: ``tests/backends/test_zero_code.py``.
"""

from __future__ import annotations

import json
import os
from importlib.metadata import entry_points

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult

from otel_agents._spans import Settings, Telemetry
from otel_agents.exporters.ecp import ECPFileExporter, fold
from otel_agents.exporters import zero_code
from otel_agents.exporters.file import OTLPJsonFileExporter, read_otlp_json

from .conftest import Recorder, check
from .test_ecp_fold import agent_run
from .test_ecp_processor import FakeClock


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


class HeldBatches(SpanProcessor):
    """Keeps ended spans until the test hands them to the exporter as one batch."""

    def __init__(self, exporter) -> None:
        self.exporter, self.held = exporter, []

    def on_end(self, span) -> None:
        self.held.append(span)

    def export(self) -> None:
        batch, self.held = self.held, []
        self.exporter.export(batch)


def held(tmp_path, **options):
    rec = Recorder()
    exporter = ECPFileExporter(tmp_path / "envelopes.jsonl", tracer_provider=rec.provider, **options)
    batches = HeldBatches(exporter)
    rec.provider.add_span_processor(batches)
    return rec, exporter, batches


def test_a_run_exported_in_several_batches_is_one_envelope(tmp_path):
    """A sub-agent exported before its parent agent ended joins the parent's run, not a run of its own."""
    rec, exporter, batches = held(tmp_path)
    tel = rec.telemetry
    with tel.span("agent", "boss") as boss:
        boss.set_agent("boss")
        with tel.span("agent", "helper") as helper:
            helper.set_agent("helper")
            with tel.span("tool", "lookup") as tool:
                tool.set_tool("lookup", arguments={"id": 7})
                tool.set_tool_result("found")
        batches.export()  # helper and its tool, while boss is still running
        assert exporter.path and (tmp_path / "envelopes.jsonl").read_text() == ""
        boss.set_output("done")
    batches.export()
    [env] = check(lines(tmp_path / "envelopes.jsonl"))
    assert [(a["name"], a["parent"]) for a in env["agents"]] == [("boss", None), ("helper", "boss")]
    assert [(c["name"], c["arguments"], c["agent"]) for c in env["tool_calls"]] == [("lookup", {"id": 7}, "helper")]
    assert [env] == fold(rec.spans)
    assert (exporter.folding.open_runs, exporter.folding.tracked_spans) == (0, 0)


def test_runs_under_a_still_open_http_span_are_written_as_they_finish(tmp_path):
    rec, exporter, batches = held(tmp_path)
    with rec.app.start_as_current_span("POST /chat", kind=trace.SpanKind.SERVER):
        for i, name in enumerate(("first", "second"), start=1):
            with rec.telemetry.span("agent", name) as agent:
                agent.set_agent(name)
            batches.export()
            assert len(lines(tmp_path / "envelopes.jsonl")) == i
    batches.export()
    assert check(lines(tmp_path / "envelopes.jsonl")) == fold(rec.spans)


def test_a_late_child_starting_before_its_run_was_exported_joins_it(tmp_path):
    """A batch processor delays the ends: a child that starts after its parent ended, but before that
    end was exported, is still counted in the run (a stream that outlives its agent)."""
    rec, exporter, batches = held(tmp_path)
    tel = rec.telemetry
    with tel.span("agent", "streamer") as agent:
        agent.set_agent("streamer")
    with tel.span("tool", "late", parent=trace.set_span_in_context(agent.span)) as late:
        late.set_tool("late", arguments={})
    batches.export()
    [env] = check(lines(tmp_path / "envelopes.jsonl"))
    assert [c["name"] for c in env["tool_calls"]] == ["late"] and "incomplete" not in env
    assert [env] == fold(rec.spans)


def test_a_run_that_never_finishes_is_written_at_shutdown_marked_incomplete(tmp_path):
    rec, exporter, batches = held(tmp_path)
    tel = rec.telemetry
    root = tel.start_span("agent", "forever")
    root.set_agent("forever")
    with root.activate():
        with tel.span("tool", "step") as tool:
            tool.set_tool("step", arguments={"n": 1})
    batches.export()
    assert lines(tmp_path / "envelopes.jsonl") == []
    exporter.shutdown()
    [env] = check(lines(tmp_path / "envelopes.jsonl"))
    assert env["incomplete"].startswith("the processor shut down (1 span(s) still open)")
    assert [c["name"] for c in env["tool_calls"]] == ["step"]
    assert exporter.export([]).name == "SUCCESS"  # after shutdown: accepted, ignored
    root.end()


def test_the_age_limit_and_the_bounds_come_from_the_processor(tmp_path):
    clock = FakeClock()
    rec, exporter, batches = held(tmp_path, max_age_s=60, max_open_runs=2, clock=clock)
    tel = rec.telemetry
    stuck = [tel.start_span("agent", f"a{i}") for i in range(3)]  # the third evicts the first
    assert exporter.folding.open_runs == 2 and exporter.folding.dropped["runs_evicted"] == 1
    clock.now += 61
    assert exporter.force_flush()
    assert exporter.folding.open_runs == 0 and exporter.folding.dropped["runs_expired"] == 2
    for span in stuck:
        span.end()
    batches.export()
    assert exporter.folding.dropped["late_spans"] == 3 and exporter.folding.tracked_spans == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_writes_its_own_runs_only(tmp_path):
    """Gunicorn-style fork while a run is open and partly exported: the child (which shares the file)
    writes its own run and, at shutdown, nothing of its parent's; the parent finishes its run whole."""
    rec, exporter, batches = held(tmp_path)
    tel = rec.telemetry
    with tel.span("agent", "parent") as agent:
        agent.set_agent("parent")
        with tel.span("tool", "before_fork") as tool:
            tool.set_tool("before_fork", arguments={})
        batches.export()
        pid = os.fork()
        if pid == 0:  # the child: never return into pytest
            code = 1
            try:
                with tel.span("agent", "worker", parent=Context()) as worker:  # a request of its own
                    worker.set_agent("worker")
                batches.export()
                exporter.shutdown()  # what the SDK's atexit hook does when a worker exits
                code = 0
            finally:
                os._exit(code)
        assert os.waitpid(pid, 0)[1] == 0
    batches.export()
    got = check(lines(tmp_path / "envelopes.jsonl"))
    assert [(e["agents"][0]["name"], "incomplete" in e) for e in got] == [("worker", False), ("parent", False)]
    assert [c["name"] for c in got[1]["tool_calls"]] == ["before_fork"]


def test_behind_the_sdk_batch_span_processor(tmp_path):
    """The distro's set-up: the real ``BatchSpanProcessor``, one span per batch; envelopes == fold."""
    rec = Recorder()
    exporter = ECPFileExporter(tmp_path / "e.jsonl", tracer_provider=rec.provider)
    rec.provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=1, schedule_delay_millis=10))
    for name in ("one", "two", "three"):
        agent_run(rec.telemetry, name=name)
    rec.provider.shutdown()  # flushes the batch processor, then shuts the exporter down
    got = check(lines(tmp_path / "e.jsonl"))
    assert sorted(e["trace_id"] for e in got) == sorted(e["trace_id"] for e in fold(rec.spans))
    assert sorted(got, key=lambda e: e["trace_id"]) == sorted(fold(rec.spans), key=lambda e: e["trace_id"])


def test_same_envelopes_as_folding_the_otlp_json_file(tmp_path):
    """The README's promise: ``--traces_exporter ecp,otlp_json_file`` and ``otel-agents fold`` agree."""
    rec = Recorder()
    ecp = ECPFileExporter(tmp_path / "e.jsonl", tracer_provider=rec.provider)
    rec.provider.add_span_processor(BatchSpanProcessor(ecp))
    rec.provider.add_span_processor(BatchSpanProcessor(OTLPJsonFileExporter(tmp_path / "t.jsonl")))
    for name in ("one", "two"):
        agent_run(rec.telemetry, name=name)
    rec.provider.shutdown()
    assert check(lines(tmp_path / "e.jsonl")) == fold(read_otlp_json(tmp_path / "t.jsonl"))


def test_unsampled_spans_are_not_waited_for(tmp_path):
    """The SDK exports sampled spans only; a recorded but unsampled span must not hold a run open."""
    from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

    class RecordOnly(Sampler):
        def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None, *args, **kwargs):
            return SamplingResult(Decision.RECORD_ONLY, attributes)  # spans are recorded, with their attributes

        def get_description(self):
            return "RecordOnly"

    provider = TracerProvider(sampler=RecordOnly())
    exporter = ECPFileExporter(tmp_path / "e.jsonl", tracer_provider=provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent_run(Telemetry(provider, framework="manual", settings=Settings(capture_content=True)))
    assert (exporter.folding.open_runs, exporter.folding.tracked_spans) == (0, 0)
    assert lines(tmp_path / "e.jsonl") == []
    provider.shutdown()


def test_defaults_from_the_environment(tmp_path, monkeypatch):
    rec = Recorder()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OTEL_AGENTS_ECP_FILE", raising=False)
    monkeypatch.delenv("OTEL_AGENTS_TRACES_FILE", raising=False)
    assert ECPFileExporter(tracer_provider=rec.provider).path == "otel-agents-envelopes.jsonl"
    assert OTLPJsonFileExporter().path == "otel-agents-traces.jsonl"
    monkeypatch.setenv("OTEL_AGENTS_ECP_FILE", str(tmp_path / "runs" / "e.jsonl"))
    monkeypatch.setenv("OTEL_AGENTS_TRACES_FILE", str(tmp_path / "runs" / "t.jsonl"))
    assert ECPFileExporter(tracer_provider=rec.provider).path == str(tmp_path / "runs" / "e.jsonl")
    assert OTLPJsonFileExporter().path == str(tmp_path / "runs" / "t.jsonl")
    assert {p.name for p in (tmp_path / "runs").iterdir()} == {"e.jsonl", "t.jsonl"}


def test_needs_an_sdk_tracer_provider(tmp_path):
    with pytest.raises(TypeError, match="pass tracer_provider="):
        ECPFileExporter(tmp_path / "e.jsonl", tracer_provider=trace.NoOpTracerProvider())
    assert not (tmp_path / "e.jsonl").exists()


def test_entry_points_name_the_two_exporters():
    """The distro finds exporters by entry-point name only (``--traces_exporter ecp,otlp_json_file``), takes only
    a ``SpanExporter`` subclass, and calls it with no arguments: ours give it the two file exporters."""
    found = {e.name: e.load() for e in entry_points(group="opentelemetry_traces_exporter")
             if e.name in ("ecp", "otlp_json_file")}
    assert found == {"ecp": zero_code.ECPFile, "otlp_json_file": zero_code.OTLPJsonFile}


def test_the_zero_code_exporters_are_the_file_exporters(tmp_path, monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: rec.provider)  # what the distro made global
    monkeypatch.setenv("OTEL_AGENTS_ECP_FILE", str(tmp_path / "e.jsonl"))
    monkeypatch.setenv("OTEL_AGENTS_TRACES_FILE", str(tmp_path / "t.jsonl"))
    assert issubclass(zero_code.ECPFile, SpanExporter) and issubclass(zero_code.OTLPJsonFile, SpanExporter)
    ecp, traces = zero_code.ECPFile(), zero_code.OTLPJsonFile()
    assert (type(ecp), ecp.path) == (ECPFileExporter, str(tmp_path / "e.jsonl"))
    assert (type(traces), traces.path) == (OTLPJsonFileExporter, str(tmp_path / "t.jsonl"))


def test_a_zero_code_exporter_whose_file_cannot_be_opened_is_one_error_not_the_end_of_the_set_up(
        tmp_path, monkeypatch, caplog):
    """``OTEL_AGENTS_ECP_FILE=<a directory> opentelemetry-instrument --traces_exporter ecp,console ...``: the
    exporter's OSError ended the distro's whole set-up (no console exporter, no instrumentation, the traceback
    twice). Now the exporter that cannot open its file logs one ERROR naming the variable and its value and drops
    its batches; the others are built."""
    rec = Recorder()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: rec.provider)
    monkeypatch.setenv("OTEL_AGENTS_ECP_FILE", str(tmp_path))
    monkeypatch.setenv("OTEL_AGENTS_TRACES_FILE", str(tmp_path))
    with caplog.at_level("ERROR", logger="otel_agents"):
        built = [zero_code.ECPFile(), zero_code.OTLPJsonFile()]
    assert [type(e) for e in built] == [zero_code.Unwritable] * 2
    assert [r.getMessage() for r in caplog.records] == [
        f"otel_agents: {name}={str(tmp_path)!r}: cannot append {what} to it: Is a directory; the {entry!r} traces "
        f"exporter writes nothing (the other exporters and the instrumentation run)"
        for name, what, entry in (("OTEL_AGENTS_ECP_FILE", "envelopes", "ecp"),
                                  ("OTEL_AGENTS_TRACES_FILE", "spans", "otlp_json_file"))]
    assert all(e.export([]) == SpanExportResult.FAILURE for e in built)


def test_a_traces_file_that_cannot_be_opened_is_named(tmp_path, monkeypatch) -> None:
    # OTLPJsonFileExporter() with OTEL_AGENTS_TRACES_FILE=<a directory> was a bare "[Errno 21] Is a directory:
    # '...'" (only the file preset named the variable), unlike ECPFileExporter's (below)
    monkeypatch.setenv("OTEL_AGENTS_TRACES_FILE", str(tmp_path))
    with pytest.raises(IsADirectoryError) as err:
        OTLPJsonFileExporter()
    assert str(err.value) == f"[Errno 21] OTEL_AGENTS_TRACES_FILE={str(tmp_path)!r}: cannot append spans to it: " \
                             "Is a directory"
    with pytest.raises(IsADirectoryError, match=r"^\[Errno 21\] path='.*': cannot append spans to it"):
        OTLPJsonFileExporter(tmp_path)


def test_the_exporter_and_otel_agents_fold_write_the_same_bytes(tmp_path):
    """Issue #35: one serialiser. A tool result holding 1e-7 was ``1e-07`` from the exporter and
    ``1e-7`` from ``otel-agents fold``; the same run now gives the same line from both."""
    from otel_agents.cli import main

    rec = Recorder()
    exporter = ECPFileExporter(tmp_path / "envelopes.jsonl", tracer_provider=rec.provider)
    rec.provider.add_span_processor(SimpleSpanProcessor(exporter))
    rec.provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(tmp_path / "traces.jsonl")))
    tel = rec.telemetry
    with tel.span("agent", "scorer") as agent:
        agent.set_agent("scorer")
        with tel.span("tool", "p_value") as tool:
            tool.set_tool("p_value", arguments={"alpha": 1e-7})
            tool.set_tool_result({"p": 1e-7, "n": 12})
        agent.set_output("p < 1e-6")
    exporter.shutdown()
    assert main(["fold", str(tmp_path / "traces.jsonl"), "-o", str(tmp_path / "folded.jsonl")]) == 0
    written = (tmp_path / "envelopes.jsonl").read_bytes()
    assert b'"p":1e-07' in written
    assert written == (tmp_path / "folded.jsonl").read_bytes()


def test_an_envelope_file_that_cannot_be_opened_is_named(tmp_path, monkeypatch) -> None:
    # OTEL_AGENTS_ECP_FILE=<a directory> was a bare "[Errno 21] Is a directory: '...'", not naming the variable
    # (OTEL_AGENTS_TRACES_FILE's is named the same way: exporters/_appender.naming)
    monkeypatch.setenv("OTEL_AGENTS_ECP_FILE", str(tmp_path))
    with pytest.raises(IsADirectoryError) as err:
        ECPFileExporter(tracer_provider=TracerProvider())
    assert str(err.value) == f"[Errno 21] OTEL_AGENTS_ECP_FILE={str(tmp_path)!r}: cannot append envelopes to it: " \
                             "Is a directory"
    with pytest.raises(IsADirectoryError, match=r"path='.*': cannot append envelopes to it"):
        ECPFileExporter(tmp_path, tracer_provider=TracerProvider())
    monkeypatch.delenv("OTEL_AGENTS_ECP_FILE")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "otel-agents-envelopes.jsonl").mkdir()
    with pytest.raises(IsADirectoryError, match=r"^\[Errno 21\] 'otel-agents-envelopes.jsonl': cannot append"):
        ECPFileExporter(tracer_provider=TracerProvider())
