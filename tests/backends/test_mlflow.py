"""MLflow end to end (issue 26): the customer-support example, exported by the ``mlflow`` preset over
OTLP/HTTP to a real MLflow tracking server on 127.0.0.1 (its own venv, ``scripts/mlflow/``), read back
through MLflow's REST API: every span, its parent, and the inputs and outputs MLflow shows.

Without the server's venv this skips locally and fails in CI (``CI=true``), as the Phoenix test does.
"""

from __future__ import annotations

import base64
import importlib.util
import sys
import uuid
from typing import Any

import pytest

from otel_agents import configure, presets
from tests.backends.runs import REPO
from tests.spans import SnapshotExporter

QUESTION = "Where is my order A100?"


def _hex(b64: str | None) -> str | None:
    return base64.b64decode(b64).hex() if b64 else None


def _value(v: dict[str, Any]) -> Any:
    """An OTLP/JSON ``AnyValue`` as Python (MLflow turns JSON inputs and outputs into key-value lists)."""
    if "kvlist_value" in v:
        return {kv["key"]: _value(kv.get("value", {})) for kv in v["kvlist_value"].get("values", [])}
    if "array_value" in v:
        return [_value(x or {}) for x in v["array_value"].get("values", [])]
    return next(iter(v.values()), None)


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: _value(a["value"]) for a in span.get("attributes", [])}


def _load_example() -> Any:
    pytest.importorskip("langgraph.prebuilt")
    path = REPO / "examples/customer_support/langchain_agent.py"
    spec = importlib.util.spec_from_file_location("otel_agents_cs_langchain_mlflow", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the model's annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_mlflow_shows_the_customer_support_run(mlflow_server: Any) -> None:
    example = _load_example()
    experiment = mlflow_server.create_experiment(f"otel-agents-{uuid.uuid4().hex[:8]}")
    local = SnapshotExporter()
    config = configure(service_name="otel-agents-backend-tests", frameworks=["langchain"], set_global=False,
                       exporters=[presets.mlflow(mlflow_server.base_url, experiment_id=experiment, timeout=60), local])
    try:
        answer = example.agent(QUESTION)
    finally:
        config.shutdown()
    sent = local.spans
    assert "langchain" in config.instrumented and sent

    (info,) = mlflow_server.wait_for_traces(experiment, 1)
    assert info["state"] == "OK"
    assert QUESTION in info["request_preview"] and answer[:40] in info["response_preview"]
    stored = mlflow_server.trace(info["trace_id"])["trace"]["spans"]

    # MLflow stored exactly what we exported: ids, names, parents.
    by_id = {_hex(s["span_id"]): s for s in stored}
    assert set(by_id) == {f"{s.span_id:016x}" for s in sent}
    for s in sent:
        shown = by_id[f"{s.span_id:016x}"]
        assert shown["name"] == s.name
        assert _hex(shown.get("parent_span_id")) == (f"{s.parent_id:016x}" if s.parent_id else None), s.name

    # Inputs and outputs as MLflow shows them (it maps input.value/output.value onto its own keys).
    for s in sent:
        shown = _attrs(by_id[f"{s.span_id:016x}"])
        for ours, theirs in (("input.value", "mlflow.spanInputs"), ("output.value", "mlflow.spanOutputs")):
            if ours in s.attributes:
                assert shown.get(theirs), (s.name, theirs)
    tools = [s for s in sent if s.attributes.get("otel_agents.span.kind") == "tool"]
    assert {s.attributes["gen_ai.tool.name"] for s in tools} >= {"lookup_order"}
    for tool in tools:
        shown = _attrs(by_id[f"{tool.span_id:016x}"])
        assert shown["mlflow.spanInputs"] == {"order_id": "A100"} and shown["mlflow.spanOutputs"], tool.name
    (root,) = [s for s in sent if s.parent_id is None]
    assert QUESTION in str(_attrs(by_id[f"{root.span_id:016x}"])["mlflow.spanInputs"])
