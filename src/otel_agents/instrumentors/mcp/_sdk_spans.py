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

import sys
from typing import Any

from ..._spans.finalisers import new_lock
from ..._spans.silent import SILENT

MODULE = "mcp.shared._otel"
_lock = new_lock()
_saved: dict[str, Any] = {}


def silence() -> None:
    """Stand ``mcp`` 2.x's own spans down (importing its module if ``mcp`` 2.x is installed)."""
    module = sys.modules.get(MODULE)
    if module is None:
        try:
            import importlib

            module = importlib.import_module(MODULE)
        except ImportError:  # mcp 1.x: the SDK does not trace itself
            return
    with _lock:
        if "tracer" in _saved or not hasattr(module, "_tracer"):
            return
        _saved["tracer"] = module._tracer
        module._tracer = SILENT


def restore() -> None:
    """Give ``mcp`` 2.x its own tracer back (exactly: the original object)."""
    module = sys.modules.get(MODULE)
    with _lock:
        original = _saved.pop("tracer", None)
        if module is not None and original is not None:
            module._tracer = original
