"""Start, check and stop a throw-away MLflow tracking server on 127.0.0.1, and read traces back.

Standard library only, so it runs under any interpreter (the tests import it from the project's
venv) while MLflow itself runs from its own venv (see ``provision.sh``)::

    with MLflowServer() as ml:                    # ~10-30 s until GET /health answers
        ml.base_url                               # "http://127.0.0.1:<port>"; OTLP at /v1/traces
        exp = ml.create_experiment("support")     # REST: the id to send as x-mlflow-experiment-id
        ml.wait_for_traces(exp, 1)                # REST: POST /api/3.0/mlflow/traces/search, polled

The server gets a free loopback port, one worker, a temporary directory holding its sqlite backend
store and its artifacts (removed at stop: the data is thrown away), and ``MLFLOW_DISABLE_TELEMETRY``
/ ``DO_NOT_TRACK``. Every ``MLFLOW_*``/``OTEL_*`` variable of the caller is dropped, so a developer's
own settings cannot point it at another store.

Which Python runs MLflow: ``$MLFLOW_PYTHON``, else ``<repo>/.mlflow-venv/bin/python``.

CLI: ``python scripts/mlflow/server.py serve [--port 5000]`` runs one in the foreground and prints its
URLs as JSON; Ctrl-C (or SIGTERM) stops it and deletes its store.
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
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def mlflow_python() -> Path:
    """The interpreter of MLflow's venv (it may not exist: check ``.exists()``)."""
    return Path(os.environ.get("MLFLOW_PYTHON") or REPO / ".mlflow-venv" / "bin" / "python")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MLflowServer:
    """One ``mlflow server`` process. ``start()`` blocks until it is ready or raises (with its log tail).

    Args:
        python: the interpreter of MLflow's venv.
        port: the loopback port; ``0`` = a free one.
        startup_timeout: seconds to wait for ``GET /health``.
    """

    def __init__(self, python: str | os.PathLike[str] | None = None, port: int = 0,
                 startup_timeout: float = 180.0):
        self.python = str(python or mlflow_python())
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
        """MLflow's OTLP/HTTP traces endpoint (needs the ``x-mlflow-experiment-id`` header)."""
        return f"{self.base_url}/v1/traces"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "OTEL_"))}
        env.update(MLFLOW_DISABLE_TELEMETRY="true", DO_NOT_TRACK="true", TMPDIR=self.workdir or "",
                   PYTHONUNBUFFERED="1")
        return env

    def start(self) -> "MLflowServer":
        if not Path(self.python).exists():
            raise FileNotFoundError(f"no MLflow interpreter at {self.python}; run scripts/mlflow/provision.sh")
        self.workdir = tempfile.mkdtemp(prefix="otel-agents-mlflow-")
        self.port = self.port or _free_port()
        store = Path(self.workdir)
        command = [self.python, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
                   "--workers", "1", "--backend-store-uri", f"sqlite:///{store / 'mlflow.db'}",
                   "--default-artifact-root", (store / "artifacts").as_uri()]
        started = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(command, env=self._env(), cwd=self.workdir, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)  # its own process group: stop() ends all of it
        try:
            self._wait_ready(started + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    @property
    def log_path(self) -> str:
        return os.path.join(self.workdir or tempfile.gettempdir(), "mlflow.log")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(Path(self.log_path).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"MLflow exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/health", timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise TimeoutError(f"MLflow not ready after {self.startup_timeout} s:\n{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to the server's process group, SIGKILL after ``timeout`` seconds; then delete the
        temporary store."""
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

    def __enter__(self) -> "MLflowServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- REST ------------------------------------------------------------------------------
    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base_url}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=15) as response:
            return json.load(response)

    def create_experiment(self, name: str) -> str:
        """``POST /api/2.0/mlflow/experiments/create``; returns the experiment id."""
        return self._call("POST", "/api/2.0/mlflow/experiments/create", {"name": name})["experiment_id"]

    def traces(self, experiment_id: str) -> list[dict[str, Any]]:
        """The trace infos of an experiment (``POST /api/3.0/mlflow/traces/search``)."""
        body = {"locations": [{"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": experiment_id}}],
                "max_results": 100}
        return self._call("POST", "/api/3.0/mlflow/traces/search", body).get("traces", [])

    def trace(self, trace_id: str) -> dict[str, Any]:
        """One whole trace, its spans included (``GET /api/3.0/mlflow/traces/get``)."""
        return self._call("GET", f"/api/3.0/mlflow/traces/get?trace_id={trace_id}")

    def wait_for_traces(self, experiment_id: str, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Poll :meth:`traces` until at least ``count`` are stored."""
        deadline = time.monotonic() + timeout
        found: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            found = self.traces(experiment_id)
            if len(found) >= count:
                return found
            time.sleep(0.2)
        raise TimeoutError(f"MLflow shows {len(found)} of {count} traces in experiment {experiment_id}")


def _serve(port: int) -> int:
    stop = False

    def _on_signal(*_: Any) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with MLflowServer(port=port) as ml:
        print(json.dumps({"url": ml.base_url, "otlp_http": ml.otlp_url, "pid": ml.proc.pid if ml.proc else None,
                          "store": ml.workdir, "startup_seconds": round(ml.startup_seconds, 1)}), flush=True)
        while not stop and ml.proc is not None and ml.proc.poll() is None:
            time.sleep(0.2)
    return 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="a throw-away MLflow tracking server on 127.0.0.1")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run one in the foreground; Ctrl-C stops it and deletes its store")
    serve.add_argument("--port", type=int, default=5000, help="loopback port (default 5000, MLflow's own)")
    args = parser.parse_args()
    sys.exit(_serve(args.port))
