"""Fixtures for the tests of the frameworks' LiteLLM-backed models (.venv-litellm): no OpenAI key, no connection
but loopback (any attempt fails the test), Agno's telemetry and the Hugging Face Hub off."""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from tests.crewai.netguard import block_network

os.environ.setdefault("AGNO_TELEMETRY", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    refused = block_network(monkeypatch.setattr)
    yield
    assert refused == [], f"a connection to {refused} was attempted"
