"""CPU seconds of each test file: what to cut when ``make test`` runs long (its limit is CPU, not workers).

A pytest plugin and its report. The plugin appends one JSON line per test to ``$TEST_CPU_OUT.<worker>.jsonl``:
node id, CPU of the pytest process (user + sys, ``RUSAGE_SELF``, its threads included), CPU of the child
processes it waited for during the test (``RUSAGE_CHILDREN``: a process counts once waited for, so a
server a module fixture starts counts in the test that stops it), and wall seconds. A fixture's set-up
counts in the first test that needs it. Run it, then rank the files::

    rm -f /tmp/test-cpu.*.jsonl
    TEST_CPU_OUT=/tmp/test-cpu PYTHONPATH=scripts .venv/bin/python -m pytest -n 2 --dist loadfile -p cpu_per_test
    .venv/bin/python scripts/cpu_per_test.py /tmp/test-cpu 30

Measure on bytecode already written (``PYTHONDONTWRITEBYTECODE`` unset, as ``make test`` runs): without it
every process the tests start compiles our sources again.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import resource
import sys
import time

import pytest

_out = None


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    global _out
    if _out is None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out = open(f"{os.environ.get('TEST_CPU_OUT', 'test-cpu')}.{worker}.jsonl", "a", encoding="utf-8")
    own, children, start = *_cpu(), time.monotonic()
    yield
    own_after, children_after = _cpu()
    _out.write(json.dumps([item.nodeid, round(own_after - own, 3), round(children_after - children, 3),
                           round(time.monotonic() - start, 3)]) + "\n")
    _out.flush()


def rank(prefix: str, top: int = 30) -> str:
    """The files of the lines under ``prefix``, most CPU first: total, own, children, wall (seconds), tests."""
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for path in glob.glob(f"{prefix}.*.jsonl"):
        with open(path, encoding="utf-8") as f:
            for line in f:
                node, own, children, wall = json.loads(line)
                row = files[node.split("::")[0]]
                row[0] += own
                row[1] += children
                row[2] += wall
                row[3] += 1
    total = [sum(row[i] for row in files.values()) for i in range(3)]
    lines = [f"all {len(files)} files: {total[0] + total[1]:.0f} s of CPU (own {total[0]:.0f}, children "
             f"{total[1]:.0f}), wall {total[2]:.0f} s summed over tests"]
    for name, (own, children, wall, n) in sorted(files.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        lines.append(f"{own + children:7.1f}  own {own:6.1f}  children {children:6.1f}  wall {wall:6.1f}  "
                     f"tests {n:4d}  {name}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(rank(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30))
