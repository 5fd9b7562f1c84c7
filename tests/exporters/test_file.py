"""OTLP/JSON files: ``OTLPJsonFileExporter`` and ``read_otlp_json`` (issue 7)."""

from __future__ import annotations

import json
import logging

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import Link, SpanContext, SpanKind, StatusCode, TraceFlags

from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import OTLPJsonFileExporter, read_otlp_json

from .conftest import Recorder, check
from .test_ecp_fold import agent_run


def write(path, spans, batch=2):
    exporter = OTLPJsonFileExporter(path)
    for i in range(0, len(spans), batch):
        exporter.export(spans[i:i + batch])
    exporter.shutdown()


def comparable(span):
    return (span.name, span.context.trace_id, span.context.span_id, span.context.trace_flags,
            span.parent.span_id if span.parent else None, span.parent.is_remote if span.parent else None,
            span.kind, dict(span.attributes), span.status.status_code, span.status.description,
            span.start_time, span.end_time, [(e.name, dict(e.attributes), e.timestamp) for e in span.events],
            [(link.context.trace_id, link.context.span_id, link.context.is_remote, dict(link.attributes))
             for link in span.links],
            span.instrumentation_scope.name, span.instrumentation_scope.version, dict(span.resource.attributes))


def test_round_trip_gives_the_same_envelopes(rec, tmp_path):
    """Issue 7 done-when: spans → OTLP/JSON file → read_otlp_json → fold == fold of the spans directly."""
    agent_run(rec.telemetry, name="one")
    agent_run(rec.telemetry, name="two")
    spans = rec.spans
    path = tmp_path / "traces.jsonl"
    write(path, spans, batch=5)
    back = read_otlp_json(path)
    assert [comparable(s) for s in back] == [comparable(s) for s in spans]
    assert check(fold(back)) == fold(spans)


def test_file_is_otlp_json_one_request_per_line(rec, tmp_path):
    """Hex ids, lowerCamelCase, integer enums, one ExportTraceServiceRequest per export call."""
    agent_run(rec.telemetry)
    spans = rec.spans
    path = tmp_path / "traces.jsonl"
    write(path, spans, batch=4)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    request = json.loads(lines[0])
    span = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    original = spans[0]
    assert span["traceId"] == f"{original.context.trace_id:032x}"
    assert span["spanId"] == f"{original.context.span_id:016x}"
    assert span["parentSpanId"] == f"{original.parent.span_id:016x}"
    assert span["kind"] == 3 and span["startTimeUnixNano"] == str(original.start_time)  # CLIENT; int64 as string
    assert {"key": "otel_agents.span.kind", "value": {"stringValue": "model"}} in span["attributes"]
    error_span = next(s for line in lines for rs in json.loads(line)["resourceSpans"]
                      for ss in rs["scopeSpans"] for s in ss["spans"] if s["name"] == "execute_tool lookup")
    assert error_span["status"] == {"code": 2, "message": "ValueError: unknown city"}
    assert error_span["events"][0]["name"] == "exception"


def test_batch_processor_and_links_and_remote_parents(tmp_path):
    """Through a BatchSpanProcessor; links and a remote parent survive the round trip."""
    path = tmp_path / "t.jsonl"
    exporter = OTLPJsonFileExporter(path)
    rec = Recorder(BatchSpanProcessor(exporter))
    remote = SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    ctx = trace.set_span_in_context(trace.NonRecordingSpan(remote))
    with rec.app.start_as_current_span("server", context=ctx, kind=SpanKind.SERVER,
                                       links=[Link(remote, {"why": "batch"})]) as span:
        span.set_attribute("tags", ["a", "b"])
        span.set_attribute("ratio", 0.25)
    rec.provider.force_flush()
    rec.provider.shutdown()
    [back] = read_otlp_json(path)
    [original] = rec.spans
    assert comparable(back) == comparable(original)
    assert back.parent.is_remote is True
    assert back.attributes["tags"] == ("a", "b")


def test_a_link_to_a_local_span_is_read_back_local(tmp_path):
    """A link's ``flags`` say whether the linked context was remote (SpanFlags 0x100 known, 0x200 remote; the SDK's
    encoder writes them): before, every link was read back remote, so ``otel-agents export`` sent a link to a span of
    the same process as one to another process's (flags 0x300 where the file had 0x100). Its ``traceState`` is read
    too; a link whose flags do not say (no 0x100) stays remote, as before."""
    path = tmp_path / "t.jsonl"
    rec = Recorder(SimpleSpanProcessor(OTLPJsonFileExporter(path)))
    remote = SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    with rec.app.start_as_current_span("first") as first:
        local = first.get_span_context()
    with rec.app.start_as_current_span("second", links=[Link(local, {"n": 1}), Link(remote, {"n": 2})]):
        pass
    rec.provider.shutdown()
    back = {s.name: s for s in read_otlp_json(path)}
    assert [link.context.is_remote for link in back["second"].links] == [False, True]
    original = {s.name: s for s in rec.spans}
    assert comparable(back["second"]) == comparable(original["second"])
    line = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    raw = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["links"]
    assert [link["flags"] for link in raw] == [0x100, 0x300]
    raw[0].pop("flags")
    raw[1]["traceState"] = "vendor=x"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    [again] = read_otlp_json(path)
    assert [link.context.is_remote for link in again.links] == [True, True]
    assert again.links[1].context.trace_state.get("vendor") == "x"


def test_reads_collector_style_files(tmp_path):
    """A Collector-written line: upper-case hex, numbers as JSON numbers, kvlist/bytes values; logs lines skipped."""
    collector = {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
        "scopeSpans": [{"scope": {"name": "otel_agents", "version": "0.1.0"}, "spans": [{
            "traceId": "0AF7651916CD43DD8448EB211C80319C", "spanId": "B7AD6B7169203331",
            "name": "invoke_agent helper", "kind": 1, "flags": 257,
            "startTimeUnixNano": 1700000000000000000, "endTimeUnixNano": "1700000000500000000",
            "attributes": [
                {"key": "otel_agents.span.kind", "value": {"stringValue": "agent"}},
                {"key": "gen_ai.agent.name", "value": {"stringValue": "helper"}},
                {"key": "output.value", "value": {"stringValue": "done"}},
                {"key": "output.mime_type", "value": {"stringValue": "text/plain"}},
                {"key": "count", "value": {"intValue": 3}},
                {"key": "nested", "value": {"kvlistValue": {"values": [
                    {"key": "a", "value": {"boolValue": True}}]}}},
                {"key": "blob", "value": {"bytesValue": "aGk="}},
            ],
            "droppedAttributesCount": 0,
            "status": {}}]}]}]}
    logs_line = {"resourceLogs": [{"scopeLogs": []}]}
    path = tmp_path / "collector.json"
    path.write_text(json.dumps(collector) + "\n\n" + json.dumps(logs_line) + "\n", encoding="utf-8")
    errors = []
    [span] = read_otlp_json(path, errors=errors)
    assert errors == []
    assert span.context.trace_id == 0x0AF7651916CD43DD8448EB211C80319C and span.parent is None
    assert span.context.trace_flags == 1 and span.start_time == 1_700_000_000_000_000_000
    assert span.attributes["count"] == 3 and span.attributes["nested"] == '{"a":true}'
    assert span.attributes["blob"] == "aGk=" and span.status.status_code is StatusCode.UNSET
    assert span.resource.attributes == {"service.name": "svc"}
    [env] = check(fold([span]))
    assert env["public_output"] == "done" and env["metrics"]["duration_ms"] == 500.0


def test_malformed_lines_are_named_and_skipped(rec, tmp_path, caplog):
    """Issue 7: a malformed line → a precise error naming the line; the lines around it are kept."""
    agent_run(rec.telemetry)
    spans = rec.spans
    path = tmp_path / "mixed.jsonl"
    write(path, spans, batch=3)
    good = path.read_text(encoding="utf-8").splitlines()
    bad_id = json.loads(good[0])
    bad_id["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["spanId"] = "xyz"
    short_id = json.loads(good[0])
    short_id["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "abcd"
    wrong_type = {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 5, "traceId": "0" * 31 + "1",
                                                                "spanId": "0" * 15 + "1"}]}]}]}
    path.write_text("\n".join([good[0], '{"resourceSpans": [', "[1, 2]", json.dumps(bad_id), good[1],
                               json.dumps(short_id), json.dumps(wrong_type)]) + "\n", encoding="utf-8")
    errors = []
    back = read_otlp_json(path, errors=errors)
    assert [e.line for e in errors] == [2, 3, 4, 6, 7]
    assert str(errors[0]).startswith(f"{path}:2: invalid JSON: ")
    assert "got list" in errors[1].message
    assert errors[2].message == ("1 span(s) left out, the line's 2 other(s) read: "
                                 "resourceSpans[0].scopeSpans[0].spans[1].spanId: 'xyz' is not hex")
    assert errors[3].message == ("1 span(s) left out, the line's 2 other(s) read: "
                                 "resourceSpans[0].scopeSpans[0].spans[0].traceId: 'abcd' is not 32 hex digits")
    assert [e.spans for e in errors] == [0, 0, 1, 1, 0]  # lines 4 and 6 lost only their bad span
    assert errors[4].message == "resourceSpans[0].scopeSpans[0].spans[0].name: expected a string, got int"
    names = [s.name for s in spans]  # lines 1 and 5 hold every span; lines 4 and 6 the good ones of line 1 again
    assert [s.name for s in back] == names[:3] + [names[0], names[2]] + names[3:] + names[1:3]
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        read_otlp_json(path)
    assert f"skipped {path}:2: invalid JSON" in caplog.text


def test_reads_an_open_stream(rec, tmp_path):
    agent_run(rec.telemetry)
    path = tmp_path / "t.jsonl"
    write(path, rec.spans)
    with open(path, encoding="utf-8") as f:
        assert len(read_otlp_json(f)) == len(rec.spans)


def test_missing_file_raises(tmp_path):
    with pytest.raises(OSError):
        read_otlp_json(tmp_path / "nope.jsonl")


def test_export_after_shutdown_fails_quietly(rec, tmp_path):
    with rec.app.start_as_current_span("x"):
        pass
    exporter = OTLPJsonFileExporter(tmp_path / "t.jsonl")
    exporter.shutdown()
    assert exporter.export(rec.spans).name == "FAILURE"


def test_simple_processor_writes_a_line_per_span(tmp_path):
    path = tmp_path / "t.jsonl"
    rec = Recorder(SimpleSpanProcessor(OTLPJsonFileExporter(path)))
    agent_run(rec.telemetry)
    rec.provider.shutdown()
    assert len(path.read_text(encoding="utf-8").splitlines()) == len(rec.spans)
    assert check(fold(read_otlp_json(path))) == fold(rec.spans)


def test_a_lone_surrogate_costs_that_value_not_the_batch(rec, tmp_path, caplog):
    """Issue #35: a span made outside our span layer (the SDK tracer directly) whose name, attribute
    and event hold a lone surrogate (an undecodable file name) used to lose the whole batch (protobuf
    needs UTF-8). That value is written escaped, as the span layer escapes it; the rest as is."""
    with rec.app.start_as_current_span("open /tmp/caf\udce9.txt", attributes={"file": "caf\udce9", "n": 1}) as span:
        span.add_event("read", {"lines": ("ok", "bad \ud83d")})
    agent_run(rec.telemetry, name="neighbour")  # a good run in the same batch
    path = tmp_path / "t.jsonl"
    with caplog.at_level(logging.DEBUG):
        assert OTLPJsonFileExporter(path).export(rec.spans).name == "SUCCESS"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    back = read_otlp_json(path)
    assert len(back) == len(rec.spans)
    bad = next(s for s in back if s.name.startswith("open "))
    assert bad.name == "open /tmp/caf\\udce9.txt" and dict(bad.attributes) == {"file": "caf\\udce9", "n": 1}
    assert dict(bad.events[0].attributes) == {"lines": ("ok", "bad \\ud83d")}
    neighbours = [s for s in back if s is not bad]
    assert check(fold(neighbours)) == fold([s for s in rec.spans if not s.name.startswith("open ")])


def test_a_malformed_trace_state_is_dropped_with_its_line_and_field_named(tmp_path, caplog, capsys):
    """Issue #35: the SDK's parser dropped it with "Member doesn't match the w3c identifiers format",
    naming no line or field. Now the note names both, the span is kept, valid trace states are read."""
    def span(i: int, state: str) -> dict:
        return {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": f"{i:016x}", "name": f"s{i}",
                "traceState": state, **({"parentSpanId": f"{1:016x}"} if i > 1 else {})}

    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span(1, "vendor=ok,x y"), span(2, "a=1, b=2,"),
                                                            span(3, "a=1,a=2")]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text("\n" + json.dumps(request) + "\n", encoding="utf-8")
    warnings: list = []
    with caplog.at_level(logging.DEBUG):
        spans = read_otlp_json(path, warnings=warnings)
    assert [s.name for s in spans] == ["s1", "s2", "s3"]
    assert [dict(s.context.trace_state) for s in spans] == [{}, {"a": "1", "b": "2"}, {}]
    assert [(w.line, w.message) for w in warnings] == [
        (2, "resourceSpans[0].scopeSpans[0].spans[0].traceState: member 'x y' is not key=value in the W3C "
            "tracestate format; the trace state was dropped, the span kept"),
        (2, "resourceSpans[0].scopeSpans[0].spans[2].traceState: key 'a' appears twice; the trace state was "
            "dropped, the span kept")]
    assert not caplog.records  # not the SDK's message, which names neither
    from otel_agents.cli import main

    assert main(["fold", str(path)]) == 0  # the fold does not use trace states: nothing of its output is lost
    err = capsys.readouterr().err
    assert f"warning: {path}:2: resourceSpans[0].scopeSpans[0].spans[0].traceState: member 'x y'" in err


def test_an_attribute_value_of_two_kinds_leaves_its_span_out_named(tmp_path):
    """An AnyValue is a oneof: ``{"stringValue": "a", "intValue": "3"}`` was read as "a" silently (the first
    written won). Now its span is left out with the value's path and both kinds named (protobuf's JSON parsers
    refuse it too), the line's other spans are read; a null beside the one kind is still the one kind (Phoenix
    writes every field)."""
    def span(i: int, value: dict) -> dict:
        return {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": f"{i:016x}", "name": f"s{i}",
                "attributes": [{"key": "ok", "value": {"boolValue": True}}, {"key": "k", "value": value}]}

    request = {"resourceSpans": [{"scopeSpans": [{"spans": [
        span(1, {"stringValue": "a", "intValue": "3"}), span(2, {"stringValue": "b", "intValue": None}),
        span(3, {"arrayValue": {"values": [{"boolValue": True, "double_value": 1.5}]}})]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(request) + "\n", encoding="utf-8")
    errors: list = []
    spans = read_otlp_json(path, errors=errors)
    assert [(s.name, dict(s.attributes)) for s in spans] == [("s2", {"ok": True, "k": "b"})]
    [error] = errors
    assert (error.line, error.spans) == (1, 2)
    assert error.message == (
        "2 span(s) left out, the line's 1 other(s) read: resourceSpans[0].scopeSpans[0].spans[0].attributes[1]"
        ".value: an AnyValue holds one value, got 2: stringValue, intValue; resourceSpans[0].scopeSpans[0]."
        "spans[2].attributes[1].value.arrayValue.values[0]: an AnyValue holds one value, got 2: boolValue, "
        "double_value")


def test_a_status_code_that_is_none_of_0_1_2_is_read_as_unset_and_named(tmp_path, capsys):
    """Status.code is an enum of 0 (unset), 1 (ok), 2 (error): a 7 became UNSET silently. It still does (a proto3
    enum is open, so 7 is legal on the wire, but no status the SDK has), and now a warning names the line and the
    field, as a malformed traceState's does; the span is kept, in the usual form and the checked one alike."""
    usual = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": f"{1:016x}", "name": "s1",
             "startTimeUnixNano": "1", "endTimeUnixNano": "2", "status": {"code": 7}}
    checked = {**usual, "spanId": f"{2:016x}", "name": "s2", "status": {"code": -1, "message": "m"},
               "traceState": "a=1"}
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [usual, checked,
                                                            {**usual, "spanId": f"{3:016x}", "name": "s3",
                                                             "status": {"code": 2, "message": "boom"}}]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(request) + "\n", encoding="utf-8")
    warnings: list = []
    errors: list = []
    spans = read_otlp_json(path, errors=errors, warnings=warnings)
    assert [(s.name, s.status.status_code, s.status.description) for s in spans] == [
        ("s1", StatusCode.UNSET, None), ("s2", StatusCode.UNSET, None), ("s3", StatusCode.ERROR, "boom")]
    assert not errors
    assert [(w.line, w.message) for w in warnings] == [
        (1, "resourceSpans[0].scopeSpans[0].spans[0].status.code: 7 is not a status code (0 unset, 1 ok, 2 error); "
            "the status was read as unset, the span kept"),
        (1, "resourceSpans[0].scopeSpans[0].spans[1].status.code: -1 is not a status code (0 unset, 1 ok, "
            "2 error); the status was read as unset (its message dropped), the span kept")]
    from otel_agents.cli import main

    main(["fold", str(path)])
    assert f"warning: {path}:1: resourceSpans[0].scopeSpans[0].spans[0].status.code: 7" in capsys.readouterr().err


def test_a_span_kind_that_is_none_of_0_to_5_is_read_as_internal_and_named(tmp_path):
    """Span.kind is an enum of 0 (unspecified) to 5 (consumer): a 9 became INTERNAL silently. It still does (an
    open proto3 enum, as the status code), now with a warning naming the line and the field; the span is kept."""
    usual = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": f"{1:016x}", "name": "s1", "kind": 9}
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [
        usual, {**usual, "spanId": f"{2:016x}", "name": "s2", "kind": 3},
        {**usual, "spanId": f"{3:016x}", "name": "s3", "kind": -1, "traceState": "a=1"}]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(request) + "\n", encoding="utf-8")
    warnings: list = []
    errors: list = []
    spans = read_otlp_json(path, errors=errors, warnings=warnings)
    assert [(s.name, s.kind) for s in spans] == [("s1", SpanKind.INTERNAL), ("s2", SpanKind.CLIENT),
                                                 ("s3", SpanKind.INTERNAL)]
    assert not errors
    assert [(w.line, w.message) for w in warnings] == [
        (1, f"resourceSpans[0].scopeSpans[0].spans[{i}].kind: {k} is not a span kind (1 internal, 2 server, 3 client, "
            "4 producer, 5 consumer); read as internal, the span kept") for i, k in ((0, 9), (2, -1))]


@pytest.mark.parametrize("number", ["²", "--5", "٣", "-", "1_0", " 5"])
@pytest.mark.parametrize("field", ["startTimeUnixNano", "flags"])
def test_an_integer_field_that_is_not_ascii_decimal_text_is_named(tmp_path, number, field):
    """Protobuf's JSON mapping writes a 64-bit integer as decimal text: anything else (a superscript, which
    ``int()`` refuses; an Arabic-Indic digit, which it reads; a doubled sign) is an error naming the field."""
    span = {"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "s", field: number}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n", encoding="utf-8")
    errors = []
    assert read_otlp_json(path, errors=errors) == []
    [error] = errors
    assert error.message.endswith(f"resourceSpans[0].scopeSpans[0].spans[0].{field}: expected an unsigned "
                                  f"{64 if field.endswith('Nano') else 32}-bit integer, got {number!r}")


# -- the decoder's fast path for spans in the usual form (_usual_span) ----------------------------------------
_USUAL_SPAN = {
    "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "parentSpanId": "00f067aa0ba902b7",
    "name": "chat", "kind": 3, "flags": 257, "startTimeUnixNano": "1700000000000000001",
    "endTimeUnixNano": "1700000000500000000", "status": {"code": 2, "message": "boom"},
    "attributes": [{"key": "gen_ai.system", "value": {"stringValue": "openai"}},
                   {"key": "n", "value": {"intValue": "3"}}, {"key": "t", "value": {"doubleValue": 0.5}}],
    "events": [{"name": "e", "timeUnixNano": "1700000000100000000",
                "attributes": [{"key": "k", "value": {"boolValue": True}}]}],
    "links": [{"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
               "attributes": [{"key": "l", "value": {"stringValue": "x"}}]}],
}


class _Drop:
    """A variant's value that removes the field (with a stable name: test ids must be the same in every worker)."""

    def __repr__(self):
        return "DROP"


_DROP = _Drop()


def _usual_variants():
    odd = [0, [], False, "", None]
    for field in ("parentSpanId", "status", "traceState"):
        for value in [*odd, _DROP]:
            yield {field: value}
    yield {"traceState": "a=1"}
    for field in ("flags", "kind"):
        yield from ({field: value} for value in (None, "1", "SPAN_KIND_SERVER", True, -1, 2**32, 0, _DROP))
    for field in ("startTimeUnixNano", "endTimeUnixNano"):
        for value in (1700000000000000001, 2**64 - 1, 2**64, -1, 0, True, 1.5, 1e18, "²", "٣", "+1", "-1",
                      "1" * 19, "1" * 20, "9" * 19,
                      "18446744073709551615", "18446744073709551616", "0", "", " 1", None, _DROP):
            yield {field: value}
    for field, size in (("traceId", 16), ("spanId", 8), ("parentSpanId", 8)):
        good = _USUAL_SPAN[field]
        for value in (" " + good[1:], good[:-2] + " " + good[-1], "0x" + good[2:], good.upper(), good[:-2],
                      good + "00", "0" * 2 * size, "zz" + good[2:], 12, None, _DROP):
            yield {field: value}
    for camel, snake in (("traceId", "trace_id"), ("spanId", "span_id"), ("parentSpanId", "parent_span_id"),
                         ("startTimeUnixNano", "start_time_unix_nano"), ("endTimeUnixNano", "end_time_unix_nano")):
        yield {camel: _DROP, snake: _USUAL_SPAN[camel]}
        yield {camel: None, snake: _USUAL_SPAN[camel]}
    for status in ({"code": "STATUS_CODE_ERROR", "message": "m"}, {"code": "2"}, {"code": 1}, {"code": 0},
                   {"code": None}, {"message": None}, {"message": 3}, {"code": 2}, {"code": 2.0}, {}, {"x": 1},
                   {"code": 7}, {"code": -1, "message": "m"}, {"code": 3}):
        yield {"status": status}
    yield {"name": None}
    yield {"name": 5}
    yield {"name": _DROP}
    yield {"unknownExtra": 1}
    yield {"droppedAttributesCount": 2, "droppedEventsCount": 1, "droppedLinksCount": 0}
    for field in ("events", "links", "attributes"):
        # an event without a time is given the reading's (the SDK's Event): never one of the odd ones here
        empty = [{"timeUnixNano": "1", "name": None}] if field == "events" else [{}, None]
        yield from ({field: value} for value in (_DROP, None, [], {}, "x", [5], empty))
    yield {"events": [{"name": 3}]}
    yield {"events": [{"name": "e", "timeUnixNano": "²"}]}
    yield {"events": [{"name": "e", "attributes": [{"key": "k", "value": {"intValue": "x"}}]}]}
    yield {"links": [{"traceId": "zz", "spanId": "eee19b7ec3c1b174"}]}
    yield {"links": [{"traceId": "5b8efff798038103d269b633813fc60c", "spanId": 5}]}
    yield {"attributes": [{"key": "k", "value": {"intValue": "1" * 30}}]}
    # the fast path tests a string value first: every other form of an element still goes to the checked path
    for attribute in ({"key": "k", "value": "x"}, {"key": "k", "value": ["x"]}, {"key": "k", "value": None},
                      {"key": 5, "value": {"stringValue": "x"}}, {"key": None, "value": {"stringValue": "x"}},
                      {"key": "k", "value": {"stringValue": "x", "intValue": "1"}}, {"key": "k", "value": {"stringValue": 5}},
                      {"key": "k", "value": {"stringValue": None}}, {"key": "k", "value": {}}):
        yield {"attributes": [{"key": "a", "value": {"stringValue": "ok"}}, attribute]}
    # several bad fields at once: the first one in the checked path's order is the one named
    yield {"events": "x", "links": "x", "attributes": "x"}
    yield {"links": "x", "attributes": "x", "kind": "bad"}
    yield {"attributes": "x", "startTimeUnixNano": "²"}
    yield {"events": [5], "status": 0}
    yield {"events": [5], "kind": "SPAN_KIND_SERVER", "attributes": [5]}


def _decoded(span, usual_enabled, monkeypatch):
    """What the decoder makes of a request holding ``span``: the spans (as comparable tuples, with their trace
    states) and the notes, or the error (its type and message)."""
    from otel_agents.exporters import file

    with monkeypatch.context() as m:
        if not usual_enabled:
            m.setattr(file._Decoder, "_usual_span", lambda *args: None)
        decoder = file._Decoder()
        try:
            spans = decoder.request({"resourceSpans": [{"resource": {}, "scopeSpans": [
                {"scope": {"name": "sc", "version": "1"}, "spans": [span]}]}]})
        except ValueError as exc:
            return type(exc).__name__, str(exc)
    return ([(comparable(s), s.context.is_remote, s.context.trace_state, s.parent and s.parent.trace_id)
             for s in spans], decoder.notes)


@pytest.mark.parametrize("variant", list(_usual_variants()), ids=repr)
def test_the_usual_span_fast_path_reads_every_span_as_the_checked_path_does(variant, monkeypatch):
    """``_usual_span`` (the decoder's fast path) must give exactly what the checked ``_span`` gives, or the
    same error naming the same field, whatever form a field takes: it either reads a span or hands it over."""
    from otel_agents.exporters import file

    span = {k: v for k, v in {**_USUAL_SPAN, **variant}.items() if v is not _DROP}
    assert _decoded(span, True, monkeypatch) == _decoded(span, False, monkeypatch)
    assert span == {k: v for k, v in {**_USUAL_SPAN, **variant}.items() if v is not _DROP}  # not changed


def test_the_usual_span_fast_path_is_taken_for_the_usual_form(monkeypatch):
    """The comparison above means something only if the fast path reads spans: it reads the usual span
    (and a few harmless variants) itself, and hands the rest to the checked path (links included)."""
    from otel_agents.exporters import file
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    def fast(variant):
        span = {k: v for k, v in {**_USUAL_SPAN, "links": _DROP, **variant}.items() if v is not _DROP}
        return file._Decoder()._usual_span(span, Resource({}), InstrumentationScope("sc")) is not None

    assert all(fast(v) for v in ({}, {"parentSpanId": ""}, {"parentSpanId": None}, {"status": None},
                                 {"traceState": ""}, {"traceId": _USUAL_SPAN["traceId"].upper()},
                                 {"startTimeUnixNano": "0"}, {"events": _DROP}, {"links": []},
                                 {"startTimeUnixNano": 1, "endTimeUnixNano": 2**64 - 1}))  # the protobuf receiver's
    assert not any(fast(v) for v in ({"traceState": "a=1"}, {"trace_id": "1" * 32}, {"flags": "1"},
                                     {"status": {"code": "STATUS_CODE_ERROR"}}, {"startTimeUnixNano": 2**64},
                                     {"startTimeUnixNano": True}, {"startTimeUnixNano": 1.0},
                                     {"events": [5]}, {"links": _USUAL_SPAN["links"]}, {"attributes": [5]}))


@pytest.mark.parametrize("attributes", [
    [{"key": "a", "value": {"stringValue": "x"}}, {"key": "a", "value": {"intValue": "2"}}],  # a key twice
    [{"key": "a", "value": {"stringValue": "x"}}, {"key": "b", "value": {}}],
    [{"key": "a", "value": {"stringValue": "x"}}, {"key": "b"}], [{"value": {"stringValue": "x"}}],
    [{"key": "a", "value": {"stringValue": "x"}}, {"key": "b", "value": {"stringValue": None}}],
    [{"key": "a", "value": {"stringValue": "x"}}, {"key": "b", "value": {"kvlistValue": {"values": []}}}],
    [{"key": "a", "value": {"stringValue": "x", "intValue": "1"}}], [{"key": 5, "value": {"stringValue": "x"}}],
    [{"key": None, "value": {"stringValue": "x"}}], [{"key": ["k"], "value": {"stringValue": "x"}}],
    [{"key": "a", "value": "stringValue"}], [{"key": "a", "value": ["stringValue"]}], ["key"], [None], [5],
    [{"key": "a", "value": {"intValue": "-1"}}, {"key": "b", "value": {"boolValue": False}}],
    [{"key": "a", "value": {"string_value": "x"}}], [], None, {}, "x",
], ids=repr)
def test_the_attribute_list_fast_path_reads_a_list_as_the_checked_path_does(attributes, monkeypatch):
    """``_usual_attributes`` reads a whole list, or hands all of it to the checked path: the same dict
    (keys in the same order, the last of a repeated key), or the same error naming the same field."""
    from otel_agents.exporters import file

    def outcome(read):
        try:
            return repr(read())
        except ValueError as exc:
            return f"{type(exc).__name__}: {exc}"

    obj = {"attributes": attributes} if attributes is not None else {}
    fast = outcome(lambda: file._Decoder()._attributes(obj, "s"))
    with monkeypatch.context() as m:
        m.setattr(file, "_usual_attributes", lambda attributes: None)
        assert fast == outcome(lambda: file._Decoder()._attributes(obj, "s"))


def _usual_array(*items):
    return {"arrayValue": {"values": list(items)}}


@pytest.mark.parametrize("value", [
    {"doubleValue": 0.5}, {"doubleValue": 1.0}, {"doubleValue": -0.0}, {"doubleValue": 1e308}, {"doubleValue": 1},
    {"doubleValue": 0}, {"doubleValue": -3}, {"doubleValue": True}, {"doubleValue": False}, {"doubleValue": "0.5"},
    {"doubleValue": "NaN"}, {"doubleValue": "Infinity"}, {"doubleValue": "-Infinity"}, {"doubleValue": None},
    {"doubleValue": []}, {"doubleValue": {}}, {"double_value": 0.5}, {"doubleValue": 0.5, "stringValue": "x"},
    _usual_array(), _usual_array({"stringValue": "a"}), _usual_array({"stringValue": "a"}, {"stringValue": ""}),
    _usual_array({"stringValue": "a"}, {"intValue": "1"}), _usual_array({"stringValue": "a"}, None),
    _usual_array(None), _usual_array({"stringValue": None}), _usual_array({"stringValue": 1}),
    _usual_array({"stringValue": "a", "intValue": "1"}), _usual_array({"string_value": "a"}), _usual_array("a"),
    _usual_array([]), _usual_array({}), _usual_array({"stringValue": "a"}, {"doubleValue": 1}),
    _usual_array({"arrayValue": {"values": [{"stringValue": "a"}]}}), _usual_array({"boolValue": True}),
    {"arrayValue": {}}, {"arrayValue": {"values": None}}, {"arrayValue": {"values": "x"}},
    {"arrayValue": {"values": [{"stringValue": "a"}], "x": 1}}, {"arrayValue": []}, {"arrayValue": "x"},
    {"array_value": {"values": [{"stringValue": "a"}]}},
], ids=repr)
def test_the_attribute_fast_path_reads_doubles_and_string_arrays_as_the_checked_path_does(value):
    """``_attributes`` reads the usual forms itself (strings, ints, bools, float doubles, arrays of strings):
    exactly what the checked ``_value`` + ``_attribute_value`` give (a float stays a float, an int in
    ``doubleValue`` becomes one, a homogeneous array a tuple), or the same error naming the same field."""
    from otel_agents.exporters.file import _attribute_value, _Decoder

    def outcome(read):
        try:
            return repr(read())  # repr: 1 and 1.0, ("a",) and ["a"] must not pass for each other
        except ValueError as exc:
            return f"{type(exc).__name__}: {exc}"

    def checked():
        read = _attribute_value(_Decoder()._value(value, "s.attributes[0].value", 0))
        return {} if read is None else {"k": read}

    assert outcome(lambda: _Decoder()._attributes({"attributes": [{"key": "k", "value": value}]}, "s")) \
        == outcome(checked)


@pytest.mark.parametrize("double", [[], {}, [1.5]])
def test_a_double_value_that_is_an_array_or_object_is_named(tmp_path, double):
    """``{"doubleValue": []}`` raised ``TypeError: unhashable type`` (a traceback from ``otel-agents fold``);
    now it is a bad field, named, and the line is skipped."""
    span = {"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "s",
            "attributes": [{"key": "d", "value": {"doubleValue": double}}]}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n", encoding="utf-8")
    errors = []
    assert read_otlp_json(path, errors=errors) == []
    [error] = errors
    assert error.message.endswith("resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.doubleValue: "
                                  f"wrong type {type(double).__name__}")


def test_a_lone_surrogate_escape_from_another_sdk_costs_that_value_not_the_line(rec, tmp_path):
    """OTLP/JSON written by another SDK (JavaScript's ``JSON.stringify`` writes a lone surrogate as the escape
    ``\\ud800``): valid JSON that orjson refuses, so the whole line used to be skipped as malformed. The
    line is read; that value escaped as text, as our own exporter writes it, so it can be UTF-8 again."""
    agent_run(rec.telemetry)
    path = tmp_path / "t.jsonl"
    write(path, rec.spans, batch=100)
    data = json.loads(path.read_text(encoding="utf-8"))
    span = data["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["name"] = "caf\udce9 \U0001F600"  # a lone surrogate and a valid pair (json.dumps escapes both)
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    errors = []
    back = read_otlp_json(path, errors=errors)
    assert errors == [] and len(back) == len(rec.spans)
    assert "caf\\udce9 \U0001F600" in [s.name for s in back]
    deep = json.dumps(data)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"  # lone, then too deep
    path.write_text(deep + "\n", encoding="utf-8")
    back = read_otlp_json(path, errors=errors)
    assert back == [] and [e.line for e in errors] == [1]


@pytest.mark.parametrize("variant", list(_usual_variants()), ids=repr)
def test_the_fold_s_span_maker_reads_every_span_as_a_readable_span_is_read(variant):
    """``otel-agents fold``'s decoder makes ``FoldSpan.decoded`` spans, not ``ReadableSpan``s: whatever form a field
    takes, the same span as ``FoldSpan(ReadableSpan)``, or the same error naming the same field."""
    from otel_agents.exporters import file
    from otel_agents.exporters.ecp._facts import FoldSpan

    span = {k: v for k, v in {**_USUAL_SPAN, **variant}.items() if v is not _DROP}

    def read(make):
        decoder = file._Decoder(make)
        try:
            spans = decoder.request({"resourceSpans": [{"resource": {}, "scopeSpans": [
                {"scope": {"name": "sc", "version": "1"}, "spans": [span]}]}]})
        except ValueError as exc:
            return type(exc).__name__, str(exc)
        return [(s.name, s.context, s.parent, s.trace_id, s.span_id, s.parent_id, dict(s.attributes),
                 s.status.status_code, s.status.description, s.start_time, s.end_time, s.span_kind, s.duration_ms,
                 s.semantic_kind, s.error) for s in (s if type(s) is FoldSpan else FoldSpan(s) for s in spans)], \
            decoder.notes

    assert read(FoldSpan.decoded) == read(file.ReadableSpan)


def test_spans_sharing_a_trace_id_are_read_as_the_checked_path_reads_each(monkeypatch):
    """The fast path reads a trace id's text once a request (the spans of a trace share it): every span of a
    request whose spans repeat, vary and break that text is still read, or left out, as the checked path does."""
    from otel_agents.exporters import file

    good = _USUAL_SPAN["traceId"]
    spans = [{**_USUAL_SPAN, "links": [], "spanId": f"{i + 1:016x}", "traceId": trace_id}
             for i, trace_id in enumerate([good, good, good.upper(), "0" * 32, good[:-2], 12, [good], None, good,
                                           " " + good[1:], good])]

    def read(usual_enabled):
        with monkeypatch.context() as m:
            if not usual_enabled:
                m.setattr(file._Decoder, "_usual_span", lambda *args: None)
            rejected = []
            got = file._Decoder().request({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, rejected)
        return [(s.context.trace_id, s.context.span_id, s.parent and s.parent.trace_id) for s in got], rejected

    fast = read(True)
    assert fast == read(False)
    assert len(fast[0]) == 5 and len(fast[1]) == 6  # the good text, its upper case: read; the rest left out


# -- the typed fast path for lines in the usual form (_typed_spans: msgspec) -----------------------------------
_VALUE_VARIANTS = [
    {"stringValue": "x", "intValue": "1"}, {"intValue": "1", "stringValue": "x"}, {"boolValue": True, "doubleValue": 1.5},
    {"stringValue": None}, {"intValue": None, "stringValue": "x"}, {}, {"intValue": 3}, {"intValue": "-3"},
    {"intValue": "-0"}, {"intValue": str(2**63 - 1)}, {"intValue": str(2**63)}, {"intValue": -2**63}, {"intValue": 2**63},
    {"intValue": 3.0}, {"intValue": "1e3"}, {"intValue": " 3"}, {"intValue": "٣"}, {"intValue": True},
    {"doubleValue": 2}, {"doubleValue": 2**70}, {"doubleValue": -0.0}, {"doubleValue": "NaN"}, {"boolValue": "true"},
    {"boolValue": 1}, {"arrayValue": {"values": []}}, {"arrayValue": {}},
    {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}}, {"arrayValue": {"values": [{"intValue": "2"}]}},
    {"arrayValue": {"values": [{"stringValue": "a", "boolValue": True}]}}, {"kvlistValue": {"values": []}},
    {"bytesValue": "aGk="}, {"bytesValue": "!"}, {"string_value": "x"}, {"stringValue": "x", "other": 1},
    {"stringValue": 5},
]


def _line(span):
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "svc"}}]}, "scopeSpans": [
        {"scope": {"name": "sc", "version": "1"}, "spans": [span, {**_USUAL_SPAN, "links": [], "spanId": "1" * 16}]}]}]})


def _read_line(line, typed_enabled, monkeypatch):
    """What the reader makes of one line: every field of its spans (``repr``: 1, 1.0 and True differ), the
    notes and the spans left out, or the error."""
    from otel_agents.exporters import file

    with monkeypatch.context() as m:
        if not typed_enabled:
            m.setattr(file, "_typed_spans", lambda text, make: None)
        notes, rejected = [], []
        try:
            spans = file._parse_line(line, notes, rejected)
        except ValueError as exc:
            return type(exc).__name__, str(exc)
    return [repr((comparable(s), tuple(s.context), tuple(s.parent or ()), list(s.attributes.items()),
                  [list(e.attributes.items()) for e in s.events],
                  s.context.trace_state, s.resource.schema_url, s.instrumentation_scope.schema_url)) for s in spans], \
        notes, rejected


@pytest.mark.parametrize("variant", [*_usual_variants(),
                                     *({"attributes": [{"key": "a", "value": {"stringValue": "ok"}},
                                                       {"key": "k", "value": value}]} for value in _VALUE_VARIANTS),
                                     *({"status": {"code": code}} for code in (3, -1, 2**64)), {"kind": 2**64},
                                     {"flags": 0x300}, {"flags": 0x2FF}, {"parentSpanId": _DROP, "flags": 0x300}],
                         ids=repr)
@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_the_typed_line_path_reads_every_line_as_the_checked_path_does(variant, as_bytes, monkeypatch):
    """``_typed_spans`` (msgspec parses and checks a line in one pass) must give exactly what the checked decoder
    gives, or hand the line to it, whatever form a field takes: the same spans, notes and spans left out, or the
    same error naming the same field. Without links, which the typed path leaves to the checked one."""
    span = {k: v for k, v in {**_USUAL_SPAN, "links": _DROP, **variant}.items() if v is not _DROP}
    line = _line(span)
    if as_bytes:
        line = line.encode()
    assert _read_line(line, True, monkeypatch) == _read_line(line, False, monkeypatch)


def test_the_typed_line_path_is_taken_for_the_usual_form():
    """The comparison above means something only if the typed path reads lines: it reads the usual forms
    itself (every attribute value form our exporter and the Collector's write), and hands the rest over."""
    from otel_agents.exporters import file

    def typed(variant):
        span = {k: v for k, v in {**_USUAL_SPAN, "links": _DROP, **variant}.items() if v is not _DROP}
        return file._typed_spans(_line(span), file.ReadableSpan) is not None

    assert all(typed(v) for v in ({}, {"parentSpanId": ""}, {"parentSpanId": _DROP}, {"status": _DROP},
                                  {"traceState": ""}, {"traceId": _USUAL_SPAN["traceId"].upper()},
                                  {"startTimeUnixNano": "0"}, {"events": _DROP}, {"links": []}, {"flags": 0x300},
                                  {"startTimeUnixNano": 1, "endTimeUnixNano": 2**64 - 1},
                                  {"attributes": [{"key": "k", "value": value} for value in (
                                      {"intValue": 3}, {"intValue": "-3"}, {"doubleValue": 2}, {"boolValue": False},
                                      {"arrayValue": {"values": [{"stringValue": "a"}]}})]}))
    assert not any(typed(v) for v in ({"traceState": "a=1"}, {"trace_id": "1" * 32}, {"flags": "1"}, {"kind": 6},
                                      {"status": {"code": "STATUS_CODE_ERROR"}}, {"startTimeUnixNano": 2**64},
                                      {"startTimeUnixNano": True}, {"startTimeUnixNano": 1.0}, {"name": None},
                                      {"events": [5]}, {"links": _USUAL_SPAN["links"]}, {"attributes": [5]},
                                      {"attributes": [{"key": "k", "value": {"stringValue": "x", "intValue": "1"}}]},
                                      {"unknownExtra": 1}))
    assert file._typed_spans('{"resourceSpans": [], "x": 1}', file.ReadableSpan) is None  # an unknown field
    assert file._typed_spans('{"data": [], "next_cursor": null}', file.ReadableSpan) is None  # Phoenix's page
    assert file._typed_spans(b'{"resourceSpans": [{"resource": {"attributes": [{"key": "k", "value": '
                             b'{"stringValue": "\xff"}}]}}]}', file.ReadableSpan) is None  # not UTF-8
    assert file._typed_spans('{"resourceSpans": [{"resource": {"attributes": [{"key": "k", "value": '
                             '{"stringValue": "\ud800"}}]}}]}', file.ReadableSpan) is None  # a lone surrogate


def test_a_bad_line_among_typed_ones_is_named_at_its_line_and_the_rest_is_read(tmp_path):
    """A line the typed path cannot read is read by the checked one: the same message as before (the field,
    the line), its good spans kept, and the lines around it read."""
    good = [{**_USUAL_SPAN, "links": [], "spanId": f"{i + 1:016x}"} for i in range(3)]
    bad = [*good[:1], {**good[1], "startTimeUnixNano": "x"}, *good[2:]]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"
                            for spans in (good, bad, good)), encoding="utf-8")
    errors = []
    spans = read_otlp_json(path, errors=errors)
    assert [str(e) for e in errors] == [
        f"{path}:2: 1 span(s) left out, the line's 2 other(s) read: "
        "resourceSpans[0].scopeSpans[0].spans[1].startTimeUnixNano: expected an unsigned 64-bit integer, got 'x'"]
    assert [s.context.span_id for s in spans] == [1, 2, 3, 1, 3, 1, 2, 3]


def test_span_contexts_made_without_their_checks_are_the_api_s():
    """The typed path makes ``SpanContext``s as the tuple the API's constructor builds (without its checks): equal
    to the constructor's, field by field, on this release of the API (else it uses the constructor)."""
    from otel_agents.exporters import file

    assert file._context is file._span_context
    for args in ((1, 2, False), (2**128 - 1, 2**64 - 1, True), (5, 6, False, TraceFlags(1)), (5, 6, True, TraceFlags(0))):
        made, want = file._span_context(*args), SpanContext(*args)
        assert made == want and type(made) is type(want)
        assert (made.trace_flags, made.trace_state, made.is_valid, made.is_remote) == \
            (want.trace_flags, want.trace_state, want.is_valid, want.is_remote)
