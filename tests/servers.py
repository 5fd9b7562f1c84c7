"""Test servers in child processes on free loopback ports: started, waited for, stopped (A2A, MCP, ECP tests)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import tempfile
import time
from typing import Any, Iterator


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the OS's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def child_server(argv: list[str], port: int, *, timeout: float = 90.0, **popen: Any) -> Iterator[subprocess.Popen]:
    """Run ``argv`` (``popen``: more ``subprocess.Popen`` arguments, e.g. ``env``, ``cwd``) until it accepts a
    connection on 127.0.0.1:``port``, waiting up to ``timeout`` seconds; yields the process, terminated at exit.
    Its stderr goes to a temporary file (a pipe nobody reads could fill and stall the server).

    Raises:
        RuntimeError: the process exited, or did not listen within ``timeout`` (with the end of its stderr).
    """
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, **popen)
        try:
            deadline = time.monotonic() + timeout
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    err.seek(0)
                    raise RuntimeError(f"{' '.join(argv[:2])} did not start: "
                                       + err.read().decode(errors="replace")[-2000:])
                time.sleep(0.1)
            yield proc
        finally:
            proc.terminate()
            proc.wait(timeout=30)
