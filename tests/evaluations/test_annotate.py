"""Issue 24: verdicts back into the trace. A real ``ecp run`` over ``otel-agents ecp serve`` (the
customer-support example in plain Python, agent and faulty twin, through ``otel-agents demo``), then
``otel-agents ecp annotate``: every check one ``gen_ai.evaluation.result`` on the span it graded.

The spans each check belongs to are found here independently of the report's ``logs``: the served
steps run one after the other, so the n-th ``agent/step`` root span of the trace file (by start
time) is the n-th step of the report — and its ``input.value`` is that step's input.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from otel_agents.cli import main
from otel_agents.evaluations import EvaluationResult, evaluation_results
from otel_agents.evaluations._langfuse import score
from otel_agents.evaluations._phoenix import annotation
from otel_agents.exporters.file import read_otlp_json
from tests._loopback import QuietHandler, serve
from tests.backends.receiver import Receiver, value

ROOT = Path(__file__).resolve().parents[2]
OTEL_AGENTS = str(Path(sys.executable).parent / "otel-agents")
TWINS = {"agent": "", "faulty_agent": "faulty"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``otel-agents demo --frameworks plain_python``: twin → its output directory (report.json, trace.jsonl)."""
    out = tmp_path_factory.mktemp("annotate") / "out"
    proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "plain_python", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {twin: out / "plain_python" / sub for twin, sub in TWINS.items()}


def report_of(run: Path) -> dict[str, Any]:
    return json.loads((run / "report.json").read_text(encoding="utf-8"))


def steps_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for scenario in report["scenarios"] for step in scenario["steps"]]


def hexid(n: int, width: int) -> str:
    return f"{n:0{width}x}"


def step_roots(run: Path) -> tuple[list[Any], dict[str, Any]]:
    """The ``agent/step`` root spans in start order, and every span by span id."""
    spans = read_otlp_json(run / "trace.jsonl")
    roots = sorted((s for s in spans if s.parent is None and s.name == "agent/step"), key=lambda s: s.start_time)
    return roots, {hexid(s.context.span_id, 16): s for s in spans}


def log_records(path: Path) -> list[dict[str, Any]]:
    """Every log record of an OTLP/JSON lines file, attributes as plain values."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        assert set(message) == {"resourceLogs"}
        for rl in message["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for record in sl["logRecords"]:
                    attrs = {a["key"]: next(iter(a["value"].values())) for a in record.get("attributes", [])}
                    out.append({**record, "attrs": attrs})
    return out


def annotate(*argv: str) -> int:
    return main(["ecp", "annotate", *argv])


@pytest.mark.parametrize("twin", list(TWINS))
def test_file_target_puts_every_check_on_the_span_it_graded(graded: dict[str, Path], tmp_path: Path, twin: str) -> None:
    run = graded[twin]
    report = report_of(run)
    out = tmp_path / "evaluations.jsonl"
    assert annotate(str(run / "report.json"), "-o", str(out)) == 0
    records = log_records(out)
    steps = steps_of(report)
    checks = [(i, check) for i, step in enumerate(steps) for check in step["checks"]]
    assert len(records) == len(checks) == report["total"], "one record per check"

    roots, by_id = step_roots(run)
    assert len(roots) == len(steps)
    manifest = json.loads(json.dumps(__import__("yaml").safe_load(Path(report["manifest"]).read_text())))
    graders = [g for sc in manifest["scenarios"] for st in sc["steps"] for g in st["graders"]]
    for record, (i, check), grader in zip(records, checks, graders):
        root = roots[i]
        assert root.attributes["input.value"] == steps[i]["input"]
        assert record["eventName"] == "gen_ai.evaluation.result"
        assert record["traceId"] == hexid(root.context.trace_id, 32)
        attrs = record["attrs"]
        assert attrs["gen_ai.evaluation.score.label"] == ("pass" if check["passed"] else "fail")
        assert attrs["gen_ai.evaluation.score.value"] == check["score"]
        evidence = attrs.get("otel_agents.ecp.evidence_span_id")
        shown = check["reasoning"] + (f" (evidence: tool span {evidence})" if evidence else "")
        assert attrs["gen_ai.evaluation.explanation"] == shown  # content on (the default)
        if grader["type"] == "tool_usage":
            assert attrs["gen_ai.evaluation.name"] == f"tool_usage:{grader['tool_name']}"
            assert attrs["gen_ai.tool.name"] == grader["tool_name"]
        else:
            assert attrs["gen_ai.evaluation.name"] == f"{grader['type']}:{grader['field']}"
        # every check on the step's root, passed or failed (#36: a mean over root spans means something)
        assert record["spanId"] == hexid(root.context.span_id, 16), "the step's root span"
        if grader["type"] == "tool_usage" and check["passed"]:
            tool = by_id[evidence]  # the evidence: the tool span the check matched, in the step's trace
            assert tool.attributes["gen_ai.tool.name"] == grader["tool_name"]
            assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == grader["arguments"]
            assert tool.context.trace_id == root.context.trace_id
        else:
            assert evidence is None
        assert attrs["gen_ai.agent.name"] == "customer_support"
    if twin == "faulty_agent":
        assert any(r["attrs"]["gen_ai.evaluation.score.label"] == "fail" for r in records)


def test_traces_fallback_for_logs_without_trace_ids(graded: dict[str, Path], tmp_path: Path) -> None:
    """Reports whose logs name no trace (older envelopes), or that have no logs at all: --traces places them."""
    run = graded["faulty_agent"]
    report = report_of(run)
    expected = tmp_path / "expected.jsonl"
    annotate(str(run / "report.json"), "-o", str(expected))
    stripped = copy.deepcopy(report)
    for n, step in enumerate(steps_of(stripped)):
        if n % 2:
            step["logs"] = None  # found by the step's input among the agent/step roots
        else:
            step["logs"] = json.dumps([{k: v for k, v in r.items() if k != "trace_id"} for r in json.loads(step["logs"])])
    (tmp_path / "old.json").write_text(json.dumps(stripped), encoding="utf-8")

    without = evaluation_results(stripped)
    assert all(r.trace_id is None and r.span_id is None for r in without)
    got = tmp_path / "got.jsonl"
    assert annotate(str(tmp_path / "old.json"), "--manifest", report["manifest"], "--traces", str(run / "trace.jsonl"),
                    "-o", str(got)) == 0
    ids = lambda path: [(r["traceId"], r["spanId"], r["attrs"]["gen_ai.evaluation.name"]) for r in log_records(path)]
    assert ids(got) == ids(expected)
    # as its help says (it said "--traces file(s)", which takes one file: a second one was the report argument's):
    # one file a --traces, repeated for several, gzip read too
    import argparse
    import gzip

    from otel_agents.cli import annotate as annotate_command

    parser = argparse.ArgumentParser()
    annotate_command.register(parser.add_subparsers())
    (command,) = parser._subparsers._group_actions[0].choices.values()
    helps = {a.dest: " ".join(a.help.split()) for a in command._actions if a.help}
    assert "an OTLP/JSON trace file of the graded runs (gzip too)" in helps["traces"], helps
    assert "repeat the option for several files" in helps["traces"] and "(s)" not in helps["traces"]
    assert "otlp: the logs URL (http://host:4318/v1/logs)" in helps["out"], helps
    lines = (run / "trace.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress("".join(lines[::2]).encode()))
    (tmp_path / "b.jsonl").write_text("".join(lines[1::2]), encoding="utf-8")
    split = tmp_path / "split.jsonl"
    assert annotate(str(tmp_path / "old.json"), "--manifest", report["manifest"], "--traces",
                    str(tmp_path / "a.jsonl.gz"), "--traces", str(tmp_path / "b.jsonl"), "-o", str(split)) == 0
    assert ids(split) == ids(expected)


def test_traces_without_a_span_are_refused_before_anything_is_written(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``--traces envelopes.jsonl`` (the fold's output, given for the trace file): before, every check was written
    unplaced and the exit status was 0; now exit 2 saying the file holds no span, nothing written."""
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"scenarios": [{"name": "s", "steps": [
        {"input": "q", "checks": [{"type": "text_match", "passed": True}]}]}]}), encoding="utf-8")
    envelopes = tmp_path / "envelopes.jsonl"
    envelopes.write_text(json.dumps({"status": "done", "public_output": "a", "tool_calls": [],
                                     "evaluation_context": "", "logs": "[]", "trace_id": "ab" * 16}) + "\n",
                         encoding="utf-8")
    out = tmp_path / "records.jsonl"
    assert main(["ecp", "annotate", str(report), "--traces", str(envelopes), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--traces {envelopes}: no span in the input" in err, err
    assert not out.exists()


def test_content_off_leaves_no_reasoning_anywhere(graded: dict[str, Path], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run = graded["faulty_agent"]
    report = report_of(run)
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")
    out = tmp_path / "evaluations.jsonl"
    assert annotate(str(run / "report.json"), "-o", str(out)) == 0
    text = out.read_text(encoding="utf-8")
    results = evaluation_results(report)
    sent = text + json.dumps([annotation(r) for r in results]) + json.dumps([score(r) for r in results])
    assert "gen_ai.evaluation.explanation" not in text
    for step in steps_of(report):
        assert step["input"] not in sent and step["output"] not in sent
        for check in step["checks"]:
            assert check["reasoning"] not in sent
    for quoted in ("A100 (wireless headphones)", "order_id", "Calls seen", "Expected"):
        assert quoted not in sent


def test_otlp_target_sends_the_same_records(graded: dict[str, Path], tmp_path: Path) -> None:
    run = graded["faulty_agent"]
    file_out = tmp_path / "evaluations.jsonl"
    annotate(str(run / "report.json"), "-o", str(file_out))
    with Receiver() as rx:
        assert annotate(str(run / "report.json"), "--to", "otlp", "-o", rx.url + "/v1/logs") == 0
        requests = [r for r in rx.requests if r.path == "/v1/logs"]
    assert requests and requests[0].headers["content-type"] == "application/x-protobuf"
    wire = []
    for request in requests:
        message = ExportLogsServiceRequest()
        message.ParseFromString(request.payload())
        for rl in message.resource_logs:
            for sl in rl.scope_logs:
                assert sl.scope.name == "otel_agents.evaluations"
                for rec in sl.log_records:
                    attrs = {kv.key: value(kv.value) for kv in rec.attributes}
                    wire.append((rec.event_name, rec.trace_id.hex(), rec.span_id.hex(),
                                 attrs["gen_ai.evaluation.name"], attrs["gen_ai.evaluation.score.label"]))
    expected = [("gen_ai.evaluation.result", r["traceId"], r["spanId"], r["attrs"]["gen_ai.evaluation.name"],
                 r["attrs"]["gen_ai.evaluation.score.label"]) for r in log_records(file_out)]
    assert wire == expected


def test_langfuse_scores_request_shape(graded: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Langfuse public API ``POST /api/public/scores``: Basic auth, one JSON CreateScoreRequest per check."""
    run = graded["faulty_agent"]
    report = report_of(run)
    file_out = tmp_path / "evaluations.jsonl"
    annotate(str(run / "report.json"), "-o", str(file_out))
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-annotate")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-annotate-SECRET")
    with Receiver(answer=("application/json", b'{"id": "a-score"}')) as rx:  # Langfuse's CreateScoreResponse
        assert annotate(str(run / "report.json"), "--to", "langfuse", "-o", rx.url) == 0
        assert annotate(str(run / "report.json"), "--to", "langfuse", "-o", rx.url) == 0  # sent twice: same ids
        requests = list(rx.requests)
    records = log_records(file_out)
    assert len(requests) == 2 * len(records)
    first, second = requests[:len(records)], requests[len(records):]
    checks = [c for step in steps_of(report) for c in step["checks"]]
    for request, again, record, check in zip(first, second, records, checks):
        assert request.path == "/api/public/scores" and request.method == "POST"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["authorization"] == "Basic " + base64.b64encode(b"pk-lf-annotate:sk-lf-annotate-SECRET").decode()
        body = json.loads(request.body)
        assert set(body) == {"id", "traceId", "observationId", "name", "value", "dataType", "comment", "metadata"}
        assert body["traceId"] == record["traceId"] and body["observationId"] == record["spanId"]
        assert body["name"] == record["attrs"]["gen_ai.evaluation.name"]
        assert body["value"] == check["score"] and body["dataType"] == "NUMERIC"
        assert body["comment"] == record["attrs"]["gen_ai.evaluation.explanation"]
        assert body["comment"].startswith(check["reasoning"])
        assert body["metadata"].get("evidence_span_id") == record["attrs"].get("otel_agents.ecp.evidence_span_id")
        assert body["metadata"]["label"] == ("pass" if check["passed"] else "fail")
        assert json.loads(again.body)["id"] == body["id"], "re-sending updates the score, not a new one"
    assert len({json.loads(r.body)["id"] for r in first}) == len(first)


def test_langfuse_needs_its_keys(graded: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.delenv("LANGFUSE_SECRET_KEY", raising=False)
    assert annotate(str(graded["agent"] / "report.json"), "--to", "langfuse", "-o", "http://127.0.0.1:9") == 2
    assert "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY" in capsys.readouterr().err


@pytest.mark.parametrize(("to", "variable"), [("phoenix", "PHOENIX_API_KEY"), ("langfuse", "LANGFUSE_SECRET_KEY")])
def test_a_key_with_a_line_break_is_named_not_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], to: str,
                                                     variable: str) -> None:
    """A key file's trailing newline: before, ``--to phoenix`` ended with http.client's ``Invalid header value
    b'Bearer <key>\\n'`` (the key on standard error) and ``--to langfuse`` sent a Basic credential Langfuse
    refuses; now exit 2 naming the variable, nothing sent, the key not shown."""
    secret = "sk-never-show-me-0000"
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv(variable, secret + "\n")
    logs = json.dumps([{"trace_id": "ab" * 16, "span_id": "cd" * 8, "parent_id": None, "name": "agent/step"}])
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"scenarios": [{"name": "s", "steps": [
        {"checks": [{"type": "text_match", "passed": True}], "logs": logs}]}]}), encoding="utf-8")
    with Receiver() as rx:
        assert main(["ecp", "annotate", str(report), "--to", to, "-o", rx.url]) == 2
        assert not rx.requests
    err = capsys.readouterr().err
    assert f"{variable} cannot be sent as an HTTP header" in err and secret not in err, err


def test_a_malformed_manifest_step_does_not_shift_the_graders_of_the_steps_after_it() -> None:
    """A manifest step that is no mapping was dropped from the manifest's steps, so step 2's graders were taken
    as step 1's: a step 1 ``tool_usage`` check was named by, and matched against, step 2's tool. Each step keeps
    its place; the malformed one names its checks from the report alone."""
    calls = [{"name": "lookup_order", "arguments": {"order_id": "A100"}, "span_id": "cd" * 8}]
    logs = json.dumps([{"trace_id": "ab" * 16, "span_id": "ef" * 8, "parent_id": None, "name": "agent/step"}])
    check = {"type": "tool_usage", "passed": True, "field": "tool_calls",
             "reasoning": "Found tool call 'lookup_order' with expected arguments"}
    report = {"scenarios": [{"name": "s", "steps": [
        {"checks": [dict(check)], "tool_calls": calls, "logs": logs},
        {"checks": [dict(check, passed=False, reasoning="No matching tool call for name='issue_refund'")], "tool_calls": calls,
         "logs": logs}]}]}
    manifest = {"scenarios": [{"name": "s", "steps": [
        "not a step",
        {"input": "q", "graders": [{"type": "tool_usage", "tool_name": "issue_refund"}]}]}]}
    first, second = evaluation_results(report, manifest=manifest)
    assert first.name == "tool_usage:lookup_order" and first.evidence_span_id == "cd" * 8, first
    assert second.name == "tool_usage:issue_refund" and second.evidence_span_id is None, second


def test_tool_checks_named_without_the_manifest(graded: dict[str, Path]) -> None:
    """The manifest gone: tool_usage checks are still named by their tool (from ECP's reasoning); a passing
    one names the tool span as its evidence only when the step called that tool once."""
    report = report_of(graded["agent"])
    with_manifest = evaluation_results(report)
    report["manifest"] = "/nonexistent/manifest.yaml"
    without = evaluation_results(report)
    assert [r.name for r in without] == [r.name for r in with_manifest]
    # the correct agent calls each tool once per step: every passing tool check still finds its tool span
    assert [(r.trace_id, r.span_id, r.evidence_span_id) for r in without] == \
        [(r.trace_id, r.span_id, r.evidence_span_id) for r in with_manifest]
    roots = {(r.scenario, r.step): r.span_id for r in without if r.grader == "text_match"}
    assert all(r.span_id == roots[(r.scenario, r.step)] for r in without)
    with_evidence = [r for r in without if r.evidence_span_id]
    assert len(with_evidence) == 8 and all(r.passed and r.grader == "tool_usage" for r in with_evidence)


def test_bad_report_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_text('{"passed": 1}', encoding="utf-8")
    assert annotate(str(tmp_path / "r.json")) == 2
    assert "not an ecp run JSON report" in capsys.readouterr().err
    (tmp_path / "r.json").write_text("{", encoding="utf-8")
    assert annotate(str(tmp_path / "r.json")) == 2
    assert "not JSON" in capsys.readouterr().err



@pytest.mark.parametrize("report, where", [
    ({"scenarios": [1]}, "scenarios[0] is not an object"),
    ({"scenarios": [{"steps": 5}]}, "scenarios[0].steps is not a list"),
    ({"scenarios": [{"steps": [None]}]}, "scenarios[0].steps[0] is not an object"),
    ({"scenarios": [{"steps": [{"checks": 5}]}]}, "scenarios[0].steps[0].checks is not a list"),
    ({"scenarios": [{"steps": [{"checks": [{}], "tool_calls": {}}]}]}, "scenarios[0].steps[0].tool_calls is not a list"),
    ({"scenarios": [{"steps": [{"checks": [{"type": "x"}, 5]}]}]}, "scenarios[0].steps[0].checks[1] is not an object"),
])
def test_malformed_report_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          report: dict[str, Any], where: str) -> None:
    """A report whose scenarios, steps or checks have the wrong shape: exit 2, the field named, no traceback."""
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    assert annotate(str(tmp_path / "r.json")) == 2
    assert where in capsys.readouterr().err


_STEP_SPAN = {"trace_id": "ab" * 16, "span_id": "cd" * 8, "parent_id": None, "name": "agent/step"}


@pytest.mark.parametrize("bad", [{"trace_id": 5}, {"trace_id": "zz"}, {"trace_id": "ab" * 20}, {"trace_id": "AB" * 16},
                                 {"span_id": "cd" * 9}, {"span_id": "not hex here!!!!"}])
def test_log_records_whose_ids_are_not_ids_are_not_spans(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         bad: dict[str, Any]) -> None:
    """A step's logs (anything the agent wrote) holding a record whose trace or span id is not lowercase hex of
    its length: before, a traceback (``int()`` of an int), ``invalid literal for int() with base 16`` (exit 2) or
    a record the log exporter refused (exit 1). Now that record is not a span: it is skipped and named (its field,
    the scenario and the step; exit 1, as for a skipped --traces line), the check is written unplaced, the step's
    real span record beside it still places it, and a tool call's evidence id is checked the same."""
    call = {"name": "lookup", "arguments": {}, "span_id": bad.get("span_id", 5)}
    check = {"type": "tool_usage", "passed": True, "field": "tool_calls",
             "reasoning": "Found tool call 'lookup' with expected arguments"}
    report = tmp_path / "r.json"
    (key, value), = bad.items()
    named = f"skipped {report}: scenarios[0].steps[0].logs[0].{key}: {value!r} is not {16 if key == 'span_id' else 32} " \
            "lowercase hex digits (scenario 's', step 1)"
    for records, placed in (([dict(_STEP_SPAN, **bad)], 0), ([dict(_STEP_SPAN, **bad, name="x"), _STEP_SPAN], 1)):
        report.write_text(json.dumps({"scenarios": [{"name": "s", "steps": [
            {"checks": [check], "tool_calls": [call], "logs": json.dumps(records)}]}]}), encoding="utf-8")
        out = tmp_path / f"out{placed}.jsonl"
        assert annotate(str(report), "-o", str(out)) == 1
        err = capsys.readouterr().err
        assert f"1 checks (1 pass, 0 fail), {placed} on their spans; 1 sent to" in err, err
        root = "; the step's root record: its 1 checks are put on no span"
        assert named + ("" if placed else root) + "\n" in err, err
        (record,) = [r for line in out.read_text(encoding="utf-8").splitlines()
                     for rl in json.loads(line)["resourceLogs"] for sl in rl["scopeLogs"] for r in sl["logRecords"]]
        assert record.get("spanId", "") == ("cd" * 8 if placed else ""), record
        assert "otel_agents.ecp.evidence_span_id" not in json.dumps(record)


def test_a_damaged_root_record_leaves_its_checks_on_no_span_and_is_named(
        graded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The root record (``agent/step``) of a step's logs in a real ``ecp serve`` report with a malformed trace_id:
    before, it was dropped without a word, its child (``invoke_agent``) taken for the root, and every check of the
    step put on that span (exit 0). Now the record is named (field, scenario, step; exit 1) and the step's checks
    are put on no span; a child whose ``parent_id`` is damaged is not taken for the root either, and the other
    steps are placed as before."""
    report = report_of(graded["agent"])
    step = steps_of(report)[0]
    records = json.loads(step["logs"])
    (root_at, root), = [(i, r) for i, r in enumerate(records) if r["parent_id"] is None]
    child_at = next(i for i, r in enumerate(records) if r["parent_id"] == root["span_id"])
    path, out = tmp_path / "r.json", tmp_path / "e.jsonl"
    baseline = tmp_path / "e0.jsonl"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert annotate(str(path), "-o", str(baseline)) == 0
    capsys.readouterr()
    records[root_at] = dict(root, trace_id="zz" * 16)
    step["logs"] = json.dumps(records)
    path.write_text(json.dumps(report), encoding="utf-8")
    assert annotate(str(path), "-o", str(out)) == 1
    err = capsys.readouterr().err
    scenario = report["scenarios"][0]["name"]
    assert (f"skipped {path}: scenarios[0].steps[0].logs[{root_at}].trace_id: '{'zz' * 16}' is not 32 lowercase hex "
            f"digits (scenario {scenario!r}, step 1); the step's root record: its {len(step['checks'])} checks are "
            "put on no span") in err, err

    def placed(file: Path) -> dict[tuple[str, int], set]:
        spans: dict[tuple[str, int], set] = {}
        for line in file.read_text(encoding="utf-8").splitlines():
            for rl in json.loads(line)["resourceLogs"]:
                for record in rl["scopeLogs"][0]["logRecords"]:
                    attrs = {a["key"]: a["value"] for a in record["attributes"]}
                    key = (attrs["otel_agents.ecp.scenario"]["stringValue"], int(attrs["otel_agents.ecp.step"]["intValue"]))
                    spans.setdefault(key, set()).add(record.get("spanId", ""))
        return spans

    before, after = placed(baseline), placed(out)
    assert before[(scenario, 1)] == {root["span_id"]} and after[(scenario, 1)] == {""}, after
    assert {k: v for k, v in after.items() if k != (scenario, 1)} == \
        {k: v for k, v in before.items() if k != (scenario, 1)}
    records[root_at] = root  # sound again; the child's parent_id damaged and the child put first
    records[child_at] = dict(records[child_at], parent_id="not a span id")
    records.insert(0, records.pop(child_at))
    step["logs"] = json.dumps(records)
    path.write_text(json.dumps(report), encoding="utf-8")
    assert annotate(str(path), "-o", str(tmp_path / "e2.jsonl")) == 1
    assert "logs[0].parent_id: 'not a span id' is not 16 lowercase hex digits" in capsys.readouterr().err
    assert placed(tmp_path / "e2.jsonl")[(scenario, 1)] == {root["span_id"]}  # before: the child, first without a known parent


@pytest.mark.parametrize("manifest", ["scenarios: 5", "scenarios: [{steps: 5}]", "scenarios: [{steps: [{graders: 5}]}]",
                                      "scenarios: [{steps: [{graders: [{type: tool_usage, arguments: [1]}]}]}]"])
def test_malformed_manifest_names_checks_from_the_report(tmp_path: Path, manifest: str) -> None:
    report = {"scenarios": [{"steps": [{"checks": [{"type": "tool_usage", "passed": True}],
                                        "tool_calls": [{"name": "t", "arguments": {"a": 1}}]}]}]}
    (tmp_path / "m.yaml").write_text(manifest, encoding="utf-8")
    (result,) = evaluation_results(report, manifest=str(tmp_path / "m.yaml"))
    assert result.label == "pass" and result.name.startswith("tool_usage:")
    assert evaluation_results({**report, "manifest": 0})[0].label == "pass"  # not opened as a file descriptor

def test_records_are_never_appended_to_the_report_or_the_manifest(graded: dict[str, Path], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``ecp annotate r.json -o r.json`` appended OTLP log lines to the report it read: no longer JSON, so neither
    ``ecp report`` nor another ``annotate`` could read it. The report and the manifest are refused as ``-o`` (exit 2,
    both named); the trace file still takes the records (``fold`` skips log lines)."""
    report = tmp_path / "report.json"
    report.write_text((graded["agent"] / "report.json").read_text(encoding="utf-8"), encoding="utf-8")
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text((ROOT / "examples" / "customer_support" / "manifest.yaml").read_text(encoding="utf-8"),
                        encoding="utf-8")
    before = report.read_bytes(), manifest.read_bytes()
    assert annotate(str(report), "-o", str(report)) == 2
    assert f"-o {report} is the report {report}" in capsys.readouterr().err
    assert annotate(str(report), "--manifest", str(manifest), "-o", str(manifest)) == 2
    assert f"-o {manifest} is the manifest {manifest}" in capsys.readouterr().err
    assert (report.read_bytes(), manifest.read_bytes()) == before
    traces = tmp_path / "trace.jsonl"
    traces.write_bytes((graded["agent"] / "trace.jsonl").read_bytes())
    lines = len(traces.read_text(encoding="utf-8").splitlines())
    assert annotate(str(report), "-o", str(traces)) == 0
    records = traces.read_text(encoding="utf-8").splitlines()[lines:]
    assert records and all(set(json.loads(line)) == {"resourceLogs"} for line in records)
    assert read_otlp_json(str(traces))


def test_annotator_kind_and_unplaced_results() -> None:
    """llm_judge is an LLM annotator in Phoenix, the other graders CODE; a check without a trace is not sent."""
    judge = EvaluationResult(name="llm_judge:public_output", score=0.0, label="fail", explanation="too vague",
                             trace_id="ab" * 16, span_id="cd" * 8, grader="llm_judge", scenario="s", step=1, check=1)
    assert annotation(judge)["annotator_kind"] == "LLM"
    assert annotation(judge)["result"] == {"label": "fail", "score": 0.0, "explanation": "too vague"}
    code = EvaluationResult(name="execution:agent", score=0.0, label="fail", explanation=None, trace_id=None,
                            span_id=None, grader="execution", scenario="s", step=2, check=1)
    assert annotation(code)["annotator_kind"] == "CODE"
    from otel_agents.evaluations import annotate_phoenix

    delivery = annotate_phoenix([code], "http://127.0.0.1:9")  # nothing to send: no request made
    assert (delivery.sent, delivery.skipped, delivery.failed) == (0, 1, [])


def test_refused_log_records_are_not_counted_as_sent(tmp_path: Path) -> None:
    """``--to otlp`` to a backend that refuses (400) and ``--to file`` to a full disk: the records are
    failures, not "sent" (before, both said all 2 were sent and ``ecp annotate`` exited 0)."""
    from otel_agents.evaluations import emit_evaluations

    results = [EvaluationResult(name="text_match:public_output", score=1.0, label="pass", explanation=None,
                                trace_id="ab" * 16, span_id="cd" * 8, grader="text_match", scenario="s", step=1,
                                check=check) for check in (1, 2)]
    with Receiver(refuse=[400]) as rx:
        delivery = emit_evaluations(results, "otlp", rx.url + "/v1/logs")
    assert delivery.sent == 0 and len(delivery.failed) == 1 and "2 of 2" in delivery.failed[0]
    with Receiver() as rx:
        delivery = emit_evaluations(results, "otlp", rx.url + "/v1/logs")
    assert (delivery.sent, delivery.failed) == (2, [])
    if Path("/dev/full").exists():
        delivery = emit_evaluations(results, "file", "/dev/full")
        assert delivery.sent == 0 and "/dev/full" in delivery.failed[0]


def test_log_records_a_partial_success_rejected_or_a_redirect_are_not_counted_as_sent(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``--to otlp``: the OpenTelemetry log exporter counts any 2xx-3xx answer as success and never reads its body,
    so before, records an OTLP ``partial_success`` rejected, and all records of a batch answered with a redirect
    (which SDK 1.45 does not follow), were counted sent. Now they are failures, the backend's message logged."""
    from otel_agents.evaluations import emit_evaluations

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2")  # SDK 1.44 follows the redirect to a closed port: retried
    results = [EvaluationResult(name="text_match:public_output", score=1.0, label="pass", explanation=None,
                                trace_id="ab" * 16, span_id="cd" * 8, grader="text_match", scenario="s", step=1,
                                check=check) for check in (1, 2)]
    with caplog.at_level("WARNING", logger="otel_agents"), Receiver(partial=[(1, "record 2: no body")]) as rx:
        delivery = emit_evaluations(results, "otlp", rx.url + "/v1/logs")
    assert delivery.sent == 1 and len(delivery.failed) == 1 and "1 of 2" in delivery.failed[0]
    assert "1 of 2 log record(s) rejected (partial success): 'record 2: no body'" in caplog.text
    with Receiver(refuse=[307] * 8) as rx:  # every answer a redirect
        delivery = emit_evaluations(results, "otlp", rx.url + "/v1/logs")
    assert delivery.sent == 0 and "2 of 2" in delivery.failed[0]


def test_log_records_answered_by_a_page_are_not_counted_as_sent(caplog: pytest.LogCaptureFixture) -> None:
    """``--to otlp`` against an endpoint that answers 200 with an HTML page (a proxy's or a login page): before, the
    records counted sent. Now they are failures, the answer quoted (content type, start) as ``--to phoenix`` quotes
    one that is not Phoenix's (one function); an empty answer (the empty message) counts them sent."""
    from otel_agents.evaluations import emit_evaluations

    results = [EvaluationResult(name="text_match:public_output", score=1.0, label="pass", explanation=None,
                                trace_id="ab" * 16, span_id="cd" * 8, grader="text_match", scenario="s", step=1,
                                check=check) for check in (1, 2)]
    with caplog.at_level("WARNING", logger="otel_agents"), \
            Receiver(answer=("text/html", b"<!doctype html><title>Sign in</title>")) as rx:
        delivery = emit_evaluations(results, "otlp", rx.url + "/v1/logs")
    assert delivery.sent == 0 and "2 of 2" in delivery.failed[0]
    assert "HTTP 200 with 'text/html', not an OTLP ExportLogsServiceResponse (a proxy or a login page in the way?): " \
           "'<!doctype html><title>Sign in</title>': none of 2 log record(s)" in caplog.text, caplog.text
    with Receiver(answer=("application/x-protobuf", b"")) as rx:
        assert emit_evaluations(results, "otlp", rx.url + "/v1/logs").sent == 2


def test_failed_step_goes_on_the_trace_its_error_names(graded: dict[str, Path]) -> None:
    """A step the agent failed keeps no logs, only ecp serve's error (whose data names the trace): its
    execution check goes on that trace (its root span when the trace file is given)."""
    run = graded["agent"]
    report = report_of(run)
    roots, _ = step_roots(run)
    step = steps_of(report)[0]
    trace_hex = hexid(roots[0].context.trace_id, 32)
    step.update(logs=None, tool_calls=[], status="failed", output=None,
                error=f"RPC call failed (agent/step) at scenario='order status', step=1: agent/step returned error: "
                      f"{{'code': -32000, 'message': 'agent raised ValueError', 'data': {{'type': 'ValueError', "
                      f"'trace_id': '{trace_hex}'}}}}",
                checks=[{"type": "execution", "field": "agent", "passed": False, "score": 0.0, "reasoning": "x"}])
    [alone] = [r for r in evaluation_results(report) if r.grader == "execution"]
    assert (alone.name, alone.label, alone.trace_id, alone.span_id) == ("execution:agent", "fail", trace_hex, None)
    assert score(alone)["traceId"] == trace_hex and "observationId" not in score(alone)
    [placed] = [r for r in evaluation_results(report, read_otlp_json(run / "trace.jsonl")) if r.grader == "execution"]
    assert (placed.trace_id, placed.span_id) == (trace_hex, hexid(roots[0].context.span_id, 16))


def test_a_check_averages_over_root_spans_to_its_pass_rate(graded: dict[str, Path]) -> None:
    """#36: Phoenix's root-span stats showed ``tool_usage:… μ 0.00`` for an agent that passed, because passing
    tool checks went to tool spans and only failures to the root. Every check is on the root now: per check
    name, the mean score over the step roots is the share of steps that passed it."""
    for twin, run in graded.items():
        results = evaluation_results(report_of(run))
        roots = {hexid(r.context.span_id, 16) for r in step_roots(run)[0]}
        assert {r.span_id for r in results} == roots
        by_name: dict[str, list[EvaluationResult]] = {}
        for r in results:
            by_name.setdefault(r.name, []).append(r)
        for name, rs in by_name.items():
            mean = sum(r.score for r in rs) / len(rs)
            assert mean == sum(r.passed for r in rs) / len(rs), (twin, name)
            if twin == "agent":
                assert mean == 1.0, name


@pytest.mark.parametrize("manifest, problem", [
    ("scenarios:\n  - name: x\n    steps: [\n", "m.yaml:4: not YAML: "),
    ("scenarios: 5\n", 'not an ECP manifest (no "scenarios" list)'), (None, "cannot read manifest ")])
def test_a_manifest_given_with_manifest_must_be_read(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     manifest: str | None, problem: str) -> None:
    """``--manifest M`` that is not YAML (its line named), not a manifest or missing: exit 2 naming it. Before, it
    was passed over silently (exit 0, tool checks named from the report alone, not as the manifest the user
    gave); the manifest a report merely names may still be gone (the report alone names every check)."""
    report = {"scenarios": [{"steps": [{"checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    if manifest is not None:
        (tmp_path / "m.yaml").write_text(manifest, encoding="utf-8")
    out = str(tmp_path / "e.jsonl")
    assert annotate(str(tmp_path / "r.json"), "--manifest", str(tmp_path / "m.yaml"), "-o", out) == 2
    err = capsys.readouterr().err
    assert problem in err and str(tmp_path / "m.yaml") in err and "Traceback" not in err, err
    assert not Path(out).exists()
    assert annotate(str(tmp_path / "r.json"), "-o", out) == 0  # the report's own (absent) manifest: not needed


def test_skipped_trace_lines_are_all_counted_and_unplaced_checks_named(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """--traces with more than 5 malformed lines: the first 5 are named and the rest counted (before, the rest were
    not mentioned), and checks that found no span in the traces given are counted too (before, only without
    --traces)."""
    report = {"scenarios": [{"steps": [{"input": "q", "checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text("not json\n" * 7, encoding="utf-8")
    assert annotate(str(tmp_path / "r.json"), "--traces", str(tmp_path / "t.jsonl"),
                    "-o", str(tmp_path / "e.jsonl")) == 1  # lines skipped: 1, as fold and export say
    err = capsys.readouterr().err
    assert err.count(": skipped ") == 6 and "skipped 2 more malformed line(s)" in err, err
    assert "--traces: 7 malformed line(s) skipped" in err, err
    assert "1 checks have no span in the report's logs nor in the traces given" in err, err


def test_a_field_dropped_from_a_kept_span_is_a_warning_as_fold_says_it(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed traceState in --traces (its span kept, the field dropped): ``fold`` said it, ``annotate`` said
    nothing. Now each is a warning naming the line and field, escaped (a U+202E or an escape sequence in it does
    not reach the terminal raw), the first five and the rest counted; the exit status stays 0, as fold's."""
    report = {"scenarios": [{"steps": [{"input": "q", "checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    spans = [{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": f"{i:016x}", "name": f"s{i}",
              "traceState": "x \u202e\x1b[31m"} for i in range(1, 8)]
    (tmp_path / "t.jsonl").write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n",
                                      encoding="utf-8")
    assert annotate(str(tmp_path / "r.json"), "--traces", str(tmp_path / "t.jsonl"),
                    "-o", str(tmp_path / "e.jsonl")) == 0
    err = capsys.readouterr().err
    assert err.count(f": warning: {tmp_path / 't.jsonl'}:1: resourceSpans[0].scopeSpans[0].spans[") == 5, err
    assert "spans[0].traceState: member 'x \\u202e\\x1b[31m' is not key=value" in err, err
    assert "\u202e" not in err and "\x1b" not in err, err
    assert "warning: 2 more field(s) dropped from spans that were kept" in err, err


def test_lone_surrogates_in_a_report_reach_the_records_escaped(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A lone surrogate in a scenario's name or a logged agent name: each record keeps the attribute, escaped
    (before: the OTLP encoder failed on it, logged a traceback per record and dropped the attribute)."""
    logs = [{"trace_id": "a" * 32, "span_id": "b" * 16, "parent_id": None, "kind": "agent", "name": "run",
             "attributes": {"gen_ai.agent.name": "support \udfff"}}]
    report = {"scenarios": [{"name": "s \ud800", "steps": [{"input": "q", "logs": json.dumps(logs),
                                                             "checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    assert annotate(str(tmp_path / "r.json"), "-o", str(tmp_path / "e.jsonl")) == 0
    assert "Traceback" not in capsys.readouterr().err
    (record,) = log_records(tmp_path / "e.jsonl")
    assert record["attrs"]["otel_agents.ecp.scenario"] == "s \\ud800"
    assert record["attrs"]["gen_ai.agent.name"] == "support \\udfff"


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "huge", "directory"])
def test_a_manifest_named_by_the_report_is_read_only_as_a_bounded_regular_file(tmp_path: Path, kind: str) -> None:
    """The manifest path inside a report is input, not the user's command line: a FIFO no one writes to, a
    device, a file over 16 MiB or a directory there is refused with a WARNING naming the field, and the checks
    are named from the report alone (exit 0). Before, annotate opened it as given: it hung on the FIFO and read
    devices and huge files whole."""
    import os

    from otel_agents._named_files import MAX_NAMED_FILE_BYTES

    manifest = tmp_path / "m.yaml"
    if kind == "fifo":
        os.mkfifo(manifest)
    elif kind == "dev_zero":
        manifest = Path("/dev/zero")
    elif kind == "huge":
        with open(manifest, "wb") as f:  # sparse: no disk used
            f.truncate(MAX_NAMED_FILE_BYTES + 1)
    else:
        manifest.mkdir()
    report = {"manifest": str(manifest), "scenarios": [{"steps": [{"checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "e.jsonl"
    done = subprocess.run([sys.executable, "-m", "otel_agents.cli", "ecp", "annotate", str(tmp_path / "r.json"),
                           "-o", str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert f'report field "manifest": {manifest} is ' in done.stderr and "not read" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1  # the check, named from the report


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "otel_agents.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


@pytest.mark.parametrize("depth", [800, 100_000])
def test_a_deeply_nested_report_is_a_clear_error_across_a_process(tmp_path: Path, depth: int) -> None:
    """A report nested thousands deep (past the decoder's recursion limit), or a few hundred (past what the
    walk after it takes): exit 2 naming the file, for ``ecp report`` and ``ecp annotate``; before, a
    RecursionError traceback."""
    path = tmp_path / "deep.json"
    path.write_text('{"scenarios": [' + "[" * depth + "]" * depth + "]}", encoding="utf-8")
    for command in (["ecp", "report", str(path)], ["ecp", "annotate", str(path), "-o", str(tmp_path / "e.jsonl")]):
        done = _cli(*command)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and f"{path}: not JSON: nested too deeply" in done.stderr, done.stderr


def test_a_report_or_manifest_that_never_ends_is_a_clear_error_not_a_memory_blow_up(tmp_path: Path) -> None:
    """``ecp report /dev/zero`` (or ``--manifest /dev/zero``) read the whole endless file into memory (a
    MemoryError traceback, or the machine's memory); a file the user names is read up to a limit far above any
    report or manifest, then refused, naming it."""
    from otel_agents._named_files import MAX_DOCUMENT_BYTES

    done = _cli("ecp", "report", "/dev/zero")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"/dev/zero is over {MAX_DOCUMENT_BYTES} bytes; not read" in done.stderr, done.stderr
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"scenarios": []}), encoding="utf-8")
    done = _cli("ecp", "annotate", str(report), "--manifest", "/dev/zero", "-o", str(tmp_path / "e.jsonl"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"/dev/zero is over {MAX_DOCUMENT_BYTES} bytes; not read" in done.stderr, done.stderr


def test_a_deeply_nested_manifest_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """YAML nested past the parser's recursion: exit 2 naming the manifest (before, a RecursionError traceback)."""
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"scenarios": []}), encoding="utf-8")
    manifest = tmp_path / "m.yaml"
    manifest.write_text("scenarios: " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    assert annotate(str(report), "--manifest", str(manifest), "-o", str(tmp_path / "e.jsonl")) == 2
    err = capsys.readouterr().err
    assert f"{manifest}: not YAML: nested too deeply" in err and "Traceback" not in err, err


def test_step_logs_nested_too_deeply_are_no_records_not_a_traceback(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A step's ``logs`` whose record nests a few hundred levels (decoded, but past the walk that makes it UTF-8
    safe): no records for that step, its check reported unplaced, the other step placed; before, a RecursionError."""
    from otel_agents.evaluations._results import log_records

    deep = json.dumps([{"span_id": "ab" * 8, "attributes": {"x": json.loads("[" * 700 + "]" * 700)}}])
    assert log_records(deep) == []
    good = json.dumps([{"trace_id": "cd" * 16, "span_id": "ef" * 8, "kind": "agent", "name": "a"}])
    check = {"type": "text_match", "passed": True}
    report = {"scenarios": [{"steps": [{"checks": [check], "logs": deep}, {"checks": [check], "logs": good}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "e.jsonl"
    assert annotate(str(tmp_path / "r.json"), "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(out.read_text(encoding="utf-8").splitlines()) == 1, err


@pytest.mark.parametrize("status", [200, 500])
@pytest.mark.parametrize("target", ["phoenix", "langfuse"])
def test_an_endless_answer_body_does_not_hold_the_delivery(status: int, target: str) -> None:
    """A Phoenix or Langfuse endpoint that answers with a body that never ends (1 MiB of a declared 10 GB, then
    nothing): refused (500) is failed with the start of its body, at once; accepted (200) is failed too, also at
    once: Phoenix's answer lists the annotations' ids, Langfuse's gives the score's id, and this one is no JSON;
    before, the whole body was read, until the timeout here, without limit for a body that keeps coming (and
    Langfuse's client, reading no answer, counted it sent)."""
    import socket
    import threading

    from otel_agents.evaluations import annotate_phoenix, score_langfuse

    server = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def answer() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(f"HTTP/1.1 {status} X\r\nContent-Length: 10000000000\r\n\r\n".encode() + b"e" * (1 << 20))
        done.wait(60)
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    result = EvaluationResult(name="execution:agent", score=1.0, label="pass", explanation=None, trace_id="ab" * 16,
                              span_id="cd" * 8, grader="execution", scenario="s", step=1, check=1)
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    if target == "phoenix":
        delivery = annotate_phoenix([result], url, wait=0, timeout=30)
    else:
        delivery = score_langfuse([result], url, public_key="pk", secret_key="sk", timeout=30)
    done.set()
    server.close()
    if status == 200:
        (failure,) = delivery.failed
        said = "Phoenix's answer" if target == "phoenix" else "Langfuse's answer with the score's id"
        assert delivery.sent == 0 and f"HTTP 200 with no content type, not {said}" in failure, failure
    else:
        (failure,) = delivery.failed
        assert delivery.sent == 0 and failure.endswith("HTTP 500 " + "e" * 300)


def test_without_the_extras_annotate_names_the_extra_not_a_traceback(tmp_path: Path) -> None:
    """A bare ``pip install otel-agents`` (no PyYAML, no OTLP exporter): ``ecp annotate`` on a report that names its
    manifest ended in a ``ModuleNotFoundError: yaml`` traceback, ``--manifest`` too, and ``--to otlp`` said only
    "No module named 'opentelemetry.exporter.otlp.proto.http'". Now the report's manifest is left unread with a
    warning naming the extra (the checks named from the report, exit 0), ``--manifest`` is exit 2 naming it, and
    ``--to otlp`` names the package and the extra."""
    manifest = tmp_path / "m.yaml"
    manifest.write_text("scenarios:\n  - steps:\n      - graders: [{type: text_match}]\n", encoding="utf-8")
    report = {"manifest": str(manifest), "scenarios": [{"steps": [{"checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "e.jsonl"
    bare = ("import sys; sys.modules['yaml'] = None; "
            "sys.modules['opentelemetry.exporter.otlp.proto.http._log_exporter'] = None; "
            "from otel_agents.cli import main; sys.exit(main(sys.argv[1:]))")

    def annotate(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", bare, "ecp", "annotate", str(tmp_path / "r.json"), *args],
                              capture_output=True, text=True, timeout=120, check=False)

    needs = "reading an ECP manifest needs PyYAML: pip install 'otel-agents[ecp]'"
    done = annotate("-o", str(out))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"manifest not read ({manifest}: {needs})" in done.stderr, done.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    done = annotate("--manifest", str(manifest), "-o", str(out))
    assert (done.returncode, done.stderr) == (2, f"otel-agents ecp annotate: {manifest}: {needs}\n")
    done = annotate("--to", "otlp", "-o", "http://127.0.0.1:9/v1/logs")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "otel-agents ecp annotate: --to otlp (OTLP/HTTP logs) needs the OTLP exporter for http/protobuf "
        "(opentelemetry-exporter-otlp-proto-http): pip install 'otel-agents[otlp]'"), done.stderr


@pytest.mark.parametrize(("args", "env", "says"), [
    (["--to", "phoenix", "-o", "127.0.0.1:6006"], {},
     "-o (--to phoenix) must be an http:// or https:// URL with a host, got '127.0.0.1:6006' (e.g. http://127.0.0.1:6006)"),
    (["--to", "otlp", "-o", "localhost:4318/v1/logs"], {},
     "-o (--to otlp) must be an http:// or https:// URL with a host, got 'localhost:4318/v1/logs' "
     "(e.g. http://localhost:4318/v1/logs)"),
    (["--to", "phoenix"], {"PHOENIX_COLLECTOR_ENDPOINT": "junk"},
     "PHOENIX_COLLECTOR_ENDPOINT must be an http:// or https:// URL with a host, got 'junk' (e.g. http://junk)"),
    (["--to", "langfuse"], {"LANGFUSE_HOST": "cloud.langfuse.com", "LANGFUSE_PUBLIC_KEY": "pk", "LANGFUSE_SECRET_KEY": "sk"},
     "LANGFUSE_HOST must be an http:// or https:// URL with a host, got 'cloud.langfuse.com' "
     "(e.g. http://cloud.langfuse.com)"),
    (["--traces", "NOWHERE"], {}, "cannot read NOWHERE: No such file or directory"),
    (["-o", "TMP"], {}, "cannot write TMP: Is a directory"),
])
def test_a_bad_destination_or_path_is_one_line_naming_it(tmp_path: Path, args: list[str], env: dict[str, str],
                                                          says: str) -> None:
    """``--to phoenix -o 127.0.0.1:6006`` (no scheme) was tried for every trace and failed each as ``URLError:
    unknown url type`` (exit 1); ``PHOENIX_COLLECTOR_ENDPOINT=junk`` said ``unknown url type:
    'junk/v1/span_annotations?sync=true'``; a missing ``--traces`` file or an ``-o`` directory said
    ``[Errno 2] …``/``[Errno 21] …``. Now: exit 2 before anything is sent, naming the option or variable."""
    import os

    report = {"scenarios": [{"steps": [{"checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    names = {"NOWHERE": str(tmp_path / "nowhere.jsonl"), "TMP": str(tmp_path)}
    argv = [names.get(a, a) for a in args]
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "LANGFUSE_", "OTEL_EXPORTER"))}
    done = subprocess.run([sys.executable, "-m", "otel_agents.cli", "ecp", "annotate", str(tmp_path / "r.json"), *argv],
                          capture_output=True, text=True, timeout=120, check=False, env={**environ, **env})
    for name, value in names.items():
        says = says.replace(name, value)
    assert (done.returncode, done.stderr) == (2, f"otel-agents ecp annotate: {says}\n")


@pytest.mark.parametrize("value", ["0", "abc"])
def test_the_otlp_log_exporters_variables_follow_the_specs_rule(value: str, monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """``--to otlp`` handed ``OTEL_EXPORTER_OTLP_LOGS_TIMEOUT`` and the protocol and endpoint variables to the OTLP/HTTP
    log exporter unchecked: a timeout of 0 failed every export (the records lost), ``abc`` was the exporter's own
    warning, ``OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=grpc`` sent HTTP to a gRPC port. Now they are read as the ``otlp``
    preset reads the traces ones (the OpenTelemetry specification's rule): a timeout that is no positive number and
    an unknown protocol or compression (the SDK's exporter warned without naming the variable, and sent uncompressed
    though the generic variable said gzip) are warned about, naming the variable, and ignored, the records sent; gRPC
    or an endpoint
    that is no URL is a ValueError naming the variable; ``doctor`` lists each as a problem."""
    import contextlib
    import io
    import logging
    import os

    from otel_agents._spans import settings
    from otel_agents.cli import doctor
    from otel_agents.evaluations import emit_evaluations

    for name in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(settings, "_warned_variables", set())
    results = [EvaluationResult(name="text_match:public_output", score=1.0, label="pass", explanation=None,
                                trace_id="ab" * 16, span_id="cd" * 8, grader="text_match", scenario="s", step=1,
                                check=1)]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", value)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/json")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "brotli")  # the generic one then applies, in any case
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "GZIP")
    timeout = f"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT={value!r} is not valid; it must be a positive number of seconds " \
              "(every export would fail with it); ignored, as if unset"
    protocol = "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL='http/json' is not valid; allowed: grpc, http/protobuf (the " \
               "OpenTelemetry Python SDK has no http/json exporter); ignored, as if unset"
    compression = "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION='brotli' is not valid; allowed over http/protobuf: gzip, " \
                  "deflate, none; ignored, as if unset"
    with Receiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.url)  # the exporter appends /v1/logs
        with caplog.at_level(logging.WARNING):
            delivery = emit_evaluations(results, "otlp")
        assert (delivery.sent, delivery.failed) == (1, []), delivery  # 0 sent with the timeout of 0 (before)
        assert [(r.path, r.headers.get("content-encoding")) for r in rx.requests] == [("/v1/logs", "gzip")]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"otel_agents: {protocol}", f"otel_agents: {timeout}", f"otel_agents: {compression}"]
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        assert doctor.run(None) == 1
    for problem in (protocol, timeout, compression):
        assert f"\n  {problem}\n" in report.getvalue(), report.getvalue()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc")
    with pytest.raises(ValueError, match=r"^OTEL_EXPORTER_OTLP_LOGS_PROTOCOL='grpc': --to otlp sends OTLP over HTTP"):
        emit_evaluations(results, "otlp")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "127.0.0.1:4318/v1/logs")
    with pytest.raises(ValueError, match=r"^OTEL_EXPORTER_OTLP_LOGS_ENDPOINT must be an http:// or https:// URL"):
        emit_evaluations(results, "otlp")
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        assert doctor.run(None) == 1
    assert "\n  ecp annotate --to otlp: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT must be an http" in report.getvalue()


def _two_results() -> list[EvaluationResult]:
    """Two passed checks on two spans of trace ``abab…``: one Phoenix request of two annotations."""
    return [EvaluationResult(name=f"execution:{n}", score=1.0, label="pass", explanation=None, trace_id="ab" * 16,
                             span_id=span, grader="execution", scenario="s", step=1, check=n)
            for n, span in ((1, "cd" * 8), (2, "ef" * 8))]


@pytest.mark.parametrize(("content_type", "body", "sent"), [
    ("application/json", b'{"data": [{"id": "U3BhbkFubm90YXRpb246MQ=="}, {"id": "U3BhbkFubm90YXRpb246Mg=="}]}', 2),
    ("text/html; charset=utf-8", b"<html><body>Sign in to continue</body></html>", 0),
    ("application/json", b'{"message": "ok"}', 0),
    ("application/json", b'{"data": [{"id": "U3BhbkFubm90YXRpb246MQ=="}]}', 0),
])
def test_phoenix_annotations_count_only_what_phoenix_answered(content_type: str, body: bytes, sent: int) -> None:
    """A 200 counts as annotated only when it is Phoenix's answer, one id per annotation sent; a proxy's or login
    page (reached through a redirect urllib follows), or JSON of another shape, is a failure quoting its start.
    Before, any 200 counted every annotation of the request as sent."""
    from otel_agents.evaluations import annotate_phoenix

    with _backend(None, 200, body, content_type) as (hostport, got):
        delivery = annotate_phoenix(_two_results(), f"http://{hostport}", wait=0, timeout=10)
    assert len(got) == 1 and [a["span_id"] for a in got[0][1]["data"]] == ["cd" * 8, "ef" * 8]
    assert delivery.sent == sent
    if not sent:
        (failure,) = delivery.failed
        assert failure.startswith(f"trace {'ab' * 16}: 2 annotations not sent: HTTP 200 with '{content_type}', "
                                  "not Phoenix's answer listing the 2 annotations"), failure
        assert body.decode()[:20] in failure


@pytest.mark.parametrize(("content_type", "body", "sent"), [
    ("application/json", None, 2),  # {"id": the score's id}
    ("application/json; charset=utf-8", b'{"id": "4f9a"}', 2),
    ("text/html; charset=utf-8", b"<html><body>Sign in to continue</body></html>", 0),
    ("application/json", b'{"message": "ok"}', 0),
    ("application/json", b'{"id": 7}', 0),
    ("application/json", b'[{"id": "x"}]', 0),
])
def test_langfuse_scores_count_only_what_langfuse_answered(content_type: str, body: bytes | None, sent: int) -> None:
    """A 200 counts a score as sent only when it is Langfuse's ``CreateScoreResponse`` (JSON, the score's ``id`` a
    string); a proxy's or a login page, or JSON of another shape, is a failure quoting its start, as for Phoenix
    (:func:`~otel_agents.exporters._accepted.other_answer`). Before, the answer was never read: any 200 was sent."""
    from otel_agents.evaluations import score_langfuse

    with _backend(None, 200, body, content_type) as (hostport, got):
        delivery = score_langfuse(_two_results(), f"http://{hostport}", public_key="pk", secret_key="sk", timeout=10)
    assert [request["observationId"] for _, request in got] == ["cd" * 8, "ef" * 8]
    assert delivery.sent == sent
    if not sent:
        assert delivery.failed == [f"{result.key}: HTTP 200 with '{content_type}', not Langfuse's answer with the "
                                   f"score's id (a proxy or a login page in the way?): {body.decode()!r}"
                                   for result in _two_results()], delivery.failed


@contextlib.contextmanager
def _trickling(status: int, content_type: str) -> Iterator[str]:
    """A loopback server (its URL) whose every answer, ``status`` with ``content_type`` and a declared 100 kB, comes
    a byte every 0.1 s and never ends (60 s at most, then the connection closes)."""
    server = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def trickle() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            with conn, contextlib.suppress(OSError):  # OSError: the reader cut the connection; the next one
                conn.recv(65536)
                conn.sendall(f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: 100000\r\n"
                             "\r\n".encode())
                for _ in range(600):
                    if done.wait(0.1):
                        break
                    conn.sendall(b"{")

    threading.Thread(target=trickle, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        done.set()
        server.close()


@pytest.mark.parametrize("content_type", ["application/json", "text/html"])
def test_a_phoenix_answer_trickling_in_is_a_failure_not_a_wait(content_type: str) -> None:
    """A 200 whose body comes a byte at a time and never ends (a declared 100 kB): the batch is reported not sent,
    in one line saying the answer was not read, not counted (only Phoenix's answer says the annotations were
    stored). Before, the body was read bounded in bytes only: each byte came within urllib's timeout, so the
    command waited for as long as the server went on (here, until the test's server gave up: counted 0 with a
    message quoting the bytes it got)."""
    from otel_agents.evaluations import annotate_phoenix

    with _trickling(200, content_type) as url:
        delivery = annotate_phoenix(_two_results(), url, wait=0, timeout=1)
    assert delivery.sent == 0
    assert delivery.failed == [f"trace {'ab' * 16}: 2 annotations not sent: HTTP 200, its answer not read (not "
                               "finished within 1 s): Phoenix may have stored the 2 annotations but did not say so "
                               "(annotating again updates them, it does not add more)"]


@pytest.mark.parametrize("target", ["phoenix", "langfuse"])
def test_an_error_answer_trickling_in_is_named_not_waited_for(target: str) -> None:
    """A 500 whose body trickles in: the failure says its body was not read, at the request's timeout. Before, its
    start (1200 bytes) was read bounded in bytes only, for as long as the server went on."""
    from otel_agents.evaluations import annotate_phoenix, score_langfuse

    with _trickling(500, "text/plain") as url:
        if target == "phoenix":
            delivery = annotate_phoenix(_two_results(), url, wait=0, timeout=1)
        else:
            delivery = score_langfuse(_two_results(), url, public_key="pk", secret_key="sk", timeout=1)
    assert delivery.sent == 0
    why = "HTTP 500 (its body not read: not finished within 1 s)"
    keys = [f"trace {'ab' * 16}: 2 annotations not sent"] if target == "phoenix" else \
        [result.key for result in _two_results()]
    assert delivery.failed == [f"{key}: {why}" for key in keys]


def _span_line(trace: str, span: str, **change: Any) -> str:
    """One OTLP/JSON line of one root ``agent/step`` span whose ``input.value`` is ``q``; ``change`` replaces fields
    of the span (a malformed one)."""
    span_json = {"traceId": trace, "spanId": span, "name": "agent/step", "kind": 1, "startTimeUnixNano": "1000",
                 "endTimeUnixNano": "2000", "attributes": [{"key": "input.value", "value": {"stringValue": "q"}}],
                 **change}
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"},
                                                                          "spans": [span_json]}]}]})


def test_malformed_trace_lines_are_named_the_lines_around_them_placed_and_the_status_is_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--traces with malformed lines around the one that holds the step's span: each is named (file, line, field),
    the check is still put on the span of the good line, and the exit status is 1, as ``fold`` and ``export`` say
    skipped lines (before: 0, so a script could not tell that input was skipped); ``--help`` says the codes."""
    report = {"scenarios": [{"name": "s", "steps": [{"input": "q",
                                                     "checks": [{"type": "text_match", "passed": True}]}]}]}
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    traces = tmp_path / "t.jsonl"
    traces.write_text("\n".join([_span_line("zz" * 16, "cd" * 8), "{not json", _span_line("ab" * 16, "cd" * 8),
                                 _span_line("ab" * 16, "ef" * 8, startTimeUnixNano="soon")]) + "\n", encoding="utf-8")
    out = tmp_path / "e.jsonl"
    assert annotate(str(tmp_path / "r.json"), "--traces", str(traces), "-o", str(out)) == 1
    err = capsys.readouterr().err
    assert f"skipped {traces}:1: resourceSpans[0].scopeSpans[0].spans[0].traceId: 'zzzz" in err, err
    assert f"skipped {traces}:2: invalid JSON" in err, err
    assert f"skipped {traces}:4: resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: " in err, err
    assert "--traces: 3 malformed line(s) skipped" in err and "1 sent to" in err, err
    (record,) = log_records(out)
    assert (record["traceId"], record["spanId"]) == ("ab" * 16, "cd" * 8), "placed on the good line's span"
    (tmp_path / "t2.jsonl").write_text(_span_line("ab" * 16, "cd" * 8) + "\n", encoding="utf-8")
    assert annotate(str(tmp_path / "r.json"), "--traces", str(tmp_path / "t2.jsonl"), "-o", str(out)) == 0
    with pytest.raises(SystemExit):
        annotate("--help")
    help_text = capsys.readouterr().out
    assert "exit codes: 0 all read and delivered, 1 malformed --traces lines skipped" in help_text, help_text


def _report_summary_and_manifests(tmp_path: Path) -> dict[str, Path]:
    """An ``ecp run`` report, the summary ``ecp report --json`` makes of it, and its manifest in YAML and JSON."""
    logs = json.dumps([_STEP_SPAN])
    report = {"manifest": "m.yaml", "passed": 1, "total": 1, "failed": 0, "exit_reason": "ok",
              "scenarios": [{"name": "s", "status": "ok", "steps": [
                  {"input": "q", "status": "ok", "checks": [{"type": "text_match", "passed": True}], "logs": logs}]}],
              "audit": {"agent": {"name": "a"}}}
    manifest = {"manifest_version": "v1", "name": "m", "target": "agent",
                "scenarios": [{"name": "s", "steps": [{"input": "q", "graders": [
                    {"type": "text_match", "field": "public_output", "condition": "contains", "value": "x"}]}]}]}
    paths = {name: tmp_path / name for name in ("report.json", "summary.json", "m.yaml", "m.json")}
    paths["report.json"].write_text(json.dumps(report), encoding="utf-8")
    assert main(["ecp", "report", str(paths["report.json"]), "--json", str(paths["summary.json"])]) == 0
    paths["m.yaml"].write_text(__import__("yaml").safe_dump(manifest), encoding="utf-8")
    paths["m.json"].write_text(json.dumps(manifest), encoding="utf-8")
    return paths


@pytest.mark.parametrize(("argv", "problem"), [
    (["report.json", "--manifest", "report.json"],
     "report.json: an ecp run JSON report (what `ecp run --json-out` writes: \"scenarios\" whose steps have "
     "\"checks\"), not an ECP manifest"),
    (["report.json", "--manifest", "summary.json"], "summary.json: the summary `otel-agents ecp report --json` writes "
                                                    "(its \"agents\"), not an ECP manifest"),
    (["summary.json"], "summary.json: the summary `otel-agents ecp report --json` writes (its \"agents\"), not an ecp "
                       "run JSON report"),
    (["m.yaml"], "m.yaml: an ECP manifest (what `ecp run --manifest` reads: \"scenarios\" whose steps have "
                 "\"graders\"), not an ecp run JSON report"),
    (["m.json"], "m.json: an ECP manifest"),
])
def test_a_report_given_for_the_manifest_or_the_reverse_is_named_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], problem: str) -> None:
    """``--manifest REPORT.json`` (an ``ecp run`` report: JSON is YAML, and it has a ``scenarios`` list) was read as
    a manifest without a word (exit 0, tool checks named from the wrong file); the summary of ``ecp report --json``
    was "not an ECP manifest" only; a manifest given as the report was "not JSON" (YAML) or, in JSON, a report of
    no checks (exit 0). Each is now named for what it is and what was expected, exit 2, nothing written;
    ``ecp report`` says the same of a manifest or a summary given to it."""
    paths = _report_summary_and_manifests(tmp_path)
    capsys.readouterr()
    out = tmp_path / "e.jsonl"
    assert annotate(*[str(tmp_path / a) if a in paths else a for a in argv], "-o", str(out)) == 2
    err = capsys.readouterr().err
    assert problem in err and "Traceback" not in err, err
    assert not out.exists()
    if "--manifest" not in argv:
        assert main(["ecp", "report", str(tmp_path / argv[0])]) == 2
        assert problem in capsys.readouterr().err
    assert annotate(str(paths["report.json"]), "--manifest", str(paths["m.yaml"]), "-o", str(out)) == 0


@contextlib.contextmanager
def _backend(authorization: str | None, status: int = 200, body: bytes | None = None,
             content_type: str = "application/json", location: str | None = None) -> Iterator[tuple[str, list]]:
    """A loopback stand-in for Phoenix's annotations and Langfuse's scores (its ``host:port``, and ``(headers,
    body)`` of each request): a request without ``authorization`` (when given) is answered 401; else ``status``
    with ``body`` (``content_type``; a ``location`` header when given), by default the backend's own answer:
    Phoenix's (one id per annotation) to a request of annotations, Langfuse's (the score's id) to a score."""
    got: list = []

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            sent = json.loads(self.rfile.read(int(self.headers["content-length"])))
            got.append(({k.lower(): v for k, v in self.headers.items()}, sent))
            code, answer = status, body
            if authorization is not None and self.headers.get("authorization") != authorization:
                code, answer = 401, b'{"detail": "unauthorized"}'
            elif answer is None and "data" not in sent:  # a Langfuse score
                answer = json.dumps({"id": sent["id"]}).encode()
            elif answer is None:
                answer = json.dumps({"data": [{"id": f"id{i}"} for i, _ in enumerate(sent["data"])]}).encode()
            self.send_response(code)
            self.send_header("content-type", content_type)
            if location is not None:
                self.send_header("location", location)
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    with serve(Handler) as url:
        yield url.removeprefix("http://"), got


def _placed_report(tmp_path: Path, scenario: str = "s") -> Path:
    """A report of one passed check whose step's ``logs`` name its span (nothing to look up)."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"scenarios": [{"name": scenario, "steps": [
        {"input": "q", "checks": [{"type": "text_match", "passed": True, "score": 1.0}],
         "logs": json.dumps([_STEP_SPAN])}]}]}), encoding="utf-8")
    return path


@pytest.mark.parametrize("to", ["phoenix", "langfuse"])
def test_a_urls_user_info_is_sent_as_basic_auth_and_never_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str], to: str) -> None:
    """``-o http://user:password@host``: the user info is HTTP Basic auth (percent-escapes decoded), as the
    requests-based OTLP exporters take it, and the request goes to the host alone; messages show the URL as
    ``[REDACTED]@``. Before, urllib took ``user:password@127.0.0.1`` for the host name: nothing was sent (Langfuse:
    refused for want of keys). A wrong password is the backend's 401, said without the password."""
    for variable in ("PHOENIX_API_KEY", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
        monkeypatch.delenv(variable, raising=False)
    report = _placed_report(tmp_path)
    expected = "Basic " + base64.b64encode("uzr9:p@ss w0rd".encode()).decode()
    with _backend(expected) as (hostport, got):
        assert annotate(str(report), "--to", to, "-o", f"http://uzr9:p%40ss%20w0rd@{hostport}", "--wait", "0") == 0
        assert annotate(str(report), "--to", to, "-o", f"http://uzr9:wrong-pass@{hostport}", "--wait", "0") == 1
    (headers, sent), (refused, _) = got
    assert headers["authorization"] == expected and headers["host"] == hostport
    assert refused["authorization"] != expected
    assert (sent["data"][0]["span_id"] if to == "phoenix" else sent["observationId"]) == "cd" * 8
    err = capsys.readouterr().err
    assert f"1 sent to {to} http://[REDACTED]@{hostport}" in err and "HTTP 401" in err, err
    assert not any(secret in err for secret in ("p%40ss", "p@ss", "w0rd", "wrong-pass", "uzr9")), err


@pytest.mark.parametrize("to", ["phoenix", "langfuse"])
@pytest.mark.parametrize("status", [301, 302, 303, 307])
def test_a_redirect_is_not_followed_with_the_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], to: str,
                                                         status: int) -> None:
    """A backend answering a redirect to another host: not followed, so the credentials (here the URL's user info,
    as Basic auth) reach only the host they were given for. urllib followed a POST's 301/302/303 as a GET with
    every header, ``Authorization`` included, to whatever ``Location`` named. Exit 1, the redirect named."""
    for variable in ("PHOENIX_API_KEY", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
        monkeypatch.delenv(variable, raising=False)
    with _backend(None) as (elsewhere, stolen):
        with _backend(None, status=status, body=b"", location=f"http://{elsewhere}/steal") as (hostport, got):
            assert annotate(str(_placed_report(tmp_path)), "--to", to, "-o", f"http://ann:pw-never@{hostport}",
                            "--wait", "0") == 1
    assert len(got) == 1 and not stolen
    err = capsys.readouterr().err
    assert f"answered {status} (a redirect to 'http://{elsewhere}/steal'), not followed" in err, err
    assert "pw-never" not in err, err


def test_the_demos_phoenix_line_escapes_the_backends_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``otel-agents demo --phoenix``: the line a refused annotation gets quotes Phoenix's answer; a hostile one (a
    right-to-left override, an escape sequence) is shown as its escapes, as ``ecp annotate`` shows it."""
    from otel_agents.cli.demo import Run, annotate as demo_annotate

    monkeypatch.delenv("PHOENIX_API_KEY", raising=False)
    report = json.loads(_placed_report(tmp_path).read_text(encoding="utf-8"))
    run = Run("langchain", "agent", tmp_path, report=report)
    with _backend(None, status=400, body=json.dumps({"detail": HOSTILE}, ensure_ascii=False).encode()) as (hostport, _):
        demo_annotate(run, f"http://{hostport}")
    out = capsys.readouterr().out
    assert "langchain agent: 0 checks annotated in Phoenix (1 traces not annotated:" in out, out
    assert "\\u202egnp.exe" in out and not any(c in out for c in BIDI), out


def test_phoenix_user_info_and_a_key_together_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """User info (Basic) and ``PHOENIX_API_KEY`` (Bearer) both: one ``Authorization`` header holds one, so neither
    is dropped silently: exit 2 naming both, nothing sent, neither secret shown."""
    monkeypatch.setenv("PHOENIX_API_KEY", "px-key-never-shown")
    with _backend(None) as (hostport, got):
        assert annotate(str(_placed_report(tmp_path)), "--to", "phoenix", "-o", f"http://ann:pw-never@{hostport}") == 2
    assert not got
    err = capsys.readouterr().err
    assert "carries user info (Basic auth) and PHOENIX_API_KEY a key (Bearer auth)" in err, err
    assert "never" not in err, err


HOSTILE = "refund\u202egnp.exe\u2066x\u2069\u200e\u200f\u202a\u202b\u202c\u202d\u2028\u2029\u2067\u2068\x1b[2J"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u2028\u2029\x1b"


@pytest.mark.parametrize("to", ["phoenix", "langfuse"])
def test_a_backends_answer_or_a_scenario_name_cannot_reorder_or_drive_the_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], to: str) -> None:
    """A refusal quoting a hostile body (Phoenix, Langfuse) and naming the check by its scenario (Langfuse): a
    right-to-left override (U+202E) and the other bidirectional controls, separators and escape sequences reached
    the terminal raw, reordering the line after them; each is now shown as its escape (``\\u202e``)."""
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-1")
    monkeypatch.delenv("PHOENIX_API_KEY", raising=False)
    with _backend(None, status=400, body=json.dumps({"detail": HOSTILE}, ensure_ascii=False).encode()) as (hostport, _):
        assert annotate(str(_placed_report(tmp_path, scenario=HOSTILE)), "--to", to, "-o", f"http://{hostport}") == 1
    err = capsys.readouterr().err
    assert "HTTP 400" in err and "refund\\u202egnp.exe\\u2066x\\u2069" in err, err
    assert not any(c in err for c in BIDI), ascii(err)
