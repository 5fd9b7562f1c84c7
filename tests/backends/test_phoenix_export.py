"""Issue 25: what Phoenix exports as JSON folds into the same ECP envelopes as the OTLP it was sent.

A peer's trace (the OpenInference LangChain fixture of ``tests/exporters/foreign``) is sent over OTLP/HTTP
to a real Phoenix; the page of Phoenix's span search (``GET /v1/projects/{project}/spans/otlpv1``) is
written to a file and folded by ``otel-agents fold``. Phoenix's JSON is OTLP-like, not OTLP/JSON: spans in
the OTLP shape with proto field names (``trace_id``, ``string_value``) and explicit nulls, but no
``resourceSpans``/``scopeSpans`` around them (``docs/ecp.md``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json

FIXTURE = Path(__file__).resolve().parents[1] / "exporters" / "foreign" / "openinference_langchain.otlp.jsonl"


def test_phoenix_json_export_folds_like_the_otlp_sent(phoenix: Any, tmp_path: Path) -> None:
    project = f"otel-agents-foreign-{uuid.uuid4().hex[:8]}"
    resource = Resource({"openinference.project.name": project})
    sent = [ReadableSpan(name=s.name, context=s.context, parent=s.parent, resource=resource, attributes=s.attributes,
                         events=s.events, links=s.links, kind=s.kind, status=s.status, start_time=s.start_time,
                         end_time=s.end_time, instrumentation_scope=s.instrumentation_scope)
            for s in read_otlp_json(FIXTURE)]
    assert OTLPSpanExporter(endpoint=phoenix.otlp_url).export(sent) is SpanExportResult.SUCCESS
    phoenix.wait_for_spans(project, len(sent))
    with urllib.request.urlopen(f"{phoenix.base_url}/v1/projects/{project}/spans/otlpv1?limit=1000",
                                timeout=30) as response:
        page = response.read()
    assert "resourceSpans" not in json.loads(page) and len(json.loads(page)["data"]) == len(sent)
    exported = tmp_path / "phoenix.json"
    exported.write_bytes(page + b"\n")
    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold", str(exported)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    folded = [json.loads(line) for line in proc.stdout.splitlines()]

    def graded(e: dict[str, Any]) -> tuple:
        return (e["trace_id"], e["public_output"], json.dumps(e["usage"]), e["evaluation_context"],
                json.dumps([(c["name"], c["arguments"], c["result"]) for c in e["tool_calls"]]))

    expected = fold(sent)
    assert len(folded) == len(expected) == 5
    assert sorted(map(graded, folded)) == sorted(map(graded, expected))
