#!/usr/bin/env bash
# Install an MLflow tracking server into its own virtual environment, apart from the project's .venv.
#
#   scripts/mlflow/provision.sh            # -> <repo>/.mlflow-venv (git-ignored)
#   MLFLOW_VENV=/some/dir scripts/mlflow/provision.sh
#
# MLflow pulls in a large dependency tree (pandas, scikit-learn, sqlalchemy, alembic, flask ...) that must
# not mix with ours: the tests talk to it over HTTP only. The version is pinned so that the tracking
# server's OTLP endpoint (`/v1/traces`) and its REST API answer as the tests expect. A stamp file makes a
# second run a no-op. Set MLFLOW_BASE_PYTHON to choose the interpreter (MLflow needs Python >= 3.10).
set -euo pipefail

MLFLOW_VERSION="3.17.2"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${MLFLOW_VENV:-$repo/.mlflow-venv}"
base_python="${MLFLOW_BASE_PYTHON:-python3}"
stamp="$venv/.otel-agents-mlflow-$MLFLOW_VERSION"

if [[ -f "$stamp" && -x "$venv/bin/python" ]]; then
  echo "mlflow $MLFLOW_VERSION already provisioned in $venv"
  exit 0
fi

"$base_python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "mlflow needs Python >= 3.10")'
rm -rf "$venv"
# uv (the Makefile's installer, `make uv` bootstraps it into <repo>/.uv) when there is one, else venv + pip.
uv="${UV:-$repo/.uv/bin/uv}"
if [[ -x "$uv" ]]; then
  "$uv" venv -q --python "$base_python" "$venv"
  VIRTUAL_ENV="$venv" "$uv" pip install -q --compile-bytecode "mlflow==$MLFLOW_VERSION"
else
  "$base_python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "mlflow==$MLFLOW_VERSION"
fi
# Fail here, not in the tests, when the server cannot start.
"$venv/bin/python" -c 'import mlflow.server; import mlflow; print("mlflow", mlflow.__version__)'
touch "$stamp"
echo "mlflow $MLFLOW_VERSION provisioned in $venv"
