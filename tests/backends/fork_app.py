"""A pre-forking server in miniature (gunicorn's model), with no otel-agents code (issue 29).

``python fork_app.py WORKERS RUNS_PER_WORKER NAME...``: the master imports the frameworks (so the
instrumentation and the exporters are set up before the fork, as under ``opentelemetry-instrument
gunicorn``), runs the first example once, forks ``WORKERS`` workers that each run every named
example ``RUNS_PER_WORKER`` times and exit normally, runs the first example once more while they
work, and waits for them. Exits 1 if a worker failed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import runs  # noqa: E402 - the examples: plain framework code over fake models
from otel_agents.instrumentors import FRAMEWORKS  # noqa: E402


def main(argv: list[str]) -> int:
    workers, per_worker, names = int(argv[0]), int(argv[1]), argv[2:]
    for name in names:
        __import__(FRAMEWORKS[name].import_name)
    runs.RUNS[names[0]]()  # in the master, before the fork: its spans may still wait in the batch queue
    pids = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            for _ in range(per_worker):
                for name in names:
                    runs.RUNS[name]()
            sys.exit(0)  # a normal exit: the SDK's atexit hook shuts the provider down (flush)
        pids.append(pid)
    runs.RUNS[names[0]]()
    failed = [pid for pid in pids if os.waitpid(pid, 0)[1] != 0]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
