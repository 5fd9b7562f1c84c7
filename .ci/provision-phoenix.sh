#!/usr/bin/env bash
# CI: install Arize Phoenix (pinned) into its own venv, <repo>/.phoenix-venv, apart from .venv.
# tests/backends/test_phoenix.py starts it from there (one server per test session, 127.0.0.1 only,
# free ports, temporary working directory) and, with CI=true, fails rather than skips without it.
# Run it from .ci/run before `make test`: `bash .ci/provision-phoenix.sh`. About 850 MB; installed with
# uv when `make uv` has bootstrapped it (.ci/run does), else pip; a no-op when already there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/phoenix/provision.sh
