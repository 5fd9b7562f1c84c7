"""``otel-agents demo --repeat K``: each agent graded K times, then reliability over the K runs.

Run ``r`` (1..K) serves the agent with ``OTEL_AGENTS_DEMO_SEED=r`` in its environment: the deterministic
source of variation of the example's fake brain. The correct ``agent`` ignores it; the ``flaky_agent`` twin
(where an example defines one: ``examples/plain_python/agent.py``) follows the faulty plan when the seed is a
multiple of 3, so it fails one run in three, the same runs every time. Each run is a real ``ecp run`` of the
example's manifest (reports under ``OUT/campaign/<framework>[-flaky]/run-<r>.json``); the campaign table is
``otel-agents ecp report`` over them (:mod:`.report`), written also as ``OUT/campaign/report.json`` and the
offline page ``OUT/campaign/report.html``. Frameworks: ``--frameworks`` (default ``plain_python``, the
fastest row).
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

SEED_VARIABLE = "OTEL_AGENTS_DEMO_SEED"


def run_campaign(args: Any, yaml: Any, base: dict[str, Any], examples: Path, out: Path, serve: list[str],
                 ecp: Path, frameworks: list[str], example_file: Any) -> int:
    """Grade every agent ``args.repeat`` times; print the campaign table; 0 when every run was graded."""
    from ..evaluations import load_report
    from ._children import map_all
    from .demo import ForkServer, ecp_run
    from .report import page, summarise, table

    campaign = out / "campaign"
    jobs: list[tuple[Path, Path]] = []
    for fw in frameworks:
        source = example_file(examples, fw)
        attrs = ["agent"] + (["flaky_agent"] if "def flaky_agent" in source.read_text(encoding="utf-8") else [])
        for attr in attrs:
            name = f"customer-support-{fw}" + ("-flaky" if attr == "flaky_agent" else "")
            folder = campaign / name.removeprefix("customer-support-")
            folder.mkdir(parents=True, exist_ok=True)
            for r in range(1, args.repeat + 1):
                command = ["env", f"{SEED_VARIABLE}={r}", *serve, "ecp", "serve", f"{source}:{attr}", "--name", name,
                           "--log-file", str(folder / f"run-{r}.log")]
                manifest = dict(base, name=f"{base.get('name', 'customer support')} ({name}, run {r})",
                                target="exec " + shlex.join(command))
                path = folder / f"run-{r}.yaml"
                path.write_text(yaml.safe_dump(manifest, sort_keys=False, width=1000), encoding="utf-8")
                report = folder / f"run-{r}.json"
                report.unlink(missing_ok=True)
                jobs.append((path, report))
    print(f"otel-agents demo --repeat {args.repeat}: {len(jobs)} `ecp run`s ...", flush=True)

    sockets = Path(tempfile.mkdtemp(prefix="otel-agents-demo-"))  # mode 0700: only we can reach the fork server
    graders = ForkServer.of_ecp_run(sockets, campaign)  # each `ecp run` a fork of one that imported ecp-runtime

    def grade(job: tuple[Path, Path]) -> None:
        manifest, report = job
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):  # no report: said below, with its log
            ecp_run([str(ecp), "run", "--manifest", str(manifest), "--json-out", str(report),
                     "--timeout", str(args.timeout)], report.with_suffix(".ecp.log"), args.timeout, graders)

    try:
        map_all(grade, jobs, args.jobs)  # a Ctrl-C: demo.run() ends the running ones (CHILDREN), not a wait on them
    finally:
        graders.stop()
        shutil.rmtree(sockets, ignore_errors=True)
    missing = [str(report) for _, report in jobs if not report.exists()]
    reports = [load_report(report) for _, report in jobs if report.exists()]
    summary = summarise(reports)
    (campaign / "report.json").write_text(json.dumps(summary, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    (campaign / "report.html").write_text(page(summary), encoding="utf-8")
    print()
    print(table(summary))
    print(f"\ncampaign: {campaign / 'report.html'} (JSON: {campaign / 'report.json'})")
    for report in missing:
        print(f"otel-agents demo: no report {report} (see its .ecp.log)")
    return 1 if missing else 0
