"""FastMCP's own client spans, switched off while we instrument MCP (its requests get ours instead).

FastMCP 3's ``Client`` (the one PydanticAI's ``MCPToolset`` uses) traces itself: each request is
a ``{method} [{target}]`` CLIENT span of the ``fastmcp`` tracer, opened around the SDK's
``ClientSession`` call that our ``send_request`` wrapper already traces. Both on would make two
client spans per request and, for ``tools/call``, a second span carrying ``gen_ai.tool.name``
between the framework's tool span and the server's. The OTel MCP conventions want one span per
call, the outer GenAI tool span enriched; so, while we are instrumented, FastMCP's client code
gets a tracer whose spans do not record and are never made current
(``fastmcp.client.telemetry.get_tracer``: every FastMCP client span — ``Client`` methods and the
proxy provider — is opened through it). What FastMCP then injects in ``_meta`` is the current
context, which our ``send_request`` replaces with the span of the call.

Lazy: the patch is applied when ``fastmcp.client.telemetry`` is imported (now, or later through a
post-import hook), so instrumenting never imports FastMCP.
"""

from __future__ import annotations

import sys
from typing import Any

import wrapt
from opentelemetry.trace import Tracer

from ..._spans.finalisers import new_lock
from ..._spans import guard
from ..._spans.silent import SILENT
from .._patch import Patch

MODULE = "fastmcp.client.telemetry"


_lock = new_lock()
_state: dict[str, Any] = {"on": False, "hooked": False, "patch": None}


def _silent_tracer(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Tracer:
    return SILENT


def _on_import(module: Any) -> None:
    with guard("mcp.fastmcp.patch"), _lock:
        if _state["on"] and _state["patch"] is None:
            _state["patch"] = Patch(module, "get_tracer", _silent_tracer)


def silence() -> None:
    """Switch FastMCP's client spans off, now if it is imported, else when it is."""
    with _lock:
        _state["on"] = True
        hook = not _state["hooked"]
        _state["hooked"] = True
    if hook:  # once per process: wrapt has no way to take a hook off (it checks ``on`` when it fires)
        wrapt.register_post_import_hook(_on_import, MODULE)
    elif MODULE in sys.modules:
        _on_import(sys.modules[MODULE])


def restore() -> None:
    """Give FastMCP its tracer back (exactly: the original function)."""
    with _lock:
        _state["on"] = False
        patch, _state["patch"] = _state["patch"], None
    if patch is not None:
        patch.remove()
