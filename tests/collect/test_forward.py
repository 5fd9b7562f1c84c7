"""``ecp collect --forward URL``: what the Forwarder makes of the endpoint's answers, against real HTTP endpoints
on loopback (a raw socket per test, so an answer can be endless, trickle, redirect or be no HTTP at all)."""

from __future__ import annotations

import logging
import socket
import threading
from typing import Callable

import pytest
from google.protobuf.json_format import MessageToJson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from otel_agents.serve.otlp import Forwarder

from .conftest import wait_for

PB = "application/x-protobuf"
Answer = Callable[[socket.socket, threading.Event], None]


class Endpoint:
    """An HTTP endpoint on 127.0.0.1 that answers its n-th connection with ``answers[n]`` (``answer(conn, stop)``,
    ended by ``stop`` or by the client going away) after reading the request; ``bodies``: the request bodies."""

    def __init__(self, *answers: Answer) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/v1/traces"
        self.bodies: list[bytes] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(answers,), daemon=True)
        self.thread.start()

    def _serve(self, answers: tuple[Answer, ...]) -> None:
        for answer in answers:
            try:
                conn, _ = self.server.accept()
            except OSError:  # closed by the test: this answer was not asked for
                return
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536)
                head, _, body = head.partition(b"\r\n\r\n")
                length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), b"0"))  # a GET: none
                while len(body) < length:
                    body += conn.recv(65536)
                self.bodies.append(body)
                try:
                    answer(conn, self.stop)
                except OSError:  # the forwarder closed the connection (the read cut off): next connection
                    pass

    def close(self) -> None:
        self.stop.set()
        self.server.close()


def ok(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n")


def partial(kind: str) -> Answer:
    """200 with a partial success rejecting 2 spans, encoded as ``kind`` says."""
    response = ExportTraceServiceResponse()
    response.partial_success.rejected_spans = 2
    response.partial_success.error_message = "span 3: bad trace_id"
    body = MessageToJson(response).encode() if kind == "json" else response.SerializeToString()

    def answer(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/{kind}\r\nContent-Length: "
                     f"{len(body)}\r\n\r\n".encode() + body)

    return answer


def endless(conn: socket.socket, stop: threading.Event) -> None:  # no length: the body ends when the server closes
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n\r\n")
    while not stop.is_set():
        conn.sendall(b"\0" * 65536)


def too_large(conn: socket.socket, stop: threading.Event) -> None:  # complete, but 2 MiB
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 2097152\r\n\r\n"
                 + b"\0" * 2097152)


def trickle(chunked: bool) -> Answer:
    """200 whose body comes a byte every 0.2 s (never ending before the forwarder's deadline); ``chunked``: the
    bytes are a chunk size line that never ends (read by http.client's ``readline``, not a body read)."""
    def answer(conn: socket.socket, stop: threading.Event) -> None:
        framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: 100000"
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n" + framing + b"\r\n\r\n")
        while not stop.wait(0.2):
            conn.sendall(b"0" if chunked else b"\0")

    return answer


def forwarding(endpoint: Endpoint, requests: int, timeout: float = 10.0) -> Forwarder:
    """A Forwarder to ``endpoint`` that has handled ``requests`` requests (one body each: ``request N``)."""
    forwarder = Forwarder(endpoint.url, timeout=timeout)
    for n in range(requests):
        forwarder.submit((f"request {n}".encode(), PB, None, None))
    wait_for(lambda: forwarder.sent + forwarder.failed == requests, f"{requests} requests handled", attempts=300)
    return forwarder


@pytest.mark.parametrize("kind", ["x-protobuf", "json"])
def test_spans_a_partial_success_rejected_are_counted_and_logged(kind: str, caplog) -> None:
    """A 200 whose ``ExportTraceServiceResponse`` says 2 spans were rejected (OTLP "Partial Success"), protobuf or
    JSON as its Content-Type says: the requests count as sent (accepted), the rejected spans are counted, logged
    with the endpoint's message at the 1st and 2nd such answer (not the 3rd), and in the summary. Before, any 2xx
    was counted sent and its body never read: the rejection was invisible."""
    endpoint = Endpoint(*[partial(kind)] * 3)
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        forwarder = forwarding(endpoint, 3)
        forwarder.close()
    endpoint.close()
    assert (forwarder.sent, forwarder.failed, forwarder.rejected, forwarder.unread) == (3, 0, 6, 0)
    logged = [r.getMessage() for r in caplog.records if "partial success" in r.getMessage()]
    assert logged == [f"otel-agents collect: {endpoint.url} rejected 2 span(s) of a forwarded request (partial "
                      f"success): 'span 3: bad trace_id' ({n} span(s) so far; logged at the 1st, 2nd, 4th, 8th, … "
                      f"such answer)" for n in (2, 4)]
    assert forwarder.summary() == (f"--forward {endpoint.url}: 3 request(s) sent, 0 failed, 0 dropped; 6 span(s) "
                                   f"rejected by it (partial success)")


def test_a_2xx_that_is_not_an_otlp_answer_counts_failed(caplog) -> None:
    """A 200 with an HTML page (a proxy's or a login page in front of the backend): before, the request counted
    sent and the page was read for a partial success (none found). Now it counts failed, logged quoting its content
    type and start as ``otel-agents export`` and ``ecp annotate --to phoenix`` quote one (one function); an empty
    protobuf answer (the empty message) is a success."""
    page = b"<!doctype html><title>Sign in</title>"

    def login(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(page)}\r\n\r\n".encode()
                     + page)

    endpoint = Endpoint(login, ok)
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        forwarder = forwarding(endpoint, 2)
        forwarder.close()
    endpoint.close()
    assert (forwarder.sent, forwarder.failed) == (1, 1)
    assert f"otel-agents collect: forwarding to {endpoint.url} failed: HTTP 200 with 'text/html', not an OTLP " \
           "ExportTraceServiceResponse (a proxy or a login page in the way?): '<!doctype html><title>Sign in</title>'" \
           " (1 so far" in caplog.text, caplog.text


@pytest.mark.parametrize("answer", [endless, too_large, trickle(chunked=False), trickle(chunked=True)],
                         ids=["endless", "too-large", "trickling", "trickling-chunk-size"])
def test_an_answer_too_large_or_too_slow_is_left_unread_and_the_next_request_forwarded(answer, caplog) -> None:
    """A 200 whose body is endless, larger than 1 MiB, or trickles (a byte every 0.2 s, in the body or in a chunk
    size line, so that urllib's per-receive timeout never fires): the request counts as sent (its status said
    accepted), the answer as unread, and the thread goes on: the next request is forwarded and its partial
    success counted. Before, the body was not read at all (no partial success could be seen)."""
    endpoint = Endpoint(answer, partial("x-protobuf"))
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        forwarder = forwarding(endpoint, 2, timeout=1.0)
        wait_for(lambda: forwarder.rejected == 2, "the second answer's partial success counted", attempts=100)
        forwarder.close()
    endpoint.close()
    assert endpoint.bodies == [b"request 0", b"request 1"]
    assert (forwarder.sent, forwarder.failed, forwarder.unread, forwarder.rejected) == (2, 0, 1, 2)
    (said,) = [r.getMessage() for r in caplog.records if "not read" in r.getMessage()]
    why = "larger than 1048576 bytes" if answer in (endless, too_large) else "not finished within 1 s"
    assert said == (f"otel-agents collect: {endpoint.url} accepted a forwarded request, its answer not read ({why}): "
                    f"counted sent, any partial success in it unknown (1 so far; logged at the 1st, 2nd, 4th, 8th, … "
                    f"one)")
    assert forwarder.summary().endswith("; 2 span(s) rejected by it (partial success); 1 answer(s) not read (too "
                                        "large or too slow)")


@pytest.mark.parametrize("status", [302, 307])
def test_a_redirect_is_not_followed_and_counted_failed(status: int, caplog) -> None:
    """An endpoint answering a redirect to another endpoint: not followed (urllib sent a POST answered 302 on as a
    GET without its body, which the other endpoint answered 200: counted sent, nothing delivered; 307 it refused
    without saying where it pointed); counted failed, logged naming the URL it gives, as ``otel-agents export``
    does. The next request is forwarded."""
    elsewhere = Endpoint(ok)

    def redirect(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(f"HTTP/1.1 {status} Moved\r\nLocation: {elsewhere.url}\r\nContent-Length: 0\r\n\r\n".encode())

    endpoint = Endpoint(redirect, ok)
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        forwarder = forwarding(endpoint, 2)
        forwarder.close()
    endpoint.close()
    elsewhere.close()
    assert (forwarder.sent, forwarder.failed) == (1, 1)
    assert endpoint.bodies == [b"request 0", b"request 1"] and elsewhere.bodies == []
    (said,) = [r.getMessage() for r in caplog.records if "forwarding to" in r.getMessage()]
    assert said == (f"otel-agents collect: forwarding to {endpoint.url} failed: answered {status} (a redirect to "
                    f"'{elsewhere.url}'), not followed: give the URL it names (1 so far; logged at the 1st, 2nd, 4th, "
                    f"8th, … failure)")


def test_an_answer_that_is_not_http_is_a_failure_not_the_end_of_forwarding() -> None:
    """An endpoint answering something that is not HTTP (``http.client.BadStatusLine``, not an ``OSError``): the
    request is counted failed and the next one forwarded. Before, the exception ended the forwarding thread: every
    later request waited in the queue until it was full, then was dropped."""
    def garbage(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    endpoint = Endpoint(garbage, ok)
    forwarder = forwarding(endpoint, 2)
    forwarder.close()
    endpoint.close()
    assert (forwarder.sent, forwarder.failed) == (1, 1)
    assert endpoint.bodies == [b"request 0", b"request 1"]


@pytest.mark.parametrize("host, url", [("127.0.0.1", "http://localhost:{port}/v1/traces"),
                                       ("127.0.0.1", "http://127.0.0.1:{port}/v1/traces"),
                                       ("localhost", "http://127.0.0.1:{port}"),
                                       ("0.0.0.0", "http://127.0.0.1:{port}/v1/traces"),
                                       ("0.0.0.0", "http://user:secret@0.0.0.0:{port}/v1/traces")])
def test_a_forward_to_its_own_address_is_refused_at_start(host: str, url: str, tmp_path, capsys) -> None:
    """``--forward`` naming the receiver's own address (the default port and a copied ``http://127.0.0.1:4318``):
    before, collect started and passed every request back to itself for ever (thousands from one span; the trace
    never went idle). Now exit 2 naming the loop. (The port is held by the test: before the fix, collect failed to
    bind it, with another message, rather than run.)"""
    from otel_agents.cli import main

    with socket.create_server((host, 0)) as held:
        port = held.getsockname()[1]
        url = url.format(port=port)
        assert main(["ecp", "collect", "--host", host, "--port", str(port), "--forward", url, "--allow-remote",
                     "--auth-token", "t0ken", "-o", str(tmp_path / "e.jsonl")]) == 2
    err = capsys.readouterr().err
    shown = url.replace("user:secret@", "[REDACTED]@")
    assert f"--forward {shown} is this receiver's own address ({host}:{port}): every request would be forwarded " \
           "back to it, for ever" in err and "secret" not in err
    assert not (tmp_path / "e.jsonl").exists()


class Relay:
    """A proxy on 127.0.0.1 that relays each POST, headers and body, to ``target`` (set later) and its answer back;
    ``count``: the requests relayed."""

    def __init__(self) -> None:
        import http.client
        import http.server

        relay = self
        self.target = ""
        self.count = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                from urllib.parse import urlsplit

                body = self.rfile.read(int(self.headers["Content-Length"]))
                relay.count += 1
                target = urlsplit(relay.target)
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                skip = ("host", "connection", "content-length")
                conn.request("POST", target.path, body, {k: v for k, v in self.headers.items() if k.lower() not in skip})
                answer = conn.getresponse()
                data = answer.read()
                conn.close()
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.headers.get("Content-Type", ""))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_loop_through_another_collect_and_a_proxy_is_cut(collects, tmp_path) -> None:
    """collect A forwards to collect B, B to a proxy that relays to A: a loop A's start check cannot see. Before,
    every request went round for ever (the trace never went idle, its envelope came only at shutdown). Now each
    forwarder appends its mark to the request's ``otel-agents-forwarded`` header (B keeps A's); A gets back a request
    carrying its own and does not forward or fold it again: each collect folds the run once, before shutdown, each
    request goes round once, and A logs the loop once and counts it."""
    import re

    from .conftest import emit, new_runs

    relay = Relay()
    try:
        b = collects("b", "--trace-idle", "0.3", "--forward", relay.url)
        a = collects("a", "--trace-idle", "0.3", "--forward", b.url)
        relay.target = a.url
        emit(tmp_path, "root", a.url, new_runs(1))
        wait_for(lambda: len(a.envelopes()) == 1 and len(b.envelopes()) == 1, "one envelope on each side")
        wait_for(lambda: "came back" in a.log.read_text(encoding="utf-8"), "the loop logged")
        log_a, log_b = a.stop(), b.stop()
    finally:
        relay.close()
    (summary,) = [line for line in log_a.splitlines() if line.startswith("otel-agents collect: --forward ")]
    found = re.fullmatch(rf"otel-agents collect: --forward {re.escape(b.url)}: (\d+) request\(s\) sent, 0 failed, 0 "
                         r"dropped; (\d+) came back \(a loop\), not forwarded again", summary)
    assert found and found[1] == found[2] == str(relay.count), (summary, relay.count)
    assert f"--forward {relay.url}: {relay.count} request(s) sent, 0 failed" in log_b
    assert log_a.count("came back here: a loop") == 1 and "came back" not in log_b
    assert [e["trace_id"] for e in a.envelopes()] == [e["trace_id"] for e in b.envelopes()]
    assert not any(e.get("incomplete") for e in a.envelopes() + b.envelopes()), a.envelopes()
