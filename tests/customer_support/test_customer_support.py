"""The customer-support example graded by the real ECP runtime (issues 8, 11 and 23), in all four frameworks,
in plain Python (``examples/plain_python/agent.py``, decorators only, issue 11) and as a hand-written loop on
each provider client (``anthropic_agent.py``, ``openai_agent.py``, issue 23).

What runs here, all offline and over loopback only:

* ``otel-agents demo`` once (module fixture): for each framework it runs the real
  ``ecp run --manifest …`` (stdio) on the correct agent and on its faulty twin;
  the tests then read the JSON reports, the manifest copies and the OTLP/JSON
  trace files it left under a temporary ``out/``.
* the real ``ecp conformance --target "otel-agents ecp serve …"`` (stdio) on the agents of
  ``CONFORMANCE_STDIO``;
* ``otel-agents ecp serve … --http`` for one framework, graded by ``ecp run`` and
  ``ecp conformance`` with an ``http://`` target.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from otel_agents.cli import demo as demo_cli
from tests.frameworks import rows_here

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "customer_support"
BIN = Path(sys.executable).parent
ECP = str(BIN / "ecp")
OTEL_AGENTS = str(BIN / "otel-agents")
INSTRUMENTED = ("langchain", "llama_index", "crewai", "pydantic_ai", "smolagents", "openai_agents",
                "mcp", "a2a", "agno", "claude_agent_sdk")  # mcp: PydanticAI over MCP; a2a: PydanticAI asking a LangGraph agent over A2A
CLIENTS = ("anthropic", "openai")  # a hand-written loop on each provider client (issue 23)
ISOLATED = ("google_adk", "autogen_agentchat")  # Google ADK: a venv of its own (Makefile ISOLATED), where its rows run alone
# plain_python: the same agent without a framework; in the order the demo's table prints its rows
ALL_ROWS = tuple(sorted((*INSTRUMENTED, "plain_python", *CLIENTS, *ISOLATED), key=demo_cli.FRAMEWORKS.index))
FRAMEWORKS = tuple(rows_here(ALL_ROWS))  # the rows this venv runs (tests/frameworks.py)
MANIFEST = yaml.safe_load((EXAMPLES / "manifest.yaml").read_text(encoding="utf-8"))
# The module's demo fixture grades 39 agents with `ecp run` (its subprocess timeout is 1200 s); pytest-timeout
# counts a fixture's setup against the first test that needs it, and on a loaded 2-core machine (the isolated
# venvs' suites run beside this one) the demo has taken more than the global 600 s.
pytestmark = pytest.mark.timeout(1500)
STEPS = [step for scenario in MANIFEST["scenarios"] for step in scenario["steps"]]
N_CHECKS = sum(len(step["graders"]) for step in STEPS)


def _load_common():
    """The example's framework-free half (``common.py``), under a name of its own."""
    spec = importlib.util.spec_from_file_location("_customer_support_common", EXAMPLES / "common.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module


common = _load_common()


def example_file(framework: str) -> Path:
    """The module defining ``framework``'s ``agent`` and ``faulty_agent``."""
    if framework == "plain_python":
        return ROOT / "examples" / "plain_python" / "agent.py"
    return EXAMPLES / f"{framework}_agent.py"


def serve_command(framework: str, attr: str, log: Path, *extra: str) -> str:
    """The shell command serving one example agent (its log in a file: ECP never reads stderr)."""
    cmd = [OTEL_AGENTS, "ecp", "serve", f"{example_file(framework)}:{attr}", "--log-file", str(log), *extra]
    return f"exec {shlex.join(cmd)}"


def catching_grader(fault: str, grader: dict) -> bool:
    """Whether ``grader`` is the check of manifest.yaml meant to catch ``fault``."""
    if fault == common.INVENTED_ID:
        return grader["type"] == "tool_usage" and grader["tool_name"] == "lookup_order"
    if fault == common.SKIPPED_POLICY:
        return grader["type"] == "tool_usage" and grader["tool_name"] == "check_refund_policy"
    assert fault == common.FORBIDDEN_TOOL
    return grader["type"] == "text_match" and grader.get("field") == "evaluation_context" \
        and grader["condition"] == "does_not_contain" and grader["value"] == "issue_refund"


def report_steps(report: dict) -> list[dict]:
    return [step for scenario in report["scenarios"] for step in scenario["steps"]]


# -- the example itself (no framework, no process) -------------------------------------------

def test_every_faulty_twin_breaks_every_step_differently() -> None:
    """Each plan injects one fault in every manifest step; together they use all three kinds of fault."""
    kinds = set()
    for framework in ALL_ROWS:
        plan = common.FAULT_PLANS[framework]
        faults = [common.fault_for(plan, step["input"]) for step in STEPS]
        assert None not in faults, framework
        assert len(set(faults)) >= 2, f"{framework}: a single kind of fault"
        kinds |= set(faults)
    assert kinds == {common.INVENTED_ID, common.SKIPPED_POLICY, common.FORBIDDEN_TOOL}
    assert set(common.FAULT_PLANS) == set(ALL_ROWS)
    assert len({tuple(sorted(p.items())) for p in common.FAULT_PLANS.values()}) == len(ALL_ROWS)


def test_faulty_brain_reaches_the_correct_answer() -> None:
    """Driving the brain by hand: same final answer, different trajectory, for every step and plan."""
    tools = {fn.__name__: fn for fn in common.TOOLS}

    def play(question: str, faults: dict | None) -> tuple[list[tuple[str, dict]], str]:
        results: list[common.ToolResult] = []
        while True:
            action = common.decide(question, results, faults)
            if isinstance(action, common.Answer):
                return [(r.name, dict(r.arguments)) for r in results], action.text
            results.append(common.ToolResult(action.name, action.arguments, tools[action.name](**action.arguments)))

    for step in STEPS:
        calls, answer = play(step["input"], None)
        assert "issue_refund" not in [name for name, _ in calls]
        for plan in common.FAULT_PLANS.values():
            faulty_calls, faulty_answer = play(step["input"], plan)
            assert faulty_answer == answer and faulty_calls != calls
    no_order = play("hello", None)
    assert no_order[0] == [] and play("hello", common.FAULT_PLANS["crewai"]) == no_order  # nothing to break


def test_disabled_instrumentations_variable_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    """``instrument()`` skips the frameworks OTEL_PYTHON_DISABLED_INSTRUMENTATIONS names (the standard OTel variable)."""
    from otel_agents import instrument, instrumentation_status

    monkeypatch.setenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", ",".join((*INSTRUMENTED, *CLIENTS, *ISOLATED)))
    assert instrument() == []
    assert not any(status.instrumented for status in instrumentation_status().values())


# -- `otel-agents demo`: ecp run (stdio) on all ten agents ----------------------------------

# One row of the demo is graded by ``--venv`` (how ``make demo`` shows the frameworks of Makefile ISOLATED): by
# another ``otel-agents demo --json -``, here of this venv again, in a real second process, its rows folded into the
# one table (test_rows_graded_in_another_venv_are_folded_into_the_one_table). It was a second demo of two rows in
# tests/test_demo_venvs.py (~15 s of CPU), whose checks are here now.
OTHER_VENV_ROW = "openai" if "openai" in FRAMEWORKS else None


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("demo") / "out"
    here = [fw for fw in FRAMEWORKS if fw != OTHER_VENV_ROW]
    other = ["--venv", f"{sys.prefix}={OTHER_VENV_ROW}"] if OTHER_VENV_ROW else []
    # in a shell's environment too (tests/conftest.py sets LITELLM_LOCAL_MODEL_COST_MAP for the suite): the demo
    # gave its `ecp run`s that variable and not its fork servers, whose every client then differed (each fork
    # exec'd `ecp serve`, importing all again)
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    proc = subprocess.run([OTEL_AGENTS, "demo", "--out", str(out), "--frameworks", ",".join(here), *other,
                           "--json", str(out.parent / "runs.json")], cwd=ROOT, capture_output=True, text=True,
                          timeout=1200, env=env)
    return proc, out


def test_demo_runs_offline_and_ends_with_the_table(demo) -> None:
    proc, out = demo
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.rstrip().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("framework"))
    assert lines[header].split() == ["framework", "agent", "faulty", "twin", "faults", "caught", "by", "ECP",
                                     "caught", "by", "outcome-only"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[header + 2: header + 2 + len(FRAMEWORKS)]}
    assert list(rows) == list(FRAMEWORKS) and lines[header + 2 + len(FRAMEWORKS)] == "", lines[header:]  # one row each
    faults = len(STEPS)
    for framework in FRAMEWORKS:
        assert rows[framework][:2] == ["PASS", f"{N_CHECKS}/{N_CHECKS}"], rows
        assert rows[framework][2] == "FAIL", rows
        assert rows[framework][4:] == [str(faults), f"{faults}/{faults}", f"0/{faults}"], rows
    tail = "\n".join(lines[header:])
    n = len(FRAMEWORKS)
    fws = "framework" if n == 1 else "frameworks"  # a venv of its own grades one
    assert f"agent PASS on {n}/{n} {fws}, faulty twin FAIL on {n}/{n} {fws}" in tail
    assert f"the agents of {n} {fws} agree on {N_CHECKS}/{N_CHECKS} checks" in tail
    total = faults * len(FRAMEWORKS)
    assert f"caught by the ECP checks: {total}/{total}; by an outcome-only check: 0/{total}" in tail
    assert lines[-1].startswith("reports and traces:")  # the table block is the last thing printed


@pytest.mark.skipif(OTHER_VENV_ROW is None, reason="no row to grade in another venv here")
def test_rows_graded_in_another_venv_are_folded_into_the_one_table(demo) -> None:
    """``--venv DIR=ROWS``: the other venv's rows are in the table (test_demo_runs_offline_and_ends_with_the_table),
    its reports under the same ``--out``, its runs in ``--json`` in the table's order; each row's ``ecp serve``s
    are forks of its fork server, each demo's ``ecp run``s forks of its own (its log in the first row it grades)."""
    proc, out = demo
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"grading {3 * len(FRAMEWORKS)} agents" in proc.stdout
    runs = json.loads((out.parent / "runs.json").read_text())["runs"]
    assert [(r["framework"], r["attr"], r["error"]) for r in runs] == \
        [(fw, attr, None) for fw in FRAMEWORKS for attr in demo_cli.TWINS]
    for r in runs:
        sub = out / r["framework"] / demo_cli._SUBDIRS[r["attr"]]
        assert json.loads((sub / "report.json").read_text())["passed"] == r["passed"]
    for fw in FRAMEWORKS:
        log = (out / fw / "forkserver.log").read_text()
        assert "forked " in log and " execs " not in log, log
    logs = {p.parent.name: p.read_text() for p in out.glob("*/ecp-run.forkserver.log")}
    assert OTHER_VENV_ROW in logs and len(logs) == 2, sorted(logs)
    assert sorted(log.count("forked ") for log in logs.values()) == sorted([3, 3 * (len(FRAMEWORKS) - 1)]), logs
    assert not any(" execs " in log for log in logs.values()), logs


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_ecp_run_passes_the_agent(demo, framework: str) -> None:
    """``ecp run --manifest`` (stdio): every check passes for the correct agent."""
    _, out = demo
    report = json.loads((out / framework / "report.json").read_text())
    assert (report["passed"], report["failed"], report["total"]) == (N_CHECKS, 0, N_CHECKS)
    for step in report_steps(report):
        assert step["status"] == "ok" and step["error"] is None
        assert step["usage"]["total_tokens"] > 0
        assert all(call["status"] == "ok" for call in step["tool_calls"])
    assert (out / framework / "report.html").stat().st_size > 0


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_faulty_twin_fails_exactly_the_right_checks(demo, framework: str) -> None:
    """Each injected fault fails the one check meant for it; the outcome-only checks all pass."""
    _, out = demo
    good = report_steps(json.loads((out / framework / "report.json").read_text()))
    bad = report_steps(json.loads((out / framework / "faulty" / "report.json").read_text()))
    plan = common.FAULT_PLANS[framework]
    for manifest_step, good_step, bad_step in zip(STEPS, good, bad, strict=True):
        fault = common.fault_for(plan, manifest_step["input"])
        failed = [g for g, c in zip(manifest_step["graders"], bad_step["checks"], strict=True) if not c["passed"]]
        assert failed == [g for g in manifest_step["graders"] if catching_grader(fault, g)], (fault, bad_step["checks"])
        assert bad_step["output"] == good_step["output"]
        outcome = [c for c in bad_step["checks"] if c["field"] == "public_output"]
        assert outcome and all(c["passed"] for c in outcome)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_demo_writes_manifests_and_traces(demo, framework: str) -> None:
    """The manifest copies differ from manifest.yaml only in name and target; the trace files hold the graded runs."""
    from otel_agents.exporters.file import read_otlp_json

    _, out = demo
    for suffix, attr, subdir in (("", "agent", ""), ("-faulty", "faulty_agent", "faulty")):
        manifest = yaml.safe_load((out / "manifests" / f"{framework}{suffix}.yaml").read_text())
        assert {k: v for k, v in manifest.items() if k not in ("name", "target")} == \
            {k: v for k, v in MANIFEST.items() if k not in ("name", "target")}
        served = example_file(framework).relative_to(ROOT)  # the demo shows paths relative to its directory
        assert f"{served}:{attr} " in manifest["target"] and "--trace-file" in manifest["target"]
        spans = read_otlp_json(out / framework / subdir / "trace.jsonl")
        assert sum(s.name == "agent/step" for s in spans) == len(STEPS)
        tools = [s.attributes.get("gen_ai.tool.name") for s in spans if s.attributes.get("gen_ai.tool.name")]
        assert "lookup_order" in tools and ("issue_refund" in tools) == (common.FORBIDDEN_TOOL in
                                                                           common.FAULT_PLANS[framework].values()
                                                                           and attr == "faulty_agent")


def _is_side_effect_check(grader: dict) -> bool:
    return grader["type"] == "text_match" and grader.get("field") == "evaluation_context" \
        and grader["condition"] == "does_not_contain" and grader["value"] == "effect http POST"


def test_demo_table_of_the_side_effect_twins(demo) -> None:
    """Issue 28: one side-effect twin per framework, every injected e-mail caught by the ECP checks, none
    by an outcome-only check."""
    proc, _ = demo
    lines = proc.stdout.rstrip().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("framework") and "side-effect twin" in line)
    rows = {line.split()[0]: line.split()[1:] for line in lines[header + 2: header + 2 + len(FRAMEWORKS)]}
    faults = len(common.SIDE_EFFECT_PLAN)
    for framework in FRAMEWORKS:
        assert rows[framework] == ["FAIL", f"{N_CHECKS - faults}/{N_CHECKS}", str(faults), f"{faults}/{faults}",
                                   f"0/{faults}"], rows
    total = faults * len(FRAMEWORKS)
    assert f"side effects injected in the side-effect twins: {total}; caught by the ECP checks: {total}/{total}; " \
           f"by an outcome-only check: 0/{total}" in proc.stdout


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_side_effect_twin_fails_only_the_side_effect_check(demo, framework: str) -> None:
    """The e-mail (an httpx POST to the fake mail service, traced by the OTel httpx instrumentation) fails
    the ``effect http POST`` check of exactly the refund steps; same answers, same tool calls."""
    from otel_agents.exporters.file import read_otlp_json

    _, out = demo
    good = report_steps(json.loads((out / framework / "report.json").read_text()))
    twin = report_steps(json.loads((out / framework / "side_effect" / "report.json").read_text()))
    for manifest_step, good_step, twin_step in zip(STEPS, good, twin, strict=True):
        mailed = common.fault_for(common.SIDE_EFFECT_PLAN, manifest_step["input"]) is not None
        failed = [g for g, c in zip(manifest_step["graders"], twin_step["checks"], strict=True) if not c["passed"]]
        assert failed == ([g for g in manifest_step["graders"] if _is_side_effect_check(g)] if mailed else [])
        assert twin_step["output"] == good_step["output"]
        assert [c["name"] for c in twin_step["tool_calls"]] == [c["name"] for c in good_step["tool_calls"]]
    spans = read_otlp_json(out / framework / "side_effect" / "trace.jsonl")
    posts = [s for s in spans if s.attributes.get("http.method", s.attributes.get("http.request.method")) == "POST"]
    # the mail service's POSTs only: the a2a row's own calls to its remote agent are JSON-RPC POSTs too
    mails = [s for s in posts if str(s.attributes.get("url.full", s.attributes.get("http.url", ""))).endswith("/v1/send")]
    assert len(mails) == len(common.SIDE_EFFECT_PLAN), [s.attributes for s in posts]


def test_every_demo_run_regraded_from_its_trace_gets_its_live_verdicts(demo, tmp_path: Path) -> None:
    """Issue 39: graded runs of the demo (every row's faulty twin, the cross-process side-effect twins),
    graded again from the trace files the demo stored (``ecp serve --replay``: no agent, no model), get check
    for check the verdicts their live runs got, whichever framework or process layout (MCP, A2A: two
    processes folded into one run) made them."""
    _, out = demo

    def verdicts(report: dict) -> list[tuple[str, int, list[bool]]]:
        return [(sc["name"], i, [c["passed"] for c in step["checks"]])
                for sc in report["scenarios"] for i, step in enumerate(sc["steps"])]

    def regrade(folder: Path) -> tuple[Path, list, list]:
        # one `--http` replay server a folder, both scenarios through it (a stdio target starts one process a
        # scenario, each folding the whole trace again: ~0.4 s of CPU a folder more); replay over stdio, a
        # process a scenario, is tests/replay's test_replayed_trace_file_gets_the_live_verdicts_without_the_agent
        name = "-".join(folder.relative_to(out).parts)
        log = tmp_path / f"{name}.log"
        replayers.wait_ready(60)
        command = [OTEL_AGENTS, "ecp", "serve", "--replay", str(folder / "trace.jsonl"), "--http", "--port", "0",
                   "--log-file", str(log)]
        server = subprocess.Popen(replayers.client(command), cwd=ROOT, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=demo_cli.ecp_environment())
        try:
            manifest = copy.deepcopy(MANIFEST)
            manifest["target"] = _served_url(server, log)
            path = tmp_path / f"{name}.yaml"
            path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
            report = tmp_path / f"{name}.json"
            graders.wait_ready(60)
            proc = subprocess.run(graders.client([ECP, "run", "--manifest", str(path), "--json-out", str(report),
                                                  "--timeout", "60"]), cwd=ROOT, capture_output=True, text=True,
                                  timeout=600, env=demo_cli.ecp_environment())
        finally:
            server.terminate()
            server.wait(timeout=30)
        assert report.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
        live = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        return folder, verdicts(live), verdicts(json.loads(report.read_text(encoding="utf-8")))

    # the faulty twins (every kind of fault, in every row) and the side-effect twins whose e-mail another
    # process sent (MCP's tool server, A2A's remote agent): 42 ecp runs would cost minutes of the suite
    folders = [out / fw / "faulty" for fw in FRAMEWORKS] + [out / fw / "side_effect" for fw in ("mcp", "a2a")
                                                             if fw in FRAMEWORKS]
    # each `ecp run` a fork of one process that imported ecp-runtime, as the demo's (its fork server), and each
    # replay server a fork of one that imported otel_agents' CLI, ECP server and fold (~0.6 s of CPU a folder
    # less; one started afresh: tests/replay's test_k_recorded_runs_are_graded_in_order_by_one_http_replay_server)
    sockets = Path(tempfile.mkdtemp(prefix="otel-agents-regrade-"))  # mode 0700: only we can reach the server
    graders = demo_cli.ForkServer.of_ecp_run(sockets, tmp_path)
    replayers = demo_cli.ForkServer(["--serve", str(sockets / "replay.sock")], tmp_path / "replay.forkserver.log")
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(regrade, folders))
    finally:
        graders.stop()
        replayers.stop()
        shutil.rmtree(sockets, ignore_errors=True)
    for folder, live, replayed in results:
        assert replayed == live, folder
    assert sum(1 for _, live, _ in results for _, _, checks in live if not all(checks)) > 0  # faults among them


# -- ecp conformance (stdio) -----------------------------------------------------------------------

# What conformance checks (initialize, the step result's contract, reset) is `ecp serve`'s, the same for every
# agent, and the demo's `ecp run` above drives every row's agent through it over stdio. So: the server with no
# framework, and an agent whose step spans two processes (A2A). All rows here cost ~30 s of CPU a suite run,
# each `ecp serve` importing its framework once more (langchain is checked over HTTP below).
CONFORMANCE_STDIO = tuple(fw for fw in ("plain_python", "a2a") if fw in FRAMEWORKS)


@pytest.fixture(scope="module")
def conformance(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    logs = tmp_path_factory.mktemp("conformance")

    def check(framework: str) -> subprocess.CompletedProcess:
        target = serve_command(framework, "agent", logs / f"{framework}.log")
        return subprocess.run([ECP, "conformance", "--target", target, "--json", "--timeout", "300"],
                              cwd=ROOT, capture_output=True, text=True, timeout=900)

    with ThreadPoolExecutor(max_workers=max(1, len(CONFORMANCE_STDIO))) as pool:
        return dict(zip(CONFORMANCE_STDIO, pool.map(check, CONFORMANCE_STDIO)))


@pytest.mark.parametrize("framework", CONFORMANCE_STDIO)
def test_ecp_conformance_stdio(conformance, framework: str) -> None:
    proc = conformance[framework]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["conformant"] and (report["passed"], report["failed"]) == (3, 0), report


# -- Streamable HTTP: one framework served once, graded by ecp run and ecp conformance ------------

def _served_url(proc: subprocess.Popen, log: Path) -> str:
    """The URL an ``ecp serve --http --port 0`` process started as ``proc`` says it serves at in its ``log``."""
    deadline = time.monotonic() + 300  # a start-up wait, not a timed assertion
    while proc.poll() is None and time.monotonic() < deadline:
        match = re.search(r"serving ECP at (http://\S+)", log.read_text() if log.exists() else "")
        if match:
            return match.group(1)
        time.sleep(0.2)
    pytest.fail(f"the HTTP server did not start: {log.read_text() if log.exists() else ''}")


HTTP_FRAMEWORK = "langchain"


@pytest.fixture(scope="module")
def http_agent(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("http")
    log = tmp / "serve.log"
    proc = subprocess.Popen([OTEL_AGENTS, "ecp", "serve", str(EXAMPLES / f"{HTTP_FRAMEWORK}_agent.py:agent"),
                             "--http", "--port", "0", "--log-file", str(log), "--trace-file", str(tmp / "trace.jsonl")],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield _served_url(proc, log), tmp
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_ecp_run_over_http(http_agent) -> None:
    url, tmp = http_agent
    manifest = copy.deepcopy(MANIFEST)
    manifest["target"] = url
    path = tmp / "manifest.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    proc = subprocess.run([ECP, "run", "--manifest", str(path), "--json-out", str(tmp / "report.json"),
                           "--timeout", "300"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp / "report.json").read_text())
    assert (report["passed"], report["total"]) == (N_CHECKS, N_CHECKS)


def test_ecp_conformance_over_http(http_agent) -> None:
    url, _ = http_agent
    proc = subprocess.run([ECP, "conformance", "--target", url, "--json", "--timeout", "300"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["conformant"]
