"""MCP instrumentation: one trace across an agent and its MCP tool servers; MCP tool calls as ``tool`` spans.

Usage
-----
::

    from otel_agents.instrumentors.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    ...                                                        # clients and servers of this process
    MCPInstrumentor().uninstrument()                           # the SDK exactly as before

Instrument **both** processes — the agent (MCP client) and the tool server — and send both
processes' spans to the same place (one OTLP endpoint, or trace files merged before folding):
the trace is then one tree. With no code change: ``opentelemetry-instrument python server.py``
loads it through the ``mcp`` entry point. Supported: the official Python SDK, ``mcp >=1.30.0,<3``
(tested on 1.30 in ``.venv``, beside CrewAI, which pins ``mcp<2``, and on 2.3 in ``.venv-newest``;
the two majors are hooked at different places, see below). Importing this module does not import ``mcp``;
``instrument()`` does, or the application's own ``import mcp`` if that comes later.

What you get
------------
Client (``ClientSession``, whatever drives it: your code, LangChain's MCP adapters,
PydanticAI's ``MCPToolset`` and FastMCP's ``Client``, the OpenAI Agents SDK's ``MCPServerStdio``
/ ``MCPServerStreamableHttp``, LlamaIndex's ``McpToolSpec``, …; each tested with its framework's
tool span as the one tool span of the call):

* ``tools/call`` is a ``tool`` span — one per call. Made inside a ``tool`` span of ours (a
  framework's tool that is served over MCP), the call **enriches that span** instead of
  opening a second one (OTel MCP conventions: "SHOULD NOT create a separate span"): the
  framework's ``execute_tool {name}`` span gets ``mcp.method.name=tools/call``,
  ``jsonrpc.request.id``, ``mcp.protocol.version``, ``mcp.session.id`` (Streamable HTTP) and
  ``otel_agents.mcp.server.name`` (the server's ``serverInfo.name``). Enriched means: the
  current span is (or is directly under) an open tool span of ours, not enriched yet, named
  after the tool (a toolset prefix and separator, as ``support_lookup_order``, matches; a tool
  ``reorder`` calling the MCP tool ``order`` does not). Made bare, the
  call is our own ``execute_tool {name}`` tool span (OTel ``SpanKind.CLIENT``) with the same
  attributes, the arguments and the result, around the whole ``ClientSession.call_tool``: the
  ``tools/list`` the SDK sends to validate the first result of a tool it has not listed nests
  under it (one trace), and a result the SDK rejects against the tool's output schema fails it.
* ``tools/list``, ``resources/list``, ``resources/templates/list``, ``resources/read``,
  ``prompts/list``, ``prompts/get`` are plain client spans named ``{mcp.method.name}
  [{target}]`` (target: the prompt name; never the resource URI, which is recorded as
  ``mcp.resource.uri`` — as content, since a URI can name user data). They have no semantic
  kind: the ECP fold and the backends do not count them as steps.
* Every request the session sends carries the current trace context in ``params._meta``:
  ``traceparent``, ``tracestate`` and ``baggage``, from the configured OpenTelemetry
  propagators, unprefixed (OTel MCP conventions; MCP SEP-414): the context of our span of the
  request (or, enriched, of the framework's tool span). A context already in ``_meta`` (put
  there by the caller, or by a client library that propagates itself, as FastMCP does) is
  replaced, as OTel's HTTP instrumentations replace a ``traceparent`` header: one
  ``traceparent`` on the wire, naming the span the server's span belongs under. Other
  ``_meta`` keys are kept.

Server (``mcp.server.lowlevel.Server``, so ``FastMCP`` servers too):

* the context in ``params._meta`` is extracted and is the parent of the server span (the
  ambient context when the request carries none); baggage reaches the handler.
* each ``tools/call`` is a ``tool`` span ``execute_tool {name}`` (OTel ``SpanKind.SERVER``)
  with the MCP attributes, ``mcp.session.id`` (Streamable HTTP), the arguments and the
  result; it is current while the tool runs, so the tool body's spans (and a framework run
  inside the tool) nest under it. The other methods above are plain server spans.

Sampling (``sampling/createMessage``: a tool server asking the client's model, ``ctx.session.create_message``
answered by the client's ``sampling_callback``), see :mod:`._sampling`: the request carries the server's
context (its ``tools/call`` span while the tool runs) in ``params._meta``, and the client's callback runs in a
``model`` span of ours under it, so the model call is in the tool call's run, one trace across both
processes. The span records the request's parameters and messages, the result's model, ``stopReason`` as finish
reason and message; MCP sends no token usage, so it has none unless the callback calls a provider client we
instrument (``openai``, ``anthropic``): that client then opens no second span and gives this one its usage and
response id. In the ECP fold the call's run has the model step under its tool step (``metrics.model_calls``).

Errors: a ``CallToolResult`` with ``isError`` (how MCP tools normally fail: the SDK turns a
tool's exception into one) makes the tool span ERROR with ``error.type=tool_error`` and the
error text as the tool's result, on both sides (MCP-2). A JSON-RPC error response is ERROR
with ``error.type`` and ``rpc.response.status_code`` = its code (``-32602``…) and its message
as the status description (content on). An exception from the transport is recorded as usual. A call
its caller cancels (``asyncio.wait_for`` timing out, a cancelled task) is control flow, not an error:
``otel_agents.control_flow`` ``asyncio.exceptions.CancelledError`` on both sides.

Content: the arguments, results, error texts and resource URIs go through the span layer's
setters — the one content switch (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``),
redaction and the budget — on both sides.

ECP fold (``docs/ecp.md``): a call served over MCP is one entry of ``tool_calls`` — the
client-side tool span (the framework's, or ours when called bare), attributed to the calling
agent, with ``server`` = the server's ``serverInfo.name`` (``otel_agents.mcp.server.name``);
``status`` ``error`` and ``error`` = the error text for an ``isError`` result. The server's span
of that call, when its process's spans reach the same fold (one OTLP destination, or trace files
merged before folding), is not a second call and has no line (nor a second ``error`` line) of its
own: its children nest under the call. In ``evaluation_context`` the call's line is the same as a
local tool's (so one manifest grades both; the server's name is in ``tool_calls[].server``), and
the other MCP requests are ``span`` lines, not steps. An Agents SDK agent calling ``lookup_order``
and then ``refund`` on server ``orders``, both processes folded together::

    workflow Agent workflow
      span tools/list
      agent support
        model gpt-4.1-mini finish=tool_call tokens_in=11 tokens_out=7 calls=lookup_order
        tool lookup_order args={"order_id":"A100"} status=ok latency_ms=59
          span db.query                                  <- the tool body, in the server process
        model gpt-4.1-mini finish=tool_call tokens_in=11 tokens_out=7 calls=refund
        tool refund args={"order_id":"B200"} status=error latency_ms=42
        error tool refund: Error executing tool refund: refund service down
        ...

    "tool_calls": [{"name": "lookup_order", "agent": "support", "server": "orders", "status": "ok", ...},
                   {"name": "refund", "agent": "support", "server": "orders", "status": "error",
                    "error": "Error executing tool refund: refund service down", ...}]

Turning propagation off
-----------------------
Context travels in ``_meta`` through the configured propagators. To keep your trace ids and
baggage from a server run by another party, keep the spans and switch propagation off:

* ``OTEL_AGENTS_MCP_PROPAGATE=false`` (read per request; works with ``otel_agents.instrument()``
  and ``opentelemetry-instrument``), or ``MCPInstrumentor().instrument(propagate=False)``
  (overrides the variable);
* on a client, no request then carries ``traceparent``, ``tracestate`` or ``baggage`` in
  ``_meta`` — those keys are also taken out when a library put them there itself (FastMCP 3's
  ``Client`` does), other ``_meta`` keys stay; the spans are as before, and the server's side
  of each call starts a trace of its own;
* on a server (a server facing clients it does not trust), the context a request carries is
  ignored: each server span starts from the ambient context, as for a request without one.

Coarser switches: ``OTEL_PROPAGATORS=none`` (process-wide: HTTP instrumentations stop
propagating too), or not instrumenting MCP at all (``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=mcp``,
or ``otel_agents.instrument(frameworks=[...])`` without ``mcp``: you lose the MCP spans too).

``mcp`` 2.x injects the current context into ``_meta`` by itself (its JSON-RPC dispatcher, on every
outgoing request, after our hook has run): with propagation off that injection is skipped too, so a
2.x client sends none either. (Under ``suppress_instrumentation()`` with propagation on, the 2.x SDK's
own injection still runs: it is the SDK's, as uninstrumented.)

Hooks, and why
--------------
The SDK has no tracing hook of its own (2.x's own spans are switched off: see below), so
these are ``wrapt`` wrappers, taken off exactly by ``uninstrument()``:

* ``BaseSession.send_request`` (1.x) / ``ClientSession.send_request`` (2.x), client requests
  only: every request of a ``ClientSession`` passes there — one hook instead of one per public
  method, and it covers requests sent with ``send_request`` directly; in 2.x the JSON-RPC id
  comes from ``JSONRPCDispatcher._allocate_id``, wrapped too;
* 1.x: ``Server._handle_request`` and ``RequestResponder.respond``: the low-level server's
  dispatch of every request, and its answer, in the same task; 2.x:
  ``ServerRunner._compose_server_middleware``, the server's middleware chain around the handler,
  which every request looks up as it is served (a connection binds its ``_on_request`` once, as it
  starts serving): so on both majors a server already serving when ``instrument()`` runs (a lazy
  ``instrument()``, a server started before it) is traced from its next request on, and no longer
  after ``uninstrument()`` (private methods, stable within a major; if a release renames one,
  ``instrument()`` logs one error and the client side stays off too);
* 2.x: ``mcp.shared.jsonrpc_dispatcher.inject_trace_context``, the SDK's own injection of the current
  context into ``_meta``: only to skip it with propagation off;
* ``StreamableHTTPTransport.post_writer``: only to learn the client's ``mcp.session.id``;
* ``ClientSession.__init__``: to run the ``sampling_callback`` it was given inside a model span
  (the SDK's default callback, which refuses sampling, is left alone); ``ClientSession._received_request``
  (1.x) / ``ClientSession.dispatch_input_request`` (2.x): the same for a session made before
  ``instrument()``, when the server's next request arrives.

* ``fastmcp.client.telemetry.get_tracer`` (FastMCP 3, when it is installed; applied when it
  is imported, so instrumenting does not import it) and 2.x's ``mcp.shared._otel._tracer``: see
  the next paragraphs.

FastMCP's own client spans: FastMCP 3's ``Client`` (the one PydanticAI's ``MCPToolset`` uses)
traces itself — a ``tools/call {name}`` CLIENT span (with ``gen_ai.tool.name``) around every
tool call, ``tools/list`` and the others around the rest — and injects its own
``traceparent``. Every one of its requests goes through the SDK's ``ClientSession``, so ours
already traces it; both on would put a second tool-call span between the framework's tool span
and the server's. So, while MCP is instrumented, **FastMCP's client spans are switched off**
(its client code gets a tracer whose spans do not record and never become current) and the
context it put in ``_meta`` is replaced by ours: one tool span per call (the framework's,
enriched, or our own when called bare), the server's span its direct child, one trace id.
You lose FastMCP's ``fastmcp.component.key`` attribute; everything else it recorded is on our
spans. ``uninstrument()`` gives FastMCP its tracer back.

``mcp`` 2.x's own spans: the SDK traces itself on the global tracer provider (``mcp.shared._otel``):
an ``MCP send {method} [{target}]`` CLIENT span around each request its JSON-RPC dispatcher sends, and a
``{method} [{target}]`` SERVER span from the server's default ``OpenTelemetryMiddleware``, which for
``tools/call`` carries ``gen_ai.operation.name=execute_tool`` as ours does: with both on, a GenAI
backend sees two tool executions per call on the server. So, as with FastMCP's client spans, **while
MCP is instrumented the 2.x SDK's spans are switched off** (its tracer is the span layer's silent one:
spans that do not record and never become current; ``uninstrument()`` gives it back): one tool span
per call on each side, the server's the direct child of the client's, one trace id (the SDK's own
injection into ``_meta`` then carries our span). What those spans recorded ours record too; the
requests ours leave untraced (``initialize``, ``ping`` …) then have no span. 2.x tool errors reach the client as ``Error executing tool
{name}`` (the exception's own text stays in the server's log).

Limits
------
* ``mcp.session.id`` on the client is known for Streamable HTTP only (stdio has no session id).
* FastMCP 3's *server* spans are not switched off: a standalone FastMCP 3 server (``fastmcp``,
  not the SDK's ``mcp.server.fastmcp``) with an OpenTelemetry SDK configured adds its own
  ``tools/call {name}`` SERVER span under our server span (no semantic kind: not counted).
* Notifications (progress, cancellation) get no span; of the server-to-client requests only
  sampling is traced (elicitation and roots are not).
* Sampling on ``mcp`` 2.x is traced where the SDK serves it: a JSON-RPC connection (stdio, Streamable
  HTTP, ``mode="legacy"``); on the 2026-07-28 envelope the SDK refuses a server's request to its client.
"""

from ._instrumentor import MCPInstrumentor

__all__ = ["MCPInstrumentor"]
