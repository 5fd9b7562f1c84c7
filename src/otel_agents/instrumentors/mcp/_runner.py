"""Server side on ``mcp`` 2.x: a wrapper on ``ServerRunner._compose_server_middleware``.

``mcp`` 2.x replaced 1.x's ``Server._handle_request`` / ``RequestResponder.respond`` with a
per-connection ``ServerRunner``: its ``_on_request(dctx, method, params)`` handles every inbound request
of every server built on ``mcp.server.lowlevel.Server`` (``MCPServer`` included), on every transport,
by building the request's ``ServerRequestContext`` and awaiting ``self._compose_server_middleware(inner)``
(the server's middleware chain around the handler) with it, in the calling task; the chain returns the
wire result (a camelCase dict) or raises ``MCPError`` for a JSON-RPC error. ``_on_notify`` composes the
same chain for notifications (a context without ``request_id``: passed through).

Why there and not on ``_on_request``: a connection's ``_on_request`` is bound once, as it starts serving
(``ServerRunner.on_request`` is a ``cached_property``, and ``serve_connection`` hands the bound method to
the dispatcher), so a connection already serving when ``instrument()`` runs would keep the SDK's own
method; ``_compose_server_middleware`` is looked up on the class by every request, so requests are traced
from ``instrument()`` on, on every connection, and not after ``uninstrument()``.

The composed chain is wrapped in ours: we extract the context from ``params._meta``, open the server span
with it as parent, make the span current around the chain (the tool body's spans and any framework the tool
runs nest under it), and read the result or the error. The SDK's own ``OpenTelemetryMiddleware`` (the
chain's outermost by default) parents its span on the context in ``ctx.meta``, not on the current one, so
the chain gets a copy of the request context whose ``params._meta`` and ``meta`` carry our span's context
(baggage kept): its span, when recorded, is a child of ours, and the tool body stays under ours either way.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ..._spans import SemanticSpan, Telemetry, guard, instrumentation_enabled
from ...semconv import Kind, attributes as A
from . import _protocol as P
from ._client import _is_mcp_error

DIRECT = "direct"  # the transport kind of mcp 2.x's in-process DirectDispatcher (mcp.shared.direct_dispatcher)


class RunnerSide:
    """The ``ServerRunner._compose_server_middleware`` wrapper."""

    def __init__(self, telemetry: Telemetry, propagate: bool | None = None):
        self.telemetry = telemetry
        self.propagate = propagate

    def compose(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """The runner's chain, called as ``await chain(ctx)``, inside :meth:`serve`."""
        return functools.partial(self.serve, instance, wrapped(*args, **kwargs))

    async def serve(self, runner: Any, chain: Any, ctx: Any) -> Any:
        # A notification (no request id), or suppressed: no span, nothing read or extracted.
        if getattr(ctx, "request_id", None) is None or not instrumentation_enabled():
            return await chain(ctx)
        opened = None
        with guard("mcp.server.start"):
            opened = self._start(runner, ctx)
        if opened is None:
            return await chain(ctx)
        span, otel_ctx, ctx = opened
        token = otel_context.attach(otel_ctx)
        try:
            result = await chain(ctx)
        except BaseException as exc:
            if span is not None:
                with guard("mcp.server.error"):
                    _record_error(span, exc)
                span.end(error=None if _is_mcp_error(exc) else exc)
            raise
        finally:
            otel_context.detach(token)
        if span is not None:
            with guard("mcp.server.result"):
                _record_result(span, result)
            span.end()
        return result

    def _start(self, runner: Any, ctx: Any) -> tuple[SemanticSpan | None, Any, Any] | None:
        method = getattr(ctx, "method", None)
        if not isinstance(method, str):
            return None
        params = getattr(ctx, "params", None)
        params = params if isinstance(params, Mapping) else {}
        remote = P.extracted_context(params.get("_meta")) if P.propagating(self.propagate) else None
        # The context in params._meta is the parent (OTel MCP conventions); without one, the ambient context.
        parent = remote if remote is not None else otel_context.get_current()
        if method != P.TOOLS_CALL and method not in P.TRACED_METHODS:
            return None, parent, ctx  # no span, but the handler runs in the caller's trace and baggage
        connection = getattr(runner, "connection", None)
        attrs: dict[str, Any] = {A.MCP_METHOD_NAME: method,
                                 A.OTEL_AGENTS_MCP_SERVER_NAME: getattr(getattr(runner, "server", None), "name", None),
                                 A.MCP_PROTOCOL_VERSION: getattr(connection, "protocol_version", None),
                                 A.MCP_SESSION_ID: getattr(connection, "session_id", None)}
        # The request's dispatch context (ServerSession keeps it, privately): its transport's kind.
        dctx = getattr(getattr(ctx, "session", None), "_request_outbound", None)
        transport = getattr(getattr(dctx, "transport", None), "kind", None)
        request_id = ctx.request_id
        # In process (``mcp.Client(server)``'s DirectDispatcher) there is no JSON-RPC message: its id is the
        # dispatcher's own count, which the client never sees; the semconv's id is the JSON-RPC one.
        if isinstance(request_id, (int, str)) and transport != DIRECT:
            attrs[A.JSONRPC_REQUEST_ID] = str(request_id)
        if getattr(ctx, "request", None) is not None or transport == "streamable-http":
            attrs[A.NETWORK_TRANSPORT] = "tcp"
        target = P.target_of(method, params)
        if method == P.TOOLS_CALL:
            span = self.telemetry.start_span(Kind.TOOL, target, parent=parent, span_kind=SpanKind.SERVER,
                                             attributes=attrs)
            span.set_tool(target, arguments=params.get("arguments"))
        else:
            if method == "prompts/get":
                attrs[A.GEN_AI_PROMPT_NAME] = target
            span = self.telemetry.start_plain_span(f"{method} {target}" if target else method,
                                                   span_kind=SpanKind.SERVER, parent=parent, attributes=attrs)
            uri = params.get("uri")
            if uri is not None:
                span.set_content(A.MCP_RESOURCE_URI, str(uri))
        otel_ctx = trace.set_span_in_context(span.span, parent)
        carrier = P.context_carrier(otel_ctx)
        ctx = dataclasses.replace(ctx, params={**params, "_meta": P.with_carrier(params.get("_meta"), carrier)},
                                  meta=P.with_carrier(getattr(ctx, "meta", None), carrier))
        return span, otel_ctx, ctx


def _record_error(span: SemanticSpan, exc: BaseException) -> None:
    """A JSON-RPC error (``MCPError``): ``error.type`` and ``rpc.response.status_code`` = its code."""
    if not _is_mcp_error(exc):
        return
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    if isinstance(code, int):
        span.set_attribute(A.RPC_RESPONSE_STATUS_CODE, str(code))
        span.set_error(str(code), getattr(error, "message", None))


def _record_result(span: SemanticSpan, result: Any) -> None:
    """A ``tools/call`` result (the wire dict): ``isError`` fails the span with the error text as result."""
    if span.kind is not Kind.TOOL:
        return
    if P.is_error(result):
        text = P.error_text(result)
        span.set_tool_result(text)
        span.set_error(A.MCP_TOOL_ERROR, text)
    elif P.field(result, "content") is not None:
        span.set_tool_result(P.tool_result(result))
