"""A throw-away server process on 127.0.0.1 for the end-to-end tests: what Phoenix's and MLflow's share.

Standard library only: the tests import the servers' scripts (``phoenix/server.py``,
``mlflow/server.py``) from the project's venv, while each server runs from a venv of its own.

A :class:`LocalServer` gets a free loopback port (unless given one), a temporary working directory
(its database, its log and ``TMPDIR``; removed at stop), an environment without the caller's
``OTEL_*`` variables nor the server's own prefix (so a developer's settings cannot point it at
another store), its own process group (a Ctrl-C meant for the test runner does not reach it, and
``stop()`` ends all of it), and a readiness poll of its health URL. Subclasses say how to start it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """One server process. ``start()`` blocks until ``GET <health_path>`` answers 200, or raises
    ``FileNotFoundError`` (no interpreter), ``RuntimeError`` (it exited) or ``TimeoutError``, with the
    tail of its log.

    Subclasses set ``name`` (for messages and the log file), ``env_prefix`` (the server's own
    variables, dropped from the caller's environment), ``health_path``, ``provision_hint``, and
    implement :meth:`command` and :meth:`server_env`.

    Args:
        python: the interpreter of the server's venv.
        port: the loopback HTTP port; ``0`` = a free one.
        startup_timeout: seconds to wait until it is ready.
    """

    name = "server"
    env_prefix = "SERVER_"
    health_path = "/health"
    provision_hint = ""

    def __init__(self, python: str | os.PathLike[str], port: int = 0, startup_timeout: float = 120.0):
        self.python = str(python)
        self.port = port
        self.startup_timeout = startup_timeout
        self.workdir: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_seconds = 0.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def otlp_url(self) -> str:
        """The server's OTLP/HTTP traces endpoint."""
        return f"{self.base_url}/v1/traces"

    def command(self) -> list[str]:
        """The argv starting the server (``self.port`` and ``self.workdir`` are set)."""
        raise NotImplementedError

    def server_env(self) -> dict[str, str]:
        """The server's own settings, added to the cleaned environment."""
        return {}

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith((self.env_prefix, "OTEL_"))}
        env.update(TMPDIR=self.workdir or "", PYTHONUNBUFFERED="1")
        env.update(self.server_env())
        return env

    def start(self) -> "LocalServer":
        if not Path(self.python).exists():
            raise FileNotFoundError(f"no {self.name} interpreter at {self.python}; {self.provision_hint}")
        self.workdir = tempfile.mkdtemp(prefix=f"otel-agents-{self.name.lower()}-")
        self.port = self.port or free_port()
        started = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(self.command(), env=self._env(), cwd=self.workdir, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            self._wait_ready(started + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    @property
    def log_path(self) -> str:
        return os.path.join(self.workdir or tempfile.gettempdir(), f"{self.name.lower()}.log")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}{self.health_path}", timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:  # URLError and refused connections while it boots
                pass
            time.sleep(0.2)
        raise TimeoutError(f"{self.name} not ready after {self.startup_timeout} s:\n{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to the server's process group, SIGKILL after ``timeout`` seconds; then remove the
        working directory (its data is thrown away)."""
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGTERM)
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait()
                except ProcessLookupError:
                    pass
            self.proc = None
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def serve_forever(self) -> int:
        """The scripts' ``serve`` command: start, print ``{"url", "otlp_http", "pid", "workdir",
        "startup_seconds"}`` as one JSON line, run until SIGTERM/SIGINT or until the server exits, stop."""
        stop = False

        def _on_signal(*_: Any) -> None:
            nonlocal stop
            stop = True

        signal.signal(signal.SIGTERM, _on_signal)
        signal.signal(signal.SIGINT, _on_signal)
        with self:
            print(json.dumps({"url": self.base_url, "otlp_http": self.otlp_url, "pid": self.proc.pid if self.proc else None,
                              "workdir": self.workdir, "startup_seconds": round(self.startup_seconds, 1)}), flush=True)
            while not stop and self.proc is not None and self.proc.poll() is None:
                time.sleep(0.2)
        return 0
