"""``ecp serve --collect``: the spans of the agent's other processes fold into each step's envelope (issue 37)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests._loopback import QuietHandler, serve

from ..exporters.conftest import check

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "customer_support"


class Served:
    """``otel-agents ecp serve TARGET ...`` over stdio, one JSON-RPC request per line."""

    def __init__(self, target: str, *args: str, log: Path) -> None:
        self._log = open(log, "w")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen([sys.executable, "-m", "otel_agents.cli", "ecp", "serve", target, *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True,
                                     cwd=ROOT)
        self._id = 0

    def call(self, method: str, params: dict) -> dict:
        self._id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()  # bounded: the server answers every step (--step-timeout)
        assert line, "the server exited"
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self._log.close()


def steps(target: str, *args: str, inputs: list[str], log: Path) -> list[dict]:
    """The results of ``agent/step`` for each of ``inputs`` in turn, from one ``Served(target, *args)``
    (initialized first, closed after, also when a call fails)."""
    served = Served(target, *args, log=log)
    try:
        served.call("agent/initialize", {})
        return [served.call("agent/step", {"input": text})["result"] for text in inputs]
    finally:
        served.close()


def test_the_mcp_servers_side_effect_is_in_the_step_envelope(tmp_path) -> None:
    """The side-effect twin's server e-mails the customer; only the server process sees it."""
    trace_file = tmp_path / "trace.jsonl"
    refund, status = steps(f"{EXAMPLES / 'mcp_agent.py'}:side_effect_agent", "--collect", "0", "--collect-grace", "60",
                           "--step-timeout", "240", "--trace-file", str(trace_file), log=tmp_path / "serve.log",
                           inputs=["Can I get a refund for order C300?", "What is the status of order A100?"])
    check([refund, status])
    assert [c["name"] for c in refund["tool_calls"]] == ["lookup_order", "check_refund_policy"]  # not doubled
    assert "incomplete" not in refund and "incomplete" not in status
    lines = refund["evaluation_context"].splitlines()
    tool = next(i for i, line in enumerate(lines) if line.strip().startswith("tool check_refund_policy"))
    assert lines[tool + 1].strip().startswith("effect http POST 127.0.0.1 /v1/send status=202")  # under the tool
    assert "effect http POST" not in status["evaluation_context"]
    logs = json.loads(refund["logs"])
    ids = {r["span_id"] for r in logs}
    server_calls = [r for r in logs if r["name"] == "execute_tool check_refund_policy" and r["parent_id"] in ids
                    and any(p["span_id"] == r["parent_id"] and p["name"] == r["name"] for p in logs)]
    assert len(server_calls) == 1  # the server's span of the call, under the agent's
    # the trace file holds the whole run too: the server's spans were written beside the agent's
    from otel_agents.exporters.file import read_otlp_json

    services = {s.resource.attributes.get("service.name") for s in read_otlp_json(trace_file)}
    assert services == {"otel-agents-ecp", "customer-support-mcp-server"}


AGENT_WITHOUT_ITS_SERVER = '''
from opentelemetry import trace


def agent(text):
    """Calls an MCP tool whose server never sends its spans (it is not instrumented)."""
    with trace.get_tracer("t").start_as_current_span("tools/call lookup", attributes={"mcp.method.name": "tools/call"}):
        pass
    return "done"
'''


def test_a_missing_remote_part_is_reported_not_waited_for(tmp_path) -> None:
    target = tmp_path / "agent.py"
    target.write_text(AGENT_WITHOUT_ITS_SERVER, encoding="utf-8")
    (envelope,) = steps(f"{target}:agent", "--collect", "0", "--collect-grace", "0.5", inputs=["hi"],
                        log=tmp_path / "serve.log")
    check([envelope])
    assert envelope["public_output"] == "done"
    assert envelope["incomplete"].startswith("remote spans missing after waiting 0.5 s (--collect-grace): "
                                             "no span arrived from the process that served 'tools/call lookup'")
    last = json.loads(envelope["logs"])[-1]
    assert last["name"] == "otel_agents.collect.missing" and last["status"] == "error"


def test_with_mcp_propagation_off_a_step_waits_for_no_server_span(tmp_path, monkeypatch) -> None:
    """``OTEL_AGENTS_MCP_PROPAGATE=false``: the MCP requests carry no trace context (and the server, inheriting the
    variable, takes none), so the server's spans are traces of their own and never come under the step's calls.
    The step is folded from this process's spans without waiting for them; it was held the whole grace period and
    marked incomplete ("no span arrived from the process that served 'tools/list'") though nothing could come."""
    monkeypatch.setenv("OTEL_AGENTS_MCP_PROPAGATE", "false")
    (envelope,) = steps(f"{EXAMPLES / 'mcp_agent.py'}:agent", "--collect", "0", "--collect-grace", "5",
                        "--step-timeout", "240", inputs=["What is the status of order A100?"],
                        log=tmp_path / "serve.log")
    check([envelope])
    assert "incomplete" not in envelope, envelope["incomplete"]
    assert [c["name"] for c in envelope["tool_calls"]] == ["lookup_order"]
    names = {r["name"] for r in json.loads(envelope["logs"])}
    assert "otel_agents.collect.missing" not in names
    log = (tmp_path / "serve.log").read_text(encoding="utf-8")
    assert "remote spans missing" not in log
    # the server's spans, traces of their own, are said so (they were said to have come for no step in progress,
    # with "raise --collect-grace", which could not help)
    assert "was not folded (1 so far): its trace is no step's: with OTEL_AGENTS_MCP_PROPAGATE off here" in log, log
    assert "--collect-grace" not in log, log


def test_a_span_dropped_by_collect_is_said_why_with_advice_only_where_it_helps(monkeypatch, caplog) -> None:
    """A span of a step that had ended: raise --collect-grace. Of a trace no step's (its request carried no
    context): propagation off, named when it is off here, and no --collect-grace (before, every dropped span got
    "arrived for no step in progress ... raise --collect-grace")."""
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext

    from otel_agents.serve.session import TraceCollector

    def span(trace_id: int) -> ReadableSpan:
        return ReadableSpan("s", SpanContext(trace_id, 1, True))

    def said(trace_id: int) -> str:
        caplog.clear()
        collector = TraceCollector()
        collector.watch(7)
        collector.take(7)
        collector.add_remote([span(trace_id)])
        [record] = caplog.records
        return record.getMessage()

    monkeypatch.delenv("OTEL_AGENTS_MCP_PROPAGATE", raising=False)
    monkeypatch.delenv("OTEL_AGENTS_A2A_PROPAGATE", raising=False)
    assert said(7).endswith("was not folded (1 so far): it arrived after its step had ended: raise --collect-grace")
    assert "its trace is no step's: the other process started it" in said(8) and "grace" not in said(8)
    monkeypatch.setenv("OTEL_AGENTS_A2A_PROPAGATE", "false")
    assert "with OTEL_AGENTS_A2A_PROPAGATE off here" in said(8) and "grace" not in said(8)
    assert said(7).endswith("raise --collect-grace")


@pytest.mark.parametrize("stop", ["stdin closed", "SIGTERM", "SIGINT"])
def test_spans_received_are_all_forwarded_at_exit_and_counted(tmp_path, stop: str) -> None:
    """``--collect`` with an OTLP destination (--otlp-endpoint) passes each request received on to it: at the
    server's exit (its input closed, SIGTERM, SIGINT) what is still queued is sent, and the summary line ``ecp
    collect --forward`` writes says what became of them. The endpoint holds its answer to the first request until
    the receiver has stopped, so two are still queued when the server begins to exit, and the line, written after,
    counts all three sent. Before, the forwarding thread was never waited for (the queued requests went only if
    they were quicker than the interpreter's exit) and no line said what was forwarded."""
    import signal
    import socket
    import threading

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from .conftest import wait_for

    got: list[bytes] = []
    release = threading.Event()

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            got.append(self.rfile.read(int(self.headers["content-length"])))
            if len(got) == 1:
                release.wait(60)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

    target = tmp_path / "agent.py"
    target.write_text("def agent(text):\n    return 'done'\n", encoding="utf-8")
    log = tmp_path / "serve.log"
    with serve(Handler) as endpoint:
        destination = f"{endpoint}/v1/traces"
        served = Served(f"{target}:agent", "--collect", "0", "--otlp-endpoint", destination, log=log)
        try:
            wait_for(lambda: "collecting spans at" in log.read_text(), "the receiver's address")
            url = re.search(r"collecting spans at (http://\S+)", log.read_text())[1]
            bodies = []
            for n in range(3):
                request = ExportTraceServiceRequest()
                request.resource_spans.add().scope_spans.add().spans.add(
                    trace_id=bytes([n + 1]) * 16, span_id=bytes([n + 1]) * 8, name=f"request {n}",
                    start_time_unix_nano=1, end_time_unix_nano=2)
                bodies.append(request.SerializeToString())
                post = urllib.request.Request(url, data=bodies[-1], headers={"Content-Type": "application/x-protobuf"})
                with urllib.request.urlopen(post, timeout=30) as answer:
                    assert answer.status == 200
            wait_for(lambda: len(got) == 1, "the first request forwarded")
            if stop == "stdin closed":
                served.proc.stdin.close()
            else:
                served.proc.send_signal(getattr(signal, stop))

            def stopped() -> bool:  # the receiver's port closed (the server is exiting), or the process gone
                try:
                    socket.create_connection(("127.0.0.1", urllib.parse.urlsplit(url).port), timeout=5).close()
                except ConnectionRefusedError:
                    return True
                return served.proc.poll() is not None

            wait_for(stopped, "the receiver stopped")
            release.set()
            assert served.proc.wait(timeout=60) == 0
        finally:
            release.set()
            if served.proc.poll() is None:
                served.proc.kill()
                served.proc.wait(timeout=60)
            served._log.close()
    text = log.read_text()
    assert got == bodies, text
    said = [line for line in text.splitlines() if line.startswith("otel-agents ecp serve: --collect: ")]
    assert said == [f"otel-agents ecp serve: --collect: received spans sent on to {destination}: 3 request(s) sent, "
                    "0 failed, 0 dropped"], text
