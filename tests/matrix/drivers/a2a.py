"""A2A cells: a client calling a remote agent (multi-agent across the A2A protocol). Client and server run in
one process, as ``tests/a2a/test_contract.py`` runs them, on each of a2a-sdk's bindings: JSON-RPC and HTTP+JSON
(REST) through ``httpx.ASGITransport`` to the server's Starlette app, gRPC through a ``grpc.aio`` server on a
loopback port (``GrpcHandler``) started in the run's own event loop; the cross-process behaviour, on the three
bindings, is ``tests/a2a/test_a2a.py``'s. The remote
agent's ``AgentExecutor`` runs the PydanticAI cell's agent (``weather_agent`` over its user-written model,
with the weather tool) on the user's text and answers with an artifact; a run that raises fails the task
with the error's text as its status message. Both instrumentors are on (A2A and PydanticAI): the remote
agent's run nests under the server's span of the call, the caller's ``invoke_agent Weather Desk`` span is
the run's root, whose output is the artifact."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from otel_agents.instrumentors.a2a import A2AInstrumentor
from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor
from tests.matrix.drivers import pydantic_ai as remote
from tests.matrix.truth import CITY, Truth

URL = "http://127.0.0.1/"
CARD = "Weather Desk"


class INSTRUMENTOR:
    """A2A's instrumentor and the remote agent's framework's, on and off together."""

    def __init__(self) -> None:
        self.parts = (A2AInstrumentor(), PydanticAIInstrumentor())

    def instrument(self, **kwargs: Any) -> None:
        for part in self.parts:
            part.instrument(**kwargs)

    def uninstrument(self) -> None:
        for part in reversed(self.parts):
            part.uninstrument()


def _handler(truth: Truth, binding: str, url: str) -> tuple[Any, Any]:
    """The remote agent's request handler, and its card offering ``binding`` at ``url``."""
    from a2a.helpers import new_task, new_text_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, Role, TaskState

    agent = remote._agent(truth)
    truth.agents = [(CARD, None), ("weather_agent", CARD)]
    if truth.ending in ("break_close", "break_drop"):
        truth.top = CARD  # the caller left before the answer reached it: the remote agent's answer is not its run's

    class Executor(AgentExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            await event_queue.enqueue_event(new_task(context.task_id, context.context_id,
                                                     TaskState.TASK_STATE_SUBMITTED))
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.start_work()
            try:
                result = await agent.run(context.get_user_input())
            except Exception as exc:  # noqa: BLE001 - the remote agent fails its task, with the error's text
                truth.error_output = str(exc)
                await updater.failed(new_text_message(str(exc), role=Role.ROLE_AGENT))
                return
            await updater.add_artifact([new_text_part(result.output)])
            await updater.complete()

        async def cancel(self, context: Any, event_queue: Any) -> None:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    card = AgentCard(name=CARD, version="1.0.0", capabilities=AgentCapabilities(streaming=True),
                     supported_interfaces=[AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0")],
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"])
    return DefaultRequestHandler(Executor(), InMemoryTaskStore(), card), card


def _send(truth: Truth, streaming: bool, binding: str = "JSONRPC") -> Any:
    """``client.send_message`` (an async stream of events in a2a-sdk 1.x, one event when not streaming) over
    ``binding``: ``JSONRPC`` or ``HTTP+JSON`` to the server's Starlette app in process, ``GRPC`` to a
    ``grpc.aio`` server on a loopback port, stopped when the stream ends."""
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, SendMessageRequest

    request = SendMessageRequest(message=Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                                                 parts=[Part(text=CITY)]))

    async def over_http() -> Any:
        from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
        from starlette.applications import Starlette

        handler, card = _handler(truth, binding, URL)
        routes = create_jsonrpc_routes(handler, "/") if binding == "JSONRPC" else create_rest_routes(handler)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=Starlette(routes=routes))) as http:
            client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http,
                                                supported_protocol_bindings=[binding])).create(card)
            async for event in client.send_message(request):
                yield event

    async def over_grpc() -> Any:
        import grpc
        from a2a.server.request_handlers import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        server = grpc.aio.server()
        port = server.add_insecure_port("127.0.0.1:0")  # loopback only
        handler, card = _handler(truth, binding, f"127.0.0.1:{port}")
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
        await server.start()
        client = None
        try:
            client = ClientFactory(ClientConfig(streaming=streaming, grpc_channel_factory=grpc.aio.insecure_channel,
                                                supported_protocol_bindings=[binding])).create(card)
            async for event in client.send_message(request):
                yield event
        finally:
            if client is not None:
                await client.close()
            await server.stop(None)

    return over_grpc() if binding == "GRPC" else over_http()


async def _unary(truth: Truth, binding: str = "JSONRPC") -> Any:
    return [_event(e) async for e in _send(truth, False, binding)]


def _event(event: Any) -> Any:
    """What the caller sees: which event, the task's state and its artifacts' text (ids are random)."""
    for name in ("task", "status_update", "artifact_update", "message"):
        if event.HasField(name):
            item = getattr(event, name)
            status = item.status if hasattr(item, "status") and item.HasField("status") else None
            artifacts = list(item.artifacts) if name == "task" else [item.artifact] if name == "artifact_update" else []
            return (name, int(status.state) if status is not None else None,
                    [p.text for a in artifacts for p in a.parts])
    return type(event).__name__


ENTRIES = {
    "send_message": lambda t: (lambda: _unary(t), lambda x: x),
    "send_message streaming": lambda t: (lambda: _send(t, True), _event),
    "HTTP+JSON send_message": lambda t: (lambda: _unary(t, "HTTP+JSON"), lambda x: x),
    "HTTP+JSON send_message streaming": lambda t: (lambda: _send(t, True, "HTTP+JSON"), _event),
    "gRPC send_message": lambda t: (lambda: _unary(t, "GRPC"), lambda x: x),
    "gRPC send_message streaming": lambda t: (lambda: _send(t, True, "GRPC"), _event),
}
