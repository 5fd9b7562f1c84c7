"""Run the benchmarks and write ``benchmarks/results/*.json`` and the README table.

Usage (``make bench`` runs the first line in ``.bench-venv``, where the peer
instrumentors are installed)::

    python benchmarks/run.py                      # every group but instructions, full sizes (an hour on a busy
                                                  # 2-core machine)
    python benchmarks/run.py --only overhead      # one group: overhead | spans | fold | processor | memory |
                                                  # file | stream | collect | instructions
    python benchmarks/run.py --only overhead --frameworks pydantic_ai --variants native --rounds 100
                                                  # a focused comparison: only these variants, more rounds
    python benchmarks/run.py --memory-spans 100000 --rounds 20
    python benchmarks/run.py --quick --results /tmp/r --no-readme   # seconds: the smoke test's run
    python benchmarks/run.py --only instructions --frameworks agno,mcp   # CPU instructions (valgrind's
                                                  # callgrind): minutes a framework, not part of the default run
    python benchmarks/run.py --merge-instructions /tmp/r1/instructions.json,/tmp/r2/instructions.json
                                                  # no benchmark: these counts replace their frameworks' in
                                                  # results/instructions.json, the rest kept, the README rewritten
    python benchmarks/run.py --only instructions --frameworks crewai,agno --resume
                                                  # a stopped instructions run continued: what its journal
                                                  # (results/instructions.jsonl) holds is kept, the rest counted
    python benchmarks/run.py --merge-instructions benchmarks/results/instructions.jsonl
                                                  # or, counting nothing more, what a stopped run counted merged

Each job's JSON is written as soon as the job ends (the instructions group, which counts every framework in one
job, appends each counted process to ``instructions.jsonl`` as soon as it is counted), so a stopped run keeps what
it measured.

Each comparison runs in a process of its own (a child of this one), so the
variants compared with each other share one process and one machine state, and
no instrumentation patch or import of one comparison leaks into another. A workload of a framework
isolated in a venv of its own (Google ADK: ``.bench-venv-google_adk``) runs with that venv's python
when the framework is not installed here.
See ``benchmarks/README.md`` for what is measured and how to read the numbers.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
import time
import warnings
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

FRAMEWORKS = ("langchain", "pydantic_ai", "llama_index", "crewai", "smolagents", "openai_agents", "agno",
              "autogen_agentchat", "anthropic", "openai", "mcp", "a2a", "google_adk")
# --quick (the smoke test) leaves out the workloads whose framework takes seconds to import
# (llama-index-core ~4 s, crewai ~10 s on this machine); name them in --frameworks to run them anyway.
QUICK_FRAMEWORKS = ("langchain", "pydantic_ai")
GROUPS = ("overhead", "spans", "fold", "processor", "memory", "file", "stream", "collect", "instructions")
# what runs without --only: instructions needs valgrind and takes minutes a framework under it
DEFAULT_GROUPS = GROUPS[:-1]
README = os.path.join(ROOT, "benchmarks", "README.md")
START, END = "<!-- results:start -->", "<!-- results:end -->"


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join(DEFAULT_GROUPS),
                   help=f"comma-separated groups of {GROUPS} (default: all but instructions)")
    p.add_argument("--frameworks", default=None,
                   help=f"comma-separated workloads for 'overhead' and 'instructions' of {FRAMEWORKS} (default: all; "
                        f"with --quick: {','.join(QUICK_FRAMEWORKS)})")
    p.add_argument("--rounds", type=int, default=40, help="interleaved rounds per comparison (default 40)")
    p.add_argument("--batch", type=int, default=20, help="workload runs per timed batch (default 20)")
    p.add_argument("--fold-spans", type=int, default=120_000, help="spans in the fold trace set")
    p.add_argument("--memory-spans", type=int, default=1_000_000, help="spans streamed through the processor")
    p.add_argument("--file-spans", type=int, default=30_000, help="spans written by the file exporter")
    p.add_argument("--stream-spans", type=int, default=120_000, help="spans folded by `otel-agents fold`")
    p.add_argument("--collect-spans", type=int, default=300_000,
                   help="spans sent to one `otel-agents ecp collect` process")
    p.add_argument("--variants", default=None,
                   help="a focused comparison: time only none, ours and these variants (comma-separated, e.g. "
                        "native), so more rounds fit in the same time")
    p.add_argument("--instruction-runs", type=int, default=10,
                   help="instructions: runs counted per variant, after --instruction-warmup (default 10)")
    p.add_argument("--instruction-warmup", type=int, default=3, help="instructions: warm-up runs (default 3)")
    p.add_argument("--repeats", type=int, default=3,
                   help="instructions: processes per framework, to measure the counts' repeatability (default 3)")
    p.add_argument("--no-peers", action="store_true", help="skip the peer instrumentors even if installed")
    p.add_argument("--quick", action="store_true", help="tiny sizes (the smoke test): numbers mean nothing")
    p.add_argument("--results", default=os.path.join(ROOT, "benchmarks", "results"), help="where the JSON goes")
    p.add_argument("--no-readme", action="store_true", help="do not rewrite the README's results table")
    p.add_argument("--merge-instructions", metavar="FILE[,FILE...]",
                   help="run nothing: merge these instructions.json files (partial --only instructions runs; or "
                        "an instructions.jsonl journal, of a stopped run too) into "
                        "the one in --results, each framework counted in them replacing its old count, the others "
                        "kept; then rewrite the README (so the clock's results stay as they were timed)")
    p.add_argument("--resume", action="store_true",
                   help="instructions: keep the processes --results' instructions.jsonl holds (a stopped run's, "
                        "counted the same way on this commit) and count only the others")
    p.add_argument("--child", help=argparse.SUPPRESS)  # internal: run one job, print its JSON
    a = p.parse_args(argv)
    if a.quick:
        a.rounds, a.batch, a.fold_spans, a.memory_spans, a.file_spans, a.stream_spans = 2, 2, 60, 600, 60, 60
        a.collect_spans, a.instruction_runs, a.instruction_warmup, a.repeats = 600, 2, 1, 1
    if a.frameworks is None:
        a.frameworks = ",".join(QUICK_FRAMEWORKS if a.quick else FRAMEWORKS)
    return a


def _job(job: str, a: argparse.Namespace) -> dict[str, Any]:
    """One job, in this process: ``overhead:FRAMEWORK``, ``spans``, ``fold``, ``memory``, ``file``, ``stream``,
    ``collect`` or ``instructions``."""
    warnings.simplefilter("ignore")  # peers' deprecation warnings would print inside timed batches
    from benchmarks import collect, exporters, instructions, overhead, spans

    if job.startswith("overhead:"):
        return overhead.compare(job.split(":", 1)[1], rounds=a.rounds, batch=a.batch, peers=not a.no_peers,
                                only=set(a.variants.split(",")) if a.variants else None, quick=a.quick)
    if job == "spans":
        return spans.span_layer(rounds=a.rounds, batch=a.batch)
    if job == "fold":
        return exporters.fold_throughput(a.fold_spans, repeats=1 if a.quick else 3)
    if job == "processor":
        return exporters.processor_overhead(rounds=a.rounds, runs=2 if a.quick else 200)
    if job == "memory":
        return exporters.processor_memory(a.memory_spans)
    if job == "file":
        return exporters.file_throughput(a.file_spans)
    if job == "stream":
        result = exporters.stream_fold_throughput(a.stream_spans, rounds=2 if a.quick else 7)
        result["foreign"] = exporters.foreign_stream_throughput(min(a.stream_spans, 40_000), rounds=1 if a.quick else 3)
        result["held"] = exporters.held_stream_throughput(min(a.stream_spans, 40_000), rounds=1 if a.quick else 3)
        return result
    if job == "collect":
        return collect.collect_throughput(a.collect_spans)
    if job == "instructions":
        from benchmarks.harness import machine

        os.makedirs(a.results, exist_ok=True)
        return instructions.measure([f for f in a.frameworks.split(",") if f], runs=a.instruction_runs,
                                    warmup=a.instruction_warmup, repeats=a.repeats, peers=not a.no_peers,
                                    python_for=lambda framework: _python_for(f"overhead:{framework}"),
                                    journal=os.path.join(a.results, "instructions.jsonl"), resume=a.resume,
                                    stamp={"commit": _commit(), "machine": machine(), "quick": a.quick})
    raise SystemExit(f"unknown job {job!r}")


def _python_for(job: str) -> str:
    """The interpreter of a job: this one, or for a workload of an isolated framework (one whose
    module names a ``VENV``, e.g. Google ADK) that is not installed here, that venv's python."""
    if not job.startswith("overhead:"):
        return sys.executable
    import importlib
    import importlib.util

    module = importlib.import_module(f"benchmarks.workloads.{job.split(':', 1)[1]}")
    venv = getattr(module, "VENV", None)
    if venv is None or importlib.util.find_spec(module.IMPORT) is not None:
        return sys.executable
    python = os.path.join(ROOT, venv, "bin", "python")
    return python if os.path.exists(python) else sys.executable  # absent: the job reports the framework skipped


def _run_child(job: str, argv: list[str]) -> dict[str, Any]:
    cmd = [_python_for(job), os.path.abspath(__file__), *argv, "--child", job]
    t0 = time.perf_counter()
    # (stderr passes through for instructions: a line per framework as each finishes)
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True,
                          stderr=None if job == "instructions" else subprocess.PIPE)
    if done.returncode != 0:
        raise SystemExit(f"benchmark {job} failed:\n{(done.stderr or '')[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    a = _args(argv)
    if a.child:
        print(json.dumps(_job(a.child, a)))
        return 0
    if a.merge_instructions:
        return _merge_instructions(a)
    from benchmarks.harness import machine

    groups = [g for g in a.only.split(",") if g]
    unknown = set(groups) - set(GROUPS)
    if unknown:
        raise SystemExit(f"unknown group(s) {sorted(unknown)}; choose from {GROUPS}")
    frameworks = [f for f in a.frameworks.split(",") if f]
    if set(frameworks) - set(FRAMEWORKS):
        raise SystemExit(f"unknown framework(s) {sorted(set(frameworks) - set(FRAMEWORKS))}; choose from {FRAMEWORKS}")
    jobs = [f"overhead:{f}" for f in frameworks] if "overhead" in groups else []
    jobs += [g for g in groups if g != "overhead"]
    child_argv = [x for x in argv if x != "--no-readme"]
    meta = {"date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": _commit(),
            "machine": machine(), "quick": a.quick}
    os.makedirs(a.results, exist_ok=True)
    for job in jobs:
        print(f"benchmark {job} ...", flush=True)
        result = {**meta, "python": _python_for(job), **_run_child(job, child_argv)}
        _write(os.path.join(a.results, f"{job.replace(':', '-')}.json"), result)
        print(f"  {_one_line(job, result)}", flush=True)
    if not a.no_readme:
        from benchmarks.report import rewrite_readme

        rewrite_readme(README, a.results, START, END)
        print(f"results table written to {os.path.relpath(README, ROOT)}")
    return 0


def _write(path: str, result: dict[str, Any]) -> None:
    """``result`` as strict JSON at ``path``, whole or not at all (written beside it, then renamed over it: a run
    stopped while writing leaves the file it had)."""
    with open(path + ".part", "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2, allow_nan=False)
        f.write("\n")
    os.replace(path + ".part", path)


def _commit() -> str | None:
    """The commit checked out here (short hash), for the results' provenance; ``None`` outside a git checkout."""
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _merge_instructions(a: argparse.Namespace) -> int:
    """``--merge-instructions``: :func:`instructions.merge` of the given files into ``--results``'
    ``instructions.json``, then the README rewritten (unless ``--no-readme``)."""
    from benchmarks.instructions import from_journal, merge, read_journal

    def load(path: str) -> dict[str, Any]:
        if path.endswith(".jsonl"):
            return from_journal(read_journal(path))
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    path = os.path.join(a.results, "instructions.json")
    merged = merge(load(path) if os.path.exists(path) else None,
                   [load(p) for p in a.merge_instructions.split(",") if p])
    os.makedirs(a.results, exist_ok=True)
    _write(path, merged)
    print(f"{path}: {', '.join(merged['frameworks'])}")
    if not a.no_readme:
        from benchmarks.report import rewrite_readme

        rewrite_readme(README, a.results, START, END)
        print(f"results table written to {os.path.relpath(README, ROOT)}")
    return 0


def _one_line(job: str, r: dict[str, Any]) -> str:
    if job.startswith("overhead:"):
        if "skipped_framework" in r:
            return f"skipped: {r['skipped_framework']} [{r['wall_s']} s]"
        v = r["variants"]
        peers = ", ".join(f"{k} {v[k]['overhead_per_span_us']:.0f} µs/span" for k in v
                          if k not in ("ours", "ours_no_content", "ours_suppressed", "dispatch"))
        ratios = ", ".join(f"÷{k} {_interval(v[k]['ours_per_run_ratio'])}" for k in v if "ours_per_run_ratio" in v[k])
        wire = r.get("exported_bytes", {}).get("variants", {})
        sizes = ", ".join(f"{k.replace('ours_', 'ours/')} {x['bytes_per_run']:,}"
                          for k, x in wire.items() if "bytes_per_run" in x and not k.endswith("_no_content"))
        return (f"floor {r['floor_span_us']:.1f} µs/span; ours {v['ours']['overhead_per_run_us']:.0f} µs/run, "
                f"{v['ours']['overhead_per_span_us']:.0f} µs/span{'; ' + peers if peers else ''}; ours per run "
                f"{ratios or '-'}; bytes/run {sizes or '-'} [{r['wall_s']} s]")
    if job == "spans":
        return ", ".join(f"{k} {v['span_us']:.0f} µs ({v['vs_floor']['ratio']:.1f}×)" for k, v in r["shapes"].items()) + \
            f"; floor {r['floor_span_us']:.1f} µs [{r['wall_s']} s]"
    if job == "fold":
        foreign = ", ".join(f"{k} {v['spans_per_s']:,}" for k, v in r.get("foreign", {}).items())
        return f"{r['spans_per_s']:,} spans/s over {r['spans']:,} spans; peers' traces: {foreign} [{r['wall_s']} s]"
    if job == "processor":
        return (f"SDK {r['sdk_us_per_span']} µs/span, SDK + processor {r['sdk_processor_us_per_span']} µs/span: "
                f"{_interval(r['vs_sdk'])}× [{r['wall_s']} s]")
    if job == "memory":
        return (f"{r['spans']:,} spans, RSS {r['rss_after_warmup_mib']} → {r['rss_end_mib']} MiB, "
                f"flat={r['flat']} [{r['wall_s']} s]")
    if job == "collect":
        return (f"{r['spans_per_s']:,} spans/s of collect CPU ({r['vs_processor']}× the in-process processor's "
                f"cost per span); RSS {r['rss_after_warmup_mib']} → {r['rss_end_mib']} MiB, flat={r['flat']} "
                f"[{r['wall_s']} s]")
    if job == "instructions":
        spread = r["repeatability"]
        return (f"{len(r['frameworks'])} framework(s), {r['method']['repeats']} repeat(s)"
                + (f"; largest spread {100 * spread['max_spread']:.2f}% ({spread['max_spread_of']})" if spread else "")
                + f" [{r['wall_s']} s]")
    if job in ("file", "stream"):
        return f"{r['spans_per_s']:,} spans/s, {r['mib_per_s']} MiB/s [{r['wall_s']} s]"
    return ""


def _interval(x: dict[str, Any]) -> str:
    high = "∞" if x["high"] is None else f"{x['high']:.2f}"
    ratio = "∞" if x["ratio"] is None else f"{x['ratio']:.2f}"
    return f"{ratio} [{x['low']:.2f}, {high}]"


if __name__ == "__main__":
    sys.exit(main())
