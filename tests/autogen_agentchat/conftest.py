"""Fixtures for the AutoGen tests: the global tracer provider set (so autogen-core's own spans are live,
as the cases require), each test's spans routed to its own exporter, no connection off loopback."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor
from tests.instrumenting import fixtures
from tests.agno.conftest import no_outbound  # noqa: F401 - the same socket guard (autouse)


class _Router(SpanProcessor):
    """The global provider's one processor: forwards to the current test's processors."""

    def __init__(self) -> None:
        self.targets: list[SpanProcessor] = []
        self._lock = threading.Lock()

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        for t in list(self.targets):
            t.on_start(span, parent_context=parent_context)

    def on_end(self, span: Any) -> None:
        for t in list(self.targets):
            t.on_end(span)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return all(t.force_flush(timeout_millis) for t in list(self.targets))


_ROUTER = _Router()


def _global_provider() -> TracerProvider:
    current = trace.get_tracer_provider()
    if not getattr(current, "_otel_agents_routed", False):
        tp = TracerProvider()
        tp.add_span_processor(_ROUTER)
        tp._otel_agents_routed = True  # type: ignore[attr-defined]
        trace.set_tracer_provider(tp)
        current = trace.get_tracer_provider()
    return current  # type: ignore[return-value]


class GlobalProvider:
    """The test's view of the global provider: tracers from it, processors added for this test only."""

    def __init__(self, sdk: TracerProvider):
        self.sdk = sdk

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        return self.sdk.get_tracer(*args, **kwargs)

    def add_span_processor(self, processor: SpanProcessor) -> None:
        _ROUTER.targets.append(processor)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return _ROUTER.force_flush(timeout_millis)

    def shutdown(self) -> None:
        pass


@pytest.fixture
def provider(exporter: Any) -> GlobalProvider:
    """Overrides the shared fixture: the global provider (autogen-core's spans go there too)."""
    sdk = _global_provider()
    assert getattr(sdk, "_otel_agents_routed", False), "another test set the global tracer provider"
    _ROUTER.targets[:] = [SimpleSpanProcessor(exporter)]
    yield GlobalProvider(sdk)
    _ROUTER.targets[:] = []


instrument, instrumented = fixtures(AutoGenAgentChatInstrumentor)
