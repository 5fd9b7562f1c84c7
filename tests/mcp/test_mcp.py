"""The MCP instrumentor with the real ``mcp`` SDK: client and server in one test (stdio child
process, Streamable HTTP on loopback), cases MCP-1 and MCP-2 of ../shared/cases/agents-sdk-clients-mcp.md."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

import pytest
from opentelemetry import baggage, context, trace
from opentelemetry.trace import StatusCode

from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json
from tests.mcp.harness import (IN_PROCESS_MODES, MCP2, http_server, http_session, in_process_client, server_spans,
                               stdio_session)
from tests.mcp.server_app import server_class
from tests.spans import SpanSnapshot

pytestmark = pytest.mark.timeout(120)



def is_error(result: Any) -> bool:
    """``CallToolResult.isError`` (1.x), ``.is_error`` (2.x)."""
    return bool(getattr(result, "is_error", getattr(result, "isError", None)))


def tool_spans(spans: list[SpanSnapshot]) -> list[SpanSnapshot]:
    return [s for s in spans if s.semantic_kind == "tool"]


def one(spans: list[SpanSnapshot], name: str) -> SpanSnapshot:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def assert_joined(client: SpanSnapshot, server: list[SpanSnapshot], app: SpanSnapshot) -> SpanSnapshot:
    """The client's tool span is under the application span; the server's is its child, same trace,
    with the tool body's ``db.query`` under it."""
    assert client.parent_id == app.span_id and client.kind == "CLIENT"
    served = one(server, "execute_tool lookup_order")
    assert served.semantic_kind == "tool" and served.kind == "SERVER"
    assert served.trace_id == client.trace_id == app.trace_id
    assert served.parent_id == client.span_id
    db = one(server, "db.query")
    assert db.parent_id == served.span_id and db.trace_id == app.trace_id
    assert db.attributes["baggage.user.id"] == "ann"  # baggage travelled in params._meta too
    for span in (client, served):
        assert span.attributes["mcp.method.name"] == "tools/call"
        assert span.attributes["gen_ai.tool.name"] == "lookup_order"
        assert span.attributes["mcp.protocol.version"]
        assert span.attributes["otel_agents.mcp.server.name"] == "orders"
    assert client.attributes["jsonrpc.request.id"] == served.attributes["jsonrpc.request.id"]
    return served


async def call_lookup(session: Any, app_tracer: Any) -> None:
    token = context.attach(baggage.set_baggage("user.id", "ann"))
    try:
        with app_tracer.start_as_current_span("app"):
            result = await session.call_tool("lookup_order", {"order_id": "A100"})
            assert not is_error(result)
    finally:
        context.detach(token)


async def test_mcp1_a_stdio_one_trace_one_tool_span_per_side(instrument, exporter, app_tracer, spans_file,
                                                            client_file) -> None:
    """MCP-1 (a) over stdio: one client tool span under the application span; the server's
    ``tools/call`` span is its child through ``params._meta``; ``db.query`` under that."""
    instrument()
    async with stdio_session(spans_file) as session:
        await call_lookup(session, app_tracer)
    client, server = exporter.spans, server_spans(spans_file)
    app = one(client, "app")
    calls = tool_spans(client)
    assert len(calls) == 1 and calls[0].name == "execute_tool lookup_order"
    assert calls[0].json_attr("gen_ai.tool.call.arguments") == {"order_id": "A100"}
    assert "wireless headphones" in calls[0].attributes["gen_ai.tool.call.result"]
    assert len(tool_spans(server)) == 1
    served = assert_joined(calls[0], server, app)
    assert served.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A100"}

    # The fold of the merged trace: one call, attributed with the server's name; the server's side nests.
    envelope, = merged_fold(client_file, spans_file)
    assert [(c["name"], c["server"], c["status"]) for c in envelope["tool_calls"]] == [("lookup_order", "orders", "ok")]
    assert envelope["evaluation_context"].count("tool lookup_order") == 1


def merged_fold(*files: Any) -> list[dict[str, Any]]:
    """The ECP envelopes of the client's and the server's trace files folded together."""
    return fold([s for f in files for s in read_otlp_json(f)])


async def test_mcp1_a_streamable_http_one_trace_and_session_id(instrument, exporter, app_tracer, spans_file) -> None:
    """MCP-1 (a) over Streamable HTTP on 127.0.0.1: the same tree, and ``mcp.session.id`` on both sides."""
    instrument()
    with http_server(spans_file) as url:
        async with http_session(url) as session:
            await call_lookup(session, app_tracer)
    client, server = exporter.spans, server_spans(spans_file)
    calls = tool_spans(client)
    assert len(calls) == 1
    served = assert_joined(calls[0], server, one(client, "app"))
    assert calls[0].attributes["mcp.session.id"] == served.attributes["mcp.session.id"]
    assert served.attributes["network.transport"] == "tcp"


async def test_a_tool_served_by_calling_another_servers_tool_is_two_calls(instrument, exporter, app_tracer,
                                                                            spans_file, client_file,
                                                                            tmp_path) -> None:
    """A chain of MCP servers over Streamable HTTP (three processes): the front server's ``relay_lookup`` calls the
    orders server's ``lookup_order``. One trace; each server's span under its client's; folded, both calls are in
    ``tool_calls`` and on a ``tool`` line, the inner one nested under the outer (before, the front server's call
    of ``lookup_order`` was taken for the serving side of ``relay_lookup``: the inner call was gone)."""
    instrument()
    behind = tmp_path / "behind-spans.jsonl"
    with http_server(behind) as orders_url, http_server(spans_file, extra={"MCP_TEST_RELAY_URL": orders_url}) as url:
        async with http_session(url) as session:
            with app_tracer.start_as_current_span("app"):
                result = await session.call_tool("relay_lookup", {"order_id": "A100"})
    assert not is_error(result) and "wireless headphones" in result.content[0].text
    outer, = tool_spans(exporter.spans)
    front = tool_spans(server_spans(spans_file))
    served, = [s for s in front if s.name == "execute_tool relay_lookup"]
    onward, = [s for s in front if s.name == "execute_tool lookup_order"]
    inner, = tool_spans(server_spans(behind))
    assert (served.parent_id, onward.parent_id, inner.parent_id) == (outer.span_id, served.span_id, onward.span_id)
    assert len({outer.trace_id, served.trace_id, onward.trace_id, inner.trace_id}) == 1
    envelope, = merged_fold(client_file, spans_file, behind)
    assert [(c["name"], c["status"]) for c in envelope["tool_calls"]] == [("relay_lookup", "ok"),
                                                                          ("lookup_order", "ok")]
    tools = [line for line in envelope["evaluation_context"].splitlines() if line.lstrip().startswith("tool ")]
    assert [(len(line) - len(line.lstrip()), line.split()[1]) for line in tools] == [(0, "relay_lookup"),
                                                                                     (2, "lookup_order")], tools


async def test_mcp2_is_error_result_fails_the_tool_span_on_both_sides(instrument, exporter, spans_file,
                                                                      client_file) -> None:
    """MCP-2: ``refund`` raises on the server, the SDK answers ``isError``; ``call_tool`` returns,
    and both tool spans are ERROR with ``error.type=tool_error`` and the error text as the result.
    An unknown tool is answered the same way by mcp 1.x (``isError``, not a JSON-RPC error)."""
    instrument()
    async with stdio_session(spans_file) as session:
        result = await session.call_tool("refund", {"order_id": "B200"})
        assert is_error(result)
        unknown = await session.call_tool("no_such_tool", {})
        assert is_error(unknown)
    client, server = tool_spans(exporter.spans), tool_spans(server_spans(spans_file))
    assert [s.name for s in client] == [s.name for s in server] == ["execute_tool refund", "execute_tool no_such_tool"]
    for span in client + server:
        assert span.status == StatusCode.ERROR
        assert span.attributes["error.type"] == "tool_error"
    said = "Error executing tool refund" if MCP2 else "refund service down"  # 2.x keeps the exception's text in
    assert said in client[0].attributes["gen_ai.tool.call.result"]              # the server's log, off the wire
    assert said in client[0].status_description
    assert said in server[0].attributes["gen_ai.tool.call.result"]
    calls = [c for e in merged_fold(client_file, spans_file) for c in e["tool_calls"]]  # a run per bare call
    assert [(c["name"], c["status"]) for c in calls] == [("refund", "error"), ("no_such_tool", "error")]


async def test_content_off_records_no_arguments_results_or_error_text(instrument, exporter, spans_file) -> None:
    """The content switch, on each side: no arguments, results or error texts; the call is still traced."""
    instrument(capture_content=False)
    async with stdio_session(spans_file, content=False) as session:
        await session.call_tool("lookup_order", {"order_id": "A100"})
        await session.call_tool("refund", {"order_id": "B200"})
        await session.read_resource("orders://A100")
    for span in exporter.spans + server_spans(spans_file):
        text = json.dumps(span.attributes) + (span.status_description or "") + span.name
        assert "A100" not in text and "B200" not in text and "refund service down" not in text, span.name
        assert "gen_ai.tool.call.arguments" not in span.attributes and "mcp.resource.uri" not in span.attributes
    errored = [s for s in tool_spans(exporter.spans) if s.status == StatusCode.ERROR]
    assert [s.attributes["error.type"] for s in errored] == ["tool_error"]


async def test_redaction_of_arguments_on_both_sides(instrument, exporter, spans_file) -> None:
    """Secret-named arguments are redacted by the span layer on the client and on the server."""
    instrument()
    async with stdio_session(spans_file) as session:
        await session.call_tool("login", {"user": "ann", "password": "hunter2-very-secret"})
    spans = tool_spans(exporter.spans) + tool_spans(server_spans(spans_file))
    assert len(spans) == 2
    for span in spans:
        assert "hunter2" not in json.dumps(span.attributes)
        assert span.json_attr("gen_ai.tool.call.arguments") == {"user": "ann", "password": "[REDACTED]"}


async def test_list_read_get_are_plain_client_and_server_spans(instrument, exporter, spans_file) -> None:
    """``tools/list``, ``resources/read``, ``prompts/get`` are non-semantic spans ``{method} [{target}]``,
    the server's under the client's."""
    instrument()
    async with stdio_session(spans_file) as session:
        await session.list_tools()
        await session.read_resource("orders://A100")
        await session.get_prompt("greeting", {"name": "Ann"})
    client, server = exporter.spans, server_spans(spans_file)
    for name in ("tools/list", "resources/read", "prompts/get greeting"):
        c, s = one(client, name), one(server, name)
        assert c.semantic_kind is None and s.semantic_kind is None
        assert (c.kind, s.kind) == ("CLIENT", "SERVER")
        assert s.parent_id == c.span_id and s.trace_id == c.trace_id
        assert c.attributes["mcp.method.name"] == name.split()[0]
    assert one(client, "resources/read").attributes["mcp.resource.uri"] == "orders://A100"
    assert one(client, "prompts/get greeting").attributes["gen_ai.prompt.name"] == "greeting"
    assert not tool_spans(client) and not tool_spans(server)


async def test_jsonrpc_error_is_an_error_with_its_code(instrument, exporter) -> None:
    """MCP-2: a JSON-RPC error response makes the span ERROR with ``error.type`` and
    ``rpc.response.status_code`` = its code (in-process server; the client raises ``McpError``,
    ``MCPError`` in 2.x)."""
    from mcp.types import INVALID_PARAMS

    instrument()
    if MCP2:
        from mcp import Client
        from mcp.server.mcpserver import MCPServer
        from mcp.shared.exceptions import MCPError

        strict = MCPServer("strict")

        @strict.prompt()
        def missing() -> str:
            raise MCPError(code=INVALID_PARAMS, message="no such prompt")

        async with Client(strict) as client:
            with pytest.raises(MCPError):
                await client.get_prompt("missing")
    else:
        from mcp.server.lowlevel import Server
        from mcp.shared.exceptions import McpError
        from mcp.shared.memory import create_connected_server_and_client_session
        from mcp.types import ErrorData

        server = Server("strict")

        @server.get_prompt()
        async def get_prompt(name: str, arguments: Any) -> Any:
            raise McpError(ErrorData(code=INVALID_PARAMS, message="no such prompt"))

        async with create_connected_server_and_client_session(server) as session:
            with pytest.raises(McpError):
                await session.get_prompt("missing")
    spans = [s for s in exporter.spans if s.name == "prompts/get missing"]
    assert sorted(s.kind for s in spans) == ["CLIENT", "SERVER"]
    for span in spans:
        assert span.status == StatusCode.ERROR
        assert span.attributes["error.type"] == span.attributes["rpc.response.status_code"] == str(INVALID_PARAMS)
        assert span.status_description == "no such prompt"


async def test_uninstrument_both_sides(instrument, exporter, app_tracer, spans_file, tmp_path) -> None:
    """After ``uninstrument()`` the client sends no context and makes no span; a server that is not
    instrumented makes none either; the SDK's functions are the originals again."""
    if MCP2:
        from mcp.client.session import ClientSession
        from mcp.server.runner import ServerRunner
        from mcp.shared import jsonrpc_dispatcher
        from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

        hooked = [(ClientSession, "send_request"), (JSONRPCDispatcher, "_allocate_id"),
                  (ServerRunner, "_compose_server_middleware"),
                  (jsonrpc_dispatcher, "inject_trace_context"), (ClientSession, "dispatch_input_request")]
    else:
        from mcp.server.lowlevel.server import Server
        from mcp.shared.session import BaseSession, RequestResponder

        hooked = [(BaseSession, "send_request"), (Server, "_handle_request"), (RequestResponder, "respond")]
    originals = [owner.__dict__[name] for owner, name in hooked]
    inst = instrument()
    assert all(owner.__dict__[name] is not original for (owner, name), original in zip(hooked, originals))
    inst.uninstrument()
    assert [owner.__dict__[name] for owner, name in hooked] == originals
    async with stdio_session(spans_file) as session:  # an instrumented server, an uninstrumented client
        with app_tracer.start_as_current_span("app"):
            await session.call_tool("lookup_order", {"order_id": "A100"})
    assert [s.name for s in exporter.spans] == ["app"]
    served = one(server_spans(spans_file), "execute_tool lookup_order")
    if MCP2:  # the 2.x SDK injects the current context into _meta by itself (SEP-414)
        assert served.trace_id == exporter.spans[0].trace_id
    else:  # no context in _meta: a trace of its own
        assert served.trace_id != exporter.spans[0].trace_id
    quiet = tmp_path / "quiet.jsonl"
    async with stdio_session(quiet, instrument=False) as session:
        await session.call_tool("lookup_order", {"order_id": "A100"})
    assert [s.name for s in server_spans(quiet)] == ["db.query"]


LIBRARY_TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def _meta_recording_server() -> tuple[Any, list[dict[str, Any]]]:
    """A low-level MCP server ``orders`` with one tool, ``lookup_order``, and the list it appends each call's
    ``_meta`` extras to (a ``dict``: what the client sent besides the known fields)."""
    from mcp.server.lowlevel import Server
    from mcp.types import TextContent, Tool

    server, seen = Server("orders"), []

    @server.list_tools()
    async def list_tools() -> list:
        return [Tool(name="lookup_order", inputSchema={"type": "object"})]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict) -> list:
        meta = server.request_context.meta
        seen.append(dict((meta.model_extra or {}) if meta is not None else {}))
        return [TextContent(type="text", text="ok")]

    return server, seen


class _WireRecorder:
    """mcp 2.x: a client's write stream that records the ``params._meta`` of each ``tools/call`` it writes."""

    def __init__(self, stream: Any, seen: list[dict[str, Any]]):
        self._stream, self._seen = stream, seen

    async def send(self, item: Any) -> None:
        request = getattr(item, "message", None)
        if getattr(request, "method", None) == "tools/call":
            self._seen.append(dict((request.params or {}).get("_meta") or {}))
        await self._stream.send(item)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> "_WireRecorder":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stream.aclose()


@contextlib.asynccontextmanager
async def wire_recorded(server: Any, seen: list[dict[str, Any]]) -> Any:
    """mcp 2.x: a transport (for ``mcp.Client``) to ``server`` running in this process over in-memory streams,
    recording what each ``tools/call`` carries in ``params._meta`` on the wire (after the SDK's own injection)."""
    import anyio
    from mcp.shared.memory import create_client_server_memory_streams

    async with create_client_server_memory_streams() as ((read, write), (server_read, server_write)):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.run, server_read, server_write, server.create_initialization_options())
            yield read, _WireRecorder(write, seen)
            tasks.cancel_scope.cancel()


async def _propagation_off_then_on(instrument: Any, send: Any) -> None:
    """``await send()`` instrumented with ``propagate=False``, then with the default (the control), each time
    with baggage ``user.id=ann`` current; uninstrumented after each."""
    for propagate in (False, None):
        inst = instrument(propagate=propagate) if propagate is not None else instrument()
        token = context.attach(baggage.set_baggage("user.id", "ann"))
        try:
            await send()
        finally:
            context.detach(token)
        inst.uninstrument()


async def test_mcp2_propagation_off_on_the_client_sends_no_context_on_the_wire(instrument, exporter,
                                                                               app_tracer) -> None:
    """mcp 2.x, whose JSON-RPC dispatcher injects the current context into every request's ``_meta`` by itself
    (SEP-414), instrumented or not: with ``instrument(propagate=False)`` no ``traceparent``/``baggage`` reaches
    the wire, not even one the caller put there; other ``_meta`` keys stay; the client's tool span is still
    recorded. The default sends ours (the control). (Before, the SDK's injection put it back: a server run by
    another party received the trace ids and baggage propagation off is there to keep.)"""
    if not MCP2:
        pytest.skip("mcp 2.x's own injection; 1.x: test_propagation_off_on_the_client_sends_no_context")
    from mcp import Client
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

    async def list_tools(ctx: Any, params: Any) -> Any:
        return ListToolsResult(tools=[Tool(name="lookup_order", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: Any) -> Any:
        return CallToolResult(content=[TextContent(type="text", text="ok")])

    server, seen = Server("orders", on_list_tools=list_tools, on_call_tool=call_tool), []
    async def send() -> None:
        for mode in ("legacy", "auto"):  # the handshake, and the 2026 envelope (server/discover)
            async with Client(wire_recorded(server, seen), mode=mode) as client:
                with app_tracer.start_as_current_span("app"):
                    await client.call_tool("lookup_order", {"order_id": "A100"},
                                           meta={"traceparent": LIBRARY_TRACEPARENT, "tenant": "t1"})

    await _propagation_off_then_on(instrument, send)
    sent = [{k: v for k, v in meta.items() if not k.startswith("io.modelcontextprotocol/")} for meta in seen]
    assert [sorted(meta) for meta in sent] == [["tenant"]] * 2 + [["baggage", "tenant", "traceparent"]] * 2
    client_spans = [s for s in exporter.spans if s.kind == "CLIENT" and s.semantic_kind == "tool"]
    assert len(client_spans) == 4
    for meta, span in zip(sent[2:], client_spans[2:]):
        assert meta["traceparent"] != LIBRARY_TRACEPARENT
        assert meta["traceparent"].split("-")[1] == format(span.trace_id, "032x")  # ours replaced the caller's
    assert all(meta["baggage"] == "user.id=ann" for meta in sent[2:])


@pytest.mark.skipif(MCP2, reason="written on mcp 1.x's in-memory session helper (mcp.shared.memory); 2.x: "
                    "test_mcp2_propagation_off_on_the_client_sends_no_context_on_the_wire")
async def test_propagation_off_on_the_client_sends_no_context(instrument, exporter, app_tracer) -> None:
    """``instrument(propagate=False)``: requests carry no ``traceparent``/``baggage`` in ``_meta``
    (the server's span starts a trace of its own), not even one a library put there itself (as
    FastMCP does); other ``_meta`` keys stay; the client's tool span is still recorded. The
    default sends them (the control). (mcp 2.x: the ``test_mcp2_…`` test above, on the wire.)"""
    from mcp.shared.memory import create_connected_server_and_client_session

    server, seen = _meta_recording_server()

    async def send() -> None:
        async with create_connected_server_and_client_session(server) as session:
            with app_tracer.start_as_current_span("app"):
                await session.call_tool("lookup_order", {"order_id": "A100"},
                                        meta={"traceparent": LIBRARY_TRACEPARENT, "tenant": "t1"})

    await _propagation_off_then_on(instrument, send)
    assert [sorted(meta) for meta in seen] == [["tenant"], ["baggage", "tenant", "traceparent"]]
    client = [s for s in exporter.spans if s.kind == "CLIENT" and s.semantic_kind == "tool"]
    served = [s for s in exporter.spans if s.kind == "SERVER" and s.semantic_kind == "tool"]
    assert len(client) == len(served) == 2
    assert served[0].trace_id != client[0].trace_id and served[0].parent_id is None
    assert served[1].parent_id == client[1].span_id  # ours replaced the one already in _meta


async def test_propagation_off_on_the_server_takes_no_context(instrument, exporter, app_tracer, spans_file) -> None:
    """``OTEL_AGENTS_MCP_PROPAGATE=false`` in the server's process: it ignores the context the
    client sends (a server facing clients it does not trust); its span starts a trace of its own."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tests.mcp.harness import SERVER_APP, server_env

    instrument()
    params = StdioServerParameters(command=sys.executable, args=[SERVER_APP, "stdio"],
                                   env=server_env(spans_file, extra={"OTEL_AGENTS_MCP_PROPAGATE": "false"}))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await call_lookup(session, app_tracer)
    call, = tool_spans(exporter.spans)
    served = one(server_spans(spans_file), "execute_tool lookup_order")
    assert served.parent_id is None and served.trace_id != call.trace_id
    assert one(server_spans(spans_file), "db.query").attributes["baggage.user.id"] == "None"


def test_entry_point_status_and_doctor_row() -> None:
    """The ``mcp`` entry point loads our instrumentor; ``instrumentation_status()`` and ``otel-agents doctor``
    have a row for it; importing the instrumentor module does not import ``mcp``."""
    import subprocess
    import sys
    from importlib.metadata import entry_points

    from otel_agents import instrumentation_status
    from otel_agents.instrumentors.mcp import MCPInstrumentor

    ep, = [e for e in entry_points(group="opentelemetry_instrumentor") if e.name == "mcp"]
    assert ep.load() is MCPInstrumentor
    status = instrumentation_status()["mcp"]
    assert status.supported == ">=1.30.0,<3" and status.installed_version
    code = "import sys, otel_agents.instrumentors.mcp; assert 'mcp' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    doctor = subprocess.run([sys.executable, "-m", "otel_agents.cli", "doctor"], capture_output=True, text=True)
    assert any(line.split()[:1] == ["mcp"] for line in doctor.stdout.splitlines()), doctor.stdout


async def test_a_tool_whose_name_only_ends_like_the_mcp_tool_is_not_enriched(instrument, exporter, provider) -> None:
    """A tool ``reorder`` of ours that calls the MCP tool ``order``: two calls, two tool spans (ours
    ``execute_tool order`` under ``execute_tool reorder``), not ``reorder`` enriched as if it were the
    MCP call. A toolset prefix (``support_order``: prefix, ``_``, name) still matches."""
    import otel_agents
    from otel_agents import manual

    server = server_class()("orders", log_level="WARNING")

    @server.tool()
    def order() -> str:
        """Order."""
        return "ok"

    instrument()
    manual.set_providers(provider)
    try:
        async with in_process_client(server) as session:
            @otel_agents.tool(name="reorder")
            async def reorder() -> str:
                return (await session.call_tool("order", {})).content[0].text

            @otel_agents.tool(name="support_order")
            async def prefixed() -> str:
                return (await session.call_tool("order", {})).content[0].text

            await reorder()
            await prefixed()
    finally:
        manual.set_providers()
    client = [s for s in exporter.spans if s.semantic_kind == "tool" and s.kind != "SERVER"]
    outer = one(client, "execute_tool reorder")
    inner = one(client, "execute_tool order")
    assert inner.parent_id == outer.span_id and "mcp.method.name" not in outer.attributes
    assert inner.attributes["mcp.method.name"] == "tools/call"
    assert one(client, "execute_tool support_order").attributes["mcp.method.name"] == "tools/call"


def _sampling_server() -> Any:
    """The SDK's high-level server whose one tool, ``summarise_order``, asks the client's model
    (``sampling/createMessage``, through the tool's ``Context``) and answers with its text."""
    import warnings

    from mcp.types import SamplingMessage, TextContent

    if MCP2:
        from mcp.server.mcpserver import Context
    else:
        from mcp.server.fastmcp import Context

    server = server_class()("orders", log_level="WARNING")

    async def summarise_order(order_id: str, ctx: Context) -> str:
        with warnings.catch_warnings():  # 2.x: sampling is deprecated by the 2026-07-28 revision (SEP-2577)
            warnings.simplefilter("ignore")
            answer = await ctx.session.create_message(
                messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarise {order_id}"))],
                max_tokens=32)
        return answer.content.text

    summarise_order.__annotations__.update(order_id=str, ctx=Context)  # resolved here (string annotations)
    server.tool(name="summarise_order")(summarise_order)
    return server


def _sampled(text: str, model: str) -> Any:
    """The client's answer to a sampling request (a ``CreateMessageResult``; by its wire names, as 1.x and 2.x
    name its fields differently)."""
    from mcp.types import CreateMessageResult

    return CreateMessageResult.model_validate({"role": "assistant", "model": model, "stopReason": "endTurn",
                                               "content": {"type": "text", "text": text}})


# mcp 2.x: the server asks the client over the legacy (JSON-RPC) connection; the 2026 envelope has no back-channel.
SAMPLING_MODE = "legacy" if MCP2 else "memory"


async def test_sampling_is_one_model_span_under_the_tool_call(instrument, exporter, provider) -> None:
    """A tool that asks the client's model (``ctx.session.create_message``): the client's ``sampling_callback``
    runs in a ``model`` span of ours under the server's tool span (the context travels in the request's
    ``_meta``), and the openai client it calls fills that span (its usage, its response id) instead of opening a
    second one: one model span per request, in the tool call's trace."""
    from otel_agents.instrumentors.openai import OpenAIInstrumentor
    from tests.clients.fakes import Recorder, chat_completion, openai_client

    server = _sampling_server()
    client = openai_client(Recorder(chat_completion("A100 shipped.", usage={"prompt_tokens": 9,
                                                                               "completion_tokens": 3,
                                                                               "total_tokens": 12})), aio=True)

    async def sampling_callback(context: Any, params: Any) -> Any:
        completion = await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": params.messages[0].content.text}])
        return _sampled(completion.choices[0].message.content, completion.model)

    instrument()
    openai_instrumentor = OpenAIInstrumentor()
    openai_instrumentor.instrument(tracer_provider=provider)
    try:
        async with in_process_client(server, SAMPLING_MODE, sampling_callback=sampling_callback) as session:
            result = await session.call_tool("summarise_order", {"order_id": "A100"})
    finally:
        openai_instrumentor.uninstrument()
    assert result.content[0].text == "A100 shipped."
    spans = exporter.spans
    [model] = [s for s in spans if s.semantic_kind == "model"]
    served = one([s for s in spans if s.kind == "SERVER"], "execute_tool summarise_order")
    assert model.parent_id == served.span_id and model.trace_id == served.trace_id
    assert model.name == "chat gpt-4o-2024-08-06" and model.attributes["mcp.method.name"] == "sampling/createMessage"
    assert (model.attributes["gen_ai.usage.input_tokens"], model.attributes["gen_ai.usage.output_tokens"]) == (9, 3)
    assert model.attributes["gen_ai.response.id"] == "chatcmpl-1"
    assert tuple(model.attributes["gen_ai.response.finish_reasons"]) == ("stop",)


async def test_sampling_of_a_session_made_before_instrument_is_traced(instrument, exporter) -> None:
    """A ``ClientSession`` made before ``instrument()`` (and kept across an uninstrument/instrument cycle) gets its
    sampling callback traced from the server's next request: one model span a request, none while uninstrumented
    (before, such a session's sampling made no span at all; only sessions made while instrumented had one; on
    mcp 2.x, until its ``dispatch_input_request`` was hooked too)."""
    server = _sampling_server()

    async def sampling_callback(context: Any, params: Any) -> Any:
        return _sampled("A100 shipped.", "fake-1")

    def models() -> list[Any]:
        return [s for s in exporter.spans if s.semantic_kind == "model"]

    async with in_process_client(server, SAMPLING_MODE, sampling_callback=sampling_callback) as session:
        assert (await session.call_tool("summarise_order", {"order_id": "A100"})).content[0].text == "A100 shipped."
        assert exporter.spans == []  # not instrumented yet
        inst = instrument()
        assert (await session.call_tool("summarise_order", {"order_id": "A100"})).content[0].text == "A100 shipped."
        assert [m.name for m in models()] == ["chat fake-1"]
        inst.uninstrument()
        await session.call_tool("summarise_order", {"order_id": "A100"})
        assert len(models()) == 1  # uninstrumented: the wrapper only calls through
        instrument()
        await session.call_tool("summarise_order", {"order_id": "A100"})
    [first, second] = models()
    assert second.name == "chat fake-1" and second.attributes["mcp.method.name"] == "sampling/createMessage"
    served = [s for s in exporter.spans if s.kind == "SERVER" and s.name == "execute_tool summarise_order"]
    assert [m.parent_id for m in (first, second)] == [served[0].span_id, served[1].span_id]


@pytest.mark.parametrize("mode", IN_PROCESS_MODES)
async def test_a_connection_serving_before_instrument_is_traced_from_then_on(instrument, exporter, mode: str) -> None:
    """A server connection already serving when ``instrument()`` runs (instrumentation activated late: a lazy
    ``instrument()``, a server started before it) gets a server span for each request from then on, the child of
    the client's span; none while uninstrumented, and again once instrumented again (before, on mcp 2.x, whose
    connection binds its ``ServerRunner._on_request`` once as it starts serving, such a connection had none)."""
    server = server_class()("orders", log_level="WARNING")

    @server.tool()
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        return f"{order_id} shipped"

    def calls(kind: str) -> list[SpanSnapshot]:
        return [s for s in exporter.spans if s.kind == kind and s.name == "execute_tool lookup_order"]

    async with in_process_client(server, mode) as session:
        async def call() -> None:
            assert (await session.call_tool("lookup_order", {"order_id": "A100"})).content[0].text == "A100 shipped"

        await call()
        assert exporter.spans == []  # not instrumented yet
        inst = instrument()
        await call()
        [client], [served] = calls("CLIENT"), calls("SERVER")
        assert (served.parent_id, served.trace_id) == (client.span_id, client.trace_id)
        assert served.attributes["otel_agents.mcp.server.name"] == "orders"
        inst.uninstrument()
        await call()
        assert (len(calls("CLIENT")), len(calls("SERVER"))) == (1, 1)  # uninstrumented: nothing on either side
        instrument()
        await call()
    assert (len(calls("CLIENT")), len(calls("SERVER"))) == (2, 2)
    assert calls("SERVER")[1].parent_id == calls("CLIENT")[1].span_id


async def test_a_suppressed_call_makes_no_client_span(instrument, exporter, app_tracer, spans_file) -> None:
    """On every mcp release (a real stdio server): a call made inside ``suppress_instrumentation()`` gets no
    client span of ours, the same session's next call outside it gets one (the control), and nothing is left
    current."""
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    instrument()
    async with stdio_session(spans_file) as session:
        with suppress_instrumentation():
            assert not is_error(await session.call_tool("lookup_order", {"order_id": "A100"}))
        assert not is_error(await session.call_tool("lookup_order", {"order_id": "A100"}))
    assert [s.name for s in tool_spans(exporter.spans)] == ["execute_tool lookup_order"]
    assert not trace.get_current_span().get_span_context().is_valid


@pytest.mark.skipif(MCP2, reason="written on mcp 1.x's in-memory session helper (mcp.shared.memory); mcp 2.x "
                    "injects the context into _meta itself (SEP-414), so 'sends no context' is not ours to keep there")
async def test_suppressed_requests_make_no_span_and_send_no_context(instrument, exporter, app_tracer) -> None:
    """Inside ``suppress_instrumentation()`` neither side makes a span and the client injects no context
    (as OTel's HTTP clients do); with propagation off a context a library put in ``_meta`` is still
    taken out. The session still learns its peer from an ``initialize`` sent suppressed, so a later,
    traced call of it records the protocol version and server name (the control: it is traced)."""
    import contextlib

    from mcp.shared.memory import create_connected_server_and_client_session
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    server, seen = _meta_recording_server()

    traced = []
    for propagate in (None, False):
        inst = instrument(propagate=propagate) if propagate is not None else instrument()
        exporter.clear()
        async with contextlib.AsyncExitStack() as stack:
            with suppress_instrumentation():  # the server's tasks start suppressed: it stays so
                session = await stack.enter_async_context(create_connected_server_and_client_session(server))
                with app_tracer.start_as_current_span("app"):  # a current span: still nothing injected
                    result = await session.call_tool("lookup_order", {"order_id": "A100"},
                                                     meta={"traceparent": LIBRARY_TRACEPARENT, "tenant": "t1"})
                assert not is_error(result)
            exporter.clear()  # the application's span
            assert [(s.name, s.kind) for s in exporter.spans] == []
            await session.call_tool("lookup_order", {"order_id": "A100"})  # the client traced again
        inst.uninstrument()
        traced += exporter.spans
    # suppressed: the library's traceparent left alone (propagation on) or taken out (off)
    assert seen[0] == {"traceparent": LIBRARY_TRACEPARENT, "tenant": "t1"} and seen[2] == {"tenant": "t1"}
    assert "traceparent" in seen[1] and seen[1]["traceparent"] != LIBRARY_TRACEPARENT  # traced: ours
    assert "traceparent" not in seen[3]  # traced, propagation off: no context sent
    assert [s.kind for s in traced] == ["CLIENT", "CLIENT"]  # the suppressed server made none
    for client in traced:
        assert client.semantic_kind == "tool" and client.attributes["mcp.protocol.version"]
        assert client.attributes["otel_agents.mcp.server.name"] == "orders"


def test_field_reads_what_getattr_and_get_read() -> None:
    """``_protocol.field`` (which reads a pydantic model's fields without asking ``getattr`` for an absent
    name) returns what ``getattr``/``dict.get`` would: a field, an extra, a property or method of the
    class, a mapping's key; ``None`` for an absent name or a ``None`` value, and the first of the names
    that is set."""
    from pydantic import BaseModel, ConfigDict

    from otel_agents.instrumentors.mcp import _protocol as P

    class Result(BaseModel):
        model_config = ConfigDict(extra="allow")
        isError: bool | None = None
        content: list[str] = []

        @property
        def is_error(self) -> bool:
            return True

    result = Result(content=["a"], structuredContent={"x": 1})
    assert P.field(result, "content") == ["a"]
    assert P.field(result, "structured_content", "structuredContent") == {"x": 1}  # an extra
    assert P.field(result, "isError", "is_error") is True  # None field: the property after it
    assert P.field(result, "missing") is None and P.field(result, "_private") is None
    assert P.field(Result(isError=False), "isError") is False
    assert P.field({"isError": True}, "is_error", "isError") is True
    assert P.field(None, "name") is None
    # How a name is read is decided once per class: another instance's extras are its own.
    assert P.field(Result(), "structured_content", "structuredContent") is None
    assert P.field(Result(structuredContent=[2]), "structuredContent") == [2]


def test_a_rewrapped_request_is_what_model_construct_makes() -> None:
    """The context-carrying request goes back into its wrapper (mcp 1.x's ``ClientRequest``, a ``RootModel``) built
    as unpickling builds a ``RootModel`` (cheaper than ``model_construct``'s walk): the same ``__dict__``, fields
    set, no extras or private state, the same wire dump; a wrapper with a post-init hook is still built by
    ``model_construct``."""
    from pydantic import BaseModel, RootModel

    from otel_agents.instrumentors.mcp import _protocol as P

    class Call(BaseModel):
        method: str
        params: dict | None = None

    class ClientRequest(RootModel[Call]):
        pass

    class Hooked(RootModel[Call]):
        def model_post_init(self, context: Any) -> None:
            object.__setattr__(self, "hooked", True)

    root = Call(method="tools/call", params={"name": "lookup_order"})
    made = P._rewrapped(ClientRequest.model_construct(root), root)
    reference = ClientRequest.model_construct(root)
    assert type(made) is ClientRequest and made.root is root
    assert (made.__dict__, made.__pydantic_fields_set__) == (reference.__dict__, reference.__pydantic_fields_set__)
    assert getattr(made, "__pydantic_extra__", None) is None and getattr(made, "__pydantic_private__", None) is None
    assert made.model_dump(by_alias=True, mode="json", exclude_none=True) == \
        reference.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert P._rewrapped(Hooked.model_construct(root), root).__dict__.get("hooked") is True


def test_a_request_is_read_through_its_root_model_or_as_it_is() -> None:
    """``method_of``/``params_of`` read the request a ``RootModel`` wrapper holds (the client's ``ClientRequest``)
    or the bare request model (the server's dispatch), and ``None`` off anything else."""
    from pydantic import BaseModel, RootModel

    from otel_agents.instrumentors.mcp import _protocol as P

    class Params(BaseModel):
        name: str

    class Call(BaseModel):
        method: str
        params: Params | None = None

    class Request(RootModel[Call]):
        pass

    bare = Call(method="tools/call", params=Params(name="lookup_order"))
    for request in (bare, Request(bare)):
        assert P.root_of(request) is bare
        assert P.method_of(request) == "tools/call" and P.params_of(request).name == "lookup_order"
    assert P.method_of(Call(method="tools/list")) == "tools/list" and P.params_of(Call(method="tools/list")) is None
    assert P.method_of(object()) is None and P.params_of(None) is None


@pytest.mark.parametrize("mode", IN_PROCESS_MODES)
async def test_each_side_reads_a_request_s_root_once(instrument, exporter, monkeypatch, mode: str) -> None:
    """A hook reads what it needs of a request (its root model, method, ``params``) in one go
    (``request_parts``): no request's root is looked up twice on a side (before, the client looked it up three
    times a request, for its method, its params and the context injection, and the server twice); the spans are
    those of every request."""
    from otel_agents.instrumentors.mcp import _protocol as P

    server = server_class()("orders", log_level="WARNING")

    @server.tool()
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        return f"{order_id} shipped"

    instrument()
    read: list[Any] = []  # (the requests themselves: their ids stay unique while they are held here)
    root_of = P.root_of

    def counting_root_of(request: Any) -> Any:
        read.append(request)
        return root_of(request)

    async with in_process_client(server, mode) as client:
        monkeypatch.setattr(P, "root_of", counting_root_of)
        await client.call_tool("lookup_order", {"order_id": "A100"})
        monkeypatch.setattr(P, "root_of", root_of)
    assert read and len({id(request) for request in read}) == len(read)
    assert [s.kind for s in exporter.spans if s.name == "execute_tool lookup_order"].count("CLIENT") == 1


@pytest.mark.parametrize("mode", IN_PROCESS_MODES)
async def test_a_call_the_caller_cancels_is_control_flow_not_an_error(instrument, exporter, mode: str) -> None:
    """A ``tools/call`` the caller gives up on (``asyncio.wait_for`` timing out, which cancels it): the client's
    tool span and the server's end, not as errors but as control flow (``otel_agents.control_flow``
    ``asyncio.exceptions.CancelledError``, status UNSET, no ``error.type``), as a cancelled step is everywhere
    else; the session serves the next call."""
    import asyncio

    server = server_class()("orders", log_level="WARNING")

    @server.tool()
    async def slow() -> str:
        """Slow."""
        await asyncio.sleep(30)
        return "ok"

    @server.tool()
    async def fast() -> str:
        """Fast."""
        return "ok"

    instrument()
    async with in_process_client(server, mode) as session:
        with pytest.raises((TimeoutError, asyncio.TimeoutError)):
            await asyncio.wait_for(session.call_tool("slow", {}), 0.2)
        assert (await session.call_tool("fast", {})).content[0].text == "ok"
        for _ in range(50):  # the server's span ends once its handler task has taken the cancellation
            if len([s for s in exporter.spans if s.name == "execute_tool slow"]) == 2:
                break
            await asyncio.sleep(0.02)
    slow = [s for s in exporter.spans if s.name == "execute_tool slow"]
    assert len(slow) == 2, [s.name for s in exporter.spans]
    for span in slow:
        assert span.status == StatusCode.UNSET, (span.kind, span.status)
        assert "error.type" not in span.attributes, span.attributes
        assert span.attributes["otel_agents.control_flow"] == "asyncio.exceptions.CancelledError"


@pytest.mark.parametrize("mode", IN_PROCESS_MODES)
async def test_a_call_the_session_times_out_claims_no_response_code(instrument, exporter, mode: str) -> None:
    """A ``tools/call`` the client session gives up on itself (``read_timeout_seconds``): the SDK raises its
    ``McpError`` with a code of its own (408 in 1.x, ``REQUEST_TIMEOUT`` -32001 in 2.x) and no response came. The
    client span is ERROR with that code as ``error.type`` but no ``rpc.response.status_code`` (no peer answered
    it; a JSON-RPC error response keeps it: :func:`test_jsonrpc_error_is_an_error_with_its_code`); the server's
    span is not failed (1.x lets its tool answer, 2.x cancels it)."""
    import asyncio
    import datetime

    server = server_class()("orders", log_level="WARNING")

    @server.tool()
    async def slow() -> str:
        """Slow."""
        await asyncio.sleep(0.3)
        return "ok"

    instrument()
    async with in_process_client(server, mode) as session:
        with pytest.raises(Exception) as raised:
            await session.call_tool("slow", {}, read_timeout_seconds=0.05 if MCP2 else datetime.timedelta(seconds=0.05))
        for _ in range(100):  # the server's span ends once its tool answered or took the cancellation
            if len([s for s in exporter.spans if s.name == "execute_tool slow"]) == 2:
                break
            await asyncio.sleep(0.02)
    code = str(raised.value.error.code)
    spans = {s.kind: s for s in exporter.spans if s.name == "execute_tool slow"}
    assert set(spans) == {"CLIENT", "SERVER"}, [s.name for s in exporter.spans]
    client = spans["CLIENT"]
    assert client.status == StatusCode.ERROR and client.attributes["error.type"] == code
    assert "rpc.response.status_code" not in client.attributes, client.attributes
    assert spans["SERVER"].status != StatusCode.ERROR


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_mcp2_own_spans_stand_down_while_instrumented(instrument, exporter, provider, monkeypatch,
                                                            mode: str) -> None:
    """mcp 2.x traces itself on the global tracer provider (an application that set one records them): a client
    span ``MCP send tools/call {name}`` (JSON-RPC paths) and a server span ``tools/call {name}`` carrying
    ``gen_ai.operation.name=execute_tool``, as ours do: two tool executions per call on the server. While we are
    instrumented theirs do not record: one tool span per call on each side, the server's the direct child of the
    client's (the SDK's own injection carries our span), one trace; the ECP fold lists each call once.
    ``uninstrument()`` gives the SDK its tracer back."""
    if not MCP2:
        pytest.skip("the 2.x SDK's own spans")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from mcp.shared import _otel as sdk_otel
    from otel_agents.semconv import Kind

    finished = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(finished))
    theirs_tracer = provider.get_tracer("mcp-python-sdk")
    monkeypatch.setattr(sdk_otel, "_tracer", theirs_tracer)  # as a global provider would
    server = MCPServer("orders")

    @server.tool()
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        if order_id == "fail":
            raise ValueError("no such order")
        return f"{order_id} shipped"

    inst = instrument()
    async with Client(server, mode=mode) as client:
        with inst.telemetry.span(Kind.AGENT, "support") as agent:
            agent.set_input("Where are A100 and fail?")
            assert not is_error(await client.call_tool("lookup_order", {"order_id": "A100"}))
            assert is_error(await client.call_tool("lookup_order", {"order_id": "fail"}))
    spans = exporter.spans
    by_id = {s.span_id: s for s in spans}
    assert not [s for s in spans if s.name.startswith(("MCP send", "tools/call"))], [s.name for s in spans]
    ours = [s for s in spans if s.name == "execute_tool lookup_order"]
    assert sorted(s.kind for s in ours) == ["CLIENT", "CLIENT", "SERVER", "SERVER"]
    assert len({s.trace_id for s in spans}) == 1
    for served in (s for s in ours if s.kind == "SERVER"):
        caller = by_id[served.parent_id]
        assert caller.name == "execute_tool lookup_order" and caller.kind == "CLIENT" and caller.semantic_kind == "tool"
    envelope, = fold(finished.get_finished_spans())
    assert [(c["name"], c["server"], c["status"]) for c in envelope["tool_calls"]] == \
        [("lookup_order", "orders", "ok"), ("lookup_order", "orders", "error")]
    context_lines = [line.strip() for line in envelope["evaluation_context"].splitlines()]
    assert sum(line.startswith("tool lookup_order") for line in context_lines) == 2
    assert sum(line.startswith("error tool lookup_order") for line in context_lines) == 1
    assert not [line for line in context_lines if "MCP send" in line or "tools/call" in line], context_lines
    assert envelope["metrics"]["tool_calls"] == 2 and envelope["metrics"]["errors"] == 1

    inst.uninstrument()
    assert sdk_otel._tracer is theirs_tracer
    finished.clear()
    async with Client(server, mode=mode) as client:
        assert not is_error(await client.call_tool("lookup_order", {"order_id": "A100"}))
    assert "tools/call lookup_order" in [s.name for s in finished.get_finished_spans()]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_mcp2_sdk_server_span_when_recorded_is_a_child_of_ours(instrument, exporter, provider, monkeypatch,
                                                                    mode: str) -> None:
    """Where the 2.x SDK's own server span does record while we are instrumented (its tracer not stood down: here
    by hand, as when that step fails), it is a child of our server span, not our sibling under the client's: its
    ``OpenTelemetryMiddleware`` parents on the context in the request context's ``meta``, which the chain gets
    with our span's context; the tool body's spans are then under theirs, in our span's subtree."""
    if not MCP2:
        pytest.skip("the 2.x SDK's own spans")
    from mcp import Client
    from mcp.shared import _otel as sdk_otel
    from otel_agents.instrumentors.mcp import _sdk_spans

    monkeypatch.setattr(_sdk_spans, "silence", lambda: None)
    monkeypatch.setattr(sdk_otel, "_tracer", provider.get_tracer("mcp-python-sdk"))
    server = server_class()("orders", log_level="WARNING")
    app = provider.get_tracer("app")

    @server.tool()
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        with app.start_as_current_span("db.query"):
            return f"{order_id} shipped"

    instrument()
    async with Client(server, mode=mode) as client:
        assert not is_error(await client.call_tool("lookup_order", {"order_id": "A100"}))
    served = one([s for s in exporter.spans if s.kind == "SERVER"], "execute_tool lookup_order")
    theirs = one([s for s in exporter.spans if s.kind == "SERVER"], "tools/call lookup_order")
    assert theirs.parent_id == served.span_id
    assert one(exporter.spans, "db.query").parent_id == theirs.span_id


@pytest.mark.parametrize("mode", IN_PROCESS_MODES)
async def test_jsonrpc_request_id_is_the_wire_id_on_both_sides_or_absent(instrument, exporter, mode: str) -> None:
    """``jsonrpc.request.id`` is the JSON-RPC message's id, the same on the client's and the server's span of a
    call; mcp 2.x's in-process path (``mcp.Client(server)``, a ``DirectDispatcher``: no JSON-RPC message) has
    none on either side (before, its server span carried the dispatcher's own count, which no client span had)."""
    server = server_class()("orders", log_level="WARNING")

    @server.tool()
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        return f"{order_id} shipped"

    instrument()
    async with in_process_client(server, mode) as session:
        await session.call_tool("lookup_order", {"order_id": "A100"})
    client = one([s for s in exporter.spans if s.kind == "CLIENT"], "execute_tool lookup_order")
    served = one([s for s in exporter.spans if s.kind == "SERVER"], "execute_tool lookup_order")
    ids = (client.attributes.get("jsonrpc.request.id"), served.attributes.get("jsonrpc.request.id"))
    if mode == "auto":
        assert ids == (None, None)
    else:
        assert ids[0] is not None and ids[0] == ids[1]


@pytest.mark.parametrize("mode", IN_PROCESS_MODES)
async def test_a_bare_call_is_one_trace_with_the_tools_list_the_sdk_sends_after_it(instrument, exporter,
                                                                                    mode: str) -> None:
    """``session.call_tool`` with no span current, of a tool whose output schema the session has not listed yet:
    the SDK sends ``tools/list`` after the ``tools/call`` to validate the result. Our tool span covered the
    ``tools/call`` request only, so that ``tools/list`` (client and server spans) was the root of a second trace;
    now the tool span is the whole ``call_tool`` and the listing nests under it, one trace. A second call (the
    schema known) sends no listing."""
    server = server_class()("orders", log_level="WARNING")

    @server.tool()
    def lookup_order(order_id: str) -> dict[str, str]:
        """Look an order up."""
        return {"order_id": order_id, "status": "shipped"}

    instrument()
    async with in_process_client(server, mode) as session:
        assert not is_error(await session.call_tool("lookup_order", {"order_id": "B200"}))
        assert not is_error(await session.call_tool("lookup_order", {"order_id": "B201"}))
    spans = exporter.spans
    calls = [s for s in spans if s.name == "execute_tool lookup_order" and s.kind == "CLIENT"]
    assert len(calls) == 2, [(s.name, s.kind) for s in spans]
    first, second = calls
    listing = [s for s in spans if s.name == "tools/list" and s.kind == "CLIENT"]
    assert len(listing) == 1, [(s.name, s.kind) for s in spans]
    assert listing[0].parent_id == first.span_id and listing[0].trace_id == first.trace_id
    assert {s.trace_id for s in spans if s.trace_id != second.trace_id} == {first.trace_id}, \
        [(s.name, s.kind, s.trace_id) for s in spans]
    assert first.attributes["mcp.method.name"] == "tools/call" and first.status == StatusCode.UNSET
    assert second.parent_id is None and first.parent_id is None


@pytest.mark.parametrize("mode", IN_PROCESS_MODES)
async def test_a_bare_call_whose_result_the_sdk_rejects_fails_its_tool_span(instrument, exporter, mode: str) -> None:
    """The SDK checks a tool's structured result against the output schema the server listed and raises
    ``RuntimeError`` from ``call_tool`` when it does not conform (here a schema the session cached that the server's
    result no longer meets, as after a server changed its tool). The bare call's tool span said OK: it ended with
    the ``tools/call`` request. Now it fails with the call."""
    server = server_class()("orders", log_level="WARNING")

    @server.tool()
    def lookup_order(order_id: str) -> dict[str, str]:
        """Look an order up."""
        return {"order_id": order_id}

    instrument()
    async with in_process_client(server, mode) as session:
        assert not is_error(await session.call_tool("lookup_order", {"order_id": "B200"}))
        client_session = session.session if MCP2 else session
        client_session._tool_output_schemas["lookup_order"] = {"type": "object", "required": ["status"]}
        getattr(client_session, "_tool_output_validators", {}).clear()  # 2.x: compiled from the cached schemas
        with pytest.raises(RuntimeError):
            await session.call_tool("lookup_order", {"order_id": "B201"})
    first, second = [s for s in exporter.spans if s.name == "execute_tool lookup_order" and s.kind == "CLIENT"]
    assert first.status == StatusCode.UNSET
    assert second.status == StatusCode.ERROR and second.attributes["error.type"] == "RuntimeError", second.attributes
