"""An ADK agent served over A2A by ADK's own ``to_a2a`` (a child process of ``test_a2a.py``).

``python a2a_server_app.py PORT``: the LlmAgent ``orders_worker`` (the customer-support example's fake
model, the ``lookup_order`` tool) at ``http://127.0.0.1:PORT/`` (JSON-RPC, card at the well-known path);
instrumented (``a2a`` and ``google_adk``); spans to the OTLP/JSON file ``A2A_TEST_SPANS``.
"""

from __future__ import annotations

import os
import sys

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.abspath(os.path.join(_ROOT, "examples", "customer_support")))


def main() -> None:
    import uvicorn
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from otel_agents.exporters.file import OTLPJsonFileExporter
    from otel_agents.instrumentors.a2a import A2AInstrumentor
    from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(os.environ["A2A_TEST_SPANS"])))
    # ADK's own spans go to the global provider, left unset here (see the google_adk instrumentor's docstring)
    A2AInstrumentor().instrument(tracer_provider=provider)
    GoogleADKInstrumentor().instrument(tracer_provider=provider)
    from google.adk.a2a.utils.agent_to_a2a import to_a2a
    from google.adk.agents import LlmAgent

    import common
    import google_adk_agent

    port = int(sys.argv[1])
    agent = LlmAgent(name="orders_worker", model=google_adk_agent.BrainLlm(), instruction="Look orders up.",
                     tools=[common.lookup_order])
    uvicorn.run(to_a2a(agent, host="127.0.0.1", port=port), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
