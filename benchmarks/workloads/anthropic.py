"""anthropic client: the customer-support loop on the real ``anthropic`` client over a mock Messages API.

``examples/customer_support/anthropic_agent.py``'s ``run``: a hand-written tool loop calling
``client.messages.create`` over an ``httpx2.MockTransport`` (three requests, two tool
calls). Only the client is instrumented here (the example's agent/tool decorators record into
the global provider, unset in the benchmark: the same no-op in every variant).
"""

from __future__ import annotations

from typing import Any, Callable

from . import instrumentor_variant, restoring
from ._support import QUESTION, example

NAME = "anthropic"
FRAMEWORK_DISTS = ("anthropic",)
PEERS = {
    "openinference": "openinference-instrumentation-anthropic",
    "openllmetry": "opentelemetry-instrumentation-anthropic",
    "otel_genai": "opentelemetry-instrumentation-genai-anthropic",
}


def workload() -> Callable[[], Any]:
    module = example("anthropic_agent")
    client = module.client()

    def run() -> None:
        module.run(client, QUESTION)

    return run


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    instrumentor, install_ = instrumentor_variant(variant, provider, {
        "ours": "otel_agents.instrumentors.anthropic:AnthropicInstrumentor",
        "openinference": "openinference.instrumentation.anthropic:AnthropicInstrumentor",
        "openllmetry": "opentelemetry.instrumentation.anthropic:AnthropicInstrumentor",
        "otel_genai": "opentelemetry.instrumentation.genai.anthropic:AnthropicInstrumentor",
    })
    if variant not in ("ours", "ours_no_content"):
        # Peers' uninstrument() leave patches behind here: OpenLLMetry 0.62.4 unwraps dotted paths its
        # `unwrap` resolves to nothing; OpenInference's openai package sets `OpenAI.request` on the
        # subclass, shadowing the base class's method any later instrumentation wraps. Put every
        # attribute back as it was before the peer was installed.
        return restoring(("anthropic",), install_, instrumentor.uninstrument)
    return install_, instrumentor.uninstrument
