"""A2A across three real processes: the calling agent (``client_app.py``), the remote agent (``server_app.py``),
both instrumented and sending OTLP/HTTP to ``otel-agents ecp collect``, which folds each run, whole, into one
envelope. Loopback only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.collect.conftest import Collect, wait_for
from tests.exporters.conftest import check

from .harness import RemoteAgent, webhook

CLIENT_APP = str(Path(__file__).with_name("client_app.py"))


def start_client(server: RemoteAgent, collect: Collect, spec: list[dict[str, Any]],
                 **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, CLIENT_APP, server.url, collect.url, json.dumps(spec)],
                            env=dict(os.environ, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def results(client: subprocess.Popen) -> list[dict[str, Any]]:
    out, err = client.communicate(timeout=180)
    assert client.returncode == 0, err[-3000:]
    return json.loads(out)


@pytest.fixture
def collect(tmp_path: Path) -> Any:
    c = Collect(tmp_path, "collect", "--trace-idle", "1")
    yield c
    c.stop()


@pytest.fixture
def server(tmp_path: Path, collect: Collect) -> Any:
    agent = RemoteAgent(tmp_path / "server-spans.jsonl", env={"A2A_TEST_OTLP": collect.url})
    yield agent
    agent.close()


def by_trace(collect: Collect, trace_ids: list[str], each: int = 1) -> dict[str, list[dict[str, Any]]]:
    """The envelopes of each trace, once every trace has ``each`` (a trace's runs are written one line at a time:
    read between two, a trace of two runs would show one)."""
    def arrived() -> bool:
        got = [e["trace_id"] for e in collect.envelopes()]
        return all(got.count(t) >= each for t in trace_ids)

    wait_for(arrived, f"{each} envelope(s) per trace")
    envelopes = check(collect.envelopes())
    return {t: [e for e in envelopes if e["trace_id"] == t] for t in trace_ids}


def test_concurrent_runs_each_fold_into_one_envelope(collect, server) -> None:
    """Unary, streaming, failed, paused, cancelled and abandoned calls at once: one envelope per run, the remote
    agent's run nested under the caller's call across the process boundary."""
    spec = [{"text": "Where is my order A100?"}, {"text": "Where is my order A100?", "streaming": True},
            {"text": "Where is my order A100?", "streaming": True}, {"text": "fail please", "streaming": True},
            {"text": "which order?"}, {"text": "slow: A100", "mode": "cancel"},
            {"text": "slow: A100", "streaming": True, "mode": "disconnect"}]
    got = results(start_client(server, collect, spec))
    assert not [r for r in got if "error" in r], got
    envelopes = by_trace(collect, [r["trace_id"] for r in got])
    for item, result in zip(spec, got):
        envelope, = envelopes[result["trace_id"]]  # one envelope per run, never a second for the remote part
        lines = envelope["evaluation_context"].splitlines()
        assert lines[:3] == ["agent support", "  agent Orders Agent delegated_by=support", "    span executor.body"]
        assert "incomplete" not in envelope, envelope["incomplete"]
        if item["text"].startswith("Where"):
            assert "    agent orders_worker delegated_by=Orders Agent" in lines
            call, = envelope["tool_calls"]
            assert (call["name"], call["agent"], call["remote_agent"]) == ("lookup_order", "orders_worker",
                                                                         "Orders Agent")
    assert envelopes[got[3]["trace_id"]][0]["evaluation_context"].endswith("error agent Orders Agent: orders db down")
    assert envelopes[got[4]["trace_id"]][0]["status"] == "paused"


def test_a_server_killed_mid_call_leaves_the_run_marked_incomplete(collect, server) -> None:
    """The remote process dies after its agent ran (its spans exported) but before its request span ended:
    the caller's call fails, and no envelope of the trace passes for a whole run."""
    client = start_client(server, collect, [{"text": "late: Where is my order A100?"}])
    server.spans_of(where=lambda s: s.name == "invoke_agent orders_worker", timeout=60)
    time.sleep(1.5)  # its OTLP batch (100 ms delay) sent too; the agent then waits a minute before answering
    server.proc.kill()
    server.proc.wait(timeout=30)
    result, = results(client)
    assert "error" in result
    envelopes = by_trace(collect, [result["trace_id"]], each=2)[result["trace_id"]]
    served, = [s for s in server.spans() if s.name == "executor.body"]
    lost = f"{served.parent_id:016x}"  # the server's request span, never ended, never sent
    assert [e["incomplete"] for e in envelopes] == [f"2 span(s) name a parent span that never arrived ({lost})"] * 2
    remote, caller = sorted(envelopes, key=lambda e: e["evaluation_context"])
    assert caller["evaluation_context"].splitlines()[:2] == ["agent support",
                                                             "  agent Orders Agent delegated_by=support"]
    assert remote["evaluation_context"].splitlines()[0] == "agent orders_worker"


def test_the_calls_own_http_request_is_not_an_effect_the_remote_agents_are(collect, server) -> None:
    """The caller also runs OpenTelemetry's httpx instrumentation: the A2A call's ``POST`` is the call's
    transport, not a side effect of the run, and its agent-card fetch (``GET /.well-known/agent-card.json``)
    discovery, not one either (it was an ``effect`` line, counted); the remote agent's own effect (its push
    notification POST, under the server's span, under that transport) is, and its spans under the server's span
    are shown."""
    with webhook() as (url, received):
        result, = results(start_client(server, collect, [{"text": "Where is my order A100?", "push_url": url}],
                                       A2A_TEST_HTTPX="1"))
        envelope, = by_trace(collect, [result["trace_id"]])[result["trace_id"]]
    assert received
    lines = envelope["evaluation_context"].splitlines()
    assert lines[:3] == ["agent support", "  agent Orders Agent delegated_by=support", "    span executor.body"]
    assert "agent-card" not in envelope["evaluation_context"]
    pushes = lines.count("    effect http POST 127.0.0.1 /hook status=200")  # one per task update
    assert pushes >= 1 and not [line for line in lines if "effect http POST 127.0.0.1 / " in line + " "]
    assert envelope["metrics"]["effects"] == pushes  # the pushes; not the card fetch, not the call itself
