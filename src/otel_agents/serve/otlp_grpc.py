"""OTLP/gRPC for ``otel-agents ecp collect --grpc-port``: the ``TraceService/Export`` method beside OTLP/HTTP.

The OpenTelemetry Collector's ``loadbalancing`` exporter reaches its backends over OTLP/gRPC only, so with
this a collect instance can be one of its backends directly (no sidecar Collector). Served by ``grpcio``
(the ``collect-grpc`` extra) with ``opentelemetry-proto``'s generated messages. A request goes the same way as
an OTLP/HTTP protobuf body (:meth:`~.otlp.OTLPReceiver.ingest_body`: the same decoding, the same worker, the
same sink); answers follow the OTLP specification's OTLP/gRPC section
(https://opentelemetry.io/docs/specs/otlp/#otlpgrpc): ``ExportTraceServiceResponse`` with
``partial_success`` for rejected spans, ``INVALID_ARGUMENT`` for a message that is not an
``ExportTraceServiceRequest`` (the decoder's message, as the HTTP 400 says), ``UNAVAILABLE`` (retryable) at
capacity, ``UNAUTHENTICATED`` without the bearer token (``authorization`` metadata) when one is set.
Messages over 4 x the body limit are refused by gRPC itself (``RESOURCE_EXHAUSTED``); gzip is gRPC's own
compression.

Bounded as the HTTP side is, by its ``connection_timeout`` (``--connection-timeout``): a call whose message has
not arrived that long after a worker took it up is cancelled (``CANCELLED``), so silent or trickling senders
hold one of the :data:`WORKERS` threads for at most that long; a connection with no call for that long is closed
(``grpc.max_connection_idle_ms``), and one that has not finished its handshake by then too. At most
:data:`MAX_CALLS` calls are in the server at once (the rest wait for a worker), more are refused by gRPC
(``RESOURCE_EXHAUSTED``); :data:`MAX_STREAMS` per connection (HTTP/2 ``SETTINGS_MAX_CONCURRENT_STREAMS``: a
client queues the rest itself). There is no ``Host``/``Origin`` check:
browsers cannot speak gRPC; bind loopback (the default) or set a token.
"""

from __future__ import annotations

import hmac
import threading
from concurrent import futures
from typing import Any

from .otlp import DECOMPRESSED_FACTOR, OTLPReceiver

_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
WORKERS = 8  # threads that run calls
MAX_CALLS = 64  # calls in the server at once, running or waiting for a thread
MAX_STREAMS = 16  # calls at once on one connection


def serve_grpc(receiver: OTLPReceiver, host: str, port: int, auth_token: str | None = None) -> tuple[Any, int]:
    """Start a gRPC server for ``receiver`` on ``host:port`` (0 = any free port); returns ``(server, port)``.
    Stop it with ``server.stop(grace)``.

    Raises:
        RuntimeError: ``grpcio`` is not installed, or the address cannot be bound.
    """
    try:
        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    except ImportError as exc:
        raise RuntimeError("OTLP/gRPC needs grpcio: pip install 'otel-agents[collect-grpc]'") from exc
    token = f"Bearer {auth_token}".encode() if auth_token else None
    codes = {400: grpc.StatusCode.INVALID_ARGUMENT, 503: grpc.StatusCode.UNAVAILABLE}

    timeout = receiver.limits.connection_timeout

    def export(requests: Any, context: Any) -> Any:
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
            sent = dict(context.invocation_metadata()).get("authorization", "")
            if not hmac.compare_digest(sent.encode(), token):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        outcome = receiver.ingest_body(body)
        if isinstance(outcome, tuple):
            context.abort(codes.get(outcome[0], grpc.StatusCode.INTERNAL), outcome[1])
        response = trace_service_pb2.ExportTraceServiceResponse()
        if outcome.rejected:
            response.partial_success.rejected_spans = outcome.rejected
            response.partial_success.error_message = outcome.message()
        return response

    # The request arrives as bytes (no request deserializer) and is decoded as an OTLP/HTTP body is: an
    # undecodable one is INVALID_ARGUMENT naming the fault, not grpcio's logged traceback and INTERNAL.
    # Served as a client stream of which only the first message is read (the wire is the same as unary).
    service = grpc.method_handlers_generic_handler(_SERVICE, {"Export": grpc.stream_unary_rpc_method_handler(
        export, response_serializer=trace_service_pb2.ExportTraceServiceResponse.SerializeToString)})
    limit = receiver.limits.max_body * DECOMPRESSED_FACTOR
    timeout_ms = max(1, round(timeout * 1000))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="otlp-grpc"),
                         maximum_concurrent_rpcs=MAX_CALLS,
                         options=[("grpc.max_receive_message_length", limit), ("grpc.max_concurrent_streams", MAX_STREAMS),
                                  ("grpc.max_connection_idle_ms", timeout_ms),
                                  ("grpc.server_handshake_timeout_ms", timeout_ms)])
    server.add_generic_rpc_handlers((service,))
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


__all__ = ["serve_grpc"]
