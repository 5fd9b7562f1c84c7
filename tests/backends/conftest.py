"""Fixtures for the backend tests: one real Phoenix per session, a local OTLP receiver, and
``run_configured`` (one example run through ``otel_agents.configure``)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from otel_agents import configure, instrumentation_status, uninstrument
from tests.backends import runs
from tests.backends.ci import missing
from tests.backends.receiver import Receiver
from tests.spans import SnapshotExporter

REPO = Path(__file__).resolve().parents[2]


def load_server_helper(backend: str) -> Any:
    """``scripts/<backend>/server.py`` (``phoenix``, ``mlflow``) as a module: it runs the backend from its own venv."""
    path = REPO / "scripts" / backend / "server.py"
    spec = importlib.util.spec_from_file_location(f"otel_agents_{backend}_server", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def phoenix_served() -> Iterator[tuple[Any, dict[str, Any]]]:
    """A running Phoenix from its own venv, for the whole session, started by the script's own command as a
    developer runs it, ``python scripts/phoenix/server.py serve --port N``: (a ``PhoenixServer`` for reading it
    back, the JSON line the command printed). One Phoenix start serves test_phoenix.py's test of that command
    too (a start costs ~15 s of CPU). At the end, SIGTERM: the command must exit 0 having removed its working
    directory (its database), else the session's last test errors at teardown."""
    helper = load_server_helper("phoenix")
    python = helper.phoenix_python()
    if not python.exists():
        missing(f"no Phoenix interpreter at {python}: run .ci/provision-phoenix.sh (or set PHOENIX_PYTHON)")
    port = helper.free_port()
    proc = subprocess.Popen([sys.executable, str(REPO / "scripts/phoenix/server.py"), "serve", "--port", str(port)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "PHOENIX_PYTHON": str(python)})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once /healthz answers (or nothing: it failed, its error on stderr)
        assert line, f"scripts/phoenix/server.py serve exited with {proc.wait(60)} before it was ready"
        yield helper.PhoenixServer(python, port=port), json.loads(line)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    ready = json.loads(line)
    assert proc.returncode == 0, f"scripts/phoenix/server.py serve exited with {proc.returncode} on SIGTERM"
    assert not os.path.exists(ready["workdir"]), "the database is not thrown away at SIGTERM"


@pytest.fixture(scope="session")
def phoenix(phoenix_served: tuple[Any, dict[str, Any]]) -> Any:
    """The session's Phoenix (``phoenix_served``): ``base_url``, ``otlp_url``, ``spans``, ``wait_for_spans``."""
    return phoenix_served[0]


@pytest.fixture(scope="session")
def mlflow_server() -> Iterator[Any]:
    """A running MLflow tracking server (``scripts/mlflow/server.py``) from its own venv, for the session."""
    helper = load_server_helper("mlflow")
    python = helper.mlflow_python()
    if not python.exists():
        missing(f"no MLflow interpreter at {python}: run .ci/provision-mlflow.sh (or set MLFLOW_PYTHON)")
    with helper.MLflowServer(python) as server:
        yield server


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with Receiver() as rx:
        yield rx


@pytest.fixture
def run_configured() -> Callable[..., list[Any]]:
    """``run_configured(framework, exporters)``: configure a provider with ``exporters`` plus a local
    snapshot exporter, instrument only that framework, run its example, shut down (flushing the
    batch processors); returns the snapshots of every span the provider ended."""

    def run(framework: str, exporters: list[Any], **options: Any) -> list[Any]:
        reason = runs.skip_reason(framework)
        if reason:
            pytest.skip(reason)
        local = SnapshotExporter()
        config = configure(exporters=[*exporters, local], frameworks=[] if framework == "manual" else [framework],
                           set_global=False, **options)
        assert framework == "manual" or framework in config.instrumented, instrumentation_status()[framework]
        try:
            runs.RUNS[framework]()
        finally:
            config.shutdown()
            uninstrument()  # leave no framework instrumented with this (shut down) provider for later tests
        return local.spans

    return run
