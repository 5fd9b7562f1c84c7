"""Hung and misbehaving agents, signals, and who may talk to the HTTP server (issue #16)."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from otel_agents.exporters.file import read_otlp_json

from .conftest import AGENTS, ROOT, SERVE, http_server


def rpc(method: str, params: dict | None = None, id_: object = 1) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}})


def post(url: str, body: str, headers: dict | None = None, method: str = "POST") -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, data=body.encode() if body else None, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _abandoned_spans(trace_file: Path) -> dict[str, dict]:
    """Name → attributes of the spans marked abandoned."""
    return {s.name: dict(s.attributes) for s in read_otlp_json(str(trace_file))
            if (s.attributes or {}).get("otel_agents.stream.abandoned")}


# -- step timeout ----------------------------------------------------------------------------------

def test_step_timeout_stdio_answers_an_error_ends_the_spans_and_keeps_serving(tmp_path: Path) -> None:
    trace_file = tmp_path / "t.jsonl"
    proc = subprocess.run(SERVE + [f"{AGENTS}:hangs", "--step-timeout", "1", "--trace-file", str(trace_file)],
                          input="\n".join([rpc("agent/step", {"input": "hang"}, 1), rpc("agent/step", {"input": "quick"}, 2),
                                           rpc("agent/initialize", id_=3)]) + "\n",
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    timed_out, quick, init = (json.loads(line) for line in proc.stdout.splitlines())
    assert timed_out["id"] == 1 and timed_out["error"]["code"] == -32001
    assert "timed out after 1 s" in timed_out["error"]["message"] and "--step-timeout" in timed_out["error"]["message"]
    assert quick["result"]["public_output"] == "quick answer" and init["result"]["name"] == "hangs"
    spans = _abandoned_spans(trace_file)
    assert spans["agent/step"]["otel_agents.stream.abandoned"] is True
    assert spans["agent/step"]["error.type"] == "TimeoutError"
    assert spans["execute_tool wait_forever"]["otel_agents.stream.abandoned"] is True  # the agent's open span ended


def test_step_timeout_http_keeps_serving(tmp_path: Path) -> None:
    with http_server(f"{AGENTS}:hangs", "--step-timeout", "1", log=tmp_path / "serve.log") as (url, _):
        started = time.monotonic()
        status, _, body = post(url, rpc("agent/step", {"input": "hang"}))
        assert status == 200 and json.loads(body)["error"]["code"] == -32001
        assert time.monotonic() - started < 30
        status, _, body = post(url, rpc("agent/step", {"input": "quick"}))
        assert json.loads(body)["result"]["public_output"] == "quick answer"


def test_step_timeout_an_agent_object_never_runs_two_calls_at_once(tmp_path: Path) -> None:
    """After a step of a module-level agent object timed out (its thread goes on), the next step and a reset
    wait for it, at most their own step timeout, then fail naming it; once it returned, the next step runs alone."""
    release = tmp_path / "release"
    proc = subprocess.Popen(SERVE + [f"{AGENTS}:one_at_a_time", "--step-timeout", "2", "--log-file",
                                     str(tmp_path / "log")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)

    def call(method: str, params: dict | None = None) -> dict:
        proc.stdin.write(rpc(method, params) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    try:
        hung = call("agent/step", {"input": f"hold:{release}"})["error"]
        assert hung["code"] == -32001 and hung["data"]["type"] == "TimeoutError"
        for method, params in (("agent/step", {"input": "next"}), ("agent/reset", None)):
            busy = call(method, params)["error"]
            assert busy["code"] == -32001, busy
            assert busy["data"]["type"] == "AgentBusy" and busy["data"]["timeout_s"] == 2
            assert busy["data"]["running"] == f"step (trace {hung['data']['trace_id']})"
            assert busy["data"]["timed_out_s_ago"] >= 2  # it waited its own step timeout after the timeout
            assert f"its step (trace {hung['data']['trace_id']}), given up" in busy["message"], busy["message"]
        release.touch()
        assert call("agent/step", {"input": "after"})["result"]["public_output"] == "after began with 1 running"
        assert call("agent/reset")["result"] is True
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def test_calls_of_several_sessions_waiting_on_one_abandoned_step_each_wait_from_their_own_arrival() -> None:
    """Sessions sharing one agent object's runner (as ``ecp serve --http`` shares it: ``shares_one_runner``): after
    a step timed out while still inside the object, three calls arriving together are each refused once their own
    step timeout has passed since their arrival. They waited one after another before (the k-th refused after k
    timeouts: each waited for the runner's lock, then its whole timeout), and said they had waited one timeout."""
    import asyncio

    from opentelemetry.sdk.trace import TracerProvider

    from otel_agents.serve.jsonrpc import RPCError
    from otel_agents.serve.session import AgentRunner, ECPSession, Tracing, shares_one_runner
    from otel_agents.serve.target import Target

    release = threading.Event()

    class Hanging:
        def step(self, user_input: str) -> str:
            release.wait(60)
            return user_input

    agent = Hanging()
    target = Target("hanging", agent.step, None, True)
    assert shares_one_runner(target)
    runner, tracing, timeout = AgentRunner(target), Tracing(TracerProvider()), 2.0
    sessions = [ECPSession(target, step_timeout=timeout, tracing=tracing, runner=runner) for _ in range(4)]

    async def refusal(session: ECPSession) -> dict:
        with pytest.raises(RPCError) as refused:
            await session.astep({"input": "x"})
        return refused.value.data

    async def calls() -> list[dict]:
        hung = await refusal(sessions[0])
        assert hung["type"] == "TimeoutError"
        return list(await asyncio.gather(*(refusal(s) for s in sessions[1:])))

    try:
        busy = asyncio.run(calls())
    finally:
        release.set()
    assert [b["type"] for b in busy] == ["AgentBusy"] * 3, busy
    # each its own timeout (one after another: about 2, 4 and 6 s)
    assert all(timeout <= b["waited_s"] < 2 * timeout for b in busy), busy


# -- signals and BaseExceptions ----------------------------------------------------------------------

def test_sigterm_mid_step_ends_the_stdio_server(tmp_path: Path) -> None:
    trace_file = tmp_path / "t.jsonl"
    proc = subprocess.Popen(SERVE + [f"{AGENTS}:hangs", "--trace-file", str(trace_file), "--log-file",
                                     str(tmp_path / "log")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    proc.stdin.write((rpc("agent/initialize") + "\n" + rpc("agent/step", {"input": "hang"}, 2) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"]["name"] == "hangs"
    time.sleep(1.5)  # the step is under way, hung in its tool span
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0
    assert time.monotonic() - sent < 5
    answer = json.loads(proc.stdout.readline())  # the step in flight is answered, not left hanging
    assert answer["id"] == 2 and answer["error"]["code"] == -32003, answer
    spans = _abandoned_spans(trace_file)
    assert spans["agent/step"]["otel_agents.stream.abandoned"] is True  # ended and exported before exit


def test_sigint_mid_step_ends_the_http_server(tmp_path: Path) -> None:
    with http_server(f"{AGENTS}:slow", log=tmp_path / "serve.log") as (url, proc):
        threading.Thread(target=post, args=(url, rpc("agent/step", {"input": "x"})), daemon=True).start()
        time.sleep(1)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - sent < 6


def _step_in_background(url: str) -> tuple[threading.Thread, dict]:
    answer: dict = {}

    def run() -> None:
        answer["status"], answer["headers"], answer["body"] = post(url, rpc("agent/step", {"input": "x"}, 7))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, answer


@pytest.mark.parametrize("signals", [1, 2], ids=["sigterm", "sigterm-twice"])
def test_sigterm_answers_the_http_step_in_flight_with_a_jsonrpc_error(tmp_path: Path, signals: int) -> None:
    """Uvicorn cancels a request still running after its graceful-shutdown window (or at once on a
    second signal); the client gets a JSON-RPC error, not Uvicorn's plain-text 500, and the log no
    ASGI traceback (issue #35)."""
    log = tmp_path / "serve.log"
    with http_server(f"{AGENTS}:slow", log=log) as (url, proc):
        thread, answer = _step_in_background(url)
        time.sleep(1)
        for _ in range(signals):
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.3)
        assert proc.wait(timeout=10) == 0
        thread.join(timeout=10)
    headers = {k.lower(): v for k, v in answer["headers"].items()}
    assert answer["status"] == 200 and headers["content-type"] == "application/json", answer
    body = json.loads(answer["body"])
    assert body["id"] == 7 and body["error"]["code"] == -32003
    assert "shutting down" in body["error"]["message"]
    text = log.read_text()
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text


def test_sigterm_lets_an_http_step_finish_within_the_grace_period(tmp_path: Path) -> None:
    with http_server(f"{AGENTS}:brief", log=tmp_path / "serve.log") as (url, proc):
        thread, answer = _step_in_background(url)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        thread.join(timeout=10)
    assert answer["status"] == 200, answer
    assert json.loads(answer["body"])["result"]["public_output"] == "brief answer to x"


def test_keyboard_interrupt_in_the_agent_is_a_step_error() -> None:
    proc = subprocess.run(SERVE + [f"{AGENTS}:interrupts"],
                          input="\n".join([rpc("agent/step", {"input": "x"}, 1), rpc("agent/step", {"input": "ok"}, 2)])
                          + "\n", capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    err, ok = (json.loads(line) for line in proc.stdout.splitlines())
    assert err["error"]["code"] == -32000 and err["error"]["data"]["type"] == "KeyboardInterrupt"
    assert ok["result"]["public_output"] == "fine"


def test_stdio_reads_a_bounded_amount_of_requests_ahead_of_a_hung_step() -> None:
    """Requests piped to a stdio server while its agent is busy were all read into memory (an unbounded queue
    behind the reader thread): a client piping a large file of steps to a slow agent made the server hold the
    whole file. Now reading stops at the HTTP transport's bound of requests sent ahead (256 KiB), so the pipe
    fills and the writer waits. Real process; measured in bytes the server took, never in time."""
    import errno
    import os

    from otel_agents.serve.http import MAX_PIPELINED

    proc = subprocess.Popen(SERVE + [f"{AGENTS}:hangs", "--step-timeout", "0"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        proc.stdin.write((rpc("agent/initialize") + "\n").encode())
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["result"]["name"] == "hangs"  # serving: its reader is running
        os.set_blocking(proc.stdin.fileno(), False)
        line = (rpc("agent/step", {"input": "x" * 1000}, 2) + "\n").encode()
        data = (rpc("agent/step", {"input": "hang"}, 1) + "\n").encode() + line * (16 * 1024)  # ~17 MB
        sent, stalled_since = 0, None
        while sent < len(data):
            try:
                sent += os.write(proc.stdin.fileno(), data[sent:sent + 65536])
                stalled_since = None
            except OSError as exc:
                assert exc.errno == errno.EAGAIN
                stalled_since = stalled_since or time.monotonic()
                if time.monotonic() - stalled_since > 3:  # the server took nothing more for 3 s: it stopped reading
                    break
                time.sleep(0.02)
        assert sent < MAX_PIPELINED + 4 * 1024 * 1024, f"the server read {sent} bytes ahead of a hung step"
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_an_agent_reading_stdin_does_not_consume_requests() -> None:
    proc = subprocess.run(SERVE + [f"{AGENTS}:reads_stdin"],
                          input="\n".join([rpc("agent/step", {"input": "x"}, 1), rpc("agent/initialize", id_=2)]) + "\n",
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    step, init = (json.loads(line) for line in proc.stdout.splitlines())
    assert step["result"]["public_output"] == "stdin gave ''" and init["id"] == 2


# -- who may talk to the HTTP server --------------------------------------------------------------------

def test_host_and_origin_checks(tmp_path: Path) -> None:
    with http_server(f"{AGENTS}:echo", "--allow-host", "agents.internal", "--allow-origin", "https://ui.example",
                     log=tmp_path / "serve.log") as (url, _):
        port = url.split(":")[2].split("/")[0]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "agents.internal"):
            assert post(url, rpc("agent/initialize"), {"Host": host})[0] == 200, host
        # DNS rebinding; then Host values that are not host[:port], whose last part urlsplit took as the name
        for host in ("evil.example", f"attacker.example:{port}", "127.0.0.1.evil.example",
                     "evil.example\\@127.0.0.1", "evil.example@localhost", "127.0.0.1/x@evil.example"):
            assert post(url, rpc("agent/step", {"input": "x"}), {"Host": host})[0] == 421, host
        assert post(url, rpc("agent/step", {"input": "x"}), {"Origin": "https://evil.example"})[0] == 403
        assert post(url, rpc("agent/initialize"), {"Origin": "https://ui.example"})[0] == 200
        assert post(url, rpc("agent/initialize"), {"Origin": f"http://localhost:{port}"})[0] == 200
    assert "echo: x" not in (tmp_path / "serve.log").read_text()


def _cors(url: str, method: str, headers: dict, body: bytes | None = None) -> tuple[int, dict, bytes]:
    """One request as a browser sends it (header names as the server wrote them, lower-cased)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request(method, parts.path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders() if k.lower() != "vary"} | {
            "vary": ", ".join(v for k, v in response.getheaders() if k.lower() == "vary")}, response.read()
    finally:
        connection.close()


def test_a_page_from_an_allowed_origin_can_call_the_server(tmp_path: Path) -> None:
    """--allow-origin let the page's requests pass the Origin check, but a browser sends a JSON POST (and any with
    Authorization or Mcp-Session-Id) only after a CORS preflight, which was 405, and shows a response only with
    Access-Control-Allow-Origin, which none had: no page could call the server. The preflight passes the Host and
    Origin checks (not the token: browsers send none on it); every answer to an allowed origin carries the CORS
    headers, the session header readable; a disallowed origin gets 403 and no CORS header. The origin is given as
    written (upper case, default port) and matched as browsers send it."""
    import os

    env = {**os.environ, "OTEL_AGENTS_ECP_TOKEN": "sekrit"}
    with http_server(f"{AGENTS}:echo", "--allow-origin", "https://UI.example:443", log=tmp_path / "serve.log",
                     env=env) as (url, _):
        page = {"Origin": "https://ui.example"}
        asks = {**page, "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,authorization, mcp-session-id"}
        status, headers, body = _cors(url, "OPTIONS", asks)
        assert (status, body) == (204, b""), headers
        assert headers["access-control-allow-origin"] == "https://ui.example"
        assert headers["access-control-allow-methods"] == "POST, DELETE"
        assert headers["access-control-allow-headers"] == "content-type, authorization, mcp-session-id"
        assert int(headers["access-control-max-age"]) > 0 and "Origin" in headers["vary"]
        assert "content-length" not in headers  # RFC 9110 section 8.6: none in a 204
        assert "access-control-allow-private-network" not in headers
        status, headers, _ = _cors(url, "OPTIONS", {**asks, "Access-Control-Request-Private-Network": "true"})
        assert status == 204 and headers["access-control-allow-private-network"] == "true"  # Chrome's PNA
        status, headers, body = _cors(url, "POST", {**page, "Content-Type": "application/json",
                                                    "Authorization": "Bearer sekrit"}, rpc("agent/initialize").encode())
        assert status == 200 and json.loads(body)["result"]["name"] == "echo"
        assert headers["access-control-allow-origin"] == "https://ui.example" and headers["vary"] == "Origin"
        assert "mcp-session-id" in headers["access-control-expose-headers"].lower() and headers["mcp-session-id"]
        status, headers, _ = _cors(url, "POST", {**page, "Content-Type": "application/json"}, b"{}")
        assert status == 401 and headers["access-control-allow-origin"] == "https://ui.example"  # readable refusal
        # disallowed: the preflight and the request refused, nothing readable; Host still checked on a preflight
        for method, extra in (("OPTIONS", {"Access-Control-Request-Method": "POST"}), ("POST", {})):
            status, headers, _ = _cors(url, method, {"Origin": "https://evil.example", **extra})
            assert status == 403 and "access-control-allow-origin" not in headers, (method, headers)
        assert _cors(url, "OPTIONS", {**asks, "Host": "evil.example"})[0] == 421
        # OPTIONS that is no preflight: what the endpoint serves (after the token check)
        assert _cors(url, "OPTIONS", {})[0] == 401
        status, headers, _ = _cors(url, "OPTIONS", {"Authorization": "Bearer sekrit"})
        assert status == 204 and headers["allow"] == "POST, DELETE, OPTIONS"


@pytest.mark.parametrize("value", ["*", "null"])
def test_any_origin_without_a_token_is_refused_at_start(value: str, tmp_path: Path) -> None:
    """``--allow-origin '*'`` without a token let every web page open in the user's browser run the agent on the
    loopback server and read its answer (the Origin check is what stops that); ``null`` too, the Origin of any
    page's sandboxed iframe. Now exit 2 saying why and what to do; with a token the server starts, and a page that
    does not send it is refused (401, readable), one that does is answered."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OTEL_AGENTS_ECP_TOKEN"}
    proc = subprocess.run(SERVE + [f"{AGENTS}:echo", "--http", "--port", "0", "--allow-origin", value],
                          capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert proc.returncode == 2, proc.stderr
    assert f"--allow-origin {value!r} without a token: any web page" in proc.stderr, proc.stderr
    assert "OTEL_AGENTS_ECP_TOKEN" in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(ValueError, match="without a token"):  # the server's own check, for any caller
        from otel_agents.serve.http import HTTPGate, HTTPSecurity

        HTTPGate("/ecp", HTTPSecurity(allowed_origins=[value]))
    origin = "https://evil.example" if value == "*" else "null"
    with http_server(f"{AGENTS}:echo", "--allow-origin", value, log=tmp_path / "serve.log",
                     env={**env, "OTEL_AGENTS_ECP_TOKEN": "sekrit"}) as (url, _):
        body = rpc("agent/step", {"input": "x"}).encode()
        status, headers, _ = _cors(url, "POST", {"Origin": origin, "Content-Type": "application/json"}, body)
        assert status == 401 and headers["access-control-allow-origin"] == origin
        status, _, answer = _cors(url, "POST", {"Origin": origin, "Content-Type": "application/json",
                                                "Authorization": "Bearer sekrit"}, body)
        assert status == 200 and json.loads(answer)["result"]["public_output"] == "echo: x"


@pytest.mark.parametrize("value", ["https://ui.example/", "ui.example", "https://ui.example/app", "ftp://ui.example"])
def test_an_allowed_origin_that_is_no_origin_is_refused(value: str) -> None:
    """``--allow-origin https://ui.example/`` (a trailing slash) never matched the ``Origin`` a browser sends, so
    every request of that page got 403 with nothing saying why: now exit 2 naming the option and the form."""
    proc = subprocess.run(SERVE + [f"{AGENTS}:echo", "--http", "--port", "0", "--allow-origin", value],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "--allow-origin" in proc.stderr and "scheme://host[:port]" in proc.stderr
    assert "Traceback" not in proc.stderr


_NO_UVICORN = """
import sys
class _Deny:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "uvicorn":
            raise ImportError("No module named 'uvicorn'")
sys.meta_path.insert(0, _Deny())
"""


@pytest.mark.parametrize("command", [["ecp", "serve", f"{AGENTS}:echo", "--http"],
                                     ["ecp", "serve", f"{AGENTS}:echo", "--collect", "0"],
                                     ["ecp", "collect", "-o", "envelopes.jsonl"]])
def test_a_server_without_uvicorn_is_a_one_line_error(command: list[str], tmp_path: Path) -> None:
    """Without Uvicorn (``otel-agents`` installed without the ``ecp`` extra), ``ecp serve --http`` imported and
    instrumented the agent, then died with a RuntimeError traceback (exit 0 for the stdio server's --collect
    receiver, its task's error unseen); ``ecp collect`` the same: now exit 2 before anything starts, naming the
    package and the extra."""
    import os

    (tmp_path / "sitecustomize.py").write_text(_NO_UVICORN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run(SERVE[:1] + command + ["--port", "0"] * ("--http" in command or "collect" in command),
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env, input="")
    assert proc.returncode == 2, proc
    assert proc.stderr.strip().endswith("the HTTP server needs uvicorn: pip install 'otel-agents[ecp]'"), proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_non_loopback_bind_needs_allow_remote() -> None:
    proc = subprocess.run(SERVE + [f"{AGENTS}:echo", "--http", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "--allow-remote" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("value", ["true", " TRUE "])
def test_the_sdk_switched_off_is_refused(value: str) -> None:
    """``OTEL_SDK_DISABLED=true`` left every step answered ``done`` with no tool call and no evaluation context
    (the envelope is folded from spans the disabled SDK never recorded): a grader failed the agent for it. Now
    ``ecp serve`` refuses to start (exit 2), naming the variable."""
    import os

    step = rpc("agent/initialize") + "\n" + rpc("agent/step", {"input": "x"}, 2) + "\n"
    proc = subprocess.run(SERVE + [f"{AGENTS}:echo"], input=step, capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env={**os.environ, "OTEL_SDK_DISABLED": value})
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr == f"otel-agents ecp serve: OTEL_SDK_DISABLED={value!r} turns the OpenTelemetry SDK off, and " \
                          "each step's envelope is folded from its spans: unset it for this process (--replay needs " \
                          "no spans)\n", proc.stderr


@pytest.mark.parametrize(("variables", "said"), [
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"},
     "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
     "OTEL_EXPORTER_OTLP_PROTOCOL='grpc': ecp serve sends OTLP over HTTP (http/protobuf) only"),
])
def test_an_otlp_destination_it_cannot_send_to_is_refused(variables: dict[str, str], said: str) -> None:
    """The standard OTLP variables were handed to the OTLP/HTTP exporter unchecked: a URL without a scheme or a
    gRPC protocol served every step and lost every span at export ("No connection adapters were found" at exit).
    Now ``ecp serve`` checks them as ``configure()``'s otlp preset does, and refuses to start (exit 2)."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_EXPORTER_OTLP_")}
    proc = subprocess.run(SERVE + [f"{AGENTS}:echo"], input=rpc("agent/initialize") + "\n", capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env={**env, **variables})
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.startswith(f"otel-agents ecp serve: {said}") and "Traceback" not in proc.stderr, proc.stderr


def test_an_unknown_otlp_protocol_variable_is_ignored_with_a_warning() -> None:
    """``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json`` (no exporter for it in the OpenTelemetry Python SDK) made
    ``ecp serve`` refuse to start; the OpenTelemetry specification asks that an enum value not recognised be warned
    about and ignored, as ``configure()`` now does: it serves, sending OTLP/HTTP, with one WARNING naming it."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_EXPORTER_OTLP_")}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json")
    proc = subprocess.run(SERVE + [f"{AGENTS}:echo"], input=rpc("agent/initialize") + "\n", capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env=env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["result"]["name"] == "echo", proc
    assert "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='http/json' is not valid; allowed: grpc, http/protobuf (the " \
           "OpenTelemetry Python SDK has no http/json exporter); ignored, as if unset" in proc.stderr, proc.stderr


def test_allow_remote_with_a_token(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "OTEL_AGENTS_ECP_TOKEN": "s3cret-token"}
    with http_server(f"{AGENTS}:echo", "--host", "0.0.0.0", "--allow-remote", "--allow-host", "127.0.0.1",
                     log=tmp_path / "serve.log", env=env) as (url, _):
        url = url.replace("0.0.0.0", "127.0.0.1")
        step = rpc("agent/step", {"input": "x"})
        status, headers, _ = post(url, step)
        assert status == 401 and headers["www-authenticate"].startswith("Bearer")
        assert post(url, step, {"Authorization": "Bearer wrong"})[0] == 401
        status, _, body = post(url, step, {"Authorization": "Bearer s3cret-token"})
        assert status == 200 and json.loads(body)["result"]["public_output"] == "echo: x"
    assert "s3cret-token" not in (tmp_path / "serve.log").read_text()


def test_allow_remote_without_a_token_is_said(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "OTEL_AGENTS_ECP_TOKEN"}
    with http_server(f"{AGENTS}:echo", "--host", "0.0.0.0", "--allow-remote", "--allow-host", "127.0.0.1",
                     log=tmp_path / "serve.log", env=env) as (url, _):
        status, _, body = post(url.replace("0.0.0.0", "127.0.0.1"), rpc("agent/step", {"input": "x"}))
        assert status == 200 and json.loads(body)["result"]["public_output"] == "echo: x"
    log = (tmp_path / "serve.log").read_text()
    assert log.count("serving 0.0.0.0 without --auth-token: anyone who can reach it can run the agent") == 1, log


@pytest.mark.parametrize("command", [["serve", f"{AGENTS}:echo", "--http"], ["collect", "-o", "-"]],
                         ids=["serve", "collect"])
@pytest.mark.parametrize(("token", "said", "given"), [
    ("pässwörd", "a non-ASCII character", "argument"), ("pässwörd", "a non-ASCII character", "variable"),
    ("密码", "a non-ASCII character", "variable"), ("two words", "a space", "variable"),
    ("tab\there", "a control character", "argument"), ("", "is empty", "argument")],  # an empty variable: unset
    ids=["latin-1-argument", "latin-1-variable", "cjk-variable", "space", "tab", "empty"])
def test_a_token_http_cannot_carry_is_refused_at_start(command: list, token: str, said: str, given: str) -> None:
    """A non-ASCII ``--auth-token`` was taken, then never matched: the server compared the header, read as
    latin-1 (as Uvicorn and Starlette read headers), re-encoded as UTF-8, with the token's UTF-8, so curl's UTF-8
    bytes were refused and only latin-1 clients of a latin-1 token got in; an empty one switched the check off.
    Now both servers refuse such a token at start (exit 2, the option named, the token never shown), given as
    the argument or in OTEL_AGENTS_ECP_TOKEN; nothing listens."""
    import os

    env = {**os.environ, "OTEL_AGENTS_ECP_TOKEN": token} if given == "variable" else None
    argv = SERVE[:-1] + command + ["--port", "0"] + (["--auth-token", token] if given == "argument" else [])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "argument --auth-token:" in proc.stderr and said in proc.stderr, proc.stderr
    assert "$OTEL_AGENTS_ECP_TOKEN" in proc.stderr and "Traceback" not in proc.stderr
    assert "serving" not in proc.stderr and "collecting" not in proc.stderr
    if token:
        assert token not in proc.stderr, proc.stderr


def test_a_token_is_matched_byte_for_byte(tmp_path: Path) -> None:
    """Visible ASCII (any punctuation) is matched exactly; the same letters sent in another encoding are not."""
    import os

    token = "A-z0._~+/=!$%&'()*,;:@[]^`{|}#?"
    env = {**os.environ, "OTEL_AGENTS_ECP_TOKEN": token}
    with http_server(f"{AGENTS}:echo", log=tmp_path / "serve.log", env=env) as (url, _):
        step = rpc("agent/step", {"input": "x"})
        assert post(url, step, {"Authorization": f"Bearer {token}"})[0] == 200
        assert post(url, step, {"Authorization": f"bearer  {token} "})[0] == 200  # scheme any case, spaces trimmed
        assert post(url, step, {"Authorization": f"Bearer {token[:-1]}"})[0] == 401
        assert post(url, step, {"Authorization": f"Bearer {token}\u00e9".encode("utf-8").decode("latin-1")})[0] == 401


# -- sessions ----------------------------------------------------------------------------------------

def test_sessions_have_their_own_agent_and_end_with_delete(tmp_path: Path) -> None:
    with http_server("tests.serve.agents:Counter", log=tmp_path / "serve.log") as (url, _):
        status, headers, body = post(url, rpc("agent/initialize"))
        assert status == 200 and "multi_turn" in json.loads(body)["result"]["capabilities"]
        a = {"Mcp-Session-Id": headers["mcp-session-id"]}
        b = {"Mcp-Session-Id": post(url, rpc("agent/initialize"))[1]["mcp-session-id"]}
        assert a != b

        def say(who: dict | None, text: str) -> str:
            return json.loads(post(url, rpc("agent/step", {"input": text}), who)[2])["result"]["public_output"]

        assert [say(a, "a1"), say(b, "b1"), say(a, "a2"), say(None, "d1")] == [
            "turn 1: a1", "turn 1: b1", "turn 2: a2", "turn 1: d1"]  # no header: the default session
        assert json.loads(post(url, rpc("agent/reset"), b)[2])["result"] is True
        assert [say(b, "b2"), say(a, "a3")] == ["turn 1: b2", "turn 3: a3"]  # b's reset is b's alone
        assert post(url, "", a, method="DELETE")[0] == 204
        assert post(url, rpc("agent/step", {"input": "x"}), a)[0] == 404
        assert post(url, rpc("agent/step", {"input": "x"}), {"Mcp-Session-Id": "made-up"})[0] == 404
        assert post(url, "", {"Mcp-Session-Id": "made-up"}, method="DELETE")[0] == 404


def test_a_batch_runs_in_one_session_and_opens_it_with_agent_initialize(tmp_path: Path) -> None:
    """JSON-RPC 2.0 batches over HTTP: the members run in order against one session (a new one when the batch
    holds agent/initialize and names none; its id comes back in Mcp-Session-Id) and the answers come back as an
    array; a batch of notifications only is 202 with no body."""
    with http_server("tests.serve.agents:Counter", log=tmp_path / "serve.log") as (url, _):
        batch = f"[{rpc('agent/initialize', id_=0)}, {rpc('agent/step', {'input': 'a'})}, " \
                f"{rpc('agent/step', {'input': 'b'}, id_=2)}]"
        status, headers, body = post(url, batch)
        answers = json.loads(body)
        assert status == 200 and [a["id"] for a in answers] == [0, 1, 2]
        assert [a["result"]["public_output"] for a in answers[1:]] == ["turn 1: a", "turn 2: b"]
        session = {"Mcp-Session-Id": headers["mcp-session-id"]}
        again = json.loads(post(url, f"[{rpc('agent/step', {'input': 'c'}, id_=3)}]", session)[2])
        assert again == [{"jsonrpc": "2.0", "id": 3, "result": again[0]["result"]}]
        assert again[0]["result"]["public_output"] == "turn 3: c"
        notifications = '[{"jsonrpc": "2.0", "method": "agent/step", "params": {"input": "d"}}]'
        assert post(url, notifications, session)[:3:2] == (202, b"")
        assert json.loads(post(url, rpc("agent/step", {"input": "e"}), session)[2])["result"]["public_output"] \
            == "turn 5: e"


def test_sessions_are_bounded_and_expire() -> None:
    from opentelemetry.sdk.trace import TracerProvider

    from otel_agents.serve import SessionManager, load_target
    from otel_agents.serve.session import Tracing

    now = [0.0]
    manager = SessionManager(load_target("tests.serve.agents:Counter"), Tracing(TracerProvider()), max_sessions=3,
                             idle_timeout=60, clock=lambda: now[0])
    ids = [manager.open()[0] for _ in range(5)]
    assert len(manager) == 3 and manager.get(ids[0]) is None and manager.get(ids[4]) is not None
    now[0] = 61
    assert manager.get(ids[4]) is None and len(manager) == 0
    manager.close()


def test_the_servers_log_names_the_logger_once(tmp_path: Path) -> None:
    """``ecp serve``'s log read ``WARNING:otel_agents:otel_agents: OTEL_AGENTS_STATUS_OK='maybe' is not valid…``:
    the default format's logger name, then the message's own ``otel_agents:`` (which says where it comes from in
    any application's log). Now the name is there once; another library's message keeps its logger's name."""
    import os

    proc = subprocess.run(SERVE + [f"{AGENTS}:echo"], input=rpc("agent/step", {"input": "hi"}) + "\n",
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "OTEL_AGENTS_STATUS_OK": "maybe"})
    assert proc.returncode == 0 and json.loads(proc.stdout)["result"]["public_output"], (proc.stdout, proc.stderr)
    assert "WARNING:otel_agents: OTEL_AGENTS_STATUS_OK='maybe' is not valid; spans keep status unset" in proc.stderr, \
        proc.stderr
    assert "otel_agents:otel_agents" not in proc.stderr, proc.stderr
