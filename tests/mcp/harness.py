"""Client and server in one test: the server of ``server_app.py`` as a child process (stdio, or
Streamable HTTP on a free loopback port) exporting its spans to a file, merged with the client's."""

from __future__ import annotations

import contextlib
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any, AsyncIterator

from otel_agents.exporters.file import read_otlp_json
from tests.servers import child_server, free_port
from tests.spans import SpanSnapshot, snapshot

SERVER_APP = str(Path(__file__).with_name("server_app.py"))
MCP2 = int(version("mcp").split(".")[0]) >= 2  # the 2.x SDK: other hooks, renamed classes (the `newest` venv)
# What a client sees of the server's failing ``refund`` tool: 2.x keeps the exception's text in the server's log.
REFUND_ERROR = "Error executing tool refund" if MCP2 else "refund service down"


def server_env(spans: Path, *, instrument: bool = True, content: bool = True,
               extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, MCP_TEST_SPANS=str(spans), MCP_TEST_INSTRUMENT="1" if instrument else "0", **(extra or {}))
    env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true" if content else "NO_CONTENT"
    return env


def server_spans(spans: Path) -> list[SpanSnapshot]:
    """The server process's spans, read back from its OTLP/JSON file."""
    return [snapshot(s) for s in read_otlp_json(spans)] if spans.exists() else []


def stdio_params(spans: Path, **env: Any) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=[SERVER_APP, "stdio"], env=server_env(spans, **env))


@contextlib.asynccontextmanager
async def stdio_session(spans: Path, **env: Any) -> AsyncIterator[Any]:
    """An initialised ``ClientSession`` to the test server over stdio."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(stdio_params(spans, **env)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@contextlib.contextmanager
def http_server(spans: Path, **env: Any) -> Any:
    """The test server over Streamable HTTP on 127.0.0.1; yields its ``/mcp`` URL."""
    port = free_port()
    with child_server([sys.executable, SERVER_APP, "http", str(port)], port, env=server_env(spans, **env), timeout=60):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.asynccontextmanager
async def http_session(url: str) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as streams:  # (read, write, get_session_id) in 1.x, (read, write) in 2.x
        async with ClientSession(*streams[:2]) as session:
            await session.initialize()
            yield session


IN_PROCESS_MODES = ("auto", "legacy") if MCP2 else ("memory",)
"""The SDK's in-process client paths: 1.x's in-memory streams; 2.x's ``mcp.Client`` modes (``auto``: the 2026
envelope through a ``DirectDispatcher`` pair; ``legacy``: the handshake and JSON-RPC over in-memory streams)."""


def in_process_client(server: Any, mode: str = IN_PROCESS_MODES[0], **options: Any) -> Any:
    """An async context manager giving an initialised client (with ``call_tool``…) of ``server``, the SDK's
    high-level server (``server_app.server_class()``), in this process, by ``mode`` (:data:`IN_PROCESS_MODES`);
    ``options``: the client session's (``sampling_callback=``…)."""
    if MCP2:
        from mcp import Client

        return Client(server, mode=mode, **options)
    from mcp.shared.memory import create_connected_server_and_client_session

    return create_connected_server_and_client_session(server._mcp_server, **options)
