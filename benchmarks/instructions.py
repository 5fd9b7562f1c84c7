"""CPU instructions per run of each variant of the overhead comparison, counted by valgrind's callgrind.

Why: the clock's ratios on this shared machine also measure *where* code runs (a floor replayed in a
tight loop runs ~3× more instructions a nanosecond than our code between a framework's), and they move
with other tenants' load; an instruction count does neither (issue 40, ninth round). What is counted:

* the variants of :func:`overhead.lineup` — ``none``, ``ours``, ours with content off, ours with one
  vocabulary, each installed peer, and the SDK alone replaying our spans of one run (``attribute_floor``,
  the per-span target's floor) — each installed, warmed up and run by :func:`harness.time_interleaved`
  (one round, the variants in a shuffled order, garbage collected before each batch), after one uncounted
  batch of the uninstrumented workload (a process's first batch pays one-off costs) and between two counted
  ones (``none`` first, ``none_after`` last: the baseline is the lower, :func:`_baseline`), in one process
  per framework and repeat, under ``valgrind --tool=callgrind`` with ``PYTHONHASHSEED=0``;
* only each batch of ``runs`` runs: the harness calls a marker (``os.getsid``, which nothing else here
  calls) right before and after the batch, and callgrind dumps its counters at each marker
  (``--dump-before``), so start-up, imports, installation and warm-up fall outside the counted parts.
  Callgrind starts with its instrumentation off (``--instr-atstart=no``: the imports and set-up, most of
  a process's work, run several times faster) and the first marker switches it on (``callgrind_control``).

Instructions per run = the batch's count ÷ ``runs`` (or a workload's ``INSTRUCTION_RUNS``, when more); a
variant's overhead per run = its instructions per run − the uninstrumented run's (the lower of its two batches) of
the same process. Each framework runs ``repeats`` times (separate processes, the order
of the variants shuffled anew with each repeat's seed): a value is the median of the repeats, its interval
their lowest and highest, and a target is met (missed) when every repeat is on its side (beyond it).

``python -m benchmarks.instructions FRAMEWORK`` is the counted process (the runner starts it under
valgrind; alone it runs the same batches and prints the same JSON without counts).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import glob
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = "getsid"  # the libc function whose every call dumps callgrind's counters (--dump-before)
AFTER = "none_after"  # the uninstrumented batch counted again after the others


def _mark(marks: list[str], instrument: bool) -> Callable[[str], None]:
    def mark(name: str) -> None:
        if instrument and not marks:  # callgrind runs the set-up uninstrumented (~10× faster): switch it on
            subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True,
                           timeout=300)
        marks.append(name)
        os.getsid(0)

    return mark


def batches(framework: str, *, runs: int, warmup: int, seed: int, peers: bool = True,
            instrument: bool = False) -> dict[str, Any]:
    """The counted process: an uncounted batch of ``runs`` uninstrumented runs, then ``framework``'s variants,
    ``runs`` runs each after ``warmup``, markers around each batch (with ``instrument``, the first one switches
    callgrind's instrumentation on). Returns the
    markers' variant names in call order, the spans each variant exported per run and the spans the floor
    replays; or, when the framework is not installed here, why it was skipped."""
    from .harness import Timings, Variant, counting_provider, time_interleaved, versions
    from .overhead import _title, lineup, skipped_framework, spans_per_run

    module = importlib.import_module(f"benchmarks.workloads.{framework}")
    try:
        run = module.workload()
    except ImportError as e:
        return skipped_framework(module, e)
    provider, exporter = counting_provider()
    line = lineup(module, run, provider, peers=peers, only={"ours_no_content", "ours_one_vocabulary", *module.PEERS})
    line.variants = [v for v in line.variants if v.name != "floor"]
    # A process's first batch pays one-off costs its warm-up runs leave (A2A's counted ~1% over the batches after
    # it), which would land on whichever variant the shuffle puts first: one uncounted uninstrumented batch first.
    for _ in range(runs):
        run()
    # The uninstrumented batch, the baseline of every overhead, is counted before and after the shuffled others
    # (``none`` and ``none_after``; :func:`_baseline` takes the lower): one batch of a framework's own work off by a
    # fraction of a percent moved every overhead of its process (CrewAI's, issue 40 nineteenth round).
    marks: list[str] = []
    mark = _mark(marks, instrument)
    none = next(v for v in line.variants if v.name == "none")
    timings = Timings({}, {})
    for part in ([none], [v for v in line.variants if v is not none], [Variant(AFTER, none.run)]):
        t = time_interleaved(part, exporter, rounds=1, batch=runs, warmup=warmup, seed=seed, mark=mark)
        timings.seconds.update(t.seconds)
        timings.spans.update(t.spans)
    provider.shutdown()
    if any(timings.spans[AFTER]):
        raise RuntimeError(f"{framework}: the last uninstrumented batch exported spans (an instrumentation was not "
                           "removed cleanly)")
    counts = spans_per_run(timings, line, module)
    return {"framework": framework, "workload": _title(module), "marks": marks, "spans_per_run": counts,
            "floor_spans": len(line.ours_spans), "skipped": line.skipped,
            "without_content": sorted(line.without_content),
            "versions": versions(*module.FRAMEWORK_DISTS, *module.PEERS.values())}


def _counted(python: str, framework: str, *, runs: int, warmup: int, seed: int, peers: bool) -> dict[str, Any]:
    """:func:`batches` run by ``python`` under callgrind; adds ``instructions``: each variant's count per run."""
    with tempfile.TemporaryDirectory(prefix="callgrind-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--dump-before={MARKER}",
               f"--callgrind-out-file={out}", python, "-m", "benchmarks.instructions", framework, "--runs", str(runs),
               "--warmup", str(warmup), "--seed", str(seed), "--instrument", *([] if peers else ["--no-peers"])]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": "0"})
        if done.returncode != 0:
            raise RuntimeError(f"callgrind run of {framework} failed:\n{done.stderr[-4000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if "skipped_framework" in result:
            return result
        parts = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        if len(parts) != len(result["marks"]):
            raise RuntimeError(f"{framework}: {len(parts)} callgrind dumps for {len(result['marks'])} markers "
                               f"(something else called {MARKER}())")
        # a batch's count is the dump at its closing marker: everything since its opening one
        result["instructions"] = {result["marks"][i]: _summary(parts[i]) / runs
                                  for i in range(1, len(parts), 2)}
    return result


def _baseline(instructions: dict[str, float]) -> float:
    """The uninstrumented run's instructions in one process: the lower of its batch before the other variants
    (``none``) and after them (``none_after``; a count of an older harness has ``none`` alone).

    Why the lower: what moves a batch of the same code between batches of one process is work added to it (a
    framework's thread-pool machinery running more or less often, a cache filled, a collection), not work taken
    away, so the lower batch is nearer the run's own work; the mean would keep half of such a batch's excess, and
    every overhead of the process carries the baseline's error. Taking the lower can only raise an overhead
    (ours and the peers' alike), never flatter ours."""
    return min(instructions["none"], instructions.get(AFTER, instructions["none"]))


def _summary(path: str) -> int:
    """The instruction count of one callgrind dump (its ``summary:`` line)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"{path} has no summary line")


def _interval(values: list[float]) -> dict[str, float]:
    """The median of the repeats' values and their range (unrounded: ``harness.rounded`` makes it JSON)."""
    return {"ratio": statistics.median(values), "low": min(values), "high": max(values)}


def _framework(framework: str, counted: list[dict[str, Any]]) -> dict[str, Any]:
    """One framework's repeats → instructions per run, ratios and the stated targets' verdicts."""
    from .harness import rounded, verdict
    from .overhead import stated_targets

    module = importlib.import_module(f"benchmarks.workloads.{framework}")
    first = counted[0]
    spans = first["spans_per_run"]
    # (a peer that made no span of the workload was counted, but is skipped: it has no ratio to compare)
    names = [name for name in first["instructions"] if name not in first["skipped"] and name != AFTER]
    if any(c["spans_per_run"] != spans for c in counted):
        raise RuntimeError(f"{framework}: spans per run differ between repeats: "
                           f"{[c['spans_per_run'] for c in counted]}")
    own = [{**c["instructions"], "none": _baseline(c["instructions"])} for c in counted]
    over: dict[str, list[float]] = {name: [] for name in names}  # per repeat; the floor: its own count
    for counts in own:
        for name in names:
            over[name].append(counts[name] if name in ("none", "attribute_floor") else counts[name] - counts["none"])

    def ratios(mine: str, theirs: str) -> list[float]:
        # per span against the floor (it replays our spans of one run: floor_spans of them)
        scale = first["floor_spans"] / spans[mine] if theirs == "attribute_floor" else 1.0
        return [scale * a / b if b > 0 else float("inf") for a, b in zip(over[mine], over[theirs])]

    variants: dict[str, Any] = {}
    for name in names:
        values = over[name]
        middle = statistics.median(values)
        variants[name] = {"spans_per_run": first["floor_spans"] if name == "attribute_floor" else spans[name],
                          "instructions_per_run": round(statistics.median(counts[name] for counts in own)),
                          "repeats": [round(counts[name]) for counts in own],
                          "spread": round((max(values) - min(values)) / abs(middle), 4) if middle else None}
        if name == "none" and all(AFTER in c["instructions"] for c in counted):
            variants[name]["batches"] = [[round(c["instructions"]["none"]), round(c["instructions"][AFTER])]
                                         for c in counted]
        if name not in ("none", "attribute_floor"):
            variants[name]["overhead_per_run"] = round(middle)
            variants[name]["overhead_repeats"] = [round(v) for v in values]
    without_content = set(first["without_content"])
    for name in ("ours", "ours_no_content", "ours_one_vocabulary"):
        if name in variants:
            variants[name]["per_span_vs_attribute_floor"] = rounded(_interval(ratios(name, "attribute_floor")), 2)
    for label in module.PEERS:
        if label not in variants:
            continue
        variants[label]["ours_per_run_ratio"] = rounded(_interval(ratios("ours", label)))
        if label in without_content and "ours_no_content" in variants:
            variants[label]["records_content"] = False
            variants[label]["ours_no_content_per_run_ratio"] = rounded(_interval(ratios("ours_no_content", label)))
        if "ours_one_vocabulary" in variants:
            variants[label]["ours_one_vocabulary_per_run_ratio"] = rounded(_interval(ratios("ours_one_vocabulary",
                                                                                             label)))
    targets = {}
    for key, mine, theirs, bound in stated_targets(module, set(variants), without_content):
        values = ratios(mine, theirs)
        interval = _interval(values)
        # an overhead counted at or below zero (ours, or the peer's) says the uninstrumented run is no baseline of
        # it (A2A's, while a2a-sdk's own telemetry, which ours stands down, ran in it): no ratio of it is judged
        counted = all(v > 0 for v in over[mine]) and all(v > 0 for v in over[theirs])
        targets[key] = {"target": bound, **rounded(interval, 2 if theirs == "attribute_floor" else 3),
                        "verdict": verdict(interval, bound) if counted else None,
                        "repeats": [rounded({"value": v})["value"] for v in values]}
    return {"framework": framework, "workload": first["workload"], "python": first["python"],
            "variants": variants, "skipped": first["skipped"], "targets": targets, "versions": first["versions"]}


def runs_for(framework: str, runs: int) -> int:
    """Runs counted a batch for ``framework``: ``runs``, or its workload's ``INSTRUCTION_RUNS`` when more (a
    workload whose batches vary more than a short batch can resolve: A2A's)."""
    module = importlib.import_module(f"benchmarks.workloads.{framework}")
    return max(runs, getattr(module, "INSTRUCTION_RUNS", 0))


def measure(frameworks: list[str], *, runs: int, warmup: int, repeats: int, peers: bool,
            python_for: Callable[[str], str], journal: str | None = None, resume: bool = False,
            stamp: dict[str, Any] | None = None) -> dict[str, Any]:
    """Count every framework's variants ``repeats`` times (``python_for(framework)`` runs its process: an
    isolated framework's venv); a JSON-ready result, built by :func:`from_journal` from the counted processes.

    ``journal``: a JSON Lines file to which each counted process (one framework, one repeat) is appended, flushed
    and synced as soon as it is counted (:func:`append`), so a run that is stopped keeps what it counted; a new run
    empties it first. With ``resume``, the processes it already holds, counted the same way on ``commit``, are
    kept and only the others are counted. ``stamp``: what each record also says (the runner's ``commit``,
    ``machine``, ``quick``); a journal is resumed only on the same ``commit``. Raises ``SystemExit`` when
    valgrind is not installed or the journal to resume was counted otherwise, ``RuntimeError`` when a counted
    process fails or its markers and dumps disagree."""
    method = {"tool": _tool(), "PYTHONHASHSEED": "0", "runs": runs, "warmup": warmup, "repeats": repeats,
              "peers": peers}
    stamp = stamp or {}
    commit = stamp.get("commit")
    records = []
    if journal is not None and resume and os.path.exists(journal):
        records = read_journal(journal)
        for r in records:
            if r["method"] != method or r["commit"] != commit:
                theirs = {**r["method"], "commit": r["commit"]}
                ours = {**method, "commit": commit}
                differ = ", ".join(f"{k} {theirs.get(k)!r} there, {ours[k]!r} here" for k in ours
                                   if theirs.get(k) != ours[k])
                raise SystemExit(f"{journal}: counted otherwise ({differ}); run without --resume to count anew")
    elif journal is not None:
        with open(journal, "w", encoding="utf-8"):
            pass  # a new run: a new journal
    for framework in frameworks:
        python, n = python_for(framework), runs_for(framework, runs)
        mine = [r for r in records if r["framework"] == framework]
        if any("skipped_framework" in r["counted"] for r in mine):
            continue
        held = {r["repeat"] for r in mine}
        for repeat in range(repeats):
            if repeat in held:
                continue
            date, t0 = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), time.perf_counter()
            c = _counted(python, framework, runs=n, warmup=warmup, seed=repeat + 1, peers=peers)
            record = {"framework": framework, "repeat": repeat, "date": date, "commit": commit, **stamp,
                      "method": method, "runs": n, "wall_s": round(time.perf_counter() - t0, 1),
                      "counted": c if "skipped_framework" in c else {**c, "python": python}}
            if journal is not None:
                append(journal, record)
            records.append(record)
            if "skipped_framework" in c:
                break
        built = from_journal([r for r in records if r["framework"] == framework])["frameworks"][framework]
        if "skipped_framework" not in built:
            print(f"  instructions {framework}: {_one_line(built)}", file=sys.stderr, flush=True)
    return from_journal([r for r in records if r["framework"] in frameworks], method=method)


def _tool() -> str:
    """The counting tool and its version (``valgrind-3.19.0 --tool=callgrind``); ``SystemExit`` without valgrind."""
    if shutil.which("valgrind") is None:
        raise SystemExit("the instructions group needs valgrind (apt-get install valgrind)")
    version = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    return f"{version} --tool=callgrind"


def append(journal: str, record: dict[str, Any]) -> None:
    """One line of strict JSON appended to ``journal``, flushed and synced before this returns (a process stopped
    after it keeps the line; one stopped inside it leaves at most a last line without its newline, which
    :func:`read_journal` drops)."""
    line = json.dumps(record, allow_nan=False) + "\n"
    with open(journal, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def read_journal(journal: str) -> list[dict[str, Any]]:
    """The records of a journal :func:`append` wrote, in order. A last line without its newline (a write that was
    stopped) is dropped with a note on stderr and cut from the file, so lines appended after it stay lines of
    their own. Raises ``SystemExit`` naming the file and line of any other line that is not a record."""
    with open(journal, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    if lines[-1]:
        print(f"{journal}: line {len(lines)} was cut short (a stopped write): dropped", file=sys.stderr)
        with open(journal, "r+", encoding="utf-8") as f:
            f.truncate(len(text.encode("utf-8")) - len(lines[-1].encode("utf-8")))
    records = []
    for number, line in enumerate(lines[:-1], 1):
        try:
            record = json.loads(line, parse_constant=_no_constant)
        except ValueError as e:
            raise SystemExit(f"{journal}: line {number} is not strict JSON ({e})") from None
        missing = {"framework", "repeat", "date", "commit", "method", "runs", "counted"} - set(record) \
            if isinstance(record, dict) else {"an object"}
        if missing:
            raise SystemExit(f"{journal}: line {number} lacks {', '.join(sorted(missing))}")
        records.append(record)
    return records


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def from_journal(records: list[dict[str, Any]], method: dict[str, Any] | None = None) -> dict[str, Any]:
    """An ``instructions.json`` result from a journal's records (:func:`read_journal`): each framework, in the
    order first counted, from the repeats it holds (a framework of a stopped run may hold fewer than asked; its
    ``variants``' ``repeats`` say how many), with ``counted``: the date its first repeat started and its commit.
    ``method``: the run's (default: the last record's). Raises ``SystemExit`` when the records were counted
    differently (their counts would not compare) or there are none."""
    if not records:
        raise SystemExit("no counted process to build the instructions results from")
    method = dict(method or records[-1]["method"])
    frameworks: dict[str, Any] = {}
    for framework in dict.fromkeys(r["framework"] for r in records):
        mine = [r for r in records if r["framework"] == framework]
        for r in mine:
            if r["method"] != records[-1]["method"] or r["commit"] != mine[0]["commit"] or r["runs"] != mine[0]["runs"]:
                raise SystemExit(f"{framework}: repeats counted with different methods or commits do not compare")
        skipped = [r["counted"] for r in mine if "skipped_framework" in r["counted"]]
        if skipped:
            frameworks[framework] = skipped[0]
            continue
        mine.sort(key=lambda r: r["repeat"])
        result = _framework(framework, [r["counted"] for r in mine])
        result["wall_s"] = round(sum(r.get("wall_s", 0.0) for r in mine), 1)
        result["runs"] = mine[0]["runs"]
        result["counted"] = {"date": mine[0]["date"], "commit": mine[0]["commit"]}
        frameworks[framework] = result
    method.pop("peers", None)
    # (a framework skipped, not installed where it ran, has no variants to count)
    counted = [len(x["variants"]["none"]["repeats"]) for x in frameworks.values() if "skipped_framework" not in x]
    about = {k: records[-1][k] for k in ("machine", "quick") if k in records[-1]}
    return {"date": min(r["date"] for r in records), "commit": records[0]["commit"], **about, "method": method,
            "frameworks": frameworks,
            "repeatability": repeatability(frameworks, min(counted)) if counted else None}


def repeatability(frameworks: dict[str, Any], repeats: int) -> dict[str, Any] | None:
    """How far the repeats of a measurement agree: the largest spread ((highest − lowest) ÷ median) of a
    variant's overhead per run, and of a target's ratio; and whether each target's repeats all fall on the
    same side of it (then one pass would have given the same verdicts). ``None`` for a single repeat."""
    if repeats < 2:
        return None
    variants = [(x["spread"], f"{fw}/{name}") for fw, r in frameworks.items() for name, x in r.get("variants", {}).items()
                if x.get("spread") is not None]
    targets = [((t["high"] - t["low"]) / t["ratio"], f"{fw}/{key}") for fw, r in frameworks.items()
               for key, t in r.get("targets", {}).items() if t["ratio"] and t["high"] is not None]
    if not variants:
        return None
    spread, where = max(variants)
    ratio_spread, ratio_where = max(targets) if targets else (0.0, None)
    return {"repeats": repeats, "max_spread": spread, "max_spread_of": where, "max_ratio_spread": round(ratio_spread, 4),
            "max_ratio_spread_of": ratio_where,
            "verdicts_agree": all(t["verdict"] is not None for r in frameworks.values()
                                  for t in r.get("targets", {}).values())}


def merge(base: dict[str, Any] | None, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """``base`` (an ``instructions.json``, or ``None``) with the frameworks of ``parts`` (later ``--only
    instructions`` results) merged in, in order: a framework counted again replaces its count, the others keep
    theirs, a framework skipped replaces none. Each framework keeps ``counted``: the date its run started and the
    commit it ran on (``None``: not recorded). Raises ``SystemExit`` when a result was counted by another tool or
    with other runs, warm-up or hash seed (its counts would not compare)."""
    results = ([base] if base else []) + parts
    if not results:
        raise SystemExit("no instructions results to merge")
    method = {k: v for k, v in results[-1]["method"].items() if k != "note"}  # (a note described the old counts)
    for r in results:
        for key in ("tool", "PYTHONHASHSEED", "runs", "warmup"):
            if r["method"][key] != method[key]:
                raise SystemExit(f"instructions counted with {key} {r['method'][key]!r} and {method[key]!r}: "
                                 "their counts do not compare")
    frameworks: dict[str, Any] = {}
    for r in results:
        for framework, x in r["frameworks"].items():
            if "skipped_framework" in x and framework in frameworks:
                continue
            frameworks[framework] = {**x, "counted": x.get("counted") or {"date": r["date"],
                                                                          "commit": r.get("commit")}}
    repeats = {framework: len(x["variants"]["none"]["repeats"]) for framework, x in frameworks.items()
               if "skipped_framework" not in x}
    counts = sorted(set(repeats.values()), key=lambda n: (list(repeats.values()).count(n), n))  # commonest last
    if len(counts) > 1:  # e.g. "3 (a2a) or 1 (the others)"
        method["repeats"] = " or ".join([*(f"{n} ({', '.join(f for f, k in repeats.items() if k == n)})"
                                           for n in counts[:-1]), f"{counts[-1]} (the others)"])
    elif counts:
        method["repeats"] = counts[0]
    several = {framework: frameworks[framework] for framework, n in repeats.items() if n > 1}
    return {"date": max(x["counted"]["date"] for x in frameworks.values()),
            **{k: v for k, v in results[-1].items() if k in ("machine", "python", "quick")}, "method": method,
            "frameworks": frameworks,
            "repeatability": repeatability(several, max(repeats[f] for f in several)) if several else None}


def _one_line(r: dict[str, Any]) -> str:
    v = r["variants"]
    floor = v["ours"]["per_span_vs_attribute_floor"]["ratio"]
    peers = ", ".join(f"÷{k} {x['ours_per_run_ratio']['ratio']:.2f}" for k, x in v.items() if "ours_per_run_ratio" in x)
    return (f"run {v['none']['instructions_per_run'] / 1e6:.2f}M, ours +{v['ours']['overhead_per_run'] / 1e6:.3f}M "
            f"(per span {floor:.2f}× the SDK alone){'; ' + peers if peers else ''} [{r['wall_s']} s]")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="The counted process of the instructions group (see the docstring).")
    p.add_argument("framework")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--instrument", action="store_true", help="switch callgrind's instrumentation on at the first marker")
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    print(json.dumps(batches(a.framework, runs=a.runs, warmup=a.warmup, seed=a.seed, peers=not a.no_peers,
                             instrument=a.instrument)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
