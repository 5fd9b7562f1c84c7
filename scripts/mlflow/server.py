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
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

sys.path.insert(0, str(HERE.parent))
from local_server import LocalServer  # noqa: E402 - scripts/local_server.py, beside this directory


def mlflow_python() -> Path:
    """The interpreter of MLflow's venv (it may not exist: check ``.exists()``)."""
    return Path(os.environ.get("MLFLOW_PYTHON") or REPO / ".mlflow-venv" / "bin" / "python")


class MLflowServer(LocalServer):
    """One ``mlflow server`` process (``LocalServer``: ``start()`` blocks until ``GET /health`` answers,
    or raises with its log tail). ``otlp_url`` needs the ``x-mlflow-experiment-id`` header.

    Args:
        python: the interpreter of MLflow's venv.
        port: the loopback port; ``0`` = a free one.
        startup_timeout: seconds to wait for ``GET /health``.
    """

    name = "MLflow"
    env_prefix = "MLFLOW_"
    health_path = "/health"
    provision_hint = "run scripts/mlflow/provision.sh"

    def __init__(self, python: str | os.PathLike[str] | None = None, port: int = 0,
                 startup_timeout: float = 180.0):
        super().__init__(python or mlflow_python(), port=port, startup_timeout=startup_timeout)

    def command(self) -> list[str]:
        store = Path(self.workdir or ".")
        return [self.python, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
                "--workers", "1", "--backend-store-uri", f"sqlite:///{store / 'mlflow.db'}",
                "--default-artifact-root", (store / "artifacts").as_uri()]

    def server_env(self) -> dict[str, str]:
        return dict(MLFLOW_DISABLE_TELEMETRY="true", DO_NOT_TRACK="true")

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


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="a throw-away MLflow tracking server on 127.0.0.1")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run one in the foreground; Ctrl-C stops it and deletes its store")
    serve.add_argument("--port", type=int, default=5000, help="loopback port (default 5000, MLflow's own)")
    args = parser.parse_args()
    sys.exit(MLflowServer(port=args.port).serve_forever())
