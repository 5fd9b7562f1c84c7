"""Decorated code in these tests sends its spans to the test's provider."""

from __future__ import annotations

import pytest

from otel_agents import manual


@pytest.fixture(autouse=True)
def manual_provider(provider):
    manual.set_providers(provider)
    yield provider
    manual.set_providers()
