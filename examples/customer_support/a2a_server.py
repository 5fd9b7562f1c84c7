"""The remote "Orders Agent" of ``a2a_agent.py``: an A2A server (a2a-sdk) whose agent is the LangGraph one.

It owns ``lookup_order``: each A2A message ("Where is my order A100?") runs the LangGraph agent of
``langchain_agent.py`` (the same fake model and brain), which calls its ``lookup_order`` tool; the
task completes with the tool's order record (JSON) as its artifact, the data the caller's agent
needs. ``python a2a_server.py PORT [PARENT_PID]`` serves JSON-RPC at ``http://127.0.0.1:PORT/`` and the Agent
Card at ``/.well-known/agent-card.json`` (loopback only, answering a request only when its ``Host`` is
``127.0.0.1`` or ``localhost``), until it is stopped or, given ``PARENT_PID``, until that process (the agent
that started it) has ended, however it ended.

Telemetry: when ``CUSTOMER_SUPPORT_A2A_TRACES`` names a file, or an OTLP endpoint is set
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``: ``otel-agents ecp serve
--collect`` sets it for the agent's child processes), the server is instrumented (the ``a2a`` and
``langchain`` instrumentors) and sends its spans there: the A2A call's server span is a child of the
caller's, through the W3C context in the request's headers, and ``ecp serve --collect`` folds this
process's spans into each step (``agent Orders Agent delegated_by=customer_support``, the remote
``lookup_order`` with ``remote_agent``). Neither set, it follows ``OTEL_AGENTS_EXPORTERS`` (inherited from
``a2a_agent.py`` run as a script), as the agent does. Each span is sent as it ends
(``common.configure_server_tracing``): the agent ends this process at its exit, and uvicorn then re-raises
the SIGTERM, so no exit flush runs.
"""

from __future__ import annotations

import asyncio
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

NAME = "Orders Agent"


def build_app(port: int):
    """The Starlette app: the Agent Card and the JSON-RPC endpoint of the Orders Agent."""
    from a2a.helpers import new_task, new_text_part
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
    from langchain_core.messages import HumanMessage, ToolMessage
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    import langchain_agent

    graph = langchain_agent.build(name="orders")

    class OrdersExecutor(AgentExecutor):
        """Runs the LangGraph agent on the message; the artifact is its ``lookup_order`` result."""

        async def execute(self, context, event_queue) -> None:
            if context.current_task is None:
                await event_queue.enqueue_event(new_task(context.task_id, context.context_id,
                                                         TaskState.TASK_STATE_SUBMITTED, history=[context.message]))
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.start_work()
            state = await graph.ainvoke({"messages": [HumanMessage(context.get_user_input())]})
            records = [m.content for m in state["messages"] if isinstance(m, ToolMessage) and m.name == "lookup_order"]
            await updater.add_artifact([new_text_part(str(records[-1]) if records else "{}")], name="order")
            await updater.complete()

        async def cancel(self, context, event_queue) -> None:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    card = AgentCard(name=NAME, description="Looks orders up in the order system.", version="1.0.0",
                     supported_interfaces=[AgentInterface(url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC",
                                                          protocol_version="1.0")],
                     capabilities=AgentCapabilities(streaming=False), default_input_modes=["text/plain"],
                     default_output_modes=["text/plain"],
                     skills=[AgentSkill(id="lookup_order", name="lookup_order", description="An order's record",
                                        tags=["orders"])])
    handler = DefaultRequestHandler(OrdersExecutor(), InMemoryTaskStore(), card)
    # loopback only, and only under a loopback name: a web page whose own name resolves to 127.0.0.1 (DNS
    # rebinding) sends its own Host, and gets 400 instead of the agent
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")],
                     middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"])])


def main() -> None:
    from common import configure_server_tracing

    configure_server_tracing("a2a-orders", "CUSTOMER_SUPPORT_A2A_TRACES", ["a2a", "langchain"])
    import uvicorn

    port = int(sys.argv[1])
    server = uvicorn.Server(uvicorn.Config(build_app(port), host="127.0.0.1", port=port, log_level="warning"))
    asyncio.run(serve(server, int(sys.argv[2]) if len(sys.argv) > 2 else None))


async def serve(server, parent: int | None) -> None:
    """Run the uvicorn ``server`` until it is stopped or, with ``parent`` (a process id), until that process is no
    longer this one's parent: the agent that started it ended without stopping it (a SIGTERM or SIGKILL skips
    its ``atexit``), and this server must not outlive it."""

    async def watch() -> None:
        while os.getppid() == parent:
            await asyncio.sleep(0.5)
        server.should_exit = True

    watcher = asyncio.create_task(watch()) if parent is not None else None
    try:
        await server.serve()
    finally:
        if watcher is not None:
            watcher.cancel()


if __name__ == "__main__":
    main()
