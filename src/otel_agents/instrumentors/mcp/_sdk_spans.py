"""``mcp`` 2.x's own spans, stood down while we instrument MCP (its requests get ours instead).

``mcp`` 2.x traces itself on the global tracer provider (``mcp.shared._otel``): an ``MCP send {method}
[{target}]`` CLIENT span around each request its JSON-RPC dispatcher sends, and, from the server's default
``OpenTelemetryMiddleware``, a ``{method} [{target}]`` SERVER span around each request served, which for
``tools/call`` carries ``gen_ai.operation.name=execute_tool`` and ``gen_ai.tool.name``. Ours are the same
calls: with both on, a backend that reads the GenAI conventions sees two tool executions per call on the
server, and the client's wire context points at the SDK's span instead of our tool span. As with FastMCP's
client spans (:mod:`._fastmcp`) and a2a-sdk's (the A2A instrumentor), one span per call is ours: while we are
instrumented the module's tracer (``mcp.shared._otel._tracer``, looked up by every one of those spans as it
opens) is the span layer's silent tracer, whose spans do not record and never become current, so the SDK's
own context injection carries our span. :func:`restore` puts the very same tracer back. Nothing is done on
``mcp`` 1.x, which has no such module.
"""

from __future__ import annotations

import importlib

from ..._spans.silent import SILENT, StandDown

MODULE = "mcp.shared._otel"
_TRACER = StandDown("_tracer", lambda original: SILENT)


def silence() -> None:
    """Stand ``mcp`` 2.x's own spans down (importing its module if ``mcp`` 2.x is installed)."""
    try:
        module = importlib.import_module(MODULE)
    except ImportError:  # mcp 1.x: the SDK does not trace itself
        return
    _TRACER.silence(module)


def restore() -> None:
    """Give ``mcp`` 2.x its own tracer back (exactly: the original object)."""
    _TRACER.restore()
