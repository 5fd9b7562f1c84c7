"""Fixtures of the MCP tests: our MCP instrumentor on the test's provider."""

from __future__ import annotations

from typing import Any

import pytest

from otel_agents.instrumentors.mcp import MCPInstrumentor
from tests.instrumenting import fixtures


instrument, instrumented = fixtures(MCPInstrumentor)  # instrument(propagate=None, **settings)


@pytest.fixture
def spans_file(tmp_path: Any) -> Any:
    return tmp_path / "server-spans.jsonl"
