"""A2A across real processes: the client here, the remote agent (a2a-sdk server running a LangGraph agent)
in a child process on loopback, its spans read back from its file. Nothing is shared in-process, so a
server span under the client's proves the context crossed the wire."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from importlib.metadata import version
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

import otel_agents
from otel_agents._spans import Telemetry
from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json
from tests.exporters.conftest import check
from tests.spans import SpanSnapshot, ancestors, parent_of

from .harness import RemoteAgent, ask, client_for, message, webhook

BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"]
A2A_SDK = version("a2a-sdk")


def run_as_support(provider: Any, coro_fn: Any) -> Any:
    """Run ``coro_fn()`` inside the calling agent's span ``support`` (the caller of the remote agent)."""
    telemetry = Telemetry(provider, framework="manual")

    async def go() -> Any:
        with telemetry.span("agent", "support"):
            return await coro_fn()

    return asyncio.run(go())


def client_call(exporter: Any) -> SpanSnapshot:
    call, = [s for s in exporter.spans if s.attributes.get("a2a.method.name", "").endswith("Message")]
    return call


def server_call(remote: RemoteAgent, call: SpanSnapshot, count: int = 1) -> list[SpanSnapshot]:
    spans = remote.spans_of(call.trace_id, where=lambda s: s.name == "invoke_agent Orders Agent", count=count)
    return spans


@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
@pytest.mark.parametrize("binding", BINDINGS)
def test_one_trace_client_to_server_agent_run(instrument, exporter, provider, remote, binding, streaming) -> None:
    instrument()
    events = run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?", binding=binding,
                                                  streaming=streaming))
    assert events and (len(events) > 1) == streaming
    call = client_call(exporter)
    support, = [s for s in exporter.spans if s.name == "invoke_agent support"]
    # The client's call: the remote agent as an agent span (semconv invoke_agent, kind CLIENT) under the caller.
    assert call.name == "invoke_agent Orders Agent" and call.kind == "CLIENT" and call.semantic_kind == "agent"
    assert call.parent_id == support.span_id
    assert call.attributes["a2a.method.name"] == ("SendStreamingMessage" if streaming else "SendMessage")
    assert call.attributes["gen_ai.agent.name"] == "Orders Agent"
    assert call.attributes["gen_ai.agent.version"] == "2.1.0"
    assert call.attributes["server.address"] == "127.0.0.1"
    assert call.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert call.status is StatusCode.UNSET
    assert "UPS" in call.attributes["output.value"]  # the artifact: the remote agent's answer
    assert call.attributes["input.value"] == "Where is my order A100?"
    context_id = call.attributes["gen_ai.conversation.id"]
    # The server's span: a child of the client's, across the process boundary, and the agent run under it.
    spans = server_call(remote, call)
    served, = [s for s in spans if s.name == "invoke_agent Orders Agent"]
    assert served.parent_id == call.span_id and served.kind == "SERVER"
    assert served.attributes["a2a.method.name"] == call.attributes["a2a.method.name"]
    assert served.attributes["a2a.task.id"] == call.attributes["a2a.task.id"]
    assert served.attributes["gen_ai.conversation.id"] == context_id
    assert served.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"
    worker, = [s for s in spans if s.name == "invoke_agent orders_worker"]
    assert served in ancestors(worker, spans)
    tool, = [s for s in spans if s.name == "execute_tool lookup_order"]
    assert worker in ancestors(tool, spans)
    # a2a-sdk's own spans are stood down on both sides; each of our spans ended once.
    assert not [s for s in exporter.spans + spans if s.scope == "a2a-python-sdk"]
    ids = [s.span_id for s in exporter.spans + spans]
    assert len(ids) == len(set(ids))


def test_resumed_task_runs_under_its_own_request(instrument, exporter, provider, remote) -> None:
    """input-required pauses the run on both sides; the resumed request's executor runs under the resumed
    call (a2a-sdk < 1.2.3 runs it in the first request's context unless re-parented)."""
    instrument()
    first = run_as_support(provider, lambda: ask(remote.url, "which order is late?"))
    call1 = client_call(exporter)
    assert call1.attributes["a2a.task.state"] == "TASK_STATE_INPUT_REQUIRED"
    assert call1.attributes["otel_agents.run.paused"] is True and call1.status is StatusCode.UNSET
    task = first[0].task
    exporter.clear()
    run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?", task_id=task.id,
                                         context_id=task.context_id))
    call2 = client_call(exporter)
    assert call2.trace_id != call1.trace_id
    assert call2.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert call2.attributes["a2a.task.id"] == task.id
    spans1 = server_call(remote, call1)
    spans2 = server_call(remote, call2)
    served1, = [s for s in spans1 if s.name == "invoke_agent Orders Agent"]
    served2, = [s for s in spans2 if s.name == "invoke_agent Orders Agent"]
    assert served1.attributes["otel_agents.run.paused"] is True
    assert served2.parent_id == call2.span_id
    body2, = [s for s in spans2 if s.name == "executor.body"]
    assert body2.parent_id == served2.span_id  # not under the first request's span
    assert [s.name for s in spans2 if s.name == "invoke_agent orders_worker"]
    assert [s for s in spans1 if s.name == "executor.body"][0].parent_id == served1.span_id


@pytest.mark.parametrize("text, error_type", [("fail please", "task_failed"), ("reject this", "task_rejected")])
def test_failed_and_rejected_tasks_are_errors(instrument, exporter, provider, remote, text, error_type) -> None:
    instrument()
    run_as_support(provider, lambda: ask(remote.url, text, streaming=True))
    call = client_call(exporter)
    assert call.status is StatusCode.ERROR and call.attributes["error.type"] == error_type
    served, = [s for s in server_call(remote, call) if s.name == "invoke_agent Orders Agent"]
    assert served.status is StatusCode.ERROR and served.attributes["error.type"] == error_type
    if error_type == "task_failed":
        assert call.status_description == "orders db down"


def test_session_and_user_reach_the_remote_spans(instrument, exporter, provider, remote) -> None:
    instrument()

    async def call() -> Any:
        with otel_agents.using_session("conv-42"), otel_agents.using_user("u-7"):
            return await ask(remote.url, "Where is my order A100?")

    run_as_support(provider, call)
    spans = server_call(remote, client_call(exporter))
    for name in ("invoke_agent Orders Agent", "invoke_agent orders_worker", "execute_tool lookup_order"):
        span, = [s for s in spans if s.name == name]
        assert span.attributes["session.id"] == "conv-42" and span.attributes["user.id"] == "u-7", name
    body, = [s for s in spans if s.name == "executor.body"]
    assert body.attributes["baggage.user.id"] == "u-7"


def test_content_off_on_both_sides(instrument, exporter, provider, remote_agents) -> None:
    remote = remote_agents(content=False)
    instrument(capture_content=False)
    run_as_support(provider, lambda: ask(remote.url, "fail please"))
    call = client_call(exporter)
    spans = server_call(remote, call)
    for span in [call, *spans]:
        for key in ("input.value", "output.value", "gen_ai.agent.description", "gen_ai.input.messages"):
            assert key not in span.attributes, (span.name, key)
    served, = [s for s in spans if s.name == "invoke_agent Orders Agent"]
    assert call.status_description == "task_failed" and served.status_description == "task_failed"
    assert served.parent_id == call.span_id


def test_propagation_off_on_the_client(instrument, exporter, provider, remote) -> None:
    instrument(propagate=False)
    run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?"))
    call = client_call(exporter)
    task_id = call.attributes["a2a.task.id"]
    spans = remote.spans_of(where=lambda s: s.attributes.get("a2a.task.id") == task_id)
    served, = [s for s in spans if s.attributes.get("a2a.task.id") == task_id and s.name == "invoke_agent Orders Agent"]
    assert served.trace_id != call.trace_id and served.parent_id is None


def test_propagation_off_on_the_server(instrument, exporter, provider, remote_agents, monkeypatch) -> None:
    remote = remote_agents(env={"OTEL_AGENTS_A2A_PROPAGATE": "false"})
    instrument()
    run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?"))
    call = client_call(exporter)
    task_id = call.attributes["a2a.task.id"]
    spans = remote.spans_of(where=lambda s: s.attributes.get("a2a.task.id") == task_id)
    served, = [s for s in spans if s.attributes.get("a2a.task.id") == task_id and s.name == "invoke_agent Orders Agent"]
    assert served.trace_id != call.trace_id


def test_a_traceparent_the_caller_put_is_replaced(instrument, exporter, provider, remote) -> None:
    from a2a.client import ClientCallContext

    instrument()
    mine = ClientCallContext(service_parameters={"Traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01",
                                                 "X-Tenant": "acme"})
    run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?", context=mine))
    call = client_call(exporter)
    served, = [s for s in server_call(remote, call) if s.name == "invoke_agent Orders Agent"]
    assert served.parent_id == call.span_id
    assert mine.service_parameters == {"Traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01", "X-Tenant": "acme"}


async def leave_after_first_event(url: str, text: str) -> None:
    """A streaming call whose client reads the first event, then closes the stream and leaves."""
    from a2a.types import SendMessageRequest

    client = await client_for(url, streaming=True)
    stream = client.send_message(SendMessageRequest(message=message(text)))
    async for _ in stream:
        break
    await stream.aclose()
    await client.close()


def test_stream_closed_early_ends_the_span_once(instrument, exporter, provider, remote) -> None:
    instrument()
    run_as_support(provider, lambda: leave_after_first_event(remote.url, "Where is my order A100?"))
    call = client_call(exporter)
    assert call.attributes["otel_agents.stream.abandoned"] is True
    assert call.status is StatusCode.UNSET


async def leave_once_settled(url: str, text: str, streaming: bool) -> None:
    """A call whose client returns from its loop as soon as it has the task completed, as the A2A example's
    ``lookup_order`` does: it has the whole result, and leaves before the stream says it has ended."""
    from a2a.types import SendMessageRequest, TaskState

    client = await client_for(url, streaming=streaming)
    try:
        async for event in client.send_message(SendMessageRequest(message=message(text))):
            status = event.task.status if event.HasField("task") else event.status_update.status
            if status.state == TaskState.TASK_STATE_COMPLETED:
                return
    finally:
        await client.close()


@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
def test_a_call_left_once_its_task_completed_is_not_abandoned(instrument, exporter, provider, remote,
                                                              streaming) -> None:
    """A caller that leaves its loop once the task completed took the whole result: the call's span says it
    completed, not that the stream was abandoned (it did: a unary call is one event, and the example's
    ``lookup_order`` returns on it, so every call of the example was marked abandoned)."""
    instrument()
    run_as_support(provider, lambda: leave_once_settled(remote.url, "Where is my order A100?", streaming))
    call = client_call(exporter)
    assert call.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert "otel_agents.stream.abandoned" not in call.attributes, call.attributes
    assert call.status is StatusCode.UNSET


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.Task.cancelling() is Python 3.11+")
def test_a_client_that_leaves_a_stream_abandons_the_servers_span_too(instrument, exporter, provider, remote) -> None:
    """The client closes a stream while the remote agent works: a2a-sdk's server ends its stream as if the
    task had settled (it swallows the disconnect's cancellation); the server's span says the stream was
    abandoned, as the client's does, not that the call ended at ``TASK_STATE_WORKING`` by itself."""
    instrument()
    run_as_support(provider, lambda: leave_after_first_event(remote.url, "slow: where is A100?"))
    call = client_call(exporter)
    assert call.attributes["otel_agents.stream.abandoned"] is True
    served, = [s for s in server_call(remote, call) if s.name == "invoke_agent Orders Agent"]
    assert served.attributes.get("otel_agents.stream.abandoned") is True, served.attributes
    assert served.attributes["a2a.task.state"] not in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED")
    assert served.status is not StatusCode.ERROR


def test_stream_cancelled_mid_run_ends_the_span_once(instrument, exporter, provider, remote) -> None:
    """The task consuming a stream is cancelled (``asyncio`` cancellation) while the remote agent works: the
    call's span ends once, recording the cancellation as control flow (``otel_agents.control_flow``), and the
    call's span is not left current."""
    from a2a.types import SendMessageRequest
    from opentelemetry import trace

    instrument()
    seen: list[Any] = []

    async def consume() -> None:
        client = await client_for(remote.url, streaming=True)
        try:
            async for event in client.send_message(SendMessageRequest(message=message("slow: where is A100?"))):
                seen.append(event)
        finally:
            await client.close()

    async def cancel_after_first_event() -> None:
        task = asyncio.ensure_future(consume())
        while not seen and not task.done():
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not trace.get_current_span().get_span_context().is_valid or \
            trace.get_current_span().get_span_context().span_id != client_call(exporter).span_id

    run_as_support(provider, cancel_after_first_event)
    calls = [s for s in exporter.spans if s.attributes.get("a2a.method.name") == "SendStreamingMessage"]
    assert len(calls) == 1, [s.name for s in exporter.spans]
    assert calls[0].end_time is not None
    # cancellation is control flow, not a failure of the remote agent (the span layer's rule)
    assert str(calls[0].attributes.get("otel_agents.control_flow")).endswith("CancelledError"), calls[0].attributes
    assert calls[0].status is not StatusCode.ERROR


@pytest.mark.parametrize("binding", BINDINGS)
def test_protocol_error_has_its_json_rpc_code(instrument, exporter, provider, remote, binding) -> None:
    """A task that does not exist: the JSON-RPC error, the REST/gRPC status a2a-sdk maps to the same error."""
    from a2a.types import GetTaskRequest

    instrument()

    async def get_missing() -> Any:
        client = await client_for(remote.url, binding=binding)
        try:
            await client.get_task(GetTaskRequest(id="no-such-task"))
        finally:
            await client.close()

    with pytest.raises(Exception):
        run_as_support(provider, get_missing)
    span, = [s for s in exporter.spans if s.name == "GetTask"]
    assert span.kind == "CLIENT" and span.semantic_kind is None
    assert span.status is StatusCode.ERROR and span.attributes["error.type"] == "-32001"
    assert span.attributes["rpc.response.status_code"] == "-32001"
    served, = remote.spans_of(span.trace_id, where=lambda s: s.name == "GetTask")
    assert served.parent_id == span.span_id and served.attributes["error.type"] == "-32001"


def test_fold_shows_the_remote_agent_as_a_delegation(instrument, exporter, provider, remote, client_file) -> None:
    instrument()
    run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?"))
    call = client_call(exporter)
    server_call(remote, call)
    spans = [s for s in read_otlp_json(client_file)] + [s for s in read_otlp_json(remote.spans_file)
                                                         if s.context.trace_id == call.trace_id]
    envelope, = check(fold(spans))
    lines = envelope["evaluation_context"].splitlines()
    assert lines[0] == "agent support"
    assert lines[1] == "  agent Orders Agent delegated_by=support"
    assert "    agent orders_worker delegated_by=Orders Agent" in lines
    assert sum(1 for line in lines if line.strip().startswith("agent Orders Agent")) == 1
    assert [(a["name"], a["parent"]) for a in envelope["agents"]] == [
        ("support", None), ("Orders Agent", "support"), ("orders_worker", "Orders Agent")]
    orders = envelope["agents"][1]
    assert envelope["agents"][2]["parent_span_id"] == orders["span_id"]  # the caller's span of the call
    call_entry, = envelope["tool_calls"]
    assert (call_entry["name"], call_entry["agent"], call_entry["remote_agent"]) == (
        "lookup_order", "orders_worker", "Orders Agent")
    # Folded alone, the server's spans are the remote agent's own run.
    alone, = check(fold([s for s in read_otlp_json(remote.spans_file) if s.context.trace_id == call.trace_id]))
    assert alone["evaluation_context"].splitlines()[0] == "agent Orders Agent"
    assert "remote_agent" not in alone["tool_calls"][0]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_under_the_asgi_instrumentations_http_span_the_remote_run_is_its_child(instrument, exporter, provider,
                                                                               remote_agents, client_file,
                                                                               binding) -> None:
    """The server also runs OpenTelemetry's ASGI instrumentation (an HTTP server span per request, extracted from
    the same headers, the caller's child): the remote agent's run is under that span, not its sibling, and the
    fold still shows one delegation, alone or with the caller's spans."""
    remote = remote_agents(env={"A2A_TEST_ASGI": "1"})
    instrument()
    run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?", binding=binding))
    call = client_call(exporter)
    spans = server_call(remote, call)
    served, = [s for s in spans if s.name == "invoke_agent Orders Agent"]
    # The HTTP span ends (and is written) once the answer is sent: after the agent span, so it is waited for too.
    spans = remote.spans_of(call.trace_id, where=lambda s: s.span_id == served.parent_id)
    http, = [s for s in spans if s.span_id == served.parent_id]
    assert (http.kind, http.scope, http.parent_id) == ("SERVER", "opentelemetry.instrumentation.asgi", call.span_id)
    assert served.kind == "SERVER" and served.attributes["a2a.task.id"] == call.attributes["a2a.task.id"]
    worker, = [s for s in spans if s.name == "invoke_agent orders_worker"]
    assert served in ancestors(worker, spans)
    both = [s for s in read_otlp_json(client_file)] + [s for s in read_otlp_json(remote.spans_file)
                                                       if s.context.trace_id == call.trace_id]
    envelope, = check(fold(both))
    assert [(a["name"], a["parent"]) for a in envelope["agents"]] == [
        ("support", None), ("Orders Agent", "support"), ("orders_worker", "Orders Agent")]
    assert envelope["tool_calls"][0]["remote_agent"] == "Orders Agent"
    alone, = check(fold([s for s in read_otlp_json(remote.spans_file) if s.context.trace_id == call.trace_id]))
    assert alone["evaluation_context"].splitlines()[0] == "agent Orders Agent"


@pytest.mark.parametrize("asgi", [False, True], ids=["plain", "asgi_instrumented"])
def test_a_server_started_inside_the_callers_span_serves_under_the_client_span(instrument, exporter, provider,
                                                                                app_tracer, asgi) -> None:
    """Client and server in one process and event loop, the server (uvicorn, a real socket) started inside the
    application's span the client then calls from: every connection's task holds that span, of the caller's very
    trace, but it is not this request's caller. The served agent is the client span's child, never its sibling
    under the application's span; with OpenTelemetry's ASGI middleware too, whose span of the request is then the
    application span's INTERNAL child (that instrumentation's rule under a current span), not the caller's."""
    import socket

    import httpx
    import uvicorn
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, SendMessageRequest

    from .test_contract import A2AScenario

    instrument()
    scenario = A2AScenario()
    app = scenario.app
    if asgi:
        from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

        app = OpenTelemetryMiddleware(app, tracer_provider=provider)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    scenario.card.supported_interfaces[0].url = f"http://127.0.0.1:{sock.getsockname()[1]}/"

    async def run() -> None:
        with app_tracer.start_as_current_span("application"):
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
            serving = asyncio.create_task(server.serve(sockets=[sock]))
            while not server.started:
                await asyncio.sleep(0.01)
            try:
                async with httpx.AsyncClient() as http:
                    client = ClientFactory(ClientConfig(httpx_client=http)).create(scenario.card)
                    request = SendMessageRequest(message=Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                                                                 parts=[Part(text="Where is order A100?")]))
                    async for _ in client.send_message(request):
                        pass
            finally:
                server.should_exit = True
                await serving

    asyncio.run(run())
    spans = exporter.spans
    call, = [s for s in spans if s.name == "invoke_agent Orders Agent" and s.kind == "CLIENT"]
    served, = [s for s in spans if s.name == "invoke_agent Orders Agent" and s.kind == "SERVER"]
    assert parent_of(served, spans).span_id == call.span_id
    if asgi:  # the middleware span, current as the request came in, is local and of the trace but not the caller's
        http, = [s for s in spans if s.scope == "opentelemetry.instrumentation.asgi" and s.name == "POST /"]
        assert parent_of(http, spans).name == "application"  # (its own rule: under a current span, INTERNAL)
    assert parent_of(call, spans).name == "application"


@pytest.mark.parametrize("text, state", [("which order is late?", "TASK_STATE_INPUT_REQUIRED"),
                                         ("login to see my orders", "TASK_STATE_AUTH_REQUIRED")])
def test_paused_remote_task_pauses_the_envelope(instrument, exporter, provider, remote, client_file, text,
                                                state) -> None:
    """input-required and auth-required: the call is paused, not an error, on both sides; the envelope too."""
    instrument()
    run_as_support(provider, lambda: ask(remote.url, text))
    call = client_call(exporter)
    assert call.attributes["a2a.task.state"] == state and call.status is not StatusCode.ERROR
    assert call.attributes["otel_agents.run.paused"] is True
    server_call(remote, call)
    spans = list(read_otlp_json(client_file)) + [s for s in read_otlp_json(remote.spans_file)
                                                 if s.context.trace_id == call.trace_id]
    envelope, = check(fold(spans))
    assert envelope["status"] == "paused"
    assert "  paused agent Orders Agent" in envelope["evaluation_context"].splitlines()


def test_cancel_requested_by_the_caller_is_canceled_not_an_error(instrument, exporter, provider, remote) -> None:
    """A running task the caller cancels (``CancelTask``): ``TASK_STATE_CANCELED`` on the client's and the
    server's CancelTask spans, neither an error (the caller asked for it)."""
    from a2a.types import CancelTaskRequest, SendMessageConfiguration, SendMessageRequest

    instrument()

    async def go() -> Any:
        client = await client_for(remote.url)
        try:
            request = SendMessageRequest(message=message("slow: where is A100?"),
                                         configuration=SendMessageConfiguration(return_immediately=True))
            events = [e async for e in client.send_message(request)]
            task_id = events[-1].task.id
            return await client.cancel_task(CancelTaskRequest(id=task_id))
        finally:
            await client.close()

    task = run_as_support(provider, go)
    assert task.status.state == 5  # TASK_STATE_CANCELED
    cancel, = [s for s in exporter.spans if s.attributes.get("a2a.method.name") == "CancelTask"]
    assert cancel.attributes["a2a.task.state"] == "TASK_STATE_CANCELED" and cancel.status is not StatusCode.ERROR
    spans = remote.spans_of(cancel.trace_id, where=lambda s: s.attributes.get("a2a.method.name") == "CancelTask")
    served, = [s for s in spans if s.attributes.get("a2a.method.name") == "CancelTask"]
    assert served.parent_id == cancel.span_id and served.status is not StatusCode.ERROR
    assert served.attributes["a2a.task.state"] == "TASK_STATE_CANCELED"


@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
def test_a_call_whose_task_the_caller_cancels_is_canceled_not_an_error(instrument, exporter, provider, remote,
                                                                      client_file, streaming) -> None:
    """The caller sends a message and, while the remote agent works, cancels its task (``CancelTask``): the call
    ends at ``TASK_STATE_CANCELED`` on both sides, and neither the call's span nor the server's is an error
    (the caller asked for it): a cancellation (control flow), which the envelope reports as no failure."""
    from a2a.types import CancelTaskRequest, SendMessageRequest

    instrument()

    async def go() -> Any:
        client = await client_for(remote.url, streaming=streaming)
        canceller = await client_for(remote.url)
        conversation = uuid.uuid4().hex  # (the server is shared: other tests' tasks may be working too)
        try:
            task_ids: list[str] = []

            async def cancel_once_working() -> None:
                while not task_ids:
                    await asyncio.sleep(0.05)
                await canceller.cancel_task(CancelTaskRequest(id=task_ids[0]))

            async def watch_the_task() -> None:
                from a2a.types import ListTasksRequest

                while not task_ids:
                    listed = await canceller.list_tasks(ListTasksRequest())
                    task_ids.extend(t.id for t in listed.tasks  # this call's task, once TASK_STATE_WORKING
                                    if t.context_id == conversation and t.status.state == 2)
                    await asyncio.sleep(0.05)

            helper = asyncio.ensure_future(asyncio.gather(watch_the_task(), cancel_once_working()))
            request = SendMessageRequest(message=message("slow: A100?", context_id=conversation))
            events = [e async for e in client.send_message(request)]
            await helper
            return events
        finally:
            await client.close()
            await canceller.close()

    run_as_support(provider, go)
    call = client_call(exporter)
    assert call.attributes["a2a.task.state"] == "TASK_STATE_CANCELED", call.attributes
    assert call.status is not StatusCode.ERROR and "error.type" not in call.attributes
    served, = [s for s in server_call(remote, call) if s.name == "invoke_agent Orders Agent"]
    assert served.parent_id == call.span_id and served.attributes["a2a.task.state"] == "TASK_STATE_CANCELED"
    assert served.status is not StatusCode.ERROR and "error.type" not in served.attributes
    assert call.attributes["otel_agents.control_flow"] == served.attributes["otel_agents.control_flow"] == "cancelled"
    spans = list(read_otlp_json(client_file)) + [s for s in read_otlp_json(remote.spans_file)
                                                 if s.context.trace_id == call.trace_id]
    envelope, = check(fold(spans))
    lines = envelope["evaluation_context"].splitlines()
    assert lines[:2] == ["agent support", "  agent Orders Agent delegated_by=support"], lines
    assert not [line for line in lines if line.lstrip().startswith("error ")], lines  # before: task_canceled


def test_a_chain_of_three_agent_services_is_one_trace_and_one_run(instrument, exporter, provider, remote,
                                                                   remote_agents, client_file) -> None:
    """The caller asks the Front Desk agent (a process), whose executor asks the Orders Agent (another process)
    over A2A: one trace, each call's server span under its client span, the Front Desk's call of the Orders
    Agent under the Front Desk's run; folded, one envelope with the delegations nested as they happened."""
    front = remote_agents(env={"A2A_TEST_CARD_NAME": "Front Desk"})
    instrument()
    events = run_as_support(provider, lambda: ask(front.url, f"relay {remote.url} Where is my order A100?"))
    assert "A100" in events[-1].task.artifacts[0].parts[0].text
    call = client_call(exporter)
    desk = front.spans_of(call.trace_id, where=lambda s: s.name == "invoke_agent Orders Agent", count=2)
    orders = remote.spans_of(call.trace_id, where=lambda s: s.name == "invoke_agent orders_worker")
    served, = [s for s in desk if s.name == "invoke_agent Front Desk"]
    onward, = [s for s in desk if s.name == "invoke_agent Orders Agent"]
    answered, = [s for s in orders if s.name == "invoke_agent Orders Agent"]
    assert (served.parent_id, onward.parent_id, answered.parent_id) == (call.span_id, served.span_id, onward.span_id)
    spans = list(read_otlp_json(client_file)) + [s for agent in (front, remote)
                                                 for s in read_otlp_json(agent.spans_file)
                                                 if s.context.trace_id == call.trace_id]
    envelope, = check(fold(spans))
    lines = envelope["evaluation_context"].splitlines()
    assert lines[:6] == ["agent support", "  agent Front Desk delegated_by=support", "    span executor.body",
                         "    agent Orders Agent delegated_by=Front Desk", "      span executor.body",
                         "      agent orders_worker delegated_by=Orders Agent"], lines
    assert [(c["name"], c["agent"], c.get("remote_agent")) for c in envelope["tool_calls"]] == \
        [("lookup_order", "orders_worker", "Orders Agent")]
    assert "incomplete" not in envelope and envelope["status"] == "done"


def test_uninstrument_restores_the_sdk(instrument) -> None:
    import a2a.utils.telemetry as sdk_telemetry
    from a2a.client.base_client import BaseClient
    from a2a.server.request_handlers import DefaultRequestHandler

    originals = (BaseClient.__dict__["send_message"], DefaultRequestHandler.__dict__["on_message_send"],
                 sdk_telemetry.trace)
    inst = instrument()
    assert BaseClient.__dict__["send_message"] is not originals[0]
    assert sdk_telemetry.trace is not originals[2]
    inst.uninstrument()
    assert (BaseClient.__dict__["send_message"], DefaultRequestHandler.__dict__["on_message_send"],
            sdk_telemetry.trace) == originals


def test_uninstrument_gives_a_push_sender_its_own_client_back(instrument, exporter) -> None:
    """The push sender's httpx client, proxied while instrumented (to add the notification's trace context), is
    the application's own object again after ``uninstrument()``: no inert proxy left in its place."""
    import httpx
    from a2a.server.tasks import BasePushNotificationSender, InMemoryPushNotificationConfigStore
    from a2a.types import a2a_pb2

    posted: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        posted.append(request.headers.get("traceparent", ""))
        return httpx.Response(200)

    client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    sender = BasePushNotificationSender(client, InMemoryPushNotificationConfigStore())
    push = a2a_pb2.TaskPushNotificationConfig(url="http://127.0.0.1:9/hook")
    task = a2a_pb2.Task(id="t-1", context_id="c-1")

    inst = instrument()
    assert asyncio.run(sender._dispatch_notification(task, push, "t-1")) is True
    assert sender._client is not client and posted[0]  # proxied: the POST carried a traceparent
    assert [s.name for s in exporter.spans] == ["POST"]
    inst.uninstrument()
    assert sender._client is client
    assert asyncio.run(sender._dispatch_notification(task, push, "t-1")) is True
    assert posted[1:] == [""] and [s.name for s in exporter.spans] == ["POST"]


def test_push_notification_carries_the_task_context(instrument, exporter, provider, remote, client_file) -> None:
    """The webhook POST is a CLIENT span under the task's request span, its context in the POST's headers,
    and an ``effect http`` line of the run."""
    instrument()
    with webhook() as (url, received):
        run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?", push_url=url))
        call = client_call(exporter)
        spans = remote.spans_of(call.trace_id, where=lambda s: s.name == "POST" and s.end_time > 0)
        deadline = time.monotonic() + 10
        while not received and time.monotonic() < deadline:
            time.sleep(0.05)
    pushes = [s for s in spans if s.name == "POST"]
    assert pushes and received
    push = pushes[0]
    assert push.kind == "CLIENT" and push.attributes["http.request.method"] == "POST"
    assert push.attributes["url.path"] == "/hook" and push.attributes["http.response.status_code"] == 200
    served, = [s for s in spans if s.name == "invoke_agent Orders Agent"]
    assert served in ancestors(push, spans)
    path, headers = received[0]
    assert path == "/hook" and headers["x-a2a-notification-token"] == "tok"
    trace_hex, parent_hex = headers["traceparent"].split("-")[1:3]
    assert int(trace_hex, 16) == call.trace_id and int(parent_hex, 16) in {p.span_id for p in pushes}
    merged = list(read_otlp_json(client_file)) + [s for s in read_otlp_json(remote.spans_file)
                                                  if s.context.trace_id == call.trace_id]
    envelope, = check(fold(merged))
    assert "effect http POST 127.0.0.1 /hook status=200" in envelope["evaluation_context"]


def test_a_push_after_another_trace_read_the_task_stays_in_the_tasks_trace(instrument, exporter, provider, remote,
                                                                           tmp_path) -> None:
    """A task works on after its request returned (``return_immediately``); meanwhile another trace reads it (a
    dashboard's ``GetTask``). The push notification of its completion is the task's run's effect: in the trace
    of the request that runs it, not in the reader's (whose envelope it would join, and leave the run's)."""
    from a2a.types import GetTaskRequest, SendMessageConfiguration, SendMessageRequest, TaskPushNotificationConfig

    instrument()
    go = tmp_path / "go"

    with webhook() as (url, received):
        async def start() -> str:
            client = await client_for(remote.url)
            try:
                configuration = SendMessageConfiguration(
                    return_immediately=True,
                    task_push_notification_config=TaskPushNotificationConfig(url=url, token="tok"))
                request = SendMessageRequest(message=message(f"wait {go}"), configuration=configuration)
                return [e async for e in client.send_message(request)][-1].task.id
            finally:
                await client.close()

        task_id = run_as_support(provider, start)
        call = client_call(exporter)

        async def look() -> Any:
            client = await client_for(remote.url)
            try:
                with Telemetry(provider, framework="manual").span("agent", "dashboard"):
                    return await client.get_task(GetTaskRequest(id=task_id))
            finally:
                await client.close()

        asyncio.run(look())
        go.write_text("go", encoding="utf-8")
        deadline = time.monotonic() + 30
        while not any(b"TASK_STATE_COMPLETED" in body for body in received.bodies) and time.monotonic() < deadline:
            time.sleep(0.05)
    done = [headers for (_, headers), body in zip(received, received.bodies) if b"TASK_STATE_COMPLETED" in body]
    assert done, received.bodies
    dashboard, = [s for s in exporter.spans if s.name == "invoke_agent dashboard"]
    assert dashboard.trace_id != call.trace_id
    assert {int(headers["traceparent"].split("-")[1], 16) for _, headers in received} == {call.trace_id}


def _card_naming(url: str) -> Any:
    """The remote agent's card (``server_app.card``) with ``url`` as its one (JSON-RPC) interface."""
    from a2a.types import AgentInterface

    from .server_app import card

    named = card(1)
    del named.supported_interfaces[:]
    named.supported_interfaces.append(AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"))
    return named


async def _send_with(card: Any, text: str, push_url: str | None = None) -> list[Any]:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import SendMessageConfiguration, SendMessageRequest, TaskPushNotificationConfig

    client = ClientFactory(ClientConfig(supported_protocol_bindings=["JSONRPC"], streaming=False)).create(card)
    try:
        configuration = SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=push_url, token="tok")) if push_url else None
        request = SendMessageRequest(message=message(text), configuration=configuration)
        return [e async for e in client.send_message(request)]
    finally:
        await client.close()


@pytest.mark.parametrize("port", ["99999", "x"])
def test_a_card_with_a_bad_port_keeps_the_clients_span_and_the_callers_error(instrument, exporter, port) -> None:
    """A card whose interface URL has a port that is not one (``:99999``, ``:x``): urllib's ``.port`` raised
    inside our span start, and the call went on without its span. Now the span is there, ended, with the host
    and no port (none guessed), and the caller gets a2a-sdk's own error, as without instrumentation."""
    card = _card_naming(f"http://127.0.0.1:{port}/")

    def failure() -> BaseException:
        with pytest.raises(BaseException) as caught:
            asyncio.run(_send_with(card, "Where is my order A100?"))
        return caught.value

    plain = failure()
    instrument()
    raised = failure()
    assert (type(raised), str(raised)) == (type(plain), str(plain))
    call, = [s for s in exporter.spans if s.name == "invoke_agent Orders Agent"]
    assert call.kind == "CLIENT" and call.end_time > 0 and call.status == StatusCode.ERROR
    assert call.attributes["server.address"] == "127.0.0.1" and "server.port" not in call.attributes
    assert call.attributes["a2a.method.name"] == "SendMessage"


def test_a_bad_port_in_the_servers_card_or_a_push_url_keeps_their_spans(instrument, exporter, provider,
                                                                       remote_agents) -> None:
    """The server's own card names a port that is not one (a misconfigured public URL; the client has a card
    of its own), and the request asks for pushes to a webhook whose port is not one: both spans were lost (the
    request's and the push's), urllib raising in their start. Now the request is served under its span, and
    the push's span records the host without a port and the failed delivery."""
    remote = remote_agents(env={"A2A_TEST_CARD_PORT": "99999"})
    instrument()
    events = run_as_support(provider, lambda: _send_with(_card_naming(remote.url), "Where is my order A100?",
                                                         push_url="http://127.0.0.1:70000/hook"))
    assert events
    call = client_call(exporter)
    assert call.attributes["server.port"] == remote.port and call.status != StatusCode.ERROR
    spans = remote.spans_of(call.trace_id, where=lambda s: s.name in ("invoke_agent Orders Agent", "POST")
                            and s.end_time > 0, count=2)
    served, = [s for s in spans if s.name == "invoke_agent Orders Agent"]
    assert served.kind == "SERVER" and served.end_time > 0 and parent_of(served, [call] + spans) is not None
    pushes = [s for s in spans if s.name == "POST"]  # one a task update
    for push in pushes:
        assert push.end_time > 0 and push.status == StatusCode.ERROR and served in ancestors(push, spans)
        assert push.attributes["server.address"] == "127.0.0.1" and "server.port" not in push.attributes
        assert push.attributes["url.path"] == "/hook"
