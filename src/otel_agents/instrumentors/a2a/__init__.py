"""A2A instrumentation: one trace, and one graded run, across an agent and the remote agents it calls.

Usage
-----
::

    from otel_agents.instrumentors.a2a import A2AInstrumentor

    A2AInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    ...                                                        # A2A clients and servers of this process
    A2AInstrumentor().uninstrument()                           # the SDK exactly as before

Instrument **both** processes — the calling agent (A2A client) and the remote agent (A2A server) —
and send both processes' spans to the same place (one OTLP endpoint, or trace files merged before
folding): the trace is then one tree. Without code changes: ``opentelemetry-instrument`` loads it
through the ``a2a`` entry point. Supported: ``a2a-sdk >=1.1.5,<2`` (import ``a2a``;
tested on 1.1.5 and 1.3.0), on every binding: JSON-RPC, HTTP+JSON (REST) and gRPC. Importing this
module does not import ``a2a``; ``instrument()`` does, or the application's own ``import a2a`` later.
(a2a-sdk 0.3, which CrewAI, Agno and Strands pin, is a different API and is not instrumented.)

What you get
------------
Conventions. The OTel GenAI A2A conventions (semantic-conventions-genai PR #195, pending) describe
``a2a.client``/``a2a.server`` request spans named after ``a2a.method.name``; released v1.41 has
``invoke_agent`` with kind CLIENT for an agent invoked through a remote service. Both describe the
same step: one ``SendMessage`` *is* one invocation of the remote agent. We make it **one span**: an
``agent`` span (``gen_ai.operation.name=invoke_agent``, named ``invoke_agent {card name}``) that
carries the A2A attributes too — ``a2a.method.name`` (``SendMessage``/``SendStreamingMessage``),
``a2a.message.id``, ``a2a.task.id``, ``a2a.task.state`` (the wire name, ``TASK_STATE_COMPLETED``…),
``a2a.tenant``, ``a2a.protocol.version``, ``gen_ai.conversation.id`` = the A2A ``contextId``, and the
Agent Card's ``gen_ai.agent.name``/``gen_ai.agent.version`` (the description is content). So the
fold and the backends see the remote agent as a delegation of the caller, not as an opaque request.

* Client (``BaseClient``, what ``ClientFactory``/``create_client`` build, on every transport):
  ``send_message`` is the ``agent`` span above, kind **CLIENT**, plus ``server.address``/``server.port``
  of the card's chosen interface; the message parts are its input, the reply message (else the
  task's artifacts, else its status message) its output. It lasts as long as the stream of events:
  it ends exactly once, when the stream is exhausted, closed (``aclose``: marked
  ``otel_agents.stream.abandoned``) or cancelled (control flow, not an error), or raises.
  ``get_task``, ``list_tasks``, ``cancel_task``, ``subscribe`` (a stream too), the push-config
  methods and ``get_extended_agent_card`` are plain CLIENT spans named after their method
  (``GetTask``…), with no semantic kind (not steps).
* Server (the ``RequestHandler`` that every binding and the v0.3 compatibility adapters call:
  a2a-sdk's ``DefaultRequestHandler`` — ``DefaultRequestHandlerV2`` — and ``LegacyRequestHandler``,
  or a subclass of the application's own, defined before or after ``instrument()``):
  ``on_message_send``/``on_message_send_stream`` open the same ``agent`` span, kind **SERVER**,
  named after the handler's Agent Card (``agent_card``, as a2a-sdk's handlers keep it; a handler
  without one gives ``invoke_agent``): the remote agent's own run. The agent executor runs under it,
  so the framework agent it runs (a LangGraph graph, an ADK ``Runner``…) and its model and tool
  spans nest under the call; a handler that runs the agent itself has it under the span too. The
  other ``on_*`` methods are plain SERVER spans. One request is one span, whatever handler methods
  it passes through: an override that calls ``super()``, a method calling another of its handler
  (``on_message_send`` → ``on_get_task``), a handler handing the request to another (a router in
  front of a ``DefaultRequestHandler``, whose card then names the span) — a method called for the
  request a span of ours serves (the same ``ServerCallContext``) joins that span.
* Task states → status, on both sides: ``TASK_STATE_COMPLETED`` → unset (OK with
  ``OTEL_AGENTS_STATUS_OK``); ``TASK_STATE_FAILED`` / ``TASK_STATE_REJECTED`` / ``TASK_STATE_CANCELED``
  → ERROR with ``error.type`` ``task_failed`` / ``task_rejected`` / ``task_canceled`` and the status
  message as description (content on) — a cancel asked for (a ``CancelTask`` of the task sent or
  served in this process, the latest 1,024 tasks) is control flow (``otel_agents.control_flow`` =
  ``cancelled``), not an error, on the call that ends canceled;
  ``TASK_STATE_INPUT_REQUIRED`` / ``TASK_STATE_AUTH_REQUIRED`` → ``otel_agents.run.paused``
  (the ECP envelope's ``status: "paused"``); a task returned still working (``return_immediately``)
  keeps ``a2a.task.state`` and no status. A protocol error (JSON-RPC error response, or the gRPC/REST
  status a2a-sdk maps to the same error class) → ERROR with ``error.type`` and
  ``rpc.response.status_code`` = its JSON-RPC code (``-32001`` task not found…).
* Push notifications: each webhook POST of ``BasePushNotificationSender`` is a CLIENT span ``POST``
  (``http.request.method``, ``server.address``, ``url.path``, ``http.response.status_code``) under
  the span of the task's latest request that acts on it (``SendMessage``, ``SendStreamingMessage``,
  ``CancelTask``; not a read such as ``GetTask`` or ``SubscribeToTask``, which may come from another
  trace), and carries its context in the POST's headers: in the fold it is an
  ``effect http POST host /path status=…`` line of the run.

Frameworks:

* Google ADK (``RemoteA2aAgent``, ``to_a2a``): the ADK instrumentor's ``agent`` span of a
  ``RemoteA2aAgent`` *is* the call: it is marked (span layer, ``_spans.remote``) and the A2A call made
  inside it adds the ``a2a.*``, ``server.*`` and task attributes and the task's status to it instead of
  opening a second agent span (it keeps ADK's name and kind INTERNAL); its context is what travels.
  ``to_a2a`` serves through a2a-sdk's ``DefaultRequestHandler``: the server span above, with ADK's
  ``Runner`` run (the ADK instrumentor's spans) under it. Tested across processes in ADK's venv.
* PydanticAI (``fasta2a.pydantic_ai.agent_to_a2a``, which ``pydantic_ai`` 2.x points to): FastA2A is
  its own implementation of the protocol, hooked at ``FastA2A._answer`` (see ``_fasta2a``): the same
  server spans, the PydanticAI run under them (FastA2A's broker hands the current span to its worker).
  ``message/send`` answers at ``submitted`` and runs the agent afterwards, so that span ends first with
  ``a2a.task.state=TASK_STATE_SUBMITTED``; ``message/stream``'s lasts until the stream ends.
  (a2a-sdk 1.1.5–1.3's client cannot parse FastA2A 2.1.1's task timestamps, which lack a UTC offset:
  that pair does not talk today, traced or not.)
* Any other framework calls a2a-sdk's client from a tool (the call is an agent span under the tool
  span: agent-as-tool) or runs inside an ``AgentExecutor`` (its run nests under the server span).

Trace context: the client puts W3C ``traceparent``, ``tracestate`` and ``baggage`` — whatever the
configured propagators write (``OTEL_PROPAGATORS``) — into ``ClientCallContext.service_parameters``,
the A2A spec's transport-neutral carrier, which a2a-sdk sends as HTTP headers (JSON-RPC, HTTP+JSON) or
gRPC metadata. The caller's own ``ClientCallContext`` is copied, never changed; a ``traceparent``
already in it is replaced (one on the wire, naming our span). The server reads the request's headers
(``ServerCallContext.state["headers"]``) or gRPC metadata (``state["grpc_context"]``) — a custom
``ServerCallContextBuilder`` that drops both leaves the server span under the ambient context. When the
server also runs an HTTP instrumentation (OpenTelemetry's ASGI, Starlette or FastAPI instrumentation,
whose server span of the request is the caller's child, extracted from the same headers), the agent span
is that HTTP span's child, not its sibling: the rule is that a current span whose parent is the carried
caller's span is the parent, any other current span never (``_spans.propagation.server_parent``; FastA2A's
endpoint too). The
caller's ``otel_agents.using_session``/``using_user`` values travel as baggage entries ``session.id``
and ``user.id`` and are the run attributes of every span of the remote run.

Executor context: a2a-sdk runs ``AgentExecutor.execute`` in a task of its own. Before a2a-sdk 1.2.3
a resumed task (the request answering ``input-required``) runs in the context of the task's *first*
request, so its agent run would land in the first request's trace; we attach each request's own
context around ``execute``/``cancel`` (the executor's class is wrapped the first time a handler uses it).

Content: message parts, artifacts, status messages and the card description go through the span
layer's content switch (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``), redaction and budget;
off, none of them is recorded (ids, states, methods, card name and version, addresses are kept).

ECP fold (``docs/ecp.md``): the client's span is ``agent <card name> delegated_by=<caller>`` under
the calling agent (an agent called bare, at the top, opens the run). When the server process's spans
reach the same fold, the server's ``SendMessage`` span of that call is not a second agent (no line,
not in ``agents``): its children nest under the call, the framework agent it ran is
``agent <name> delegated_by=<card name>``, and the remote agent's tool calls are in the caller's
``tool_calls`` with ``remote_agent`` = the card name (as ``server`` names an MCP server). Folded
alone, the server's spans are the remote agent's own run, rooted at ``agent <card name>``::

    agent support
      model brain finish=tool_call calls=ask_orders
      tool ask_orders args={"question":"Where is my order A100?"} status=ok latency_ms=412
        agent Orders Agent delegated_by=support            <- the A2A call (client side)
          agent orders_worker delegated_by=Orders Agent     <- the remote framework run, other process
            tool lookup_order args={"order_id":"A100"} status=ok latency_ms=3

a2a-sdk's own telemetry: a2a-sdk traces itself (``a2a.utils.telemetry``) whenever
``opentelemetry-api`` is importable — dozens of attribute-less spans per call, streaming ones that end
when the stream starts, no context across the wire. While we are instrumented its decorated methods
get a tracer whose spans do not record and never become current (``uninstrument()`` gives the
original back; nothing changes when ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false``). Our spans are
the A2A spans of the call.

Turning propagation off
-----------------------
* ``OTEL_AGENTS_A2A_PROPAGATE=false`` (read per call; works with ``otel_agents.instrument()`` and
  ``opentelemetry-instrument``), or ``A2AInstrumentor().instrument(propagate=False)`` (overrides it);
* on a client, no request carries ``traceparent``, ``tracestate`` or ``baggage`` service parameters
  (those a caller or another library put there are removed; other parameters stay); the spans are
  as before, and the remote agent's run starts a trace of its own;
* on a server (facing callers it does not trust), the context a request carries is ignored.

Hooks, and why
--------------
a2a-sdk 1.x has no tracing hook that sees a call's end (``ClientCallInterceptor`` sees neither
transport errors nor the end of a stream), so these are ``wrapt`` wrappers, taken off exactly by
``uninstrument()``: ``BaseClient``'s public methods (one class behind every transport);
the ``on_*`` methods of ``RequestHandler`` and of every subclass that defines its own, a2a-sdk's and
the application's (the one point every binding reaches; a subclass defined later is wrapped when it is
defined, through an ``__init_subclass__`` hook on ``RequestHandler``); the executor class's
``execute``/``cancel``; the private
``BasePushNotificationSender._dispatch_notification`` (its POST gets the context through a proxy of
the sender's httpx client); the module global ``a2a.utils.telemetry.trace``.

Limits
------
* A request of a 0.3-era client (a2a-sdk 0.3 is not instrumented) carries no context: its server span
  starts a trace of its own.
* ``CancelTask`` of a running task (with the caller's unary call or stream of that task still open)
  and ``auth-required`` are tested on JSON-RPC; only the JSON-RPC/REST/gRPC error of a missing task is
  tested among the protocol errors.
* A cancel served by another replica of the server is not known here: a stream of that task that this
  replica serves ends ``task_canceled`` (ERROR).
* Push notifications are parented on the task's latest acting request in this process (bounded: the
  latest 1,024 tasks); a notification sent by another replica of the server starts no span here.
"""

from ._instrumentor import A2AInstrumentor

__all__ = ["A2AInstrumentor"]
