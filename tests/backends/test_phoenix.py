"""Phoenix end to end (issue 9): each framework's example, exported by the ``phoenix`` preset over
OTLP/HTTP to a real Arize Phoenix on 127.0.0.1, read back through Phoenix's REST API.

One Phoenix serves the whole session (``phoenix`` fixture; ~15-30 s to start). Each run goes to a
project of its own (the preset's ``project`` → resource attribute ``openinference.project.name``).
What Phoenix shows is compared with what we sent (a snapshot exporter on the same provider), and
then checked as a user would look at it: the kinds, one trace with one root, every model and tool
call under an agent, and inputs/outputs on the root and on every tool.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from otel_agents import presets
from tests.backends import runs
from tests.frameworks import rows_here


def _hex(span_id: int | None) -> str | None:
    return f"{span_id:016x}" if span_id else None


def _ancestors(span: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    while span["parent_id"] in by_id:
        span = by_id[span["parent_id"]]
        out.append(span)
    return out


@pytest.mark.parametrize("framework", rows_here(list(runs.RUNS)))  # a framework of its own venv runs there
def test_phoenix_shows_the_run(phoenix: Any, run_configured: Any, framework: str) -> None:
    project = f"otel-agents-{framework}-{uuid.uuid4().hex[:8]}"
    sent = run_configured(framework, [presets.phoenix(phoenix.base_url, project=project)],
                          service_name="otel-agents-backend-tests", vocabularies="openinference")
    stored = phoenix.wait_for_spans(project, len(sent))
    by_id = {s["context"]["span_id"]: s for s in stored}

    # Phoenix stored exactly what we exported: ids, parents, kinds, inputs and outputs.
    assert set(by_id) == {_hex(s.span_id) for s in sent}
    for s in sent:
        shown = by_id[_hex(s.span_id)]
        assert shown["name"] == s.name
        assert shown["parent_id"] == _hex(s.parent_id), s.name
        assert shown["span_kind"] == s.attributes.get("openinference.span.kind", "UNKNOWN"), s.name
        for key in ("input.value", "output.value", "llm.token_count.prompt", "llm.model_name", "tool.name"):
            if key in s.attributes:
                assert shown["attributes"].get(key) == s.attributes[key], (s.name, key)

    # As a user sees it in Phoenix.
    kinds = {s["span_kind"] for s in stored}
    assert runs.EXPECTED_KINDS[framework] <= kinds, kinds
    assert len({s["context"]["trace_id"] for s in stored}) == 1, "one run, one trace"
    roots = [s for s in stored if s["parent_id"] is None]
    assert len(roots) == 1, [s["name"] for s in roots]
    root = roots[0]
    assert root["attributes"].get("input.value") and root["attributes"].get("output.value"), root
    for s in stored:
        if s["span_kind"] in ("LLM", "TOOL"):
            assert "AGENT" in {a["span_kind"] for a in _ancestors(s, by_id)}, f"{s['name']} has no agent above it"
        if s["span_kind"] == "TOOL":
            assert s["attributes"].get("input.value") and s["attributes"].get("output.value"), s["name"]
    if framework in runs.REPORTS_USAGE:
        assert any(s["attributes"].get("llm.token_count.prompt") for s in stored if s["span_kind"] == "LLM")
    assert all(s["status_code"] != "ERROR" for s in stored), [s["name"] for s in stored if s["status_code"] == "ERROR"]


def test_server_script_serves_on_the_port_asked_and_throws_the_database_away(phoenix_served: Any) -> None:
    """``scripts/phoenix/server.py serve --port N`` (default 6006, the preset's): loopback only, and
    its working directory (the database) is gone after Ctrl-C/SIGTERM. The session's Phoenix is that
    command (``phoenix_served``): its SIGTERM, exit status and removed directory are checked as it ends."""
    import os
    import subprocess
    import sys

    from tests.backends.conftest import REPO

    usage = subprocess.run([sys.executable, str(REPO / "scripts/phoenix/server.py"), "serve", "--help"],
                           capture_output=True, text=True, check=True).stdout
    assert "--port" in usage and "6006" in usage
    server, ready = phoenix_served
    assert ready["url"] == f"http://127.0.0.1:{server.port}" == server.base_url
    assert os.path.isdir(ready["workdir"])  # the sqlite database lives here


def test_a_stored_trace_file_exported_to_phoenix_keeps_its_ids(phoenix: Any, run_configured: Any, tmp_path: Any) -> None:
    """#36: ``otel-agents export FILE --to URL`` replays an OTLP/JSON lines file to Phoenix (which refuses
    OTLP/JSON with 415) as OTLP/HTTP protobuf; Phoenix stores every span under the file's own ids."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    project = f"otel-agents-export-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "traces.jsonl"
    sent = run_configured("manual", [presets.file(path)], resource_attributes={"openinference.project.name": project})
    assert phoenix.spans(project) == [], "the run went to the file only"
    in_file = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    in_file[s["spanId"]] = (s["traceId"], s.get("parentSpanId") or None, s["name"])
    assert len(in_file) == len(sent)
    proc = subprocess.run([str(Path(sys.executable).parent / "otel-agents"), "export", str(path),
                           "--to", phoenix.base_url + "/v1/traces"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    stored = phoenix.wait_for_spans(project, len(in_file))
    shown = {s["context"]["span_id"]: (s["context"]["trace_id"], s["parent_id"], s["name"]) for s in stored}
    assert shown == in_file
