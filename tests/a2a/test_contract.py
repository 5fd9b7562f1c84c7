"""The cross-cutting cases X-1 … X-7 (``tests/contract/kit.py``) for A2A.

The kit's runs are many and concurrent, so client and server run in one process here: a2a-sdk's
client over ``httpx.ASGITransport`` to the server's Starlette app (the cross-process behaviour is
``test_a2a.py``'s). The remote agent's executor calls a ``lookup_order`` tool traced by hand through
the instrumentor's own span layer (the kit needs a tool span to probe in).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from otel_agents.instrumentors.a2a import A2AInstrumentor
from otel_agents.instrumentors.a2a import _protocol
from otel_agents.semconv import Kind
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SpanSnapshot

URL = "http://127.0.0.1/"


class LookupFailed(Exception):
    """The user's own error: the remote agent's task failed."""


class A2AScenario(Scenario):
    """A2A client → server (one process): the remote agent calls ``lookup_order`` and answers with an artifact."""

    instrumentor_cls = A2AInstrumentor
    kinds = ("agent", "tool")
    # the remote agent's task runs on in the server's own task, and a2a-sdk's client swallows the
    # cancellation (the caller then finds no event: IndexError), uninstrumented too
    cancel_stops_run = False

    def __init__(self) -> None:
        super().__init__()
        self.app = self._app()

    def _app(self) -> Any:
        from a2a.helpers import new_task, new_text_part
        from a2a.server.agent_execution import AgentExecutor
        from a2a.server.request_handlers import DefaultRequestHandler
        from a2a.server.routes import create_jsonrpc_routes
        from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
        from a2a.types import AgentCapabilities, AgentCard, AgentInterface, TaskState
        from starlette.applications import Starlette

        scenario = self

        class Executor(AgentExecutor):
            async def execute(self, context: Any, event_queue: Any) -> None:
                await event_queue.enqueue_event(new_task(context.task_id, context.context_id,
                                                         TaskState.TASK_STATE_SUBMITTED))
                updater = TaskUpdater(event_queue, context.task_id, context.context_id)
                await updater.start_work()
                text = context.get_user_input()
                tag = (context.metadata or {}).get("tag", "")
                telemetry = A2AInstrumentor().telemetry  # the running instrumentor's span layer (None: not instrumented)
                if telemetry is None:
                    result = scenario.lookup(text, tag)
                else:
                    with telemetry.span(Kind.TOOL, "lookup_order") as tool:
                        result = scenario.lookup(text, tag)
                        tool.set_tool_result(result)
                if text.startswith("fail"):
                    await updater.failed()
                    return
                await updater.add_artifact([new_text_part(result)])
                await updater.complete()

            async def cancel(self, context: Any, event_queue: Any) -> None:
                await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

        card = AgentCard(name="Orders Agent", version="1.0.0", capabilities=AgentCapabilities(streaming=True),
                         supported_interfaces=[AgentInterface(url=URL, protocol_binding="JSONRPC",
                                                              protocol_version="1.0")],
                         default_input_modes=["text/plain"], default_output_modes=["text/plain"])
        self.card = card
        handler = DefaultRequestHandler(Executor(), InMemoryTaskStore(), card)
        return Starlette(routes=create_jsonrpc_routes(handler, "/"))

    def lookup(self, text: str, tag: str) -> str:
        self.probe(tag)
        marker = text.split("?", 1)[-1].strip()
        return f"A100 shipped {marker}"

    async def _send(self, text: str, tag: str = "", *, streaming: bool = False, consume: bool = True) -> Any:
        from a2a.client import ClientConfig, ClientFactory
        from a2a.types import Message, Part, Role, SendMessageRequest

        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app)) as http:
            client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(self.card)
            request = SendMessageRequest(message=Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                                                         parts=[Part(text=text)]), metadata={"tag": tag})
            events = []
            async for event in client.send_message(request):
                events.append(event)
                if not consume:
                    break
            return events

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        events = await self._send(f"Where is order A100? {marker}", tag)
        return events[-1].task.artifacts[-1].parts[0].text

    def run(self, marker: str = "", tag: str = "") -> Any:
        return asyncio.run(self.arun(marker, tag))

    def run_failing(self) -> None:
        events = asyncio.run(self._send("fail: where is order A100?"))
        if events[-1].task.status.state == 4:  # TASK_STATE_FAILED
            raise LookupFailed("the Orders Agent failed")

    def run_stream(self, consume: bool) -> None:
        asyncio.run(self._send("Where is order A100?", streaming=True, consume=consume))

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(card: Any) -> Any:
            raise AttributeError("AgentCard has no attribute 'supported_interfaces'")

        monkeypatch.setattr(_protocol, "card_attributes", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        from a2a.client.base_client import BaseClient

        return BaseClient, "send_message"

    def check_run(self, spans: list[SpanSnapshot]) -> None:
        agents = [s for s in spans if s.semantic_kind == "agent"]
        assert sorted(s.kind for s in agents) == ["CLIENT", "SERVER"], [s.name for s in agents]


class TestA2AContract(ContractSuite):
    scenario_cls = A2AScenario

    # X-8 puts a hostile Python object (a generator, a mock, a raising proxy) in a tool's result. Nothing of the
    # kind crosses A2A: a2a-sdk 1.x carries protobuf messages only (Part text/data/file, Struct metadata), and
    # those are all the instrumentor reads; the remote agent's own tools are its framework's instrumentor's (X-8
    # in that framework's suite).
    def test_x8_serialising_a_result_never_runs_user_code(self, *args: Any, **kwargs: Any) -> None:
        pytest.skip("X-8 does not apply: A2A carries protobuf messages, never a user object")

    def test_x8_probing_a_hostile_result_never_raises(self, *args: Any, **kwargs: Any) -> None:
        pytest.skip("X-8 does not apply: A2A carries protobuf messages, never a user object")

    # a2a-sdk 1.3: an executor raising KeyboardInterrupt or SystemExit, client and server on one event loop, hangs
    # asyncio.run's shutdown uninstrumented too (the request handler's consumer task waits on its event queue
    # forever after the producer died): no outcome to compare ours with. 1.1 raises as expected.
    @staticmethod
    def _skip_if_executor_exit_hangs() -> None:
        from importlib.metadata import version

        if tuple(int(p) for p in version("a2a-sdk").split(".")[:2]) >= (1, 3):
            pytest.skip("a2a-sdk >= 1.3 hangs on this case uninstrumented (one loop for client and server)")

    def test_x9_base_exception_ends_every_span(self, scenario: Any, provider: Any, exporter: Any) -> None:
        self._skip_if_executor_exit_hangs()
        super().test_x9_base_exception_ends_every_span(scenario, provider, exporter)

    @pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
    @pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt])
    def test_x12_process_exits_in_a_tool(self, scenario: Any, provider: Any, exporter: Any, error: type,
                                         aio: bool, caplog: pytest.LogCaptureFixture) -> None:
        self._skip_if_executor_exit_hangs()
        super().test_x12_process_exits_in_a_tool(scenario, provider, exporter, error, aio, caplog)
