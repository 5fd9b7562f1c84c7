"""Fixtures of the LangChain instrumentor's tests."""

from __future__ import annotations

from typing import Any

import pytest

from otel_agents.instrumentors.langchain import LangChainInstrumentor


@pytest.fixture
def instrumentor(provider: Any) -> Any:
    """The instrumentor, instrumented on the test's provider; every run must have been closed by the end."""
    inst = LangChainInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    try:
        assert inst.handler is None or inst.handler.open_entries() == 0, "runs left open"
    finally:
        inst.uninstrument()
