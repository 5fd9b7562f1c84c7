"""Fixtures for the smolagents tests: offline (HF_HUB_OFFLINE), our instrumentor on the test's provider."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor  # noqa: E402


@pytest.fixture
def instrumented(provider: Any) -> Any:
    inst = SmolagentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield inst
    inst.uninstrument()
