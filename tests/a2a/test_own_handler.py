"""A2A served through a request handler of the application's own (``server_app.py``'s ``A2A_TEST_HANDLER``), across
real processes: a ``RequestHandler`` subclass that runs the agent itself, a ``DefaultRequestHandler`` subclass whose
overrides call ``super()``, and a handler of its own that hands every request to a ``DefaultRequestHandler``. Each
request is one server span under the caller's, whatever handler methods it passes through."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from tests.spans import SpanSnapshot, ancestors

from .harness import RemoteAgent, ask, client_for, message
from .test_a2a import BINDINGS, client_call, run_as_support


def served(remote: RemoteAgent, call: SpanSnapshot, *, wait_for: str = "invoke_agent Orders Agent"
           ) -> tuple[SpanSnapshot, list[SpanSnapshot]]:
    """The one server span of ``call`` on ``remote`` (every span of the trace carrying ``a2a.method.name``: one),
    and the remote's spans of the trace, once a span named ``wait_for`` and a server span are written (in either
    order: a handler's span can be written before the request's, which ends after it)."""
    def written(spans: list[SpanSnapshot]) -> bool:
        return any(s.name == wait_for for s in spans) and any("a2a.method.name" in s.attributes for s in spans)

    spans = remote.spans_of(call.trace_id, until=written, timeout=60.0)
    requests = [s for s in spans if "a2a.method.name" in s.attributes]
    assert len(requests) == 1, [(s.name, s.parent_id) for s in requests]
    return requests[0], spans


def check_served(span: SpanSnapshot, call: SpanSnapshot) -> None:
    """The server's span of the client's ``call``: its child across the wire, the remote agent's run."""
    assert span.name == "invoke_agent Orders Agent" and span.kind == "SERVER" and span.semantic_kind == "agent"
    assert span.parent_id == call.span_id
    assert span.attributes["a2a.method.name"] == call.attributes["a2a.method.name"]
    assert span.attributes["gen_ai.agent.name"] == "Orders Agent"
    assert span.attributes["gen_ai.agent.version"] == "2.1.0"
    assert span.attributes["input.value"] == call.attributes["input.value"]


@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
@pytest.mark.parametrize("binding", BINDINGS)
def test_an_own_handler_serves_under_the_callers_span(instrument, exporter, provider, remote_agents, binding,
                                                      streaming) -> None:
    remote = remote_agents(grpc=True, env={"A2A_TEST_HANDLER": "custom"})
    instrument()
    events = run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?", binding=binding,
                                                  streaming=streaming))
    assert len(events) == (3 if streaming else 1)
    call = client_call(exporter)
    assert call.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED" and "UPS" in call.attributes["output.value"]
    span, spans = served(remote, call)
    check_served(span, call)
    assert span.attributes["a2a.task.id"] == call.attributes["a2a.task.id"]
    assert span.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED" and span.status is StatusCode.UNSET
    assert "UPS" in span.attributes["output.value"]
    body, = [s for s in spans if s.name == "handler.body"]
    assert body.parent_id == span.span_id
    worker, = [s for s in spans if s.name == "invoke_agent orders_worker"]
    assert body in ancestors(worker, spans)


@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
def test_an_own_handler_that_raises_ends_its_span_with_the_error(instrument, exporter, provider, remote_agents,
                                                                 streaming) -> None:
    remote = remote_agents(env={"A2A_TEST_HANDLER": "custom"})
    instrument()
    with pytest.raises(Exception):
        run_as_support(provider, lambda: ask(remote.url, "boom: where is A100?", streaming=streaming))
    call = client_call(exporter)
    assert call.status is StatusCode.ERROR
    span, spans = served(remote, call)
    check_served(span, call)
    assert span.status is StatusCode.ERROR and span.attributes["error.type"] == "RuntimeError"
    body, = [s for s in spans if s.name == "handler.body"]
    assert body.parent_id == span.span_id and body.status is StatusCode.ERROR


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.Task.cancelling() is Python 3.11+")
def test_an_own_handlers_stream_the_client_leaves_ends_abandoned(instrument, exporter, provider,
                                                                  remote_agents) -> None:
    """The client closes the stream while the handler works: its span ends (abandoned, not an error), and the
    handler's own work under it ends too."""
    remote = remote_agents(env={"A2A_TEST_HANDLER": "custom"})
    instrument()

    async def leave() -> None:
        from a2a.types import SendMessageRequest

        client = await client_for(remote.url, streaming=True)
        stream = client.send_message(SendMessageRequest(message=message("slow: where is A100?")))
        async for _ in stream:
            break
        await stream.aclose()
        await client.close()

    run_as_support(provider, leave)
    call = client_call(exporter)
    span, spans = served(remote, call, wait_for="handler.body")
    check_served(span, call)
    assert span.attributes.get("otel_agents.stream.abandoned") is True, span.attributes
    assert span.attributes["a2a.task.state"] == "TASK_STATE_WORKING" and span.status is not StatusCode.ERROR
    body, = [s for s in spans if s.name == "handler.body"]
    assert body.parent_id == span.span_id


@pytest.mark.parametrize("handler", ["subclass", "router"])
@pytest.mark.parametrize("streaming", [False, True], ids=["unary", "streaming"])
def test_a_handler_calling_a_default_handler_is_one_span(instrument, exporter, provider, remote_agents, handler,
                                                         streaming) -> None:
    """An override that calls ``super()`` (``subclass``), or a handler with no card of its own that hands the
    request to a ``DefaultRequestHandler`` (``router``): both handler methods run for one request, which is one
    span, named after the card of the handler that has one, with the application's span and the executor's
    under it."""
    remote = remote_agents(env={"A2A_TEST_HANDLER": handler})
    instrument()
    run_as_support(provider, lambda: ask(remote.url, "Where is my order A100?", streaming=streaming))
    call = client_call(exporter)
    span, spans = served(remote, call)
    check_served(span, call)
    assert span.attributes["a2a.task.id"] == call.attributes["a2a.task.id"]
    assert span.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED" and span.status is StatusCode.UNSET
    assert span.attributes["gen_ai.agent.description"] == "Knows every order (secret description)"
    own, = [s for s in spans if s.name == ("handler.audit" if handler == "subclass" else "handler.route")]
    assert own.parent_id == span.span_id
    body, = [s for s in spans if s.name == "executor.body"]
    assert body.parent_id == span.span_id
    worker, = [s for s in spans if s.name == "invoke_agent orders_worker"]
    assert span in ancestors(worker, spans)


def _handler(**methods: Any) -> Any:
    """A ``RequestHandler`` of one's own with ``methods`` (the others raise ``NotImplementedError``)."""
    from a2a.server.request_handlers.request_handler import RequestHandler

    async def unsupported(self: Any, params: Any, context: Any) -> Any:
        raise NotImplementedError

    return type("Own", (RequestHandler,), {**{n: unsupported for n in RequestHandler.__abstractmethods__},
                                           **methods})


def test_a_handler_of_ones_own_is_wrapped_and_unwrapped(instrument, exporter) -> None:
    """In one process: a ``RequestHandler`` subclass defined before ``instrument()`` and one defined after are both
    traced, a method calling another of its handler for the same request is one span, no span is left current;
    ``uninstrument()`` gives every class its own methods back, and ``RequestHandler`` its own
    ``__init_subclass__``."""
    from a2a.server.context import ServerCallContext
    from a2a.server.request_handlers.request_handler import RequestHandler
    from a2a.types import GetTaskRequest, SendMessageRequest, Task

    async def on_get_task(self: Any, params: Any, context: Any) -> Any:
        return Task(id=params.id, context_id="c-1")

    async def on_message_send(self: Any, params: Any, context: Any) -> Any:
        return await self.on_get_task(GetTaskRequest(id="t-1"), context)  # the same request: no second span

    async def on_message_send_stream(self: Any, params: Any, context: Any) -> Any:
        yield Task(id="t-1", context_id="c-1")

    def handler_class() -> type:
        return _handler(on_get_task=on_get_task, on_message_send=on_message_send,
                        on_message_send_stream=on_message_send_stream)

    before = handler_class()
    originals = {"on_get_task": on_get_task, "on_message_send": on_message_send,
                 "on_message_send_stream": on_message_send_stream}
    hook = RequestHandler.__dict__.get("__init_subclass__")
    inst = instrument()
    after = handler_class()

    async def serve(handler: Any) -> None:
        request = SendMessageRequest(message=message("hi"))
        assert (await handler.on_message_send(request, ServerCallContext())).id == "t-1"
        assert [e.id async for e in handler.on_message_send_stream(request, ServerCallContext())] == ["t-1"]
        assert not trace.get_current_span().get_span_context().is_valid

    for cls in (before, after):
        exporter.clear()
        asyncio.run(serve(cls()))
        assert sorted((s.name, s.kind, s.attributes["a2a.method.name"]) for s in exporter.spans) == [
            ("invoke_agent", "SERVER", "SendMessage"), ("invoke_agent", "SERVER", "SendStreamingMessage")]
        assert {s.attributes["a2a.task.id"] for s in exporter.spans} == {"t-1"}
    inst.uninstrument()
    for cls in (before, after):
        assert {name: cls.__dict__[name] for name in originals} == originals
    assert RequestHandler.__dict__.get("__init_subclass__") is hook
    exporter.clear()
    asyncio.run(serve(after()))
    asyncio.run(serve(handler_class()()))
    assert exporter.spans == []


def test_a_failure_of_ours_leaves_the_request_served(instrument, exporter, caplog) -> None:
    """The handler's card cannot be read (a property that raises): the request is served as if uninstrumented,
    no span opened, the error logged as ours."""
    from a2a.server.context import ServerCallContext
    from a2a.types import SendMessageRequest, Task

    async def on_message_send(self: Any, params: Any, context: Any) -> Any:
        return Task(id="t-1")

    async def on_message_send_stream(self: Any, params: Any, context: Any) -> Any:
        yield Task(id="t-1")

    def broken(self: Any) -> Any:
        raise RuntimeError("card store down")

    handler = _handler(on_message_send=on_message_send, on_message_send_stream=on_message_send_stream,
                       agent_card=property(broken))()
    instrument()
    caplog.set_level(logging.DEBUG, logger="otel_agents")  # a site already reported logs at DEBUG

    async def serve() -> list[str]:
        request = SendMessageRequest(message=message("hi"))
        return [(await handler.on_message_send(request, ServerCallContext())).id] + \
            [e.id async for e in handler.on_message_send_stream(request, ServerCallContext())]

    assert asyncio.run(serve()) == ["t-1", "t-1"]
    assert exporter.spans == []
    assert "internal error in a2a.server.start" in caplog.text and "card store down" in caplog.text


def test_a_stream_method_that_is_not_a_generator_is_returned_as_it_is(instrument, exporter) -> None:
    """An ``async def`` override of ``on_message_send_stream`` that returns (no binding can iterate its coroutine):
    the caller gets that coroutine, as uninstrumented, and the span ends with the error it is."""
    from a2a.server.context import ServerCallContext
    from a2a.types import SendMessageRequest

    async def on_message_send_stream(self: Any, params: Any, context: Any) -> Any:
        return []

    handler = _handler(on_message_send_stream=on_message_send_stream)()
    instrument()
    returned = handler.on_message_send_stream(SendMessageRequest(message=message("hi")), ServerCallContext())
    assert asyncio.iscoroutine(returned)
    assert asyncio.run(returned) == []
    span, = exporter.spans
    assert span.attributes["a2a.method.name"] == "SendStreamingMessage" and span.end_time
    assert span.status is StatusCode.ERROR and span.attributes["error.type"] == "TypeError"
