"""ECP over Streamable HTTP: one endpoint (default ``/ecp``), JSON-RPC in a POST body.

Follows the Streamable HTTP transport rules that apply to a request/response
agent: ``POST`` answers ``application/json``; a notification is answered
``202 Accepted`` with no body; ``GET`` (no server-initiated stream here) is
``405``; a request whose ``Origin`` is not allowed is ``403`` (DNS-rebinding
protection). Binds 127.0.0.1 by default.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit

from .jsonrpc import handle

MAX_BODY = 10 * 1024 * 1024  # bytes


def _origin_allowed(origin: str | None, allowed: Iterable[str]) -> bool:
    """No Origin (a non-browser client) is allowed; otherwise loopback origins or listed ones."""
    if not origin:
        return True
    allowed = list(allowed)
    if origin in allowed or "*" in allowed:
        return True
    host = urlsplit(origin).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1")


def make_server(methods: Mapping[str, Any], host: str = "127.0.0.1", port: int = 0, path: str = "/ecp",
                allowed_origins: Iterable[str] = ()) -> ThreadingHTTPServer:
    """Build (not start) the HTTP server; ``server.server_address`` has the bound port."""
    origins = list(allowed_origins)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet: stdout/stderr are the user's
            pass

        def _send(self, status: int, body: bytes = b"", ctype: str = "application/json",
                  extra: Mapping[str, str] | None = None) -> None:
            self.send_response(status)
            if body:
                self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if body:
                self.wfile.write(body)

        def _checked(self) -> bool:
            if urlsplit(self.path).path != path:
                self._send(404, b'{"error":"not found"}')
                return False
            if not _origin_allowed(self.headers.get("Origin"), origins):
                self._send(403, b'{"error":"origin not allowed"}')
                return False
            return True

        def do_GET(self) -> None:  # noqa: N802
            if self._checked():
                self._send(405, b'{"error":"method not allowed: use POST"}', extra={"Allow": "POST"})

        def do_DELETE(self) -> None:  # noqa: N802
            if self._checked():
                self._send(405, b'{"error":"method not allowed: use POST"}', extra={"Allow": "POST"})

        def do_POST(self) -> None:  # noqa: N802
            if not self._checked():
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY:
                self._send(413 if length > MAX_BODY else 400, b'{"error":"bad Content-Length"}')
                return
            body = self.rfile.read(length)
            response = handle(body, methods)
            if response is None:
                self._send(202)
                return
            self._send(200, json.dumps(response).encode("utf-8"))

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def serve_http(methods: Mapping[str, Any], host: str, port: int, path: str,
               allowed_origins: Iterable[str] = (), ready: threading.Event | None = None,
               announce: Any = None) -> None:
    """Serve until interrupted; ``announce(url)`` is called once listening."""
    server = make_server(methods, host, port, path, allowed_origins)
    if announce is not None:
        h, p = server.server_address[:2]
        announce(f"http://{h}:{p}{path}")
    if ready is not None:
        ready.set()
    try:
        server.serve_forever()
    finally:
        server.server_close()
