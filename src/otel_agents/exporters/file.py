"""Spans ↔ OTLP/JSON lines: a file exporter and its reader.

:class:`OTLPJsonFileExporter` writes each batch of spans as one
``ExportTraceServiceRequest`` in the OTLP JSON encoding, one object per line —
the same file the OpenTelemetry Collector's ``file`` exporter writes — so a
stored run can be replayed to any OTLP backend (``otel-agents export``, which sends
what :func:`iter_otlp_json` reads as OTLP/HTTP protobuf), or re-folded into ECP
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
exactly what the OTLP/HTTP exporter would send. Reading decodes the JSON
directly, line by line (:func:`iter_otlp_json`): a line in the usual form (what OTLP/JSON writers write) is
parsed and type-checked in one pass into typed structs (``msgspec``), any other with ``orjson`` and one type
check per field (which names a bad field), with every step bounded (a line over :data:`MAX_LINE_BYTES` is
skipped and reported); gzip-compressed files are decompressed as they are read; lines holding logs or
metrics (``resourceLogs``/``resourceMetrics``) are skipped silently.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import logging
import math
import os
import re
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import msgspec
import orjson
from google.protobuf import json_format
from msgspec import UNSET
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags, TraceState
from opentelemetry.trace.status import Status, StatusCode

from .._spans.encoding import dumps as strict_json
from .._spans.encoding import BOM_NOT_AT_START, starts_with_bom, utf8_safe, without_bom
from .._spans.redaction import excerpt, is_secret_key
from ._appender import JsonLinesAppender, file_setting, naming

logger = logging.getLogger("otel_agents")

# OTLP Span.SpanKind (1..5) ↔ the SDK's SpanKind.
_KINDS = {1: SpanKind.INTERNAL, 2: SpanKind.SERVER, 3: SpanKind.CLIENT, 4: SpanKind.PRODUCER, 5: SpanKind.CONSUMER}
_INTERNAL = SpanKind.INTERNAL  # read once: an enum member read off its class goes through EnumType's __getattr__
_FLAG_PARENT_REMOTE = 0x200  # SpanFlags: CONTEXT_HAS_IS_REMOTE_MASK is 0x100, CONTEXT_IS_REMOTE_MASK 0x200
_FLAG_HAS_IS_REMOTE = 0x100
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


# --- writing --------------------------------------------------------------------

def to_otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` in the OTLP JSON encoding (a JSON-ready dict).

    A string that is not valid Unicode (a lone surrogate: an undecodable file name, broken
    bytes, in a span made outside our span layer) cannot be UTF-8, which protobuf and JSON
    need: that one value is written with the surrogate escaped (``\\udcff``, as the span layer
    does), and the rest of the span and of the batch is written as is."""
    spans = [_utf8_safe_span(s) if _not_utf8(s) else s for s in spans]
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


def double_text(value: float) -> str:
    """The text OTLP/JSON gives non-finite double ``value`` (``nan``, ``inf``, ``-inf``), as :func:`to_otlp_json`
    writes it: ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (the protobuf JSON mapping of a ``double``; strict JSON
    has no literal for them). The one writing of a non-finite double in every JSON our exporters write."""
    return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"


def _bad_text(value: Any) -> bool:
    if type(value) is str:
        if value.isascii():
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, (tuple, list)):
        return any(_bad_text(v) for v in value)
    return False


def _bad_attributes(attributes: Any) -> bool:
    return bool(attributes) and any(_bad_text(k) or _bad_text(v) for k, v in attributes.items())


def _not_utf8(span: ReadableSpan) -> bool:
    """Whether any string of the span (name, attributes, events, links, status, resource, scope)
    holds a lone surrogate. ``isascii`` first: the usual span costs a few C calls."""
    scope = span.instrumentation_scope
    return (_bad_text(span.name) or _bad_attributes(span.attributes)
            or any(_bad_text(e.name) or _bad_attributes(e.attributes) for e in span.events)
            or any(_bad_attributes(link.attributes) for link in span.links)
            or _bad_text(span.status.description or "")
            or (span.resource is not None and _bad_attributes(span.resource.attributes))
            or (scope is not None and (_bad_text(scope.name) or _bad_text(scope.version or ""))))


def _safe_value(value: Any) -> Any:
    if type(value) is str:
        return utf8_safe(value)
    if isinstance(value, (tuple, list)):
        return tuple(_safe_value(v) for v in value)
    return value


def _safe_attributes(attributes: Any) -> dict[str, Any]:
    return {utf8_safe(k): _safe_value(v) for k, v in (attributes or {}).items()}


def _utf8_safe_span(span: ReadableSpan) -> ReadableSpan:
    """A copy of ``span`` whose strings are valid UTF-8 (lone surrogates escaped)."""
    scope = span.instrumentation_scope
    resource = span.resource
    return ReadableSpan(
        name=utf8_safe(span.name), context=span.context, parent=span.parent,
        resource=Resource(_safe_attributes(resource.attributes), resource.schema_url) if resource else None,
        attributes=_safe_attributes(span.attributes),
        events=[Event(utf8_safe(e.name), _safe_attributes(e.attributes), e.timestamp) for e in span.events],
        links=[Link(link.context, _safe_attributes(link.attributes)) for link in span.links],
        kind=span.kind, start_time=span.start_time, end_time=span.end_time,
        status=Status(span.status.status_code, utf8_safe(span.status.description)
                      if span.status.description else None),
        instrumentation_scope=InstrumentationScope(utf8_safe(scope.name), utf8_safe(scope.version or "") or None,
                                                   scope.schema_url, scope.attributes) if scope else None,
    )


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
        """Append ``batch`` (log records) as one OTLP/JSON line: ``SUCCESS``, or ``FAILURE`` (logged) when it
        cannot be encoded or written; never raises."""
        if not batch:
            return LogRecordExportResult.SUCCESS
        try:
            line = strict_json(logs_to_otlp_json(batch))
            if not self._out.append(line):
                return LogRecordExportResult.FAILURE
        except Exception as exc:  # noqa: BLE001 - an exporter reports failure, it does not raise
            logger.warning("otel_agents: could not write log records to %s: %r", self.path, exc)
            return LogRecordExportResult.FAILURE
        return LogRecordExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered: ``True`` at once."""
        return True

    def shutdown(self) -> None:
        """Close the file; later exports fail."""
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
        OSError: the file cannot be opened for appending (its message names the path and where it came from:
            the argument or ``OTEL_AGENTS_TRACES_FILE``).

    Each :meth:`export` writes its line with one ``O_APPEND`` write and keeps
    nothing buffered, so a crash loses at most the batch being written, and
    threads and forked worker processes (gunicorn) can share one file: their
    lines never interleave (see :mod:`otel_agents.exporters._appender`).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None):
        from .presets import DEFAULT_TRACES_FILE, ENV_TRACES_FILE

        target, setting = file_setting(path, ENV_TRACES_FILE, DEFAULT_TRACES_FILE)
        with naming(setting, "spans"):  # IsADirectoryError, PermissionError...: same type, saying which setting
            self._out = JsonLinesAppender(target)
        self.path = self._out.path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Append ``spans`` as one OTLP/JSON line: ``SUCCESS``, or ``FAILURE`` (logged) when they cannot be
        encoded or written; never raises."""
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            line = strict_json(to_otlp_json(spans))  # orjson, the standard library's exact text
            if not self._out.append(line):
                return SpanExportResult.FAILURE
        except Exception as exc:  # noqa: BLE001 - an exporter reports failure, it does not raise
            logger.warning("otel_agents: could not write spans to %s: %r", self.path, exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered (every export is written when it returns): ``True`` at once."""
        return True  # nothing is buffered: every export is written when it returns

    def shutdown(self) -> None:
        """Close the file; later exports fail."""
        self._out.close()


# --- reading --------------------------------------------------------------------

@dataclass(frozen=True)
class MalformedLine:
    """A line of an OTLP/JSON file that could not be read (it was skipped), or whose bad spans were left out.

    Attributes:
        source: the file name (or ``"<stream>"``).
        line: its 1-based line number.
        message: what is wrong with it (for bad spans: the first problems, with their field paths).
        spans: spans left out of a line whose other spans were read; 0 when the whole line was skipped.
    """

    source: str
    line: int
    message: str
    spans: int = 0

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}"


MAX_VALUE_DEPTH = 64
"""Deepest nesting of an attribute value (``arrayValue``/``kvlistValue``) a line may hold."""
MAX_LINE_BYTES = 128 * 1024 * 1024
"""Longest line read (bytes); a longer line is reported and skipped without being held whole. A line is one
exporter batch: ours, 512 spans (the ``BatchSpanProcessor``'s default batch) whose content attributes are each cut
to 16,384 characters (``OTEL_AGENTS_MAX_CONTENT_LENGTH``), under ~100 MB even when every span carries its full
budget of messages, instructions and tool definitions (a benchmark batch is 0.85 MB); a Collector's ``file``
exporter, one received request, at most 20 MiB as protobuf (the OTLP specification's recommended receiver limit),
2-3 x that in OTLP/JSON. Holding more would cost several times as much again once parsed."""
READ_CHUNK_BYTES = 1024 * 1024
"""What one read takes of a line: the most memory a line over :data:`MAX_LINE_BYTES` holds while it is skipped."""
MAX_SKIPPED_BYTES = 8 * MAX_LINE_BYTES
"""Longest line skipped to its end (bytes); past this the rest of the input is not read (``/dev/zero`` has no
newline: reading it to the end would never stop)."""


def read_otlp_json(source: str | os.PathLike[str] | Iterable[str | bytes], *,
                   errors: list[MalformedLine] | None = None,
                   warnings: list[MalformedLine] | None = None) -> list[ReadableSpan]:
    """Read OTLP/JSON lines back into SDK ``ReadableSpan``s.

    Args:
        source: a file path, or an iterable of lines (``str`` or ``bytes``: an
            open file, ``sys.stdin``).
        errors: a list that receives one :class:`MalformedLine` per line that
            could not be read; when ``None``, each is logged as a WARNING.
        warnings: a list that receives one :class:`MalformedLine` per field dropped
            from a span that was kept (a malformed ``traceState``, a status code other
            than 0-2 read as unset, a span kind other than 0-5 read as internal); when ``None``,
            each is logged as a WARNING.

    Returns:
        The spans of every readable line, in file order (see :func:`iter_otlp_json`
        for what is read and what makes a line malformed).

    Raises:
        OSError: the file cannot be opened.
    """
    return [span for _, spans in iter_otlp_json(source, errors=errors, warnings=warnings) for span in spans]


def iter_otlp_json(source: str | os.PathLike[str] | Iterable[str | bytes], *,
                   errors: list[MalformedLine] | None = None,
                   warnings: list[MalformedLine] | None = None,
                   others: Callable[[int, dict[str, Any]], Any] | None = None,
                   make: Callable[..., Any] = ReadableSpan) -> Iterator[tuple[int, list[Any]]]:
    """Read OTLP/JSON lines one at a time: yields ``(line number, spans of that line)``.

    Memory holds one line at a time (so a caller that groups spans as they
    come, like ``otel-agents fold``, can stream a file of any size).

    Args:
        source: a file path, or an iterable of lines (``str`` or ``bytes``).
        errors: receives one :class:`MalformedLine` per skipped line; when
            ``None``, each is logged as a WARNING.
        warnings: receives one :class:`MalformedLine` per field dropped from a
            span that was kept: a ``traceState`` that is not a W3C ``tracestate``
            (``…spans[2].traceState: member 'x y' is not key=value …``), a
            ``status.code`` other than 0, 1, 2 (a proto3 enum is open: read as unset,
            ``…status.code: 7 is not a status code …``), a ``kind`` other than 0-5 (read as
            internal, ``…kind: 9 is not a span kind …``); when ``None``, each is logged as a WARNING.
        others: called with ``(line number, object)`` for each line that is a JSON object but no trace request
            (no ``resourceSpans``: an ECP envelope, a log record), which is otherwise passed over silently; so a
            reader of mixed files (``ecp serve --replay``) takes the other records with this same reading.
        make: makes each span from its decoded fields, called as ``ReadableSpan`` is, with positional
            arguments in its order (the default: ``ReadableSpan`` itself); ``otel-agents fold`` passes
            :meth:`~otel_agents.exporters.ecp._facts.FoldSpan.decoded`, which keeps only what the fold reads.

    A malformed line is skipped whole and the lines around it are kept: not
    UTF-8, invalid JSON (``NaN``/``Infinity`` literals included), nested deeper
    than the JSON decoder's limit, longer than :data:`MAX_LINE_BYTES` (read a chunk at a time, never held
    whole: ``a line of N bytes, over the …-byte limit``), not an object, ``resourceSpans`` not an array. A line
    still without its end after :data:`MAX_SKIPPED_BYTES` (``/dev/zero``) is reported and ends the reading. A span with a bad field (of the wrong
    type, an id that is not hex of the right length, an attribute value deeper
    than :data:`MAX_VALUE_DEPTH` or of two kinds, ``AnyValue`` being a oneof) is left out and the line's other spans are read,
    as an OTLP receiver's partial success does (a resource or scope that cannot be
    read leaves out its spans): one :class:`MalformedLine` per line names the first
    problems and counts the spans left out (``spans``); a line none of whose spans
    could be read is skipped whole.
    Blank lines and lines without ``resourceSpans`` (logs, metrics) yield
    nothing, silently; a UTF-8 byte-order mark at the start of the first line is
    ignored. A pretty-printed file (its first line a lone ``{`` or ``[``: ``jq .``) is read
    a JSON document at a time, each numbered by its first line. A file (or binary stream) that starts with gzip's magic number is
    decompressed as it is read; where its gzip stream is damaged or truncated,
    that line is reported and the rest of the file is not read. A page of Phoenix's span search (``GET
    /v1/projects/{project}/spans/otlpv1``: ``{"data": [span, ...], "next_cursor": ...}``,
    spans in the OTLP span shape with proto field names but no resource or scope
    around them) is read as the spans of one resource and scope, both empty.

    Raises:
        OSError: the file cannot be opened.

    Decoding follows the OTLP "JSON Protobuf Encoding" (lowerCamelCase field
    names; the proto names are accepted too): ids are hex; enums are integers
    (or their names); 64-bit integers decimal strings (or numbers); a
    ``doubleValue`` may be ``"NaN"``/``"Infinity"``/``"-Infinity"`` as in the
    protobuf JSON mapping; ``flags`` bit 0x200 marks a remote parent.
    Attribute values of type ``kvlistValue`` become JSON text and
    ``bytesValue`` base64 text (neither is a legal SDK attribute value).
    """
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        with open(name, "rb") as f:  # bytes: a line that is not UTF-8 is reported, not fatal
            yield from _read_lines(lines_of(f), name, errors, warnings, others, make)
        return
    name = getattr(source, "name", "<stream>")
    if isinstance(source, io.BufferedReader):  # a binary file or sys.stdin.buffer: gzip is seen here too
        source = lines_of(source)
    yield from _read_lines(source, name, errors, warnings, others, make)


class UnreadLine(bytes):
    """Stands for a line (or the rest of a file) that was not read: its bytes are the message saying why.
    Yielded by :func:`lines_of` in place of the line; a caller reports it with the line's number."""


_GZIP_MAGIC = b"\x1f\x8b"


def lines_of(f: Any) -> Iterator[bytes]:
    """The lines of a binary file or stream (``open(path, "rb")``, ``sys.stdin.buffer``), each with its
    ``\\n``, read a chunk at a time (:func:`_bounded_lines`: a line over :data:`MAX_LINE_BYTES` is an
    :class:`UnreadLine`, the lines around it are read); decompressed when it starts with gzip's magic number
    (``trace.jsonl.gz``: :func:`_gunzipped_lines`). The one line reader of every command that reads span or
    envelope files (``fold``, ``export``, ``annotate``, ``ecp serve --replay``)."""
    peek = getattr(f, "peek", None)
    if peek is not None and peek(2)[:2] == _GZIP_MAGIC:
        return _gunzipped_lines(f)
    return _bounded_lines(f)  # no extra generator layer


def _gunzipped_lines(f: Any) -> Iterator[bytes]:
    """The lines of a gzip-compressed file; where its stream turns out damaged or truncated (a writer killed
    mid-file), one :class:`UnreadLine` stands for the rest, so the lines before it are kept."""
    import gzip  # here: most files are not compressed

    try:
        yield from _bounded_lines(gzip.GzipFile(fileobj=f, mode="rb"))
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError; a truncated stream an EOFError
        yield UnreadLine(f"the gzip stream is damaged or truncated here, the rest of the file is not read: "
                         f"{exc}".encode())


def _bounded_lines(f: Any) -> Iterator[bytes]:
    """The lines of a binary file, read :data:`READ_CHUNK_BYTES` at a time: a line is held whole only up to
    :data:`MAX_LINE_BYTES`; past that its chunks are dropped as they are read, up to its end (then one
    :class:`UnreadLine` saying its length, and reading goes on with the next line) or up to
    :data:`MAX_SKIPPED_BYTES` (then one saying so, and the rest of the input is not read: an endless stream
    without a newline, ``/dev/zero``, ends here instead of running forever)."""
    while True:
        line = f.readline(READ_CHUNK_BYTES)
        if line[-1:] == b"\n" or len(line) < READ_CHUNK_BYTES:  # the usual case: one read (or the last line)
            if not line:
                return
            yield line
            continue
        pieces, size, ended = [line], len(line), False
        while not ended and size <= MAX_LINE_BYTES:
            piece = f.readline(READ_CHUNK_BYTES)
            size += len(piece)
            pieces.append(piece)
            ended = piece[-1:] == b"\n" or len(piece) < READ_CHUNK_BYTES  # its newline, or the end of input
        if size <= MAX_LINE_BYTES:
            yield b"".join(pieces)
            continue
        pieces.clear()  # over the limit: its text is not kept
        while not ended and size <= MAX_SKIPPED_BYTES:
            piece = f.readline(READ_CHUNK_BYTES)
            size += len(piece)
            ended = piece[-1:] == b"\n" or len(piece) < READ_CHUNK_BYTES
        if not ended:
            yield UnreadLine(f"no end of line after {size:,} bytes, far over the {MAX_LINE_BYTES:,}-byte limit "
                             "of a line: the rest of the input is not read".encode())
            return
        yield UnreadLine(f"a line of {size:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit of a line: "
                         "skipped without being read".encode())


def _read_lines(lines: Iterable[str | bytes], name: str, errors: list[MalformedLine] | None,
                warnings: list[MalformedLine] | None = None,
                others: Callable[[int, dict[str, Any]], Any] | None = None,
                make: Callable[..., Any] = ReadableSpan) -> Iterator[tuple[int, list[Any]]]:
    notes: list[str] = []
    rejected: list[tuple[int, str]] = []
    for number, text, before in _numbered(lines):
        try:
            if type(text) is UnreadLine:
                raise ValueError(text.decode())
            if number == 1:
                text = without_bom(text)
            if not text or text.isspace():  # blank (isspace: no copy of a long line, as strip() would make)
                continue
            spans = _parse_line(text, notes, rejected, None if others is None else functools.partial(others, number),
                                make)
            if rejected:  # bad spans (or resources, scopes) left out, as an OTLP receiver does
                message = problems_message([m for _, m in rejected])
                left_out = sum(n for n, _ in rejected)
                rejected.clear()
                if not spans:
                    raise ValueError(message)
                problem = MalformedLine(str(name), number, f"{left_out} span(s) left out, the line's "
                                        f"{len(spans)} other(s) read: {message}", left_out)
                if errors is not None:
                    errors.append(problem)
                else:
                    logger.warning("otel_agents: %s", problem)
            for note in notes:
                dropped = MalformedLine(str(name), number, note)
                if warnings is not None:
                    warnings.append(dropped)
                else:
                    logger.warning("otel_agents: %s", dropped)
            notes.clear()
        except ValueError as exc:
            notes.clear()
            message = str(exc)
            if before:  # a pretty-printed document after the first: orjson counts its lines from the document's
                message = _DOCUMENT_LINE.sub(lambda m: f"line {int(m.group(1)) + before} column", message)
            problem = MalformedLine(str(name), number, message)
            if errors is not None:
                errors.append(problem)
            else:
                logger.warning("otel_agents: skipped %s", problem)
            continue
        if spans:
            yield number, spans


_OPENERS = frozenset({"{", "[", b"{", b"["})
_CLOSERS = frozenset({"}", "]", b"}", b"]"})


def _numbered(lines: Iterable[str | bytes]) -> Iterator[tuple[int, str | bytes, int]]:
    """Each line with its number (and 0), except in a pretty-printed file (``jq .``, ``json.dumps(indent=2)``: its
    first line a lone ``{`` or ``[``, which no line of a JSON-lines file is). There each document, from its lone
    opening bracket to its closing one at the start of a line (a nested one is indented), is one item numbered by its
    first line, with the number of lines before it, so ``jq . traces.jsonl``, a document per line of the JSON-lines
    file, is read document by document. A problem in a document is reported once, orjson's message giving its line
    in the file (its line in the document moved by the lines before it); each is held up to
    :data:`MAX_LINE_BYTES`, as a line is."""
    numbered = enumerate(lines, start=1)
    pretty = False
    for number, text in numbered:
        if type(text) is UnreadLine or not (pretty or number == 1) or without_bom(text).strip() not in _OPENERS:
            yield number, text, 0
            continue
        pretty = True
        pieces, size = [text], len(text)
        for _, more in numbered:
            size += len(more)
            if type(more) is UnreadLine or size > MAX_LINE_BYTES:
                yield number, UnreadLine(f"a JSON document over several lines (pretty-printed) of more than "
                                         f"{MAX_LINE_BYTES:,} bytes: not read".encode() if type(more) is not UnreadLine
                                         else bytes(more)), 0
                return
            pieces.append(more)
            if more.rstrip() in _CLOSERS:  # at the start of its line: this document's end
                break
        yield number, (b"" if isinstance(text, bytes) else "").join(pieces), number - 1  # type: ignore[attr-defined]


_DOCUMENT_LINE = re.compile(r"line (\d+) column")


def load_json(text: str | bytes) -> Any:
    """One OTLP/JSON document (a line of a file, a request body) parsed as strict JSON: no ``NaN``/``Infinity``,
    nesting at most 1024 deep. A lone surrogate escape (``"\\ud800"``, which JavaScript's ``JSON.stringify``
    writes) is valid JSON no UTF-8 string can hold: it is read as the text ``\\ud800``, as our exporter writes it.

    Raises:
        ValueError: not UTF-8 (the byte named) or not JSON (orjson's message: position and problem; for a ``NaN``,
            ``Infinity`` or a number beyond a double, the field's path instead: :func:`~.ecp._json.non_finite_problem`;
            for a byte-order mark, which the caller removes at the start of an input only,
            :data:`~otel_agents._spans.encoding.BOM_NOT_AT_START`).
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if isinstance(text, bytes):  # orjson validates UTF-8 but says only "str is not valid UTF-8": name the byte
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as bad:
                raise ValueError(f"not UTF-8 text: {bad.reason} at byte {bad.start}") from None
        if "surrogate" not in str(exc):
            problem = BOM_NOT_AT_START if starts_with_bom(text) else None
            if problem is None and ("NaN" in text or "Infinity" in text or "infinity" in str(exc)):  # name the field
                from .ecp._json import non_finite_problem

                problem = non_finite_problem(text)
            raise ValueError(f"invalid JSON: {problem or exc}") from None
        from .ecp._json import strict_decode, writable

        try:  # the standard library reads lone surrogates; orjson has checked all else up to the first one
            return writable(strict_decode(text))
        except (ValueError, RecursionError) as second:
            raise ValueError(f"invalid JSON: {exc if isinstance(second, RecursionError) else second}") from None


MAX_MESSAGES = 5
"""Problems named in one message about a request or line with bad spans (:func:`problems_message`)."""


def problems_message(problems: list[str]) -> str:
    """The first :data:`MAX_MESSAGES` problems, and how many more."""
    shown = problems[:MAX_MESSAGES]
    more = len(problems) - len(shown)
    return "; ".join(shown) + (f"; and {more} more problem(s)" if more else "")


def _parse_line(text: str | bytes, notes: list[str] | None = None,
                rejected: list[tuple[int, str]] | None = None,
                other: Callable[[dict[str, Any]], Any] | None = None,
                make: Callable[..., Any] = ReadableSpan) -> list[Any]:
    """The spans of one line (each made by ``make``: see :func:`iter_otlp_json`); with ``rejected``, bad spans
    are left out and reported there (see :meth:`_Decoder.request`), else the first bad field raises
    ``ValueError``. A JSON object that is no trace request goes to ``other`` (when given)."""
    spans = _typed_spans(text, make)
    if spans is not None:
        return spans
    data = load_json(text)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object (an ExportTraceServiceRequest), got {type(data).__name__}")
    if "resourceSpans" not in data and "resource_spans" not in data:
        if "next_cursor" in data and isinstance(data.get("data"), list):  # a Phoenix span-search page
            data = {"resourceSpans": [{"scopeSpans": [{"spans": data["data"]}]}]}
        else:
            if other is not None:
                other(data)
            return []
    decoder = _Decoder(make)
    try:
        spans = decoder.request(data, rejected)
        if notes is not None:
            notes.extend(decoder.notes)
        return spans
    except _BadId:
        raise
    except ValueError as exc:
        raise ValueError(f"not an OTLP trace request: {exc}") from None


class _BadId(ValueError):
    """An id that is not hex of the right length (reported as is, like before the decoder existed)."""


# W3C Trace Context, "tracestate" header: a key is a simple key (lcalpha, then up to 255 of lcalpha,
# digits and _-*/) or tenant@system (1+240 and 1+13 of them); a value is up to 256 printable ASCII
# characters other than "," and "=", not ending in a space. At most 32 members.
_TRACESTATE_KEY = re.compile(r"[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13}")
_TRACESTATE_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")
_TRACESTATE_MAX_MEMBERS = 32
_STATUS = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_SPAN_KINDS = {"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
               "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}
_SNAKE = {"resourceSpans": "resource_spans", "scopeSpans": "scope_spans", "traceId": "trace_id",
          "spanId": "span_id", "parentSpanId": "parent_span_id", "traceState": "trace_state",
          "startTimeUnixNano": "start_time_unix_nano", "endTimeUnixNano": "end_time_unix_nano",
          "timeUnixNano": "time_unix_nano", "schemaUrl": "schema_url", "stringValue": "string_value",
          "boolValue": "bool_value", "intValue": "int_value", "doubleValue": "double_value",
          "arrayValue": "array_value", "kvlistValue": "kvlist_value", "bytesValue": "bytes_value"}
_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_OK, _UNSET = Status(StatusCode.OK), Status(StatusCode.UNSET)  # immutable: shared by the spans read


class _Decoder:
    """Decodes one ``ExportTraceServiceRequest`` (a parsed JSON object) into ``ReadableSpan``s.

    Every field is type-checked; the first bad one raises ``ValueError`` naming its path
    (``resourceSpans[0].scopeSpans[1].spans[2].startTimeUnixNano: ...``). A field that can be
    dropped without losing the span (a malformed ``traceState``, an unknown status code or span kind) is dropped and noted in
    :attr:`notes`, with its path. ``make`` makes each span, called as ``ReadableSpan`` is (positional
    arguments in its order): ``ReadableSpan`` itself by default.
    """

    def __init__(self, make: Callable[..., Any] = ReadableSpan) -> None:
        self.notes: list[str] = []
        self.make = make
        self._trace_ids: dict[str, int] = {}  # traceId text -> id, of the usual spans read so far

    def request(self, data: dict[str, Any], rejected: list[tuple[int, str]] | None = None) -> list[Any]:
        """The spans of ``data``. Without ``rejected``, the first bad field raises ``ValueError``;
        with it, a bad span (or resource or scope: all of its spans) is left out and reported there
        as ``(spans left out, message)``, and the rest are read (an OTLP receiver's partial success)."""
        out: list[Any] = []
        for i, rs in enumerate(self._list(data, "resourceSpans", "")):
            where = f"resourceSpans[{i}]"
            try:
                rs = self._obj(rs, where)
                res = self._obj(self._get(rs, "resource"), f"{where}.resource")
                resource = Resource(self._attributes(res, f"{where}.resource"),
                                    self._str(rs, "schemaUrl", where) or None)
                scopes = self._list(rs, "scopeSpans", where)
            except ValueError as exc:
                if rejected is None:
                    raise
                rejected.append((_count_spans(rs), str(exc)))
                continue
            for j, ss in enumerate(scopes):
                swhere = f"{where}.scopeSpans[{j}]"
                try:
                    ss = self._obj(ss, swhere)
                    sc = self._obj(self._get(ss, "scope"), f"{swhere}.scope")
                    scope = InstrumentationScope(self._str(sc, "name", f"{swhere}.scope"),
                                                 self._str(sc, "version", f"{swhere}.scope"),
                                                 self._str(ss, "schemaUrl", swhere) or None,
                                                 self._attributes(sc, f"{swhere}.scope") or None)
                    spans = self._list(ss, "spans", swhere)
                except ValueError as exc:
                    if rejected is None:
                        raise
                    rejected.append((_count_spans({"scopeSpans": [ss]}), str(exc)))
                    continue
                for k, span in enumerate(spans):
                    try:
                        read = self._usual_span(span, resource, scope) if type(span) is dict else None
                        if read is None:  # another form, or a bad field: the checked path (it names the field)
                            span_where = f"{swhere}.spans[{k}]"
                            read = self._span(self._obj(span, span_where), resource, scope, span_where)
                        out.append(read)
                    except ValueError as exc:
                        if rejected is None:
                            raise
                        rejected.append((1, str(exc)))
        return out

    def _span(self, s: dict[str, Any], resource: Resource, scope: InstrumentationScope, where: str) -> ReadableSpan:
        """A span read field by field, each checked (the first bad one raises ``ValueError`` naming it)."""
        trace_id = self._id(s, "traceId", 16, where)
        span_id = self._id(s, "spanId", 8, where)
        name = self._str(s, "name", where)
        if not trace_id or not span_id:
            raise ValueError(f"{where}: span {excerpt(name)} has no traceId or spanId")
        flags = self._int(s, "flags", where, 32)
        header = self._str(s, "traceState", where)
        state = self._trace_state(header, f"{where}.traceState") if header else None
        context = SpanContext(trace_id, span_id, False, _TRACE_FLAGS[flags & 0xFF], state)  # 0: "sampled"
        parent_id = self._id(s, "parentSpanId", 8, where)
        parent = SpanContext(trace_id, parent_id, is_remote=bool(flags & _FLAG_PARENT_REMOTE)) if parent_id else None
        st = self._obj(self._get(s, "status"), f"{where}.status")
        code = self._enum(st, "code", _STATUS, f"{where}.status")
        message = self._str(st, "message", f"{where}.status")
        if not 0 <= code <= 2:  # a proto3 enum is open: legal on the wire, but no StatusCode the SDK has
            self.notes.append(f"{where}.status.code: {code} is not a status code (0 unset, 1 ok, 2 error); the "
                              f"status was read as unset{' (its message dropped)' if message else ''}, the span kept")
        status = Status(StatusCode.ERROR, message or None) if code == 2 else _OK if code == 1 else _UNSET
        events = self._events(s, where)
        links = self._links(s, where)
        attributes = self._attributes(s, where)
        number = self._enum(s, "kind", _SPAN_KINDS, where)
        if not 0 <= number <= 5:  # open, as the status code (0, unspecified, is read as internal as the SDK does)
            self.notes.append(f"{where}.kind: {number} is not a span kind (1 internal, 2 server, 3 client, 4 producer, "
                              "5 consumer); read as internal, the span kept")
        kind = _KINDS.get(number, _INTERNAL)
        start = self._int(s, "startTimeUnixNano", where, 64) or None
        end = self._int(s, "endTimeUnixNano", where, 64) or None
        return self.make(name, context, parent, resource, attributes, events, links, kind, None, status, start, end,
                         scope)

    def _usual_span(self, s: dict[str, Any], resource: Resource,
                    scope: InstrumentationScope) -> ReadableSpan | None:
        """:meth:`_span` for a span whose fields all have their usual form (what OTLP/JSON writers
        write: camelCase names, hex ids, numbers as JSON numbers or decimal text, no ``traceState``,
        no links, attributes and events in :func:`_usual_attributes`' forms), without the per-field
        checks' calls; ``None`` when a field has another form (or is bad), so that :meth:`_span`
        reads it. Either way the result is the same."""
        if not s.keys() <= _USUAL_SPAN_FIELDS:  # a snake_case name (or an unknown one): the checked path
            return None
        get = s.get
        name, flags, kind, header = get("name"), get("flags", 0), get("kind", 0), get("traceState")
        trace_id, span_id, parent_id = get("traceId"), get("spanId"), get("parentSpanId")
        start, end, st, links = get("startTimeUnixNano"), get("endTimeUnixNano"), get("status"), get("links")
        if not (type(name) is str and type(flags) is int and 0 <= flags <= 0xFFFFFFFF and type(kind) is int
                and 0 <= kind <= 5 and (header is None or header == "") and _usual_nanos(start) and _usual_nanos(end)
                and (links is None or links == [])):
            return None
        traces = self._trace_ids
        try:  # hex text (bytes.fromhex skips spaces between bytes: the lengths below catch them)
            trace = traces.get(trace_id)  # the spans of a trace share its id: read once a request
            if trace is None:
                raw = bytes.fromhex(trace_id)
                if len(raw) != 16:
                    return None
                trace = traces[trace_id] = int.from_bytes(raw, "big")
            span = bytes.fromhex(span_id)
            parent = None if parent_id is None or parent_id == "" else bytes.fromhex(parent_id)
        except (TypeError, ValueError):  # not text (or not hashable), or not hex
            return None
        if len(span) != 8 or (parent is not None and len(parent) != 8):
            return None
        trace_id, span_id = trace, int.from_bytes(span, "big")
        parent_id = int.from_bytes(parent, "big") if parent else 0
        if not trace_id or not span_id:
            return None
        if st is None:
            st = {}
        elif type(st) is not dict:
            return None
        code, message = st.get("code", 0), st.get("message", "")
        if type(code) is not int or not 0 <= code <= 2 or type(message) is not str:
            return None
        attributes = _usual_attributes(get("attributes"))
        events = _usual_events(get("events"))
        if attributes is None or events is None:
            return None
        # positional arguments: the SDK's keyword matching costs twice the rest of the call
        return self.make(
            name, SpanContext(trace_id, span_id, False, _TRACE_FLAGS[flags & 0xFF]),
            SpanContext(trace_id, parent_id, bool(flags & _FLAG_PARENT_REMOTE)) if parent_id else None,
            resource, attributes, events, [], _KINDS.get(kind, _INTERNAL), None,
            Status(StatusCode.ERROR, message or None) if code == 2 else _OK if code == 1 else _UNSET,
            int(start) or None, int(end) or None, scope)

    def _events(self, s: dict[str, Any], where: str) -> list[Event]:
        events = []
        for n, e in enumerate(self._list(s, "events", where)):
            e = self._obj(e, f"{where}.events[{n}]")
            events.append(Event(self._str(e, "name", f"{where}.events[{n}]"),
                                self._attributes(e, f"{where}.events[{n}]"),
                                timestamp=self._int(e, "timeUnixNano", f"{where}.events[{n}]", 64) or None))
        return events

    def _links(self, s: dict[str, Any], where: str) -> list[Link]:
        links = []
        for n, link in enumerate(self._list(s, "links", where)):
            lw = f"{where}.links[{n}]"
            link = self._obj(link, lw)
            flags = self._int(link, "flags", lw, 32)
            header = self._str(link, "traceState", lw)
            # SpanFlags: whether the linked context was remote (0x200) is known when 0x100 is set (the SDK's
            # encoder always sets it); without it, remote, as a link usually points to another process's span
            remote = bool(flags & _FLAG_PARENT_REMOTE) if flags & _FLAG_HAS_IS_REMOTE else True
            links.append(Link(SpanContext(self._id(link, "traceId", 16, lw), self._id(link, "spanId", 8, lw),
                                          remote, _TRACE_FLAGS[flags & 0xFF],
                                          self._trace_state(header, f"{lw}.traceState") if header else None),
                              self._attributes(link, lw)))
        return links

    def _trace_state(self, header: str, where: str) -> TraceState | None:
        """The W3C ``tracestate`` header text as a ``TraceState``; ``None`` (and a note naming the
        field and the bad member) when it is malformed, where the SDK's parser would drop it with
        a log line naming neither."""
        pairs: dict[str, str] = {}
        for member in header.split(","):
            member = member.strip(" \t")  # optional whitespace (RFC 9110, 5.6.3); empty members are allowed
            if not member:
                continue
            key, eq, value = member.partition("=")
            if not eq or not _TRACESTATE_KEY.fullmatch(key) or not _TRACESTATE_VALUE.fullmatch(value):
                problem = f"member {excerpt(member)} is not key=value in the W3C tracestate format"
            elif key in pairs:
                problem = f"key {excerpt(key)} appears twice"
            else:
                pairs[key] = value
                continue
            self.notes.append(f"{where}: {problem}; the trace state was dropped, the span kept")
            return None
        if len(pairs) > _TRACESTATE_MAX_MEMBERS:
            self.notes.append(f"{where}: {len(pairs)} members, more than the W3C limit of "
                              f"{_TRACESTATE_MAX_MEMBERS}; the trace state was dropped, the span kept")
            return None
        return TraceState(list(pairs.items()))

    # -- fields ----------------------------------------------------------------------
    @staticmethod
    def _get(obj: dict[str, Any], name: str) -> Any:
        value = obj.get(name)
        if value is None:
            snake = _SNAKE.get(name)
            if snake is not None:
                value = obj.get(snake)
        return value

    @staticmethod
    def _obj(value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
        return value

    def _list(self, obj: dict[str, Any], name: str, where: str) -> list[Any]:
        value = self._get(obj, name)
        if value is None:
            return []
        if not isinstance(value, list):
            raise ValueError(f"{_at(where, name)}: expected an array, got {type(value).__name__}")
        return value

    def _str(self, obj: dict[str, Any], name: str, where: str) -> str:
        value = self._get(obj, name)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise ValueError(f"{_at(where, name)}: expected a string, got {type(value).__name__}")
        return value

    def _int(self, obj: dict[str, Any], name: str, where: str, bits: int) -> int:
        value = self._get(obj, name)
        if value is None:
            return 0
        number = _integer(value)
        if number is None or not 0 <= number < 1 << bits:
            raise ValueError(f"{_at(where, name)}: expected an unsigned {bits}-bit integer, got {excerpt(value)}")
        return number

    def _enum(self, obj: dict[str, Any], name: str, names: dict[str, int], where: str) -> int:
        value = self._get(obj, name)
        if value is None:
            return 0
        if isinstance(value, str) and value in names:
            return names[value]
        if type(value) is int:
            return value
        raise ValueError(f"{_at(where, name)}: expected an enum number or name, got {excerpt(value)}")

    def _id(self, obj: dict[str, Any], name: str, size: int, where: str) -> int:
        value = self._get(obj, name)
        if value in (None, ""):
            return 0
        if not isinstance(value, str):
            raise _BadId(f"{_at(where, name)}: expected a hex string, got {excerpt(value)}")
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise _BadId(f"{_at(where, name)}: {excerpt(value)} is not hex") from None
        if len(raw) != size:
            raise _BadId(f"{_at(where, name)}: {excerpt(value)} is not {size * 2} hex digits")
        return int.from_bytes(raw, "big")

    # -- attribute values ----------------------------------------------------------------
    def _attributes(self, obj: dict[str, Any], where: str) -> dict[str, Any]:
        attributes = self._list(obj, "attributes", where)
        usual = _usual_attributes(attributes)
        if usual is not None:
            return usual
        out: dict[str, Any] = {}
        for n, kv in enumerate(attributes):
            kw = f"{where}.attributes[{n}]"
            kv = self._obj(kv, kw)
            key = self._str(kv, "key", kw)
            value = _attribute_value(self._value(kv.get("value"), f"{kw}.value", 0, is_secret_key(key)))
            if value is not None:
                out[key] = value
        return out

    def _value(self, v: Any, where: str, depth: int, secret: bool = False) -> Any:
        """An ``AnyValue`` as plain data: scalars, lists, dicts; bytes as base64 text. ``secret``: it is (inside)
        the value of a secret-named key, never quoted in an error."""
        if v is None:
            return None
        if not isinstance(v, dict):
            raise ValueError(f"{where}: expected an AnyValue object, got {type(v).__name__}")
        if depth >= MAX_VALUE_DEPTH:
            raise ValueError(f"{where}: attribute value nested deeper than {MAX_VALUE_DEPTH} levels")
        kinds = [name for name, value in v.items()
                 if value is not None and _CAMEL.get(name, name) in _ANY_VALUE_FIELDS]
        if len(kinds) > 1:  # a oneof: which one was meant is unknown (protobuf's JSON parsers refuse it too)
            raise ValueError(f"{where}: an AnyValue holds one value, got {len(kinds)}: {', '.join(kinds)}")
        for name, value in v.items():
            if value is None:  # proto3 JSON mapping: null means the field's default (Phoenix writes every field)
                continue
            name = _CAMEL.get(name, name)
            if name == "stringValue" and isinstance(value, str):
                return value
            if name == "intValue":
                number = _integer(value)
                if number is None or not -(1 << 63) <= number < 1 << 63:
                    raise ValueError(f"{where}.intValue: expected a signed 64-bit integer, got {_quoted(value, secret)}")
                return number
            if name == "boolValue" and isinstance(value, bool):
                return value
            if name == "doubleValue":
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    return float(value)
                if isinstance(value, str) and value in _DOUBLES:  # an array or object is not hashable
                    return _DOUBLES[value]
            elif name == "arrayValue" and isinstance(value, dict):
                return [self._value(x, f"{where}.arrayValue.values[{i}]", depth + 1, secret)
                        for i, x in enumerate(self._list(value, "values", f"{where}.arrayValue"))]
            elif name == "kvlistValue" and isinstance(value, dict):
                out = {}
                for i, kv in enumerate(self._list(value, "values", f"{where}.kvlistValue")):
                    kw = f"{where}.kvlistValue.values[{i}]"
                    kv = self._obj(kv, kw)
                    key = self._str(kv, "key", kw)
                    out[key] = self._value(kv.get("value"), f"{kw}.value", depth + 1, secret or is_secret_key(key))
                return out
            elif name == "bytesValue" and isinstance(value, str):
                try:
                    base64.b64decode(value, validate=True)
                except ValueError:
                    raise ValueError(f"{where}.bytesValue: not base64") from None
                return value
            if name in _ANY_VALUE_FIELDS:
                raise ValueError(f"{_at(where, name)}: wrong type {type(value).__name__}")
        return None


def _quoted(value: Any, secret: bool) -> str:
    """A bad attribute value as an error may show it: :func:`excerpt` (secrets redacted), or only its type when
    content capture is off, since an attribute's value may be content (``input.value``: what the user said),
    and these errors go to logs, standard error and an OTLP sender's ``partial_success``."""
    from .._spans.settings import Settings

    return excerpt(value, secret=secret) if Settings().content_enabled() else f"a {type(value).__name__}"


_USUAL_SPAN_FIELDS = frozenset({"traceId", "spanId", "parentSpanId", "traceState", "name", "kind", "flags",
                                "startTimeUnixNano", "endTimeUnixNano", "attributes", "droppedAttributesCount",
                                "events", "droppedEventsCount", "links", "droppedLinksCount", "status"})


_USUAL_EVENT_FIELDS = frozenset({"timeUnixNano", "name", "attributes", "droppedAttributesCount"})
# TraceFlags by the low byte of a span's ``flags``. Writers built on the SDK's OTLP encoder leave those
# W3C trace-flag bits at 0; a span that was exported was sampled, so 0 reads as "sampled".
_TRACE_FLAGS = tuple(TraceFlags(bits or TraceFlags.SAMPLED) for bits in range(256))


def _usual_attributes(attributes: Any) -> dict[str, Any] | None:
    """A list of attributes (``None``: none) read as the checked path reads it, when every one has its
    usual form ``{"key": K, "value": {"stringValue"|"intValue"|"boolValue": V}}``, a float
    ``doubleValue`` or an ``arrayValue`` of strings (most of a file's attributes); ``None`` for any other
    form, bad ones included, so that the checked path reads the list (and names a bad field)."""
    if attributes is None:
        return {}
    if type(attributes) is not list:
        return None
    out: dict[str, Any] = {}
    try:  # an element that is not an object, or without "key" or "value": KeyError or TypeError
        for kv in attributes:
            key, v = kv["key"], kv["value"]
            s = v.get("stringValue")  # a value that is not an object has no get: AttributeError
            if type(s) is str and type(key) is str and len(v) == 1:  # the usual case, in three tests, not four
                out[key] = s
                continue
            if type(key) is not str or type(v) is not dict or len(v) != 1:
                return None
            # v's one field is not a string: any other form of it falls through to ``return None``
            s = v.get("intValue")
            if type(s) is str and len(s) <= 18 and s.isascii() and s.isdigit():  # 0 <= s < 2**63
                out[key] = int(s)
                continue
            s = v.get("boolValue")
            if type(s) is bool:
                out[key] = s
                continue
            s = v.get("doubleValue")
            if type(s) is float:  # an int here is read by the checked path (float() of it)
                out[key] = s
                continue
            s = v.get("arrayValue")
            if type(s) is dict and len(s) == 1:
                s = _usual_strings(s.get("values"))
                if s is not None:
                    out[key] = s
                    continue
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    return out


def _usual_events(events: Any) -> list[Event] | None:
    """A span's ``events`` (``None``: none) read as the checked path reads them, when every one has its
    usual form (a name, a time as decimal text, usual attributes, camelCase names); ``None`` otherwise."""
    if events is None:
        return []
    if type(events) is not list:
        return None
    out = []
    for e in events:
        if type(e) is not dict or not e.keys() <= _USUAL_EVENT_FIELDS:
            return None
        name, time, attributes = e.get("name"), e.get("timeUnixNano"), _usual_attributes(e.get("attributes"))
        if type(name) is not str or not _usual_nanos(time) or attributes is None:
            return None
        out.append(Event(name, attributes, int(time) or None))
    return out


def _usual_nanos(value: Any) -> bool:
    """A timestamp in its usual form: decimal text of at most 19 ASCII digits (so below 2**64), or an
    ``int`` in ``[0, 2**64)`` (a JSON number; what the protobuf receiver hands on)."""
    if type(value) is int:
        return 0 <= value < _2_64
    return type(value) is str and len(value) <= 19 and value.isascii() and value.isdigit()


_2_64 = 1 << 64


def _usual_strings(values: Any) -> tuple[str, ...] | None:
    """An ``arrayValue``'s ``values`` when every one is ``{"stringValue": text}``, as the checked path reads
    them (a homogeneous array: a tuple); ``None`` for any other form."""
    if type(values) is not list:
        return None
    out = []
    for x in values:
        if type(x) is not dict or len(x) != 1:
            return None
        text = x.get("stringValue")
        if type(text) is not str:
            return None
        out.append(text)
    return tuple(out)


# -- the typed fast path -----------------------------------------------------------------------------
# A line whose every field has its usual form (what _usual_span reads) is parsed and type-checked in one
# pass by msgspec (https://jcristharif.com/msgspec/) into these Structs, then made into spans without
# a dict look-up a field. Any other line (another form, a bad field, not JSON) fails here and is read by
# the checked path above, which names the problem: both read a usual line to the same spans. Fields are
# camelCase only, never null, and no field is unknown (a snake_case or unknown name goes the checked way).
class _Typed(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An OTLP/JSON message of the usual form (its subclasses inherit this configuration). gc=False: a decoded
    struct holds no reference cycle, so the collector need not track a line's thousands of them."""


class _StringValue(_Typed):
    stringValue: str


class _ArrayValue(_Typed):
    values: list[_StringValue]


class _AnyValue(_Typed):
    stringValue: str | msgspec.UnsetType = msgspec.UNSET
    intValue: int | str | msgspec.UnsetType = msgspec.UNSET
    boolValue: bool | msgspec.UnsetType = msgspec.UNSET
    doubleValue: float | msgspec.UnsetType = msgspec.UNSET
    arrayValue: _ArrayValue | msgspec.UnsetType = msgspec.UNSET


class _KeyValue(_Typed):
    key: str
    value: _AnyValue


class _Status(_Typed):
    code: int = 0
    message: str = ""


class _Event(_Typed):
    timeUnixNano: int | str
    name: str
    attributes: list[_KeyValue] = []
    droppedAttributesCount: int | str = 0


class _Span(_Typed):
    traceId: str
    spanId: str
    name: str
    startTimeUnixNano: int | str
    endTimeUnixNano: int | str
    parentSpanId: str = ""
    traceState: str = ""
    kind: int = 0
    flags: int = 0
    attributes: list[_KeyValue] = []
    droppedAttributesCount: int | str = 0
    events: list[_Event] = []
    droppedEventsCount: int | str = 0
    links: list[msgspec.Raw] = []
    droppedLinksCount: int | str = 0
    status: _Status | None = None


class _Scope(_Typed):
    name: str = ""
    version: str = ""
    attributes: list[_KeyValue] = []
    droppedAttributesCount: int | str = 0


class _ScopeSpans(_Typed):
    scope: _Scope | None = None
    spans: list[_Span] = []
    schemaUrl: str = ""


class _Resource(_Typed):
    attributes: list[_KeyValue] = []
    droppedAttributesCount: int | str = 0


class _ResourceSpans(_Typed):
    resource: _Resource | None = None
    scopeSpans: list[_ScopeSpans] = []
    schemaUrl: str = ""


class _Request(_Typed):
    resourceSpans: list[_ResourceSpans]


_decode_request = msgspec.json.Decoder(_Request).decode
# UnicodeError: a str line holding a lone surrogate (which the checked path reads as its escape), or bytes
# that are not UTF-8 (msgspec 0.18 and earlier raise UnicodeDecodeError, 0.23 its DecodeError)
_UNUSUAL = (msgspec.DecodeError, msgspec.ValidationError, UnicodeError)
_NO_SCOPE = _Scope()
_NO_RESOURCE = _Resource()


class _Unusual(Exception):
    """A field of a typed line that the checked path reads otherwise (or rejects): the line goes that way."""


def _typed_spans(text: str | bytes, make: Callable[..., Any]) -> list[Any] | None:
    """The spans of a line in the usual form (see above), as :meth:`_Decoder.request` reads it; ``None`` for
    any other line, which the checked path then reads."""
    try:
        request = _decode_request(text)
    except _UNUSUAL:
        return None
    try:
        return _typed_request(request, make)
    except _Unusual:
        return None


def _typed_request(request: _Request, make: Callable[..., Any]) -> list[Any]:
    """:meth:`_Decoder.request` with :meth:`_Decoder._usual_span`'s reading of each span, on a typed line;
    ``_Unusual`` at the first field the checked path would read otherwise (or reject)."""
    out: list[Any] = []
    append = out.append
    traces: dict[str, int] = {}
    fromhex, from_bytes, context, flag_of, kinds = bytes.fromhex, int.from_bytes, _context, _TRACE_FLAGS, _KINDS
    attributes_of = _typed_attributes
    for rs in request.resourceSpans:
        res = rs.resource or _NO_RESOURCE
        resource = Resource(attributes_of(res.attributes), rs.schemaUrl or None)
        for ss in rs.scopeSpans:
            sc = ss.scope or _NO_SCOPE
            scope = InstrumentationScope(sc.name, sc.version, ss.schemaUrl or None,
                                         attributes_of(sc.attributes) or None)
            for s in ss.spans:
                flags, kind, start, end = s.flags, s.kind, s.startTimeUnixNano, s.endTimeUnixNano
                # times as _usual_nanos reads them (inline: a call each costs more than the test)
                if type(start) is str:
                    if not (len(start) <= 19 and start.isascii() and start.isdigit()):
                        raise _Unusual
                elif not 0 <= start < _2_64:
                    raise _Unusual
                if type(end) is str:
                    if not (len(end) <= 19 and end.isascii() and end.isdigit()):
                        raise _Unusual
                elif not 0 <= end < _2_64:
                    raise _Unusual
                if not (0 <= flags <= 0xFFFFFFFF and 0 <= kind <= 5) or s.traceState or s.links:
                    raise _Unusual
                trace_id, parent_id = s.traceId, s.parentSpanId
                try:  # hex text (bytes.fromhex skips spaces between bytes: the lengths below catch them)
                    trace = traces.get(trace_id)  # the spans of a trace share its id: read once a request
                    if trace is None:
                        raw = fromhex(trace_id)
                        if len(raw) != 16:
                            raise _Unusual
                        trace = traces[trace_id] = from_bytes(raw, "big")
                    raw = fromhex(s.spanId)
                    parent = fromhex(parent_id) if parent_id else None
                except ValueError:
                    raise _Unusual from None
                if len(raw) != 8 or (parent is not None and len(parent) != 8):
                    raise _Unusual
                span_id = from_bytes(raw, "big")
                parent_id = from_bytes(parent, "big") if parent else 0
                if not trace or not span_id:
                    raise _Unusual
                st = s.status
                if st is None:
                    status = _UNSET
                else:
                    code = st.code
                    if code == 2:
                        status = Status(StatusCode.ERROR, st.message or None)
                    elif 0 <= code <= 1:
                        status = _OK if code else _UNSET
                    else:
                        raise _Unusual
                events = s.events
                append(make(
                    s.name, context(trace, span_id, False, flag_of[flags & 0xFF]),
                    context(trace, parent_id, bool(flags & _FLAG_PARENT_REMOTE)) if parent_id else None,
                    resource, attributes_of(s.attributes), _typed_events(events) if events else [], [],
                    kinds.get(kind, _INTERNAL), None, status, int(start) or None, int(end) or None, scope))
    return out


def _typed_attributes(attributes: list[_KeyValue], unset: Any = UNSET) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in attributes:
        v = kv.value
        s = v.stringValue
        if s is unset:
            s = v.intValue  # the next most usual: decimal text of at most 18 digits (0 <= s < 2**63)
            if type(s) is str and len(s) <= 18 and s.isascii() and s.isdigit() \
                    and v.boolValue is v.doubleValue is v.arrayValue is unset:
                s = int(s)
            else:
                s = _typed_value(v)
        elif not (v.intValue is v.boolValue is v.doubleValue is v.arrayValue is unset):  # another field too
            raise _Unusual  # the checked path takes the first one written
        out[kv.key] = s
    return out


def _typed_value(v: _AnyValue) -> Any:
    """An ``AnyValue`` that is no ``stringValue``, as :meth:`_Decoder._value` reads it."""
    s, b, d, a = v.intValue, v.boolValue, v.doubleValue, v.arrayValue
    if s is not UNSET:
        if b is d is a is UNSET:
            number = _integer(s)
            if number is not None and -(1 << 63) <= number < 1 << 63:
                return number
    elif b is not UNSET:
        if d is a is UNSET:
            return b
    elif d is not UNSET:
        if a is UNSET:
            return d
    elif a is not UNSET:
        return tuple([x.stringValue for x in a.values])
    raise _Unusual  # two fields, an integer out of range, or no value (the checked path drops the attribute)


def _typed_events(events: list[_Event]) -> list[Event]:
    out = []
    for e in events:
        time = e.timeUnixNano
        if not _usual_nanos(time):
            raise _Unusual
        out.append(Event(e.name, _typed_attributes(e.attributes), int(time) or None))
    return out


def _span_context(trace_id: int, span_id: int, is_remote: bool, flags: TraceFlags | None = None) -> SpanContext:
    """``SpanContext(trace_id, span_id, is_remote, flags)`` for ids known valid (non-zero, of their size), without
    its checks (a third of a span's decoding): the API's ``SpanContext`` is a tuple of these six fields."""
    return _new_tuple(SpanContext, (trace_id, span_id, is_remote, flags or _DEFAULT_FLAGS, _DEFAULT_STATE, True))


_new_tuple = tuple.__new__
_DEFAULT_STATE, _DEFAULT_FLAGS = SpanContext(1, 1, False).trace_state, SpanContext(1, 1, False).trace_flags
# the API's own constructor wherever its layout is not the one read above (a later release)
_context = _span_context if (_span_context(1, 2, True, _TRACE_FLAGS[5]) == SpanContext(1, 2, True, _TRACE_FLAGS[5])
                             and _span_context(1, 2, True) == SpanContext(1, 2, True)
                             and _span_context(1, 2, True).is_valid) else SpanContext


def _count_spans(rs: Any) -> int:
    """How many spans a (damaged) ``ResourceSpans`` object holds, as far as can be told (at least 1)."""
    n = 0
    scopes = (rs.get("scopeSpans") or rs.get("scope_spans")) if isinstance(rs, dict) else None
    for ss in scopes if isinstance(scopes, list) else ():  # damaged: maybe a number
        spans = ss.get("spans") if isinstance(ss, dict) else None
        n += len(spans) if isinstance(spans, list) else 0
    return max(n, 1)


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


_CAMEL = {snake: camel for camel, snake in _SNAKE.items()}
_ANY_VALUE_FIELDS = frozenset({"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue",
                               "kvlistValue", "bytesValue"})


def _integer(value: Any) -> int | None:
    """A protobuf JSON integer: a number without fraction, or its decimal string."""
    if type(value) is int:
        return value
    if isinstance(value, str) and len(value) <= 21 and value.isascii():  # ASCII: int() also reads "٣", "²" raises
        digits = value[1:] if value[:1] == "-" else value
        if digits.isdigit():
            return int(value)
    if type(value) is float and value.is_integer():
        return int(value)
    return None


def _attribute_value(data: Any) -> Any:
    """An SDK-legal attribute value: scalars as is, homogeneous scalar arrays as tuples, the rest as JSON text."""
    if not isinstance(data, (list, dict)):
        return data
    if isinstance(data, list):
        items = [x for x in data if x is not None]
        for t in (str, bool, int, float):
            if all(type(x) is t for x in items):
                return tuple(items)
    # bounded by MAX_VALUE_DEPTH; non-finite doubles are written as null (strict JSON)
    return json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"))


def _finite(data: Any) -> Any:
    if type(data) is float:
        return data if math.isfinite(data) else None
    if isinstance(data, list):
        return [_finite(x) for x in data]
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    return data


__all__ = ["MalformedLine", "OTLPJsonFileExporter", "double_text", "iter_otlp_json", "read_otlp_json", "to_otlp_json"]
