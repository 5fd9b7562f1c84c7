"""OTLP/HTTP trace request bodies → SDK ``ReadableSpan``s (what ``otel-agents ecp collect`` receives).

An ``ExportTraceServiceRequest`` arrives as protobuf (``application/x-protobuf``)
or in the OTLP JSON encoding (``application/json``), optionally gzip- or deflate-compressed
(``Content-Encoding: gzip``/``deflate``), as the OTLP specification's OTLP/HTTP section
defines (https://opentelemetry.io/docs/specs/otlp/#otlphttp). Both are read by
the one reader of :mod:`otel_agents.exporters.file` (a protobuf body is
parsed with ``opentelemetry-proto``'s generated classes and put in that JSON
form first, as protobuf's JSON mapping would), so a span received over the wire folds
exactly as the same span read from a file: one implementation.

:func:`decode_request` reads what can be read: a span with a bad field (an id
of the wrong length, a value of the wrong type) is left out and counted, the
other spans of the request are kept — the receiver answers with a
``partial_success`` naming the first problems. A body that cannot be decoded at
all (not protobuf, not JSON, a broken gzip stream, an unknown encoding) raises
:class:`BadRequest` with a precise message. A protobuf string field holding bytes that are not UTF-8
(which protobuf's ``string`` forbids, but permissive runtimes send: the Collector's, C++'s) does not
cost the request: the bad bytes are replaced with U+FFFD, as the OTLP maintainers recommend
(https://github.com/open-telemetry/opentelemetry-proto/pull/845), and the fields are named in
:attr:`Decoded.repaired`.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson
from google.protobuf.message import Message
from opentelemetry.sdk.trace import ReadableSpan

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class BadRequest(ValueError):
    """The body cannot be read as an ``ExportTraceServiceRequest``; the message says why (HTTP 400)."""


class TooLarge(ValueError):
    """The body, once decompressed, is larger than the limit (HTTP 413)."""


class UnsupportedMediaType(ValueError):
    """A ``Content-Type`` or ``Content-Encoding`` this receiver does not read (HTTP 415)."""


@dataclass
class Decoded:
    """What one request held.

    Attributes:
        spans: the spans that could be read.
        rejected: how many spans were left out.
        problems: why, one message per problem (field paths as in the JSON encoding).
        repaired: the protobuf string fields whose bytes were not UTF-8 (field paths as in the JSON
            encoding), kept with U+FFFD in place of the bad bytes.
        dropped: fields dropped from spans that were kept, one message each naming the field (a malformed
            ``traceState``, a status code other than 0-2 read as unset, a span kind other than 0-5 read as
            internal: the reader's warnings).
    """

    spans: list[ReadableSpan] = field(default_factory=list)
    rejected: int = 0
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        """Whether the response carries a ``partial_success``: spans rejected, or (a warning, with
        ``rejected_spans`` 0, as the OTLP specification allows) text repaired or fields dropped."""
        return bool(self.rejected or self.repaired or self.dropped)

    def message(self) -> str:
        """The ``partial_success.error_message``: the first problems, and how many more; then the fields
        whose text was repaired, and those dropped from spans that were kept."""
        from .file import problems_message

        parts = [problems_message(self.problems) if self.problems else ""]
        if self.repaired:
            parts.append(f"{len(self.repaired)} string field(s) not UTF-8, kept with U+FFFD for the bad bytes: "
                         + problems_message(self.repaired))
        if self.dropped:
            parts.append(problems_message(self.dropped))
        return "; ".join(filter(None, parts))


def media_type(content_type: str | None) -> str:
    """``application/json`` from ``application/json; charset=utf-8`` (lower case, parameters dropped).

    Raises:
        UnsupportedMediaType: neither protobuf nor JSON.
    """
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if kind not in (PROTOBUF, JSON):
        raise UnsupportedMediaType(f"unsupported Content-Type {content_type!r}: send {PROTOBUF} or {JSON}")
    return kind


_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}  # zlib framing of each Content-Encoding


def decompress(body: bytes, encoding: str | None, limit: int) -> bytes:
    """``body`` decoded per ``Content-Encoding`` (none, ``identity``, ``gzip``, or ``deflate``: the zlib format,
    RFC 9110 section 8.4.1.2, what the OpenTelemetry SDKs send with ``OTEL_EXPORTER_OTLP_COMPRESSION=deflate``),
    at most ``limit`` bytes.

    A gzip body may hold several members one after another (RFC 1952 section 2.2: what concatenating
    gzip files or a streaming compressor writes); they are read as one stream, as ``gunzip`` does.

    Raises:
        UnsupportedMediaType: another encoding.
        BadRequest: a damaged or truncated stream, or bytes after it that are not a gzip member.
        TooLarge: more than ``limit`` bytes once decompressed (a decompression bomb stops there).
    """
    name = (encoding or "identity").strip().lower()
    if name == "identity":
        return body
    wbits = _WBITS.get(name)
    if wbits is None:
        raise UnsupportedMediaType(f"unsupported Content-Encoding {encoding!r}: send gzip, deflate or none")
    parts: list[bytes] = []
    size, rest = 0, body
    while rest:
        if parts and name != "gzip":
            raise BadRequest(f"Content-Encoding {name}, but {len(rest)} byte(s) follow the end of its stream")
        inflater = zlib.decompressobj(wbits)
        try:
            part = inflater.decompress(rest, limit + 1 - size)  # >= 1: 0 would mean no limit
        except zlib.error as exc:
            where = f"the body is not a {name} stream" if not parts else \
                f"the {len(rest)} byte(s) after the gzip stream's member {len(parts)} are not a gzip member"
            raise BadRequest(f"Content-Encoding {name}, but {where}: {exc}") from None
        size += len(part)
        if size > limit:
            raise TooLarge(f"body larger than {limit} bytes once decompressed")
        if not inflater.eof:
            raise BadRequest(f"Content-Encoding {name}, but the {name} stream is truncated")
        parts.append(part)
        rest = inflater.unused_data
    if not parts:
        raise BadRequest(f"Content-Encoding {name}, but the body is empty")
    return parts[0] if len(parts) == 1 else b"".join(parts)


def decode_request(body: bytes, kind: str) -> Decoded:
    """Read one ``ExportTraceServiceRequest`` (already decompressed) of media type ``kind``.

    Raises:
        BadRequest: the body is not a request of that encoding (the message names the encoding,
            and for JSON the position or the field at fault).
    """
    repaired: list[str] = []
    if kind == PROTOBUF:
        data = _protobuf_to_json(body, repaired)
    else:
        from .file import load_json, without_bom

        try:
            data = load_json(without_bom(body))  # a body is an input of its own: a mark at its start is ignored
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        if not isinstance(data, dict):
            raise BadRequest(f"expected a JSON object (an ExportTraceServiceRequest), got {type(data).__name__}")
    decoded = _decode(data)
    decoded.repaired = repaired
    return decoded


def _decode(data: dict[str, Any]) -> Decoded:
    from .file import _Decoder

    rejected: list[tuple[int, str]] = []
    decoder = _Decoder()
    try:
        spans = decoder.request(data, rejected)
    except ValueError as exc:  # the top level itself (resourceSpans not an array)
        raise BadRequest(f"not an OTLP trace request: {exc}") from None
    return Decoded(spans, sum(n for n, _ in rejected), [m for _, m in rejected], dropped=decoder.notes)


def _protobuf_to_json(body: bytes, repaired: list[str]) -> dict[str, Any]:
    """A protobuf ``ExportTraceServiceRequest`` in the OTLP JSON form the file reader takes (hex ids);
    string fields that are not UTF-8 are repaired (:func:`_repair_text`) and their paths added to ``repaired``.

    Read field by field with the generated classes' accessors (protobuf's generic ``MessageToDict``
    costs more than the rest of the receiver together); the file reader then checks every field."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    try:
        message = ExportTraceServiceRequest.FromString(body)
    except DecodeError as exc:
        message = _repair_text(body, repaired)
        if message is None:
            raise BadRequest(f"not a protobuf ExportTraceServiceRequest: {exc}") from None
    return {"resourceSpans": [
        {"resource": {"attributes": _kvs(rs.resource.attributes)}, "schemaUrl": rs.schema_url,
         "scopeSpans": [{"scope": {"name": ss.scope.name, "version": ss.scope.version,
                                   "attributes": _kvs(ss.scope.attributes)},
                         "schemaUrl": ss.schema_url, "spans": [_span(span) for span in ss.spans]}
                        for ss in rs.scope_spans]}
        for rs in message.resource_spans]}


def _repair_text(body: bytes, repaired: list[str]) -> Any:
    """``body`` read as an ``ExportTraceServiceRequest`` whose ``string`` fields may hold bytes that are not
    UTF-8 (which protobuf refuses to parse): read with a twin of the message whose strings are ``bytes`` (the
    same wire format), the bad ones decoded with U+FFFD for each bad byte and their paths added to
    ``repaired``, then parsed as the real message. ``None`` when the body is not such a message either."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    twin, strings = _bytes_twin()
    try:
        message = twin.FromString(body)
    except DecodeError:
        return None
    stack: list[tuple[Any, str]] = [(message, "")]
    while stack:  # iterative (AnyValue nests as deep as the body allows), in the order of the body
        item, path = stack.pop()
        inner: list[tuple[Any, str]] = []
        for fd, value in item.ListFields():
            where = f"{path}.{fd.json_name}" if path else fd.json_name
            if fd.message_type is not None:
                if isinstance(value, Message):
                    inner.append((value, where))
                else:
                    inner.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
            elif fd.full_name in strings and isinstance(value, bytes):  # no repeated string in OTLP traces
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError:
                    setattr(item, fd.name, value.decode("utf-8", "replace").encode("utf-8"))
                    repaired.append(where)
        stack.extend(reversed(inner))
    try:
        return ExportTraceServiceRequest.FromString(message.SerializeToString())
    except DecodeError:  # pragma: no cover - every string field is UTF-8 now
        return None


@functools.lru_cache(maxsize=1)
def _bytes_twin() -> tuple[Any, frozenset[str]]:
    """``ExportTraceServiceRequest``'s twin with every ``string`` field declared ``bytes`` (built from the
    generated files' descriptors in a pool of its own), and the full names of those fields."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    pool = descriptor_pool.DescriptorPool()
    strings: set[str] = set()
    done: set[str] = set()

    def add(file: Any) -> None:
        if file.name in done:
            return
        for dependency in file.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        messages = [(f"{proto.package}.{m.name}", m) for m in proto.message_type]
        while messages:
            name, m = messages.pop()
            messages.extend((f"{name}.{n.name}", n) for n in m.nested_type)
            for f in m.field:
                if f.type == descriptor_pb2.FieldDescriptorProto.TYPE_STRING:
                    f.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
                    strings.add(f"{name}.{f.name}")
        pool.Add(proto)
        done.add(file.name)

    add(trace_service_pb2.DESCRIPTOR)
    request = pool.FindMessageTypeByName("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest")
    return message_factory.GetMessageClass(request), frozenset(strings)


def _span(s: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": s.trace_id.hex(), "spanId": s.span_id.hex(), "name": s.name, "kind": s.kind,
        "startTimeUnixNano": s.start_time_unix_nano, "endTimeUnixNano": s.end_time_unix_nano,
        "attributes": _kvs(s.attributes), "status": {"code": s.status.code, "message": s.status.message},
        "flags": s.flags}
    if s.parent_span_id:
        out["parentSpanId"] = s.parent_span_id.hex()
    if s.trace_state:
        out["traceState"] = s.trace_state
    if s.events:
        out["events"] = [{"name": e.name, "timeUnixNano": e.time_unix_nano, "attributes": _kvs(e.attributes)}
                         for e in s.events]
    if s.links:
        out["links"] = [{"traceId": link.trace_id.hex(), "spanId": link.span_id.hex(),
                         "attributes": _kvs(link.attributes)} for link in s.links]
    return out


def _kvs(pairs: Any) -> list[dict[str, Any]]:
    return [{"key": kv.key, "value": _value(kv.value)} for kv in pairs]


def _value(v: Any) -> dict[str, Any]:
    """An ``AnyValue`` in its JSON form (64-bit integers as decimal strings, bytes as base64)."""
    which = v.WhichOneof("value")
    if which == "string_value":
        return {"stringValue": v.string_value}
    if which == "int_value":
        return {"intValue": str(v.int_value)}
    if which == "bool_value":
        return {"boolValue": v.bool_value}
    if which == "double_value":
        return {"doubleValue": v.double_value}
    if which == "array_value":
        return {"arrayValue": {"values": [_value(x) for x in v.array_value.values]}}
    if which == "kvlist_value":
        return {"kvlistValue": {"values": _kvs(v.kvlist_value.values)}}
    if which == "bytes_value":
        import base64

        return {"bytesValue": base64.b64encode(v.bytes_value).decode("ascii")}
    return {}


def encode_response(kind: str, decoded: Decoded | None = None) -> bytes:
    """An ``ExportTraceServiceResponse`` in ``kind``'s encoding; ``partial_success`` when spans were rejected."""
    if kind == PROTOBUF:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        response = ExportTraceServiceResponse()
        if decoded is not None and decoded.partial:
            response.partial_success.rejected_spans = decoded.rejected
            response.partial_success.error_message = decoded.message()
        return response.SerializeToString()
    body: dict[str, Any] = {}
    if decoded is not None and decoded.partial:
        # JSON encoding: int64 as a decimal string, lowerCamelCase names
        body["partialSuccess"] = {"rejectedSpans": str(decoded.rejected), "errorMessage": decoded.message()}
    return orjson.dumps(body)


def encode_status(kind: str, code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` (the OTLP/HTTP error body) in ``kind``'s encoding (JSON when unknown)."""
    if kind == PROTOBUF:
        from google.rpc.status_pb2 import Status

        return Status(code=code, message=message).SerializeToString()
    return orjson.dumps({"code": code, "message": message})


__all__ = ["BadRequest", "Decoded", "JSON", "PROTOBUF", "TooLarge", "UnsupportedMediaType", "decode_request",
           "decompress", "encode_response", "encode_status", "media_type"]
