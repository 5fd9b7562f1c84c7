"""What the MCP instrumentation reads off the protocol's objects: the ``_meta`` carrier, names, results.

Pure functions over the ``mcp`` SDK's pydantic models and wire dicts (duck-typed: this module does
not import ``mcp``), so the client and server halves read requests and results the same way. The
models' fields are camelCase in ``mcp`` 1.x (``isError``) and snake_case in 2.x (``is_error``); the
wire dicts ``mcp`` 2.x's server hands around are camelCase: :func:`field` reads any of them.
"""

from __future__ import annotations

from typing import Any, Mapping

from opentelemetry import context as otel_context
from opentelemetry import propagate

# W3C Trace Context and Baggage keys, unprefixed in ``params._meta`` (OTel MCP conventions; MCP SEP-414).
PROPAGATION_KEYS = ("traceparent", "tracestate", "baggage")

TOOLS_CALL = "tools/call"
# Requests that get a span of their own (besides ``tools/call``): the conventions' client/server spans.
TRACED_METHODS = frozenset({"tools/list", "resources/read", "resources/list", "resources/templates/list",
                            "prompts/get", "prompts/list"})


def field(obj: Any, *names: str) -> Any:
    """The first of ``names`` that ``obj`` (a model or a mapping) has and is not ``None``, else ``None``."""
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def method_of(request: Any) -> str | None:
    """The JSON-RPC method of a request model (``ClientRequest`` root or a bare request), or ``None``."""
    root = getattr(request, "root", request)
    method = getattr(root, "method", None)
    return method if isinstance(method, str) else None


def params_of(request: Any) -> Any:
    """The request's ``params`` model, or ``None``."""
    return getattr(getattr(request, "root", request), "params", None)


def target_of(method: str, params: Any) -> str | None:
    """The low-cardinality target of the span name: the tool or prompt name (never a resource URI)."""
    if method in (TOOLS_CALL, "prompts/get"):
        name = field(params, "name")
        return name if isinstance(name, str) and name else None
    return None


def with_trace_context(request: Any, ctx: otel_context.Context) -> Any:
    """A copy of ``request`` whose ``params._meta`` carries ``ctx`` (the configured propagators:
    ``traceparent``, ``tracestate``, ``baggage`` by default). Keys already in ``_meta`` are kept,
    so a context the caller or the SDK injected stays the only one on the wire. Returns
    ``request`` itself when there is nothing to inject."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=ctx)
    if not carrier:
        return request
    root = getattr(request, "root", request)
    data = root.model_dump(by_alias=True, mode="json", exclude_none=True)
    params = data.get("params") or {}
    meta = params.get("_meta") or {}
    for key, value in carrier.items():
        meta.setdefault(key, value)
    params["_meta"] = meta
    data["params"] = params
    new_root = type(root).model_validate(data)
    return type(request)(new_root) if root is not request else new_root


def with_meta_context(params: Mapping[str, Any], ctx: otel_context.Context) -> dict[str, Any]:
    """A copy of wire ``params`` whose ``_meta`` carries ``ctx`` (the configured propagators), replacing
    the propagation keys already there (the server hands its own span's context down the chain)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=ctx)
    meta = {k: v for k, v in (params.get("_meta") or {}).items() if k not in PROPAGATION_KEYS}
    return {**params, "_meta": {**meta, **carrier}}


def extracted_context(meta: Any) -> otel_context.Context | None:
    """The context a request's ``params._meta`` carries (remote parent and baggage), or ``None``."""
    if meta is None:
        return None
    fields: Mapping[str, Any]
    if isinstance(meta, Mapping):  # mcp 2.x: a dict
        fields = meta
    else:
        fields = dict(getattr(meta, "model_extra", None) or {})
    carrier = {k: v for k in PROPAGATION_KEYS if isinstance(v := fields.get(k), str)}
    if "traceparent" not in carrier:
        return None
    return propagate.extract(carrier)


def tool_result(result: Any) -> Any:
    """A ``CallToolResult`` as the tool's result: its structured content when it has one, else the
    text of a single text block, else the content blocks as JSON-able dicts."""
    structured = field(result, "structured_content", "structuredContent")
    if structured is not None:
        return structured
    content = list(field(result, "content") or ())
    if len(content) == 1 and field(content[0], "type") == "text":
        return field(content[0], "text")
    return [c.model_dump(mode="json", exclude_none=True) if hasattr(c, "model_dump") else c for c in content]


def is_error(result: Any) -> bool:
    """Whether a ``CallToolResult`` (model or wire dict) is a tool error (``isError``)."""
    return field(result, "is_error", "isError") is True


def error_text(result: Any) -> str:
    """The text blocks of a failed ``CallToolResult`` (what the server said went wrong)."""
    texts = [field(c, "text") for c in field(result, "content") or () if field(c, "type") == "text"]
    return "\n".join(texts) or "tool error"


def negotiated_version(requested: str | None) -> str | None:
    """The protocol version a server answers a client's ``initialize`` with (the requested one
    when it supports it, else its latest), as ``mcp.server.session`` computes it."""
    if not requested:
        return None
    try:
        from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
        from mcp.types import LATEST_PROTOCOL_VERSION
    except ImportError:  # pragma: no cover - moved in another SDK version
        return requested
    return requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
