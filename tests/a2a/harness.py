"""The remote agent of ``server_app.py`` as a child process on free loopback ports, its spans read back."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from otel_agents.exporters.file import read_otlp_json
from tests._loopback import QuietHandler, serve
from tests.servers import child_server, free_port
from tests.spans import SpanSnapshot, snapshot

SERVER_APP = str(Path(__file__).with_name("server_app.py"))


class RemoteAgent:
    """A running server process: its URL, gRPC address and spans file. ``app``: the server script, run as
    ``app PORT [GRPC_PORT]`` (``server_app.py``, or another A2A app: FastA2A's, ADK's); ``timeout``: seconds
    it may take to listen (:func:`tests.servers.child_server`)."""

    def __init__(self, spans: Path, *, instrument: bool = True, content: bool = True, grpc: bool = False,
                 env: dict[str, str] | None = None, app: str = SERVER_APP, timeout: float = 90.0):
        self.spans_file = spans
        self.port = free_port()
        self.grpc_port = free_port() if grpc else None
        self.url = f"http://127.0.0.1:{self.port}/"
        environ = dict(os.environ, A2A_TEST_SPANS=str(spans), A2A_TEST_INSTRUMENT="1" if instrument else "0",
                       OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true" if content else "NO_CONTENT",
                       **(env or {}))
        args = [sys.executable, app, str(self.port)] + ([str(self.grpc_port)] if grpc else [])
        self._server = contextlib.ExitStack()
        self.proc = self._server.enter_context(child_server(args, self.port, env=environ, timeout=timeout))

    def close(self) -> None:
        self._server.close()

    def spans(self) -> list[SpanSnapshot]:
        return [snapshot(s) for s in read_otlp_json(self.spans_file)] if self.spans_file.exists() else []

    def spans_of(self, trace_id: int | None = None, *, where: Callable[[SpanSnapshot], bool] | None = None,
                 count: int = 1, timeout: float = 15.0,
                 until: Callable[[list[SpanSnapshot]], bool] | None = None) -> list[SpanSnapshot]:
        """This server's spans (of ``trace_id`` when given), once ``count`` of them satisfy ``where`` (or, given
        ``until``, once ``until(spans)`` holds), or when ``timeout`` seconds have passed."""
        deadline = time.monotonic() + timeout
        while True:
            spans = [s for s in self.spans() if trace_id is None or s.trace_id == trace_id]
            done = until(spans) if until is not None else sum(1 for s in spans if where is None or where(s)) >= count
            if done or time.monotonic() > deadline:
                return spans
            time.sleep(0.1)


@contextlib.contextmanager
def webhook() -> Any:
    """A loopback HTTP server recording the (path, headers) of each POST; yields ``(url, received)``
    (``received.bodies``: the POSTs' bodies, in the same order)."""

    class Received(list):
        bodies: list[bytes]

    received = Received()
    received.bodies = []

    class Hook(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            received.bodies.append(body)
            received.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            self.send_response(200)
            self.end_headers()

    with serve(Hook) as url:
        yield f"{url}/hook", received


def message(text: str, *, task_id: str | None = None, context_id: str | None = None) -> Any:
    from a2a.types import Message, Part, Role

    return Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[Part(text=text)],
                   task_id=task_id or "", context_id=context_id or "")


async def client_for(url: str, *, binding: str = "JSONRPC", streaming: bool = False) -> Any:
    from a2a.client import ClientConfig, create_client

    factory = None
    if binding == "GRPC":
        import grpc

        factory = grpc.aio.insecure_channel
    return await create_client(url, client_config=ClientConfig(streaming=streaming, grpc_channel_factory=factory,
                                                               supported_protocol_bindings=[binding]))


async def ask(url: str, text: str, *, binding: str = "JSONRPC", streaming: bool = False,
              task_id: str | None = None, context_id: str | None = None, context: Any = None,
              push_url: str | None = None) -> list[Any]:
    """Send one message (``push_url``: with a push-notification webhook); the stream events (one for a unary call)."""
    from a2a.types import SendMessageConfiguration, SendMessageRequest, TaskPushNotificationConfig

    client = await client_for(url, binding=binding, streaming=streaming)
    try:
        configuration = SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=push_url, token="tok")) if push_url else None
        request = SendMessageRequest(message=message(text, task_id=task_id, context_id=context_id),
                                     configuration=configuration)
        return [e async for e in client.send_message(request, context=context)]
    finally:
        await client.close()
