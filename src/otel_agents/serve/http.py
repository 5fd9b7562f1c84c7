"""ECP over Streamable HTTP: one endpoint (default ``/ecp``), JSON-RPC in a POST body.

A bare ASGI application (:class:`ECPApp`) served by Uvicorn (https://www.uvicorn.org/)
with its strict HTTP/1.1 parser (h11: chunked bodies, keep-alive, no request
smuggling). Follows the Streamable HTTP transport rules that apply to a
request/response agent: ``POST`` answers ``application/json``; a notification is
answered ``202 Accepted`` with no body (a JSON-RPC batch: the array of its answers, or ``202`` when it
held notifications only; its members share one session); ``GET`` (no server-initiated stream here)
is ``405``; ``DELETE`` with an ``Mcp-Session-Id`` ends that session (see
:mod:`.sessions`).

Checks, in order, before any agent code runs:

0. request headers of at most 64 kB (``431``);
1. the path (``404``);
2. ``Host`` (DNS-rebinding protection): a loopback name, the bound address, or
   one listed with ``--allow-host``; else ``421``;
3. ``Origin``, when sent: a loopback origin or one listed with ``--allow-origin`` (``*`` or ``null`` only with a
   token: :func:`open_origin_refusal`);
   else ``403``; a CORS preflight (``OPTIONS`` with ``Access-Control-Request-Method``) from an allowed
   origin is answered here, ``204`` (see CORS below), before the token check (browsers send no
   ``Authorization`` on a preflight);
4. with a token (``--auth-token`` / ``OTEL_AGENTS_ECP_TOKEN``):
   ``Authorization: Bearer <token>``; else ``401``;
5. the body: not framed twice (``Content-Length`` with ``Transfer-Encoding``:
   ``400``), at most ``max_body`` bytes (``413``), received within
   ``connection_timeout`` seconds (``408``); ``ecp serve`` takes it uncompressed (another
   ``Content-Encoding``: ``415`` with ``Accept-Encoding: identity``, not a JSON parse error).

CORS (the Fetch standard's CORS protocol, https://fetch.spec.whatwg.org/#http-cors-protocol), so a page
from an allowed origin can call the server: the preflight's answer carries ``Access-Control-Allow-Origin``
(the page's origin), ``-Allow-Methods`` (the endpoint's methods), ``-Allow-Headers`` (the headers the
preflight asked for: ``Content-Type: application/json``, ``Authorization``, ``Mcp-Session-Id``…; which
origin may call is what is checked), ``-Max-Age`` and, when asked (Chrome's Private Network Access, a public
page calling a loopback server), ``Access-Control-Allow-Private-Network: true``; every other answer to an allowed
origin, refusals included, carries ``Access-Control-Allow-Origin``, ``Access-Control-Expose-Headers``
(``Mcp-Session-Id``, ``Retry-After``: else a page's script cannot read them) and ``Vary: Origin``. No
``Access-Control-Allow-Credentials``: the bearer token is a header the page sets, not a browser credential.
A disallowed origin gets ``403`` and no CORS header, so its page can read nothing. ``OPTIONS`` that is no
preflight is answered ``204`` with ``Allow``.

Limits (:class:`HTTPLimits`): a connection that has not sent a complete request
head within ``connection_timeout`` seconds of opening, or of its last response, is
closed (slow or idle clients cannot hold connections); at most ``max_connections``
connections and requests at once (more get ``503`` with ``Retry-After: 1``, in the server's own error format:
:meth:`HTTPGate.busy`); the listen backlog is 2048; at most :data:`MAX_PIPELINED` bytes of requests sent ahead
(HTTP/1.1 pipelining) are read, and none is handled while the client leaves its answers unread (cut off after
a connection timeout of that). Uvicorn's warning about each bad request is logged at most once a minute, with a
count (:class:`UvicornWarnings`): a client sending garbage cannot flood the log.

Shutdown follows Uvicorn's graceful model: on the first SIGTERM/SIGINT the server
stops accepting connections and gives requests in flight :data:`SHUTDOWN_GRACE`
seconds to finish (a step that does is answered as usual); then, or at once on a
second signal, the rest are cancelled: the step is abandoned (its spans end, marked
``otel_agents.stream.abandoned``) and its client gets a JSON-RPC ``-32003`` error.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import importlib
import ipaddress
import json
import logging
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Mapping
from urllib.parse import urlsplit

from .jsonrpc import (SERVER_BUSY, SHUTDOWN_MESSAGE, SHUTTING_DOWN, Request, batch_response, dispatch, dispatch_batch,
                      encode, error_response, parse)
from .sessions import SessionManager, SessionsFull

logger = logging.getLogger("otel_agents.serve")

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SESSION_HEADER = "mcp-session-id"
MAX_HEAD = 64 * 1024  # bytes of request headers (h11 also refuses an incomplete head past this size)
SHUTDOWN_GRACE = 2.0  # seconds requests in flight may still run after a stop signal (Uvicorn's graceful shutdown)
MAX_PIPELINED = 256 * 1024  # bytes of requests sent ahead (pipelined) held before reading stops
LOG_INTERVAL = 60.0  # seconds: each of Uvicorn's per-request warnings is logged at most once in this long
CORS_MAX_AGE = 7200  # seconds a browser may keep a preflight's answer (Chromium's cap; the allowed origins are fixed)

Scope = Mapping[str, Any]
Receive = Callable[[], Awaitable[Mapping[str, Any]]]
Send = Callable[[Mapping[str, Any]], Awaitable[None]]


@dataclass
class HTTPLimits:
    """Bounds on what clients can hold.

    Attributes:
        connection_timeout: seconds a client has to send a request head (from connect or the last
            response), and again for its body.
        max_body: bytes of one request body; a larger one is answered 413.
        max_connections: connections and requests in flight; more are answered 503.
        backlog: connections the OS queues before they are accepted (``listen``).
    """

    connection_timeout: float = 10.0
    max_body: int = 4 * 1024 * 1024
    max_connections: int = 1024
    backlog: int = 2048


@dataclass
class HTTPSecurity:
    """Who may talk to the server: extra ``Host`` names and ``Origin``s, and an optional bearer token."""

    allowed_hosts: list[str] = field(default_factory=list)  # "*" = any
    allowed_origins: list[str] = field(default_factory=list)  # "*" = any
    auth_token: str | None = None


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_origin(text: str) -> str:
    """An origin to allow, as a browser sends it in ``Origin`` (RFC 6454 section 6.2: ``scheme://host[:port]``,
    scheme and host in lower case, no default port); ``*`` (any origin) and ``null`` (a sandboxed or ``file:``
    page) as given. ``Origin`` is compared as sent, so ``https://UI.example:443`` is taken as ``https://ui.example``.

    Raises:
        ValueError: not an origin: a path (``https://ui.example/``, which no browser sends), a query, user
            information, no host, or a scheme other than http(s).
    """
    if text in ("*", "null"):
        return text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{text!r} is not an origin ({exc})") from None
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in _DEFAULT_PORTS or not host or parts.path or parts.query or parts.fragment \
            or "@" in parts.netloc or text.endswith(("?", "#")):
        raise ValueError(f"{text!r} is not an origin: scheme://host[:port] with an http or https scheme and "
                         "nothing after the port (not even '/'), as a browser sends it, e.g. https://ui.example:8080; "
                         "or '*' (any origin) or 'null'")
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else "")


def open_origin_refusal(allowed_origins: Iterable[str], auth_token: str | None,
                        what: str = "call this server") -> str | None:
    """Why these allowed origins are refused without a token, or ``None``: ``*`` lets every web page the user opens
    call the server (the Origin check exists to stop that: MCP's Streamable HTTP transport security, DNS rebinding),
    and so does ``null``, the origin of any page's sandboxed iframe or of a ``file:`` page. With a token a page must
    also send ``Authorization: Bearer <token>``, which another site's page does not know. ``what`` says what such a
    page could do (``run the agent through this server``)."""
    open_ones = [o for o in ("*", "null") if o in allowed_origins]
    if not open_ones or auth_token:
        return None
    how = "" if "*" in open_ones else " (from a sandboxed iframe, whose Origin is null)"
    return (f"--allow-origin {' and '.join(repr(o) for o in open_ones)} without a token: any web page open in a "
            f"browser on this machine could{how} {what} and read the answers. List the pages' origins "
            "(--allow-origin https://ui.example:8080; loopback origins always pass), or require a token "
            "(OTEL_AGENTS_ECP_TOKEN or --auth-token)")


def _origin_allowed(origin: str | None, allowed: Iterable[str]) -> bool:
    """No Origin (a non-browser client) is allowed; otherwise loopback origins or listed ones."""
    if not origin:
        return True
    allowed = list(allowed)
    if origin in allowed or "*" in allowed:
        return True
    try:
        return is_loopback(urlsplit(origin).hostname or "")
    except ValueError:
        return False


_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 section 5.6.2: a field name is a token

# RFC 9110 section 7.2: Host = uri-host [ ":" port ], uri-host an IP literal or a reg-name (RFC 3986 section 3.2.2)
_HOST_HEADER = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]+)(?::[0-9]*)?")


def _host_allowed(host_header: str | None, names: set[str]) -> bool:
    """No Host (HTTP/1.0, never a browser) is allowed; else it must be ``host[:port]`` (RFC 9110: a value with
    userinfo or a path, ``evil.example\\@127.0.0.1``, is refused, not read as its last part) and its name a
    loopback or listed name."""
    if host_header is None:
        return True
    if "*" in names:
        return True
    if not _HOST_HEADER.fullmatch(host_header):
        return False
    try:
        name = urlsplit(f"//{host_header}").hostname or ""
    except ValueError:
        return False
    return is_loopback(name) or name.lower() in names


def bearer_token_matches(value: str | None, token: bytes) -> bool:
    """Whether an ``Authorization`` value (an HTTP header or gRPC metadata) is ``Bearer <token>``, compared in
    constant time: RFC 6750 section 2.1; the scheme's name is case-insensitive (RFC 9110 section 11.1), so
    ``bearer`` and ``BEARER`` are the same scheme. ``token``: the token's ASCII bytes (:func:`check_token`)."""
    scheme, _, sent = (value or "").partition(" ")
    # what was sent, as bytes (an HTTP header read as latin-1 never fails; a non-ASCII byte never matches)
    return scheme.lower() == "bearer" and hmac.compare_digest(sent.strip().encode("utf-8", "replace"), token)


def check_token(token: str) -> str:
    """``token`` if HTTP can carry it as ``Authorization: Bearer <token>``: visible ASCII, no spaces.

    RFC 6750 section 2.1 makes a bearer token a ``b64token`` (ASCII letters, digits, ``-._~+/``, ``=`` padding).
    A field value is bytes (RFC 9110 section 5.5): Uvicorn and Starlette read it as latin-1, while clients
    send a non-ASCII token as latin-1 (``http.client``, browsers' ``fetch``), as UTF-8 (curl) or not at all
    (httpx), so such a token would match some clients and never others; whitespace around it is trimmed
    from the header, so it would never match. Any visible ASCII character is accepted (a wider set than
    b64token, matched byte for byte by every client).

    Raises:
        ValueError: the token is empty (it would turn the check off) or has other characters; the message says
            which, never the token itself (it is a secret).
    """
    if not token:
        raise ValueError("the bearer token is empty (it would turn the token check off)")
    bad = next((c for c in token if not "!" <= c <= "~"), None)
    if bad is not None:
        what = "a space" if bad == " " else "a control character" if bad.isascii() else "a non-ASCII character"
        raise ValueError(f"the bearer token has {what}: an HTTP header carries visible ASCII only (RFC 6750 bearer "
                         "tokens: letters, digits and -._~+/=)")
    return token


Reply = Callable[[Send, Mapping[str, str], int, str, Mapping[str, str]], Awaitable[None]]


async def json_error(send: Send, headers: Mapping[str, str], status: int, message: str,
                     extra: Mapping[str, str]) -> None:
    """The default refusal: ``{"error": message}`` as JSON."""
    await _send(send, status, {"error": message}, extra)


class HTTPGate:
    """The checks every server of ours makes before reading a request (numbered in the module docstring),
    and the bounded body read. One copy, used by :class:`ECPApp` and the OTLP receiver.

    Args:
        path: the endpoint path.
        security: allowed hosts and origins, token.
        limits: body size and time.
        bound_host: the address bound, accepted as a ``Host`` name.
        reply: how a refusal is written: ``reply(send, request headers, status, message, extra headers)``
            (default :func:`json_error`).
        methods: the methods the endpoint serves (besides ``OPTIONS``): CORS's ``Access-Control-Allow-Methods``.
        expose: response headers a page's script may read (CORS's ``Access-Control-Expose-Headers``).

    Raises:
        ValueError: a token HTTP cannot carry (:func:`check_token`), an allowed origin that is not one
            (:func:`normalise_origin`), ``*`` or ``null`` allowed without a token (:func:`open_origin_refusal`).
    """

    def __init__(self, path: str, security: HTTPSecurity | None = None, limits: HTTPLimits | None = None,
                 bound_host: str = "127.0.0.1", reply: Reply = json_error, methods: Iterable[str] = ("POST",),
                 expose: Iterable[str] = ("Retry-After",)) -> None:
        self.path = path
        self.security = security or HTTPSecurity()
        self.limits = limits or HTTPLimits()
        self.reply = reply
        self.methods = ", ".join(methods)
        self._expose = ", ".join(expose).encode("latin-1")
        self._origins = [normalise_origin(o) for o in self.security.allowed_origins]
        refusal = open_origin_refusal(self._origins, self.security.auth_token)
        if refusal is not None:
            raise ValueError(refusal)
        self._hosts = {h.lower().strip("[]") for h in self.security.allowed_hosts}
        if bound_host not in ("0.0.0.0", "::", ""):
            self._hosts.add(bound_host.lower().strip("[]"))
        token = self.security.auth_token
        self._token = None if token is None else check_token(token).encode("ascii")

    async def admit(self, scope: Scope, send: Send) -> tuple[dict[str, str], Send] | None:
        """Checks 0-4 (a CORS preflight, or another ``OPTIONS``, is answered after them); when they pass, the
        request headers (lower-case names) and the ``send`` to answer with (adding the CORS headers an allowed
        ``Origin`` gets); else ``None`` (answered)."""
        headers: dict[str, str] = {}
        size = 0
        for k, v in scope.get("headers", []):
            headers.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))
            size += len(k) + len(v)
        send = self._cors(headers, send)
        if size > MAX_HEAD:
            await self.reply(send, headers, 431, f"request headers larger than {MAX_HEAD} bytes",
                             {"connection": "close"})
            return None
        if scope.get("path") != self.path:
            await self.reply(send, headers, 404, "not found", {})
            return None
        if not _host_allowed(headers.get("host"), self._hosts):
            await self.reply(send, headers, 421, "host not allowed (DNS-rebinding protection); see --allow-host", {})
            return None
        if not _origin_allowed(headers.get("origin"), self._origins):
            await self.reply(send, headers, 403, "origin not allowed; see --allow-origin", {})
            return None
        method = scope.get("method")
        if method == "OPTIONS" and "origin" in headers and "access-control-request-method" in headers:
            await _send(send, 204, None, self._preflight(headers))
            return None
        if self._token is not None and not self._authorized(headers.get("authorization")):
            await self.reply(send, headers, 401, "missing or wrong bearer token",
                             {"www-authenticate": 'Bearer realm="ecp"'})
            return None
        if method == "OPTIONS":  # RFC 9110 section 9.3.7: what the endpoint serves
            await _send(send, 204, None, {"allow": f"{self.methods}, OPTIONS"})
            return None
        return headers, send

    def _cors(self, headers: Mapping[str, str], send: Send) -> Send:
        """``send``, adding to the response start ``Vary: Origin`` when the request has an ``Origin``, and for an
        allowed one ``Access-Control-Allow-Origin`` (that origin) and ``Access-Control-Expose-Headers``."""
        origin = headers.get("origin")
        if origin is None:
            return send
        extra = [(b"vary", b"Origin")]
        if _origin_allowed(origin, self._origins):
            extra.append((b"access-control-allow-origin", origin.encode("latin-1")))
            if self._expose:
                extra.append((b"access-control-expose-headers", self._expose))

        async def cors_send(message: Mapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return cors_send

    def _preflight(self, headers: Mapping[str, str]) -> dict[str, str]:
        """The CORS headers of a preflight's answer (``Access-Control-Allow-Origin``, ``Vary: Origin`` are added
        by :meth:`_cors`): the endpoint's methods, the request headers asked for (``Authorization`` must be
        named: the ``*`` wildcard never covers it), how long a browser may keep the answer."""
        asked = [h.strip().lower() for h in headers.get("access-control-request-headers", "").split(",")]
        extra = {"access-control-allow-methods": self.methods, "access-control-max-age": str(CORS_MAX_AGE),
                 "vary": "Access-Control-Request-Method, Access-Control-Request-Headers"}
        allowed = ", ".join(h for h in asked if _TOKEN.fullmatch(h))
        if allowed:
            extra["access-control-allow-headers"] = allowed
        if headers.get("access-control-request-private-network", "").lower() == "true":
            # Chrome's Private Network Access (https://wicg.github.io/private-network-access/): a public page
            # calling a loopback server asks this too; the origin is one the user allowed
            extra["access-control-allow-private-network"] = "true"
        return extra

    async def busy(self, scope: Scope, send: Send) -> None:
        """The refusal of a request over ``max_connections`` (connections and requests in flight): ``503`` with
        ``Retry-After: 1``, written as this server writes its other refusals (Uvicorn's own is plain text without
        ``Retry-After``: an OTLP exporter cannot tell when to retry, and it is no ``google.rpc.Status``)."""
        await self._unavailable(scope, send, f"server busy: {self.limits.max_connections} connections and "
                                "requests at once; retry later")

    async def shutting_down(self, scope: Scope, send: Send) -> None:
        """The answer to a request still unanswered when the server stops (its graceful shutdown is over and
        Uvicorn cancels what still runs): ``503`` with ``Retry-After: 1``, which an OTLP exporter retries."""
        await self._unavailable(scope, send, "server shutting down: the request was not handled; retry later")

    async def _unavailable(self, scope: Scope, send: Send, message: str) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        await self.reply(self._cors(headers, send), headers, 503, message, {"retry-after": "1", "connection": "close"})

    def _authorized(self, value: str | None) -> bool:
        return bearer_token_matches(value, self._token or b"")

    async def body(self, headers: Mapping[str, str], receive: Receive, send: Send) -> bytes | None:
        """Check 5: the whole body, or ``None`` when it was refused (answered) or the client left."""
        declared = headers.get("content-length")
        if declared is not None and "transfer-encoding" in headers:  # RFC 9112 6.3: a smuggling attempt
            await self.reply(send, headers, 400, "both Content-Length and Transfer-Encoding", {"connection": "close"})
            return None
        too_large = f"body larger than {self.limits.max_body} bytes"
        if declared is not None and (not declared.isdigit() or int(declared) > self.limits.max_body):
            await self.reply(send, headers, 413, too_large, {"connection": "close"})
            return None
        try:
            return await asyncio.wait_for(self._read(receive), self.limits.connection_timeout)
        except asyncio.TimeoutError:
            await self.reply(send, headers, 408, "request body not received in time", {"connection": "close"})
        except _TooLarge:
            await self.reply(send, headers, 413, too_large, {"connection": "close"})
        except _Disconnected:
            pass
        return None

    async def _read(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limits.max_body:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


class ECPApp:
    """The ASGI application: checks, then JSON-RPC against the request's session.

    Args:
        sessions: the session table (its default session serves requests without an id).
        path: the endpoint path.
        security: allowed hosts and origins, token.
        limits: body size and time.
        bound_host: the address bound, accepted as a ``Host`` name.
    """

    def __init__(self, sessions: SessionManager, path: str = "/ecp", security: HTTPSecurity | None = None,
                 limits: HTTPLimits | None = None, bound_host: str = "127.0.0.1") -> None:
        self.sessions = sessions
        self.path = path
        self.gate = HTTPGate(path, security, limits, bound_host, methods=("POST", "DELETE"),
                             expose=("Mcp-Session-Id", "Retry-After"))
        self.security = self.gate.security
        self.limits = self.gate.limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan is off; websockets are not served
            return
        admitted = await self.gate.admit(scope, send)
        if admitted is None:
            return None
        headers, send = admitted
        method = scope.get("method", "")
        if method == "POST":
            return await self._post(headers, receive, send)
        if method == "DELETE":
            return await self._delete(headers, send)
        await _send(send, 405, {"error": "method not allowed: use POST"}, {"allow": "POST, DELETE, OPTIONS"})

    async def _delete(self, headers: Mapping[str, str], send: Send) -> None:
        sid = headers.get(SESSION_HEADER)
        if sid is None:
            return await _send(send, 400, {"error": "DELETE needs an Mcp-Session-Id header"})
        if not self.sessions.end(sid):
            return await _send(send, 404, {"error": "unknown session"})
        await _send(send, 204, None)

    async def _post(self, headers: Mapping[str, str], receive: Receive, send: Send) -> None:
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", ""):  # RFC 9110 15.5.16: 415, and which codings are accepted
            return await _send(send, 415, {"error": f"Content-Encoding {headers['content-encoding']!r} is not "
                                                    "supported: send the JSON-RPC body uncompressed"},
                               {"accept-encoding": "identity", "connection": "close"})
        body = await self.gate.body(headers, receive, send)
        if body is None:
            return None
        request = parse(body)
        if isinstance(request, dict):
            return await _send(send, 200, request)
        batch = request if isinstance(request, list) else None
        requests = [r for r in batch if isinstance(r, Request)] if batch is not None else [request]
        id_ = request.id if isinstance(request, Request) else None  # a batch's refusal cannot name one id
        extra: dict[str, str] = {}
        sid = headers.get(SESSION_HEADER)
        if sid is not None:
            session = self.sessions.get(sid)
            if session is None:
                return await _send(send, 404, error_response(id_, -32600, "unknown or expired session: "
                                                             "send agent/initialize without Mcp-Session-Id"))
        elif any(r.method == "agent/initialize" for r in requests):  # a batch's members share its session
            try:
                sid, session = self.sessions.open()
            except SessionsFull as exc:
                return await _send(send, 503, error_response(id_, SERVER_BUSY, f"server busy: {exc}"),
                                   {"retry-after": "1"})
            extra[SESSION_HEADER] = sid
        else:
            session = self.sessions.default
        if batch is not None:
            return await self._batch(batch, session.methods(), send, extra)
        try:
            response = await dispatch(request, session.methods())
        except asyncio.CancelledError:
            # Uvicorn's graceful shutdown: a request still running when its window closes is
            # cancelled (the step was abandoned and its spans ended on the way out). Answer it as
            # JSON-RPC; re-raising would make Uvicorn log a traceback and send a plain-text 500.
            logger.warning("%s (id %r) abandoned: the server is shutting down", request.method, request.id)
            if request.notification:
                return None
            return await _send(send, 200, error_response(request.id, SHUTTING_DOWN, SHUTDOWN_MESSAGE),
                               {**extra, "connection": "close"})
        if response is None:
            return await _send(send, 202, None, extra)
        await _send(send, 200, response, extra)


    async def _batch(self, batch: list[Any], methods: Mapping[str, Any], send: Send, extra: dict[str, str]) -> None:
        done: list[Any] = []
        try:
            await dispatch_batch(batch, methods, done)
        except asyncio.CancelledError:  # as for one request: the rest are answered -32003
            logger.warning("a batch of %d abandoned after %d: the server is shutting down", len(batch), len(done))
            answers = batch_response(batch, done)
            return await _send(send, 200 if answers else 202, answers, {**extra, "connection": "close"})
        answers = batch_response(batch, done)
        await _send(send, 200 if answers else 202, answers, extra)


class _TooLarge(Exception):
    pass


class _Disconnected(Exception):
    pass


async def _send(send: Send, status: int, payload: Any, extra: Mapping[str, str] | None = None) -> None:
    if payload is None:
        body = b""
    elif isinstance(payload, list) or (isinstance(payload, dict) and payload.get("jsonrpc") == "2.0"):
        body = encode(payload)
    else:
        body = json.dumps(payload, allow_nan=False, ensure_ascii=True).encode("ascii")
    # RFC 9110 section 8.6: no Content-Length in a 204
    headers = [] if status == 204 else [(b"content-length", str(len(body)).encode("ascii"))]
    if body:
        headers.append((b"content-type", b"application/json"))
    headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class UvicornWarnings(logging.Filter):
    """Uvicorn logs a warning per bad request ("Invalid HTTP request received.", "Unsupported upgrade
    request."): a client sending garbage would write a line per request. On the ``uvicorn.error`` logger, this
    lets each such message through once per ``interval`` seconds; the next one through says how many were
    held back, and :meth:`flush` (at shutdown) logs those held since. Errors (an application's traceback) all
    pass. Uvicorn's advice to install a WebSocket library is dropped: this server serves none (``ws="none"``).

    Args:
        interval: seconds between two lines of one message.
        clock: the time source (seconds, monotonic).
    """

    MAX_MESSAGES = 64  # distinct messages followed (Uvicorn's are a few fixed strings); others pass

    def __init__(self, interval: float = LOG_INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._held: dict[str, list[float | int]] = {}  # message -> [when last let through, held since]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.WARNING or not isinstance(record.msg, str):
            return True
        if record.msg.startswith("No supported WebSocket library"):
            return False
        now = self._clock()
        with self._lock:
            state = self._held.get(record.msg)
            if state is None:
                if len(self._held) < self.MAX_MESSAGES:
                    self._held[record.msg] = [now, 0]
                return True
            if now - state[0] < self.interval:
                state[1] += 1
                return False
            held, state[:] = state[1], [now, 0]
        if held:
            record.msg = f"{record.msg} ({held} more in the {self.interval:g} s before, not logged one by one)"
        return True

    def flush(self) -> None:
        """Log how many of each message were held back since it was last let through."""
        with self._lock:
            held = [(message, state[1]) for message, state in self._held.items() if state[1]]
            for state in self._held.values():
                state[1] = 0
        for message, count in held:
            logger.warning("Uvicorn: %r %d more time(s) since it was last logged (each such warning is logged at "
                           "most once in %g s)", message, count, self.interval)


def uvicorn_warnings() -> UvicornWarnings:
    """The :class:`UvicornWarnings` filter on the ``uvicorn.error`` logger (put there by the first call)."""
    uvicorn_logger = logging.getLogger("uvicorn.error")
    for existing in uvicorn_logger.filters:
        if isinstance(existing, UvicornWarnings):
            return existing
    throttle = UvicornWarnings()
    uvicorn_logger.addFilter(throttle)
    return throttle


def _protocol_class(gate: HTTPGate | None = None) -> type:
    """Uvicorn's h11 protocol, plus a deadline for the request head (Uvicorn's keep-alive timer is
    cancelled by the first byte of a request and never armed before the first one), and, with ``gate``,
    Uvicorn's ``limit_concurrency`` check made in front of the app so that ``gate.busy(scope, send)`` answers a
    request over the limit instead of Uvicorn's plain-text 503, and ``gate.shutting_down(scope, send)`` a request
    Uvicorn cancels at the end of its graceful shutdown (a sender still sending its body): Uvicorn would log the
    cancellation as "Exception in ASGI application" with a traceback per request and answer a bare 500.

    Back-pressure on pipelined requests (RFC 9112 section 9.3.2): Uvicorn's h11 protocol resumes reading
    whenever the application asks for its request body, so requests sent ahead piled up in h11's buffer
    without bound, and it writes a response without waiting for the client to read it, so a client that
    never read held every answer and its connection for ever. Here reading stops while more than
    :data:`MAX_PIPELINED` bytes of requests wait to be handled, and while the transport's write buffer is
    over its high-water mark no further request is handled; a client that has taken nothing of its answers
    for a connection timeout is cut off (checked once a connection timeout)."""
    from uvicorn.protocols.http.flow_control import FlowControl
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class InputBound(FlowControl):
        """Uvicorn's flow control, reading no more while the connection's unhandled input is over the bound."""

        def __init__(self, transport: Any, waiting: Callable[[], int]) -> None:
            super().__init__(transport)
            self._waiting = waiting

        def resume_reading(self) -> None:
            if self._waiting() <= MAX_PIPELINED:
                super().resume_reading()

    class DeadlineH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if gate is None:
                return
            limit, self.limit_concurrency, app = self.limit_concurrency, None, self.app

            async def bounded(scope: Scope, receive: Receive, send: Send) -> None:
                started = False

                async def tracked(message: dict) -> None:
                    nonlocal started
                    started = started or message["type"] == "http.response.start"
                    await send(message)

                try:
                    # Uvicorn's test, made before it adds the request's task: here that task is in self.tasks
                    if limit is not None and (len(self.connections) >= limit or len(self.tasks) > limit):
                        return await gate.busy(scope, tracked)
                    return await app(scope, receive, tracked)
                except asyncio.CancelledError:  # Uvicorn cancels request tasks only when it stops
                    if not started and not self.transport.is_closing():
                        await gate.shutting_down(scope, send)

            self.app = bounded

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.flow = InputBound(transport, lambda: len(self.conn.trailing_data[0]))
            self._idle_since = self.loop.time()
            self._deadline = self.loop.call_later(self.timeout_keep_alive, self._check_deadline)
            self._answer_held = False  # a response complete, the next request not read: the client reads slowly
            self._unsent, self._unsent_since = 0, self._idle_since  # answer bytes not yet taken, and since when

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if len(self.conn.trailing_data[0]) > MAX_PIPELINED:  # requests sent ahead: handle those first
                self.flow.pause_reading()

        def on_response_complete(self) -> None:
            self._idle_since = self.loop.time()
            if self.flow.write_paused and not self.transport.is_closing():
                self._answer_held = True  # read no further request until the client has read its answers
                return
            super().on_response_complete()

        def resume_writing(self) -> None:
            super().resume_writing()
            if self._answer_held and not self.transport.is_closing():
                self._answer_held = False
                self._idle_since = self.loop.time()
                super().on_response_complete()

        def _check_deadline(self) -> None:
            if self.transport.is_closing():
                return
            now, unsent = self.loop.time(), self.transport.get_write_buffer_size()
            if unsent != self._unsent:  # the client took some (or more was written)
                self._unsent, self._unsent_since = unsent, now
            elif unsent and now - self._unsent_since >= self.timeout_keep_alive:
                # nothing of its answers taken for a connection timeout (between two answers, or the application
                # waiting to write one): a graceful close would wait for the client for ever
                self.transport.abort()
                return
            waiting_for_head = self.cycle is None or self.cycle.response_complete
            left = self._idle_since + self.timeout_keep_alive - now
            if waiting_for_head and left <= 0:
                if unsent:  # answers still being taken: the rule above decides
                    self._deadline = self.loop.call_later(self.timeout_keep_alive, self._check_deadline)
                    return
                self.timeout_keep_alive_handler()
                if not self.transport.is_closing():
                    self.transport.close()
                return
            self._deadline = self.loop.call_later(max(left, 0.05) if waiting_for_head else self.timeout_keep_alive,
                                                  self._check_deadline)

        def connection_lost(self, exc: Exception | None) -> None:
            self._deadline.cancel()
            super().connection_lost(exc)

    return DeadlineH11Protocol


def bind(host: str, port: int, backlog: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0 = any free port).

    Raises:
        OSError: ``port`` is not 0-65535 (the OS would take it modulo 65536), the host cannot be resolved,
            or the address is in use (``strerror`` says which).
    """
    if not 0 <= port <= 65535:
        raise OSError(errno.EINVAL, f"port {port} is not 0-65535")
    info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(info[0], socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(info[4])
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def missing_server_packages(otlp: bool = False) -> str | None:
    """Why our HTTP servers cannot run in this environment, or ``None``: Uvicorn, and with ``otlp`` the
    ``google.rpc.Status`` of the OTLP receiver's refusals (googleapis-common-protos), are not installed; both
    come with ``otel-agents[ecp]``. The commands ask before they import an agent or bind, so a missing package
    is a one-line error (exit 2), not a traceback once the server starts."""
    needed = [("uvicorn", "uvicorn")] + ([("google.rpc.status_pb2", "googleapis-common-protos")] if otlp else [])
    missing = []
    for module, package in needed:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(package)
    if not missing:
        return None
    return f"the HTTP server needs {' and '.join(missing)}: pip install 'otel-agents[ecp]'"


def make_server(app: Any, limits: HTTPLimits | None = None) -> Any:
    """A Uvicorn server for ``app`` that leaves signals to the caller (set ``should_exit`` to stop).

    Raises:
        RuntimeError: Uvicorn is not installed (it comes with ``otel-agents[ecp]``).
    """
    try:
        import uvicorn
    except ImportError as exc:
        raise RuntimeError(missing_server_packages() or "uvicorn cannot be imported") from exc

    limits = limits or HTTPLimits()
    uvicorn_warnings()

    class Server(uvicorn.Server):
        def capture_signals(self):  # type: ignore[override] - the CLI owns SIGTERM/SIGINT
            import contextlib

            return contextlib.nullcontext()

    gate = getattr(app, "gate", None)  # ECPApp, OTLPReceiver: their HTTPGate answers a request over the limit
    config = uvicorn.Config(app, http=_protocol_class(gate), ws="none", lifespan="off", log_config=None,
                            access_log=False, server_header=False, timeout_keep_alive=limits.connection_timeout,
                            limit_concurrency=limits.max_connections, backlog=limits.backlog,
                            timeout_graceful_shutdown=SHUTDOWN_GRACE, h11_max_incomplete_event_size=MAX_HEAD)
    return Server(config)


async def serve_http(app: Any, host: str, port: int, limits: HTTPLimits | None = None,
                     announce: Callable[[str], Any] | None = None, started: Callable[[Any], Any] | None = None,
                     sock: socket.socket | None = None) -> None:
    """Serve ``app`` (an ASGI app with a ``path``) until ``server.should_exit`` is set; ``announce(url)`` once
    listening, ``started(server)`` before. ``sock``: a socket already bound with :func:`bind` (then ``host`` and
    ``port`` are not used)."""
    from . import fork

    limits = limits or HTTPLimits()
    sock = sock or bind(host, port, limits.backlog)
    server = make_server(app, limits)
    # A child the agent forks must not keep the listening socket or a client's connection open.
    listener = sock.fileno()
    undetach = fork.detach_in_child(lambda: [listener, *_connection_fds(server)])
    if started is not None:
        started(server)
    h, p = sock.getsockname()[:2]
    if announce is not None:
        announce(f"http://{f'[{h}]' if ':' in h else h}:{p}{app.path}")
    try:
        await server.serve(sockets=[sock])
    finally:
        undetach()
        sock.close()
        uvicorn_warnings().flush()


def _connection_fds(server: Any) -> list[int]:
    """The descriptors of the server's open client connections."""
    fds = []
    for connection in list(server.server_state.connections):
        transport = getattr(connection, "transport", None)
        sock = transport.get_extra_info("socket") if transport is not None else None
        if sock is not None and sock.fileno() >= 0:
            fds.append(sock.fileno())
    return fds
