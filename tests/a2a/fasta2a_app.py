"""PydanticAI's A2A server (``fasta2a``'s ``agent_to_a2a``) in a child process, for ``test_fasta2a.py``.

``python fasta2a_app.py PORT``: the customer-support PydanticAI agent (fake model, the example's tools)
named ``support_remote`` at ``http://127.0.0.1:PORT/``; instrumented (``a2a`` and ``pydantic_ai``);
spans to the OTLP/JSON file ``A2A_TEST_SPANS``; with ``A2A_TEST_ASGI=1`` inside OpenTelemetry's ASGI
middleware (``opentelemetry-instrumentation-asgi``: an HTTP server span per request).
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
    from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(os.environ["A2A_TEST_SPANS"])))
    A2AInstrumentor().instrument(tracer_provider=provider)
    PydanticAIInstrumentor().instrument(tracer_provider=provider)
    from fasta2a.pydantic_ai import agent_to_a2a

    import pydantic_ai_agent

    port = int(sys.argv[1])
    app = agent_to_a2a(pydantic_ai_agent.build(), name="support_remote", url=f"http://127.0.0.1:{port}")
    if os.environ.get("A2A_TEST_ASGI") == "1":  # an HTTP server span per request (the ASGI instrumentation)
        from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

        app = OpenTelemetryMiddleware(app, tracer_provider=provider)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
