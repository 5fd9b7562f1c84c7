#!/usr/bin/env bash
# CI: install an MLflow tracking server (pinned) into its own venv, <repo>/.mlflow-venv, apart from .venv.
# tests/backends/test_mlflow.py starts it from there (one server per test session, 127.0.0.1 only, a free
# port, a temporary sqlite store) and, with CI=true, fails rather than skips without it.
# Run it from .ci/run before `make test`: `bash .ci/provision-mlflow.sh`. A no-op when already there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/mlflow/provision.sh
