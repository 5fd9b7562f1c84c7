"""Fixtures for the smolagents tests: offline (HF_HUB_OFFLINE), our instrumentor on the test's provider."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor  # noqa: E402
from tests.instrumenting import fixtures  # noqa: E402


instrument, instrumented = fixtures(SmolagentsInstrumentor)
