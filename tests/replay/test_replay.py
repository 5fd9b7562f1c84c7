"""Issue 39, item 1: ``otel-agents ecp serve --replay SOURCE`` grades stored runs with a new manifest.

The real ``ecp run`` (ecp-runtime) records the example's customer-support agent (the framework-free one, its
faulty twin: some checks fail) under ``ecp serve --trace-file``; a new manifest adds checks; the verdict of
every check of every step graded from the stored trace file equals the verdict a live run of the same agent
gives, and the replay process never imports the agent, its fake model or any model client (an import
blocker on its path refuses them; what it imported is listed at exit)."""

from __future__ import annotations

import copy
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from otel_agents.cli.demo import ForkServer, ecp_environment
from otel_agents.exporters.ecp import fold
from otel_agents.serve.jsonrpc import RPCError
from otel_agents.serve.replay import REPLAYED, Replayer, ReplayState, StoredRun, input_key, load_runs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "customer_support"
AGENT = ROOT / "examples" / "plain_python" / "agent.py"
BIN = Path(sys.executable).parent
ECP = str(BIN / "ecp")
OTEL_AGENTS = str(BIN / "otel-agents")
BASE = yaml.safe_load((EXAMPLES / "manifest.yaml").read_text(encoding="utf-8"))
# New checks the recording never ran: the refund policy was not consulted (fails in the refund steps), and
# the evidence names the order lookup with its argument.
NEW_CHECKS = [{"type": "text_match", "field": "evaluation_context", "condition": "does_not_contain",
               "value": "tool check_refund_policy"},
              {"type": "text_match", "field": "evaluation_context", "condition": "regex",
               "pattern": "tool lookup_order args=\\{\"order_id\":\"[A-D][1-4]00\"\\}"}]

_BLOCKER = '''
import atexit, json, os, sys
DENY = ("common", "agent", "_tracing", "openai", "anthropic", "httpx2", "langchain", "langchain_core")
class _Deny:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in DENY:
            raise ImportError(f"replay must not import {name}")
        return None
sys.meta_path.insert(0, _Deny())
atexit.register(lambda: open(os.environ["REPLAY_MODULES"], "w").write(json.dumps(sorted(sys.modules))))
'''


def _manifest(path: Path, target: str, *, new_checks: bool) -> Path:
    manifest = copy.deepcopy(BASE)
    manifest["target"] = target
    if new_checks:
        for scenario in manifest["scenarios"]:
            for step in scenario["steps"]:
                step["graders"] += copy.deepcopy(NEW_CHECKS)
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return path


_GRADERS: list[ForkServer] = []  # the module's fork servers of `ecp run` and `ecp serve` (below), while they run


def _env() -> dict[str, str]:
    """The environment of the module's fork servers and of their clients: the demo's, without pytest's
    PYTEST_CURRENT_TEST (it names the test and its phase: a client whose environment differs from its server's
    gets a fork that execs its command, imports and all, as every ``ecp run`` here did)."""
    return {k: v for k, v in ecp_environment().items() if k != "PYTEST_CURRENT_TEST"}


@pytest.fixture(scope="module", autouse=True)
def _graders() -> Iterator[None]:
    """Each ``ecp run`` of the module a fork of one process that imported ecp-runtime (as ``otel-agents demo``'s:
    ~0.6 s of CPU a run less), and each ``otel-agents ecp serve`` (agent or replay, :func:`_ecp_serve`) a fork of
    one that imported our CLI, ECP server and fold (as the demo's regrade: ~0.4 s a process less), each a
    process of its own all the same. One replay server is started afresh
    (test_k_recorded_runs_are_graded_in_order_by_one_http_replay_server), and one whose environment differs
    (test_replayed_trace_file_gets_the_live_verdicts_without_the_agent's import blocker) is exec'd by its fork."""
    sockets = Path(tempfile.mkdtemp(prefix="otel-agents-replay-"))  # mode 0700: only we can reach the server
    servers = [ForkServer.of_ecp_run(sockets, sockets, _env()),
               ForkServer(["--serve", str(sockets / "serve.sock")], sockets / "serve.forkserver.log", _env())]
    _GRADERS.extend(servers)
    try:
        yield
    finally:
        _GRADERS.clear()
        for server in servers:
            server.stop()
        shutil.rmtree(sockets, ignore_errors=True)


def _ecp_run(manifest: Path, report: Path) -> dict:
    command = [ECP, "run", "--manifest", str(manifest), "--json-out", str(report), "--timeout", "60"]
    if _GRADERS:
        _GRADERS[0].wait_ready(60)
        command = _GRADERS[0].client(command)
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT, env=_env())
    assert report.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(report.read_text(encoding="utf-8"))


def _ecp_serve(*args: str) -> list[str]:
    """The command ``otel-agents ecp serve ARGS``, run in a fork of the module's fork server of it."""
    command = [OTEL_AGENTS, "ecp", "serve", *args]
    if _GRADERS:
        _GRADERS[1].wait_ready(60)
        command = _GRADERS[1].client(command)
    return command


def _verdicts(report: dict) -> list[tuple[str, int, list[bool]]]:
    return [(scenario["name"], i, [c["passed"] for c in step["checks"]])
            for scenario in report["scenarios"] for i, step in enumerate(scenario["steps"])]


def _serve(*args: str) -> str:
    return "exec " + shlex.join(_ecp_serve(*args))


def test_replayed_trace_file_gets_the_live_verdicts_without_the_agent(tmp_path: Path) -> None:
    traces = tmp_path / "trace.jsonl"
    record = _manifest(tmp_path / "record.yaml", _serve(f"{AGENT}:faulty_agent", "--trace-file", str(traces),
                                                         "--log-file", str(tmp_path / "record.log")), new_checks=False)
    recorded = _ecp_run(record, tmp_path / "recorded.json")
    live = _ecp_run(_manifest(tmp_path / "live.yaml", _serve(f"{AGENT}:faulty_agent", "--log-file",
                                                             str(tmp_path / "live.log")), new_checks=True),
                    tmp_path / "live.json")

    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_BLOCKER, encoding="utf-8")
    modules = tmp_path / "replay-modules.json"
    replay_target = "exec " + shlex.join(["env", f"PYTHONPATH={blocker}", f"REPLAY_MODULES={modules}", OTEL_AGENTS,
                                          "ecp", "serve", "--replay", str(traces),
                                          "--log-file", str(tmp_path / "replay.log")])
    replayed = _ecp_run(_manifest(tmp_path / "replay.yaml", replay_target, new_checks=True), tmp_path / "replay.json")

    n_steps = sum(len(s["steps"]) for s in BASE["scenarios"])
    assert len(_verdicts(recorded)) == n_steps
    assert _verdicts(replayed) == _verdicts(live), (_verdicts(replayed), _verdicts(live))
    new = [v[-len(NEW_CHECKS):] for _, _, v in _verdicts(replayed)]
    assert [True, False] in new or [False, True] in new or [False, False] in new  # the new checks can fail
    assert [True, True] in new  # ... and pass
    assert any(not all(v) for _, _, v in _verdicts(replayed))  # the faulty twin's faults are still caught
    # no model call: the replay process never had the agent, its fake brain or a model client
    imported = json.loads(modules.read_text(encoding="utf-8"))
    assert not [m for m in imported if m.split(".")[0] in ("common", "agent", "openai", "anthropic", "langchain")]
    assert "otel_agents.serve.replay" in imported
    # each reply is the stored envelope, marked replayed in its logs (a live one is not)
    for scenario in replayed["scenarios"]:
        for step in scenario["steps"]:
            assert json.loads(step["logs"])[-1]["name"] == REPLAYED
    assert all(json.loads(step["logs"])[-1]["name"] != REPLAYED for s in live["scenarios"] for step in s["steps"])
    # the stored runs carry what ecp serve recorded for matching
    runs = load_runs(str(traces))
    assert sorted((r.index, r.key is not None) for r in runs) == sorted(
        (i + 1, True) for s in BASE["scenarios"] for i in range(len(s["steps"])))


def test_missing_step_is_an_error_naming_scenario_step_and_input(tmp_path: Path) -> None:
    """A manifest step no stored run answers: ecp run reports the JSON-RPC error (our message names the
    step and the input; ecp run's names the scenario); the steps that were stored still pass."""
    traces = tmp_path / "trace.jsonl"
    base = copy.deepcopy(BASE)
    base["scenarios"] = base["scenarios"][:1]
    recorded = tmp_path / "record.yaml"
    base["target"] = _serve(f"{AGENT}:agent", "--trace-file", str(traces), "--log-file", str(tmp_path / "r.log"))
    recorded.write_text(yaml.safe_dump(base), encoding="utf-8")
    _ecp_run(recorded, tmp_path / "recorded.json")
    new = copy.deepcopy(base)
    new["target"] = _serve("--replay", str(traces), "--log-file", str(tmp_path / "replay.log"))
    new["scenarios"][0]["steps"].append({"input": "Where is order Z999?", "graders": [
        {"type": "text_match", "field": "public_output", "condition": "contains", "value": "Z999"}]})
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(new), encoding="utf-8")
    report = _ecp_run(tmp_path / "new.yaml", tmp_path / "new.json")
    text = json.dumps(report)
    assert "no stored run for step 3 of this scenario" in text and "Where is order Z999?" in text, text[:3000]
    assert "order status" in text
    steps = report["scenarios"][0]["steps"]
    assert all(c["passed"] for s in steps[:2] for c in s["checks"])


def _envelope(rec, text: str, output: str) -> dict:
    tel = rec.telemetry
    with tel.span("agent", "support") as agent:
        agent.set_agent("support")
        agent.set_input(text)
        agent.set_output(output)
    return fold(rec.spans)[-1]


def test_several_stored_runs_for_one_step_are_answered_in_order(tmp_path: Path) -> None:
    """k recorded runs of one input (an envelope file; foreign traces have no scenario attributes, so the
    input matches, after normalisation): runs 1, 2 in recorded order, each marked replayed; the third asks
    get an error saying both were replayed. A cursor file carries the order across processes."""
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    first = _envelope(rec, "Where is  my order A100?\n", "first")
    second = _envelope(rec, "Where is my order A100?", "second")
    source = tmp_path / "envelopes.jsonl"
    source.write_text(json.dumps(first) + "\n\n" + json.dumps(second) + "\n", encoding="utf-8")
    runs = load_runs(str(source))
    assert [r.envelope["public_output"] for r in runs] == ["first", "second"]
    assert all(r.key is None for r in runs)  # envelopes keep no input text: only ecp serve's hash matches them
    texts = ["Where is  my order A100?\n", "Where is my order A100?"]
    traces = [StoredRun(r.envelope, input_key(t), None, None, r.start, r.id) for r, t in zip(runs, texts)]
    cursor = tmp_path / "cursor.json"
    answers = [Replayer(traces, "s", str(cursor)).answer(ReplayState(), " Where is my order\tA100? ") for _ in range(2)]
    assert [a["public_output"] for a in answers] == ["first", "second"]
    assert all(json.loads(a["logs"])[-1]["name"] == REPLAYED for a in answers)
    with pytest.raises(RPCError) as err:
        Replayer(traces, "s", str(cursor)).answer(ReplayState(), "Where is my order A100?")
    assert "all 2 stored run(s) with this input were replayed already" in err.value.message
    with pytest.raises(RPCError):
        Replayer(traces, "s").answer(ReplayState(), "where is my order a100?")  # no case folding


def test_malformed_lines_are_skipped_and_the_runs_around_them_kept(tmp_path: Path) -> None:
    """A trace file whose writer was killed mid-line (or with a stray line in it) is replayed as
    ``otel-agents fold`` reads it: each bad line named by its line number in the file, the others kept.
    Before, the first bad line refused the whole file, and an envelope holding ``NaN`` was loaded and
    answered its step with an internal error (the response was not strict JSON)."""
    from otel_agents.exporters.file import MalformedLine, to_otlp_json
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    lines = []
    for output in ("first", "second"):
        with rec.telemetry.span("agent", "support") as agent:
            agent.set_agent("support")
            agent.set_output(output)
        lines.append(json.dumps(to_otlp_json(rec.spans[-1:])))
    source = tmp_path / "trace.jsonl"
    source.write_bytes(("not json\n" + lines[0] + "\n{\"resourceSpans\": 5}\n\xff\n"
                        + lines[1] + "\n" + '{"status": "done", "public_output": NaN}\n' + lines[1][:40]).encode("latin-1"))
    errors: list[MalformedLine] = []
    runs = load_runs(str(source), errors=errors)
    assert [r.envelope["public_output"] for r in runs] == ["first", "second"]
    assert [e.line for e in errors] == [1, 3, 4, 6, 7] and all(e.source == str(source) for e in errors)
    proc = subprocess.run(_ecp_serve("--replay", str(source)), capture_output=True, text=True,
                          input='{"jsonrpc":"2.0","id":1,"method":"agent/initialize","params":{}}\n', timeout=120,
                          env=_env())
    assert proc.returncode == 0 and '"result"' in proc.stdout, proc.stderr
    assert f"skipped {source}:3: " in proc.stderr and f"skipped {source}:7: " in proc.stderr


def test_nan_in_a_stored_run_is_a_bad_line_named_by_field_and_the_runs_around_it_are_served(tmp_path: Path) -> None:
    """An envelope line that is strict JSON but whose ``logs`` text holds ``NaN`` was loaded, and the step it matched
    was answered ``-32603 internal error: ValueError`` (its answer could not be written as strict JSON). Now it is a
    bad line like any other, named by file, line and field; a span line with a ``NaN`` names the field too (was
    "line 1 column 1140"), in the same words as ``otel-agents fold``; the runs around them are served in order."""
    from otel_agents.exporters.file import to_otlp_json
    from tests.exporters.conftest import Recorder

    key = input_key("hello")

    def envelope(output: str, second: int, **attributes: object) -> str:
        root = {"trace_id": f"t{second}", "span_id": "s", "name": "agent/step", "start": f"2026-01-01T00:00:0{second}Z",
                "status": "ok", "attributes": {"otel_agents.ecp.step.input_sha256": key, **attributes}}
        return json.dumps({"status": "done", "public_output": output, "tool_calls": [], "evaluation_context": "",
                           "logs": json.dumps([root]), "trace_id": f"t{second}"})

    rec = Recorder()
    with rec.telemetry.span("agent", "support") as agent:
        agent.set_agent("support")
        agent.set_output("traced")
    span_line = json.dumps(to_otlp_json(rec.spans))
    nan_span = span_line.replace('{"key": "gen_ai.agent.name"', '{"key": "x", "value": {"doubleValue": NaN}}, '
                                 '{"key": "gen_ai.agent.name"', 1)
    assert nan_span != span_line
    source = tmp_path / "runs.jsonl"
    source.write_text("\n".join([envelope("first", 1), envelope("bad", 2, x=float("nan")), nan_span,
                                  envelope("second", 3), '{"status": "done", "public_output": "x", "logs": 5}']) + "\n",
                      encoding="utf-8")
    steps = "".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "agent/step", "params": {"input": "hello"}}) + "\n"
                    for i in (1, 2, 3))
    proc = subprocess.run(_ecp_serve("--replay", str(source)), capture_output=True, text=True,
                          input=steps, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a.get("result", {}).get("public_output") for a in answers] == ["first", "second", None]
    assert answers[2]["error"]["code"] == -32000 and "all 2 stored run(s) with this input" in answers[2]["error"]["message"]
    non_finite = "NaN is not a finite number (strict JSON has no NaN or Infinity)"
    keys = [a["key"] for a in json.loads(span_line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]]
    field = f"resourceSpans[0].scopeSpans[0].spans[0].attributes[{keys.index('gen_ai.agent.name')}].value.doubleValue"
    assert f"skipped {source}:2: logs: invalid JSON text: [0].attributes.x: {non_finite}" in proc.stderr, proc.stderr
    assert f"skipped {source}:3: invalid JSON: {field}: {non_finite}" in proc.stderr, proc.stderr
    assert f"skipped {source}:5: logs: expected a string (the JSON text of the log records), got int" in proc.stderr
    assert "Traceback" not in proc.stderr
    fold = subprocess.run([OTEL_AGENTS, "fold", str(source), "-o", str(tmp_path / "out.jsonl")], capture_output=True,
                          text=True, timeout=120)
    assert f"otel-agents fold: skipped {source}:3: invalid JSON: {field}: {non_finite}\n" in fold.stderr, fold.stderr
    assert f"otel-agents ecp serve --replay: skipped {source}:3: invalid JSON: {field}: {non_finite}\n" in proc.stderr


def test_phoenix_span_export_of_another_instrumentation_is_graded(tmp_path: Path) -> None:
    """A Phoenix span export of the LangChain agent traced by OpenInference (no ``ecp serve`` attributes):
    every manifest step is matched by its input (the root's ``input.value``) and graded by the real ``ecp run``;
    the correct agent passes every check."""
    export = ROOT / "tests" / "exporters" / "foreign" / "phoenix_otlpv1_openinference_langchain.json"
    manifest = _manifest(tmp_path / "m.yaml", _serve("--replay", str(export), "--log-file", str(tmp_path / "r.log")),
                         new_checks=False)
    report = _ecp_run(manifest, tmp_path / "r.json")
    verdicts = _verdicts(report)
    assert len(verdicts) == sum(len(s["steps"]) for s in BASE["scenarios"])
    assert all(all(v) for _, _, v in verdicts), verdicts


def test_k_recorded_runs_are_graded_in_order_by_one_http_replay_server(tmp_path: Path) -> None:
    """Two recordings of the agent (one trace file), one ``--http`` replay server: the first ``ecp run`` is
    answered with recording 1, the second with recording 2 (their trace ids, in the replayed log records),
    a third finds none left and each step is an error naming its input."""
    traces = tmp_path / "trace.jsonl"
    base = copy.deepcopy(BASE)
    base["scenarios"] = base["scenarios"][:1]
    for i in (1, 2):
        base["target"] = _serve(f"{AGENT}:agent", "--trace-file", str(traces), "--log-file", str(tmp_path / "r.log"))
        (tmp_path / f"rec{i}.yaml").write_text(yaml.safe_dump(base), encoding="utf-8")
        _ecp_run(tmp_path / f"rec{i}.yaml", tmp_path / f"rec{i}.json")
    recorded = sorted({r.envelope["trace_id"] for r in load_runs(str(traces))}, key=lambda t: next(
        r.start for r in load_runs(str(traces)) if r.envelope["trace_id"] == t))
    assert len(recorded) == 4
    server = subprocess.Popen([OTEL_AGENTS, "ecp", "serve", "--replay", str(traces), "--http", "--port", "0"],
                              stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        url = line.split("serving ECP at ", 1)[1].strip()
        served = []
        for i in (1, 2, 3):
            base["target"] = url
            (tmp_path / f"re{i}.yaml").write_text(yaml.safe_dump(base), encoding="utf-8")
            report = _ecp_run(tmp_path / f"re{i}.yaml", tmp_path / f"re{i}.json")
            steps = report["scenarios"][0]["steps"]
            if i < 3:
                assert all(c["passed"] for s in steps for c in s["checks"])
                served.append([json.loads(s["logs"])[-1]["trace_id"] for s in steps])
            else:
                assert "all 2 stored run(s) with this input were replayed already" in json.dumps(report)
        assert served[0] + served[1] == recorded
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_byte_order_mark_at_the_start_of_the_source_is_ignored(tmp_path: Path) -> None:
    """ecp serve --replay read line 1 of a file saved with a UTF-8 BOM as 'not JSON' (an envelope file: its
    only run lost, so no stored run at all); RFC 8259 section 8.1 lets a parser ignore it."""
    from otel_agents.exporters.file import to_otlp_json
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    envelope = _envelope(rec, "Where is my order A100?", "first")
    with rec.telemetry.span("agent", "support") as agent:
        agent.set_agent("support")
        agent.set_output("second")
    for name, text in (("envelopes.jsonl", json.dumps(envelope)), ("trace.jsonl", json.dumps(to_otlp_json(rec.spans[-1:])))):
        source = tmp_path / name
        source.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8") + b"\n")
        errors: list = []
        runs = load_runs(str(source), errors=errors)
        assert errors == [] and [r.envelope["public_output"] for r in runs] == [json.loads(text).get("public_output", "second")]


def test_envelopes_that_record_no_input_are_named_at_start_and_in_the_step_error(tmp_path: Path) -> None:
    """Envelopes folded from runs ``ecp serve`` did not serve (or before it recorded the input's hash) keep no
    input, so no step can match them: the server says so at start and in each unmatched step's error, which is
    what ``ecp run`` shows (before: they loaded silently and every step was 'no stored run has this input')."""
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    source = tmp_path / "envelopes.jsonl"
    source.write_text("\n".join(json.dumps(_envelope(rec, f"Where is order {o}?", o)) for o in ("A100", "B200")) + "\n",
                      encoding="utf-8")
    runs = load_runs(str(source))
    assert [r.line for r in runs] == [1, 2]
    with pytest.raises(RPCError) as error:
        Replayer(runs, str(source)).answer(ReplayState(), "Where is order A100?")
    note = "2 of the 2 stored runs record no input (lines 1, 2) and match no step"
    assert note in error.value.message and "replay those runs' trace file instead" in error.value.message
    proc = subprocess.run(_ecp_serve("--replay", str(source)), capture_output=True, text=True,
                          input='{"jsonrpc":"2.0","id":1,"method":"agent/initialize","params":{}}\n', timeout=120,
                          env=_env())
    assert proc.returncode == 0 and '"result"' in proc.stdout and f"{source}: {note}" in proc.stderr, proc.stderr


def test_an_envelope_with_a_number_beyond_a_double_is_skipped_at_load(tmp_path: Path) -> None:
    """``1e400`` is JSON text no double holds: the envelope line is skipped and named at load, the others served
    (before, it loaded as ``inf`` and its step was answered with -32603 'the response is not strict JSON')."""
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    good, bad = (_envelope(rec, "Where is order A100?", o) for o in ("first", "second"))
    source = tmp_path / "envelopes.jsonl"
    source.write_text(json.dumps(good) + "\n" + json.dumps({**bad, "usage": {"total_tokens": 1}}).replace(
        '"total_tokens": 1}', '"total_tokens": 1e400}') + "\n", encoding="utf-8")
    errors: list = []
    assert [r.envelope["public_output"] for r in load_runs(str(source), errors=errors)] == ["first"]
    assert [(e.line, e.message) for e in errors] == [
        (2, "invalid JSON: usage.total_tokens: 1e400 is not a finite number (beyond a double: infinity when read)")]
    assert errors == _fold_errors(source)  # what otel-agents fold says of that line


def test_a_line_nested_too_deeply_is_skipped_at_load(tmp_path: Path) -> None:
    """A replay source line nested past the JSON decoder's recursion limit: skipped and named, the envelopes
    around it served (before, a RecursionError traceback ended ``ecp serve --replay``)."""
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    first, second = (_envelope(rec, "Where is order A100?", o) for o in ("first", "second"))
    source = tmp_path / "envelopes.jsonl"
    source.write_text(json.dumps(first) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n" + json.dumps(second) + "\n",
                      encoding="utf-8")
    errors: list = []
    assert [r.envelope["public_output"] for r in load_runs(str(source), errors=errors)] == ["first", "second"]
    assert [(e.line, "depth limit exceeded" in e.message) for e in errors] == [(2, True)]
    assert errors == _fold_errors(source)


def _fold_errors(source: Path) -> list:
    """The problems the reader of ``otel-agents fold`` reports for ``source``."""
    from otel_agents.exporters.file import read_otlp_json

    errors: list = []
    read_otlp_json(str(source), errors=errors)
    return errors


def _traced_runs(*pairs: tuple[str, str]) -> dict:
    """One OTLP/JSON request holding a run (root with input and output, one tool) per ``(input, output)``."""
    from otel_agents.exporters.file import to_otlp_json
    from otel_agents.semconv import Kind
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    for text, output in pairs:
        agent = rec.telemetry.start_span(Kind.AGENT, "support")
        agent.set_input(text)
        tool = rec.telemetry.start_span(Kind.TOOL, "lookup_order", parent=agent,
                                        attributes={"gen_ai.tool.name": "lookup_order"})
        tool.end()
        agent.set_output(output)
        agent.end()
    return to_otlp_json(rec.spans)


def _replay_steps(source: Path, *inputs: str) -> tuple[list[dict], str]:
    """``ecp serve --replay SOURCE`` over stdio, a real process: initialize, then a step per input."""
    lines = ['{"jsonrpc":"2.0","id":0,"method":"agent/initialize","params":{}}'] + [
        json.dumps({"jsonrpc": "2.0", "id": i, "method": "agent/step", "params": {"input": text}})
        for i, text in enumerate(inputs, 1)]
    proc = subprocess.run(_ecp_serve("--replay", str(source)), capture_output=True, text=True,
                          input="\n".join(lines) + "\n", timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()][1:], proc.stderr


@pytest.mark.parametrize("options, said", [
    (["--replay", "{source}", "--trace-file", "{tmp}/t.jsonl"], "--trace-file with --replay: a replay runs no agent"),
    (["--replay", "{source}", "--collect", "0", "--otlp-endpoint", "http://127.0.0.1:9/v1/traces"],
     "--collect and --otlp-endpoint with --replay"),
    (["{agent}:agent", "--replay-cursor", "{tmp}/c.json"], "--replay-cursor keeps what a --replay server replayed"),
    # one file for two outputs: the agent's prints among the spans (fold: malformed lines), the stored runs overwritten
    (["{agent}:agent", "--trace-file", "{tmp}/t.jsonl", "--log-file", "{tmp}/./t.jsonl"],
     "--trace-file and --log-file name one file"),
    (["--replay", "{source}", "--replay-cursor", "{tmp}/./envelopes.jsonl"],
     "--replay-cursor {tmp}/./envelopes.jsonl is the --replay source {source}: writing into it would break it")])
def test_options_that_do_nothing_with_or_without_replay_are_refused(options: list[str], said: str,
                                                                     tmp_path: Path) -> None:
    """``--trace-file``, ``--collect``, ``--otlp-endpoint`` with ``--replay`` (no agent runs, no span is recorded),
    ``--replay-cursor`` with an agent: each was accepted and did nothing, so a user waited for a trace file or
    a replay order that never came. Now exit 2 naming the options, before the source or agent is read; so are two
    outputs in one file and a cursor that would overwrite the source."""
    source = tmp_path / "envelopes.jsonl"
    source.write_text("", encoding="utf-8")
    argv = [o.format(source=source, tmp=tmp_path, agent=AGENT) for o in options]
    proc = subprocess.run(_ecp_serve(*argv), capture_output=True, text=True, input="", timeout=120, env=_env())
    said = said.format(source=source, tmp=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith(f"otel-agents ecp serve: {said}"), proc.stderr
    assert not (tmp_path / "t.jsonl").exists() and not (tmp_path / "c.json").exists()
    assert source.read_text(encoding="utf-8") == ""


@pytest.mark.parametrize(("options", "named"), [
    (["--trace-file", "-", "--log-file", "-"], "--log-file - and --trace-file -"), (["--log-file", "-"], "--log-file -")])
def test_a_dash_for_a_file_option_is_refused(options: list[str], named: str, tmp_path: Path) -> None:
    """``--trace-file -`` or ``--log-file -`` (standard output, as ``ecp report --json -`` takes it) made a file
    named ``-`` in the working directory, the log and the spans in one file when both said it (what ``written_over``
    refuses for two file names). Now exit 2 naming the options, nothing written."""
    proc = subprocess.run(_ecp_serve(f"{AGENT}:agent", *options), capture_output=True, text=True,
                          input="", timeout=120, cwd=tmp_path, env=_env())
    assert proc.returncode == 2 and proc.stderr.startswith(f"otel-agents ecp serve: {named}: these options name "
                                                           "files"), proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_pretty_printed_source_is_replayed_as_fold_reads_it(tmp_path: Path) -> None:
    """``jq . trace.jsonl > trace.json`` (or a tool's indented export): one OTLP/JSON document over many lines,
    which ``otel-agents fold`` reads. ``ecp serve --replay`` had its own line reader: every line of it was 'not
    JSON' and the server refused to start (no stored run). Now it reads with fold's reader: served; a pretty-printed
    envelope too; one cut short is one problem at line 1 saying where in the file it breaks, as fold says it."""
    pretty = tmp_path / "trace.json"
    pretty.write_text(json.dumps(_traced_runs(("Where is order A100?", "shipped"), ("Refund B200?", "refunded")),
                                 indent=2) + "\n", encoding="utf-8")
    answers, err = _replay_steps(pretty, "Refund B200?", "Where is order A100?")
    assert [a["result"]["public_output"] for a in answers] == ["refunded", "shipped"], err
    assert [c["name"] for c in answers[0]["result"]["tool_calls"]] == ["lookup_order"]
    envelope = tmp_path / "envelope.json"
    envelope.write_text(json.dumps(load_runs(str(pretty))[0].envelope, indent=2), encoding="utf-8")
    assert [r.envelope["public_output"] for r in load_runs(str(envelope))] == ["shipped"]
    text = pretty.read_text(encoding="utf-8")
    pretty.write_text(text[:len(text) // 2], encoding="utf-8")
    proc = subprocess.run(_ecp_serve("--replay", str(pretty)), capture_output=True, text=True,
                          input="", timeout=120, env=_env())
    [problem] = _fold_errors(pretty)
    assert problem.line == 1 and "unexpected end of data" in problem.message
    assert proc.returncode == 2 and f"no stored run (neither envelopes nor OTLP/JSON spans) ({problem})" in proc.stderr


def test_a_bad_span_is_left_out_naming_its_field_and_its_runs_neighbours_kept(tmp_path: Path) -> None:
    """A line with one span whose id is not hex: that span is left out, the message names the line and the field
    (``…spans[1].spanId``), exactly as ``otel-agents fold`` reports it, and the line's other run is served."""
    data = _traced_runs(("Where is order A100?", "shipped"), ("Refund B200?", "refunded"))
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    refund_root = next(s for s in spans if any(a["value"].get("stringValue") == "Refund B200?"
                                               for a in s.get("attributes", [])))
    refund_root["spanId"] = "zz"
    source = tmp_path / "trace.jsonl"
    source.write_text('{"status": "done"\n' + json.dumps(data) + "\n", encoding="utf-8")
    errors: list = []
    runs = load_runs(str(source), errors=errors)
    assert errors == _fold_errors(source) and [e.line for e in errors] == [1, 2]
    assert errors[1].spans == 1 and "spanId" in errors[1].message and "'zz'" in errors[1].message
    assert "shipped" in [r.envelope["public_output"] for r in runs]
    answers, err = _replay_steps(source, "Where is order A100?")
    assert answers[0]["result"]["public_output"] == "shipped"
    assert f"skipped {errors[0]}" in err and f"skipped {errors[1]}" in err


def test_a_replay_cursor_that_is_not_one_is_refused_naming_the_file(tmp_path: Path) -> None:
    """A ``--replay-cursor`` file that is not ``{"replayed": [id, ...]}`` is exit 2 naming it, not read as 'nothing
    replayed yet' (which graded run 1 again, unnoticed) nor an internal error at each step (a list, ids that are
    objects); an empty file (``mktemp``) is a cursor of none; one that cannot be written is the step's error."""
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    envelope = _envelope(rec, "Where is order A100?", "first")
    source = tmp_path / "envelopes.jsonl"
    source.write_text(json.dumps(envelope) + "\n", encoding="utf-8")
    cursor = tmp_path / "cursor.json"
    for text, problem in (("[1, 2]", "is not a replay cursor"), ('{"replayed": [{"a": 1}]}', "is not a replay cursor"),
                          ("{not json", "cannot read --replay-cursor"),
                          ('{"replayed": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply")):
        cursor.write_text(text, encoding="utf-8")
        proc = subprocess.run(_ecp_serve("--replay", str(source), "--replay-cursor", str(cursor)),
                              capture_output=True, text=True, input="", timeout=120, env=_env())
        assert proc.returncode == 2 and f"{problem}" in proc.stderr and str(cursor) in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    proc = subprocess.run(_ecp_serve("--replay", str(source), "--replay-cursor", "/dev/zero"),
                          capture_output=True, text=True, input="", timeout=120,
                          env=_env())  # read whole, endlessly, before
    assert proc.returncode == 2 and "/dev/zero is over" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    cursor.write_text("", encoding="utf-8")
    run = StoredRun(envelope, input_key("Where is order A100?"), None, None, "", "t/s")
    assert Replayer([run], "s", str(cursor)).answer(ReplayState(), "Where is order A100?")["public_output"] == "first"
    assert json.loads(cursor.read_text(encoding="utf-8")) == {"replayed": ["t/s"]}
    with pytest.raises(RPCError) as error:
        Replayer([run], "s", str(tmp_path / "missing" / "c.json")).answer(ReplayState(), "Where is order A100?")
    assert "cannot write --replay-cursor" in error.value.message


def test_two_replays_at_once_on_one_cursor_answer_different_stored_runs(tmp_path: Path) -> None:
    """Two ``ecp serve --replay`` processes on one ``--replay-cursor`` (two ``ecp run``s graded at once) each read
    the cursor, chose the same stored run and wrote their claim over the other's: run 1 graded twice, run 2 never.
    Each process here is slowed between reading the cursor and writing it (as a loaded machine may)."""
    from tests.exporters.conftest import Recorder

    from otel_agents.exporters.file import OTLPJsonFileExporter

    rec = Recorder()
    for answer in ("first", "second"):  # two stored runs of one step: a trace file (its roots keep their input)
        _envelope(rec, "Where is order A100?", answer)
    source = tmp_path / "traces.jsonl"
    exporter = OTLPJsonFileExporter(str(source))
    exporter.export(rec.spans)
    exporter.shutdown()
    cursor = tmp_path / "cursor.json"
    cursor.write_text("", encoding="utf-8")  # as `mktemp` makes it: read by both
    slowed = ("import sys, time; import otel_agents._named_files as f; read = f.read_document; "
              "f.read_document = lambda *a, **k: (time.sleep(1), read(*a, **k))[1]; "
              "from otel_agents.cli import main; sys.exit(main(sys.argv[1:]))")
    requests = "".join(json.dumps(r) + "\n" for r in (
        {"jsonrpc": "2.0", "id": 1, "method": "agent/initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "agent/step", "params": {"input": "Where is order A100?"}}))
    procs = [subprocess.Popen([sys.executable, "-c", slowed, "ecp", "serve", "--replay", str(source),
                               "--replay-cursor", str(cursor)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for _ in range(2)]
    for proc in procs:  # both asked before either answers
        proc.stdin.write(requests)
        proc.stdin.close()
    answers = []
    for proc in procs:
        stdout = proc.stdout.read()
        assert proc.wait(timeout=120) == 0
        answers.append(json.loads(stdout.splitlines()[-1])["result"]["public_output"])
    assert sorted(answers) == ["first", "second"], answers
    assert len(json.loads(cursor.read_text(encoding="utf-8"))["replayed"]) == 2


def test_a_step_that_raised_or_timed_out_is_replayed_as_the_error_it_was(tmp_path: Path) -> None:
    """A stored step whose agent raised (or ran past --step-timeout) was answered live with -32000 (-32001), which
    ecp run grades as a step that did not complete; the replay answered it with the folded envelope (status done,
    public_output null), so its checks were graded as if the agent had answered: a does_not_contain check passed
    where it had failed live. Now the replay answers with the same code and message."""
    agent = tmp_path / "agent.py"
    agent.write_text("import time\n\ndef agent(text):\n    if text == 'crash':\n        raise ValueError('boom')\n"
                     "    if text == 'slow':\n        time.sleep(3)\n    return 'echo ' + text\n", encoding="utf-8")
    requests = "".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}) + "\n" for i, (m, p) in
                       enumerate([("agent/initialize", {}), ("agent/step", {"input": "hi"}),
                                  ("agent/step", {"input": "crash"}), ("agent/step", {"input": "slow"})]))
    traces = tmp_path / "trace.jsonl"

    def served(*args: str) -> list[dict]:
        proc = subprocess.run(_ecp_serve(*args), input=requests, capture_output=True, text=True,
                              timeout=120, env=_env())
        return [json.loads(line) for line in proc.stdout.splitlines()]

    live = served(f"{agent}:agent", "--trace-file", str(traces), "--step-timeout", "1")
    replayed = served("--replay", str(traces))
    assert [r.get("error", {}).get("code") for r in live] == [None, None, -32000, -32001]
    assert [r.get("error", {}).get("code") for r in replayed] == [None, None, -32000, -32001], replayed
    assert replayed[1]["result"]["public_output"] == "echo hi"
    assert replayed[2]["error"]["message"] == live[2]["error"]["message"] == "agent raised ValueError: boom"
    assert replayed[2]["error"]["data"]["trace_id"] == live[2]["error"]["data"]["trace_id"]


def test_runs_whose_output_was_cut_when_recorded_are_counted_at_start(tmp_path: Path) -> None:
    """An answer longer than the content budget is stored cut (otel_agents.truncated), so the replay answers with
    less than the live run did; the server says so at start (before: silently)."""
    agent = tmp_path / "agent.py"
    agent.write_text("def agent(text):\n    return 'A' * 20000 + ' END'\n", encoding="utf-8")
    requests = ('{"jsonrpc":"2.0","id":1,"method":"agent/initialize","params":{}}\n'
                '{"jsonrpc":"2.0","id":2,"method":"agent/step","params":{"input":"hi"}}\n')
    traces = tmp_path / "trace.jsonl"
    subprocess.run(_ecp_serve(f"{agent}:agent", "--trace-file", str(traces)), input=requests,
                   capture_output=True, text=True, timeout=120, check=True, env=_env())
    proc = subprocess.run(_ecp_serve("--replay", str(traces)), input=requests, capture_output=True,
                          text=True, timeout=120, env=_env())
    answer = json.loads(proc.stdout.splitlines()[1])["result"]["public_output"]
    assert not answer.endswith(" END")  # what the spans kept
    assert f"{traces}: 1 of the 1 stored runs had their step's input or output cut to the content budget" in proc.stderr


@pytest.mark.parametrize("vocabularies", [None, "gen_ai"])
def test_a_run_written_in_gen_ai_alone_is_matched_by_its_input(tmp_path: Path, vocabularies: str | None) -> None:
    """A trace recorded outside ``ecp serve`` is matched by its root's input: ``input.value`` with all three
    vocabularies; with OTel GenAI alone (no ``input.value``) the agent's ``gen_ai.input.messages``, the text of its
    last user message, so the same steps match the same runs (before: no input, no run could match)."""
    from otel_agents._spans import ChatMessage, Settings, Telemetry
    from otel_agents.exporters.file import to_otlp_json
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    rec.telemetry = Telemetry(rec.provider, framework="manual",
                              settings=Settings(capture_content=True, vocabularies=vocabularies))
    with rec.telemetry.span("agent", "support") as agent:
        agent.set_input("Where is my order A100?")
        agent.set_output("shipped")
    with rec.telemetry.span("agent", "support") as agent:
        agent.set_input("Where is my order A200?", messages=[ChatMessage("system", "Be brief."),
                                                             ChatMessage("user", "Where is my order A200?")])
        agent.set_output("lost")
    source = tmp_path / "trace.jsonl"
    source.write_text(json.dumps(to_otlp_json(rec.spans)) + "\n", encoding="utf-8")
    runs = load_runs(str(source))
    assert sorted((r.key, r.envelope["public_output"]) for r in runs) == sorted(
        [(input_key("Where is my order A100?"), "shipped"), (input_key("Where is my order A200?"), "lost")])
    rec.provider.shutdown()


def test_a_stored_input_of_several_text_parts_is_read_as_the_fold_reads_a_message(tmp_path: Path) -> None:
    """A stored run's input message of several text parts (OTel GenAI) or content blocks (LangChain, whole as
    OpenInference records it) is its text as the fold reads a message's (``_facts.message_text``: joined by
    newlines), so a step whose input is that text matches it (before: the parts were joined with nothing between,
    ``"…orderA300?"``, and content blocks not read at all: the whole JSON was the input)."""
    from otel_agents._spans import ChatMessage, Settings, Telemetry, TextPart
    from otel_agents.exporters.file import to_otlp_json
    from otel_agents.semconv import attributes as A
    from otel_agents.serve.replay import stored_input
    from tests.exporters.conftest import Recorder

    rec = Recorder()
    rec.telemetry = Telemetry(rec.provider, framework="manual",
                              settings=Settings(capture_content=True, vocabularies="gen_ai"))
    with rec.telemetry.span("agent", "support") as agent:
        agent.set_input("Where is my order A300?", messages=[
            ChatMessage("user", parts=[TextPart("Where is my order"), TextPart("A300?")])])
        agent.set_output("shipped")
    source = tmp_path / "trace.jsonl"
    source.write_text(json.dumps(to_otlp_json(rec.spans)) + "\n", encoding="utf-8")
    assert [r.key for r in load_runs(str(source))] == [input_key("Where is my order A300?")]
    rec.provider.shutdown()

    blocks = [{"type": "text", "text": "Where is"}, {"type": "image_url", "image_url": {"url": "x"}},
              {"type": "text", "text": "order A400?"}]
    dumped = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
              "kwargs": {"content": blocks, "type": "human"}}
    for messages in ({"messages": [dumped]}, {"messages": [{"type": "human", "data": {"content": blocks, "type": "human"}}]},
                     [{"role": "user", "content": blocks}, {"role": "assistant", "content": "Which order?"}]):
        attributes = {A.INPUT_VALUE: json.dumps(messages), A.INPUT_MIME_TYPE: A.MIME_JSON}
        assert stored_input(attributes) == "Where is\norder A400?", messages
