"""Fixtures for the backend tests: one real Phoenix per session, a local OTLP receiver, and
``run_configured`` (one example run through ``otel_agents.configure``)."""

from __future__ import annotations

import importlib.util
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
def phoenix() -> Iterator[Any]:
    """A running Phoenix (``scripts/phoenix/server.py``) from its own venv, for the whole session."""
    helper = load_server_helper("phoenix")
    python = helper.phoenix_python()
    if not python.exists():
        missing(f"no Phoenix interpreter at {python}: run .ci/provision-phoenix.sh (or set PHOENIX_PYTHON)")
    with helper.PhoenixServer(python) as server:
        yield server


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
