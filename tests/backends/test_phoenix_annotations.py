"""Issue 24 against a real Phoenix: ``otel-agents demo --frameworks plain_python --phoenix URL`` serves the
customer-support agent and its faulty twin (their spans exported to Phoenix over OTLP/HTTP), grades
them with the real ``ecp run``, and annotates every check on its span (``ecp annotate --to phoenix``).
The annotations are read back through Phoenix's REST API (``GET /v1/projects/{p}/span_annotations``)
and must sit on the spans the checks graded, with the report's verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from otel_agents.evaluations import evaluation_results

ROOT = Path(__file__).resolve().parents[2]
OTEL_AGENTS = str(Path(sys.executable).parent / "otel-agents")


def span_annotations(base_url: str, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    params: list[tuple[str, Any]] = [("span_ids", s) for s in span_ids] + [("limit", 1000)]
    while True:
        url = f"{base_url}/v1/projects/{project}/span_annotations?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
        out.extend(body["data"])
        if not body.get("next_cursor"):
            return out
        params = [p for p in params if p[0] != "cursor"] + [("cursor", body["next_cursor"])]


def test_demo_annotates_every_check_in_phoenix(phoenix: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "plain_python", "--out", str(out),
                           "--phoenix", phoenix.base_url], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checks annotated on their spans" in proc.stdout, proc.stdout
    for sub in ("", "faulty"):
        report = json.loads((out / "plain_python" / sub / "report.json").read_text(encoding="utf-8"))
        expected = evaluation_results(report)
        assert expected and all(r.span_id for r in expected)
        stored = span_annotations(phoenix.base_url, "default", sorted({r.span_id for r in expected}))
        got = {(a["span_id"], a["name"], a["identifier"]): a for a in stored}
        assert len(got) == len(expected), f"{sub or 'agent'}: {len(got)} annotations for {len(expected)} checks"
        for r in expected:
            a = got[(r.span_id, r.name, r.key)]
            assert a["annotator_kind"] == "CODE" and a["source"] == "API"
            assert a["result"] == {"label": r.label, "score": r.score, "explanation": r.explanation}
            assert a["metadata"]["step"] == r.step and a["metadata"]["scenario"] == r.scenario
        # every check sits on the step's root span; a passing tool check names the tool span Phoenix shows
        spans = {s["context"]["span_id"]: s for s in phoenix.spans("default")}
        for r in expected:
            shown = spans[r.span_id]
            assert shown["name"] == "agent/step" and shown["parent_id"] is None
            if r.grader == "tool_usage" and r.passed:
                evidence = spans[got[(r.span_id, r.name, r.key)]["metadata"]["evidence_span_id"]]
                assert evidence["span_kind"] == "TOOL" and evidence["attributes"]["tool.name"] == r.tool_name
        if sub == "faulty":
            assert sum(a["result"]["label"] == "fail" for a in stored) == report["failed"] > 0
