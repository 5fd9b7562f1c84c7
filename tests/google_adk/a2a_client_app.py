"""The calling side of ``test_a2a.py``: an ADK ``Runner`` over a ``RemoteA2aAgent``, in a process of its own.

Running ADK's A2A client changes process-wide ADK tracing state (its own spans nest differently
afterwards), which would leak into the other ADK tests of the session; so it runs here.
``python a2a_client_app.py CARD_URL``: instrumented (``a2a`` and ``google_adk``), spans to the OTLP/JSON
file ``A2A_TEST_CLIENT_SPANS``.
"""

from __future__ import annotations

import asyncio
import os
import sys


def main() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from otel_agents.exporters.file import OTLPJsonFileExporter
    from otel_agents.instrumentors.a2a import A2AInstrumentor
    from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(os.environ["A2A_TEST_CLIENT_SPANS"])))
    GoogleADKInstrumentor().instrument(tracer_provider=provider)
    A2AInstrumentor().instrument(tracer_provider=provider)
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    runner = Runner(app_name="support", agent=RemoteA2aAgent(name="orders", agent_card=sys.argv[1]),
                    session_service=InMemorySessionService())

    async def go() -> None:
        await runner.session_service.create_session(app_name="support", user_id="u", session_id="s1")
        async for _ in runner.run_async(user_id="u", session_id="s1", new_message=types.Content(
                role="user", parts=[types.Part(text="Where is my order A100?")])):
            pass

    asyncio.run(go())
    provider.shutdown()


if __name__ == "__main__":
    main()
