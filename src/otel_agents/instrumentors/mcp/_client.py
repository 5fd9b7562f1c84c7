"""Client side: one wrapper on the SDK's ``send_request``, for ``ClientSession`` requests, and one on
``ClientSession.call_tool``, whose bare calls get their tool span there (:meth:`ClientSide.call_tool`).

Every request a ``ClientSession`` sends (``call_tool``, ``list_tools``, ``read_resource``,
``get_prompt``…, and any request sent with ``send_request`` directly) goes through
``send_request`` (``BaseSession.send_request`` in ``mcp`` 1.x, ``ClientSession.send_request`` in
2.x): the one place that sees the method, the params and the result or the JSON-RPC error. The
JSON-RPC id is the session's next ``_request_id`` in 1.x; in 2.x the session's dispatcher assigns it
inside the call (``JSONRPCDispatcher._allocate_id``, wrapped by :func:`allocate_id`).
"""

from __future__ import annotations

import contextvars
import weakref
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ..._spans import SemanticSpan, Telemetry, guard, in_forked_child, instrumentation_enabled, semantic_span_for
from ...semconv import Kind, attributes as A
from . import _protocol as P
from ._transport import session_id_for

# mcp 2.x: the JSON-RPC id the dispatcher allocates for the request this task is sending.
_ALLOCATED: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("otel_agents_mcp_request_id",
                                                                               default=None)


def allocate_id(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """Wrapper of ``mcp`` 2.x's ``JSONRPCDispatcher._allocate_id()``: hand the id to the request being sent."""
    request_id = wrapped(*args, **kwargs)
    holder = _ALLOCATED.get()
    if holder is not None and not holder:
        holder.append(request_id)
    return request_id


@dataclass
class Peer:
    """What one client session learnt from the server's ``initialize`` result."""

    protocol_version: str | None = None
    server_name: str | None = None


class ClientSide:
    """The ``send_request`` wrapper and the per-session facts it records (weakly keyed: bounded
    by the sessions alive)."""

    def __init__(self, telemetry: Telemetry, client_session_cls: type, propagate: bool | None = None):
        self.telemetry = telemetry
        self.propagate = propagate
        self.client_session_cls = client_session_cls
        self.peers: "weakref.WeakKeyDictionary[Any, Peer]" = weakref.WeakKeyDictionary()
        self.enriched: "weakref.WeakSet[SemanticSpan]" = weakref.WeakSet()
        in_forked_child(lambda side: side.enriched.clear(), self)  # the parent's tool spans are its own

    async def send_request(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():  # suppressed: no span, no context injected (as OTel's HTTP clients)
            return await self._suppressed(wrapped, instance, args, kwargs)
        if not isinstance(instance, self.client_session_cls):  # a server's request to its client
            with guard("mcp.server.sampling_context"):
                args, kwargs = self._server_request(args, kwargs)
            return await wrapped(*args, **kwargs)
        call = None
        with guard("mcp.client.start"):
            call = self._start(instance, args, kwargs)
        if call is None:
            return await wrapped(*args, **kwargs)
        span, owned, ctx, args, kwargs = call
        allocated: list[Any] = []
        holder = _ALLOCATED.set(allocated)
        # Our span current during the call (the context injected): an SDK that traces itself (mcp 2.x) opens
        # its span under it.
        token = otel_context.attach(ctx) if owned and span is not None else None
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            with guard("mcp.client.error"):
                self._allocated(span, allocated)
                self._failed(span, exc)
            if owned:
                span.end(error=exc if not _is_mcp_error(exc) else None)
            raise
        finally:
            if token is not None:
                otel_context.detach(token)
            _ALLOCATED.reset(holder)
        with guard("mcp.client.request_id"):
            self._allocated(span, allocated)
        with guard("mcp.client.result"):
            self._succeeded(instance, span, result)
        if owned:
            span.end()
        return result

    async def call_tool(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``ClientSession.call_tool(name, arguments, ...)`` called bare (no framework tool span of that name
        current): our ``tool`` span around the whole call, which ``send_request`` then fills as it fills a
        framework's. The call is more than its ``tools/call`` request: the SDK validates the result against the
        tool's output schema, sending ``tools/list`` first when it has not listed the tool yet (that listing nests
        under the call instead of starting a trace of its own), and a result that fails the schema raises from
        the call (the span fails with it)."""
        span = None
        if instrumentation_enabled() and isinstance(instance, self.client_session_cls):
            with guard("mcp.client.call_tool"):
                name = args[0] if args else kwargs.get("name")
                if isinstance(name, str) and self._enrichable(name) is None:
                    arguments = args[1] if len(args) > 1 else kwargs.get("arguments")
                    span = self.telemetry.start_span(Kind.TOOL, name, span_kind=SpanKind.CLIENT)
                    span.set_tool(name, arguments=arguments)
        if span is None:
            return await wrapped(*args, **kwargs)
        token = otel_context.attach(trace.set_span_in_context(span.span))
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as exc:
            span.end(error=exc if not _is_mcp_error(exc) else None)  # an MCP error: send_request set its code
            raise
        finally:
            otel_context.detach(token)
            self.enriched.discard(span)  # ours, ended here: nothing to hold (send_request noted it enriched)
        span.end()
        return result

    def sdk_injection(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """Wrapper of ``mcp`` 2.x's own context injection (``inject_trace_context(meta)``, SEP-414), which its
        JSON-RPC dispatcher runs on every outgoing request's ``_meta``, instrumented or not: skipped with
        propagation off, so no ``traceparent``, ``tracestate`` or ``baggage`` leaves the process then."""
        if not P.propagating(self.propagate):
            return None
        return wrapped(*args, **kwargs)

    async def _suppressed(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """The request under ``suppress_instrumentation()``: sent as it is, except that with propagation
        off a context a library put in ``params._meta`` is still taken out (no context leaves the process);
        the ``initialize`` result is still read, so later requests of the session know their peer."""
        if isinstance(instance, self.client_session_cls) and not P.propagating(self.propagate):
            with guard("mcp.client.suppressed"):
                in_kwargs = "request" in kwargs
                request = P.without_trace_context(kwargs["request"] if in_kwargs else args[0])
                args, kwargs = ((args, dict(kwargs, request=request)) if in_kwargs else ((request, *args[1:]), kwargs))
        result = await wrapped(*args, **kwargs)
        if type(result).__name__ == "InitializeResult" and isinstance(instance, self.client_session_cls):
            with guard("mcp.client.result"):
                self._succeeded(instance, None, result)
        return result

    def _server_request(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """A server's ``sampling/createMessage`` carries the current context (its ``tools/call`` span while the
        tool runs) in ``params._meta``: the client's model span of it (:mod:`._sampling`) goes under it."""
        in_kwargs = "request" in kwargs
        request = kwargs["request"] if in_kwargs else args[0]
        if P.method_of(request) != "sampling/createMessage" or not P.propagating(self.propagate):
            return args, kwargs
        request = P.with_trace_context(request, otel_context.get_current())
        if in_kwargs:
            return args, dict(kwargs, request=request)
        return (request, *args[1:]), kwargs

    # -- start ----------------------------------------------------------------------------
    def _start(self, session: Any, args: tuple, kwargs: dict
               ) -> tuple[SemanticSpan | None, bool, otel_context.Context, tuple, dict] | None:
        args = list(args)  # type: ignore[assignment]
        in_kwargs = "request" in kwargs
        request = kwargs["request"] if in_kwargs else args[0]
        root, method, params = P.request_parts(request)
        if method is None:
            return None
        span: SemanticSpan | None = None
        owned = False
        if method == P.TOOLS_CALL:
            name = P.target_of(method, params)
            span = self._enrichable(name)
            if span is not None:
                self.enriched.add(span)
                span.set_attributes(self._attributes(session, method))
            else:
                span = self.telemetry.start_span(Kind.TOOL, name, span_kind=SpanKind.CLIENT,
                                                 attributes=self._attributes(session, method))
                span.set_tool(name, arguments=getattr(params, "arguments", None))
                owned = True
        elif method in P.TRACED_METHODS:
            attrs = self._attributes(session, method)
            target = P.target_of(method, params)
            if method == "prompts/get":
                attrs[A.GEN_AI_PROMPT_NAME] = target
            span = self.telemetry.start_plain_span(f"{method} {target}" if target else method,
                                                   span_kind=SpanKind.CLIENT, attributes=attrs)
            uri = P.field(params, "uri")
            if uri is not None:
                span.set_content(A.MCP_RESOURCE_URI, str(uri))  # a URI can name user data: content
            owned = True
        # The server's span goes under ours; enriched (or untraced), under what is current: the
        # framework's tool span, or an application span the tool opened inside it.
        ctx = trace.set_span_in_context(span.span) if owned and span is not None else otel_context.get_current()
        try:
            if P.propagating(self.propagate):
                request = P.with_trace_context(request, ctx, root)
            else:
                request = P.without_trace_context(request)
        except Exception:
            if owned and span is not None:
                span.end()
            raise
        if in_kwargs:
            kwargs = dict(kwargs, request=request)
        else:
            args[0] = request  # type: ignore[index]
        return span, owned, ctx, tuple(args), kwargs

    def _attributes(self, session: Any, method: str) -> dict[str, Any]:
        """The span attributes of a request ``session`` is about to send (read only for a request that gets a span:
        not for ``initialize``, ``ping``…)."""
        request_id = getattr(session, "_request_id", None)  # mcp 1.x: the id send_request is about to use
        peer = self.peers.get(session) or _negotiated(session)
        attrs: dict[str, Any] = {A.MCP_METHOD_NAME: method}
        if isinstance(request_id, (int, str)):
            attrs[A.JSONRPC_REQUEST_ID] = str(request_id)
        if peer is not None:
            attrs[A.MCP_PROTOCOL_VERSION] = peer.protocol_version
            attrs[A.OTEL_AGENTS_MCP_SERVER_NAME] = peer.server_name
        session_id = _session_id(session)
        if session_id:
            attrs[A.MCP_SESSION_ID] = session_id
        return attrs

    def _enrichable(self, name: str | None) -> SemanticSpan | None:
        """The framework's ``tool`` span this ``tools/call`` is made for, if one is open here:
        the current span's (or its direct parent's) semantic span, a tool span not enriched yet,
        named after this tool (a toolset may prefix the name and a separator: ``support_lookup_order``;
        a tool ``reorder`` calling the MCP tool ``order`` is another call)."""
        outer = semantic_span_for(trace.get_current_span())
        if outer is None or outer.kind is not Kind.TOOL or outer.ended or outer in self.enriched:
            return None
        tool = outer.name[len("execute_tool "):] if outer.name.startswith("execute_tool ") else outer.name
        if name and tool != name and not (tool.endswith(name) and not tool[-len(name) - 1].isalnum()):
            return None
        return outer

    # -- end ------------------------------------------------------------------------------
    @staticmethod
    def _allocated(span: SemanticSpan | None, allocated: list[Any]) -> None:
        if span is not None and allocated and isinstance(allocated[0], (int, str)):
            span.set_attribute(A.JSONRPC_REQUEST_ID, str(allocated[0]))

    def _succeeded(self, session: Any, span: SemanticSpan | None, result: Any) -> None:
        if type(result).__name__ == "InitializeResult":
            info = P.field(result, "server_info", "serverInfo")
            self.peers[session] = Peer(P.field(result, "protocol_version", "protocolVersion"),
                                       getattr(info, "name", None))
            return
        if span is None or span.kind is not Kind.TOOL:
            return
        if P.is_error(result):
            text = P.error_text(result)
            span.set_tool_result(text)
            span.set_error(A.MCP_TOOL_ERROR, text)
        elif span.records_content:  # the result is content: not converted to be dropped
            span.set_tool_result(P.tool_result(result))

    def _failed(self, span: SemanticSpan | None, exc: BaseException) -> None:
        if span is None or not _is_mcp_error(exc):
            return
        error = getattr(exc, "error", None)
        code = getattr(error, "code", None)
        if code is None:
            return
        message = getattr(error, "message", None)
        if not _raised_here(exc, code, message):  # the peer's JSON-RPC error response, with its code
            span.set_attribute(A.RPC_RESPONSE_STATUS_CODE, str(code))
        span.set_error(str(code), message)


_CONNECTION_CLOSED = -32000  # mcp.types.CONNECTION_CLOSED (1.x and 2.x), with the message "Connection closed"


def _raised_here(exc: BaseException, code: Any, message: Any) -> bool:
    """Whether an ``McpError`` is the client session's own, with no response behind it: its read timeout (raised
    while the ``TimeoutError`` is handled: code 408 in 1.x, ``REQUEST_TIMEOUT`` -32001 in 2.x) or the connection
    closing under the request (``CONNECTION_CLOSED``). Its code is the SDK's, not a ``rpc.response.status_code``."""
    return isinstance(exc.__context__, TimeoutError) or (code == _CONNECTION_CLOSED and message == "Connection closed")


def _is_mcp_error(exc: BaseException) -> bool:
    """An ``McpError`` (a JSON-RPC error response), recognised without importing ``mcp``."""
    return any(c.__name__ in ("McpError", "MCPError") and c.__module__.startswith("mcp.") for c in type(exc).__mro__)


def _negotiated(session: Any) -> Peer | None:
    """``mcp`` 2.x: the session's own negotiated state (``protocol_version``, ``server_info``), which it
    also has after the 2026 revision's ``server/discover`` (no ``initialize``); ``None`` in 1.x or before."""
    version = getattr(session, "protocol_version", None)
    if not isinstance(version, str):
        return None
    return Peer(version, getattr(getattr(session, "server_info", None), "name", None))


def _session_id(session: Any) -> str | None:
    """The Streamable HTTP session id of ``session`` when the transport made one (see ``_transport``)."""
    return session_id_for(session)
