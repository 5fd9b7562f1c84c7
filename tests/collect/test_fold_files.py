"""``otel-agents fold A.jsonl B.jsonl``: a run whose processes wrote a trace file each is folded whole (issue 37)."""

from __future__ import annotations

import json
import subprocess
import sys

from ..exporters.conftest import check
from .conftest import emit, new_runs


def _fold(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_trace_spread_over_two_processes_files_is_one_run(tmp_path) -> None:
    runs = new_runs(2)
    agent, server = tmp_path / "agent.jsonl", tmp_path / "server.jsonl"
    emit(tmp_path, "root", f"file:{agent}", runs)     # the agent's process
    emit(tmp_path, "tools", f"file:{server}", runs)   # its tool server's process
    for order in ((agent, server), (server, agent)):
        done = _fold(*map(str, order))
        assert done.returncode == 0, done.stderr
        envelopes = check([json.loads(line) for line in done.stdout.splitlines()])
        assert sorted(e["trace_id"] for e in envelopes) == sorted(r["trace_id"] for r in runs)
        for e in envelopes:
            assert [t["name"] for t in e["tool_calls"]] == ["lookup_order", "check_refund_policy"]
            assert e["public_output"] == "It shipped."
    # one file alone: the agent's part only (what folding one process's file gives)
    alone = [json.loads(line) for line in _fold(str(agent)).stdout.splitlines()]
    assert [e["tool_calls"] for e in alone] == [[], []]
    # '-' reads standard input among the files
    done = _fold(str(agent), "-", stdin=server.read_text(encoding="utf-8"))
    assert done.returncode == 0 and all(len(json.loads(line)["tool_calls"]) == 2 for line in done.stdout.splitlines())
    assert "2 run(s) from 8 span(s)" in done.stderr


def test_stdin_twice_and_output_among_inputs_are_refused(tmp_path) -> None:
    agent = tmp_path / "agent.jsonl"
    agent.write_text("", encoding="utf-8")
    done = _fold("-", "-")
    assert done.returncode == 2 and "'-' (standard input) can be given once" in done.stderr
    done = _fold("-", str(agent), "-o", str(agent))
    assert done.returncode == 2 and f"is the input file {agent}" in done.stderr
    assert _fold(str(agent), str(tmp_path / "missing.jsonl")).returncode == 2


def test_output_dash_is_standard_output_as_for_collect_and_report(tmp_path) -> None:
    """``-o -`` writes the envelopes to standard output (as ``ecp collect -o -`` and ``ecp report --json -`` do),
    never to a file named ``-`` in the working directory."""
    runs = new_runs(1)
    agent = tmp_path / "agent.jsonl"
    emit(tmp_path, "root", f"file:{agent}", runs)
    done = subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold", str(agent), "-o", "-"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    envelope, = check([json.loads(line) for line in done.stdout.splitlines()])
    assert envelope["trace_id"] == runs[0]["trace_id"]
    assert not (tmp_path / "-").exists()
