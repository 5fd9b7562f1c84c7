"""CrewAI tests: a throw-away HOME, no network but loopback, CrewAI's telemetry and tracing kept off.

CrewAI writes under ``$HOME`` (``~/.local/share/crewai``, ``~/.crewai``) and
computes some of those paths when it is imported, which happens while pytest
collects this directory — so HOME is switched at import time here and put back
once the last test of this package has run; the directory itself is removed at
exit (CrewAI keeps the paths it computed). ``tests/conftest.py`` already sets
``CREWAI_DISABLE_TELEMETRY=true`` and ``CREWAI_TRACING_ENABLED=false``; they are
re-asserted for every test here (CR-5 clears them in its own subprocess), and
every connection to a host other than loopback is refused.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

from otel_agents.instrumentors.crewai import CrewAIInstrumentor
from tests.crewai.netguard import block_network
from tests.instrumenting import fixtures

_SAVED = {k: os.environ.get(k) for k in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
# On tmpfs when there is one: every kickoff commits to a SQLite file under HOME, and on a real disk
# those fsyncs cost more than the run itself.
CREWAI_HOME = tempfile.mkdtemp(prefix="otel-agents-crewai-home-",
                               dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
os.environ["HOME"] = CREWAI_HOME
for _key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
    os.environ.pop(_key, None)
atexit.register(shutil.rmtree, CREWAI_HOME, ignore_errors=True)


@pytest.fixture(scope="package", autouse=True)
def _crewai_home():
    yield CREWAI_HOME
    for key, value in _SAVED.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def _crewai_quiet(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", CREWAI_HOME)
    monkeypatch.setenv("CREWAI_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("CREWAI_TRACING_ENABLED", "false")
    block_network(monkeypatch.setattr)


instrument, instrumented = fixtures(CrewAIInstrumentor)
