"""``otel-agents ecp report REPORT.json…``: reliability over k runs, from the JSON reports of ``ecp run``.

Each report (``ecp run --json-out``) is one run of one agent over a manifest; give
any number (k repeats of several agents). Runs are grouped per agent (the name
``agent/initialize`` reported), and within an agent per scenario: its name and its
steps' inputs (another manifest's scenario of the same name with other steps is
another scenario, ``NAME (MANIFEST)``). A scenario run *passes* when every check
of every one of its steps passed.

Per agent and per scenario, with n runs of which c passed and k (``--k``, default
the fewest runs of any of the agent's scenarios):

* pass rate c/n with its Wilson score interval (95 %, z = 1.96; E. B. Wilson,
  "Probable inference…", JASA 1927);
* pass@k = 1 − C(n−c, k) / C(n, k): the chance that at least one of k runs passes,
  the unbiased estimator of Chen et al., "Evaluating Large Language Models Trained
  on Code" (the Codex paper, arXiv:2107.03374, §2.1);
* pass^k = C(c, k) / C(n, k): the chance that all k runs pass, the production
  metric of Yao et al., "τ-bench" (arXiv:2406.12045, §5);
* their intervals: 95 % intervals for the chances themselves, 1 − (1 − p)^k and p^k
  of a per-run success p (what both estimators estimate): the Wilson bounds of p
  mapped through these monotone functions, widened to take in the estimate where it
  lies outside, as the unbiased estimators can with few runs (3 runs, 2 passed,
  k = 3: pass^3 = C(2, 3)/C(3, 3) = 0 while p^3 is from 0.009 to 0.83; the interval
  given is [0, 0.83]). Widening keeps the coverage; each interval holds its estimate.

Both estimators need n ≥ k (as in τ-bench, whose pass^k is over tasks run at least k
times): a scenario with fewer runs than ``--k`` has no pass@k or pass^k (none is made
up from a smaller k), is listed in the agent's ``fewer_runs_than_k`` and named in a note
on standard error. An agent's numbers are the means of its scenarios' (its pass rate and interval are
pooled over all its scenario runs; pass@k and pass^k over the scenarios that have k runs,
none when no scenario has); its intervals are the means of its scenarios'
bounds, widened to its estimate as well. pass@k, pass^k and their means are computed
exactly (as fractions), then given as the nearest double: three scenarios at 0.1,
0.2 and 0.3 average 0.2, not 0.19999999999999998. Flaky scenarios passed in some runs and
failed in others; each is listed with the checks whose verdict changed between
runs (``step N check M TYPE TARGET``).

Per run (means over an agent's runs): tokens (``usage.total_tokens`` of every
step, else input + output; unknown for a run with a step that made model calls, or whose spans the report does
not hold, without counts: the mean is over the runs whose tokens are known, as for cost), cost
(``usage.cost``/``cost_usd`` when the reports
carry one; else the model calls recorded in the steps' ``logs`` priced as the fold
prices ``metrics.cost_usd``, with ``genai-prices``; none when any call cannot be
priced, since a partial sum would understate it), latency (the steps' ``duration_ms`` summed), steps
(those run: not the ones ``ecp run`` skipped after a failed step); the
tool success rate (tool calls with ``status`` ``ok`` over all tool calls). The
framework (``otel_agents.framework`` of the spans in ``logs``, ``ecp`` aside) and
model (``gen_ai.request.model``) are reported where the runs say so.

Effectiveness–efficiency across agents: success (pass rate) against mean tokens
per run. We did not find the A²E paper's exact normalisation, so this uses a
documented stand-in: efficiency = (fewest mean tokens of any agent) / (this
agent's mean tokens), in (0, 1], and the score = pass rate × efficiency (1 = the
most reliable agent is also the cheapest).

Output: a terminal table (on standard error when an output is ``-``); ``--json FILE`` (``-`` for standard output)
for CI; ``--html FILE`` (``-`` too, not both): one self-contained page (inline SVG, no script, no CDN) with the
success-vs-tokens scatter and per-scenario pass^k bars. ``--fail-under
METRIC=VALUE`` (repeatable; METRIC one of pass_rate, pass_at_k, pass_k,
tool_success) fails (exit 1) when any agent is below it or has no value for it (no
scenario graded, none with k runs, no tool called): the double given in ``--json`` against
the double nearest VALUE as written, so a value exactly at the gate passes, and a failure
prints the value with the digits that show it below VALUE (3, or as many as it takes:
``0.19996 < 0.2``, never ``0.200 < 0.2``). A report given twice, or a copy of one (the same
``audit.run_id``), is one run (said on standard error). Exit 2: a report could not be read
(the file and the problem are named).
"""

from __future__ import annotations

import argparse
import html
import json
import math
import sys
from collections import Counter, defaultdict
from fractions import Fraction
from typing import Any, Iterable

from . import plain, shown
from ._types import at_least_one

Z95 = 1.959963984540054
GATES = ("pass_rate", "pass_at_k", "pass_k", "tool_success")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents ecp report`` (its arguments, ``func=run``) to ``sub``, the parent's subparsers."""
    p = sub.add_parser("report", help="pass rate, pass@k, pass^k, flakiness and cost over ecp run reports",
                       description=plain(__doc__.split("\n\n")[1]))
    p.add_argument("reports", metavar="REPORT.json", nargs="+", help="JSON reports of `ecp run --json-out`")
    p.add_argument("--k", type=at_least_one,
                   help="k of pass@k and pass^k, at least 1 (default: the fewest runs of any of an agent's "
                        "scenarios; a scenario of fewer runs than k has no pass@k or pass^k, with a note)")
    p.add_argument("--json", metavar="FILE", help="write the numbers as JSON ('-': standard output)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML page with the plots ('-': standard "
                   "output)")
    p.add_argument("--fail-under", action="append", default=[], metavar="METRIC=VALUE", type=_gate,
                   help=f"exit 1 when an agent's METRIC ({', '.join(GATES)}) is below VALUE (a share, 0 to 1)")
    p.set_defaults(func=run)


# -- statistics -------------------------------------------------------------------------------------

def wilson(c: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of c successes in n trials, as (low, high); (0, 1) when n = 0. The low bound is
    exactly 0 when c = 0 and the high bound exactly 1 when c = n, as the formula gives (computed, they came out
    5.6e-17 and 0.9999999999999999, so a pass rate of 0 or 1 lay outside its own interval)."""
    if n == 0:
        return 0.0, 1.0
    p = c / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return 0.0 if c == 0 else max(0.0, centre - half), 1.0 if c == n else min(1.0, centre + half)


def pass_at_k(n: int, c: int, k: int) -> Fraction:
    """1 − C(n−c, k)/C(n, k) (Chen et al. 2021), exactly; ``k`` must be ≤ ``n``."""
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> Fraction:
    """C(c, k)/C(n, k) (Yao et al. 2024, τ-bench), exactly; ``k`` must be ≤ ``n``."""
    return Fraction(math.comb(c, k), math.comb(n, k))


def _around(estimate: float, lo: float, hi: float) -> list[float]:
    """The interval [lo, hi] widened to hold ``estimate`` (the module docstring says when it must be)."""
    return [min(lo, estimate), max(hi, estimate)]


# -- reading reports -----------------------------------------------------------------------------------

class ReportError(ValueError):
    """A report cannot be read (the message names the file)."""


def load(path: str) -> dict[str, Any]:
    """One ``ecp run`` JSON report (:func:`otel_agents.evaluations.load_report`). Raises :class:`ReportError`."""
    from ..evaluations import load_report

    try:
        return load_report(path)
    except (OSError, ValueError) as exc:
        raise ReportError(str(exc)) from None


def _check_name(step_no: int, check_no: int, check: dict[str, Any]) -> str:
    """``step N check M TYPE TARGET`` (1-based, manifest order; TARGET: what the report says it graded)."""
    target = check.get("tool_name") or check.get("value") or check.get("pattern") or check.get("field") or ""
    return f"step {step_no} check {check_no} {check.get('type', 'check')} {target}".strip()


def _logged_cost(records: list[Any]) -> float | None:
    """The price in USD of the model calls in one step's ``logs`` (``ecp run`` keeps no ``metrics``), priced
    as the fold prices them; ``None`` when there is none or any cannot be priced."""
    from datetime import datetime
    from types import SimpleNamespace

    from ..exporters.ecp._cost import run_cost

    calls = []
    for record in records:
        if not isinstance(record, dict) or record.get("kind") != "model":
            continue
        try:
            start = int(datetime.fromisoformat(str(record.get("start")).replace("Z", "+00:00")).timestamp() * 1e9)
        except ValueError:
            start = None
        attributes = record.get("attributes") if isinstance(record.get("attributes"), dict) else {}
        calls.append(SimpleNamespace(attributes=attributes, start_time=start))
    return run_cost(calls)


def _run_facts(report: dict[str, Any]) -> dict[str, Any]:
    from ..evaluations._results import log_records

    tokens = latency = 0.0
    counted = True  # every step's tokens known so far
    cost: float | None = None
    priced = True  # every step's cost known so far
    steps = tools = tools_ok = 0
    frameworks: Counter[str] = Counter()
    models: Counter[str] = Counter()
    scenarios: dict[str, dict[str, Any]] = {}
    names: Counter[str] = Counter()
    for scenario in report["scenarios"]:
        checks: dict[str, bool] = {}
        passed = scenario.get("status", "ok") == "ok"
        for i, step in enumerate(scenario.get("steps") or [], 1):
            steps += step.get("status") != "skipped"  # ecp run lists the steps after a failed one as skipped
            usage = step.get("usage") or {}
            records = log_records(step.get("logs"))
            total = usage.get("total_tokens")
            if not isinstance(total, (int, float)):
                parts = [usage.get(key) for key in ("input_tokens", "output_tokens")]
                total = sum(p for p in parts if isinstance(p, (int, float))) \
                    if any(isinstance(p, (int, float)) for p in parts) else None
            if total is None and step.get("status") != "skipped" and (
                    not records or any(r.get("kind") == "model" for r in records)):
                counted = False  # model calls without counts, or a step whose spans are not in the report
            tokens += total or 0
            spent = usage.get("cost", usage.get("cost_usd"))
            if not isinstance(spent, (int, float)) or isinstance(spent, bool):
                spent = _logged_cost(records)
            if spent is None:
                priced = False
            else:
                cost = (cost or 0.0) + spent
            latency += step.get("duration_ms") or 0.0
            for call in step.get("tool_calls") or []:
                tools += 1
                tools_ok += call.get("status", "ok") == "ok" and not call.get("error")
            for j, check in enumerate(step.get("checks") or []):
                checks[_check_name(i, j + 1, check)] = bool(check.get("passed"))
                passed = passed and bool(check.get("passed"))
            if step.get("status", "ok") != "ok" or step.get("error"):
                passed = False
            for record in records:
                a = record.get("attributes") if isinstance(record.get("attributes"), dict) else {}
                if isinstance(a.get("otel_agents.framework"), str) and a["otel_agents.framework"] != "ecp":
                    frameworks[a["otel_agents.framework"]] += 1
                if isinstance(a.get("gen_ai.request.model"), str) and a["gen_ai.request.model"]:
                    models[a["gen_ai.request.model"]] += 1
        name = str(scenario.get("name"))
        names[name] += 1  # ecp run allows two scenarios of one name: the second is "NAME #2"
        inputs = tuple(str(step.get("input")) for step in scenario.get("steps") or [])  # skipped steps keep theirs
        scenarios[name if names[name] == 1 else f"{name} #{names[name]}"] = {"passed": passed, "checks": checks,
                                                                             "inputs": inputs}
    agent = ((report.get("audit") or {}).get("agent") or {}).get("name") or report.get("manifest") or "agent"
    manifest = ((report.get("audit") or {}).get("manifest") or {}).get("name") or report.get("manifest")
    return {"agent": str(agent), "scenarios": scenarios, "manifest": str(manifest or "another manifest"),
            "tokens": tokens if counted else None,
            "cost": cost if priced else None,
            "latency_ms": latency,
            "steps": steps, "tools": tools, "tools_ok": tools_ok,
            "framework": frameworks.most_common(1)[0][0] if frameworks else None,
            "model": models.most_common(1)[0][0] if models else None}


def _rates(c: int, n: int, k: int) -> dict[str, Any]:
    lo, hi = wilson(c, n)
    if n < k:  # both estimators need k of the n runs
        return {"runs": n, "passed": c, "k": k, "pass_rate": c / n if n else None, "pass_rate_ci": [lo, hi],
                "pass_at_k": None, "pass_at_k_ci": None, "pass_k": None, "pass_k_ci": None}
    at, hat = float(pass_at_k(n, c, k)), float(pass_hat_k(n, c, k))
    return {"runs": n, "passed": c, "k": k, "pass_rate": c / n if n else None, "pass_rate_ci": [lo, hi],
            "pass_at_k": at, "pass_at_k_ci": _around(at, 1 - (1 - lo) ** k, 1 - (1 - hi) ** k),
            "pass_k": hat, "pass_k_ci": _around(hat, lo ** k, hi ** k)}


def summarise(reports: Iterable[dict[str, Any]], k: int | None = None) -> dict[str, Any]:
    """The numbers of the module docstring, as a JSON-ready dict ``{"agents": [...]}`` (each agent with its
    ``k``: ``k``, or when ``k`` is ``None`` the fewest runs of any of its scenarios; a scenario of fewer runs than
    ``k`` has ``None`` for pass@k, pass^k and their intervals, and is named in the agent's ``fewer_runs_than_k``)."""
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for report in reports:
        facts = _run_facts(report)
        runs[facts["agent"]].append(facts)
    agents = []
    for name, agent_runs in runs.items():
        _split_scenarios(agent_runs)
        n_runs = len(agent_runs)
        names = list(dict.fromkeys(s for r in agent_runs for s in r["scenarios"]))
        by_name = {sname: [r["scenarios"][sname] for r in agent_runs if sname in r["scenarios"]] for sname in names}
        kk = k or min(map(len, by_name.values()), default=n_runs)
        scenarios = []
        for sname, outcomes in by_name.items():
            c = sum(o["passed"] for o in outcomes)
            entry = {"scenario": sname, **_rates(c, len(outcomes), kk)}
            entry["flaky"] = 0 < c < len(outcomes)
            entry["flipped_checks"] = _flipped([o["checks"] for o in outcomes]) if entry["flaky"] else []
            scenarios.append(entry)
        pooled_c = sum(s["passed"] for s in scenarios)
        pooled_n = sum(s["runs"] for s in scenarios)
        lo, hi = wilson(pooled_c, pooled_n)
        estimated = [s for s in scenarios if s["pass_k"] is not None]  # those with k runs
        at = _exact_mean(pass_at_k, estimated)
        hat = _exact_mean(pass_hat_k, estimated)
        tools = sum(r["tools"] for r in agent_runs)
        costs = [r["cost"] for r in agent_runs if r["cost"] is not None]
        tokens = [r["tokens"] for r in agent_runs if r["tokens"] is not None]
        agents.append({
            "agent": name, "runs": n_runs, "k": kk,
            "framework": next((r["framework"] for r in agent_runs if r["framework"]), None),
            "model": next((r["model"] for r in agent_runs if r["model"]), None),
            "pass_rate": pooled_c / pooled_n if pooled_n else None, "pass_rate_ci": [lo, hi],
            "pass_at_k": at,
            "pass_at_k_ci": _around(at, *_mean_pairs([s["pass_at_k_ci"] for s in estimated])) if estimated else None,
            "pass_k": hat,
            "pass_k_ci": _around(hat, *_mean_pairs([s["pass_k_ci"] for s in estimated])) if estimated else None,
            "fewer_runs_than_k": [s["scenario"] for s in scenarios if s["pass_k"] is None],
            "tool_success": sum(r["tools_ok"] for r in agent_runs) / tools if tools else None,
            "tokens_per_run": sum(tokens) / len(tokens) if tokens else None,
            "cost_per_run": sum(costs) / len(costs) if costs else None,
            "latency_ms_per_run": sum(r["latency_ms"] for r in agent_runs) / n_runs,
            "steps_per_run": sum(r["steps"] for r in agent_runs) / n_runs,
            "flaky_scenarios": [s["scenario"] for s in scenarios if s["flaky"]],
            "scenarios": scenarios,
        })
    cheapest = min((a["tokens_per_run"] for a in agents if a["tokens_per_run"]), default=None)
    for a in agents:
        a["efficiency"] = cheapest / a["tokens_per_run"] if cheapest and a["tokens_per_run"] else None
        a["ee_score"] = a["pass_rate"] * a["efficiency"] if a["efficiency"] is not None and a["pass_rate"] is not None \
            else None
    return {"agents": agents}


def _split_scenarios(runs: list[dict[str, Any]]) -> None:
    """Rename, in one agent's ``runs``, each scenario whose steps (their inputs, in order) differ from those of the
    first run of that name: another manifest's scenario of the same name (an older or newer manifest, another suite)
    is another scenario, ``NAME (MANIFEST)`` (``NAME (version N)`` when that is taken), not one more run of it:
    counted together, its other checks showed as flaky ones."""
    versions: dict[str, dict[tuple[str, ...], str]] = defaultdict(dict)  # name → step inputs → label
    for run in runs:
        renamed = {}
        for key, outcome in run["scenarios"].items():
            labels = versions[key]
            if outcome["inputs"] not in labels:
                label = key if not labels else f"{key} ({run['manifest']})"
                if label in labels.values():
                    label = f"{key} (version {len(labels) + 1})"
                labels[outcome["inputs"]] = label
            renamed[labels[outcome["inputs"]]] = outcome
        run["scenarios"] = renamed


def _flipped(runs: list[dict[str, bool]]) -> list[str]:
    """The checks whose verdict differs between runs (a check missing from a run counts as a verdict of its
    own), sorted; one pass over the runs, so k in the thousands stays linear."""
    verdicts: dict[str, set[bool | None]] = defaultdict(set)
    seen: Counter[str] = Counter()
    for checks in runs:
        for key, passed in checks.items():
            verdicts[key].add(passed)
            seen[key] += 1
    return sorted(key for key, values in verdicts.items() if len(values) + (seen[key] < len(runs)) > 1)


def _exact_mean(estimator: Any, scenarios: list[dict[str, Any]]) -> float | None:
    """The mean over ``scenarios`` of ``estimator`` (:func:`pass_at_k` or :func:`pass_hat_k`) of each one's runs,
    passes and k, computed exactly, as the nearest double; ``None`` for no scenario."""
    if not scenarios:
        return None
    return float(sum(estimator(s["runs"], s["passed"], s["k"]) for s in scenarios) / len(scenarios))


def _mean_pairs(values: list[list[float]]) -> list[float]:
    return [sum(v[0] for v in values) / len(values), sum(v[1] for v in values) / len(values)]


def parse_gate(gate: str) -> tuple[str, float]:
    """``METRIC=VALUE`` as ``(metric, bound)``. Raises ``ValueError`` naming the gate: a METRIC not in
    :data:`GATES`, or a VALUE that is not a share from 0 to 1 (every gate is a share: above 1 none can pass)."""
    metric, _, value = gate.partition("=")
    if metric not in GATES:
        raise ValueError(f"--fail-under {gate}: METRIC must be one of {', '.join(GATES)}")
    try:
        bound = float(value)
    except ValueError:
        raise ValueError(f"--fail-under {gate}: VALUE must be a number") from None
    if not 0 <= bound <= 1:
        raise ValueError(f"--fail-under {gate}: VALUE must be a share from 0 to 1")
    return metric, bound


def _gate(text: str) -> str:
    """The argparse type of ``--fail-under``: checked by :func:`parse_gate`, kept as written."""
    try:
        parse_gate(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--fail-under ")) from None
    return text


def gate_failures(summary: dict[str, Any], gates: list[str]) -> list[str]:
    """One message per agent and ``METRIC=VALUE`` gate it is below, or has no value for (no scenario graded,
    none with k runs for pass@k and pass^k, no tool called: a gate is met by a number, never by missing data).
    Raises ``ValueError`` for a bad gate (:func:`parse_gate`). VALUE is quoted as written (``{bound:g}`` printed
    0.1230000001 as 0.123)."""
    failures = []
    for gate in gates:
        metric, bound = parse_gate(gate)
        written = shown(gate.partition("=")[2].strip())
        for a in summary["agents"]:
            if a[metric] is None:
                why = "no tool call" if metric == "tool_success" else "no scenario graded" if not a["scenarios"] \
                    else f"no scenario with k = {a['k']} runs"
                failures.append(f"{shown(a['agent'])}: no {metric} ({why}) to hold against {written}")
            elif a[metric] < bound:
                failures.append(f"{shown(a['agent'])}: {metric} {_below(a[metric], bound)} < {written}")
    return failures


def _below(value: float, bound: float) -> str:
    """``value`` (less than ``bound``) with 3 decimals, or when those round up to ``bound`` or past it, as its
    shortest repr (which reads back as ``value`` itself, so it shows the difference): the failure never reads
    ``0.200 < 0.2``."""
    text = f"{value:.3f}"
    return text if float(text) < bound else repr(value)


# -- output ---------------------------------------------------------------------------------------------

def _f(x: Any, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def table(summary: dict[str, Any]) -> str:
    """The terminal table: one row per agent, then its scenarios."""
    head = ["agent / scenario", "runs", "k", "pass", "95% CI", "pass@k", "pass^k", "tools ok", "tokens/run",
            "USD/run", "ms/run", "steps/run", "flaky (checks flipped)"]
    rows = [head]
    for a in summary["agents"]:
        who = shown(a["agent"] + "".join(f" [{x}]" for x in (a["framework"], a["model"]) if x))
        rows.append([who, str(a["runs"]), str(a["k"]), _f(a["pass_rate"]),
                     f"{_f(a['pass_rate_ci'][0])}-{_f(a['pass_rate_ci'][1])}", _f(a["pass_at_k"]), _f(a["pass_k"]),
                     _f(a["tool_success"]), _f(a["tokens_per_run"], 0), _f(a["cost_per_run"], 6),
                     _f(a["latency_ms_per_run"], 0),
                     _f(a["steps_per_run"], 1), str(len(a["flaky_scenarios"]))])
        for s in a["scenarios"]:
            rows.append(["  " + shown(s["scenario"]), str(s["runs"]), str(s["k"]), _f(s["pass_rate"]),
                         f"{_f(s['pass_rate_ci'][0])}-{_f(s['pass_rate_ci'][1])}", _f(s["pass_at_k"]),
                         _f(s["pass_k"]), "", "", "", "", "", shown("; ".join(s["flipped_checks"]))])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Reliability over k runs</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #999;
padding:2px 6px;text-align:right}}td:first-child{{text-align:left}}</style></head><body>
<h1>Reliability over k runs</h1>
<table id="agents"><tr><th>agent</th><th>runs</th><th>k</th><th>pass rate</th><th>pass@k</th><th>pass^k</th>
<th>tokens/run</th><th>efficiency</th><th>E·E score</th></tr>
{rows}</table>
<h2>Success vs tokens per run</h2>
{scatter}
<h2>pass^k per scenario</h2>
{bars}
</body></html>
"""


def _text(name: str) -> str:
    """A name from the reports as the page shows it: escaped for HTML, and each character that does not print
    shown as its escape (:func:`~otel_agents.cli.shown`): a bidirectional control (U+202E) in an agent's or
    scenario's name reordered the text after it (a numeric reference to it does the same); ``data-agent`` too. The
    table's name cells are ``<bdi>`` as well, so right-to-left letters in a name keep to their cell."""
    return html.escape(shown(name))


def _row(a: dict[str, Any]) -> str:
    cells = [a["runs"], a["k"], _f(a["pass_rate"], 3), _f(a["pass_at_k"], 3), _f(a["pass_k"], 3),
             _f(a["tokens_per_run"], 0), _f(a["efficiency"], 3), _f(a["ee_score"], 3)]
    return (f'<tr data-agent="{_text(a["agent"])}"><td><bdi>{_text(a["agent"])}</bdi></td>'
            + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")


def _scatter(agents: list[dict[str, Any]]) -> str:
    agents = [a for a in agents if a["tokens_per_run"] is not None]  # tokens unknown: no place on the x axis
    w, h, m = 480, 300, 50
    top = max((a["tokens_per_run"] for a in agents), default=1) or 1
    dots = []
    for a in agents:
        x = m + (w - 2 * m) * a["tokens_per_run"] / top
        y = h - m - (h - 2 * m) * (a["pass_rate"] or 0)
        dots.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#36c"><title>{_text(a["agent"])}</title>'
                    f'</circle><text x="{x + 7:.1f}" y="{y - 7:.1f}" font-size="11">{_text(a["agent"])}</text>')
    axes = (f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="#000"/>'
            f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="#000"/>'
            f'<text x="{w / 2}" y="{h - 10}" font-size="12" text-anchor="middle">tokens per run (max {top:.0f})</text>'
            f'<text x="12" y="{h / 2}" font-size="12" transform="rotate(-90 12 {h / 2})" text-anchor="middle">'
            f'pass rate (0-1)</text>')
    return f'<svg id="scatter" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">{axes}{"".join(dots)}</svg>'


def _bars(agents: list[dict[str, Any]]) -> str:
    items = [(a["agent"], s) for a in agents for s in a["scenarios"]]
    w, bar = 560, 18
    h = 20 + len(items) * (bar + 6)
    out = []
    for i, (agent, s) in enumerate(items):
        y = 10 + i * (bar + 6)
        label = _text(f"{agent} / {s['scenario']}")
        out.append(f'<text x="0" y="{y + 13}" font-size="11">{label}</text>'
                   f'<rect x="260" y="{y}" width="{250 * (s["pass_k"] or 0):.1f}" height="{bar}" fill="#393"/>'
                   f'<text class="passk" x="{515}" y="{y + 13}" font-size="11">{_f(s["pass_k"], 3)}</text>')
    return f'<svg id="bars" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">{"".join(out)}</svg>'


def page(summary: dict[str, Any]) -> str:
    """The self-contained HTML page (inline SVG only)."""
    agents = summary["agents"]
    return _PAGE.format(rows="\n".join(_row(a) for a in agents), scatter=_scatter(agents), bars=_bars(agents))


def run(args: argparse.Namespace) -> int:
    """``otel-agents ecp report``: the exit status — 0 every gate met, 1 a ``--fail-under`` gate not met,
    2 a report that cannot be read or an output that cannot be written (or that is an input report)."""
    from . import written_over

    problem = written_over([("--json", args.json), ("--html", args.html)],
                           [("the input report", path) for path in args.reports])
    if args.json == args.html == "-":
        problem = "--json - and --html - both name standard output: give one of them a file"
    if problem:
        print(f"otel-agents ecp report: {problem}", file=sys.stderr)
        return 2
    try:
        summary = summarise(_distinct_runs(args.reports), args.k)
        failures = gate_failures(summary, args.fail_under)
    except (ReportError, ValueError) as exc:
        print(f"otel-agents ecp report: {exc}", file=sys.stderr)
        return 2
    summary["gates"] = {"fail_under": args.fail_under, "failures": failures}
    for note in _short_notes(summary):
        print(f"otel-agents ecp report: {note}", file=sys.stderr)
    print(table(summary), file=sys.stderr if "-" in (args.json, args.html) else sys.stdout)
    if args.json:
        text = json.dumps(summary, indent=2, allow_nan=False)
        if args.json == "-":
            print(text)
        elif not _write(args.json, text + "\n"):
            return 2
    if args.html == "-":
        sys.stdout.write(page(summary))
    elif args.html and not _write(args.html, page(summary)):
        return 2
    for failure in failures:
        print(f"otel-agents ecp report: below the gate: {failure}", file=sys.stderr)
    return 1 if failures else 0


def _short_notes(summary: dict[str, Any]) -> list[str]:
    """One note per agent with scenarios of fewer runs than its k: which (with their runs), and what its pass@k and
    pass^k are then (means over the others, or none)."""
    notes = []
    for a in summary["agents"]:
        short = [s for s in a["scenarios"] if s["scenario"] in a["fewer_runs_than_k"]]
        if not short:
            continue
        left = len(a["scenarios"]) - len(short)
        listed = ", ".join(f"{shown(s['scenario'])} ({s['runs']} run{'s' * (s['runs'] != 1)})" for s in short)
        notes.append(f"{shown(a['agent'])}: {len(short)} scenario(s) with fewer than --k {a['k']} runs, no pass@k or "
                     f"pass^k for them: {listed}; the agent's are "
                     + (f"the means over its {left} other scenario(s)" if left else "none"))
    return notes


def _distinct_runs(paths: list[str]) -> list[dict[str, Any]]:
    """The reports of ``paths``, each run once: a file given twice (a glob that overlaps another) or a copy of a
    report (the same ``audit.run_id``, which ``ecp run`` makes for each run) is one run, not k of them (it would
    raise n, and pass^k or pass@k with it); each one left out is said on standard error. Raises
    :class:`ReportError`."""
    import os

    out, seen = [], {}
    for path in paths:
        report = load(path)
        run_id = (report.get("audit") or {}).get("run_id")
        keys = [("file", os.path.realpath(path))]
        if isinstance(run_id, str) and run_id:
            keys.append(("run", run_id))
        first = next((seen[key] for key in keys if key in seen), None)
        if first is not None:
            why = "the same file" if first[0] == keys[0] else f"the same run (audit.run_id {shown(run_id)})"
            print(f"otel-agents ecp report: {shown(path)} is {why} as {shown(first[1])}: counted once",
                  file=sys.stderr)
            continue
        for key in keys:
            seen[key] = (keys[0], path)
        out.append(report)
    return out


def _write(path: str, text: str) -> bool:
    """Write ``text`` to ``path``; ``False`` (the reason on standard error) when it cannot be written."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        print(f"otel-agents ecp report: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return False
    return True
