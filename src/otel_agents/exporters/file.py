"""Spans ↔ OTLP/JSON lines: a file exporter and its reader.

:class:`OTLPJsonFileExporter` writes each batch of spans as one
``ExportTraceServiceRequest`` in the OTLP JSON encoding, one object per line —
the same file the OpenTelemetry Collector's ``file`` exporter writes — so a
stored run can be replayed to any OTLP backend, or re-folded into ECP
envelopes offline (``otel-agents fold``). :func:`read_otlp_json` reads such a
file (ours or a Collector's) back into SDK ``ReadableSpan``s.

Usage::

    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from otel_agents.exporters.file import OTLPJsonFileExporter, read_otlp_json

    provider.add_span_processor(BatchSpanProcessor(OTLPJsonFileExporter("traces.jsonl")))
    ...
    spans = read_otlp_json("traces.jsonl")

The encoding follows the OTLP specification's "JSON Protobuf Encoding": the
protobuf JSON mapping with lowerCamelCase field names, enums as integers,
64-bit integers as decimal strings, and — unlike protobuf's generic mapping,
which would write base64 — ``traceId``/``spanId``/``parentSpanId`` as hex
strings. Spans are converted to protobuf by the OpenTelemetry SDK's own OTLP
encoder (``opentelemetry-exporter-otlp-proto-common``), so the file carries
exactly what the OTLP/HTTP exporter would send. Needs that package (extras
``otlp`` or ``ecp``). Compressed Collector files are not read; lines holding
logs or metrics (``resourceLogs``/``resourceMetrics``) are skipped silently.
"""

from __future__ import annotations

import base64
import json
import logging
import os
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags, TraceState
from opentelemetry.trace.status import Status, StatusCode

from ._appender import JsonLinesAppender

logger = logging.getLogger("otel_agents")

# OTLP Span.SpanKind (1..5) ↔ the SDK's SpanKind.
_KINDS = {1: SpanKind.INTERNAL, 2: SpanKind.SERVER, 3: SpanKind.CLIENT, 4: SpanKind.PRODUCER, 5: SpanKind.CONSUMER}
_FLAG_PARENT_REMOTE = 0x200  # SpanFlags: CONTEXT_HAS_IS_REMOTE_MASK is 0x100, CONTEXT_IS_REMOTE_MASK 0x200
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


# --- writing --------------------------------------------------------------------

def to_otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` in the OTLP JSON encoding (a JSON-ready dict)."""
    message = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    trace_flags = {(f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}"): int(s.context.trace_flags)
                   for s in spans if s.context is not None}
    for span in _all_spans(message):
        _ids_to_hex(span)
        for link in span.get("links", ()):
            _ids_to_hex(link)
        # The SDK's encoder leaves the W3C trace-flag bits (0-7) of ``flags`` empty; OTLP defines them.
        bits = trace_flags.get((span.get("traceId"), span.get("spanId")), 0)
        if bits:
            span["flags"] = span.get("flags", 0) | bits
    return message


def _all_spans(message: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for rs in message.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            yield from ss.get("spans", ())


def _ids_to_hex(obj: dict[str, Any]) -> None:
    for name in _ID_FIELDS:
        if obj.get(name):
            obj[name] = base64.b64decode(obj[name]).hex()


def logs_to_otlp_json(records: Sequence[Any]) -> dict[str, Any]:
    """One ``ExportLogsServiceRequest`` in the OTLP JSON encoding (a JSON-ready dict), from SDK log
    records (``ReadableLogRecord``), with ``traceId``/``spanId`` as hex as for spans."""
    message = json_format.MessageToDict(encode_logs(records), use_integers_for_enums=True)
    for rl in message.get("resourceLogs", ()):
        for sl in rl.get("scopeLogs", ()):
            for record in sl.get("logRecords", ()):
                _ids_to_hex(record)
    return message


class OTLPJsonLogFileExporter(LogRecordExporter):
    """Append log records (events) to ``path`` as OTLP/JSON lines, one ``ExportLogsServiceRequest``
    per export batch: the logs half of :class:`OTLPJsonFileExporter` (an SDK ``LogRecordExporter``;
    the file may be the traces file itself, whose readers skip ``resourceLogs`` lines).

    Raises:
        OSError: the file cannot be opened for appending.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self._out = JsonLinesAppender(path)
        self.path = self._out.path

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        if not batch:
            return LogRecordExportResult.SUCCESS
        try:
            line = json.dumps(logs_to_otlp_json(batch), ensure_ascii=False, separators=(",", ":"))
            if not self._out.append(line):
                return LogRecordExportResult.FAILURE
        except Exception as exc:  # noqa: BLE001 - an exporter reports failure, it does not raise
            logger.warning("otel_agents: could not write log records to %s: %r", self.path, exc)
            return LogRecordExportResult.FAILURE
        return LogRecordExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def shutdown(self) -> None:
        self._out.close()


class OTLPJsonFileExporter(SpanExporter):
    """Append spans to ``path`` as OTLP/JSON lines (one export batch per line).

    Args:
        path: the file; created (with its directory) if missing, appended to otherwise.
            Default: ``OTEL_AGENTS_TRACES_FILE``, else ``otel-agents-traces.jsonl`` in the
            working directory (as for the ``file`` preset). This default is what the
            ``otlp_json_file`` entry point uses:
            ``opentelemetry-instrument --traces_exporter otlp_json_file python app.py``.

    Raises:
        OSError: the file cannot be opened for appending.

    Each :meth:`export` writes its line with one ``O_APPEND`` write and keeps
    nothing buffered, so a crash loses at most the batch being written, and
    threads and forked worker processes (gunicorn) can share one file: their
    lines never interleave (see :mod:`otel_agents.exporters._appender`).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None):
        if path is None:
            from .presets import DEFAULT_TRACES_FILE, ENV_TRACES_FILE

            path = os.environ.get(ENV_TRACES_FILE) or DEFAULT_TRACES_FILE
        self._out = JsonLinesAppender(path)
        self.path = self._out.path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            line = json.dumps(to_otlp_json(spans), ensure_ascii=False, separators=(",", ":"))
            if not self._out.append(line):
                return SpanExportResult.FAILURE
        except Exception as exc:  # noqa: BLE001 - an exporter reports failure, it does not raise
            logger.warning("otel_agents: could not write spans to %s: %r", self.path, exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # nothing is buffered: every export is written when it returns

    def shutdown(self) -> None:
        self._out.close()


# --- reading --------------------------------------------------------------------

@dataclass(frozen=True)
class MalformedLine:
    """A line of an OTLP/JSON file that could not be read (it was skipped).

    Attributes:
        source: the file name (or ``"<stream>"``).
        line: its 1-based line number.
        message: what is wrong with it.
    """

    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}"


def read_otlp_json(source: str | os.PathLike[str] | Iterable[str], *,
                   errors: list[MalformedLine] | None = None) -> list[ReadableSpan]:
    """Read OTLP/JSON lines back into SDK ``ReadableSpan``s.

    Args:
        source: a file path, or an iterable of lines (``str`` or ``bytes``: an
            open file, ``sys.stdin``).
        errors: a list that receives one :class:`MalformedLine` per line that
            could not be read; when ``None``, each is logged as a WARNING.

    Returns:
        The spans of every readable line, in file order. A malformed line
        (not UTF-8, invalid JSON, not an object, an invalid field, an id that is
        not hex of the right length) is skipped whole; the lines around it are kept. Blank
        lines and lines without ``resourceSpans`` (logs, metrics) are skipped
        silently.

    Raises:
        OSError: the file cannot be opened.

    Ids are read as hex (the OTLP JSON rule); ``flags`` bit 0x200 marks a remote
    parent; attribute values of type ``kvlistValue`` become JSON text and
    ``bytesValue`` base64 text (neither is a legal SDK attribute value).
    """
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        with open(name, "rb") as f:  # bytes: a line that is not UTF-8 is reported, not fatal
            return _read_lines(f, name, errors)
    return _read_lines(source, getattr(source, "name", "<stream>"), errors)


def _read_lines(lines: Iterable[str | bytes], name: str, errors: list[MalformedLine] | None) -> list[ReadableSpan]:
    spans: list[ReadableSpan] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            if isinstance(text, bytes):
                try:
                    text = text.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
            spans.extend(_parse_line(text))
        except ValueError as exc:
            problem = MalformedLine(str(name), number, str(exc))
            if errors is not None:
                errors.append(problem)
            else:
                logger.warning("otel_agents: skipped %s", problem)
    return spans


def _parse_line(text: str) -> list[ReadableSpan]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object (an ExportTraceServiceRequest), got {type(data).__name__}")
    if "resourceSpans" not in data and "resource_spans" not in data:
        return []
    _hex_ids_to_base64(data)
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError, AttributeError) as exc:
        raise ValueError(f"not an OTLP trace request: {exc}") from None
    return _spans_of(request)


def _hex_ids_to_base64(data: dict[str, Any]) -> None:
    """Turn OTLP JSON hex ids into the base64 protobuf's JSON parser expects; check them."""
    for i, rs in enumerate(_list(data, "resourceSpans", "resource_spans")):
        for j, ss in enumerate(_list(rs, "scopeSpans", "scope_spans")):
            for k, span in enumerate(_list(ss, "spans")):
                where = f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}]"
                _convert_ids(span, where)
                for n, link in enumerate(_list(span, "links")):
                    _convert_ids(link, f"{where}.links[{n}]")


def _list(obj: Any, *names: str) -> list[Any]:
    if not isinstance(obj, dict):
        return []
    for name in names:
        value = obj.get(name)
        if isinstance(value, list):
            return value
    return []


def _convert_ids(obj: Any, where: str) -> None:
    if not isinstance(obj, dict):
        return
    for camel, size in _ID_FIELDS.items():
        snake = {"traceId": "trace_id", "spanId": "span_id", "parentSpanId": "parent_span_id"}[camel]
        for key in (camel, snake):
            value = obj.get(key)
            if value in (None, ""):
                continue
            if not isinstance(value, str):
                raise ValueError(f"{where}.{camel}: expected a hex string, got {value!r}")
            try:
                raw = bytes.fromhex(value)
            except ValueError:
                raise ValueError(f"{where}.{camel}: {value!r} is not hex") from None
            if len(raw) != size:
                raise ValueError(f"{where}.{camel}: {value!r} is not {size * 2} hex digits")
            obj[key] = base64.b64encode(raw).decode("ascii")


def _spans_of(request: ExportTraceServiceRequest) -> list[ReadableSpan]:
    out: list[ReadableSpan] = []
    for rs in request.resource_spans:
        resource = Resource(_attributes(rs.resource.attributes), rs.schema_url or None)
        for ss in rs.scope_spans:
            scope = InstrumentationScope(ss.scope.name, ss.scope.version, ss.schema_url,
                                         _attributes(ss.scope.attributes) or None)
            for s in ss.spans:
                out.append(_span(s, resource, scope))
    return out


def _span(s: Any, resource: Resource, scope: InstrumentationScope) -> ReadableSpan:
    trace_id = int.from_bytes(s.trace_id, "big")
    span_id = int.from_bytes(s.span_id, "big")
    if not trace_id or not span_id:
        raise ValueError(f"span {s.name!r} has no traceId or spanId")
    state = TraceState.from_header([s.trace_state]) if s.trace_state else None
    # Writers built on the SDK's OTLP encoder leave the W3C trace-flag bits of ``flags``
    # at 0; a span that was exported was sampled, so 0 reads as "sampled".
    context = SpanContext(trace_id, span_id, is_remote=False,
                          trace_flags=TraceFlags((s.flags & 0xFF) or TraceFlags.SAMPLED), trace_state=state)
    parent = None
    if s.parent_span_id:
        parent = SpanContext(trace_id, int.from_bytes(s.parent_span_id, "big"),
                             is_remote=bool(s.flags & _FLAG_PARENT_REMOTE))
    code = StatusCode(s.status.code) if s.status.code in (0, 1, 2) else StatusCode.UNSET
    status = Status(code, s.status.message or None) if code is StatusCode.ERROR else Status(code)
    events = [Event(e.name, _attributes(e.attributes), timestamp=e.time_unix_nano) for e in s.events]
    links = [Link(SpanContext(int.from_bytes(link.trace_id, "big"), int.from_bytes(link.span_id, "big"),
                              is_remote=True), _attributes(link.attributes)) for link in s.links]
    return ReadableSpan(
        name=s.name, context=context, parent=parent, resource=resource,
        attributes=_attributes(s.attributes), events=events, links=links,
        kind=_KINDS.get(s.kind, SpanKind.INTERNAL), status=status,
        start_time=s.start_time_unix_nano or None, end_time=s.end_time_unix_nano or None,
        instrumentation_scope=scope,
    )


def _attributes(pairs: Iterable[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in pairs:
        value = _attribute_value(_data(kv.value))
        if value is not None:
            out[kv.key] = value
    return out


def _data(v: AnyValue) -> Any:
    """An ``AnyValue`` as plain data: scalars, lists, dicts; bytes as base64 text."""
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_data(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _data(kv.value) for kv in v.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(v.bytes_value).decode("ascii")
    return getattr(v, which)


def _attribute_value(data: Any) -> Any:
    """An SDK-legal attribute value: scalars as is, homogeneous scalar arrays as tuples, the rest as JSON text."""
    if not isinstance(data, (list, dict)):
        return data
    if isinstance(data, list):
        items = [x for x in data if x is not None]
        for t in (str, bool, int, float):
            if all(type(x) is t for x in items):
                return tuple(items)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


__all__ = ["MalformedLine", "OTLPJsonFileExporter", "read_otlp_json", "to_otlp_json"]
