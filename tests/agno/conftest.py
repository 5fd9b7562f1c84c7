"""Fixtures for the Agno tests: Agno's telemetry off, no connection to a non-loopback address, an instrumented provider."""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

import pytest

os.environ.setdefault("AGNO_TELEMETRY", "false")

from otel_agents.instrumentors.agno import AgnoInstrumentor  # noqa: E402
from tests.instrumenting import fixtures  # noqa: E402


def _is_loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if not isinstance(host, str):
        return True  # AF_UNIX paths and the like
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name: it would be resolved and dialled


class OutboundConnection(AssertionError):
    """A test tried to connect to a non-loopback address."""


@pytest.fixture(autouse=True)
def no_outbound(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every socket connect to a non-loopback address fails and is recorded (the list is the fixture's value)."""
    attempts: list = []
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            attempts.append(address)
            raise OutboundConnection(f"connection to {address!r} attempted")
        return connect(self, address)

    def guarded_ex(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            attempts.append(address)
            raise OutboundConnection(f"connection to {address!r} attempted")
        return connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_ex)
    yield attempts
    assert attempts == [], f"outbound connections attempted: {attempts}"


instrument, instrumented = fixtures(AgnoInstrumentor)
