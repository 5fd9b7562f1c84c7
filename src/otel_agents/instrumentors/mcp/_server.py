"""Server side: a wrapper on the low-level ``Server._handle_request`` and on ``RequestResponder.respond``.

``Server._handle_request(message, req, session, lifespan_context, raise_exceptions)`` is the
SDK's request dispatch: every request of every server built on ``mcp.server.lowlevel.Server``
(``FastMCP`` included) runs its handler inside it, in the task that then answers with
``message.respond(response)``. We extract the context from ``params._meta`` there, open the
server span with it as parent, make the span current around the handler (so the tool body's
own spans, and any framework the tool runs, nest under it), and read the answer — a result,
an ``isError`` result or a JSON-RPC error — when ``respond`` is called in the same task.
"""

from __future__ import annotations

import contextvars
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ..._spans import SemanticSpan, Telemetry, guard, instrumentation_enabled
from ...semconv import Kind, attributes as A
from . import _protocol as P

# (responder, span) of the request being handled in this task.
_SERVING: contextvars.ContextVar[tuple[Any, SemanticSpan] | None] = contextvars.ContextVar(
    "otel_agents_mcp_serving", default=None)


class ServerSide:
    """The two server-side wrappers."""

    def __init__(self, telemetry: Telemetry, propagate: bool | None = None):
        self.telemetry = telemetry
        self.propagate = propagate

    async def handle_request(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():  # suppressed: no span, nothing read or extracted
            return await wrapped(*args, **kwargs)
        opened = None
        with guard("mcp.server.start"):
            opened = self._start(instance, args, kwargs)
        if opened is None:
            return await wrapped(*args, **kwargs)
        span, ctx, message = opened
        token = otel_context.attach(ctx)
        serving = _SERVING.set((message, span) if span is not None else None)
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            if span is not None:
                span.end(error=exc)
            raise
        finally:
            _SERVING.reset(serving)
            otel_context.detach(token)
            if span is not None:
                span.end()

    async def respond(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        serving = _SERVING.get()
        if serving is not None and serving[0] is instance:
            with guard("mcp.server.respond"):
                _record_response(serving[1], kwargs.get("response", args[0] if args else None))
        return await wrapped(*args, **kwargs)

    def _start(self, server: Any, args: tuple, kwargs: dict) -> tuple[SemanticSpan | None, Any, Any] | None:
        message = kwargs.get("message", args[0] if args else None)
        req = kwargs.get("req", args[1] if len(args) > 1 else None)
        session = kwargs.get("session", args[2] if len(args) > 2 else None)
        _, method, params = P.request_parts(req)
        if message is None or method is None:
            return None
        remote = P.extracted_context(getattr(message, "request_meta", None)) if P.propagating(self.propagate) else None
        # The context in params._meta is the parent (OTel MCP conventions); without one, the ambient context.
        parent = remote if remote is not None else otel_context.get_current()
        if method != P.TOOLS_CALL and method not in P.TRACED_METHODS:
            return None, parent, message  # no span, but the handler runs in the caller's trace and baggage
        attrs: dict[str, Any] = {A.MCP_METHOD_NAME: method,
                                 A.OTEL_AGENTS_MCP_SERVER_NAME: getattr(server, "name", None)}
        request_id = getattr(message, "request_id", None)
        if isinstance(request_id, (int, str)):
            attrs[A.JSONRPC_REQUEST_ID] = str(request_id)
        client_params = getattr(session, "client_params", None)
        attrs[A.MCP_PROTOCOL_VERSION] = P.negotiated_version(getattr(client_params, "protocolVersion", None))
        http_request = getattr(getattr(message, "message_metadata", None), "request_context", None)
        headers = getattr(http_request, "headers", None)
        if headers is not None:
            attrs[A.MCP_SESSION_ID] = headers.get("mcp-session-id")
            attrs[A.NETWORK_TRANSPORT] = "tcp"
        target = P.target_of(method, params)
        if method == P.TOOLS_CALL:
            span = self.telemetry.start_span(Kind.TOOL, target, parent=parent, span_kind=SpanKind.SERVER,
                                             attributes=attrs)
            span.set_tool(target, arguments=getattr(params, "arguments", None))
        else:
            if method == "prompts/get":
                attrs[A.GEN_AI_PROMPT_NAME] = target
            span = self.telemetry.start_plain_span(f"{method} {target}" if target else method,
                                                   span_kind=SpanKind.SERVER, parent=parent, attributes=attrs)
            uri = P.field(params, "uri")
            if uri is not None:
                span.set_content(A.MCP_RESOURCE_URI, str(uri))
        return span, trace.set_span_in_context(span.span, parent), message


def _record_response(span: SemanticSpan, response: Any) -> None:
    """The answer of the request: a JSON-RPC error (``ErrorData``), or a ``ServerResult``."""
    code = P.field(response, "code")  # absent from a ServerResult: read without pydantic's AttributeError
    if isinstance(code, int) and hasattr(response, "message"):
        span.set_attribute(A.RPC_RESPONSE_STATUS_CODE, str(code))
        span.set_error(str(code), response.message)
        return
    if span.kind is not Kind.TOOL:
        return
    result = getattr(response, "root", response)
    if P.is_error(result):
        text = P.error_text(result)
        span.set_tool_result(text)
        span.set_error(A.MCP_TOOL_ERROR, text)
    elif span.records_content and hasattr(result, "content"):  # content: not converted to be dropped
        span.set_tool_result(P.tool_result(result))
