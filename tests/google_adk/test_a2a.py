"""Google ADK over A2A, across real processes: ``RemoteA2aAgent`` here, ADK's ``to_a2a`` server in a child.

Both sides run in child processes (``a2a_client_app.py``, ``a2a_server_app.py``). The ADK instrumentor's
span of the ``RemoteA2aAgent`` is the A2A call (enriched with the ``a2a.*``
attributes, not doubled); the remote ADK agent's run is in the same trace, under it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json
from tests.a2a.harness import RemoteAgent
from tests.spans import ancestors, snapshot

SERVER_APP = str(Path(__file__).with_name("a2a_server_app.py"))
CLIENT_APP = str(Path(__file__).with_name("a2a_client_app.py"))


@pytest.fixture
def adk_remote(tmp_path: Path) -> Any:
    remote = RemoteAgent(tmp_path / "server-spans.jsonl", app=SERVER_APP, timeout=120)
    yield remote.url.rstrip("/"), remote.spans_file
    remote.close()


def test_remote_a2a_agent_span_is_the_call_and_the_remote_run_nests(adk_remote, tmp_path) -> None:
    url, spans_file = adk_remote
    client_file = tmp_path / "client-spans.jsonl"
    import os

    subprocess.run([sys.executable, CLIENT_APP, f"{url}/.well-known/agent-card.json"], check=True, timeout=180,
                   env=dict(os.environ, A2A_TEST_CLIENT_SPANS=str(client_file)), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    client = [snapshot(s) for s in read_otlp_json(client_file)]
    agents = [s for s in client if s.semantic_kind == "agent"]
    orders, = agents  # ADK's span of the RemoteA2aAgent, enriched: no second agent span for the call
    assert orders.name == "invoke_agent orders"
    assert orders.attributes["a2a.method.name"] in ("SendMessage", "SendStreamingMessage")
    assert orders.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert orders.attributes["server.address"] == "127.0.0.1"
    deadline = time.monotonic() + 15
    while True:
        server = [snapshot(s) for s in read_otlp_json(spans_file)] if spans_file.exists() else []
        server = [s for s in server if s.trace_id == orders.trace_id]
        if any(s.name == "execute_tool lookup_order" for s in server) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    served, = [s for s in server if s.kind == "SERVER" and s.semantic_kind == "agent"]
    assert served.parent_id == orders.span_id
    tool, = [s for s in server if s.name == "execute_tool lookup_order" and s.semantic_kind == "tool"]
    assert served in ancestors(tool, server)
    merged = list(read_otlp_json(client_file)) + [s for s in read_otlp_json(spans_file)
                                                  if s.context.trace_id == orders.trace_id]
    envelope, = fold(merged)
    lines = envelope["evaluation_context"].splitlines()
    assert lines[0] == "agent orders"
    assert "  agent orders_worker delegated_by=orders" in lines
    assert sum(1 for line in lines if "agent orders_worker" in line) == 1, envelope["evaluation_context"]
    assert [c["remote_agent"] for c in envelope["tool_calls"]] == ["orders_worker"]
