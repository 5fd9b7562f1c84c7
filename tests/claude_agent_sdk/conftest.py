"""Fixtures for the Claude Agent SDK tests: the SDK MCP tools of the customer-support agent, the fake CLI
(:mod:`.fake_cli`) as ``cli_path`` for the real subprocess transport, our instrumentor on the test's provider."""

from __future__ import annotations

import json
from typing import Any, Callable

import claude_agent_sdk as sdk
import pytest

from examples.customer_support import common
from otel_agents.instrumentors.claude_agent_sdk import ClaudeAgentSDKInstrumentor
from tests.instrumenting import fixtures

from .fake_cli import launcher
from .in_process import InProcessTransport


def support_server(probe: Callable[[str, dict], Any] | None = None, fail: set[str] = frozenset()) -> dict:
    """The SDK MCP server ``support``: the demo's tools as ``@tool``s (``fail``: tools that raise)."""

    def make(fn: Callable[[str], str]) -> Any:
        @sdk.tool(fn.__name__, (fn.__doc__ or "").strip(), {"order_id": str})
        async def handler(args: dict) -> dict:
            if probe is not None:
                probe(fn.__name__, args)
            if fn.__name__ in fail:
                raise RuntimeError(f"{fn.__name__} is down")
            return {"content": [{"type": "text", "text": fn(args["order_id"])}]}

        return handler

    return sdk.create_sdk_mcp_server("support", tools=[make(fn) for fn in common.TOOLS])


MCP_ARGV = ["--mcp-config", json.dumps({"mcpServers": {"support": {"type": "sdk", "name": "support"}}})]


def in_process(*flags: str, **kwargs: Any) -> InProcessTransport:
    """The fake CLI in this process, with the SDK MCP server ``support`` configured."""
    return InProcessTransport([*MCP_ARGV, *flags], **kwargs)


@pytest.fixture
def cli_path(tmp_path: Any) -> str:
    return launcher(tmp_path)


instrument, instrumented = fixtures(ClaudeAgentSDKInstrumentor)  # instrument(stream_usage=False, **settings)


async def collect(prompt: Any, **options: Any) -> list[Any]:
    """Every message of one ``query()``; ``transport`` goes to ``query``, the rest to the options."""
    transport = options.pop("transport", None)
    options.setdefault("mcp_servers", {"support": support_server()})
    return [m async for m in sdk.query(prompt=prompt, options=sdk.ClaudeAgentOptions(**options),
                                       transport=transport)]
