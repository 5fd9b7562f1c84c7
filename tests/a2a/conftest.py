"""Fixtures of the A2A tests: our A2A instrumentor on the test's provider, remote agents in child processes."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

from otel_agents.instrumentors.a2a import A2AInstrumentor
from tests.instrumenting import fixtures

from .harness import RemoteAgent


instrument, instrumented = fixtures(A2AInstrumentor)  # instrument(propagate=None, **settings)


@pytest.fixture(scope="module")
def remote_agents(tmp_path_factory: Any) -> Iterator[Callable[..., RemoteAgent]]:
    """``remote_agents(**options)``: a server process per distinct options, shared by the module's tests."""
    running: dict[tuple, RemoteAgent] = {}

    def get(**options: Any) -> RemoteAgent:
        key = tuple(sorted((k, str(v)) for k, v in options.items()))
        if key not in running:
            running[key] = RemoteAgent(tmp_path_factory.mktemp("a2a") / "server-spans.jsonl", **options)
        return running[key]

    yield get
    for agent in running.values():
        agent.close()


@pytest.fixture
def remote(remote_agents: Callable[..., RemoteAgent]) -> RemoteAgent:
    """The instrumented remote agent (content on; JSON-RPC, HTTP+JSON and gRPC)."""
    return remote_agents(grpc=True)
