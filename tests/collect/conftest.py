"""Helpers for the collect tests: real ``otel-agents ecp collect`` processes on 127.0.0.1, and emitters."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
_ANNOUNCE = re.compile(r"collecting OTLP at (http://\S+/v1/traces)")
_GRPC = re.compile(r"collecting OTLP/gRPC at (\S+)")


class Collect:
    """One ``otel-agents ecp collect`` subprocess; ``url`` is its /v1/traces endpoint."""

    def __init__(self, tmp: Path, name: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.output = tmp / f"{name}.jsonl"
        self.log = tmp / f"{name}.log"
        self._log = open(self.log, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "otel_agents.cli", "ecp", "collect", "--port", "0",
                                      "-o", str(self.output), *args], stderr=self._log, stdout=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL, env=env)
        self.url = self.grpc = ""
        for _ in range(600):  # up to ~60 s for the interpreter to start on a busy machine
            text = self.log.read_text(encoding="utf-8", errors="replace")
            match = _ANNOUNCE.search(text)
            if match:
                self.url = match.group(1)
                grpc = _GRPC.search(text)
                self.grpc = grpc.group(1) if grpc else ""
                break
            assert self.proc.poll() is None, self.log.read_text()
            time.sleep(0.1)
        assert self.url, "collect did not announce its address"

    def stop(self) -> str:
        """SIGTERM, wait for the exit; returns the log."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
        self._log.close()
        return self.log.read_text(encoding="utf-8", errors="replace")

    def envelopes(self) -> list[dict[str, Any]]:
        if not self.output.exists():
            return []
        return [json.loads(line) for line in self.output.read_text(encoding="utf-8").splitlines() if line.strip()]


def new_runs(n: int, tools: tuple[str, ...] = ("lookup_order", "check_refund_policy")) -> list[dict[str, Any]]:
    """``n`` run specs for ``emit.py`` with fresh random ids."""
    return [{"trace_id": secrets.token_hex(16), "agent_span_id": secrets.token_hex(8), "tools": list(tools)}
            for _ in range(n)]


def emit(tmp: Path, role: str, endpoint: str, runs: list[dict[str, Any]], env: dict[str, str] | None = None) -> None:
    """Run ``emit.py`` as its own process and wait for it (it exits once its spans are exported); ``env``: its
    environment (default ours), with ``OTEL_EXPORTER_OTLP_TIMEOUT=30``."""
    spec = tmp / f"spec-{secrets.token_hex(4)}.json"
    spec.write_text(json.dumps(runs), encoding="utf-8")
    env = dict(os.environ if env is None else env, OTEL_EXPORTER_OTLP_TIMEOUT="30")
    done = subprocess.run([sys.executable, str(HERE / "emit.py"), role, endpoint, str(spec)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def wait_for(predicate, what: str, attempts: int = 600, pause: float = 0.1) -> None:
    """Poll ``predicate`` (bounded: ``attempts`` x ``pause``)."""
    for _ in range(attempts):
        if predicate():
            return
        time.sleep(pause)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def collects(tmp_path):
    started: list[Collect] = []

    def start(name: str, *args: str, env: dict[str, str] | None = None) -> Collect:
        c = Collect(tmp_path, name, *args, env=env)
        started.append(c)
        return c

    yield start
    for c in started:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait(timeout=30)
