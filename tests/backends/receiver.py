"""A local OTLP/HTTP receiver on 127.0.0.1 that keeps every request, and the decoding of its bodies.

The body is what an OTLP/HTTP exporter puts on the wire: an ``ExportTraceServiceRequest`` in protobuf.
:func:`decode` turns it back into plain :class:`WireSpan` records (attribute values as Python values:
``stringValue`` → ``str``, ``intValue`` → ``int``, arrays → lists), the form a backend's ingestion
reads.
"""

from __future__ import annotations

import contextlib
import gzip
import threading
import zlib
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests._loopback import QuietHandler, serve


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    status: int = 200  # what the receiver answered

    def payload(self) -> bytes:
        encoding = self.headers.get("content-encoding", "")
        if encoding == "gzip":
            return gzip.decompress(self.body)
        if encoding == "deflate":
            return zlib.decompress(self.body)
        return self.body


class Receiver:
    """``with Receiver() as rx:`` — ``rx.url`` is ``http://127.0.0.1:<port>``; ``rx.requests`` fill up.

    ``refuse``: HTTP status codes to answer the first requests with, in order (each one still kept in
    ``rx.requests``); every later request gets 200. A 3xx one carries ``Location: http://127.0.0.1:1/v1/traces``
    (a redirect to where nothing listens).
    ``partial``: ``(rejected, error_message)`` for the ``partial_success`` of the first 200 answers, in order (the
    trace and the logs responses have the same wire form: ``rejected`` is ``rejected_spans`` or
    ``rejected_log_records``).
    ``answer``: ``(content_type, body)`` of every 200 answer instead of an ``ExportTraceServiceResponse`` in
    protobuf (an HTML page; ``None`` as the type: no ``content-type`` header).
    """

    def __init__(self, refuse: list[int] | None = None, partial: list[tuple[int, str]] | None = None,
                 answer: tuple[str | None, bytes] | None = None) -> None:
        self.requests: list[Request] = []
        self._refuse = list(refuse or [])
        self._partial = list(partial or [])
        reply_type, reply_body = answer or ("application/x-protobuf", None)
        self._lock = threading.Lock()
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with receiver._lock:
                    status = receiver._refuse.pop(0) if receiver._refuse else 200
                    receiver.requests.append(Request("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                                                     body, status))
                    partial = receiver._partial.pop(0) if receiver._partial and status == 200 else None
                answer = ExportTraceServiceResponse()
                if partial is not None:
                    answer.partial_success.rejected_spans, answer.partial_success.error_message = partial
                reply = (answer.SerializeToString() if reply_body is None else reply_body) if status == 200 \
                    else b"refused"
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("location", "http://127.0.0.1:1/v1/traces")
                if reply_type is not None:
                    self.send_header("content-type", reply_type)
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self._handler = Handler
        self._serving = contextlib.ExitStack()
        self.url = ""  # set on entering the ``with`` block

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def spans(self) -> list["WireSpan"]:
        """The spans of every accepted request to a ``.../traces`` path (metrics and logs requests, and
        refused ones, are kept but not decoded)."""
        with self._lock:
            requests = [r for r in self.requests if r.path.endswith("/traces") and r.status == 200]
        return [span for r in requests for span in decode(r.payload())]

    def __enter__(self) -> "Receiver":
        self.url = self._serving.enter_context(serve(self._handler))
        return self

    def __exit__(self, *exc: Any) -> None:
        self._serving.close()


@dataclass(frozen=True)
class WireSpan:
    name: str
    trace_id: str  # hex
    span_id: str
    parent_id: str | None
    kind: int  # OTLP Span.SpanKind
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int  # OTLP Status.StatusCode (2 = ERROR)
    scope: str
    resource: dict[str, Any] = field(default_factory=dict)


def value(v: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as a plain Python value."""
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, which)


def _attributes(kvs: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in kvs}


def decode(body: bytes) -> list[WireSpan]:
    """The spans of one serialized ``ExportTraceServiceRequest``."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    out = []
    for rs in request.resource_spans:
        resource = _attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append(WireSpan(
                    name=s.name, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(),
                    parent_id=s.parent_span_id.hex() or None, kind=s.kind,
                    attributes=_attributes(s.attributes),
                    events=[(e.name, _attributes(e.attributes)) for e in s.events],
                    status_code=s.status.code, scope=ss.scope.name, resource=resource,
                ))
    return out
