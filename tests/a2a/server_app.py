"""The remote agent of the A2A tests: an a2a-sdk server ("Orders Agent") in a child process.

Its ``AgentExecutor`` runs a LangGraph agent (the customer-support example's, over its fake
model and the ``lookup_order``/``check_refund_policy`` tools) on the user's text and answers
with an artifact; by the text:

* ``fail …`` → the task ends ``TASK_STATE_FAILED`` with the status text ``orders db down``;
* ``reject …`` → ``TASK_STATE_REJECTED``;
* ``crash …`` → the executor raises ``RuntimeError`` (a2a-sdk fails the task);
* ``which …`` → ``TASK_STATE_INPUT_REQUIRED`` ("Which order?"); the resumed request (same task)
  runs the agent on its own text and completes;
* ``login …`` → ``TASK_STATE_AUTH_REQUIRED`` ("Sign in first");
* ``late …`` → runs the agent, then works for a minute before answering;
* ``slow …`` → works for a minute (until a ``CancelTask`` ends it ``TASK_STATE_CANCELED``);
* ``wait PATH`` → works until the file ``PATH`` exists, then completes;
* ``relay URL TEXT`` → asks the A2A agent at ``URL`` ``TEXT`` (a2a-sdk's client, JSON-RPC) and answers
  with that agent's answer (a chain of agent services);
* anything else → the agent's answer as an artifact, ``TASK_STATE_COMPLETED``.

The executor body opens an application span ``executor.body`` carrying the ``user.id`` baggage
it received. ``python server_app.py HTTP_PORT [GRPC_PORT]``: JSON-RPC at ``/``, HTTP+JSON at
``/rest``, the card at ``/.well-known/agent-card.json``, gRPC on ``GRPC_PORT`` when given; push
notifications to the webhook a request configures (in-memory config store); spans
to the OTLP/JSON file ``A2A_TEST_SPANS``; instrumented unless ``A2A_TEST_INSTRUMENT=0``; its card names the
port ``A2A_TEST_CARD_PORT`` (any text, a misconfigured one) instead of ``HTTP_PORT`` when that is set, and is
named ``A2A_TEST_CARD_NAME`` (default ``Orders Agent``); with ``A2A_TEST_ASGI=1`` its HTTP app is wrapped in
OpenTelemetry's ASGI middleware (``opentelemetry-instrumentation-asgi``: an HTTP server span per request).

``A2A_TEST_HANDLER`` picks the request handler (every binding serves it): unset, a2a-sdk's
``DefaultRequestHandler``; ``custom``, the application's own ``RequestHandler`` subclass (:func:`custom_handler`:
no executor, it runs the LangGraph agent itself); ``subclass``, a ``DefaultRequestHandler`` subclass whose
overrides audit each message (an application span ``handler.audit``) and call ``super()``; ``router``, a
``RequestHandler`` of its own without a card that hands every request to a ``DefaultRequestHandler``
(:func:`router`).
"""

from __future__ import annotations

import asyncio
import os
import sys

from opentelemetry import baggage, trace

_EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "customer_support")
sys.path.insert(0, os.path.abspath(_EXAMPLE))


def card(http_port: int | str, grpc_port: int | None = None):
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

    interfaces = [AgentInterface(url=f"http://127.0.0.1:{http_port}/", protocol_binding="JSONRPC", protocol_version="1.0"),
                  AgentInterface(url=f"http://127.0.0.1:{http_port}/rest", protocol_binding="HTTP+JSON",
                                 protocol_version="1.0")]
    if grpc_port:
        interfaces.append(AgentInterface(url=f"127.0.0.1:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"))
    return AgentCard(name=os.environ.get("A2A_TEST_CARD_NAME", "Orders Agent"),
                     description="Knows every order (secret description)", version="2.1.0",
                     supported_interfaces=interfaces,
                     capabilities=AgentCapabilities(streaming=True, push_notifications=True),
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"],
                     skills=[AgentSkill(id="orders", name="orders", description="order status", tags=["orders"])])


async def relay(url: str, text: str) -> str:
    """The text of the answer of the A2A agent at ``url`` to ``text`` (its last artifact's parts)."""
    import uuid

    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest

    client = await create_client(url, client_config=ClientConfig(streaming=False))
    try:
        request = SendMessageRequest(message=Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                                                     parts=[Part(text=text)]))
        events = [e async for e in client.send_message(request)]
    finally:
        await client.close()
    task = events[-1].task
    return "\n".join(p.text for a in task.artifacts for p in a.parts)


def executor(tracer: trace.Tracer):
    from a2a.helpers import new_task, new_text_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.tasks import TaskUpdater
    from a2a.types import Role, TaskState

    import langchain_agent

    graph = langchain_agent.build(name="orders_worker")

    class OrdersExecutor(AgentExecutor):
        async def execute(self, context, event_queue) -> None:
            text = context.get_user_input()
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            if context.current_task is None:  # a2a-sdk 1.x: the Task first, then its status updates
                await event_queue.enqueue_event(new_task(context.task_id, context.context_id,
                                                         TaskState.TASK_STATE_SUBMITTED, history=[context.message]))
            await updater.start_work()
            with tracer.start_as_current_span("executor.body") as span:
                span.set_attribute("baggage.user.id", str(baggage.get_baggage("user.id")))
            resumed = context.current_task is not None and \
                context.current_task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            if text.startswith("fail"):
                await updater.failed(new_text_message("orders db down", role=Role.ROLE_AGENT))
                return
            if text.startswith("crash"):
                raise RuntimeError("orders db connection refused")
            if text.startswith("reject"):
                await updater.reject(new_text_message("not my job", role=Role.ROLE_AGENT))
                return
            if text.startswith("wait "):
                while not os.path.exists(text.split(" ", 1)[1]):
                    await asyncio.sleep(0.05)
                await updater.add_artifact([new_text_part("done")], name="answer")
                await updater.complete()
                return
            if text.startswith("relay "):
                _, url, asked = text.split(" ", 2)
                answer = await relay(url, asked)
                await updater.add_artifact([new_text_part(answer)], name="answer")
                await updater.complete()
                return
            if text.startswith("slow"):
                await asyncio.sleep(60)  # cancelled by CancelTask (the handler cancels the producer)
                await updater.complete()
                return
            if text.startswith("login"):
                await updater.requires_auth(new_text_message("Sign in first", role=Role.ROLE_AGENT))
                return
            if text.startswith("which") and not resumed:
                await updater.requires_input(new_text_message("Which order?", role=Role.ROLE_AGENT))
                return
            answer = await asyncio.to_thread(langchain_agent._run, graph, text)
            if text.startswith("late"):
                await asyncio.sleep(60)  # the agent ran, its answer not yet sent (a server killed here)
            await updater.add_artifact([new_text_part(answer)], name="answer")
            await updater.complete()

        async def cancel(self, context, event_queue) -> None:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    return OrdersExecutor()


def custom_handler(agent_card, tracer: trace.Tracer):
    """The application's own ``RequestHandler``: answers ``SendMessage``/``SendStreamingMessage`` by running the
    LangGraph agent in the handler itself (a completed task with its answer as an artifact; streamed: the task
    working, the artifact, the status completed); by the text, ``boom …`` → the handler raises ``RuntimeError``
    (streamed: after the first event), ``slow …`` → streamed, works for a minute after the first event. The other
    methods: no task is known, push notifications unsupported."""
    import uuid

    from a2a.helpers import new_task, new_text_artifact, new_text_artifact_update_event
    from a2a.server.request_handlers.request_handler import RequestHandler
    from a2a.types import ListTasksResponse, TaskState, TaskStatus, TaskStatusUpdateEvent
    from a2a.utils.errors import UnsupportedOperationError

    import langchain_agent

    graph = langchain_agent.build(name="orders_worker")

    def start(params):
        text = "\n".join(p.text for p in params.message.parts)
        return text, params.message.task_id or uuid.uuid4().hex, params.message.context_id or uuid.uuid4().hex

    class OrdersHandler(RequestHandler):
        def __init__(self):
            self.agent_card = agent_card

        async def on_message_send(self, params, context):
            text, task_id, context_id = start(params)
            with tracer.start_as_current_span("handler.body"):
                if text.startswith("boom"):
                    raise RuntimeError("orders handler down")
                answer = await asyncio.to_thread(langchain_agent._run, graph, text)
            return new_task(task_id, context_id, TaskState.TASK_STATE_COMPLETED,
                            artifacts=[new_text_artifact("answer", answer)], history=[params.message])

        async def on_message_send_stream(self, params, context):
            text, task_id, context_id = start(params)
            yield new_task(task_id, context_id, TaskState.TASK_STATE_WORKING, history=[params.message])
            with tracer.start_as_current_span("handler.body"):
                if text.startswith("boom"):
                    raise RuntimeError("orders handler down")
                if text.startswith("slow"):
                    await asyncio.sleep(60)
                answer = await asyncio.to_thread(langchain_agent._run, graph, text)
            yield new_text_artifact_update_event(task_id, context_id, "answer", answer, last_chunk=True)
            yield TaskStatusUpdateEvent(task_id=task_id, context_id=context_id,
                                        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))

        async def on_get_task(self, params, context):
            return None

        async def on_list_tasks(self, params, context):
            return ListTasksResponse()

        async def on_cancel_task(self, params, context):
            return None

        async def on_subscribe_to_task(self, params, context):
            raise UnsupportedOperationError("no tasks to subscribe to")
            yield

        async def on_create_task_push_notification_config(self, params, context):
            raise UnsupportedOperationError("no push notifications")

        async def on_get_task_push_notification_config(self, params, context):
            raise UnsupportedOperationError("no push notifications")

        async def on_list_task_push_notification_configs(self, params, context):
            raise UnsupportedOperationError("no push notifications")

        async def on_delete_task_push_notification_config(self, params, context):
            raise UnsupportedOperationError("no push notifications")

        async def on_get_extended_agent_card(self, params, context):
            return self.agent_card

    return OrdersHandler()


def audited(handler_class, tracer: trace.Tracer):
    """``handler_class`` (a2a-sdk's ``DefaultRequestHandler``) with overrides that audit each message in an
    application span ``handler.audit``, then call ``super()``."""

    class AuditedHandler(handler_class):
        async def on_message_send(self, params, context):
            with tracer.start_as_current_span("handler.audit"):
                pass
            return await super().on_message_send(params, context)

        async def on_message_send_stream(self, params, context):
            with tracer.start_as_current_span("handler.audit"):
                pass
            async for event in super().on_message_send_stream(params, context):
                yield event

    return AuditedHandler


def router(inner, tracer: trace.Tracer):
    """A ``RequestHandler`` of the application's own, with no card, that hands every request to ``inner``: plain
    functions returning ``inner``'s coroutine or stream, a ``SendMessage``/``SendStreamingMessage`` routed in an
    application span ``handler.route``."""
    from a2a.server.request_handlers.request_handler import RequestHandler

    def forward(name):
        def method(self, params, context):
            if name.startswith("on_message_send"):
                with tracer.start_as_current_span("handler.route"):
                    return getattr(inner, name)(params, context)
            return getattr(inner, name)(params, context)

        return method

    methods = {name: forward(name) for name in RequestHandler.__abstractmethods__}
    return type("RouterHandler", (RequestHandler,), methods)()


def main() -> None:
    import uvicorn
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from starlette.applications import Starlette

    from otel_agents.exporters.file import OTLPJsonFileExporter

    provider = TracerProvider(resource=Resource.create({"service.name": "orders-a2a-server"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(os.environ["A2A_TEST_SPANS"])))
    if os.environ.get("A2A_TEST_OTLP"):  # also to an OTLP/HTTP receiver (ecp collect), batched as deployed
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=os.environ["A2A_TEST_OTLP"]),
                                                       schedule_delay_millis=100))
    trace.set_tracer_provider(provider)  # a2a-sdk's own spans would go here if it were not stood down
    if os.environ.get("A2A_TEST_INSTRUMENT", "1") == "1":
        from otel_agents.instrumentors.a2a import A2AInstrumentor
        from otel_agents.instrumentors.langchain import LangChainInstrumentor

        A2AInstrumentor().instrument(tracer_provider=provider)
        LangChainInstrumentor().instrument(tracer_provider=provider)
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
    from a2a.server.tasks import InMemoryTaskStore

    http_port = int(sys.argv[1])
    grpc_port = int(sys.argv[2]) if len(sys.argv) > 2 else None
    agent_card = card(os.environ.get("A2A_TEST_CARD_PORT") or http_port, grpc_port)
    import httpx
    from a2a.server.tasks import BasePushNotificationSender, InMemoryPushNotificationConfigStore

    push_store = InMemoryPushNotificationConfigStore()
    tracer = provider.get_tracer("tests.a2a.server")
    kind = os.environ.get("A2A_TEST_HANDLER", "")
    handler_class = audited(DefaultRequestHandler, tracer) if kind == "subclass" else DefaultRequestHandler
    handler = handler_class(executor(tracer), InMemoryTaskStore(), agent_card, push_config_store=push_store,
                            push_sender=BasePushNotificationSender(httpx.AsyncClient(), push_store))
    if kind == "custom":
        handler = custom_handler(agent_card, tracer)
    elif kind == "router":
        handler = router(handler, tracer)
    app = Starlette(routes=[*create_agent_card_routes(agent_card), *create_jsonrpc_routes(handler, "/"),
                            *create_rest_routes(handler, path_prefix="/rest")])
    if os.environ.get("A2A_TEST_ASGI") == "1":  # an HTTP server span per request (the ASGI instrumentation)
        from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

        app = OpenTelemetryMiddleware(app, tracer_provider=provider)

    async def serve() -> None:
        servers = []
        if grpc_port:
            import grpc
            from a2a.server.request_handlers import GrpcHandler
            from a2a.types import a2a_pb2_grpc

            server = grpc.aio.server()
            a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
            server.add_insecure_port(f"127.0.0.1:{grpc_port}")
            await server.start()
            servers.append(server)
        config = uvicorn.Config(app, host="127.0.0.1", port=http_port, log_level="warning")
        await uvicorn.Server(config).serve()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
