"""The child processes ``otel-agents demo`` starts (``ecp run``, fork servers, ``--venv`` demos), and ending them
on Ctrl-C.

Each child starts in a session (so a process group) of its own: a Ctrl-C in the terminal interrupts the demo
alone, which then ends every child it started, with the processes those started in turn (``ecp run``'s agent
servers): SIGTERM to each child's group (a ``--venv`` demo ends its own children on it, as on Ctrl-C), SIGKILL to
the groups after :data:`GRACE` seconds. Not SIGINT: a demo started in the background (``&``, a CI runner without job
control) has SIGINT ignored, and its children inherit that. Before, the demo waited for the ``ecp run``
processes already started to finish their manifests (13 s with four), and a child demo's children outlived it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Sequence

GRACE = 5.0
"""Seconds the children get to end after their interrupt signal, before SIGKILL."""


class Children:
    """The running children, each with whether it has children of its own to end. Thread-safe (the ``ecp run`` processes
    start and end in a pool's threads)."""

    def __init__(self) -> None:
        self._running: dict[subprocess.Popen[Any], bool] = {}
        self._lock = threading.Lock()
        self.stopping = threading.Event()  # set by stop(): no child starts after it

    def popen(self, command: Sequence[str], *, ends_its_own: bool = False, **kwargs: Any) -> subprocess.Popen[Any]:
        """``subprocess.Popen(command, **kwargs)`` in a session of its own, kept until :meth:`forget`;
        ``ends_its_own``: it ends children of its own on SIGTERM (a ``--venv`` demo), so it gets twice the grace.

        Raises:
            OSError: it could not start, or :meth:`stop` has begun (``"the demo was interrupted"``).
        """
        with self._lock:
            if self.stopping.is_set():
                raise OSError("the demo was interrupted")
            proc = subprocess.Popen(command, start_new_session=True, **kwargs)
            self._running[proc] = ends_its_own
        return proc

    def forget(self, proc: subprocess.Popen[Any]) -> None:
        """``proc`` has been waited for: no longer one to stop."""
        with self._lock:
            self._running.pop(proc, None)

    def run(self, command: Sequence[str], timeout: float, **kwargs: Any) -> int:
        """:meth:`popen`, then its exit status (as ``subprocess.run(...).returncode``).

        Raises:
            subprocess.TimeoutExpired: it did not end within ``timeout`` seconds (its group is killed first).
            OSError: as :meth:`popen`.
        """
        proc = self.popen(command, **kwargs)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            self.forget(proc)

    def stop(self, grace: float = GRACE) -> int:
        """End every running child and its group: SIGTERM, then SIGKILL to the groups after
        ``grace`` seconds (a group whose leader ended may still hold its children). Returns how many children
        there were; none starts afterwards."""
        with self._lock:
            self.stopping.set()
            running = dict(self._running)
        for proc in running:
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc, ends_its_own in running.items():
            # a --venv demo gives its own children the grace first: twice as long
            left = deadline + (grace if ends_its_own else 0.0) - time.monotonic()
            try:
                proc.wait(max(0.0, left))
            except subprocess.TimeoutExpired:
                pass
        for proc in running:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
        return len(running)


def _signal_group(proc: subprocess.Popen[Any], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the session's leader: its process group id is its pid
    except (ProcessLookupError, PermissionError):  # the group has ended
        pass


def map_all(fn: Callable[[Any], Any], items: Iterable[Any], jobs: int) -> None:
    """``fn`` on every item, ``jobs`` at a time; an exception (a Ctrl-C in the main thread) returns at once,
    without waiting for the calls running (the caller ends their processes, :meth:`Children.stop`; they then
    return) and with the queued ones cancelled: a ``ThreadPoolExecutor``'s ``with`` waited for them all."""
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        list(pool.map(fn, items))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


CHILDREN = Children()
"""The demo's children (one demo a process)."""

__all__ = ["CHILDREN", "GRACE", "Children", "map_all"]
