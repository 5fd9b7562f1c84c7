"""OTLP/gRPC for ``otel-agents ecp collect --grpc-port``: the ``TraceService/Export`` method beside OTLP/HTTP.

The OpenTelemetry Collector's ``loadbalancing`` exporter reaches its backends over OTLP/gRPC only, so with
this a collect instance can be one of its backends directly (no sidecar Collector). Served by ``grpcio``
(the ``collect-grpc`` extra) with ``opentelemetry-proto``'s generated messages. A request goes the same way as
an OTLP/HTTP protobuf body (:meth:`~.otlp.OTLPReceiver.ingest_body`: the same decoding, the same worker, the
same sink); answers follow the OTLP specification's OTLP/gRPC section
(https://opentelemetry.io/docs/specs/otlp/#otlpgrpc): ``ExportTraceServiceResponse`` with
``partial_success`` for rejected spans, ``INVALID_ARGUMENT`` for a message that is not an
``ExportTraceServiceRequest`` (the decoder's message, as the HTTP 400 says), ``UNAVAILABLE`` at capacity with
a ``google.rpc.RetryInfo`` of :data:`~.otlp.RETRY_AFTER_S` seconds in the status details (the OTLP/gRPC Throttling
section: the gRPC twin of HTTP's ``Retry-After``; sent too as the ``google.rpc.retryinfo-bin`` trailer, where the
OpenTelemetry Python exporter reads it), ``UNAUTHENTICATED`` without the bearer token (``authorization``
metadata) when one is set. Messages over 4 x the body limit are refused by gRPC itself (``RESOURCE_EXHAUSTED``,
not retryable: the same message would be refused again); gzip is gRPC's own compression.

Bounded as the HTTP side is, by its ``connection_timeout`` (``--connection-timeout``): a call whose message has
not arrived that long after a worker took it up is cancelled (``CANCELLED``), so silent or trickling senders
hold a thread for at most that long; a connection with no call for that long is closed
(``grpc.max_connection_idle_ms``), and one that has not finished its handshake by then too. At most
:data:`MAX_CALLS` calls are in the server at once, each on a thread of its own; more are answered at once, by
:data:`REFUSERS` spare threads, ``UNAVAILABLE`` with ``RetryInfo``, as at capacity (gRPC's own
``maximum_concurrent_rpcs`` refusal is a bare ``RESOURCE_EXHAUSTED``, which the OTLP specification tells clients
not to retry: the Collector's exporters dropped the batch); :data:`MAX_STREAMS` per connection (HTTP/2
``SETTINGS_MAX_CONCURRENT_STREAMS``: a client queues the rest itself). There is no ``Host``/``Origin`` check:
browsers cannot speak gRPC; bind loopback (the default) or set a token.
"""

from __future__ import annotations

import threading
from concurrent import futures
from typing import Any

from .http import bearer_token_matches, check_token
from .otlp import DECOMPRESSED_FACTOR, RETRY_AFTER_S, OTLPReceiver

_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
MAX_CALLS = 64  # calls in the server at once
REFUSERS = 4  # threads beyond MAX_CALLS: a call over the limit is refused at once, never queued behind admitted ones
WORKERS = MAX_CALLS + REFUSERS  # threads that run calls (started as needed)
MAX_STREAMS = 16  # calls at once on one connection
_BUSY = "receiver at capacity: retry later"
_GRPC_MAX_INT = 2**31 - 1  # the largest message length gRPC takes (--max-body-bytes beyond: an OverflowError)


def retry_trailers(message: str, delay_s: int = RETRY_AFTER_S) -> tuple[tuple[str, bytes], ...]:
    """The trailing metadata of a retryable refusal: ``grpc-status-details-bin``, a ``google.rpc.Status``
    (``UNAVAILABLE``, ``message``) whose details hold a ``google.rpc.RetryInfo`` of ``delay_s`` seconds, as
    ``status.WithDetails`` sends it (what the Collector's exporters read), and the bare ``RetryInfo`` as
    ``google.rpc.retryinfo-bin`` (what the OpenTelemetry Python exporter reads)."""
    from google.protobuf.any_pb2 import Any as AnyMessage
    from google.protobuf.duration_pb2 import Duration
    from google.rpc.error_details_pb2 import RetryInfo
    from google.rpc.status_pb2 import Status

    retry = RetryInfo(retry_delay=Duration(seconds=delay_s))
    detail = AnyMessage()
    detail.Pack(retry)
    status = Status(code=14, message=message, details=[detail])  # 14: google.rpc.Code.UNAVAILABLE
    return ("grpc-status-details-bin", status.SerializeToString()), ("google.rpc.retryinfo-bin",
                                                                     retry.SerializeToString())


def serve_grpc(receiver: OTLPReceiver, host: str, port: int, auth_token: str | None = None) -> tuple[Any, int]:
    """Start a gRPC server for ``receiver`` on ``host:port`` (0 = any free port); returns ``(server, port)``.
    Stop it with ``server.stop(grace)``.

    Raises:
        RuntimeError: ``grpcio`` is not installed, or the address cannot be bound.
        ValueError: a token HTTP cannot carry (:func:`~.http.check_token`).
    """
    try:
        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    except ImportError as exc:
        raise RuntimeError("OTLP/gRPC needs grpcio: pip install 'otel-agents[collect-grpc]'") from exc
    token = check_token(auth_token).encode("ascii") if auth_token else None
    codes = {400: grpc.StatusCode.INVALID_ARGUMENT, 503: grpc.StatusCode.UNAVAILABLE}

    timeout = receiver.limits.connection_timeout
    calls = _Calls(MAX_CALLS)

    def busy(message: str, context: Any) -> None:
        context.set_trailing_metadata(retry_trailers(message))
        context.abort(grpc.StatusCode.UNAVAILABLE, message)

    def refuse(requests: Any, context: Any) -> Any:  # a call over MAX_CALLS: its message is not read
        receiver.count_busy()
        busy(f"{_BUSY} ({MAX_CALLS} calls in the server)", context)

    def export(requests: Any, context: Any) -> Any:
        try:
            return receive(requests, context)
        finally:
            calls.leave()

    def receive(requests: Any, context: Any) -> Any:
        # The message is read here, under a timer, not by grpcio before the call (a unary handler), which
        # waits for it with no limit in one of the worker threads.
        timer = threading.Timer(timeout, context.cancel)
        timer.daemon = True
        timer.start()
        try:  # cancelled (by the timer, the sender, or an oversized message): grpcio's own RpcError ends the call
            body = next(requests, None)
        finally:
            timer.cancel()
        if body is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no ExportTraceServiceRequest message")
        if token is not None:
            if not bearer_token_matches(dict(context.invocation_metadata()).get("authorization"), token):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        outcome = receiver.ingest_body(body)
        if isinstance(outcome, tuple) and outcome[0] == 503:
            busy(outcome[1], context)
        if isinstance(outcome, tuple):
            context.abort(codes.get(outcome[0], grpc.StatusCode.INTERNAL), outcome[1])
        response = trace_service_pb2.ExportTraceServiceResponse()
        if outcome.partial:
            response.partial_success.rejected_spans = outcome.rejected
            response.partial_success.error_message = outcome.message()
        return response

    # The request arrives as bytes (no request deserializer) and is decoded as an OTLP/HTTP body is: an
    # undecodable one is INVALID_ARGUMENT naming the fault, not grpcio's logged traceback and INTERNAL.
    # Served as a client stream of which only the first message is read (the wire is the same as unary).
    serialize = trace_service_pb2.ExportTraceServiceResponse.SerializeToString
    calls.handlers = (grpc.stream_unary_rpc_method_handler(export, response_serializer=serialize),
                      grpc.stream_unary_rpc_method_handler(refuse, response_serializer=serialize))
    limit = min(receiver.limits.max_body * DECOMPRESSED_FACTOR, _GRPC_MAX_INT)  # a channel argument is a C int
    timeout_ms = max(1, round(timeout * 1000))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="otlp-grpc"),
                         options=[("grpc.max_receive_message_length", limit), ("grpc.max_concurrent_streams", MAX_STREAMS),
                                  ("grpc.max_connection_idle_ms", timeout_ms),
                                  ("grpc.server_handshake_timeout_ms", timeout_ms)])
    server.add_generic_rpc_handlers((_generic(grpc, calls),))
    if not 0 <= port <= 65535:  # gRPC would take it modulo 65536
        raise RuntimeError(f"cannot listen on {host}:{port} (gRPC): the port is not 0-65535")
    try:
        bound = server.add_insecure_port(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    except RuntimeError as exc:
        raise RuntimeError(f"cannot listen on {host}:{port} (gRPC): {exc}") from None
    if not bound:
        raise RuntimeError(f"cannot listen on {host}:{port} (gRPC)")
    server.start()
    return server, bound


class _Calls:
    """Admission of ``Export`` calls: at most ``limit`` in the server (running or waiting for a worker thread).
    :meth:`enter` runs in gRPC's polling thread as a call arrives (the handler it picks), :meth:`leave` when an
    admitted call's handler ends (it always runs once picked: gRPC has no limit of its own here)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.inside = 0
        self.handlers: tuple[Any, Any] = (None, None)  # (export, refuse)
        self._lock = threading.Lock()

    def enter(self) -> Any:
        with self._lock:
            if self.inside >= self.limit:
                return self.handlers[1]
            self.inside += 1
            return self.handlers[0]

    def leave(self) -> None:
        with self._lock:
            self.inside -= 1


def _generic(grpc: Any, calls: _Calls) -> Any:
    """The service's handler: ``Export`` through :class:`_Calls`, nothing else (gRPC answers ``UNIMPLEMENTED``)."""
    method = f"/{_SERVICE}/Export"

    class Handler(grpc.GenericRpcHandler):
        def service(self, handler_call_details: Any) -> Any:
            return calls.enter() if handler_call_details.method == method else None

    return Handler()


__all__ = ["retry_trailers", "serve_grpc"]
