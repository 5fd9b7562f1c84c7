"""The Google ADK row of ``otel-agents demo`` (the customer-support example, ``examples/customer_support/
google_adk_agent.py``), graded by the real ``ecp run``, in ADK's own venv (the shared demo suite,
``tests/customer_support``, runs the rows of ``.venv``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OTEL_AGENTS = str(Path(sys.executable).parent / "otel-agents")


def test_demo_row_grades_agent_and_both_twins(tmp_path: Path) -> None:
    """The agent passes every check; the faulty twin fails exactly its 5 injected faults (none caught by an
    outcome-only check); the side-effect twin fails the 3 effect checks; the trace files hold ADK spans."""
    from otel_agents.exporters.file import read_otlp_json

    out = tmp_path / "out"
    proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "google_adk", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("google_adk ")]
    assert rows == [["google_adk", "PASS", "23/23", "FAIL", "18/23", "5", "5/5", "0/5"],
                    ["google_adk", "FAIL", "20/23", "3", "3/3", "0/3"]], proc.stdout
    spans = read_otlp_json(out / "google_adk" / "trace.jsonl")
    kinds = [s.attributes.get("otel_agents.span.kind") for s in spans]
    assert kinds.count("agent") == sum(s.name == "agent/step" for s in spans) > 0
    assert all(s.attributes.get("otel_agents.framework") == "google_adk" for s in spans
               if s.attributes.get("otel_agents.span.kind") in ("agent", "model", "tool"))
