"""Serve any instrumented agent over the Evaluation Context Protocol (``otel-agents ecp serve``).

Transports: stdio (one JSON-RPC object per line; the default) and Streamable
HTTP (:mod:`.http`). Each ``agent/step`` runs under its own root span and is
answered with the ECP envelope folded from that run's spans. The agent runs in a
worker thread (:mod:`.worker`) under a step timeout; HTTP clients get sessions
(:mod:`.sessions`).

``otel-agents ecp collect`` and ``ecp serve --collect`` receive OTLP: :mod:`.otlp` (OTLP/HTTP, behind
the same :class:`~.http.HTTPGate` checks) and :mod:`.otlp_grpc` (OTLP/gRPC).
"""

from .jsonrpc import RPCError, handle
from .session import ECPSession
from .sessions import SessionManager
from .target import Target, TargetError, load_target

__all__ = ["ECPSession", "RPCError", "SessionManager", "Target", "TargetError", "handle", "load_target"]
