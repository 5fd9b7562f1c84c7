"""PydanticAI served over A2A by FastA2A (``agent_to_a2a``) in a child process, called by a2a-sdk's client:
FastA2A's endpoint is hooked too, so the remote PydanticAI run is in the caller's trace, under the call."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from otel_agents.exporters.file import read_otlp_json
from tests.spans import ancestors, snapshot

from .harness import RemoteAgent

APP = str(Path(__file__).with_name("fasta2a_app.py"))


@pytest.fixture(params=[False, True], ids=["plain", "asgi_instrumented"])
def fasta2a_remote(tmp_path: Path, request: Any) -> Any:
    """FastA2A's app, alone or inside OpenTelemetry's ASGI middleware (an HTTP server span per request)."""
    remote = RemoteAgent(tmp_path / "server-spans.jsonl", app=APP, env={"A2A_TEST_ASGI": "1"} if request.param else {})
    remote.asgi = request.param
    yield remote
    remote.close()


def _rpc(url: str, method: str, params: dict, headers: dict) -> dict:
    import httpx

    body = {"jsonrpc": "2.0", "id": "1", "method": method, "params": params}
    return httpx.post(url, json=body, headers=headers, timeout=30).json()


def _task(answer: dict) -> dict:
    return answer["result"].get("task", answer["result"])


def test_fasta2a_send_is_in_the_callers_trace_and_the_pydantic_ai_run_nests(app_tracer, instrument,
                                                                               fasta2a_remote) -> None:
    """The caller here is a plain HTTP client sending what an instrumented caller sends (a ``traceparent``
    header from the configured propagators): a2a-sdk 1.x's client cannot read FastA2A 2.1's task timestamps
    (``ParseError``), so the cross-library call itself is not the subject; FastA2A's side of it is."""
    from opentelemetry import propagate

    url, spans_file = fasta2a_remote.url, fasta2a_remote.spans_file
    instrument()
    with app_tracer.start_as_current_span("caller") as caller:
        headers: dict[str, str] = {}
        propagate.inject(headers)
        message = {"role": "user", "parts": [{"kind": "text", "text": "Where is my order A100?"}],
                   "messageId": "m-1", "kind": "message"}
        answer = _rpc(url, "message/send", {"message": message}, headers)
    task = answer["result"].get("task", answer["result"])
    task_id = task["id"]
    assert task["status"]["state"] == "submitted"
    deadline = time.monotonic() + 30
    while _task(_rpc(url, "tasks/get", {"id": task_id}, {}))["status"]["state"] != "completed":
        assert time.monotonic() < deadline, "the FastA2A task did not complete"
        time.sleep(0.1)
    trace_id = caller.get_span_context().trace_id
    deadline = time.monotonic() + 15
    while True:
        spans = [snapshot(s) for s in read_otlp_json(spans_file)] if spans_file.exists() else []
        traced = [s for s in spans if s.trace_id == trace_id]
        written = any(s.name == "execute_tool lookup_order" for s in traced) and (  # and the HTTP span, at its end
            not fasta2a_remote.asgi or any(s.scope == "opentelemetry.instrumentation.asgi" for s in traced))
        if written or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    served, = [s for s in traced if s.name == "invoke_agent support_remote"]
    parent, = [s for s in traced if s.span_id == served.parent_id] or [None]
    if parent is not None:  # the ASGI instrumentation's span of this request, the caller's child: ours is under it
        assert (parent.kind, parent.scope) == ("SERVER", "opentelemetry.instrumentation.asgi")
        parent_id = parent.parent_id
    else:
        parent_id = served.parent_id
    assert served.kind == "SERVER" and parent_id == caller.get_span_context().span_id
    assert (parent is not None) == fasta2a_remote.asgi
    assert served.attributes["a2a.method.name"] == "SendMessage"
    assert served.attributes["a2a.task.state"] == "TASK_STATE_SUBMITTED"  # FastA2A answers before running the agent
    assert served.attributes["a2a.task.id"] == task_id
    # FastA2A's worker tries a streaming run first and runs again when the model cannot stream: every run nests.
    runs = [s for s in traced if s.semantic_kind == "agent" and s.name == "invoke_agent customer_support"]
    assert runs and all(served in ancestors(run, traced) for run in runs)
    tool, = [s for s in traced if s.name == "execute_tool lookup_order"]
    assert any(run in ancestors(tool, traced) for run in runs)
    get_tasks = [s for s in spans if s.name == "GetTask"]
    assert get_tasks and all(s.semantic_kind is None for s in get_tasks)
