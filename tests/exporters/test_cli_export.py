"""``otel-agents export TRACES.jsonl --to URL`` (issue 36): stored OTLP/JSON traces replayed to an OTLP/HTTP
receiver in protobuf, with the ids the file has. Run as a real process against a loopback receiver that
decodes the protobuf it gets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.backends.receiver import Receiver, decode

from .test_ecp_fold import agent_run
from .test_file import write

OTEL_AGENTS = str(Path(sys.executable).parent / "otel-agents")


def export(*args: str, stdin: str | None = None, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_EXPORTER_OTLP")}
    env.update(variables)
    return subprocess.run([OTEL_AGENTS, "export", *args], capture_output=True, text=True, timeout=120, env=env,
                          input=stdin)


def file_spans(path: Path) -> dict[str, dict]:
    """span id → ``{trace, parent, name, resource}`` as the file writes them (hex ids), read as plain JSON."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for rs in json.loads(line).get("resourceSpans", []):
            resource = {a["key"]: next(iter(a["value"].values())) for a in rs["resource"].get("attributes", [])}
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    out[s["spanId"]] = {"trace": s["traceId"], "parent": s.get("parentSpanId") or None,
                                        "name": s["name"], "resource": resource}
    return out


def traces(rec, tmp_path: Path, name: str = "traces.jsonl") -> Path:
    agent_run(rec.telemetry, name="one")
    agent_run(rec.telemetry, name="two")
    path = tmp_path / name
    write(path, rec.spans, batch=3)
    return path


def test_spans_arrive_as_protobuf_with_the_files_ids(rec, tmp_path: Path) -> None:
    path = traces(rec, tmp_path)
    expected = file_spans(path)
    with Receiver() as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces", "-H", "x-team=ai", "--header", "Authorization: Bearer t0k",
                      "--batch-size", "5")
        requests = list(rx.requests)
        got = rx.spans()
    assert proc.returncode == 0, proc.stderr
    assert len(requests) == 3  # 12 spans in batches of 5
    for request in requests:
        assert request.path == "/v1/traces"
        assert request.headers["content-type"] == "application/x-protobuf"
        assert request.headers["x-team"] == "ai" and request.headers["authorization"] == "Bearer t0k"
    assert len(got) == len(expected) == 12
    for span in got:  # ids decoded from the protobuf bytes equal the file's hex ids
        mine = expected[span.span_id]
        assert (span.trace_id, span.parent_id, span.name) == (mine["trace"], mine["parent"], mine["name"])
        assert {k: span.resource[k] for k in mine["resource"]} == mine["resource"]
    assert len({s.trace_id for s in got}) == 2
    assert "12 span(s) of 2 trace(s) sent to " + rx.url + "/v1/traces" in proc.stderr


def test_export_speaks_otlp_http_whatever_the_protocol_variables_say(rec, tmp_path: Path) -> None:
    """``--to URL`` is an OTLP/HTTP URL: ``OTEL_EXPORTER_OTLP_PROTOCOL=grpc``, which the ``otlp`` preset now
    follows, does not turn ``export`` into a gRPC client of an HTTP receiver."""
    path = traces(rec, tmp_path)
    with Receiver() as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces", OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
                      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="grpc")
        got = rx.spans()
    assert proc.returncode == 0, proc.stderr
    assert len(got) == 12


def test_several_files_and_standard_input_and_a_bare_base_url(rec, tmp_path: Path) -> None:
    first = traces(rec, tmp_path, "a.jsonl")
    second = tmp_path / "b.jsonl"
    agent_run(rec.telemetry, name="three")
    write(second, rec.spans[12:], batch=6)
    with Receiver() as rx:
        proc = export(str(first), "-", "--to", rx.url, stdin=second.read_text(encoding="utf-8"))
        got = rx.spans()
        paths = {r.path for r in rx.requests}
    assert proc.returncode == 0, proc.stderr
    assert paths == {"/v1/traces"}  # a URL without a path gets the OTLP traces path
    assert sorted(s.span_id for s in got) == sorted({**file_spans(first), **file_spans(second)})


def test_a_malformed_line_is_named_and_the_rest_is_sent(rec, tmp_path: Path) -> None:
    path = traces(rec, tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    bad_id = lines[1].replace(json.loads(lines[1])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"],
                              "not-hex", 1)
    path.write_text("\n".join([lines[0], bad_id, "{oops", *lines[2:]]) + "\n", encoding="utf-8")
    with Receiver() as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces")
        got = rx.spans()
    assert proc.returncode == 1
    assert f"skipped {path}:2: " in proc.stderr and "traceId" in proc.stderr
    assert f"skipped {path}:3: invalid JSON" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(got) == 12 - 1  # every span but the one with the bad id (its line's others are sent)
    assert "1 malformed line(s) skipped, 1 span(s) left out of 1 other line(s)" in proc.stderr


def test_a_refused_batch_stops_with_its_status_and_lines(rec, tmp_path: Path) -> None:
    """What Phoenix answers OTLP/JSON with (415) is not retried: the error says which lines and why."""
    path = traces(rec, tmp_path)
    with Receiver(refuse=[415]) as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces", "--batch-size", "6")
        requests = list(rx.requests)
    assert proc.returncode == 1
    assert len(requests) == 1, "stopped after the refused batch"
    assert f"6 span(s) from {path}:1-2 not accepted by {rx.url}/v1/traces" in proc.stderr
    assert "415" in proc.stderr and "12 span(s) not sent" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_busy_receiver_is_retried(rec, tmp_path: Path) -> None:
    path = traces(rec, tmp_path)
    with Receiver(refuse=[503]) as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces")
        statuses = [r.status for r in rx.requests]
        got = rx.spans()
    assert proc.returncode == 0, proc.stderr
    assert statuses == [503, 200] and len(got) == 12


def test_spans_a_partial_success_rejected_are_not_counted_as_sent(rec, tmp_path: Path) -> None:
    """An OTLP ``partial_success`` answer (200, ``rejected_spans`` > 0; ``ecp collect`` gives one for a span with a
    bad field): the OpenTelemetry exporter never reads the body, so before, ``12 span(s) … sent`` and exit 0. Now
    the rejected spans are counted, the backend's message quoted (escaped: no terminal sequence of its own), the
    export goes on to the next batch, and the exit status is 1. A partial success that rejects none is a warning."""
    path = traces(rec, tmp_path)
    with Receiver(partial=[(2, "span 3: bad \x1b[31mid")]) as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces", "--batch-size", "6")
        requests = list(rx.requests)
    assert proc.returncode == 1, proc.stderr
    assert len(requests) == 2, "the batch after the partial success is sent too"
    assert f"{path}:1-2: {rx.url}/v1/traces answered: 2 of 6 span(s) rejected (partial success)" in proc.stderr
    assert "span 3: bad \\x1b[31mid" in proc.stderr and "\x1b" not in proc.stderr, proc.stderr
    assert "10 span(s) of 2 trace(s) sent to " + rx.url + "/v1/traces; 2 span(s) rejected by the backend" \
        in proc.stderr
    with Receiver(partial=[(0, "slow down")]) as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces")
    assert proc.returncode == 0, proc.stderr
    assert "accepted with a warning (partial success): 'slow down'" in proc.stderr
    assert "12 span(s) of 2 trace(s) sent" in proc.stderr


def test_a_redirect_is_not_counted_as_sent(rec, tmp_path: Path) -> None:
    """A 307 answer: OpenTelemetry Python 1.45's exporter does not follow it and counts 2xx-3xx as success, so before,
    ``12 span(s) … sent`` and exit 0 with nothing received. Now it stops the export as a refusal does (1.44's
    exporter follows it, here to a port where nothing listens, and posts again on the connection error: refused as
    well)."""
    path = traces(rec, tmp_path)
    with Receiver(refuse=[307] * 8) as rx:  # every answer a redirect
        proc = export(str(path), "--to", rx.url + "/v1/traces", "--timeout", "2")
    assert proc.returncode == 1, proc.stderr
    assert f"12 span(s) from {path}:1-4 not accepted by {rx.url}/v1/traces" in proc.stderr
    assert "12 span(s) not sent" in proc.stderr and "0 span(s) of 2 trace(s) sent" in proc.stderr


def test_a_2xx_that_is_not_an_otlp_answer_is_not_counted_as_sent(rec, tmp_path: Path) -> None:
    """OTLP/HTTP: a success carries an ``ExportTraceServiceResponse`` in the request's content type. A 200 with an
    HTML page (a proxy's or a login page, a web UI answering every path) or a protobuf body that is no such message
    reached no receiver we know of: before, ``12 span(s) ... sent`` and exit 0. Now the export stops as for a
    refusal, quoting the answer as ``ecp annotate --to phoenix`` does (one function). An empty body (the empty
    message: the Collector's receiver, Phoenix) or a JSON response is a success."""
    path = traces(rec, tmp_path)
    page = b"<!doctype html><title>Sign in</title>"
    for answer, quoted in (
            (("text/html; charset=utf-8", page), "HTTP 200 with 'text/html; charset=utf-8', not an OTLP "
                                                 "ExportTraceServiceResponse (a proxy or a login page in the way?): "
                                                 "'<!doctype html><title>Sign in</title>'"),
            (("application/x-protobuf", page), "HTTP 200 with 'application/x-protobuf', not an OTLP "
                                               "ExportTraceServiceResponse")):
        with Receiver(answer=answer) as rx:
            proc = export(str(path), "--to", rx.url + "/v1/traces", "--batch-size", "6")
            requests = len(rx.requests)
        assert proc.returncode == 1, proc.stderr
        assert requests == 1, "a login page in the way: the export stops at the first batch"
        assert f"6 span(s) from {path}:1-2 not accepted by {rx.url}/v1/traces: {quoted}" in proc.stderr, proc.stderr
        assert "12 span(s) not sent" in proc.stderr and "0 span(s) of 2 trace(s) sent" in proc.stderr
    for answer in ((None, b""), ("application/x-protobuf", b""), ("application/json", b"{}"),
                   ("application/json", b'{"partialSuccess": {}}')):
        with Receiver(answer=answer) as rx:
            proc = export(str(path), "--to", rx.url + "/v1/traces")
        assert proc.returncode == 0, (answer, proc.stderr)
        assert "12 span(s) of 2 trace(s) sent" in proc.stderr


def test_a_batch_too_large_for_the_receiver_is_sent_in_halves(rec, tmp_path: Path) -> None:
    """413 (Content Too Large): before, the export stopped there (our own ``ecp collect`` takes 4 MiB, a batch of 512
    spans with their content is often more: nothing of a 600-span run was sent). Now the batch is sent again in
    halves; a single span still refused stops the export as any refusal does."""
    path = traces(rec, tmp_path)
    with Receiver(refuse=[413]) as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces", "--batch-size", "12")
        statuses = [(r.status, len(decode(r.payload()))) for r in rx.requests]
        got = rx.spans()
    assert proc.returncode == 0, proc.stderr
    assert statuses == [(413, 12), (200, 6), (200, 6)] and len(got) == 12
    assert "12 span(s) of 2 trace(s) sent" in proc.stderr
    with Receiver(refuse=[413] * 3) as rx:
        proc = export(str(path), "--to", rx.url + "/v1/traces", "--batch-size", "2")
        statuses = [(r.status, len(decode(r.payload()))) for r in rx.requests]
    assert proc.returncode == 1
    assert statuses == [(413, 2), (413, 1)], "the first half refused alone: stopped"
    assert f"1 span(s) from {path}:1 not accepted by {rx.url}/v1/traces" in proc.stderr and "413" in proc.stderr
    assert "12 span(s) not sent" in proc.stderr


def test_nobody_listening_is_a_bounded_clear_error(rec, tmp_path: Path) -> None:
    path = traces(rec, tmp_path)
    with Receiver() as rx:
        url = rx.url + "/v1/traces"
    proc = export(str(path), "--to", url, "--timeout", "1")  # the receiver is closed: connection refused
    assert proc.returncode == 1
    assert f"12 span(s) from {path}:1-4 not accepted by {url}" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_arguments(tmp_path: Path) -> None:
    for args, message in (
        (["x.jsonl", "--to", "127.0.0.1:6006"], "--to must be an http:// or https:// URL"),
        (["x.jsonl", "--to", "http://[::1:4318"], "--to must be an http:// or https:// URL"),  # was 'Invalid IPv6 URL'
        (["x.jsonl", "--to", "http://h:99999"], "--to must be an http:// or https:// URL"),
        (["x.jsonl", "--to", "http://127.0.0.1:9", "-H", "novalue"], "--header must be NAME=VALUE"),
        # before: taken, then every batch 'not accepted' (exit 1) with requests' error quoting the value
        (["x.jsonl", "--to", "http://127.0.0.1:9", "-H", "authorization=Bearer t0k\r\nX-Evil: 1"],
         "--header authorization cannot be sent as an HTTP header: it holds a line break"),
        (["x.jsonl", "--to", "http://127.0.0.1:9", "-H", "x team=ai"], "--header: header name 'x'… is not a token"),
        ([str(tmp_path / "missing.jsonl"), "--to", "http://127.0.0.1:9"], "cannot read"),
    ):
        proc = export(*args)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert "t0k" not in proc.stderr


def test_an_input_without_a_span_is_said_not_a_success(rec, tmp_path: Path) -> None:
    """``otel-agents export envelopes.jsonl`` (the fold's output), an ``ecp run`` report or ``ecp annotate``'s
    evaluation records: before, ``0 span(s) of 0 trace(s) sent`` and exit 0, as if the export had worked. Now exit
    1 saying no line holds spans, as ``fold`` says it; nothing is sent."""
    path = traces(rec, tmp_path)
    envelopes = tmp_path / "envelopes.jsonl"
    folded = subprocess.run([OTEL_AGENTS, "fold", str(path), "-o", str(envelopes)], capture_output=True, text=True,
                            timeout=120)
    assert folded.returncode == 0 and envelopes.read_text(encoding="utf-8").count("\n") == 2, folded.stderr
    logs = tmp_path / "evaluations.jsonl"
    logs.write_text(json.dumps({"resourceLogs": []}) + "\n", encoding="utf-8")
    with Receiver() as rx:
        for source in (envelopes, logs):
            proc = export(str(source), "--to", rx.url + "/v1/traces")
            assert proc.returncode == 1, proc.stderr
            assert "otel-agents export: no span in the input: no line holds OTLP/JSON traces" in proc.stderr, \
                proc.stderr
        assert not rx.requests
