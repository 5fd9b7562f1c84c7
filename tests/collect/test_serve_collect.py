"""``ecp serve --collect``: the spans of the agent's other processes fold into each step's envelope (issue 37)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_the_mcp_servers_side_effect_is_in_the_step_envelope(tmp_path) -> None:
    """The side-effect twin's server e-mails the customer; only the server process sees it."""
    trace_file = tmp_path / "trace.jsonl"
    served = Served(f"{EXAMPLES / 'mcp_agent.py'}:side_effect_agent", "--collect", "0", "--collect-grace", "60",
                    "--step-timeout", "240", "--trace-file", str(trace_file), log=tmp_path / "serve.log")
    try:
        served.call("agent/initialize", {})
        refund = served.call("agent/step", {"input": "Can I get a refund for order C300?"})["result"]
        status = served.call("agent/step", {"input": "What is the status of order A100?"})["result"]
    finally:
        served.close()
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
    served = Served(f"{target}:agent", "--collect", "0", "--collect-grace", "0.5", log=tmp_path / "serve.log")
    try:
        served.call("agent/initialize", {})
        envelope = served.call("agent/step", {"input": "hi"})["result"]
    finally:
        served.close()
    check([envelope])
    assert envelope["public_output"] == "done"
    assert envelope["incomplete"].startswith("remote spans missing after waiting 0.5 s (--collect-grace): "
                                             "no span arrived from the process that served 'tools/call lookup'")
    last = json.loads(envelope["logs"])[-1]
    assert last["name"] == "otel_agents.collect.missing" and last["status"] == "error"
