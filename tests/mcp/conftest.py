"""Fixtures of the MCP tests: our MCP instrumentor on the test's provider."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from otel_agents._spans import Settings
from otel_agents.instrumentors.mcp import MCPInstrumentor


@pytest.fixture
def instrument(provider: Any) -> Callable[..., MCPInstrumentor]:
    """``instrument(**settings)``: the MCP instrumentor on the test's provider; uninstrumented at teardown."""
    inst = MCPInstrumentor()

    def start(propagate: bool | None = None, **settings: Any) -> MCPInstrumentor:
        inst.instrument(tracer_provider=provider, settings=Settings(**settings) if settings else None,
                        propagate=propagate)
        return inst

    yield start
    inst.uninstrument()


@pytest.fixture
def spans_file(tmp_path: Any) -> Any:
    return tmp_path / "server-spans.jsonl"
