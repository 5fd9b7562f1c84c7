"""Issue 39, item 2: ``otel-agents ecp report`` over real ``ecp run`` reports.

Reports: the framework-free customer-support agent graded twice and its faulty twin once by the real ``ecp
run``, plus a third run of the agent made from the first with one check turned failed (a flaky run). The test
recomputes pass rate, pass@k, pass^k and the Wilson interval from the raw reports with its own formulas."""

from __future__ import annotations

import copy
from datetime import datetime, timezone
import json
import math
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "plain_python" / "agent.py"
BIN = Path(sys.executable).parent
BASE = yaml.safe_load((ROOT / "examples" / "customer_support" / "manifest.yaml").read_text(encoding="utf-8"))


def _graded(tmp: Path, attr: str, name: str) -> Path:
    manifest = copy.deepcopy(BASE)
    manifest["target"] = "exec " + shlex.join([str(BIN / "otel-agents"), "ecp", "serve", f"{AGENT}:{attr}",
                                               "--name", name, "--log-file", str(tmp / f"{name}.log")])
    (tmp / f"{name}.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    report = tmp / f"{name}.json"
    subprocess.run([str(BIN / "ecp"), "run", "--manifest", str(tmp / f"{name}.yaml"), "--json-out", str(report)],
                   capture_output=True, timeout=600, cwd=ROOT)
    assert report.exists()
    return report


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("reports")
    good = _graded(tmp, "agent", "support")
    faulty = _graded(tmp, "faulty_agent", "support-faulty")
    runs = [good, tmp / "support-2.json", tmp / "support-3.json"]
    data = json.loads(good.read_text(encoding="utf-8"))
    again = copy.deepcopy(data)
    again["audit"]["run_id"] += "-2"  # another run: ecp run gives each its own id (a copy is one run)
    runs[1].write_text(json.dumps(again), encoding="utf-8")
    flipped = copy.deepcopy(data)
    flipped["audit"]["run_id"] += "-3"
    flipped["scenarios"][1]["steps"][0]["checks"][1]["passed"] = False  # the refund scenario fails in run 3
    runs[2].write_text(json.dumps(flipped), encoding="utf-8")
    return [*runs, faulty]


def _independent(paths: list[Path], agent: str) -> dict:
    """pass per scenario per run, from the raw reports."""
    outcomes: dict[str, list[bool]] = {}
    for path in paths:
        report = json.loads(path.read_text(encoding="utf-8"))
        if report["audit"]["agent"]["name"] != agent:
            continue
        for s in report["scenarios"]:
            outcomes.setdefault(s["name"], []).append(all(c["passed"] for st in s["steps"] for c in st["checks"]))
    return outcomes


def test_numbers_recomputed_independently(reports: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "summary.json"
    page = tmp_path / "report.html"
    proc = subprocess.run([str(BIN / "otel-agents"), "ecp", "report", *map(str, reports), "--json", str(out),
                           "--html", str(page), "--fail-under", "pass_k=0.9"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr  # the faulty twin (and the flaky support) are under the gate
    assert "support-faulty: pass_k 0.000 < 0.9" in proc.stderr
    summary = json.loads(out.read_text(encoding="utf-8"))
    agents = {a["agent"]: a for a in summary["agents"]}
    assert set(agents) == {"support", "support-faulty"}
    support = agents["support"]
    outcomes = _independent(reports, "support")
    assert support["runs"] == 3 and support["k"] == 3
    for s in support["scenarios"]:
        runs = outcomes[s["scenario"]]
        n, c, k = len(runs), sum(runs), 3
        assert s["pass_at_k"] == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))
        assert s["pass_k"] == pytest.approx(math.comb(c, k) / math.comb(n, k))
        p, z = c / n, 1.959963984540054
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        assert s["pass_rate_ci"] == pytest.approx([max(0, centre - half), min(1, centre + half)])
    refund = next(s for s in support["scenarios"] if s["scenario"] == "refund requests")
    assert refund["flaky"] and refund["passed"] == 2 and refund["pass_k"] == 0 and refund["pass_at_k"] == 1
    assert refund["flipped_checks"] == ["step 1 check 2 tool_usage tool_calls"]
    assert support["flaky_scenarios"] == ["refund requests"]
    assert support["pass_rate"] == pytest.approx(5 / 6)
    assert support["tool_success"] == 1.0 and support["tokens_per_run"] > 0 and support["steps_per_run"] == 5
    assert support["framework"] == "manual" and support["model"] == "support-brain"
    faulty = agents["support-faulty"]
    assert faulty["pass_rate"] == 0 and faulty["k"] == 1
    cheapest = min(a["tokens_per_run"] for a in agents.values())
    for a in agents.values():
        assert a["ee_score"] == pytest.approx(a["pass_rate"] * cheapest / a["tokens_per_run"])
    # the page: self-contained (no script, no external URL), the table's numbers those of the JSON
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "") \
        and "https://" not in text
    assert f"<td>{support['pass_k']:.3f}</td>" in text and f'{refund["pass_k"]:.3f}</text>' in text
    assert proc.stdout.splitlines()[0].startswith("agent / scenario")


def test_unreadable_report_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    proc = subprocess.run([str(BIN / "otel-agents"), "ecp", "report", str(bad)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and str(bad) in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("path, value", [
    (("scenarios", 0), "x"), (("scenarios", 0, "steps"), "x"), (("scenarios", 0, "steps", 0), 5),
    (("scenarios", 0, "steps", 0, "usage"), []), (("scenarios", 0, "steps", 0, "checks"), 1.5),
    (("scenarios", 0, "steps", 0, "checks", 0), None), (("scenarios", 0, "steps", 0, "tool_calls"), [True]),
    (("audit",), "x"), (("audit", "agent"), ["x"]),
    # numbers the summary adds up: before, a TypeError or OverflowError traceback
    (("scenarios", 0, "steps", 0, "duration_ms"), "12"), (("scenarios", 0, "steps", 0, "usage", "input_tokens"), "5"),
    pytest.param(("scenarios", 0, "steps", 0, "usage", "total_tokens"), 10 ** 400, id="400-digit-tokens"),
    (("scenarios", 0, "steps", 0, "usage", "cost"), True),
    (("scenarios", 0, "steps", 0, "checks", 0, "score"), "high"),
    # before, bool("false") counted that check as passed, and a negative or 1e308 duration (twice: an inf the
    # --json writer refused with a traceback) was summed
    (("scenarios", 0, "steps", 0, "checks", 0, "passed"), "false"),
    (("scenarios", 0, "steps", 0, "usage", "total_tokens"), -5), (("scenarios", 0, "steps", 0, "duration_ms"), 1e308)])
def test_malformed_report_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple,
                                          value: object) -> None:
    """A report of the wrong shape is exit status 2 naming the file and the field, never a traceback (before,
    each of these was an AttributeError or TypeError from deep inside the summary)."""
    from otel_agents.cli import main

    report = _report_with([])
    report["scenarios"][0]["steps"][0]["tool_calls"] = []
    where = report
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(report), encoding="utf-8")
    assert main(["ecp", "report", str(bad)]) == 2
    err = capsys.readouterr().err
    field = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")
    assert str(bad) in err and field in err, err


def test_unwritable_outputs_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from otel_agents.cli import main

    good = tmp_path / "r.json"
    good.write_text(json.dumps(_report_with([])), encoding="utf-8")
    for option in ("--html", "--json"):
        out = tmp_path / "missing-dir" / "out"
        assert main(["ecp", "report", str(good), option, str(out)]) == 2
        assert f"cannot write {out}" in capsys.readouterr().err


def test_an_output_that_is_an_input_report_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ecp report r.json --json r.json`` (or ``--html``) replaced the report it read by its summary: the run's
    report was gone. Now it is exit 2 naming the option and the report, before anything is written; so are
    ``--json`` and ``--html`` naming one file (the page overwrote the numbers)."""
    from otel_agents.cli import main

    good = tmp_path / "r.json"
    other = tmp_path / "s.json"
    text = json.dumps(_report_with([]))
    good.write_text(text, encoding="utf-8")
    other.write_text(text, encoding="utf-8")
    for option in ("--html", "--json"):
        assert main(["ecp", "report", str(other), str(good), option, str(tmp_path / "." / "r.json")]) == 2
        assert f"{option} {tmp_path / '.' / 'r.json'} is the input report {good}" in capsys.readouterr().err
        assert good.read_text(encoding="utf-8") == text
    both = tmp_path / "out.json"
    assert main(["ecp", "report", str(good), "--json", str(both), "--html", str(both)]) == 2
    assert f"--html and --json name one file, {both}" in capsys.readouterr().err and not both.exists()
    assert main(["ecp", "report", str(good), "--json", "-", "--html", str(tmp_path / "k.html")]) == 0


def test_html_to_standard_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--html -`` writes the page to standard output (the table to standard error), as ``--json -`` does the
    numbers; it made a file named ``-`` in the working directory and printed nothing. Both ``-`` is exit 2."""
    good = tmp_path / "r.json"
    good.write_text(json.dumps(_report_with([])), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    run = [str(BIN / "otel-agents"), "ecp", "report", str(good)]
    proc = subprocess.run([*run, "--html", "-"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>") and proc.stdout.rstrip().endswith("</html>"), proc.stdout
    assert "agent / scenario" in proc.stderr and not (tmp_path / "-").exists()
    proc = subprocess.run([*run, "--html", "-", "--json", "-"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--json - and --html - both name standard output" in proc.stderr, proc.stderr
    assert proc.stdout == "" and not (tmp_path / "-").exists()


def _report_with(models: list[dict], name: str = "priced") -> dict:
    """An ``ecp run`` report of one one-step scenario whose ``logs`` record ``models`` (model span records)."""
    logs = [{"kind": "chain", "name": "agent/step", "start": "2026-12-01T10:00:00Z", "attributes": {}}] + [
        {"kind": "model", "name": "chat", "start": "2026-12-01T10:00:01Z", "attributes": a} for a in models]
    step = {"input": "q", "output": "a", "checks": [{"type": "text_match", "passed": True}], "status": "ok",
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}, "logs": json.dumps(logs)}
    return {"manifest": name, "audit": {"agent": {"name": name}}, "scenarios": [{"name": "s", "status": "ok",
                                                                             "steps": [step]}]}


def test_cost_per_run_prices_the_logged_model_calls() -> None:
    """``ecp run`` keeps no ``metrics``: the cost is the logged model calls priced with genai-prices (the price a
    test computes with genai-prices itself); one call that cannot be priced leaves the run's cost unknown."""
    import genai_prices

    from otel_agents.cli.report import summarise

    call = {"gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 200}
    when = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
    expected = 2 * float(genai_prices.calc_price(genai_prices.Usage(input_tokens=1000, output_tokens=200),
                                                 "gpt-4o-mini", provider_id="openai",
                                                 genai_request_timestamp=when).total_price)
    (agent,) = summarise([_report_with([call, call])])["agents"]
    assert agent["cost_per_run"] == pytest.approx(expected) and expected > 0
    unknown = dict(call, **{"gen_ai.request.model": "support-brain"})
    (agent,) = summarise([_report_with([call, unknown], "partly")])["agents"]
    assert agent["cost_per_run"] is None  # a partial sum would understate it


def test_report_with_a_byte_order_mark_is_read_and_a_directory_is_named(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`ecp report` and `ecp annotate` read reports through one loader: a UTF-8 byte-order mark at the start is
    ignored (RFC 8259 section 8.1; Windows editors write one), and a path that cannot be read is named (before,
    the BOM was "not JSON", and `ecp report` and `ecp annotate` had each their own loader)."""
    from otel_agents.cli import main

    report = _report_with([])
    with_bom = tmp_path / "bom.json"
    with_bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(report).encode())
    assert main(["ecp", "report", str(with_bom), "--json", str(tmp_path / "s.json")]) == 0
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["agents"]
    capsys.readouterr()
    assert main(["ecp", "annotate", str(with_bom), "--to", "file", "--out", str(tmp_path / "e.jsonl")]) == 0
    for command in ("report", "annotate"):
        assert main(["ecp", command, str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert f"cannot read {tmp_path}" in err and "Traceback" not in err, err


@pytest.mark.parametrize("command", ["report", "annotate"])
def test_non_finite_numbers_and_other_encodings_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          command: str) -> None:
    """A report is strict JSON in UTF-8 (RFC 8259): ``NaN``/``Infinity`` (Python's json writes them) are refused
    naming the file, never summed into a ``--json`` that is not JSON (before: a ValueError traceback at the
    write) nor sent as an evaluation score, the field named; a report saved as Latin-1 or UTF-16 is named with the
    byte and its line (before: the decoder's message alone, no file)."""
    from otel_agents.cli import main

    report = _report_with([])
    report["scenarios"][0]["steps"][0]["duration_ms"] = float("inf")
    report["scenarios"][0]["steps"][0]["checks"][0]["score"] = float("nan")
    infinite = tmp_path / "infinite.json"
    infinite.write_text(json.dumps(report), encoding="utf-8")
    report = _report_with([])
    report["scenarios"][0]["name"] = "caf\u00e9"
    latin1 = tmp_path / "latin1.json"
    text = json.dumps(report, indent=1, ensure_ascii=False)
    latin1.write_bytes(text.encode("latin-1"))
    line = next(n for n, content in enumerate(text.splitlines(), 1) if "caf" in content)
    utf16 = tmp_path / "utf16.json"
    utf16.write_bytes(json.dumps(report).encode("utf-16"))
    out = ["--json", str(tmp_path / "s.json")] if command == "report" else ["--out", str(tmp_path / "e.jsonl")]
    nan = "not JSON: scenarios[0].steps[0].checks[0].score: NaN is not a finite number"  # the first in the text
    for path, problem in ((infinite, nan), (latin1, f":{line}: not UTF-8 (byte 0xe9"),
                          (utf16, ":1: not UTF-8 (byte 0xff at offset 0)")):
        assert main(["ecp", command, str(path), *out]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and problem in err and "Traceback" not in err, err
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "e.jsonl").exists()


def test_names_from_a_report_cannot_drive_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An agent or scenario name is the report's (the agent's initialize answer, the manifest): printed raw, an
    escape sequence in it retitled or recoloured the terminal, and a newline or carriage return forged or hid a
    row of the table. Each character that does not print is shown as its escape; the JSON keeps the names."""
    from otel_agents.cli import main

    report = _report_with([], name="ag\x1b[31mRED\x1b[0m")
    report["scenarios"][0]["name"] = "s\x1b]0;TITLE\x07\nforged row\rX"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main(["ecp", "report", str(path), "--json", str(tmp_path / "s.json"), "--k", "2",
                 "--fail-under", "tool_success=0.5"]) == 1
    out, err = capsys.readouterr()
    assert not any(c in out + err for c in "\x1b\x07\r"), (out, err)
    assert len(out.splitlines()) == 3  # head, agent, scenario: no forged row
    assert "ag\\x1b[31mRED\\x1b[0m" in out and "s\\x1b]0;TITLE\\x07\\nforged row\\rX" in out
    assert "ag\\x1b[31mRED" in err  # the --k note and the gate failure
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert summary["agents"][0]["agent"] == "ag\x1b[31mRED\x1b[0m"


def test_bidirectional_controls_in_names_are_shown_not_obeyed_on_the_page_and_the_terminal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A right-to-left override (U+202E) in an agent's or scenario's name (``refund<RLO>gnp.exe`` reads as
    ``refundexe.png``), and the other bidirectional controls and isolates, marks and line/paragraph separators:
    ``--html`` wrote them raw (html.escape leaves them; a numeric reference to one is obeyed as well), so the page
    reordered its text. Each is now shown as its escape, on the page (names in ``<bdi>`` cells) and in the table
    (which already escaped them); the JSON keeps the names."""
    from otel_agents.cli import main

    controls = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u2028\u2029"
    report = _report_with([], name="evil\u202eLIVE\u2066x\u2069\u200f")
    report["scenarios"][0]["name"] = "refund\u202egnp.exe " + controls
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main(["ecp", "report", str(path), "--json", str(tmp_path / "s.json"),
                 "--html", str(tmp_path / "p.html")]) == 0
    out, err = capsys.readouterr()
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    for shown in (page, out + err):
        assert not any(c in shown for c in controls), ascii(shown)
        assert "refund\\u202egnp.exe \\u202a\\u202b" in shown and "evil\\u202eLIVE\\u2066x\\u2069\\u200f" in shown
    assert "&#" not in page and "<td><bdi>evil\\u202eLIVE" in page
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert summary["agents"][0]["scenarios"][0]["scenario"] == "refund\u202egnp.exe " + controls


def test_k_below_one_is_refused_and_a_k_above_the_runs_is_said(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``--k 0``, ``--k -1`` and ``--k x`` are exit 2 naming the option and what it takes (before, 0 silently meant
    the default and -1 meant 1; ``x`` was an ``invalid at_least_one value``, the name of our function); a k above
    an agent's runs gives no pass@k or pass^k (both need k runs; before, k was lowered to the runs, first silently,
    then with a note), said on standard error, and ``--fail-under pass_k`` fails it as one with no value."""
    from otel_agents.cli import main

    report, other = tmp_path / "r.json", tmp_path / "r2.json"
    report.write_text(json.dumps(_report_with([])), encoding="utf-8")
    other.write_text(json.dumps(_report_with([])), encoding="utf-8")
    for k, said in (("0", "must be at least 1, got 0"), ("-1", "must be at least 1, got -1"),
                    ("x", "must be a whole number, at least 1, got 'x'")):
        with pytest.raises(SystemExit) as exit_:
            main(["ecp", "report", str(report), "--k", k])
        assert exit_.value.code == 2 and f"--k: {said}" in capsys.readouterr().err
    assert main(["ecp", "report", str(report), str(other), "--k", "5", "--json", str(tmp_path / "s.json"),
                 "--fail-under", "pass_k=0.5", "--fail-under", "pass_rate=0.5"]) == 1
    err = capsys.readouterr().err
    assert "priced: 1 scenario(s) with fewer than --k 5 runs, no pass@k or pass^k for them: s (2 runs); the " \
           "agent's are none" in err
    assert "priced: no pass_k (no scenario with k = 5 runs) to hold against 0.5" in err and "pass_rate" not in err
    [agent] = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["agents"]
    assert (agent["k"], agent["pass_rate"], agent["pass_at_k"], agent["pass_k"], agent["pass_k_ci"]) \
        == (5, 1.0, None, None, None)
    assert agent["fewer_runs_than_k"] == ["s"] and agent["scenarios"][0]["pass_k"] is None


def test_a_scenario_with_fewer_runs_than_k_has_no_pass_k_and_is_named(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """5 runs of an agent, a newer manifest's scenario ``new`` in the last 2 (1 passed), ``--k 5``: ``new`` got k = 2
    without a word, and the agent's row, labelled k 5, gave pass^k 0.5, the mean of ``s0``'s pass^5 (1) and
    ``new``'s pass^2 (0). pass^k needs k runs (τ-bench): ``new`` has none, is named on standard error and in the JSON,
    and the agent's pass@5 and pass^5 are over ``s0`` alone; without ``--k``, k is the fewest runs of any scenario
    (2), so every scenario has one, at the same k."""
    from otel_agents.cli import main

    paths = []
    for r, report in enumerate(_runs([True] * 5)):
        if r >= 3:
            new = copy.deepcopy(report["scenarios"][0])
            new["name"], new["steps"][0]["input"] = "new", "a new question"
            new["steps"][0]["checks"][0]["passed"] = r == 3
            report["scenarios"].append(new)
        paths.append(tmp_path / f"r{r}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "s.json"
    assert main(["ecp", "report", *map(str, paths), "--k", "5", "--json", str(out), "--html", str(tmp_path / "p.html"),
                 "--fail-under", "pass_k=0.9"]) == 0
    err = capsys.readouterr().err
    assert "agent-a: 1 scenario(s) with fewer than --k 5 runs, no pass@k or pass^k for them: new (2 runs); the " \
           "agent's are the means over its 1 other scenario(s)" in err
    [agent] = json.loads(out.read_text(encoding="utf-8"))["agents"]
    s0, new = agent["scenarios"]
    assert (agent["k"], agent["pass_k"], agent["pass_at_k"], agent["fewer_runs_than_k"]) == (5, 1.0, 1.0, ["new"])
    assert agent["pass_k_ci"] == s0["pass_k_ci"] and agent["pass_rate"] == 6 / 7
    assert (new["runs"], new["passed"], new["pass_rate"], new["pass_k"], new["pass_at_k_ci"]) == (2, 1, 0.5, None, None)
    bars = (tmp_path / "p.html").read_text(encoding="utf-8").split('<svg id="bars"')[1]
    assert bars.count('class="passk"') == 2 and bars.endswith('font-size="11">-</text></svg>\n</body></html>\n')
    assert main(["ecp", "report", *map(str, paths), "--json", str(out)]) == 0
    assert "fewer than --k" not in capsys.readouterr().err
    [agent] = json.loads(out.read_text(encoding="utf-8"))["agents"]
    assert [(s["k"], s["pass_k"]) for s in agent["scenarios"]] == [(2, 1.0), (2, 0.0)] and agent["k"] == 2
    assert agent["pass_k"] == 0.5 and agent["fewer_runs_than_k"] == []


def test_a_report_given_twice_or_copied_is_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same file twice (``out/*/run-*.json out/campaign/*/run-*.json`` overlapping) or a copy of a report (the
    same ``audit.run_id``): before, each counted as one more of the k runs, so n, pass@k and pass^k rose with the
    overlap (a flaky agent's failed run and its passed copy gave pass@2 = 1). Now it is one run, said on stderr."""
    from otel_agents.cli import main

    failed = _report_with([])
    failed["audit"]["run_id"] = "run-a"
    failed["scenarios"][0]["steps"][0]["checks"][0]["passed"] = False
    passed = _report_with([])
    passed["audit"]["run_id"] = "run-b"
    paths = {}
    for name, report in (("a", failed), ("b", passed), ("a-copy", failed)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "s.json"
    assert main(["ecp", "report", str(paths["a"]), str(paths["b"]), str(tmp_path / "." / "a.json"),
                 str(paths["a-copy"]), "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{tmp_path / '.' / 'a.json'} is the same file as {paths['a']}: counted once" in err
    assert f"{paths['a-copy']} is the same run (audit.run_id run-a) as {paths['a']}: counted once" in err
    [agent] = json.loads(out.read_text(encoding="utf-8"))["agents"]
    assert (agent["runs"], agent["pass_rate"], agent["pass_k"]) == (2, 0.5, 0.0)


def test_tokens_are_unknown_not_zero_when_model_calls_have_no_counts(tmp_path: Path) -> None:
    """A step whose model calls came without token counts (``usage: null``, a model span in ``logs``): before, it
    counted 0 tokens, so the agent showed ``0`` tokens/run (never a count the runs gave) and ranked cheapest. Now its
    run's tokens are unknown, the mean is over the runs that have them (as for cost), ``-`` when none; an agent that
    made no model call at all did use 0."""
    from otel_agents.cli.report import page, summarise

    counted = _report_with([{"gen_ai.request.model": "m"}], name="counted")
    uncounted = _report_with([{"gen_ai.request.model": "m"}], name="uncounted")
    uncounted["scenarios"][0]["steps"][0]["usage"] = None
    no_model = _report_with([], name="no-model")
    no_model["scenarios"][0]["steps"][0]["usage"] = None
    mixed = copy.deepcopy(uncounted)
    mixed["audit"]["agent"]["name"] = "counted"
    summary = summarise([counted, mixed, uncounted, no_model])
    agents = {a["agent"]: a for a in summary["agents"]}
    assert agents["counted"]["tokens_per_run"] == 2 and agents["counted"]["runs"] == 2
    assert agents["uncounted"]["tokens_per_run"] is None and agents["uncounted"]["efficiency"] is None
    assert agents["no-model"]["tokens_per_run"] == 0
    json.dumps(summary, allow_nan=False)
    assert 'uncounted</title>' not in page(summary) and 'counted</title>' in page(summary)


def test_steps_per_run_counts_the_steps_run_not_the_skipped() -> None:
    """A run whose agent crashed at step 1 of 3: ``ecp run`` lists steps 2 and 3 as skipped; they did not run
    (before, steps/run was 3, as for a run that finished)."""
    from otel_agents.cli.report import summarise

    report = _report_with([])
    step = report["scenarios"][0]["steps"][0]
    step.update(status="failed", error="agent crashed")
    skipped = {"input": "q", "output": None, "checks": [{"type": "execution", "passed": False, "score": 0.0}],
               "status": "skipped", "duration_ms": 0.0, "usage": None, "error": "Skipped after step 1 failed"}
    report["scenarios"][0]["steps"] += [skipped, dict(skipped)]
    agent = summarise([report])["agents"][0]
    assert agent["steps_per_run"] == 1 and agent["pass_rate"] == 0


def test_flipped_checks_are_those_whose_verdict_differs_between_runs() -> None:
    """The flipped checks of a flaky scenario, in one pass over the runs (before: every check against every run,
    k² work: 1000 runs took seconds, 10,000 minutes), equal to the definition, a check missing from a run
    counting as a verdict of its own."""
    import random

    from otel_agents.cli.report import _flipped

    rng = random.Random(7)
    for _ in range(200):
        keys = [f"step 1 check {i}" for i in range(rng.randint(1, 4))]
        runs = [{key: rng.random() < 0.8 for key in keys if rng.random() < 0.9} for _ in range(rng.randint(1, 5))]
        expected = sorted({key for run in runs for key in run if len({r.get(key) for r in runs}) > 1})
        assert _flipped(runs) == expected, runs


def test_a_gate_is_not_met_by_missing_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report with no scenario graded (or an agent that called no tool) has no pass^k (tool success): the
    CI gate fails, saying why (before, a missing value passed every gate: exit 0 with nothing graded)."""
    from otel_agents.cli import main

    report = _report_with([])
    report["scenarios"] = []
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main(["ecp", "report", str(path), "--fail-under", "pass_k=0.9"]) == 1
    assert "priced: no pass_k (no scenario graded) to hold against 0.9" in capsys.readouterr().err
    path.write_text(json.dumps(_report_with([])), encoding="utf-8")
    assert main(["ecp", "report", str(path), "--fail-under", "pass_k=0.9"]) == 0
    assert main(["ecp", "report", str(path), "--fail-under", "tool_success=0.5"]) == 1
    assert "priced: no tool_success (no tool call) to hold against 0.5" in capsys.readouterr().err


def test_lone_surrogates_in_a_report_are_written_as_utf8(tmp_path: Path) -> None:
    """JSON text may escape a lone surrogate (an agent's broken output, a name): the table, --json and --html are
    written as UTF-8 with it escaped (before: a UnicodeEncodeError traceback at the table, no JSON, no page)."""
    import orjson

    report = _report_with([{"gen_ai.request.model": "m\udfff"}], name="agent \ud800")
    report["scenarios"][0]["name"] = "scenario \udc00"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    proc = subprocess.run([str(BIN / "otel-agents"), "ecp", "report", str(path), "--json", str(tmp_path / "s.json"),
                           "--html", str(tmp_path / "p.html")], capture_output=True, timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    summary = orjson.loads((tmp_path / "s.json").read_bytes())  # strict: refuses lone surrogates
    assert summary["agents"][0]["agent"] == "agent \\ud800" and summary["agents"][0]["model"] == "m\\udfff"
    assert "scenario \\udc00" in (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "scenario \\udc00" in proc.stdout.decode("utf-8")


def test_two_scenarios_of_one_name_are_both_counted() -> None:
    """ecp run grades a manifest with two scenarios of one name; the second overwrote the first (a failed first
    scenario vanished and the agent showed pass rate 1.00). Now the second is "NAME #2"."""
    from otel_agents.cli.report import summarise

    report = _report_with([])
    failed = copy.deepcopy(report["scenarios"][0])
    failed["steps"][0]["checks"][0]["passed"] = False
    report["scenarios"] = [failed, report["scenarios"][0]]
    agent = summarise([report])["agents"][0]
    assert [(s["scenario"], s["passed"]) for s in agent["scenarios"]] == [("s", 0), ("s #2", 1)]
    assert agent["pass_rate"] == 0.5


def test_a_scenario_of_another_manifest_with_the_same_name_is_another_scenario() -> None:
    """One agent graded with two manifests whose scenarios share a name ("order status": other questions, other
    checks) was counted as two runs of one scenario: a flaky one, every check flipped, pass^k 0. A scenario is its
    name and its steps' inputs: the other is ``NAME (MANIFEST)`` (``NAME (version N)`` when the manifests share a
    name too); runs of one manifest whose manifest names differ (the demo's per-run names) stay one scenario."""
    from otel_agents.cli.report import summarise

    def run(manifest: str, question: str, passed: bool) -> dict:
        report = _report_with([], name="support")
        report["audit"]["manifest"] = {"name": manifest}
        report["scenarios"][0]["steps"][0].update(input=question)
        report["scenarios"][0]["steps"][0]["checks"][0]["passed"] = passed
        return report

    agent = summarise([run("suite (run 1)", "q", True), run("suite (run 2)", "q", True),
                       run("other suite", "another q", False), run("other suite", "a third q", True)])["agents"][0]
    assert [(s["scenario"], s["runs"], s["passed"], s["flaky"]) for s in agent["scenarios"]] == [
        ("s", 2, 2, False), ("s (other suite)", 1, 0, False), ("s (version 3)", 1, 1, False)]
    assert agent["flaky_scenarios"] == [] and agent["runs"] == 4


def test_a_gzip_compressed_report_is_read_and_a_damaged_one_named(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A report kept gzip-compressed (a CI artifact) was 'not UTF-8 (byte 0x8b at offset 1) ... save the report as
    UTF-8'; fold and ecp serve --replay read gzip. Now it is read as the plain one is; one cut short or damaged is
    exit 2 saying so."""
    import gzip

    from otel_agents.cli import main
    from otel_agents.cli.report import load, summarise

    plain = _report_with([{"gen_ai.request.model": "m"}])
    packed = tmp_path / "r.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(plain).encode("utf-8")))
    assert summarise([load(str(packed))]) == summarise([plain])
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(packed.read_bytes()[:-12])
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(b"\x1f\x8b" + b"x" * 40)
    for path, said in ((cut, "the gzip stream is cut short"), (damaged, "a damaged gzip stream")):
        assert main(["ecp", "report", str(path)]) == 2
        assert f"otel-agents ecp report: {path}: {said}" in capsys.readouterr().err


def _runs(*passes: list[bool]) -> list[dict]:
    """One report per run of one agent; scenario i of run r passed when ``passes[i][r]``."""
    reports = []
    for r in range(len(passes[0])):
        report = _report_with([], name="agent-a")
        base = report["scenarios"][0]
        report["scenarios"] = [copy.deepcopy(base) for _ in passes]
        for i, scenario in enumerate(report["scenarios"]):
            scenario["name"] = f"s{i}"
            scenario["steps"][0]["checks"][0]["passed"] = passes[i][r]
        reports.append(report)
    return reports


def test_an_agent_exactly_at_the_gate_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three scenarios of 10 runs passing 1, 2 and 3 times, k = 1: pass@1 and pass^1 are the mean of 0.1, 0.2 and
    0.3, exactly 0.2. Before, the float mean of 1 - 0.9, 1 - 0.8, 1 - 0.7 was 0.19999999999999998, and
    ``--fail-under pass_at_k=0.2`` failed with ``pass_at_k 0.200 < 0.2`` (pass_k passed by luck, at
    0.20000000000000004). Now both are computed exactly: 0.2 in the JSON, the gate met; a value that is below a gate
    is printed with the digits that show it."""
    from otel_agents.cli import main
    from otel_agents.cli.report import gate_failures

    paths = []
    for r, report in enumerate(_runs(*[[r < c for r in range(10)] for c in (1, 2, 3)])):
        paths.append(tmp_path / f"run-{r}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "s.json"
    assert main(["ecp", "report", *map(str, paths), "--k", "1", "--json", str(out), "--fail-under", "pass_at_k=0.2",
                 "--fail-under", "pass_k=0.2", "--fail-under", "pass_rate=0.2"]) == 0, capsys.readouterr().err
    [agent] = json.loads(out.read_text(encoding="utf-8"))["agents"]
    assert (agent["pass_at_k"], agent["pass_k"], agent["pass_rate"]) == (0.2, 0.2, 0.2)
    assert main(["ecp", "report", *map(str, paths), "--k", "1", "--fail-under", "pass_at_k=0.2001"]) == 1
    assert "agent-a: pass_at_k 0.200 < 0.2001" in capsys.readouterr().err
    summary = {"agents": [{"agent": "a", "pass_k": 0.19996}]}
    assert gate_failures(summary, ["pass_k=0.2", "pass_k=0.19996", "pass_k=0.3"]) == [
        "a: pass_k 0.19996 < 0.2", "a: pass_k 0.200 < 0.3"]  # never "0.200 < 0.2"


def test_every_interval_holds_its_estimate() -> None:
    """pass@k and pass^k are the unbiased estimators (Chen et al.; τ-bench), their intervals the Wilson bounds of p
    mapped through 1 - (1 - p)^k and p^k: with few runs the estimate fell outside (3 runs, 2 passed, k = 3: pass^3 =
    0 with an interval [0.009, 0.83], pass@3 = 1 with [0.50, 0.9998]); a pass rate of 0 had the low bound 5.6e-17.
    Now each interval, per scenario and per agent, is widened to hold its estimate, and is the mapped Wilson
    interval where that already held it."""
    from otel_agents.cli.report import summarise, wilson

    for n in range(1, 7):
        for c in range(n + 1):
            for k in range(1, n + 1):
                runs = _runs([r < c for r in range(n)], [r < n - c // 2 for r in range(n)])
                [agent] = summarise(runs, k)["agents"]
                for entry in [agent, *agent["scenarios"]]:
                    for metric in ("pass_rate", "pass_at_k", "pass_k"):
                        lo, hi = entry[metric + "_ci"]
                        assert lo <= entry[metric] <= hi, (n, c, k, entry["k"], metric, entry)
                s = agent["scenarios"][0]
                lo, hi = wilson(c, n)
                for metric, mapped in (("pass_at_k", [1 - (1 - lo) ** k, 1 - (1 - hi) ** k]),
                                       ("pass_k", [lo ** k, hi ** k])):
                    estimate = s[metric]
                    assert s[metric + "_ci"] == [min(mapped[0], estimate), max(mapped[1], estimate)]
    [agent] = summarise(_runs([True, True, False]))["agents"]
    s = agent["scenarios"][0]
    lo, hi = wilson(2, 3)
    assert (s["pass_k"], s["pass_at_k"]) == (0.0, 1.0) and s["pass_k_ci"] == [0.0, hi ** 3] \
        and s["pass_at_k_ci"] == [1 - (1 - lo) ** 3, 1.0]
