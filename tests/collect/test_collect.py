"""``otel-agents ecp collect``: a trace sent by two processes is folded once, whole; hostile requests get
OTLP/HTTP error answers and lose no valid span around them; what the Collector's ``otlphttp`` exporter sends
(protobuf, gzip, batches) is read; at capacity the answer is 503 with ``Retry-After``."""

from __future__ import annotations

import gzip
import json
import re
import socket
import threading
import zlib
import urllib.error
import urllib.request

import httpx
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                        ExportTraceServiceResponse)

from otel_agents.exporters.file import to_otlp_json
from otel_agents.serve.otlp import OTLPReceiver

from ..exporters.conftest import Recorder, check
from .conftest import emit, new_runs, wait_for

PB = "application/x-protobuf"


def _post(url: str, body: bytes, content_type: str = PB, **headers: str) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": content_type, **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def _runs_of(rec: Recorder, n: int) -> list:
    """``n`` small runs (agent → tool) recorded in-process; their spans."""
    from otel_agents.semconv import Kind

    for i in range(n):
        agent = rec.telemetry.start_span(Kind.AGENT, "support")
        tool = rec.telemetry.start_span(Kind.TOOL, "lookup_order", parent=agent,
                                        attributes={"gen_ai.tool.name": "lookup_order"})
        tool.set_output(f"order {i}")
        tool.end()
        agent.set_output(f"answer {i}")
        agent.end()
    spans = rec.spans
    rec.memory.clear()
    return spans


def test_a_trace_from_two_processes_is_one_envelope(collects, tmp_path) -> None:
    c = collects("c", "--trace-idle", "0.3")
    runs = new_runs(3)
    emit(tmp_path, "tools", c.url, runs)  # the tool server's spans first: held until the root arrives
    emit(tmp_path, "root", c.url, runs)
    wait_for(lambda: len(c.envelopes()) >= 3, "3 envelopes")
    log = c.stop()
    envelopes = check(c.envelopes())
    assert sorted(e["trace_id"] for e in envelopes) == sorted(r["trace_id"] for r in runs)
    for e in envelopes:
        assert [t["name"] for t in e["tool_calls"]] == ["lookup_order", "check_refund_policy"]
        assert e["public_output"] == "It shipped."
        assert e["metrics"]["model_calls"] == 1 and "incomplete" not in e
    # every trace was folded before the stop: the summary says so, and no warning about a late span (there was a
    # WARNING "folded the 0 trace(s) (0 span(s)) held now; spans of them arriving later are not in their envelopes")
    assert "0 trace(s) held at shutdown" in log and "held now" not in log and "WARNING" not in log, log


def test_hostile_requests(collects) -> None:
    c = collects("c", "--trace-idle", "0.2", "--max-body-bytes", "100000")
    rec = Recorder()
    good = _runs_of(rec, 1)
    # one JSON request: a valid run and a span with a broken id in the same request
    data = to_otlp_json(good)
    bad = dict(data["resourceSpans"][0]["scopeSpans"][0]["spans"][0], traceId="not-hex", name="broken")
    data["resourceSpans"][0]["scopeSpans"][0]["spans"].append(bad)
    status, headers, body = _post(c.url, json.dumps(data).encode(), "application/json")
    assert status == 200 and headers["content-type"] == "application/json"
    answer = json.loads(body)
    assert answer["partialSuccess"]["rejectedSpans"] == "1"
    assert "spans[2].traceId: 'not-hex' is not hex" in answer["partialSuccess"]["errorMessage"]
    # undecodable bodies: 400 with a google.rpc.Status in the request's encoding
    status, headers, body = _post(c.url, b"\x0a\xff\xff\xff", PB)
    assert status == 400 and headers["content-type"] == PB
    assert Status.FromString(body).message.startswith("not a protobuf ExportTraceServiceRequest")
    status, _, body = _post(c.url, b'{"resourceSpans": [', "application/json")
    assert status == 400 and json.loads(body)["message"].startswith("invalid JSON")
    # a lone surrogate escape (JSON.stringify writes one): that string is escaped as text, the request kept
    lone = to_otlp_json(_runs_of(rec, 1))
    lone["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] = "caf\udce9"
    status, _, body = _post(c.url, json.dumps(lone).encode(), "application/json")
    assert (status, json.loads(body)) == (200, {})
    # a UTF-8 byte-order mark at the start of the body is ignored (RFC 8259 section 8.1), as fold does; it was
    # "invalid JSON"
    with_bom = b"\xef\xbb\xbf" + json.dumps(to_otlp_json(_runs_of(rec, 1))).encode()
    status, _, body = _post(c.url, with_bom, "application/json")
    assert (status, json.loads(body)) == (200, {})
    status, _, body = _post(c.url, b'{"resourceSpans": {}}', "application/json")
    assert status == 400 and "resourceSpans: expected an array" in json.loads(body)["message"]
    for scopes in (b"5", b"true", b'"abc"'):  # a resource's scopeSpans of another type: that resource rejected
        status, _, body = _post(c.url, b'{"resourceSpans": [{"scopeSpans": ' + scopes + b"}]}", "application/json")
        assert (status, json.loads(body)["partialSuccess"]["rejectedSpans"]) == (200, "1"), body
        assert "resourceSpans[0].scopeSpans: expected an array" in json.loads(body)["partialSuccess"]["errorMessage"]
    status, _, body = _post(c.url, b"not gzip", PB, **{"Content-Encoding": "gzip"})
    assert status == 400 and "not a gzip stream" in Status.FromString(body).message
    status, _, _ = _post(c.url, b"{}", "text/plain")
    assert status == 415
    status, _, _ = _post(c.url, b"{}", "application/json", **{"Content-Encoding": "br"})
    assert status == 415
    # too large: as sent, and once decompressed (a gzip bomb stops at the limit)
    status, _, _ = _post(c.url, b" " * 100_001, "application/json")
    assert status == 413
    status, _, body = _post(c.url, gzip.compress(b" " * 1_000_000), "application/json", **{"Content-Encoding": "gzip"})
    assert status == 413 and "once decompressed" in json.loads(body)["message"]
    # the security checks of ecp serve
    assert _post(c.url, b"{}", "application/json", Host="evil.example")[0] == 421
    assert _post(c.url, b"{}", "application/json", Origin="http://evil.example")[0] == 403
    assert _post(c.url.replace("/v1/traces", "/v1/logs"), b"{}", "application/json")[0] == 404
    # the valid run of the mixed request was folded, and those of the requests with a surrogate and with a BOM
    wait_for(lambda: len(c.envelopes()) >= 3, "the valid runs' envelopes")
    c.stop()
    envelopes = check(c.envelopes())
    assert sorted(e["public_output"] for e in envelopes) == ["answer 0"] * 3
    assert [t["name"] for e in envelopes for t in e["tool_calls"]] == ["lookup_order"] * 3
    rec.provider.shutdown()


def test_a_page_from_an_allowed_origin_can_send_spans(collects) -> None:
    """OpenTelemetry JS's OTLP/HTTP exporter in a browser posts JSON (or protobuf): a CORS preflight first, which
    was 405, and the answer was unreadable without Access-Control-Allow-Origin. ``--allow-origin`` now works as for
    ``ecp serve``: preflight 204 with the CORS headers, the answers readable (Retry-After exposed for a 503), a
    disallowed origin refused with no CORS header."""
    from tests.serve.test_robustness import _cors

    c = collects("c", "--allow-origin", "https://ui.example", "--trace-idle", "0.2")
    status, headers, _ = _cors(c.url, "OPTIONS", {"Origin": "https://ui.example",
                                                  "Access-Control-Request-Method": "POST",
                                                  "Access-Control-Request-Headers": "Content-Type"})
    assert status == 204 and headers["access-control-allow-origin"] == "https://ui.example", headers
    assert headers["access-control-allow-methods"] == "POST"
    assert headers["access-control-allow-headers"] == "content-type"
    body = json.dumps(to_otlp_json(_runs_of(Recorder(), 1))).encode()
    status, headers, answer = _cors(c.url, "POST", {"Origin": "https://ui.example", "Content-Type": "application/json"},
                                    body)
    assert (status, json.loads(answer)) == (200, {})
    assert headers["access-control-allow-origin"] == "https://ui.example" and headers["vary"] == "Origin"
    assert headers["access-control-expose-headers"] == "Retry-After"
    status, headers, _ = _cors(c.url, "OPTIONS", {"Origin": "https://evil.example",
                                                  "Access-Control-Request-Method": "POST"})
    assert status == 403 and "access-control-allow-origin" not in headers
    wait_for(lambda: len(c.envelopes()) >= 1, "the page's run")
    c.stop()
    assert [e["public_output"] for e in c.envelopes()] == ["answer 0"]


def test_any_origin_without_a_token_is_refused_at_start(tmp_path) -> None:
    """``--allow-origin '*'`` (or ``null``) without a token let every web page open in the user's browser send spans
    to the receiver (poisoning the envelopes it writes): exit 2 saying why, as ``ecp serve`` does."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OTEL_AGENTS_ECP_TOKEN"}
    for value in ("*", "null"):
        proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "ecp", "collect", "--port", "0",
                               "-o", str(tmp_path / "out.jsonl"), "--allow-origin", value],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"otel-agents ecp collect: --allow-origin {value!r} without a token: any web "
                                      f"page"), proc.stderr
        assert "send spans to this server" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_a_non_loopback_host_without_a_token_is_served_and_said(collects) -> None:
    """``--allow-remote`` without a token is allowed (a proxy in front may check callers) but was silent, where
    ``ecp serve`` warns: anyone who can reach the port can send spans. Now one warning at start; with a token none."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OTEL_AGENTS_ECP_TOKEN"}
    said = "listening on 0.0.0.0 without --auth-token: anyone who can reach it can send spans"
    log = collects("open", "--host", "0.0.0.0", "--allow-remote", "--allow-host", "127.0.0.1", env=env).stop()
    assert log.count(said) == 1, log
    log = collects("token", "--host", "0.0.0.0", "--allow-remote", "--allow-host", "127.0.0.1",
                   env={**env, "OTEL_AGENTS_ECP_TOKEN": "t0ken"}).stop()
    assert "without --auth-token" not in log and "collecting OTLP at" in log, log


def test_the_exit_summary_counts_rejected_spans_among_those_received(collects) -> None:
    """One request of two spans, one with a broken id: the summary said "1 span(s) received, 1 rejected",
    which reads as the one span received being rejected, while the other was folded."""
    c = collects("c", "--trace-idle", "0.2")
    rec = Recorder()
    data = to_otlp_json(_runs_of(rec, 1))
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans.append(dict(spans[0], traceId="not-hex", name="broken"))
    status, _, body = _post(c.url, json.dumps(data).encode(), "application/json")
    assert status == 200 and json.loads(body)["partialSuccess"]["rejectedSpans"] == "1"
    wait_for(lambda: len(c.envelopes()) >= 1, "the valid run's envelope")
    log = c.stop()
    assert f"{len(spans)} span(s) received, 1 of them rejected; 1 trace(s) folded" in log, log[-800:]
    rec.provider.shutdown()


def test_compressed_bodies_gzip_members_and_deflate_are_read_whole(collects) -> None:
    """RFC 1952: a gzip stream may be several members back to back (concatenated files, a streaming compressor):
    all of them are the body, as gunzip reads them, within the decompressed limit; bytes after the last member
    that are not a gzip member are a 400 naming them, not silently dropped. ``deflate`` (zlib), which the SDK's
    exporter sends with ``OTEL_EXPORTER_OTLP_COMPRESSION=deflate``, is read too (it was a 415: every span lost)."""
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    c = collects("c", "--trace-idle", "0.2", "--max-body-bytes", "100000")
    rec = Recorder()
    assert OTLPSpanExporter(endpoint=c.url, compression=Compression.Deflate).export(_runs_of(rec, 1)) \
        == SpanExportResult.SUCCESS
    status, _, answer = _post(c.url, zlib.compress(b"{}") + b"x", "application/json", **{"Content-Encoding": "deflate"})
    assert (status, json.loads(answer)["message"]) == (400, "Content-Encoding deflate, but 1 byte(s) follow the "
                                                             "end of its stream")
    body = encode_spans(_runs_of(rec, 1)).SerializeToString()
    half = len(body) // 2  # the request split mid-span across two members
    two = gzip.compress(body[:half]) + gzip.compress(body[half:])
    status, _, answer = _post(c.url, two, PB, **{"Content-Encoding": "gzip"})
    assert (status, ExportTraceServiceResponse.FromString(answer).HasField("partial_success")) == (200, False)
    status, _, answer = _post(c.url, gzip.compress(body) + b"trailing", PB, **{"Content-Encoding": "gzip"})
    assert status == 400
    assert "the 8 byte(s) after the gzip stream's member 1 are not a gzip member" in Status.FromString(answer).message
    # the limit holds for the members together: 3 x 200 kB, each under the 400 kB limit, are 413
    bomb = gzip.compress(b" " * 200_000) * 3
    status, _, answer = _post(c.url, bomb, "application/json", **{"Content-Encoding": "gzip"})
    assert status == 413 and "once decompressed" in json.loads(answer)["message"]
    wait_for(lambda: len(c.envelopes()) >= 2, "the deflate and two-member requests' envelopes")
    c.stop()
    envelopes = check(c.envelopes())
    assert [e["public_output"] for e in envelopes] == ["answer 0", "answer 0"]
    assert [t["name"] for e in envelopes for t in e["tool_calls"]] == ["lookup_order"] * 2
    rec.provider.shutdown()


def test_a_rejected_span_is_named_without_echoing_its_secrets(collects) -> None:
    """partial_success names the field at fault and quotes an excerpt of its value: a secret-shaped value is
    redacted there and in the receiver's log, the value under a secret-named key is not quoted, and a huge
    value is cut (before, 60 characters of any value went back and into the log: an API key fits)."""
    c = collects("c")
    key = "sk-proj-" + "a1b2c3d4" * 4
    trace = "0af7651916cd43dd8448eb211c80319c"
    spans = [{"traceId": trace, "spanId": key, "name": "a"},
             {"traceId": trace, "spanId": "b7ad6b7169203332", "name": "b", "attributes": [
                 {"key": "api_key", "value": {"intValue": "hunter2hunter2"}}]},
             {"traceId": trace, "spanId": "b7ad6b7169203333", "name": "c", "kind": f"Bearer {key}"},
             {"name": "y" * 100_000}]
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()
    status, _, answer = _post(c.url, body, "application/json")
    partial = json.loads(answer)["partialSuccess"]
    assert (status, partial["rejectedSpans"]) == (200, "4")
    message = partial["errorMessage"]
    assert "spans[0].spanId: '[REDACTED]' is not hex" in message, message
    assert "spans[1].attributes[0].value.intValue: expected a signed 64-bit integer, got [REDACTED]" in message
    assert "spans[2].kind: expected an enum number or name, got 'Bearer [REDACTED]'" in message
    log = c.stop()
    for text in (message, log):
        assert "a1b2c3d4" not in text and "hunter2" not in text and "y" * 100 not in text
    assert len(message) < 1000


def test_with_content_capture_off_a_rejected_value_is_not_quoted(collects, monkeypatch, tmp_path) -> None:
    """An attribute's value may be content (``input.value``: what the user said); with content capture off, the
    error naming a bad one says its type and quotes nothing, in ``partial_success``, the receiver's log and
    ``fold``'s standard error (the same reader). Before, 60 characters of it went to all three."""
    import subprocess
    import sys

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")
    said = "my card ends 4242 and I live at 12 Elm Street"
    spans = [{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203332", "name": "b",
              "attributes": [{"key": "input.value", "value": {"intValue": said}}]}]
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    c = collects("c")
    status, _, answer = _post(c.url, body.encode(), "application/json")
    message = json.loads(answer)["partialSuccess"]["errorMessage"]
    assert status == 200 and "attributes[0].value.intValue: expected a signed 64-bit integer, got a str" in message
    log = c.stop()
    (tmp_path / "t.jsonl").write_text(body + "\n", encoding="utf-8")
    fold = subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold", str(tmp_path / "t.jsonl")],
                          capture_output=True, text=True, timeout=120)
    assert "expected a signed 64-bit integer, got a str" in fold.stderr, fold.stderr
    for text in (message, log, fold.stderr):
        assert "4242" not in text and "Elm" not in text, text


def test_token(collects) -> None:
    c = collects("c", "--auth-token", "s3cret")
    assert _post(c.url, b"{}", "application/json")[0] == 401
    assert _post(c.url, b"{}", "application/json", Authorization="Bearer s3cret")[0] == 200
    c.stop()


def test_what_the_collector_otlphttp_exporter_sends(collects) -> None:
    """protobuf, gzip, one request holding several traces (its batch processor), one trace split over requests."""
    c = collects("c", "--trace-idle", "0.3")
    rec = Recorder()
    spans = _runs_of(rec, 4)
    by_trace: dict[int, list] = {}
    for s in spans:
        by_trace.setdefault(s.context.trace_id, []).append(s)
    traces = list(by_trace.values())
    first = [s for t in traces[:3] for s in t] + [traces[3][0]]  # 3 whole traces and half of the 4th
    second = traces[3][1:]
    for batch in (first, second):
        body = gzip.compress(encode_spans(batch).SerializeToString())
        status, headers, answer = _post(c.url, body, PB, **{"Content-Encoding": "gzip",
                                                           "User-Agent": "OpenTelemetry Collector Contrib/0.x"})
        assert status == 200 and headers["content-type"] == PB
        assert not ExportTraceServiceResponse.FromString(answer).HasField("partial_success")
    wait_for(lambda: len(c.envelopes()) >= 4, "4 envelopes")
    c.stop()
    envelopes = check(c.envelopes())
    assert sorted(e["public_output"] for e in envelopes) == [f"answer {i}" for i in range(4)]
    assert all(len(e["tool_calls"]) == 1 for e in envelopes)
    rec.provider.shutdown()


@pytest.mark.asyncio
async def test_at_capacity_503_with_retry_after() -> None:
    """While the worker holds a request past ``max_pending_bytes``, the next is answered 503 + Retry-After
    (what the otlphttp exporter retries after, as a throttle), and accepted once the worker is free."""
    release = threading.Event()
    got: list[int] = []

    def sink(spans, raw) -> None:
        got.append(len(spans))
        release.wait(30)

    app = OTLPReceiver(sink, max_pending_bytes=1)
    rec = Recorder()
    body = encode_spans(_runs_of(rec, 1)).SerializeToString()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        import asyncio

        first = asyncio.ensure_future(client.post("/v1/traces", content=body, headers={"content-type": PB}))
        for _ in range(300):
            if got:
                break
            await asyncio.sleep(0.01)
        busy = await client.post("/v1/traces", content=body, headers={"content-type": PB})
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert Status.FromString(busy.content).message == "receiver at capacity: retry later"
        release.set()
        assert (await first).status_code == 200
        assert (await client.post("/v1/traces", content=body, headers={"content-type": PB})).status_code == 200
    app.close()
    assert app.busy == 1 and got == [2, 2]
    rec.provider.shutdown()


# -- malformed HTTP: the table of ecp serve's hostile suite, against collect (same HTTPGate, same Uvicorn set-up) --

from ..serve.test_hostile import HTTP_CASES, _exchange  # noqa: E402

# their builders name /ecp (collect's path check answers 404) or send a well-framed body with no Content-Type
# (OTLP requires one: 415)
_OVERRIDES = {"unknown method": {404}, "chunked body": {415}, "chunked, request hidden after the last chunk": {415},
              "gzip body": {200}}  # OTLP/HTTP takes gzip (a JSON-RPC object is an empty OTLP request)
_CASES = [c for c in HTTP_CASES if c[0] != "other path"]  # /ecp-specific; collect's 404 is tested above
_VALID = b'{"resourceSpans": []}'


@pytest.fixture(scope="module")
def hostile_collect(tmp_path_factory):
    from .conftest import Collect

    c = Collect(tmp_path_factory.mktemp("hostile"), "c", "--max-body-bytes", "1000000", "--connection-timeout", "3")
    yield c
    c.stop()


@pytest.mark.parametrize("name,build,statuses", _CASES, ids=[c[0] for c in _CASES])
def test_malformed_http(hostile_collect, name: str, build, statuses: set[int]) -> None:
    statuses = _OVERRIDES.get(name, statuses)
    url = hostile_collect.url
    answers = _exchange(url, build(url))
    if statuses:
        assert answers and answers[0][0] in statuses, (name, answers)
    for status, body in answers:  # clean HTTP answers; ours carry a JSON Status (h11's own 400s are plain)
        assert 200 <= status < 600
        if body and status not in (400,):
            json.loads(body)
    if name.startswith("chunked") or name == "pipelined requests":
        assert len(answers) == (2 if name == "pipelined requests" else 1)  # nothing smuggled in
        assert all(status == answers[0][0] for status, _ in answers)
    status, _, _ = _post(url, _VALID, "application/json")  # and the next request is served
    assert status == 200 and hostile_collect.proc.poll() is None


def test_otlp_grpc_beside_http(collects, tmp_path) -> None:
    """``--grpc-port``: a run whose tool server sends OTLP/gRPC (gzip) and whose agent sends OTLP/HTTP is one
    envelope; with a token, a gRPC call without it is UNAUTHENTICATED."""
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    c = collects("c", "--trace-idle", "0.3", "--grpc-port", "0")
    assert c.grpc.startswith("127.0.0.1:")
    runs = new_runs(2)
    emit(tmp_path, "tools", f"grpc:{c.grpc}", runs)
    emit(tmp_path, "root", c.url, runs)
    wait_for(lambda: len(c.envelopes()) >= 2, "2 envelopes")
    log = c.stop()
    envelopes = check(c.envelopes())
    assert sorted(e["trace_id"] for e in envelopes) == sorted(r["trace_id"] for r in runs)
    # what each envelope holds, and the receiver's log, said when it fails (once, loaded, in CI's floor suite)
    assert all([t["name"] for t in e["tool_calls"]] == ["lookup_order", "check_refund_policy"] for e in envelopes), (
        [{k: e.get(k) for k in ("tool_calls", "metrics", "incomplete", "evaluation_context")} for e in envelopes],
        log[-3000:])

    locked = collects("locked", "--grpc-port", "0", "--auth-token", "s3cret")
    rec = Recorder()
    request = ExportTraceServiceRequest.FromString(encode_spans(_runs_of(rec, 1)).SerializeToString())
    with grpc.insecure_channel(locked.grpc) as channel:
        export = trace_service_pb2_grpc.TraceServiceStub(channel).Export
        with pytest.raises(grpc.RpcError) as refused:
            export(request, timeout=30)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        response = export(request, timeout=30, metadata=[("authorization", "Bearer s3cret")])
        assert not response.HasField("partial_success")
        # the scheme is case-insensitive (RFC 9110 11.1), as over HTTP: a Collector configured with
        # "bearer ..." had every batch refused on the gRPC port only
        for scheme in ("bearer", "BEARER"):
            assert not export(request, timeout=30, metadata=[("authorization", f"{scheme} s3cret")]).HasField(
                "partial_success")
            assert _post(locked.url, b"{}", "application/json", Authorization=f"{scheme} s3cret")[0] == 200
        with pytest.raises(grpc.RpcError) as refused:
            export(request, timeout=30, metadata=[("authorization", "Basic s3cret")])
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    locked.stop()
    rec.provider.shutdown()


def test_an_app_configured_by_environment_alone_sends_grpc(collects, tmp_path) -> None:
    """``OTEL_EXPORTER_OTLP_PROTOCOL=grpc`` with ``OTEL_EXPORTER_OTLP_ENDPOINT`` at a gRPC receiver (``ecp collect
    --grpc-port``) made ``configure()`` raise. Now an application process that calls ``otel_agents.configure()`` with
    no argument but ``frameworks`` (exporter, protocol, endpoint, compression from its environment) sends its spans
    over OTLP/gRPC, and with a tool server's over OTLP/HTTP the run is one envelope."""
    import os

    c = collects("c", "--trace-idle", "0.3", "--grpc-port", "0")
    runs = new_runs(2)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))}
    env.update(OTEL_AGENTS_EXPORTERS="otlp", OTEL_EXPORTER_OTLP_PROTOCOL="grpc", OTEL_SERVICE_NAME="grpc-app",
               OTEL_EXPORTER_OTLP_ENDPOINT=f"http://{c.grpc}", OTEL_EXPORTER_OTLP_TRACES_COMPRESSION="gzip")
    emit(tmp_path, "tools", c.url, runs)  # first, as in the test above: the agent's span ends each run
    emit(tmp_path, "root", "configure", runs, env)
    wait_for(lambda: len(c.envelopes()) >= 2, "2 envelopes")
    log = c.stop()
    envelopes = check(c.envelopes())
    assert sorted(e["trace_id"] for e in envelopes) == sorted(r["trace_id"] for r in runs)
    # what each envelope holds, and the receiver's log, said when it fails (once, loaded, in CI's floor suite)
    assert all([t["name"] for t in e["tool_calls"]] == ["lookup_order", "check_refund_policy"] for e in envelopes), (
        [{k: e.get(k) for k in ("tool_calls", "metrics", "incomplete", "evaluation_context")} for e in envelopes],
        log[-3000:])
    assert all(e["public_output"] == "It shipped." for e in envelopes), envelopes


def test_opentelemetry_instrument_with_the_distros_default_grpc(collects, tmp_path) -> None:
    """What the README says of zero-code over gRPC: with the ``otlp-grpc`` extra, ``opentelemetry-instrument`` under
    the standard distro's defaults (``otlp`` traces exporter, protocol ``grpc``), given only the endpoint, delivers
    a LangChain run our instrumentor traced to a gRPC receiver: one envelope, with its tool call."""
    import os
    import subprocess
    import sys
    from importlib.metadata import entry_points
    from pathlib import Path

    from tests.backends import runs

    if runs.skip_reason("langchain") or not list(entry_points(group="opentelemetry_configurator")):
        pytest.skip("needs langchain and opentelemetry-distro in this venv")
    c = collects("c", "--trace-idle", "0.3", "--grpc-port", "0")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://{c.grpc}", OTEL_METRICS_EXPORTER="none",
               OTEL_LOGS_EXPORTER="none", OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=runs.others_disabled("langchain"))
    repo = Path(runs.__file__).resolve().parents[2]
    done = subprocess.run([str(Path(sys.executable).parent / "opentelemetry-instrument"), sys.executable,
                           str(repo / "tests/backends/runs.py"), "langchain"], env=env, cwd=repo,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    wait_for(lambda: len(c.envelopes()) >= 1, "1 envelope")
    c.stop()
    (envelope,) = check(c.envelopes())
    assert [t["name"] for t in envelope["tool_calls"]] == ["lookup_order"], envelope


def test_opentelemetry_instrument_as_docs_collect_md_says_sends_traces_and_nothing_refused(collects, tmp_path) -> None:
    """docs/collect.md's ``opentelemetry-instrument`` options, pointed at ``ecp collect`` by the generic endpoint:
    the run arrives, and nothing is refused. Before, the options set the traces exporter alone; the distro's
    default metrics exporter sent to ``/v1/metrics`` too, which ``ecp collect`` answers 404, and the application
    logged ``Failed to export metrics batch code: 404``."""
    import os
    import re
    import shlex
    import subprocess
    import sys
    from importlib.metadata import entry_points
    from pathlib import Path

    from tests.backends import runs

    if runs.skip_reason("langchain") or not list(entry_points(group="opentelemetry_configurator")):
        pytest.skip("needs langchain and opentelemetry-distro in this venv")
    repo = Path(runs.__file__).resolve().parents[2]
    text = (repo / "docs" / "collect.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"`(opentelemetry-instrument --traces_exporter otlp[^`]*)`", text)
    options = shlex.split(command)[1:]
    c = collects("c", "--trace-idle", "0.3")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_", "LANGFUSE_"))}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=c.url.removesuffix("/v1/traces"),
               OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=runs.others_disabled("langchain"))
    done = subprocess.run([str(Path(sys.executable).parent / "opentelemetry-instrument"), *options, sys.executable,
                           str(repo / "tests/backends/runs.py"), "langchain"], env=env, cwd=repo,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "Failed to export" not in done.stderr, done.stderr[-3000:]
    wait_for(lambda: len(c.envelopes()) >= 1, "1 envelope")
    c.stop()
    (envelope,) = check(c.envelopes())
    assert [t["name"] for t in envelope["tool_calls"]] == ["lookup_order"], envelope


def test_malformed_grpc_messages(collects) -> None:
    """OTLP/gRPC bodies that are not an ``ExportTraceServiceRequest``: ``INVALID_ARGUMENT`` naming the fault (as
    HTTP's 400), no traceback in the log; a span with a bad id is rejected in ``partial_success``, its valid
    neighbour folded; a gzip bomb stops at the size limit (``RESOURCE_EXHAUSTED``)."""
    import grpc
    from opentelemetry.proto.trace.v1 import trace_pb2

    c = collects("c", "--trace-idle", "0.2", "--grpc-port", "0", "--max-body-bytes", "100000")
    rec = Recorder()
    good = encode_spans(_runs_of(rec, 1))
    broken = trace_pb2.Span(trace_id=b"\x01" * 5, span_id=b"\x02" * 8, name="broken")
    good.resource_spans[0].scope_spans[0].spans.append(broken)
    with grpc.insecure_channel(c.grpc) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                     request_serializer=lambda b: b,
                                     response_deserializer=ExportTraceServiceResponse.FromString)
        for body in (good.SerializeToString()[:-3], b"\x0a\xff\xff\xff\xff"):
            with pytest.raises(grpc.RpcError) as refused:
                export(body, timeout=30)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert refused.value.details().startswith("not a protobuf ExportTraceServiceRequest")
        bomb = ExportTraceServiceRequest()
        bomb.resource_spans.add().scope_spans.add().spans.append(
            trace_pb2.Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="x" * 2_000_000))
        with pytest.raises(grpc.RpcError) as refused:  # 2 MB, a few kB as sent
            export(bomb.SerializeToString(), timeout=30, compression=grpc.Compression.Gzip)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        answer = export(good.SerializeToString(), timeout=30)
    assert answer.partial_success.rejected_spans == 1
    assert "spans[2].traceId: '0101010101' is not 32 hex digits" in answer.partial_success.error_message
    wait_for(lambda: c.envelopes(), "the valid run's envelope")
    log = c.stop()
    envelope, = check(c.envelopes())
    assert envelope["public_output"] == "answer 0"
    assert "Traceback" not in log
    rec.provider.shutdown()


def test_protobuf_text_that_is_not_utf8_is_repaired_not_the_request_refused(collects) -> None:
    """A protobuf string field holding bytes that are not UTF-8 (the Collector's and C++'s protobuf runtimes
    send them): the whole request was refused (HTTP 400, gRPC INVALID_ARGUMENT, no field named), losing the
    valid runs beside it. Now the bad bytes are U+FFFD (the OTLP maintainers' recommendation), every run is
    folded, and ``partial_success`` (rejected 0: a warning) names the field."""
    import grpc

    c = collects("c", "--trace-idle", "0.2", "--grpc-port", "0")
    rec = Recorder()
    path = "resourceSpans[0].scopeSpans[0].spans[1].attributes"
    body = encode_spans(_runs_of(rec, 2)).SerializeToString()
    assert body.count(b"answer 0") >= 1
    body = body.replace(b"answer 0", b"answer \xff")  # the first run's output; the second run's is clean
    status, _, answer = _post(c.url, body)
    assert status == 200, Status.FromString(answer).message
    partial = ExportTraceServiceResponse.FromString(answer).partial_success
    assert partial.rejected_spans == 0
    assert "not UTF-8, kept with U+FFFD" in partial.error_message and path in partial.error_message
    grpc_body = encode_spans(_runs_of(rec, 1)).SerializeToString().replace(b"answer 0", b"answer \xff")
    with grpc.insecure_channel(c.grpc) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                     request_serializer=lambda b: b,
                                     response_deserializer=ExportTraceServiceResponse.FromString)
        answer = export(grpc_body, timeout=30)
    assert answer.partial_success.rejected_spans == 0 and path in answer.partial_success.error_message
    wait_for(lambda: len(c.envelopes()) >= 3, "the three runs' envelopes")
    log = c.stop()
    envelopes = check(c.envelopes())
    assert sorted(e["public_output"] for e in envelopes) == ["answer 1", "answer \ufffd", "answer \ufffd"]
    assert "0 of them rejected" in log and "Traceback" not in log, log
    rec.provider.shutdown()


def test_a_status_code_beyond_the_enum_is_a_named_warning_and_two_kinds_a_named_rejection(collects) -> None:
    """Protobuf carries a status code of 7 (a proto3 enum is open): the span was kept as unset and nothing said.
    Now ``partial_success`` (rejected 0: a warning) and the receiver's log name the field, the runs are folded.
    An AnyValue of two kinds (which protobuf cannot carry, JSON can) costs its span, named."""
    c = collects("c", "--trace-idle", "0.2")
    rec = Recorder()
    request = encode_spans(_runs_of(rec, 1))
    request.resource_spans[0].scope_spans[0].spans[0].status.code = 7
    status, _, answer = _post(c.url, request.SerializeToString())
    assert status == 200, Status.FromString(answer).message
    partial = ExportTraceServiceResponse.FromString(answer).partial_success
    field = "resourceSpans[0].scopeSpans[0].spans[0].status.code: 7 is not a status code"
    assert partial.rejected_spans == 0 and field in partial.error_message, partial
    line = to_otlp_json(_runs_of(rec, 1))
    attributes = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    n = next(i for i, kv in enumerate(attributes) if "stringValue" in kv["value"])
    attributes[n]["value"]["intValue"] = "3"
    status, _, answer = _post(c.url, json.dumps(line).encode(), "application/json")
    assert (status, json.loads(answer)["partialSuccess"]["rejectedSpans"]) == (200, "1"), answer
    assert (f"spans[0].attributes[{n}].value: an AnyValue holds one value, got 2: stringValue, intValue"
            in answer.decode())
    wait_for(lambda: len(c.envelopes()) >= 1, "the first run's envelope")
    log = c.stop()
    assert f"fields dropped from spans that were kept: {field}" in log and "Traceback" not in log, log
    rec.provider.shutdown()


def test_a_request_sent_again_after_its_trace_was_folded_is_folded_once(collects) -> None:
    """An exporter that did not get the answer sends the request again (OTLP is at-least-once); the receiver
    had folded the trace meanwhile, and the repeat became a second envelope of the same run."""
    c = collects("c", "--trace-idle", "0.2")
    rec = Recorder()
    body = encode_spans(_runs_of(rec, 1)).SerializeToString()
    assert _post(c.url, body)[0] == 200
    wait_for(lambda: c.envelopes(), "the run's envelope")
    assert _post(c.url, body)[0] == 200  # the same request again, after the fold
    status, _, _ = _post(c.url, encode_spans(_runs_of(rec, 1)).SerializeToString())  # another run, after it
    assert status == 200
    wait_for(lambda: len(c.envelopes()) >= 2, "the second run's envelope")
    log = c.stop()
    envelopes = check(c.envelopes())
    assert len(envelopes) == 2 and len({e["trace_id"] for e in envelopes}) == 2, envelopes
    assert "'spans_repeated': 2" in log and "late_spans" not in log, log
    rec.provider.shutdown()


def test_an_output_that_cannot_be_written_loses_envelopes_said_not_the_receiver(collects) -> None:
    """``-o /dev/full`` (a full disk): the failed write raised in the folding code, the ticker that folds idle
    traces died with it, the shutdown fold ended in a traceback. Now each lost envelope is logged (at the 1st,
    2nd, 4th, … loss), the receiver keeps answering and folding, and the exit status is 1."""
    c = collects("c", "--trace-idle", "0.2", "-o", "/dev/full")
    rec = Recorder()
    for lost in (1, 2):  # one request at a time: each trace folded by the ticker (the 1st and 2nd loss are logged)
        assert _post(c.url, encode_spans(_runs_of(rec, 1)).SerializeToString())[0] == 200
        wait_for(lambda: c.log.read_text().count("is lost") >= lost, f"loss {lost} logged")
    assert _post(c.url, encode_spans(_runs_of(rec, 1)).SerializeToString())[0] == 200  # folded now or at the stop
    log = c.stop()
    assert c.proc.returncode == 1, log
    assert "cannot write /dev/full: No space left on device; the envelope of trace" in log, log
    assert "3 trace(s) folded into 3 envelope(s)" in log, log
    assert "3 envelope(s) could not be written to /dev/full" in log and "Traceback" not in log, log
    rec.provider.shutdown()


def test_standard_output_closed_by_its_reader_stops_the_receiver(tmp_path) -> None:
    """``ecp collect -o - | head -1``: once the reader is gone nothing can be written; the receiver kept
    answering 200 for spans it could only drop (and logged a traceback per fold). Now it stops, exit status 1."""
    import subprocess
    import sys
    import time

    log = tmp_path / "collect.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "otel_agents.cli", "ecp", "collect", "--port", "0", "-o", "-",
                                 "--trace-idle", "0.2"], stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
        try:
            wait_for(lambda: "collecting OTLP at" in log.read_text(), "the receiver's address")
            url = log.read_text().split("collecting OTLP at ")[1].split(";")[0]
            proc.stdout.close()  # the reader goes away
            rec = Recorder()
            assert _post(url, encode_spans(_runs_of(rec, 1)).SerializeToString())[0] == 200
            rec.provider.shutdown()
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            if proc.poll() is None:
                proc.kill()
    text = log.read_text()
    assert proc.wait(timeout=30) == 1, text
    assert "standard output was closed by its reader: stopping" in text and "Traceback" not in text, text


def test_a_body_limit_beyond_what_grpc_takes_serves_grpc(collects) -> None:
    """``--max-body-bytes 99999999999999 --grpc-port 0``: gRPC's message limit (x 4) is a C int; the receiver
    ended in an ``OverflowError`` traceback before serving. Now the gRPC limit is gRPC's largest."""
    c = collects("c", "--grpc-port", "0", "--max-body-bytes", "99999999999999")
    assert c.grpc and _post(c.url, encode_spans([]).SerializeToString())[0] == 200
    assert "Traceback" not in c.stop()


def test_forward_passes_requests_on_unchanged(collects, tmp_path) -> None:
    """``--forward URL``: collect sits in front of another OTLP receiver (here a second collect): both fold the
    same runs, from the same spans."""
    backend = collects("backend", "--trace-idle", "0.3")
    front = collects("front", "--trace-idle", "0.3", "--forward", backend.url)
    runs = new_runs(2)
    emit(tmp_path, "tools", front.url, runs)
    emit(tmp_path, "root", front.url, runs)
    wait_for(lambda: len(front.envelopes()) >= 2 and len(backend.envelopes()) >= 2, "2 envelopes on each side")
    log, _ = front.stop(), backend.stop()
    # at shutdown, the forwarding counts (there were none to see: only the failures and drops were logged)
    (said,) = [line for line in log.splitlines() if line.startswith("otel-agents collect: --forward ")]
    sent = re.fullmatch(rf"otel-agents collect: --forward {re.escape(backend.url)}: (\d+) request\(s\) sent, 0 "
                        r"failed, 0 dropped", said)
    assert sent and int(sent[1]) >= 2, log  # the two emitting processes, one request at least each

    def key(e: dict) -> tuple:
        return e["trace_id"], [(t["name"], t["span_id"]) for t in e["tool_calls"]], e["public_output"]

    assert sorted(map(key, check(front.envelopes()))) == sorted(map(key, check(backend.envelopes())))
    assert len(front.envelopes()) == 2


def test_a_forward_target_whose_name_is_never_looked_up_is_said_once_and_loses_nothing(collects, tmp_path) -> None:
    """``--forward URL`` whose host name a resolver never answers for (a ``sitecustomize`` in the collector's
    process): urllib's timeout does not cover the lookup, so the forwarding thread sat in it for good, and the
    requests piled up behind it unsaid (then 'queue full' drops, naming no URL). Now each request's name gets 2 s
    (exporters/_reach), the outage is logged once, naming the URL and why; every envelope is still written
    locally and the collector stops with status 0."""
    import os

    from tests.test_cli_text import _HUNG_RESOLVER

    resolver = tmp_path / "resolver"
    resolver.mkdir()
    (resolver / "sitecustomize.py").write_text(_HUNG_RESOLVER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(resolver), *filter(None, [os.environ.get("PYTHONPATH")])])}
    target = "http://backend.hang:4318/v1/traces"
    c = collects("c", "--trace-idle", "0.3", "--forward", target, env=env)
    runs = new_runs(3)
    emit(tmp_path, "tools", c.url, runs)
    emit(tmp_path, "root", c.url, runs)
    wait_for(lambda: len(c.envelopes()) >= 3, "3 envelopes")
    wait_for(lambda: "cannot forward" in c.log.read_text(encoding="utf-8"), "the forward failure logged")
    log = c.stop()
    assert c.proc.returncode == 0, log
    assert sorted(e["trace_id"] for e in check(c.envelopes())) == sorted(r["trace_id"] for r in runs)
    assert all(e["metrics"]["model_calls"] == 1 and "incomplete" not in e for e in c.envelopes()), c.envelopes()
    summary = re.compile(rf"otel-agents collect: --forward {re.escape(target)}: 0 request\(s\) sent, [1-9]\d* "
                         r"failed, 0 dropped")
    said = [line for line in log.splitlines() if "backend.hang" in line or "WARNING" in line]
    assert said[0] == f"WARNING:otel-agents collect: cannot forward to {target}: backend.hang:4318: the name lookup " \
                      "did not finish within 2 s; requests are not forwarded (counted failed) until it is looked up", log
    assert len(said) == 2 and summary.fullmatch(said[1]), log  # then the counts, at shutdown


def test_a_name_being_looked_up_is_not_looked_up_again(monkeypatch) -> None:
    """A sender that asks before each request (``--forward``) started one lookup thread a request while the
    resolver did not answer, each left behind: now a name's running lookup is waited on, not started again."""
    import socket

    from otel_agents.exporters import _reach

    release = threading.Event()
    real = socket.getaddrinfo
    calls: list[str] = []

    def hung(host, *args, **kwargs):
        if host == "never.hang":
            calls.append(host)
            release.wait(60)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hung)
    try:
        for _ in range(5):
            assert _reach.lookup("never.hang", 80, 0.01) == "the name lookup did not finish within 0.01 s"
        assert calls == ["never.hang"]
        assert sum(t.name == "otel-agents-lookup" for t in threading.enumerate()) == 1
    finally:
        release.set()
    wait_for(lambda: ("never.hang", 80) not in _reach._running, "the lookup finished")
    assert isinstance(_reach.lookup("127.0.0.1", 80, 30), list)  # a finished lookup is not kept


def test_an_ip_address_is_not_looked_up(monkeypatch) -> None:
    """A --forward or export URL naming an IP address asks no resolver: no lookup thread a request (each
    forwarded request waited on one), and a resolver that never answers does not hold it."""
    import socket

    from otel_agents.exporters import _reach

    asked: list[str] = []
    release = threading.Event()

    def hung(host, *args, **kwargs):
        asked.append(host)
        release.wait(60)
        raise socket.gaierror("released")

    monkeypatch.setattr(socket, "getaddrinfo", hung)
    try:
        for url in ("http://127.0.0.1:4318/v1/traces", "https://[::1]:4318/v1/traces",
                    "http://[fe80::1%25eth0]:80/"):
            assert _reach.lookup_problem(url, 0.01) is None, url
        assert asked == []
        assert _reach.lookup_problem("http://never.hang.example:4318/", 0.01) == \
            "never.hang.example:4318: the name lookup did not finish within 0.01 s"
    finally:
        release.set()
    wait_for(lambda: ("never.hang.example", 4318) not in _reach._running, "the lookup finished")


def _held_receiver() -> tuple[OTLPReceiver, threading.Event, list[int]]:
    """A receiver whose first request holds its worker until the event is set (so it is at capacity meanwhile:
    ``max_pending_bytes`` 1), and the span count of each request it took."""
    release = threading.Event()
    got: list[int] = []

    def sink(spans, raw) -> None:
        got.append(len(spans))
        if len(got) == 1:
            release.wait(60)

    return OTLPReceiver(sink, max_pending_bytes=1), release, got


def test_the_sdk_exporter_retries_after_503_retry_after(tmp_path) -> None:
    """The real OTLP/HTTP exporter, refused with 503 + ``Retry-After`` while the receiver is at capacity, retries
    after it and is accepted (the Collector's ``otlphttp`` exporter does the same: a throttle of that length)."""
    import asyncio

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from otel_agents.serve.http import HTTPLimits, bind, serve_http

    app, release, got = _held_receiver()
    sock = bind("127.0.0.1", 0, 16)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1/traces"
    servers: list = []
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(serve_http(
        app, "127.0.0.1", 0, HTTPLimits(), sock=sock, started=servers.append),), daemon=True)
    thread.start()
    rec = Recorder()
    first, second = _runs_of(rec, 1), _runs_of(rec, 1)
    results: list = []
    holder = threading.Thread(target=lambda: results.append(OTLPSpanExporter(endpoint=url).export(first)))
    holder.start()
    wait_for(lambda: got == [2], "the first request in the worker")
    retrying = threading.Thread(target=lambda: results.append(OTLPSpanExporter(endpoint=url, timeout=60).export(second)))
    retrying.start()
    wait_for(lambda: app.busy >= 1, "a 503 answer")
    release.set()
    holder.join(60), retrying.join(90)
    assert results == [SpanExportResult.SUCCESS, SpanExportResult.SUCCESS]
    assert got == [2, 2] and app.busy >= 1  # refused at least once, then accepted
    servers[0].should_exit = True
    thread.join(30)
    app.close()
    rec.provider.shutdown()


def _retry_delay(error) -> tuple[int, float]:
    """The google.rpc.Status code and the RetryInfo delay (seconds) in a gRPC error's status details."""
    from google.rpc.error_details_pb2 import RetryInfo

    trailers = dict(error.trailing_metadata() or ())
    assert "grpc-status-details-bin" in trailers, f"{error.code()} {error.details()!r}: no status details"
    status = Status.FromString(trailers["grpc-status-details-bin"])
    (detail,) = status.details
    retry = RetryInfo()
    assert detail.Unpack(retry)
    assert RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"]) == retry
    return status.code, retry.retry_delay.seconds + retry.retry_delay.nanos / 1e9


def test_grpc_at_capacity_sends_retry_info_and_the_sdk_exporter_waits_that_long(caplog) -> None:
    """OTLP/gRPC Throttling: refused for load, the answer is UNAVAILABLE with a google.rpc.RetryInfo in the status
    details (the gRPC twin of HTTP's Retry-After; before, a bare UNAVAILABLE). The real OTLP/gRPC exporter, refused
    while the receiver is at capacity, retries after exactly that delay and is accepted."""
    import logging

    import grpc
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from otel_agents.serve.otlp_grpc import serve_grpc

    app, release, got = _held_receiver()
    server, port = serve_grpc(app, "127.0.0.1", 0)
    rec = Recorder()
    first, second = _runs_of(rec, 1), _runs_of(rec, 1)
    results: list = []
    holder = threading.Thread(target=lambda: results.append(
        OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True).export(first)))
    holder.start()
    wait_for(lambda: got == [2], "the first request in the worker")
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                     request_serializer=lambda b: b)
        with pytest.raises(grpc.RpcError) as refused:
            export(encode_spans(second).SerializeToString(), timeout=30)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert refused.value.details() == "receiver at capacity: retry later"
    assert _retry_delay(refused.value) == (14, 1.0)
    with caplog.at_level(logging.WARNING, logger="opentelemetry.exporter.otlp.proto.grpc.exporter"):
        retrying = threading.Thread(target=lambda: results.append(
            OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True, timeout=60).export(second)))
        retrying.start()
        wait_for(lambda: app.busy >= 2, "the exporter refused")
        release.set()
        holder.join(60), retrying.join(90)
    assert results == [SpanExportResult.SUCCESS, SpanExportResult.SUCCESS]
    waits = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert waits and all("StatusCode.UNAVAILABLE" in w and "retrying in 1.00s" in w for w in waits), waits
    assert got == [2, 2]
    server.stop(0)
    app.close()
    rec.provider.shutdown()


def test_grpc_calls_over_the_limit_are_throttled_with_retry_info_not_dropped(collects, tmp_path) -> None:
    """A real ``ecp collect --grpc-port`` with more silent calls held open (by another process) than the
    server takes at once: a call over the limit is answered UNAVAILABLE with RetryInfo, which OTLP clients retry
    (before, gRPC's own bare RESOURCE_EXHAUSTED, which the OTLP specification says not to retry without
    RetryInfo: the Collector's exporters dropped the batch); the real exporter's spans are folded once the
    silent calls are cut off."""
    import subprocess
    import sys
    from pathlib import Path

    import grpc

    from otel_agents.serve.otlp_grpc import MAX_CALLS

    c = collects("c", "--trace-idle", "0.3", "--grpc-port", "0", "--connection-timeout", "5")
    hostile = subprocess.Popen([sys.executable, str(Path(__file__).with_name("slow_grpc.py")), c.grpc,
                                str(MAX_CALLS + 16)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert hostile.stderr.readline().strip() == "started"
        with grpc.insecure_channel(c.grpc) as channel:
            export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export",
                                         request_serializer=lambda b: b)
            with pytest.raises(grpc.RpcError) as refused:
                export(b"", timeout=30)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value
        assert refused.value.details() == f"receiver at capacity: retry later ({MAX_CALLS} calls in the server)"
        assert _retry_delay(refused.value) == (14, 1.0)
        runs = new_runs(1)
        emit(tmp_path, "tools", f"grpc:{c.grpc}", runs)
        emit(tmp_path, "root", f"grpc:{c.grpc}", runs)
        wait_for(lambda: len(c.envelopes()) >= 1, "the run's envelope")
        out, _ = hostile.communicate("report\n", timeout=90)
    finally:
        hostile.kill()
    assert set(json.loads(out)["codes"]) <= {"CANCELLED", "UNAVAILABLE"}, out
    assert "Traceback" not in c.stop() and c.proc.returncode == 0
    assert [e["trace_id"] for e in check(c.envelopes())] == [runs[0]["trace_id"]]


def _hold_connections(url: str, n: int) -> list:
    """``n`` idle TCP connections to ``url``'s server, accepted by it (each one answers nothing yet)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return [socket.create_connection((parts.hostname, parts.port), timeout=30) for _ in range(n)]


def test_over_the_connection_limit_503_says_when_to_retry_and_the_exporter_does(collects, caplog) -> None:
    """A real ``ecp collect`` with its 1,024 connections taken (idle clients): a request is answered 503 with
    ``Retry-After: 1`` and a ``google.rpc.Status`` body (before: Uvicorn's plain-text "Service Unavailable",
    no ``Retry-After``, so an OTLP exporter could not tell when to retry); the real OTLP/HTTP exporter retries
    and is accepted once the connections are gone. It waits the second we ask for from 1.45.0 on (its retry
    reads ``Retry-After`` since; 1.44, the floor, .venv-floor, backs off on its own clock)."""
    import logging
    from importlib.metadata import version

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult
    from packaging.version import Version

    from otel_agents.serve.http import HTTPLimits

    limit = HTTPLimits().max_connections
    c = collects("c", "--trace-idle", "0.2", "--connection-timeout", "60")
    held = _hold_connections(c.url, limit)
    try:
        wait_for(lambda: _post(c.url, b"", PB)[0] == 503, "the connection limit reached")
        status, headers, body = _post(c.url, b"", PB)
        headers = {k.lower(): v for k, v in headers.items()}
        assert (status, headers["retry-after"], headers["content-type"]) == (503, "1", PB)
        assert Status.FromString(body).message == (f"server busy: {limit} connections and requests at once; "
                                                    "retry later")
        rec = Recorder()
        spans = _runs_of(rec, 1)
        results: list = []
        with caplog.at_level(logging.WARNING, logger="opentelemetry.exporter.otlp.proto.http"):
            exporting = threading.Thread(target=lambda: results.append(
                OTLPSpanExporter(endpoint=c.url, timeout=60).export(spans)))
            exporting.start()
            wait_for(lambda: any("retrying in" in r.getMessage() for r in caplog.records), "a refused export")
            for sock in held:
                sock.close()
            exporting.join(90)
    finally:
        for sock in held:
            sock.close()
    assert results == [SpanExportResult.SUCCESS]
    waits = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    if Version(version("opentelemetry-exporter-otlp-proto-http")) >= Version("1.45.0"):
        assert all("retrying in 1.00s" in w for w in waits), waits
    wait_for(lambda: c.envelopes(), "the run's envelope")
    assert "Traceback" not in c.stop()
    assert [e["public_output"] for e in check(c.envelopes())] == ["answer 0"]
    rec.provider.shutdown()


@pytest.mark.parametrize("option", ["--port", "--grpc-port"])
def test_a_port_beyond_65535_is_refused_not_wrapped(option: str, tmp_path) -> None:
    """--port 99999 listened on 34463 (99999 mod 65536), for HTTP and for gRPC alike."""
    import subprocess
    import sys
    from pathlib import Path

    args = [str(Path(sys.executable).parent / "otel-agents"), "ecp", "collect", "-o", str(tmp_path / "e.jsonl"),
            option, "99999"] + (["--port", "0"] if option == "--grpc-port" else [])
    proc = subprocess.run(args, capture_output=True, text=True, timeout=20)
    assert proc.returncode == 2 and "99999" in proc.stderr and "0-65535" in proc.stderr, proc.stderr


def test_forward_queue_is_bounded_in_bytes_while_the_endpoint_stalls() -> None:
    """A --forward endpoint that stops answering (a backend down behind a load balancer that still accepts
    connections): requests wait in memory for it. 1,000 of them at the 4 MiB body limit were 4 GiB; what
    waits is bounded in bytes (64 MiB, the receiver's own capacity), beyond which requests are dropped, counted."""
    import socket

    from otel_agents.serve.otlp import Forwarder

    stalled = socket.create_server(("127.0.0.1", 0))  # accepts (the backlog), never reads or answers
    forwarder = Forwarder(f"http://127.0.0.1:{stalled.getsockname()[1]}/v1/traces", timeout=30)
    body = b"x" * (1 << 20)  # one object, 1 MiB, submitted 100 times: 100 MiB queued if nothing bounds it
    for _ in range(100):
        forwarder.submit((body, PB, None, None))
    assert 30 <= forwarder.dropped <= 37, forwarder.dropped
    forwarder.close(timeout=0.1)  # the endpoint still stalled: what waits is neither sent nor counted failed
    queued = 100 - forwarder.dropped - 1  # one is in flight
    assert forwarder.summary() in (f"--forward {forwarder.url}: 0 request(s) sent, 0 failed, {forwarder.dropped} "
                                   f"dropped, {n} still queued at exit (not sent)" for n in (queued, queued + 1))
    stalled.close()  # what waits is now refused at once: handled before the next test, whose log it is not
    forwarder.close(timeout=60)
    assert forwarder.sent + forwarder.failed + forwarder.dropped == 100


def test_forward_failures_are_logged_at_powers_of_two_not_one_line_a_request(caplog) -> None:
    """An endpoint that is down for long (each send refused) must not write one WARNING a request: the running
    count is logged at the 1st, 2nd, 4th, 8th, … failure; the count itself is exact."""
    import logging
    import socket

    from otel_agents.serve.otlp import Forwarder

    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: every send is refused at once
    forwarder = Forwarder(f"http://127.0.0.1:{port}/v1/traces", timeout=5)
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        for _ in range(40):
            forwarder.submit((b"x", PB, None, None))
        forwarder.close(timeout=30)
    assert forwarder.failed == 40 and forwarder.sent == 0
    logged = [r.getMessage() for r in caplog.records if f"forwarding to {forwarder.url} " in r.getMessage()]
    assert [m.split("(")[-1].split(" so far")[0] for m in logged] == ["1", "2", "4", "8", "16", "32"], logged


def test_slow_grpc_senders_are_cut_off_and_do_not_starve_others(collects, tmp_path) -> None:
    """``--grpc-port`` is bounded as the HTTP side is: 12 calls that never send their message (more than the
    server's 8 worker threads) and 12 connections that never speak, held by another process, are ended after
    ``--connection-timeout``, and a well-behaved sender's spans (gRPC) are folded meanwhile. Before, gRPC had no
    time limit: the silent calls held every worker thread for as long as they liked, so no other call was
    served."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    c = collects("c", "--trace-idle", "0.3", "--grpc-port", "0", "--connection-timeout", "2")
    hostile = subprocess.Popen([sys.executable, str(Path(__file__).with_name("slow_grpc.py")), c.grpc, "12"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert hostile.stderr.readline().strip() == "started"
        runs = new_runs(2)
        emit(tmp_path, "tools", f"grpc:{c.grpc}", runs)
        emit(tmp_path, "root", f"grpc:{c.grpc}", runs)
        wait_for(lambda: len(c.envelopes()) >= 2, "2 envelopes while the silent calls are held")
        time.sleep(3)  # past --connection-timeout from the start of every silent call and connection
        out, _ = hostile.communicate("report\n", timeout=90)
    finally:
        hostile.kill()
    result = json.loads(out)
    # Each silent call was cut off (CANCELLED) or refused at the concurrency bound (UNAVAILABLE, with RetryInfo).
    assert set(result["codes"]) <= {"CANCELLED", "UNAVAILABLE"}, result
    assert result["sockets_closed"] == 12, result
    assert "Traceback" not in c.stop() and c.proc.returncode == 0
    assert sorted(e["trace_id"] for e in check(c.envelopes())) == sorted(r["trace_id"] for r in runs)


def test_secrets_in_the_spans_of_other_instrumentations_are_redacted_in_the_envelopes(collects) -> None:
    """What anyone sends (OpenInference, OpenLLMetry, OTel GenAI, PydanticAI, HTTP spans, with API keys, passwords
    in tool arguments, keys in exception messages) is folded redacted, as ``fold`` folds it, into strict JSON."""
    from ..exporters.test_ecp_foreign_secrets import MARK, assert_redacted, hostile_runs

    c = collects("c", "--trace-idle", "0.3")
    rec = Recorder()
    hostile_runs(rec)
    status, _, _ = _post(c.url, json.dumps(to_otlp_json(rec.spans)).encode(), "application/json")
    assert status == 200
    wait_for(lambda: len(c.envelopes()) >= 5, "5 envelopes")
    log = c.stop()
    assert_redacted(c.envelopes())
    assert MARK not in c.output.read_text(encoding="utf-8") and MARK not in log
    rec.provider.shutdown()


def test_a_forward_url_that_is_no_url_is_refused_at_start(tmp_path) -> None:
    """``--forward localhost:4318/v1/traces`` (no scheme) was taken, and every request's forward then failed in the
    background ('unknown url type', logged at the 1st, 2nd, 4th… failure): now exit 2 at start, naming the option
    and the URL it probably meant, as ``ecp serve --otlp-endpoint`` does."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "ecp", "collect", "--port", "0",
                           "--forward", "localhost:4318/v1/traces"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert proc.returncode == 2, proc
    assert proc.stderr.splitlines()[-1] == ("otel-agents ecp collect: error: argument --forward: must be an http:// or "
                                            "https:// URL with a host, got 'localhost:4318/v1/traces' (e.g. "
                                            "http://localhost:4318/v1/traces)"), proc.stderr


def test_a_request_still_sending_its_body_at_sigterm_is_answered_503_and_logs_no_traceback(collects) -> None:
    """At SIGTERM Uvicorn waits its graceful shutdown, then cancels what still runs: a sender still sending its
    body. That cancellation was logged as "Exception in ASGI application" with a traceback, and the sender got a
    bare 500; now it gets 503 with Retry-After (which an OTLP exporter retries) and the log has no traceback."""
    c = collects("c")
    host, port = c.url.split("/")[2].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: " + host.encode() + b"\r\nContent-Type: application/json"
                     b"\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
        # Uvicorn answers 100 Continue when the app first asks for the body: the request is being handled
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 ")
        sock.sendall(b"{")  # the rest of the body never comes
        log = c.stop()
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 503") and b"retry-after: 1" in head, answer
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log
