"""Serve any instrumented agent over the Evaluation Context Protocol (``otel-agents ecp serve``).

Transports: stdio (one JSON-RPC object per line; the default) and Streamable
HTTP (:mod:`.http`). Each ``agent/step`` runs under its own root span and is
answered with the ECP envelope folded from that run's spans.
"""

from .jsonrpc import RPCError, handle
from .session import ECPSession
from .target import Target, TargetError, load_target

__all__ = ["ECPSession", "RPCError", "Target", "TargetError", "handle", "load_target"]
