"""``MCPInstrumentor``: the ``BaseInstrumentor`` entry point (imports ``mcp`` only in ``_install``)."""

from __future__ import annotations

from typing import Any

from ..._spans import Telemetry, guard
from .._base import OtelAgentsInstrumentor
from .._patch import Patch  # a wrapt wrapper that comes off exactly


class MCPInstrumentor(OtelAgentsInstrumentor):
    """Instruments the ``mcp`` Python SDK, client and server; see :mod:`otel_agents.instrumentors.mcp`.

    ``instrument(tracer_provider=None, meter_provider=None, capture_content=None,
    settings=None, propagate=None)``; ``propagate=False`` sends and takes no trace context in
    ``params._meta`` (``None``: ``OTEL_AGENTS_MCP_PROPAGATE``, default on). ``uninstrument()``
    restores the SDK exactly.
    """

    framework = "mcp"
    _patches: list[Patch]
    _propagate: bool | None = None
    _client: Any = None

    def open_runs(self) -> int:
        """How many spans the client side holds now: the framework tool spans it enriched (kept weakly)."""
        return len(self._client.enriched) if self._client is not None else 0

    def _instrument(self, **kwargs: Any) -> None:
        propagate = kwargs.get("propagate")
        self._propagate = None if propagate is None else bool(propagate)
        super()._instrument(**kwargs)

    def _install(self, telemetry: Telemetry) -> None:
        from mcp.client.session import ClientSession

        from . import _fastmcp, _sdk_spans
        from ._client import ClientSide
        from ._transport import post_writer

        client = self._client = ClientSide(telemetry, ClientSession, self._propagate)
        self._patches = []
        try:  # all or nothing: a renamed attribute leaves the SDK untouched
            for owner, name, wrapper in self._hooks(telemetry, client):
                self._patches.append(Patch(owner, name, wrapper))
        except Exception:
            self._remove()
            raise
        with guard("mcp.install.call_tool"):  # optional: without it a bare call's span is its tools/call request
            self._patches.append(Patch(ClientSession, "call_tool", client.call_tool))
        with guard("mcp.install.streamable_http"):  # optional: only mcp.session.id on the client needs it
            from mcp.client.streamable_http import StreamableHTTPTransport

            self._patches.append(Patch(StreamableHTTPTransport, "post_writer", post_writer))
        with guard("mcp.install.fastmcp"):  # FastMCP's own client spans off: its requests get ours
            _fastmcp.silence()
        with guard("mcp.install.sdk_spans"):  # mcp 2.x's own spans off: its requests get ours
            _sdk_spans.silence()
        with guard("mcp.install.sampling"):  # optional: the client's sampling callback as a model span
            from mcp.client import session as client_session

            from ._sampling import SamplingSide

            default = getattr(client_session, "_default_sampling_callback", None)
            if default is not None:
                self._sampling = SamplingSide(telemetry, self._propagate, default)
                self._patches.append(Patch(ClientSession, "__init__", self._sampling.init))
                # where a server's request reaches the session: 1.x, and 2.x (its callbacks' one dispatch)
                for name in ("_received_request", "dispatch_input_request"):
                    if name in ClientSession.__dict__:
                        self._patches.append(Patch(ClientSession, name, self._sampling.received))

    def _hooks(self, telemetry: Telemetry, client: Any) -> list[tuple[Any, str, Any]]:
        """(owner, attribute, wrapper) of each hook: 1.x's session and low-level server, or 2.x's
        client session, dispatcher (its id allocation, and its own context injection, as the module
        ``mcp.shared.jsonrpc_dispatcher`` names it) and per-connection server runner."""
        try:
            from mcp.shared.session import BaseSession, RequestResponder
        except ImportError:  # mcp 2.x
            from mcp.client.session import ClientSession
            from mcp.server.runner import ServerRunner
            from mcp.shared import jsonrpc_dispatcher
            from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

            from ._client import allocate_id
            from ._runner import RunnerSide

            return [(ClientSession, "send_request", client.send_request),
                    (JSONRPCDispatcher, "_allocate_id", allocate_id),
                    (jsonrpc_dispatcher, "inject_trace_context", client.sdk_injection),
                    (ServerRunner, "_compose_server_middleware", RunnerSide(telemetry, self._propagate).compose)]
        from mcp.server.lowlevel.server import Server

        from ._server import ServerSide

        server = ServerSide(telemetry, self._propagate)
        return [(BaseSession, "send_request", client.send_request),
                (Server, "_handle_request", server.handle_request),
                (RequestResponder, "respond", server.respond)]

    def _remove(self) -> None:
        from . import _fastmcp, _sdk_spans

        _fastmcp.restore()
        _sdk_spans.restore()
        sampling = getattr(self, "_sampling", None)
        if sampling is not None:
            sampling.active = False  # callbacks already wrapped only call through
            self._sampling = None
        for patch in getattr(self, "_patches", ()):
            patch.remove()
        self._patches = []
        self._client = None
