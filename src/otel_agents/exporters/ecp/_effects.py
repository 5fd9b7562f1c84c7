"""Side effects and plain spans inside a run: the spans of other instrumentations.

A run's spans that carry no ``otel_agents.span.kind`` come from elsewhere: the
OpenTelemetry instrumentations of HTTP clients, databases, messaging and RPC
libraries, or a span the user opened by hand. :func:`classify` reads them by
the OpenTelemetry semantic conventions they follow (the stable names first,
then the older names the instrumentations still write by default, e.g.
``http.method``/``http.url``/``db.system``):

=========  ==============================================================  =========================================
kind       attributes read                                                 line (content on / content off)
=========  ==============================================================  =========================================
http       ``http.request.method``, ``server.address``, ``url.path``       ``effect http POST HOST /PATH status=200``
           (else ``url.full`` / ``http.url`` split; the query and any      / ``effect http POST HOST``
           user info dropped), ``http.response.status_code``
db         ``db.system.name``, ``db.operation.name`` (else the query's     ``effect db SYSTEM OPERATION COLLECTION``
           first keyword), ``db.collection.name``                          / ``effect db SYSTEM OPERATION``
messaging  ``messaging.system``, ``messaging.operation.type``,             ``effect messaging SYSTEM OPERATION DEST``
           ``messaging.destination.name``                                  / ``effect messaging SYSTEM OPERATION``
rpc        ``rpc.system``, ``rpc.service``, ``rpc.method``                 ``effect rpc SYSTEM SERVICE/METHOD``
                                                                           / ``effect rpc SYSTEM METHOD``
=========  ==============================================================  =========================================

Any other span without a semantic kind is a plain ``span NAME``. Spans that
are not the run's own actions get no line: server and consumer spans (work
done *for* someone, not by the run) and another GenAI instrumentation's view of
a step we already have (a span with ``gen_ai.*``, OpenInference ``llm.*``/
``openinference.*`` or pydantic-ai's ``logfire.*`` attributes).
Their values are redacted as the fold reads them (:class:`._redaction.RedactedAttributes`), paths included.

Under a model or embedding span, only the provider request itself is that
step's transport and gets no line (:func:`is_transport`): a span of another
instrumentation whose host (``server.address``, else the host of ``url.full``/
``http.url``, else ``net.peer.name``) is the model span's ``server.address``,
or the provider's public API host for its ``gen_ai.provider.name`` (the OTel
GenAI provider names, :data:`PROVIDER_HOSTS`), or, when the model span records
neither, any host of :data:`PROVIDER_HOSTS`. Anything else opened while a model
call is open (an SMTP send, an HTTP call to another service) is an effect or
span line like anywhere else; the transport's own children (httpcore, urllib3)
stay quiet. So under an A2A call's span (``a2a.method.name``): the request to the call's
``server.address`` is its transport (an HTTP client instrumentation's ``POST``), not an effect. Under
a transport, the other process's span of the call (an A2A or MCP server's) and what it does are
the run's again (the remote agent's own side effects). An A2A agent-card fetch (:func:`is_discovery`: ``GET``
of ``/.well-known/agent-card.json``, or ``/.well-known/agent.json`` of older A2A versions) is discovery, not a side
effect: no line, not counted.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import SplitResult, urlsplit

from opentelemetry.trace import SpanKind

from ...semconv import attributes as A
from . import _facts as F

_NOT_OURS = (SpanKind.SERVER, SpanKind.CONSUMER)
# Attribute prefixes of GenAI/agent instrumentations (OTel GenAI, OpenInference, pydantic-ai's Logfire spans).
_GENAI_PREFIXES = ("gen_ai.", "llm.", "openinference.", "logfire.")
_KEYWORD = re.compile(r"[A-Za-z][A-Za-z_]*")
PART_LIMIT = 120
PATH_LIMIT = 300


def _first(a: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = a.get(key)
        if value is not None and value != "":
            return value
    return None


def _word(value: Any) -> str | None:
    """``value`` as one bounded token (whitespace → ``_``), or ``None``."""
    if value is None or isinstance(value, (bool, tuple, list)):
        return None
    text = "_".join(str(value).split())
    return _cut(text, PART_LIMIT) if text else None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Public API hosts of the OTel GenAI ``gen_ai.provider.name`` values (a leading "." matches any subdomain).
PROVIDER_HOSTS: dict[str, tuple[str, ...]] = {
    "openai": ("api.openai.com",),
    "anthropic": ("api.anthropic.com",),
    "gcp.gemini": ("generativelanguage.googleapis.com",),
    "gcp.vertex_ai": (".aiplatform.googleapis.com",),
    "gcp.gen_ai": ("generativelanguage.googleapis.com", ".aiplatform.googleapis.com"),
    "azure.ai.openai": (".openai.azure.com",),
    "azure.ai.inference": (".models.ai.azure.com", ".services.ai.azure.com"),
    "aws.bedrock": (".amazonaws.com",),
    "mistral_ai": ("api.mistral.ai",),
    "cohere": ("api.cohere.com", "api.cohere.ai"),
    "groq": ("api.groq.com",),
    "deepseek": ("api.deepseek.com",),
    "x_ai": ("api.x.ai",),
    "perplexity": ("api.perplexity.ai",),
}


def span_host(a: dict[str, Any]) -> str | None:
    """The host a client span talks to: ``server.address``, else ``url.full``/``http.url``'s host, else
    ``net.peer.name``/``http.host`` (lower case), or ``None``."""
    host = _first(a, "server.address")
    if host is None:
        url = _first(a, "url.full", "http.url")
        parts = _split(url)
        if parts is not None:
            try:
                host = parts.hostname
            except ValueError:
                host = None
    if host is None:
        host = _first(a, "net.peer.name", "http.host")
    return str(host).lower().split(":", 1)[0] if host else None


# The user info of a URL (``scheme://user:password@``): never shown, and its password is ``[REDACTED]`` (brackets,
# which ``urlsplit`` would read as an IPv6 host).
_USER_INFO = re.compile(r"(?<=://)[^/?#@]*@")


def _split(url: Any) -> SplitResult | None:
    """``url`` split (``urlsplit``) without its user info, or ``None`` when it is not a URL ``urlsplit`` reads
    (``http://[oops/``: a foreign span's value, which must not fail the fold)."""
    if not isinstance(url, str):
        return None
    try:
        return urlsplit(_USER_INFO.sub("", url, count=1) if "@" in url else url)
    except ValueError:
        return None


def _matches(host: str, patterns: Any) -> bool:
    return any(host == p or (p.startswith(".") and host.endswith(p)) for p in patterns)


def is_transport(span: F.FoldSpan, model: F.FoldSpan) -> bool:
    """Whether ``span`` (no semantic kind, under ``model``) is the provider request of that model call, or
    the HTTP request of that A2A call (its host the call's ``server.address``; see the module docstring)."""
    host = span_host(span.attributes)
    if host is None:
        return False
    m = model.attributes
    address = m.get("server.address")
    if isinstance(address, str) and address:
        if host == address.lower():
            return True
    if model.protocol is not None:  # an A2A call: only the request to its own server is its transport
        return False
    provider = _first(m, A.GEN_AI_PROVIDER_NAME, A.LLM_PROVIDER, "gen_ai.system")
    if isinstance(provider, str) and provider.lower() in PROVIDER_HOSTS:
        return _matches(host, PROVIDER_HOSTS[provider.lower()])
    if isinstance(address, str) and address:
        return False
    return any(_matches(host, patterns) for patterns in PROVIDER_HOSTS.values())


# The A2A specification's well-known URI of an agent card (RFC 8615), and the name of versions before 0.3.
# a2a-sdk's card resolver joins it to the agent's base URL, which may have a path of its own: matched at the end.
_AGENT_CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def is_discovery(span: F.FoldSpan) -> bool:
    """Whether ``span`` (no semantic kind) is a client's ``GET`` of an A2A agent card: reading what a remote
    agent offers before calling it changes nothing anywhere, so it is no side effect of the run (no line, not
    in ``metrics.effects``), as the call's own transport is not. Any other request, a ``GET`` of another
    path or another method on the card's path, is an effect as before."""
    a = span.attributes
    if span.span_kind in _NOT_OURS or _first(a, "http.request.method", "http.method") != "GET":
        return False
    path = _first(a, "url.path")
    if path is None:
        parts = _split(_first(a, "url.full", "http.url"))
        path = parts.path if parts is not None else None
    return isinstance(path, str) and path.endswith(_AGENT_CARD_PATHS)


def _http(a: dict[str, Any], content: bool) -> str | None:
    method = _word(_first(a, "http.request.method", "http.method"))
    if method is None:
        return None
    parts = _split(_first(a, "url.full", "http.url"))
    host = _first(a, "server.address", "net.peer.name", "http.host")
    if host is None and parts is not None:
        try:
            host = parts.hostname  # never the user info
        except ValueError:
            host = None
    line = ["http", method]
    if _word(host):
        line.append(_word(host))  # type: ignore[arg-type]
    if content:
        path = _first(a, "url.path")
        if path is None and parts is not None:
            path = parts.path
        if isinstance(path, str):
            path = path.split("?", 1)[0] or "/"
            line.append(_cut("%20".join(path.split()), PATH_LIMIT))
        status = _first(a, "http.response.status_code", "http.status_code")
        if isinstance(status, int) and not isinstance(status, bool):
            line.append(f"status={status}")
    return " ".join(line)


def _db(a: dict[str, Any], content: bool) -> str | None:
    system = _word(_first(a, "db.system.name", "db.system"))
    if system is None:
        return None
    operation = _first(a, "db.operation.name", "db.operation")
    if operation is None:
        query = _first(a, "db.query.text", "db.statement")
        match = _KEYWORD.match(query.lstrip()) if isinstance(query, str) else None
        operation = match.group().upper() if match else None
    line = ["db", system]
    if _word(operation):
        line.append(_word(operation))  # type: ignore[arg-type]
    collection = _word(_first(a, "db.collection.name", "db.sql.table", "db.mongodb.collection"))
    if content and collection:
        line.append(collection)
    return " ".join(line)


def _messaging(a: dict[str, Any], content: bool) -> str | None:
    system = _word(a.get("messaging.system"))
    if system is None:
        return None
    line = ["messaging", system]
    operation = _word(_first(a, "messaging.operation.type", "messaging.operation"))
    if operation:
        line.append(operation)
    destination = _word(a.get("messaging.destination.name"))
    if content and destination:
        line.append(destination)
    return " ".join(line)


def _rpc(a: dict[str, Any], content: bool) -> str | None:
    system = _word(a.get("rpc.system"))
    if system is None:
        return None
    line = ["rpc", system]
    method = _word(a.get("rpc.method"))
    service = _word(a.get("rpc.service"))
    if method and content and service and "/" not in method:
        method = f"{service}/{method}"
    if method:
        line.append(method)
    return " ".join(line)


_CONVENTIONS = (_http, _db, _messaging, _rpc)


def classify(span: F.FoldSpan, content: bool) -> tuple[str, str] | None:
    """The line of a span without a semantic kind: ``("effect", "http POST host /path status=200")``,
    ``("span", NAME)``, or ``None`` when it gets no line (see the module docstring)."""
    if span.span_kind in _NOT_OURS:
        return None
    a = span.attributes
    if any(key.startswith(_GENAI_PREFIXES) for key in a):
        return None
    for convention in _CONVENTIONS:
        text = convention(a, content)
        if text is not None:
            return "effect", text
    return "span", span.name or "span"


_CONTENT_KEYS = (A.INPUT_VALUE, A.OUTPUT_VALUE, A.GEN_AI_INPUT_MESSAGES, A.GEN_AI_OUTPUT_MESSAGES,
                 A.GEN_AI_TOOL_CALL_ARGUMENTS, A.GEN_AI_TOOL_CALL_RESULT)


def content_recorded(spans: list[F.FoldSpan]) -> bool:
    """Whether the run was recorded with content capture on: a semantic span of ours carries a content
    attribute (with capture off, none does), so the fold never shows more than the run recorded."""
    return any(s.semantic_kind is not None and any(k in s.attributes for k in _CONTENT_KEYS) for s in spans)
