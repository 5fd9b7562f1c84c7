"""What the MCP instrumentation reads off the protocol's objects: the ``_meta`` carrier, names, results.

Pure functions over the ``mcp`` SDK's pydantic models and wire dicts (duck-typed: this module does
not import ``mcp``), so the client and server halves read requests and results the same way. The
models' fields are camelCase in ``mcp`` 1.x (``isError``) and snake_case in 2.x (``is_error``); the
wire dicts ``mcp`` 2.x's server hands around are camelCase: :func:`field` reads any of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate

from ..._spans import probes
from ..._spans.propagation import PROPAGATION_KEYS
from ..._spans.propagation import propagating as shared_propagating

# PROPAGATION_KEYS: the W3C Trace Context and Baggage keys, unprefixed in ``params._meta`` (OTel MCP
# conventions; MCP SEP-414).

ENV_PROPAGATE = "OTEL_AGENTS_MCP_PROPAGATE"
"""``false`` (or ``0``/``no``/``off``): the client sends no trace context, the server takes none; another value
than those or ``true``/``1``/``yes``/``on`` is logged once as a warning and propagation stays on."""

TOOLS_CALL = "tools/call"
# Requests that get a span of their own (besides ``tools/call``): the conventions' client/server spans.
TRACED_METHODS = frozenset({"tools/list", "resources/read", "resources/list", "resources/templates/list",
                            "prompts/get", "prompts/list"})


def propagating(override: bool | None) -> bool:
    """Whether trace context travels in ``params._meta``: ``override`` (the instrumentor's
    ``propagate=`` argument) when given, else :data:`ENV_PROPAGATE` (read per request), default on."""
    return shared_propagating(override, ENV_PROPAGATE)


def field(obj: Any, *names: str) -> Any:
    """The first of ``names`` that ``obj`` (a model or a mapping) has and is not ``None``, else ``None``; read by
    the span layer's :func:`probes.field` (a name a pydantic model lacks costs no raised ``AttributeError``)."""
    for name in names:
        value = probes.field(obj, name)
        if value is not None:
            return value
    return None


def root_of(request: Any) -> Any:
    """The request model a ``ClientRequest`` (a pydantic ``RootModel``) holds, or ``request`` itself (a bare request
    model, as the server's dispatch hands its handlers): read by :func:`field`, not ``getattr(request, "root",
    request)``, which on a bare model raises and catches an ``AttributeError`` inside pydantic's ``__getattr__``
    (twice a request on the server side, the most expensive read of it)."""
    root = field(request, "root")
    return request if root is None else root


def method_of(request: Any) -> str | None:
    """The JSON-RPC method of a request model (``ClientRequest`` root or a bare request), or ``None``."""
    return request_parts(request)[1]


def params_of(request: Any) -> Any:
    """The request's ``params`` model, or ``None``."""
    return request_parts(request)[2]


def request_parts(request: Any) -> tuple[Any, str | None, Any]:
    """``(root, method, params)`` of a request model: its root (:func:`root_of`), JSON-RPC method (``None`` when it
    has none) and ``params`` model (or ``None``), read once for a hook that needs all three."""
    root = root_of(request)
    method = getattr(root, "method", None)
    return root, (method if isinstance(method, str) else None), getattr(root, "params", None)


def target_of(method: str, params: Any) -> str | None:
    """The low-cardinality target of the span name: the tool or prompt name (never a resource URI)."""
    if method in (TOOLS_CALL, "prompts/get"):
        name = field(params, "name")
        return name if isinstance(name, str) and name else None
    return None


def with_trace_context(request: Any, ctx: otel_context.Context, root: Any = None) -> Any:
    """A copy of ``request`` whose ``params._meta`` carries ``ctx`` (the configured propagators:
    ``traceparent``, ``tracestate``, ``baggage`` by default). A context already in ``_meta`` (put
    there by the caller, or by a client library that propagates itself, as FastMCP does) is
    replaced, as OTel's HTTP instrumentations replace a ``traceparent`` header: the one
    ``traceparent`` on the wire names the span the server's span belongs under, and a
    ``tracestate`` is never left beside a ``traceparent`` it does not belong to. Other ``_meta``
    keys are kept. Returns ``request`` itself when there is nothing to inject. ``root``: ``request``'s
    :func:`root_of`, when the caller has it already."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=ctx)
    if not carrier:
        return request
    if root is None:
        root = root_of(request)
    data = root.model_dump(by_alias=True, mode="json", exclude_none=True)
    params = data.get("params") or {}
    meta = params.get("_meta") or {}
    if "traceparent" in carrier:
        meta.pop("tracestate", None)
    meta.update(carrier)
    params["_meta"] = meta
    data["params"] = params
    new_root = type(root).model_validate(data)
    return _rewrapped(request, new_root) if root is not request else new_root


def _rewrapped(request: Any, root: Any) -> Any:
    """``request``'s root model (``ClientRequest``, a union of every request type) around ``root``, a validated
    request of the type it held: constructed without validating ``root`` against each member of the union
    again (the most expensive step of injecting the context), as it is already one of them. A pydantic
    ``RootModel`` without a post-init hook is built as unpickling builds it (``__new__``, then its
    ``__setstate__``): the same object ``model_construct(root)`` makes (its ``__dict__`` and fields set, nothing
    else), without its Python walk over the fields (~9,500 instructions a request)."""
    cls = type(request)
    if getattr(cls, "__pydantic_root_model__", False) and not getattr(cls, "__pydantic_post_init__", True):
        rewrapped = cls.__new__(cls)
        rewrapped.__setstate__({"__dict__": {"root": root}, "__pydantic_fields_set__": {"root"}})
        return rewrapped
    construct = getattr(cls, "model_construct", None)
    return construct(root) if construct is not None else cls(root)


def without_trace_context(request: Any) -> Any:
    """A copy of ``request`` without the :data:`PROPAGATION_KEYS` in ``params._meta`` (put there
    by a library that propagates itself, as FastMCP does), or ``request`` itself when it has none:
    with propagation off, no trace context leaves the process."""
    root = root_of(request)
    meta = getattr(getattr(root, "params", None), "meta", None)
    extra = (meta if isinstance(meta, Mapping) else getattr(meta, "model_extra", None)) or {}
    if not any(key in extra for key in PROPAGATION_KEYS):
        return request
    data = root.model_dump(by_alias=True, mode="json", exclude_none=True)
    meta_data = data["params"]["_meta"]
    for key in PROPAGATION_KEYS:
        meta_data.pop(key, None)
    new_root = type(root).model_validate(data)
    return _rewrapped(request, new_root) if root is not request else new_root


def context_carrier(ctx: otel_context.Context) -> dict[str, str]:
    """The propagation fields of ``ctx`` (the configured propagators), for a ``_meta`` mapping."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=ctx)
    return carrier


def with_carrier(meta: Mapping[str, Any] | None, carrier: Mapping[str, str]) -> dict[str, Any]:
    """A copy of a ``_meta`` mapping whose propagation keys are ``carrier``'s (those already there are
    replaced: the server hands its own span's context down the chain); its other keys are kept."""
    return {**{k: v for k, v in (meta or {}).items() if k not in PROPAGATION_KEYS}, **carrier}


def extracted_context(meta: Any) -> otel_context.Context | None:
    """The context a request's ``params._meta`` carries (remote parent and baggage), or ``None``."""
    if meta is None:
        return None
    fields: Mapping[str, Any]
    if type(meta) is dict or isinstance(meta, Mapping):  # mcp 2.x: a dict (`type` first: no ABC check)
        fields = meta
    else:  # mcp 1.x: the model's extras, only read here
        fields = getattr(meta, "model_extra", None) or {}
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
    versions = _protocol_versions()
    if versions is None:  # pragma: no cover - moved in another SDK version
        return requested
    supported, latest = versions
    return requested if requested in supported else latest


_VERSIONS: list[Any] = []  # (supported, latest) once imported, or None: imported on the first request, not per request


def _protocol_versions() -> tuple[Any, str] | None:
    if not _VERSIONS:
        try:
            from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
            from mcp.types import LATEST_PROTOCOL_VERSION
            _VERSIONS.append((SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION))
        except ImportError:  # pragma: no cover - moved in another SDK version
            _VERSIONS.append(None)
    return _VERSIONS[0]
