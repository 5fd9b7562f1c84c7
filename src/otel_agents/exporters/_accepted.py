"""What an OTLP/HTTP backend said of a batch that OpenTelemetry Python's OTLP/HTTP exporter reports as sent.

The exporter's ``export()`` returns success for any status from 200 to 399 and never reads the answer's body.
Two answers it so counts as sent are not:

* ``partial_success`` (OTLP specification, "Partial Success"): a 200 whose ``ExportTraceServiceResponse`` /
  ``ExportLogsServiceResponse`` says how many spans or log records the backend rejected
  (``rejected_spans``/``rejected_log_records``) and why (``error_message``); ``ecp collect`` answers so for a
  span with a bad field. With ``rejected_* == 0`` and a message it is a warning: all were accepted.
* a redirect (3xx): SDK 1.45's transport does not follow it (``allow_redirects=False``), so nothing reached a
  receiver. (SDK 1.44 follows it; the answer seen is then the final one.)
* a 2xx whose body is not the ``Export*ServiceResponse`` (OTLP specification, "OTLP/HTTP Response": a success
  carries it, in the request's content type): an HTML page (a proxy's or a login page, a web UI that answers every
  path) or a protobuf body that does not parse. Nothing says a receiver took the batch: it counts as not sent, the
  answer's status, content type and start quoted (:func:`other_answer`, as ``ecp annotate --to phoenix`` quotes an
  answer that is not Phoenix's). An empty body is the empty message's encoding, a success: the Collector's
  receiver and Phoenix answer so. (The Collector's ``otlphttp`` exporter fails a protobuf or JSON body that does not
  parse, as here, and takes a body of any other type as sent without reading it: here it is not sent.)

:class:`Answers` gives the exporter a ``requests.Session`` (its public ``session=`` argument) whose response hook
keeps the last answer; :meth:`Answers.verdict` reads it after each ``export()`` that returned success, and
:meth:`Answers.too_large` after one that failed: a batch refused with 413 (a receiver's body limit: ``ecp collect``
takes 4 MiB, a batch processor's 512 spans with their content can be far more) can be sent again in halves
(:class:`HalvingExporter`, what the network presets export through).

Where the application chose the exporter's session itself (``OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER``
and its per-signal variables: an entry point giving an authenticated ``requests.Session``), the exporter keeps it and
its answers are not read (:attr:`Answers.session` is ``None``).

A sender on urllib (``ecp collect --forward``) reads an answer with :func:`read_answer` (bounded in bytes and in
time) and the same :func:`partial_success`, sends through :func:`open_unfollowed` and names the redirect it does
not follow with :func:`redirect`.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import threading
import urllib.request
from dataclasses import dataclass
from typing import Any, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from .._spans.redaction import excerpt

MESSAGE_CHARS = 200  # at most this much of a backend's error_message is quoted (secrets redacted, escaped)
QUOTED_CHARS = 300  # at most this much of the start of an answer that is not the one expected is quoted
MAX_ANSWER_BYTES = 1 << 20
"""The most of a 2xx answer's body read (a ``partial_success``, Phoenix's list of one short id per annotation, are
far smaller): an endless body costs one bounded read."""


@dataclass(frozen=True)
class Verdict:
    """What the backend accepted of a batch the exporter reported as sent.

    Attributes:
        accepted: how many of the batch's items (spans or log records) the backend accepted.
        problem: why fewer were accepted (``2 of 5 spans rejected: bad spans``; ``answered 307 …``), or a warning
            the backend gave with all of them accepted; ``None`` when it said nothing.
        arrived: ``False`` when the batch reached no receiver (a redirect): a refusal, not a rejection.
    """

    accepted: int
    problem: str | None = None
    arrived: bool = True


class Answers:
    """A ``requests.Session`` for an OTLP/HTTP exporter (``OTLPSpanExporter(session=answers.session)``,
    ``OTLPLogExporter(session=...)``) that keeps the backend's last answer.

    Args:
        signal: ``"spans"`` or ``"log_records"``: which ``Export*ServiceResponse`` the answers are, and the word
            the messages use.

    Raises:
        ImportError: ``requests`` is not installed (it comes with the OTLP/HTTP exporter).
    """

    def __init__(self, signal: str) -> None:
        import requests

        self.signal = signal
        self.url = "the endpoint"  # for messages: the caller sets the URL the exporter resolved
        self._last: Any = None
        self.session: Any = None  # the application's credential provider gives the exporter its own session
        provider = ("OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
                    f"OTEL_PYTHON_EXPORTER_OTLP_HTTP_{'TRACES' if signal == 'spans' else 'LOGS'}_CREDENTIAL_PROVIDER")
        if not any(os.environ.get(name) for name in provider):
            self.session = requests.Session()
            self.session.hooks["response"].append(self._seen)

    def _seen(self, response: Any, *args: Any, **kwargs: Any) -> None:
        self._last = response  # a followed redirect's final answer comes last

    def too_large(self) -> bool:
        """Whether the last answer was 413 (Content Too Large, RFC 9110 15.5.14): the batch, split, may pass (call
        it after an ``export()`` that failed)."""
        response, self._last = self._last, None
        return response is not None and response.status_code == 413

    def verdict(self, count: int) -> Verdict:
        """What the last answer says of the ``count`` items the exporter just reported as sent (call it after an
        ``export()`` that returned success); all accepted when there was no answer or its body is not one."""
        response, self._last = self._last, None
        if response is None:
            return Verdict(count)
        status = response.status_code
        if 300 <= status < 400:
            return Verdict(0, f"{redirect(status, response.headers.get('location'))}, which the OTLP exporter does "
                              f"not follow: none of {count} {self._word} reached a receiver; give the URL it names",
                           arrived=False)
        try:
            body = response.content
        except Exception:  # noqa: BLE001 - a body that could not be read says nothing
            body = b""
        kind = response.headers.get("content-type")
        answer = partial_success(body, kind, self.signal)
        if answer is None:
            response_type = "ExportTraceServiceResponse" if self.signal == "spans" else "ExportLogsServiceResponse"
            return Verdict(0, f"{other_answer(status, kind, body, f'an OTLP {response_type}')}: none of {count} "
                              f"{self._word} is known to have reached a receiver", arrived=False)
        rejected, message = answer
        if rejected:
            rejected = min(rejected, count)
            why = f": {excerpt(message, MESSAGE_CHARS)}" if message else ""
            return Verdict(count - rejected, f"{rejected} of {count} {self._word} rejected (partial success){why}")
        if message:
            return Verdict(count, f"accepted with a warning (partial success): {excerpt(message, MESSAGE_CHARS)}")
        return Verdict(count)

    @property
    def _word(self) -> str:
        return "span(s)" if self.signal == "spans" else "log record(s)"

def partial_success(body: bytes, content_type: str | None, signal: str = "spans") -> tuple[int, str] | None:
    """``(rejected, error_message)`` of the ``partial_success`` in a 2xx answer's ``body``, the signal's response
    (an ``ExportTraceServiceResponse`` for ``signal`` ``"spans"``, ``ExportLogsServiceResponse`` for
    ``"log_records"``): JSON when ``content_type`` says JSON, protobuf when it is ``application/x-protobuf`` (or
    ``application/protobuf``, or missing). ``(0, "")`` for an empty body (the empty message). ``None`` when the
    body is not the signal's response: JSON or protobuf that does not parse as it, or a body of another content
    type (an HTML page); name it with :func:`other_answer`."""
    if not body:
        return 0, ""
    key = "rejected_spans" if signal == "spans" else "rejected_log_records"
    kind = (content_type or "").split(";")[0].strip().lower()
    if "json" in kind:
        try:
            answer = json.loads(body)
            partial = answer.get("partialSuccess") or {}
            rejected = int(partial.get(_camel(key)) or 0)  # OTLP/JSON writes an int64 as a string
            return max(rejected, 0), str(partial.get("errorMessage") or "")
        except (ValueError, TypeError, AttributeError):
            return None
    if kind not in ("", "application/x-protobuf", "application/protobuf"):
        return None
    try:
        if signal == "spans":
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse as R
        else:
            from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse as R
        message = R.FromString(body)
    except Exception:  # noqa: BLE001 - not protobuf: not the response
        return None
    return getattr(message.partial_success, key), message.partial_success.error_message


def other_answer(status: int, content_type: str | None, body: bytes, expected: str) -> str:
    """Why a 2xx answer is not the one a sender expected (``expected``: ``"an OTLP ExportTraceServiceResponse"``,
    ``"Phoenix's answer listing the 3 annotations"``): ``HTTP 200 with text/html; charset=utf-8, not EXPECTED (a
    proxy or a login page in the way?): <!doctype html>…``, its content type and the start of its body quoted (at
    most :data:`QUOTED_CHARS` characters; escaped and redacted, :func:`~otel_agents._spans.redaction.excerpt`).
    ``ecp annotate --to phoenix``, ``--to langfuse``, ``--to otlp``, ``otel-agents export`` and ``ecp collect
    --forward`` say it so."""
    kind = excerpt(content_type) if content_type else "no content type"
    return (f"HTTP {status} with {kind}, not {expected} (a proxy or a login page in the way?): "
            f"{excerpt(body.decode('utf-8', 'replace'), QUOTED_CHARS)}")


class _NotFollowed(urllib.request.HTTPRedirectHandler):
    """A 3xx is answered as an :class:`urllib.error.HTTPError`, not followed."""

    def redirect_request(self, *args: Any) -> None:
        return None


def open_unfollowed(request: urllib.request.Request, timeout: float) -> Any:
    """``urlopen(request)`` that does not follow a redirect: a 3xx raises :class:`urllib.error.HTTPError` (name it
    with :func:`redirect`). urllib follows a POST's 301/302/303 as a GET with every header of the request, its
    ``Authorization`` (a key, the URL's user info) included, to whatever host ``Location`` names; the senders on
    urllib (``ecp collect --forward``, ``ecp annotate --to phoenix/langfuse``) send it to the host they were given
    only, as the OTLP exporters (``requests``, ``allow_redirects=False``) do.

    Returns:
        The ``http.client.HTTPResponse`` of a 1xx/2xx answer (a context manager).
    Raises:
        urllib.error.HTTPError: a 3xx, 4xx or 5xx answer; OSError: the connection failed.
    """
    return _OPENER.open(request, timeout=timeout)  # noqa: S310 - a URL the user configured


_OPENER = urllib.request.build_opener(_NotFollowed)


def redirect(status: int, location: str | None) -> str:
    """``answered 307 (a redirect to 'http://…')``: what a 3xx answer said (its ``Location`` quoted, escaped and
    redacted), for a sender that does not follow it (a POST's body may not be sent again elsewhere)."""
    to = f" to {excerpt(location, MESSAGE_CHARS)}" if location else ""
    return f"answered {status} (a redirect{to})"


def read_answer(response: Any, seconds: float, limit: int = MAX_ANSWER_BYTES, *, start: bool = False) -> bytes:
    """The body of ``response`` (an ``http.client.HTTPResponse``, as ``urllib.request.urlopen`` gives it), read
    within ``seconds`` in all and at most ``limit`` bytes of it; read no further otherwise. ``start``: the first
    ``limit`` bytes are all that is wanted (the start of a page quoted in an error): a longer body is no error.

    urllib's ``timeout`` bounds each receive, not the body: a body trickling a byte a second (or a chunk size
    line doing so) held its reader for as long as the server liked. At the deadline the connection is shut
    down (from a timer thread; a duplicate of its descriptor, taken while the reader still holds it), which ends
    a read wherever it is.

    Raises:
        ValueError: why the body was not read (``"larger than 1048576 bytes"``, ``"not finished within 10 s"``,
            ``"broke off: …"``); the caller closes the response.
    """
    fd, lock = response.fileno(), threading.Lock()
    reading, late = True, False

    def cut() -> None:
        nonlocal late
        with lock:
            if reading:
                late = True
                with contextlib.suppress(OSError), socket.socket(fileno=os.dup(fd)) as sock:
                    sock.shutdown(socket.SHUT_RDWR)  # not connected any more: the read is ending anyway

    timer = threading.Timer(seconds, cut)
    timer.daemon = True
    timer.start()
    parts: list[bytes] = []
    broke: Exception | None
    size, broke = 0, None
    want = limit if start else limit + 1  # a byte past the limit tells a body that is larger
    try:
        while size < want and (part := response.read1(min(65536, want - size))):
            parts.append(part)
            size += len(part)
    except (OSError, http.client.HTTPException) as exc:
        broke = exc
    finally:
        timer.cancel()
        with lock:
            reading = False
    if late:
        raise ValueError(f"not finished within {seconds:g} s")
    if size > limit:
        raise ValueError(f"larger than {limit} bytes")
    if broke is not None:
        raise ValueError(f"broke off: {type(broke).__name__}: {broke}")
    return b"".join(parts)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


class HalvingExporter(SpanExporter):
    """``exporter`` (an OTLP/HTTP span exporter sending through ``answers.session``), with a batch the receiver
    refuses as too large (413) sent again in halves, down to single spans: the SDK's exporter drops it (one log
    line) and the batch processor's batches are counted in spans, not bytes. Succeeds when every half was
    accepted."""

    def __init__(self, exporter: SpanExporter, answers: Answers) -> None:
        self.exporter = exporter
        self.answers = answers

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export ``spans``; halves of a batch answered 413 are exported in turn (the first refused stops it)."""
        result = self.exporter.export(spans)
        if result is not SpanExportResult.SUCCESS and self.answers.too_large() and len(spans) > 1:
            half = len(spans) // 2
            if self.export(spans[:half]) is SpanExportResult.SUCCESS:
                return self.export(spans[half:])
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def __getattr__(self, name: str) -> Any:  # the SDK exporter's own attributes (its endpoint, compression…)
        if name == "exporter":
            raise AttributeError(name)
        return getattr(self.exporter, name)
