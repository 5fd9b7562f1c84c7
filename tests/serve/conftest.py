"""Starting ``otel-agents ecp serve --http`` for the server tests: a free port, the URL it announces."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SERVE = [str(BIN / "otel-agents"), "ecp", "serve"]
AGENTS = str(Path(__file__).with_name("agents.py"))


@pytest.fixture(autouse=True)
def _sys_path_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """``load_target`` of a file puts the file's folder first on ``sys.path`` (as ``python FILE`` does, so that its
    siblings import): in a test process, ``tests/serve`` first made ``import agents`` this folder's agents.py, not
    the OpenAI Agents SDK, for every later test of the same worker (tests/backends' openai_agents cases)."""
    monkeypatch.setattr(sys, "path", list(sys.path))


@contextlib.contextmanager
def http_server(target: str, *extra: str, log: Path, env: dict | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """Serve ``target`` over HTTP on a free loopback port; yields ``(url, process)``, stops it after."""
    proc = subprocess.Popen(SERVE + [target, "--http", "--port", "0", "--log-file", str(log), *extra], cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            match = re.search(r"serving ECP at (http://\S+)", log.read_text() if log.exists() else "")
            if match:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"server did not start: {log.read_text() if log.exists() else ''}")
            time.sleep(0.05)
        yield match.group(1), proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
