"""A test's own HTTP server in a thread of the test process, on 127.0.0.1 (``tests.servers`` runs servers as child
processes instead): ``with serve(Handler) as url: ...``."""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that writes no access log line to stderr (keeps the test output clean)."""

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` (a ``BaseHTTPRequestHandler`` class; a thread per request) on 127.0.0.1 at a port the OS
    picks, from a daemon thread. Yields the base URL, ``http://127.0.0.1:PORT`` (no path, no trailing slash). On
    leaving the block, on an error too, the server stops accepting, its socket is closed and its thread joined;
    a request still being handled is not waited for (its thread is a daemon)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name=f"loopback {handler.__name__}", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
