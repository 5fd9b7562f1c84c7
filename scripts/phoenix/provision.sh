#!/usr/bin/env bash
# Install Arize Phoenix into its own virtual environment, apart from the project's .venv.
#
#   scripts/phoenix/provision.sh            # -> <repo>/.phoenix-venv (git-ignored)
#   PHOENIX_VENV=/some/dir scripts/phoenix/provision.sh
#
# Phoenix pulls in ~850 MB of dependencies (pandas, grpcio, openai, sqlalchemy ...) that must not mix
# with ours: the tests talk to it over HTTP only. The version is pinned because launcher.py patches one
# Phoenix internal (GrpcServer's `disabled` flag). A stamp file makes a second run a no-op.
# Needs Python >= 3.11 (Phoenix's floor): set PHOENIX_BASE_PYTHON to choose the interpreter.
set -euo pipefail

PHOENIX_VERSION="20.26.1"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${PHOENIX_VENV:-$repo/.phoenix-venv}"
base_python="${PHOENIX_BASE_PYTHON:-python3}"
stamp="$venv/.otel-agents-phoenix-$PHOENIX_VERSION"

if [[ -f "$stamp" && -x "$venv/bin/python" ]]; then
  echo "phoenix $PHOENIX_VERSION already provisioned in $venv"
  exit 0
fi

"$base_python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "arize-phoenix needs Python >= 3.11")'
rm -rf "$venv"
# uv (the Makefile's installer, `make uv` bootstraps it into <repo>/.uv) when there is one, else venv + pip.
uv="${UV:-$repo/.uv/bin/uv}"
if [[ -x "$uv" ]]; then
  "$uv" venv -q --python "$base_python" "$venv"
  VIRTUAL_ENV="$venv" "$uv" pip install -q --compile-bytecode "arize-phoenix==$PHOENIX_VERSION"
else
  "$base_python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "arize-phoenix==$PHOENIX_VERSION"
fi
# Fail here, not in the tests, when the patched internal has moved.
"$venv/bin/python" - <<'PY'
import inspect
from phoenix.server.grpc_server import GrpcServer
assert "disabled" in inspect.signature(GrpcServer.__init__).parameters, "GrpcServer lost its `disabled` flag"
PY
touch "$stamp"
echo "phoenix $PHOENIX_VERSION provisioned in $venv"
