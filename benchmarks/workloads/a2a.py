"""A2A: the customer-support example's Orders Agent asked for an order over A2A (JSON-RPC), in process.

``examples/customer_support/a2a_server.py``'s server (a2a-sdk's JSON-RPC routes in Starlette, running
the example's LangGraph agent over its scripted brain) and a2a-sdk's client, connected by
``httpx.ASGITransport`` instead of a socket, so both sides' instrumentation runs in this process and
no child process adds noise. One run = a fresh client (Agent Card fetched) sending "Where is my order
B200?" and reading the task's artifact, in a fresh event loop: the remote agent makes one model call,
one tool call and the answer. No peer instruments A2A (neither OpenInference, OpenLLMetry nor the OTel
GenAI repository has a package), so the table has ours, content off and suppressed only.

a2a-sdk's own telemetry (``a2a.utils.telemetry``: a span per decorated method, on whenever
``opentelemetry-api`` is importable) is turned off in every variant (``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false``,
read when a2a-sdk is imported). Left on, it cost the uninstrumented run ~2.7M of its ~29.2M instructions (its
spans record nothing here, but each is made, entered and ended), and our instrumentor stands it
down while it is installed: ours then counted ~1M instructions a run *under* the uninstrumented run, and
neither the clock nor the count could say what our code costs. Off everywhere, the uninstrumented run is the
framework's own work and ours − it is ours.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Callable

from . import instrumentor_variant
from ._support import example, runner

NAME = "a2a"
FRAMEWORK_DISTS = ("a2a-sdk",)
PEERS: dict[str, str] = {}
URL = "http://127.0.0.1:8000/"


SDK_TELEMETRY = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"
# The instructions group counts at least this many runs a batch: at 10, a batch's own noise (~0.03M instructions a
# run) was 2% of ours' 1.4M, and ours per span ÷ the SDK alone spread 2.95–3.05 over 3 repeats, across the 3×
# target; at 30, 2.92–2.93.
INSTRUCTION_RUNS = 30


def workload() -> Callable[[], Any]:
    os.environ[SDK_TELEMETRY] = "false"  # read once, when a2a.utils.telemetry is first imported
    import httpx
    from a2a.utils import telemetry
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import get_artifact_text
    from a2a.types import Message, Part, Role, SendMessageRequest

    if telemetry.otel_enabled:
        raise RuntimeError(f"a2a-sdk was imported before the A2A workload set {SDK_TELEMETRY}=false: its own "
                           "telemetry is on, and the uninstrumented run would count it")
    app = example("a2a_server").build_app(8000)

    async def ask() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=URL) as http:
            client = await create_client(URL, client_config=ClientConfig(streaming=False, httpx_client=http))
            try:
                request = SendMessageRequest(message=Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                                                             parts=[Part(text="Where is my order B200?")]))
                async for event in client.send_message(request):
                    if event.HasField("task") and event.task.artifacts:
                        if "B200" not in get_artifact_text(event.task.artifacts[-1]):
                            raise RuntimeError("the Orders Agent did not answer")
            finally:
                await client.close()

    return runner(ask)


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    instrumentor, install_ = instrumentor_variant(variant, provider, {
        "ours": "otel_agents.instrumentors.a2a:A2AInstrumentor",
    })
    return install_, instrumentor.uninstrument
