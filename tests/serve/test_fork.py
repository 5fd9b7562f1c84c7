"""Agents that fork under ``ecp serve`` (issue #35): the child gets default signal handling, none
of the server's descriptors, and does not outlive its step as a copy of the server. Real
processes: the server, the agent's children, a client over a pipe or loopback HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .conftest import AGENTS, ROOT, SERVE, http_server
from .test_robustness import post, rpc


def _stdio(target: str, *requests: str, tmp_path: Path) -> list[dict]:
    proc = subprocess.run(SERVE + [f"{AGENTS}:{target}", "--log-file", str(tmp_path / "serve.log")],
                          input="\n".join(requests) + "\n", capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, (tmp_path / "serve.log").read_text()
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _gone(pid: int, timeout: float = 10) -> bool:
    """Whether ``pid`` has exited (gone, or a zombie nobody reaped yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_terminated_multiprocessing_child_dies_and_the_server_keeps_serving(tmp_path: Path) -> None:
    """Before: the child ignored SIGTERM (asyncio's handler) and the signal reached the server's
    loop through the inherited wakeup fd, which shut the server down mid-step."""
    step, again, init = _stdio("forks_and_terminates", rpc("agent/step", {"input": "x"}, 1),
                               rpc("agent/step", {"input": "y"}, 2), rpc("agent/initialize", id_=3),
                               tmp_path=tmp_path)
    assert step["result"]["public_output"] == f"child exit code {-signal.SIGTERM}", step
    assert again["result"]["public_output"] == f"child exit code {-signal.SIGTERM}"
    assert init["result"]["name"] == "forks_and_terminates"


def test_a_fork_pool_as_a_context_manager_does_not_hang(tmp_path: Path) -> None:
    (step,) = _stdio("forks_a_pool", rpc("agent/step", {"input": "x"}, 1), tmp_path=tmp_path)
    pids = [int(pid) for pid in step["result"]["public_output"].split()]
    assert pids and all(_gone(pid) for pid in pids)  # terminate() ended every worker


def test_a_forked_child_that_returns_exits_and_keeps_no_stdout(tmp_path: Path) -> None:
    """Before: the child returned into the server's worker thread and lived on, holding the
    protocol's stdout, so the client never saw end of file."""
    pid_file = tmp_path / "child.pid"
    proc = subprocess.Popen(SERVE + [f"{AGENTS}:forks_and_returns", "--log-file", str(tmp_path / "serve.log")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    out, _ = proc.communicate((rpc("agent/step", {"input": str(pid_file)}, 1) + "\n").encode(), timeout=60)
    assert proc.returncode == 0
    (step,) = (json.loads(line) for line in out.splitlines())  # end of file: nobody else holds stdout
    assert step["result"]["public_output"] == "the parent's answer"  # the child's answer never went out
    assert _gone(int(pid_file.read_text()))


def test_http_forked_children_neither_stop_the_server_nor_hold_its_socket(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    with http_server(f"{AGENTS}:forks_and_terminates", log=tmp_path / "serve.log") as (url, proc):
        status, _, body = post(url, rpc("agent/step", {"input": "x"}))
        assert status == 200 and json.loads(body)["result"]["public_output"] == f"child exit code {-signal.SIGTERM}"
        status, _, body = post(url, rpc("agent/initialize"))
        assert status == 200 and proc.poll() is None  # still serving
    with http_server(f"{AGENTS}:forks_and_returns", log=tmp_path / "serve2.log") as (url, proc):
        status, _, body = post(url, rpc("agent/step", {"input": str(pid_file)}))
        assert json.loads(body)["result"]["public_output"] == "the parent's answer"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    assert _gone(int(pid_file.read_text()))
    address = urlsplit(url)
    with pytest.raises(ConnectionRefusedError):  # no child still holds the listening socket
        socket.create_connection((address.hostname, address.port), timeout=5).close()
