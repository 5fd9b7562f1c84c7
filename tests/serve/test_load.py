"""Load on loopback (issue #16): parallel graders with sessions, and idle connections that must not block.

50 clients × 20 steps of a multi-turn agent, each in its own session on its own keep-alive connection:
no errors, and each client sees only its own turns. The p99 step latency is printed (``-s`` shows it);
speed is measured by benchmarks, not asserted here.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from .conftest import http_server

CLIENTS, STEPS = 50, 20
IDLE = 500


def _call(conn: http.client.HTTPConnection, path: str, body: dict, headers: dict) -> tuple[int, dict, dict]:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **headers})
    resp = conn.getresponse()
    return resp.status, dict(resp.getheaders()), json.loads(resp.read())


def _client(url: str, n: int, latencies: list[float], errors: list[str]) -> None:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        status, headers, _ = _call(conn, parts.path, {"jsonrpc": "2.0", "id": 0, "method": "agent/initialize"}, {})
        session = {"Mcp-Session-Id": headers["mcp-session-id"]}
        for turn in range(1, STEPS + 1):
            text = f"client {n} turn {turn}"
            started = time.perf_counter()
            status, _, body = _call(conn, parts.path, {"jsonrpc": "2.0", "id": turn, "method": "agent/step",
                                                       "params": {"input": text}}, session)
            latencies.append(time.perf_counter() - started)
            answer = body.get("result", {}).get("public_output")
            if status != 200 or body.get("id") != turn or answer != f"turn {turn}: {text}":
                errors.append(f"client {n} turn {turn}: {status} {str(body)[:200]}")
    except Exception as exc:  # noqa: BLE001 - counted, not raised in the thread
        errors.append(f"client {n}: {exc!r}")
    finally:
        conn.close()


def test_parallel_sessions_and_idle_connections(tmp_path: Path) -> None:
    with http_server("tests.serve.agents:Counter", "--connection-timeout", "2",
                     log=tmp_path / "serve.log") as (url, proc):
        latencies: list[float] = []
        errors: list[str] = []
        threads = [threading.Thread(target=_client, args=(url, n, latencies, errors)) for n in range(CLIENTS)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        elapsed = time.perf_counter() - started
        latencies.sort()
        p50, p99 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99) - 1]
        print(f"\n{CLIENTS} clients x {STEPS} steps: {len(latencies)} steps in {elapsed:.1f} s, "
              f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, errors {len(errors)}")
        assert errors == [] and len(latencies) == CLIENTS * STEPS

        parts = urlsplit(url)
        idle = [socket.create_connection((parts.hostname, parts.port), timeout=10) for _ in range(IDLE)]
        try:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
            status, _, body = _call(conn, parts.path, {"jsonrpc": "2.0", "id": 1, "method": "agent/step",
                                                       "params": {"input": "still there?"}}, {})
            conn.close()
            assert status == 200 and body["result"]["public_output"] == "turn 1: still there?"
            time.sleep(3.5)  # past --connection-timeout: every idle connection has been closed by the server
            for sock in idle:
                sock.settimeout(5)
                assert sock.recv(1) == b""
        finally:
            for sock in idle:
                sock.close()
        assert proc.poll() is None
