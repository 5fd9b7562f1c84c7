"""An OTLP/HTTP trace receiver (``POST /v1/traces``) as an ASGI app, served by Uvicorn like ``ecp serve --http``.

Behaves as the OTLP specification's OTLP/HTTP section requires
(https://opentelemetry.io/docs/specs/otlp/#otlphttp):

* request bodies: an ``ExportTraceServiceRequest`` as protobuf (``application/x-protobuf``)
  or JSON (``application/json``), plain or ``Content-Encoding: gzip``/``deflate``; anything else is
  ``415``;
* success: ``200`` with an ``ExportTraceServiceResponse`` in the request's encoding; when
  some spans could not be read, its ``partial_success`` says how many
  (``rejected_spans``) and why (``error_message``, the first problems with their field
  paths), and the other spans of the request are kept;
* failures: a ``google.rpc.Status`` body in the request's encoding (JSON when it has
  none); ``400`` for a body that cannot be decoded (not retryable), ``413`` for one over
  the size limit (compressed, or decompressed past 4 x that limit), ``503`` with
  ``Retry-After`` when the receiver is at capacity (more bytes waiting to be decoded than
  ``max_pending_bytes``): the OTLP exporters and the Collector's ``otlphttp`` exporter
  retry after that many seconds;
* first, the same checks as ``ecp serve --http`` (:class:`~.http.HTTPGate`: header size,
  path, ``Host``, ``Origin``, bearer token, body size and time), the same code, and the same CORS: a page from
  an allowed origin can send spans (OpenTelemetry JS's OTLP/HTTP exporters in a browser post JSON or protobuf,
  which needs a preflight).

Decoding and whatever the ``sink`` does with the spans run in one worker thread, one
request at a time, never in the event loop. Only spans are received: ``/v1/logs`` and
``/v1/metrics`` are ``404``. OTLP/gRPC, the same way: :mod:`.otlp_grpc`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any, Callable, Mapping

from opentelemetry.sdk.trace import ReadableSpan

from ..exporters import otlp_request as R
from .http import HTTPGate, HTTPLimits, HTTPSecurity, Receive, Scope, Send

logger = logging.getLogger("otel_agents.collect")
Raw = tuple[bytes, str, "str | None", "str | None"]  # a request as received: body, content type, encoding, forwarded

TRACES_PATH = "/v1/traces"
RETRY_AFTER_S = 1
DECOMPRESSED_FACTOR = 4  # a gzip body may grow to this many times the body limit
MAX_PENDING_BYTES = 64 * 1024 * 1024  # request bytes held at once: waiting for the worker, or to be forwarded
FORWARDED_HEADER = "otel-agents-forwarded"
"""The header a :class:`Forwarder` adds: the marks of the forwarders a request has passed through, comma-separated
(each appends its own), so one that gets back a request it sent can tell (a loop) and stops it."""
# google.rpc.Code values for the Status bodies
_INVALID_ARGUMENT, _RESOURCE_EXHAUSTED, _UNAVAILABLE, _INTERNAL, _UNAUTHENTICATED, _NOT_FOUND = 3, 8, 14, 13, 16, 5
_CODES = {400: _INVALID_ARGUMENT, 401: _UNAUTHENTICATED, 404: _NOT_FOUND, 413: _INVALID_ARGUMENT,
          415: _INVALID_ARGUMENT, 503: _UNAVAILABLE, 500: _INTERNAL}


def _kind_of(headers: Mapping[str, str]) -> str:
    try:
        return R.media_type(headers.get("content-type"))
    except R.UnsupportedMediaType:
        return R.JSON


async def status_reply(send: Send, headers: Mapping[str, str], status: int, message: str,
                       extra: Mapping[str, str]) -> None:
    """A refusal as the OTLP/HTTP spec wants it: a ``google.rpc.Status`` in the request's encoding."""
    kind = _kind_of(headers)
    await _respond(send, status, kind, R.encode_status(kind, _CODES.get(status, _INVALID_ARGUMENT), message), extra)


async def _respond(send: Send, status: int, kind: str, body: bytes, extra: Mapping[str, str] | None = None) -> None:
    out = [(b"content-type", kind.encode("ascii")), (b"content-length", str(len(body)).encode("ascii"))]
    out += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})


class OTLPReceiver:
    """The ASGI app. Hands the spans of each request to ``sink`` (in its worker thread).

    Args:
        sink: ``sink(spans, raw)`` with the spans read from one request (``list[ReadableSpan]``)
            and the request as received (``(body, content type, content encoding, forwarded)``, for a
            pass-through; ``forwarded``: its :data:`FORWARDED_HEADER`, or ``None``); called one request at a time.
            An exception from it is logged and answered ``500``.
        security, limits, bound_host: as for ``ecp serve --http`` (:class:`~.http.HTTPGate`).
        max_pending_bytes: request bytes waiting for the worker beyond which new requests get
            ``503`` with ``Retry-After``.
        path: the endpoint (default ``/v1/traces``).

    Attributes:
        received: spans read and kept; ``rejected``: spans left out (not in ``received``);
        ``requests``: requests answered 200; ``busy``: requests answered 503.
    """

    def __init__(self, sink: Callable[[list[ReadableSpan], Raw], Any], *,
                 security: HTTPSecurity | None = None, limits: HTTPLimits | None = None,
                 bound_host: str = "127.0.0.1", max_pending_bytes: int = MAX_PENDING_BYTES,
                 path: str = TRACES_PATH) -> None:
        self.sink = sink
        self.path = path
        self.gate = HTTPGate(path, security, limits, bound_host, reply=status_reply)
        self.limits = self.gate.limits
        self.max_pending_bytes = max_pending_bytes
        self.worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="otlp-receiver")
        self.received = self.rejected = self.requests = self.busy = 0
        self._pending = 0  # bytes handed to the worker and not done yet (event loop and gRPC threads)
        self._pending_lock = threading.Lock()

    def _reserve(self, size: int) -> bool:
        """Count ``size`` bytes as pending, unless the receiver is at capacity (then ``False``, counted busy)."""
        with self._pending_lock:
            if self._pending >= self.max_pending_bytes:
                self.busy += 1
                return False
            self._pending += size
            return True

    def count_busy(self) -> None:
        """Count one request refused for load elsewhere (a gRPC call over the server's call limit)."""
        with self._pending_lock:
            self.busy += 1

    def _release(self, size: int) -> None:
        with self._pending_lock:
            self._pending -= size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        admitted = await self.gate.admit(scope, send)
        if admitted is None:
            return
        headers, send = admitted
        if scope.get("method") != "POST":
            return await status_reply(send, headers, 405, "method not allowed: use POST", {"allow": "POST, OPTIONS"})
        if self._pending >= self.max_pending_bytes:  # before reading the body: refused early, nothing held
            self.count_busy()
            return await status_reply(send, headers, 503, "receiver at capacity: retry later",
                                      {"retry-after": str(RETRY_AFTER_S)})
        body = await self.gate.body(headers, receive, send)  # framing, size and time first, as for ecp serve
        if body is None:
            return
        try:
            kind = R.media_type(headers.get("content-type"))
        except R.UnsupportedMediaType as exc:
            return await status_reply(send, headers, 415, str(exc), {})
        if not self._reserve(len(body)):
            return await status_reply(send, headers, 503, "receiver at capacity: retry later",
                                      {"retry-after": str(RETRY_AFTER_S)})
        try:
            outcome = await asyncio.get_running_loop().run_in_executor(
                self.worker, self._ingest, body, kind, headers.get("content-encoding"), headers.get(FORWARDED_HEADER))
        finally:
            self._release(len(body))
        if isinstance(outcome, tuple):
            status, message = outcome
            return await status_reply(send, headers, status, message, {})
        self.requests += 1
        await _respond(send, 200, kind, R.encode_response(kind, outcome))

    def _ingest(self, body: bytes, kind: str, encoding: str | None, forwarded: str | None = None
                ) -> R.Decoded | tuple[int, str]:
        """In the worker: decompress, decode, hand on. A ``(status, message)`` on failure."""
        try:
            raw = R.decompress(body, encoding, self.limits.max_body * DECOMPRESSED_FACTOR)
            decoded = R.decode_request(raw, kind)
        except R.UnsupportedMediaType as exc:
            return 415, str(exc)
        except R.TooLarge as exc:
            return 413, str(exc)
        except R.BadRequest as exc:
            return 400, str(exc)
        return self._hand_on(decoded, lambda: (body, kind, encoding, forwarded))

    def _hand_on(self, decoded: R.Decoded, raw: Callable[[], Raw]) -> R.Decoded | tuple[int, str]:
        self.received += len(decoded.spans)
        self.rejected += decoded.rejected
        if decoded.rejected:
            logger.warning("otel-agents collect: %d span(s) of a request rejected: %s", decoded.rejected,
                           decoded.message())
        elif decoded.repaired:
            logger.warning("otel-agents collect: a request held text that is not UTF-8 (kept, repaired): %s",
                           decoded.message())
        elif decoded.dropped:
            logger.warning("otel-agents collect: fields dropped from spans that were kept: %s", decoded.message())
        try:
            self.sink(decoded.spans, raw())
        except Exception:  # noqa: BLE001 - answered 500; the receiver keeps serving
            logger.exception("otel-agents collect: handling received spans failed")
            return 500, "internal error handling the spans (see the receiver's log)"
        return decoded

    def ingest_body(self, body: bytes) -> R.Decoded | tuple[int, str]:
        """A protobuf request body received otherwise (OTLP/gRPC, already decompressed by gRPC): decoded and
        handed to ``sink`` in the worker thread, one request at a time, as an HTTP body is; blocks the calling
        (gRPC) thread until done. A ``(status, message)`` on failure (the HTTP status of the same fault)."""
        if not self._reserve(len(body)):
            return 503, "receiver at capacity: retry later"
        try:
            return self.worker.submit(self._ingest, body, R.PROTOBUF, None).result()
        finally:
            self._release(len(body))

    def run_in_worker(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Run ``fn(*args)`` in the worker thread, between requests (so it needs no lock with ``sink``)."""
        return asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    def close(self) -> None:
        """Wait for the request in the worker, then stop the worker."""
        self.worker.shutdown(wait=True)


class Forwarder:
    """Passes received requests on, unchanged (same body, ``Content-Type``, ``Content-Encoding``), to another
    OTLP/HTTP endpoint, from a thread of its own: the receiver can sit in front of a tracing backend.

    At most ``max_queued`` requests of at most ``max_queued_bytes`` bytes in all wait (an endpoint that
    stalls must not hold every request in memory); more are dropped and counted (:attr:`dropped`), as are
    requests the endpoint refused or that failed (:attr:`failed`); logged with the running count at the 1st,
    2nd, 4th, 8th, … of each (an outage must not flood the log). Before each request the endpoint's host name
    gets :data:`~otel_agents.exporters._reach.BOUND` seconds to be looked up (urllib's ``timeout`` does not cover
    the lookup: a resolver that never answered held this thread for good); a request whose name was not looked
    up is not sent, counted failed, and the first of a run of them is logged once, naming the URL and why.

    A 2xx answer counts the request :attr:`sent`; its body is then read, at most
    :data:`~otel_agents.exporters._accepted.MAX_ANSWER_BYTES` within ``timeout`` seconds in all
    (:func:`~otel_agents.exporters._accepted.read_answer`), for the OTLP ``partial_success``
    (https://opentelemetry.io/docs/specs/otlp/#partial-success), protobuf or JSON as its ``Content-Type`` says:
    the spans it rejected are counted in :attr:`rejected` (spans, not requests: the request was accepted, as the
    Collector's ``otlphttp`` exporter counts it sent and logs the partial success) and logged with its
    ``error_message`` (escaped, redacted; a message without rejected spans is a warning, logged too), at the 1st,
    2nd, 4th, … such answer. A body larger than that, or not finished in time (an endless or trickling body),
    or broken off is left unread: the request stays counted sent (its status said accepted), the answer is
    counted in :attr:`unread` and logged the same way, and the thread goes on to the next request. A redirect
    (3xx) is not followed (urllib sent a 301/302/303 on as a ``GET`` without the body, headers included, and
    counted the page it found sent): counted failed, logged naming where it pointed, as ``otel-agents export``
    does; so is a 2xx whose body is not an ``ExportTraceServiceResponse`` (an HTML page: a proxy's or a login page),
    logged quoting its content type and start (:func:`~otel_agents.exporters._accepted.other_answer`). An empty body
    is the empty response.

    Each request goes out with this forwarder's :attr:`mark` (random) appended to its :data:`FORWARDED_HEADER`. A
    request that comes back with it (the URL leads back to this receiver: two collects forwarding to each other, a
    proxy in between) is not forwarded again: :meth:`submit` returns ``False`` (the caller has its spans already),
    counts it in :attr:`looped` and logs the first (a loop sent one request round for ever).

    Args:
        url: the endpoint's full traces URL (``http://host:4318/v1/traces``).
        headers: extra request headers (an ``Authorization`` for the backend). The URL's user info
            (``http://user:password@host``), when it has one, is sent as HTTP Basic auth instead (as the
            requests-based OTLP exporters take it), never as part of the host name.
        timeout: seconds per request (urllib's: each connect, send and receive), and for reading the answer's
            body, in all.
        max_queued: requests waiting to be sent, at most.
        max_queued_bytes: their bytes in all, at most (default :data:`MAX_PENDING_BYTES`, as the receiver's).
    """

    def __init__(self, url: str, headers: Mapping[str, str] | None = None, *, timeout: float = 10.0,
                 max_queued: int = 1000, max_queued_bytes: int = MAX_PENDING_BYTES) -> None:
        import queue
        import secrets
        import threading

        from .._spans.redaction import redact_url
        from ..exporters.presets import split_userinfo

        self.shown = redact_url(url)  # for logs and the summary: a user:password@ URL's credentials never shown
        self.url, basic = split_userinfo(url)  # urllib took user:password@host for the host name
        self.headers = dict(headers or {})
        if basic is not None:  # it wins over an Authorization header given, as in the requests-based exporters
            self.headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
            self.headers["Authorization"] = basic
        self.timeout = timeout
        self.sent = self.failed = self.dropped = 0
        self.rejected = self.unread = 0  # spans rejected by partial successes; 2xx answers whose body was not read
        self.looped = 0  # requests that came back (a loop)
        self.mark = secrets.token_hex(8)
        self._partial = 0  # answers with a partial success (for the log's 1st, 2nd, 4th, … line)
        self._unreachable: str | None = None  # why the last request's name was not looked up (logged once)
        self.max_queued_bytes = max_queued_bytes
        self._queued_bytes = 0
        self._lock = threading.Lock()
        self._queue: queue.Queue[Raw | None] = queue.Queue(maxsize=max_queued)
        self._thread = threading.Thread(target=self._run, name="otlp-forward", daemon=True)
        self._thread.start()

    def submit(self, raw: Raw) -> bool:
        """Queue one request (as received); drops it (counted) when the queue is full, in requests or bytes.
        ``False`` when it is one this forwarder sent (its :data:`FORWARDED_HEADER` holds :attr:`mark`), come back:
        not queued, counted in :attr:`looped`, logged the first time."""
        forwarded = raw[3]
        if forwarded and self.mark in (m.strip() for m in forwarded.split(",")):
            self.looped += 1
            if self.looped == 1:
                logger.warning("otel-agents collect: a request forwarded to %s came back here: a loop (that URL "
                               "leads back to this receiver); requests that come back are not forwarded or handled "
                               "again (counted in the summary)", self.shown)
            return False
        with self._lock:
            fits = self._queue.qsize() < self._queue.maxsize \
                and self._queued_bytes + len(raw[0]) <= self.max_queued_bytes
            if fits:
                self._queue.put_nowait(raw)  # only submit() puts (under the lock) until close(): there is room
                self._queued_bytes += len(raw[0])
            else:
                self.dropped += 1
        if not fits and worth_logging(self.dropped):
            logger.warning("otel-agents collect: --forward queue full, request dropped (%d so far; logged at the "
                           "1st, 2nd, 4th, 8th, … drop)", self.dropped)
        return True

    def _run(self) -> None:
        import http.client
        import urllib.error
        import urllib.request

        from ..exporters._accepted import open_unfollowed, redirect
        from ..exporters._reach import lookup_problem

        while (raw := self._queue.get()) is not None:
            body, kind, encoding, forwarded = raw
            with self._lock:
                self._queued_bytes -= len(body)
            unreachable = lookup_problem(self.url)
            if unreachable is not None:
                self.failed += 1
                if self._unreachable is None:
                    logger.warning("otel-agents collect: cannot forward to %s: %s; requests are not forwarded (counted "
                                   "failed) until it is looked up", self.shown, unreachable)
                self._unreachable = unreachable
                continue
            self._unreachable = None
            headers = {**self.headers, "Content-Type": kind,
                       FORWARDED_HEADER: f"{forwarded},{self.mark}" if forwarded else self.mark}
            if encoding:
                headers["Content-Encoding"] = encoding
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            why: object = None
            try:
                with open_unfollowed(request, self.timeout) as response:
                    why = self._answered(response)
            except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
                why = exc
                if isinstance(exc, urllib.error.HTTPError) and 300 <= exc.code < 400:
                    why = f"{redirect(exc.code, exc.headers.get('location'))}, not followed: give the URL it names"
            if why is None:
                self.sent += 1
                continue
            self.failed += 1
            if worth_logging(self.failed):
                logger.warning("otel-agents collect: forwarding to %s failed: %s (%d so far; logged at the 1st, "
                               "2nd, 4th, 8th, … failure)", self.shown, why, self.failed)

    def _answered(self, response: Any) -> str | None:
        """Read a 2xx answer (bounded) and count what its ``partial_success`` rejected, or that it was not read;
        returns why it is no OTLP answer (:func:`~otel_agents.exporters._accepted.other_answer`; the request then
        counts failed), else ``None``."""
        from .._spans.redaction import excerpt
        from ..exporters._accepted import MESSAGE_CHARS, other_answer, partial_success, read_answer

        try:
            body = read_answer(response, self.timeout)
        except ValueError as exc:
            self.unread += 1
            if worth_logging(self.unread):
                logger.warning("otel-agents collect: %s accepted a forwarded request, its answer not read (%s): "
                               "counted sent, any partial success in it unknown (%d so far; logged at the 1st, 2nd, "
                               "4th, 8th, … one)", self.shown, exc, self.unread)
            return None
        kind = response.headers.get("content-type")
        answer = partial_success(body, kind)
        if answer is None:
            return other_answer(response.status, kind, body, "an OTLP ExportTraceServiceResponse")
        rejected, message = answer
        if not (rejected or message):
            return None
        self.rejected += rejected
        self._partial += 1
        if worth_logging(self._partial):
            logger.warning("otel-agents collect: %s rejected %d span(s) of a forwarded request (partial success)%s "
                           "(%d span(s) so far; logged at the 1st, 2nd, 4th, 8th, … such answer)", self.shown,
                           rejected, f": {excerpt(message, MESSAGE_CHARS)}" if message else "", self.rejected)
        return None

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (waiting at most ``timeout`` seconds), then stop."""
        self._queue.put(None)
        self._thread.join(timeout)

    def summary(self, what: str = "--forward") -> str:
        """One line for the end of a run: ``WHAT URL: 12 request(s) sent, 1 failed, 0 dropped``, and, after a
        :meth:`close` that did not send all in time, how many were still queued (neither sent nor counted); then,
        when there were any, ``; 3 span(s) rejected by it (partial success)``, ``; 1 answer(s) not read (too
        large or too slow)`` and ``; 1 came back (a loop), not forwarded again``."""
        queued = max(0, self._queue.qsize() - 1) if self._thread.is_alive() else 0  # the stop marker not counted
        return (f"{what} {self.shown}: {self.sent} request(s) sent, {self.failed} failed, {self.dropped} dropped"
                + (f", {queued} still queued at exit (not sent)" if queued else "")
                + (f"; {self.rejected} span(s) rejected by it (partial success)" if self.rejected else "")
                + (f"; {self.unread} answer(s) not read (too large or too slow)" if self.unread else "")
                + (f"; {self.looped} came back (a loop), not forwarded again" if self.looped else ""))


def worth_logging(count: int) -> bool:
    """Whether the ``count``-th failure of a kind is logged: at powers of two, so an endpoint down for a day
    writes a few dozen lines, not one a request; the counts themselves are exact (``sent``/``failed``/``dropped``)."""
    return count & (count - 1) == 0


__all__ = ["FORWARDED_HEADER", "Forwarder", "OTLPReceiver", "TRACES_PATH", "status_reply", "worth_logging"]
