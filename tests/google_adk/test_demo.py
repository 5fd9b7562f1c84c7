"""The Google ADK row of ``otel-agents demo`` (the customer-support example, ``examples/customer_support/
google_adk_agent.py``), graded by the real ``ecp run``, in ADK's own venv (the shared demo suite,
``tests/customer_support``, runs the rows of ``.venv``)."""

from __future__ import annotations

import json
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
    # Issue #34 fault 7: ADK's own spans make no second tree, and each step is counted once in the envelope.
    assert not [s for s in spans if s.instrumentation_scope.name == "gcp.vertex.agent"]
    report = json.loads((out / "google_adk" / "report.json").read_text(encoding="utf-8"))
    first = report["scenarios"][0]["steps"][0]
    assert (first["usage"]["input_tokens"], first["usage"]["output_tokens"]) == (37, 16)
    assert [(c["name"], c["result"] is not None) for c in first["tool_calls"]] == [("lookup_order", True)]
    for scenario in report["scenarios"]:
        for step in scenario["steps"]:
            ids = [c["id"] for c in step["tool_calls"] or ()]
            assert len(ids) == len(set(ids)), step["tool_calls"]
            assert step["evaluation_context"].count("agent customer_support") == 1, step["evaluation_context"]
