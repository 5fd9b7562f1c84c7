"""Run a function in a real forked child of the test process and read back what it reports (a JSON file).

The child does its work (``child()`` returns a JSON-able report, or raises), writes the report and leaves with
``os._exit``: it never returns into pytest, runs none of the parent's exit handlers and flushes none of its
buffers. A child that hangs (a lock held at the fork) writes every thread's stack (``faulthandler``) and is ended
by ``SIGALRM``; :func:`wait` gives up after ``timeout`` seconds and kills it, and fails the test with those stacks.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import time
import traceback
from pathlib import Path
from typing import Any, Callable


def start(child: Callable[[], Any], report: Path, *, alarm_s: int = 60) -> int:
    """Fork; in the child run ``child()`` and write ``{"report": its result}`` (or ``{"error": traceback}``) to
    ``report``; in the parent return the child's pid at once."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # not pytest-timeout's handler: a hang just ends the child
        signal.alarm(alarm_s)
        stacks = open(_stacks(report), "w", encoding="utf-8")  # noqa: SIM115 - open until os._exit
        faulthandler.dump_traceback_later(max(alarm_s - 1, 1), file=stacks)  # a hang: its stacks, before SIGALRM
        try:
            out: dict[str, Any] = {"report": child()}
            code = 0
        except BaseException:  # noqa: BLE001 - reported to the parent, which fails the test with it
            out = {"error": traceback.format_exc()}
        report.write_text(json.dumps(out), encoding="utf-8")
    finally:
        os._exit(code)


def _stacks(report: Path) -> Path:
    return report.with_name(report.name + ".stacks")


def wait(pid: int, report: Path, *, timeout: float = 90.0) -> Any:
    """Wait for the child ``pid`` (killed past ``timeout`` seconds) and return its report; fails the test with
    the child's traceback when it raised, or when it died or hung without reporting."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            stacks = _stacks(report)
            where = stacks.read_text(encoding="utf-8") if stacks.exists() else ""
            raise AssertionError(f"the forked child hung (killed after {timeout} s){where and ':'}\n{where}")
        time.sleep(0.02)
    if not report.exists():
        stacks = _stacks(report)
        where = stacks.read_text(encoding="utf-8") if stacks.exists() else ""
        raise AssertionError(f"the forked child died without a report (wait status {status}){where and ':'}\n{where}")
    out = json.loads(report.read_text(encoding="utf-8"))
    assert "error" not in out, f"the forked child raised:\n{out['error']}"
    return out["report"]


def run(child: Callable[[], Any], report: Path, *, timeout: float = 90.0) -> Any:
    """:func:`start` then :func:`wait`: ``child()``'s report, from a forked child."""
    return wait(start(child, report), report, timeout=timeout)
