"""Agno: the customer-support ``Agent`` over a scripted model, answering a refund question.

``examples/customer_support/agno_agent.py`` (telemetry off): one run = ``agent.arun`` of a
refund question in a fresh event loop (three model calls, two tool calls).
"""

from __future__ import annotations

from typing import Any, Callable

from . import instrumentor_variant, restoring
from ._support import QUESTION, example, runner

NAME = "agno"
FRAMEWORK_DISTS = ("agno",)
PEERS = {
    "openinference": "openinference-instrumentation-agno",
    "openllmetry": "opentelemetry-instrumentation-agno",
    "otel_genai": "opentelemetry-instrumentation-genai-agno",
}
# each variant's instrumentor, "module:Class" (tests/peers runs them side by side)
CLASSES = {
    "ours": "otel_agents.instrumentors.agno:AgnoInstrumentor",
    "openinference": "openinference.instrumentation.agno:AgnoInstrumentor",
    "openllmetry": "opentelemetry.instrumentation.agno:AgnoInstrumentor",
    "otel_genai": "opentelemetry.instrumentation.genai.agno:AgnoInstrumentor",
}


def workload() -> Callable[[], Any]:
    module = example("agno_agent")
    return runner(lambda: module.agent(QUESTION))


def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    instrumentor, install_ = instrumentor_variant(variant, provider, CLASSES)
    if variant not in ("ours", "ours_no_content"):
        # Peers' uninstrument() leave patches behind here: OpenLLMetry 0.62.4 unwraps dotted paths its
        # `unwrap` resolves to nothing; OpenInference's openai package sets `OpenAI.request` on the
        # subclass, shadowing the base class's method any later instrumentation wraps. Put every
        # attribute back as it was before the peer was installed.
        return restoring(("agno",), install_, instrumentor.uninstrument)
    return install_, instrumentor.uninstrument
