"""AG-4 (b): Agno's own tracing (``agno.tracing.setup_tracing``, OpenInference's Agno instrumentation) next to ours.

Runs in ``.venv-peers`` (Makefile ISOLATED ``peers``): OpenInference's Agno instrumentation is not installed in
``.venv``, where every zero-code process (``opentelemetry-instrument``) would load its entry point, which imports
Agno's model classes and the Anthropic SDK (~6 s of CPU each); it is skipped there."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.peers import needs_the_peers

needs_the_peers("openinference.instrumentation.agno")

APP = Path(__file__).with_name("agno_native_tracing_app.py")


@pytest.fixture(scope="module")
def report() -> dict:
    done = subprocess.run([sys.executable, str(APP)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _whole(spans: list[dict]) -> None:
    ids = {s["id"] for s in spans}
    assert all(s["parent"] is None or s["parent"] in ids for s in spans), \
        [s["name"] for s in spans if s["parent"] is not None and s["parent"] not in ids]
    assert len({s["trace"] for s in spans}) == 1


def test_ag4b_each_step_once_in_our_kinds_with_agnos_tracing_on(report: dict) -> None:
    """AG-4 (b): with Agno's tracing on, each run, model request and tool call appears exactly once in our
    kinds, and none of our spans has a parent our exporter never receives."""
    assert report["native_provider"] == "TracerProvider" and report["native_agent_run"] > 0  # theirs is live
    run = report["agent_run"]
    assert Counter(s["kind"] for s in run) == {"agent": 1, "model": 2, "tool": 1}
    _whole(run)
    team = report["team_run"]
    assert Counter(s["kind"] for s in team) == {"chain": 1, "agent": 1, "model": 4, "tool": 2}
    _whole(team)
    member = next(s for s in team if s["kind"] == "agent")
    delegation = next(s for s in team if s["name"] == "execute_tool delegate_task_to_member")
    assert member["parent"] == delegation["id"]


def test_ag4b_uninstrument_leaves_agnos_tracing_working(report: dict) -> None:
    assert report["after_uninstrument_ours"] == 0
    assert report["after_uninstrument_native"] > 0
