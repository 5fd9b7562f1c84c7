#!/usr/bin/env bash
# CI: install Arize Phoenix (pinned) into its own venv, <repo>/.phoenix-venv, apart from .venv.
# tests/backends/test_phoenix.py starts it from there (one server per test session, 127.0.0.1 only,
# free ports, temporary working directory) and, with CI=true, fails rather than skips without it.
# Run it from .ci/run before `make test`: `bash .ci/provision-phoenix.sh`. About 90 s and 850 MB the
# first time on a machine (pip's cache makes later installs quicker); a no-op when already there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/phoenix/provision.sh
