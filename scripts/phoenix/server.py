"""Start, check and stop a throw-away Arize Phoenix on 127.0.0.1, and read its spans back.

Standard library only, so it runs under any interpreter (the tests import it from the project's
venv) while Phoenix itself runs from its own venv (see ``provision.sh``)::

    with PhoenixServer() as px:          # ~15-30 s until GET /healthz answers
        px.otlp_url                      # "http://127.0.0.1:<port>/v1/traces" (OTLP/HTTP protobuf)
        px.wait_for_spans("project", 4)  # REST GET /v1/projects/{name}/spans, polled

The server gets free loopback ports, a temporary working directory (its sqlite database, and
``TMPDIR`` for its pid files), no gRPC listener (``launcher.py``), and
``PHOENIX_ALLOW_EXTERNAL_RESOURCES=false``, ``PHOENIX_DISABLE_AGENT_ASSISTANT=true``,
``PHOENIX_TELEMETRY_ENABLED=false``. Every ``PHOENIX_*``/``OTEL_*`` variable of the caller is dropped,
so a developer's own settings cannot point it at another database.

Which Python runs Phoenix: ``$PHOENIX_PYTHON``, else ``<repo>/.phoenix-venv/bin/python``.

CLI: ``python scripts/phoenix/server.py serve [--port 6006]`` runs one in the foreground on
127.0.0.1 (port 6006 by default, where the ``phoenix`` preset sends) and prints its URLs as JSON;
Ctrl-C (or SIGTERM) stops it and removes its working directory: its database is thrown away.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
LAUNCHER = HERE / "launcher.py"


def phoenix_python() -> Path:
    """The interpreter of Phoenix's venv (it may not exist: check ``.exists()``)."""
    return Path(os.environ.get("PHOENIX_PYTHON") or REPO / ".phoenix-venv" / "bin" / "python")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PhoenixServer:
    """One Phoenix process. ``start()`` blocks until it is ready or raises (with its log tail).

    Args:
        python: the interpreter of Phoenix's venv.
        startup_timeout: seconds to wait for ``GET /healthz`` (first start compiles .pyc: ~30 s).
        port: the loopback HTTP port; ``0`` = a free one.
    """

    def __init__(self, python: str | os.PathLike[str] | None = None, startup_timeout: float = 120.0,
                 port: int = 0):
        self.python = str(python or phoenix_python())
        self.startup_timeout = startup_timeout
        self.port = port
        self.workdir: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_seconds = 0.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def otlp_url(self) -> str:
        """Phoenix's OTLP/HTTP traces endpoint (protobuf only; JSON gets 415)."""
        return f"{self.base_url}/v1/traces"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
        env.update(
            PHOENIX_WORKING_DIR=self.workdir or "",
            TMPDIR=self.workdir or "",
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT=str(self.port),
            PHOENIX_GRPC_PORT=str(_free_port()),  # unused (gRPC is disabled), but never the default 4317
            PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
            PHOENIX_DISABLE_AGENT_ASSISTANT="true",
            PHOENIX_TELEMETRY_ENABLED="false",
            PHOENIX_LOG_MIGRATIONS="false",
            PYTHONUNBUFFERED="1",
        )
        return env

    def start(self) -> "PhoenixServer":
        if not Path(self.python).exists():
            raise FileNotFoundError(f"no Phoenix interpreter at {self.python}; run scripts/phoenix/provision.sh")
        self.workdir = tempfile.mkdtemp(prefix="otel-agents-phoenix-")
        self.port = self.port or _free_port()
        started = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [self.python, str(LAUNCHER), "serve"], env=self._env(), cwd=self.workdir,
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C meant for the test runner does not reach it
            )
        try:
            self._wait_ready(started + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    @property
    def log_path(self) -> str:
        return os.path.join(self.workdir or tempfile.gettempdir(), "phoenix.log")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"Phoenix exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:  # URLError and refused connections while it boots
                pass
            time.sleep(0.2)
        raise TimeoutError(f"Phoenix not ready after {self.startup_timeout} s:\n{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM (uvicorn shuts down gracefully, exit code -15), SIGKILL after ``timeout`` seconds;
        then remove the working directory."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def __enter__(self) -> "PhoenixServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- reading back ------------------------------------------------------------------------
    def spans(self, project: str) -> list[dict[str, Any]]:
        """``GET /v1/projects/{project}/spans`` in insertion order, all pages; ``[]`` while the project
        does not exist (Phoenix creates it with its first span).

        Each span: ``name``, ``context.trace_id``/``span_id`` (lower-case hex), ``parent_id`` (hex or
        ``None``), ``span_kind`` (``AGENT``, ``LLM``, ...), ``attributes`` (flat dotted keys, without
        ``openinference.span.kind``), ``status_code``, ``events``.
        """
        path = f"/v1/projects/{urllib.parse.quote(project, safe='')}/spans"
        params: dict[str, Any] = {"limit": 1000, "order": "asc"}
        out: list[dict[str, Any]] = []
        while True:
            url = f"{self.base_url}{path}?{urllib.parse.urlencode(params)}"
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    body = json.load(response)
            except urllib.error.HTTPError as exc:
                if exc.code == 404:
                    return out
                raise
            out.extend(body["data"])
            if not body.get("next_cursor"):
                return out
            params["cursor"] = body["next_cursor"]

    def wait_for_spans(self, project: str, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Poll :meth:`spans` until at least ``count`` are stored (ingestion is asynchronous: the
        OTLP POST returns before the database write)."""
        deadline = time.monotonic() + timeout
        spans: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            spans = self.spans(project)
            if len(spans) >= count:
                return spans
            time.sleep(0.1)
        raise TimeoutError(f"Phoenix shows {len(spans)} of {count} spans in project {project!r}")


def _serve(port: int) -> int:
    stop = False

    def _on_signal(*_: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with PhoenixServer(port=port) as px:
        print(json.dumps({"url": px.base_url, "otlp_http": px.otlp_url, "pid": px.proc.pid if px.proc else None,
                          "workdir": px.workdir, "startup_seconds": round(px.startup_seconds, 1)}), flush=True)
        while not stop and px.proc is not None and px.proc.poll() is None:
            time.sleep(0.2)
    return 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="a throw-away Arize Phoenix on 127.0.0.1 (gRPC off)")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run one in the foreground; Ctrl-C stops it and deletes its database")
    serve.add_argument("--port", type=int, default=6006, help="loopback HTTP port (default 6006, the phoenix preset's)")
    args = parser.parse_args()
    sys.exit(_serve(args.port))
