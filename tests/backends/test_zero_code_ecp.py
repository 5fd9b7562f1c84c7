"""Zero-code all the way to ECP (issue 29): ``opentelemetry-instrument --traces_exporter
ecp,otlp_json_file python app.py`` writes one ECP envelope per run, and ``otel-agents fold`` on
the OTLP/JSON traces written beside it gives the same envelopes.

The app is ``runs.py`` (LangChain/LangGraph and PydanticAI over their fake models; no otel-agents
code) or ``fork_app.py`` (the same runs in forked workers, gunicorn's model), run in a subprocess
with the README's command line; the distro wraps both exporters in its ``BatchSpanProcessor``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.backends import runs
from tests.backends.ci import missing
from tests.exporters.conftest import check

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BIN = Path(sys.executable).parent
FRAMEWORKS = ["langchain", "pydantic_ai"]
ANSWER = "Order A1001 can be refunded."


def _frameworks() -> list[str]:
    for name in FRAMEWORKS:
        if runs.skip_reason(name):
            pytest.skip(runs.skip_reason(name))
    return FRAMEWORKS


def _instrumented(tmp_path: Path, app: str, *args: str) -> tuple[list[dict[str, Any]], Path]:
    """Run ``app`` under the README's command; returns the envelopes file's lines and the traces file."""
    from importlib.metadata import entry_points

    if not list(entry_points(group="opentelemetry_configurator")):
        missing("opentelemetry-instrument has no SDK configurator: pip install 'otel-agents[zero-code]'")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_SERVICE_NAME="zero-code-ecp", OTEL_AGENTS_ECP_FILE=str(tmp_path / "envelopes.jsonl"),
               OTEL_AGENTS_TRACES_FILE=str(tmp_path / "traces.jsonl"),
               OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=runs.others_disabled(*FRAMEWORKS))
    command = [str(BIN / "opentelemetry-instrument"), "--traces_exporter", "ecp,otlp_json_file",
               "--metrics_exporter", "none", "--logs_exporter", "none", sys.executable, str(HERE / app), *args]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    noise = [line for line in done.stderr.splitlines() if "otel_agents" in line or "Traceback" in line
             or "Failed to auto initialize" in line or "Exception" in line]
    assert not noise, noise
    text = (tmp_path / "envelopes.jsonl").read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()], tmp_path / "traces.jsonl"


def _folded(traces: Path) -> list[dict[str, Any]]:
    done = subprocess.run([str(BIN / "otel-agents"), "fold", str(traces)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _framework(envelope: dict[str, Any]) -> str:
    root = json.loads(envelope["logs"])[0]
    return root["attributes"]["otel_agents.framework"]


def _by_trace(envelopes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(envelopes, key=lambda e: (e["trace_id"], json.loads(e["logs"])[0]["span_id"]))


def _assert_right_run(envelope: dict[str, Any]) -> None:
    assert envelope["status"] == "done" and "incomplete" not in envelope, envelope.get("incomplete")
    assert envelope["public_output"] == ANSWER
    [call] = envelope["tool_calls"]
    assert (call["name"], call["arguments"], call["status"]) == ("lookup_order", {"order_id": "A1001"}, "ok")
    assert "delivered 12 days ago" in json.dumps(call["result"])
    assert envelope["metrics"]["model_calls"] == 2


def test_zero_code_writes_one_envelope_per_run_and_fold_agrees(tmp_path: Path) -> None:
    """Issue 29 done-when: LangChain and PydanticAI runs under ``--traces_exporter ecp,otlp_json_file``:
    one schema-valid envelope per run, right tool call and output; folding the traces gives the same."""
    frameworks = _frameworks()
    envelopes, traces = _instrumented(tmp_path, "runs.py", *frameworks)
    check(envelopes)
    assert sorted(_framework(e) for e in envelopes) == sorted(frameworks)
    for envelope in envelopes:
        _assert_right_run(envelope)
    assert _by_trace(_folded(traces)) == _by_trace(envelopes)


def test_zero_code_in_forked_workers_shares_one_file_per_exporter(tmp_path: Path) -> None:
    """Issue 29: gunicorn-style workers forked after start-up append to the same two files; every line is
    whole, every run is written once (by the process that ran it), none is cut short, and the fold of the
    shared traces file gives the same envelopes."""
    frameworks = _frameworks()
    workers, per_worker = 3, 2
    envelopes, traces = _instrumented(tmp_path, "fork_app.py", str(workers), str(per_worker), *frameworks)
    check(envelopes)
    expected = Counter({name: workers * per_worker for name in frameworks})
    expected[frameworks[0]] += 2  # the master's own runs, before and after the fork
    assert Counter(_framework(e) for e in envelopes) == expected
    for envelope in envelopes:
        _assert_right_run(envelope)
    assert len({e["trace_id"] for e in envelopes}) == len(envelopes)
    assert _by_trace(_folded(traces)) == _by_trace(envelopes)
