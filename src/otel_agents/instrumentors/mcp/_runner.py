"""Server side on ``mcp`` 2.x: a wrapper on ``ServerRunner._on_request``.

``mcp`` 2.x replaced 1.x's ``Server._handle_request`` / ``RequestResponder.respond`` with a
per-connection ``ServerRunner`` whose ``_on_request(dctx, method, params)`` handles every inbound
request of every server built on ``mcp.server.lowlevel.Server`` (``MCPServer`` included), on
every transport: it runs the middleware chain and the handler in the calling task and returns
the wire result (a camelCase dict), or raises ``MCPError`` for a JSON-RPC error. We extract the
context from ``params._meta`` there, open the server span with it as parent, make the span
current around the call (the tool body's spans and any framework the tool runs nest under it), and
read the result or the error. The SDK's own ``OpenTelemetryMiddleware`` parents its span on the
context in ``params._meta``, not on the current one, so the rest of the chain gets a copy of
``params`` whose ``_meta`` carries our span's context (baggage kept): its span, when recorded,
is a child of ours, and the tool body stays under ours either way.
"""

from __future__ import annotations

from typing import Any, Mapping

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ..._spans import SemanticSpan, Telemetry, guard, instrumentation_enabled
from ...semconv import Kind, attributes as A
from . import _protocol as P
from ._client import _is_mcp_error

DIRECT = "direct"  # the transport kind of mcp 2.x's in-process DirectDispatcher (mcp.shared.direct_dispatcher)


class RunnerSide:
    """The ``ServerRunner._on_request`` wrapper."""

    def __init__(self, telemetry: Telemetry, propagate: bool | None = None):
        self.telemetry = telemetry
        self.propagate = propagate

    async def on_request(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():  # suppressed: no span, nothing read or extracted
            return await wrapped(*args, **kwargs)
        opened = None
        with guard("mcp.server.start"):
            opened = self._start(instance, args, kwargs)
        if opened is None:
            return await wrapped(*args, **kwargs)
        span, ctx, args, kwargs = opened
        token = otel_context.attach(ctx)
        try:
            result = await wrapped(*args, **kwargs)
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

    def _start(self, runner: Any, args: tuple, kwargs: dict) -> tuple[SemanticSpan | None, Any, tuple, dict] | None:
        dctx = kwargs.get("dctx", args[0] if args else None)
        method = kwargs.get("method", args[1] if len(args) > 1 else None)
        params = kwargs.get("params", args[2] if len(args) > 2 else None)
        if not isinstance(method, str):
            return None
        params = params if isinstance(params, Mapping) else {}
        remote = P.extracted_context(params.get("_meta")) if P.propagating(self.propagate) else None
        # The context in params._meta is the parent (OTel MCP conventions); without one, the ambient context.
        parent = remote if remote is not None else otel_context.get_current()
        if method != P.TOOLS_CALL and method not in P.TRACED_METHODS:
            return None, parent, args, kwargs  # no span, but the handler runs in the caller's trace and baggage
        connection = getattr(runner, "connection", None)
        attrs: dict[str, Any] = {A.MCP_METHOD_NAME: method,
                                 A.OTEL_AGENTS_MCP_SERVER_NAME: getattr(getattr(runner, "server", None), "name", None),
                                 A.MCP_PROTOCOL_VERSION: getattr(connection, "protocol_version", None),
                                 A.MCP_SESSION_ID: getattr(connection, "session_id", None)}
        transport = getattr(getattr(dctx, "transport", None), "kind", None)
        request_id = getattr(dctx, "request_id", None)
        # In process (``mcp.Client(server)``'s DirectDispatcher) there is no JSON-RPC message: its id is the
        # dispatcher's own count, which the client never sees; the semconv's id is the JSON-RPC one.
        if isinstance(request_id, (int, str)) and transport != DIRECT:
            attrs[A.JSONRPC_REQUEST_ID] = str(request_id)
        http_request = getattr(getattr(dctx, "message_metadata", None), "request_context", None)
        if http_request is not None or transport == "streamable-http":
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
        ctx = trace.set_span_in_context(span.span, parent)
        params = P.with_meta_context(params, ctx)
        if "params" in kwargs:
            kwargs = dict(kwargs, params=params)
        else:
            args = (*args[:2], params, *args[3:])
        return span, ctx, args, kwargs


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
