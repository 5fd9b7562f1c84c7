"""The customer-support agent of ``examples/customer_support`` as a benchmark workload.

Each framework's module there builds the same agent (three tools, a scripted "brain" as the
fake model: see ``examples/customer_support/common.py``); one run answers :data:`QUESTION`,
a refund question: ``lookup_order``, then ``check_refund_policy``, then the answer — three
model calls and two tool calls in every framework. The same run is the overhead study's unit
(``benchmarks/README.md``).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from typing import Any, Callable

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "examples", "customer_support")
QUESTION = "Can I get a refund for my order B200?"
MODEL_CALLS, TOOL_CALLS = 3, 2  # per run of QUESTION, the same in every framework (the brain decides)


def example(name: str) -> Any:
    """``examples/customer_support/NAME.py`` as a module (its directory put on ``sys.path``, as the
    examples expect). Raises ``ImportError`` when its framework is not installed."""
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    return importlib.import_module(name)


def runner(call: Callable[[], Any]) -> Callable[[], Any]:
    """One run: ``call()``, awaited in a fresh event loop when it returns a coroutine (as
    ``ecp serve`` runs an async agent per request); returns its result."""

    def run() -> Any:
        result = call()
        if inspect.isawaitable(result):
            return asyncio.run(result)
        return result

    return run


def provider_client(package: str, example_name: str,
                    cls: str) -> tuple[dict[str, str], dict[str, str], Callable, Callable]:
    """``(PEERS, CLASSES, workload, install)`` of a provider client's workload (the ``anthropic`` and ``openai``
    clients): ``examples/customer_support/EXAMPLE_NAME.py``'s hand-written tool loop, run by its ``run(client,
    question)``, with only the client instrumented (the example's agent/tool decorators record into the global
    provider, unset in the benchmark: the same no-op in every variant). Every peer instruments the client
    under the same class name ``cls`` in its own ``PACKAGE`` module."""
    from . import instrumentor_variant, restoring

    peers = {"openinference": f"openinference-instrumentation-{package}",
             "openllmetry": f"opentelemetry-instrumentation-{package}",
             "otel_genai": f"opentelemetry-instrumentation-genai-{package}"}
    classes = {"ours": f"otel_agents.instrumentors.{package}:{cls}",
               "openinference": f"openinference.instrumentation.{package}:{cls}",
               "openllmetry": f"opentelemetry.instrumentation.{package}:{cls}",
               "otel_genai": f"opentelemetry.instrumentation.genai.{package}:{cls}"}

    def workload() -> Callable[[], Any]:
        module = example(example_name)
        client = module.client()
        return lambda: module.run(client, QUESTION)

    def install(variant: str, provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
        instrumentor, install_ = instrumentor_variant(variant, provider, classes)
        if variant not in ("ours", "ours_no_content"):
            # Peers' uninstrument() leave patches behind here: OpenLLMetry 0.62.4 unwraps dotted paths its
            # `unwrap` resolves to nothing; OpenInference's openai package sets `OpenAI.request` on the
            # subclass, shadowing the base class's method any later instrumentation wraps. Put every
            # attribute back as it was before the peer was installed.
            return restoring((package,), install_, instrumentor.uninstrument)
        return install_, instrumentor.uninstrument

    return peers, classes, workload, install
