"""The calling agent of the cross-process A2A tests, as a process of its own.

    python client_app.py SERVER_URL OTLP_URL SPEC_JSON

``SPEC_JSON``: ``[{"text": …, "streaming": bool, "mode": "full" | "cancel" | "disconnect"}, …]``: every item
runs at once (``asyncio.gather``), each in its own trace: an agent span ``support`` (a root) around an
a2a-sdk client call to the remote agent; ``cancel`` sends with ``return_immediately`` and then
``CancelTask``s the task, ``disconnect`` closes the stream after its first event; ``push_url``: with a
push-notification webhook. Instrumented with the ``a2a`` instrumentor, and with OpenTelemetry's ``httpx``
one too when ``A2A_TEST_HTTPX=1`` (the HTTP spans of the calls' transport); spans go to ``OTLP_URL``
(OTLP/HTTP protobuf, batched, as deployed). Prints one JSON list: per item its ``trace_id`` (hex) and
``events`` received, or the ``error`` the call raised.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

from otel_agents._spans import Settings, Telemetry  # noqa: E402
from otel_agents.instrumentors.a2a import A2AInstrumentor  # noqa: E402
from tests.a2a.harness import client_for, message  # noqa: E402


async def call(telemetry: Telemetry, url: str, item: dict) -> dict:
    from a2a.types import (CancelTaskRequest, SendMessageConfiguration, SendMessageRequest,
                           TaskPushNotificationConfig)

    out: dict = {}
    mode = item.get("mode", "full")
    with telemetry.span("agent", "support", parent=trace.set_span_in_context(trace.INVALID_SPAN)):
        out["trace_id"] = f"{trace.get_current_span().get_span_context().trace_id:032x}"
        client = await client_for(url, streaming=item.get("streaming", False))
        try:
            if mode == "cancel":
                configuration = SendMessageConfiguration(return_immediately=True)
                events = [e async for e in client.send_message(SendMessageRequest(message=message(item["text"]),
                                                                                  configuration=configuration))]
                await client.cancel_task(CancelTaskRequest(id=events[-1].task.id))
            elif mode == "disconnect":
                stream = client.send_message(SendMessageRequest(message=message(item["text"])))
                events = [await stream.__anext__()]
                await stream.aclose()
            else:
                push = item.get("push_url")
                configuration = SendMessageConfiguration(task_push_notification_config=TaskPushNotificationConfig(
                    url=push, token="tok")) if push else None
                request = SendMessageRequest(message=message(item["text"]), configuration=configuration)
                events = [e async for e in client.send_message(request)]
            out["events"] = len(events)
        except Exception as exc:  # noqa: BLE001 - reported to the test
            out["error"] = f"{type(exc).__name__}: {exc}"[:300]
        finally:
            await client.close()
    return out


def main(url: str, otlp: str, spec: str) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "support-a2a-client"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp), schedule_delay_millis=100))
    A2AInstrumentor().instrument(tracer_provider=provider)
    if os.environ.get("A2A_TEST_HTTPX") == "1":
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

        HTTPXClientInstrumentor().instrument(tracer_provider=provider)
    telemetry = Telemetry(provider, framework="manual", settings=Settings(capture_content=True))

    async def run_all() -> list:
        return await asyncio.gather(*(call(telemetry, url, item) for item in json.loads(spec)))

    results = asyncio.run(run_all())
    provider.shutdown()
    print(json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:4])
