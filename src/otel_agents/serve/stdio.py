"""ECP over stdio: one JSON-RPC object per line in, one per line out (the ECP default transport); a batch
(an array on one line) is answered with the array of its responses on one line.

Requests are answered one at a time, in order; at most :data:`~.http.MAX_PIPELINED` bytes of requests sent
ahead of the one being answered are read (then reading waits: a client piping a large file of requests to a
slow agent holds that much, not the file, as over HTTP). Lines are read as bytes, so input
that is not UTF-8 is a ``-32700`` for that line, whatever the locale (a UTF-8 byte-order mark is ignored at the
start of the first line only, as ``otel-agents fold`` does at the start of a file); a line longer
than ``max_line`` bytes is a ``-32700`` too (and is skipped up to its newline).
Responses are strict ASCII JSON (``\\uXXXX`` escapes), so any string an agent
returns, lone surrogates included, travels as valid UTF-8.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any, BinaryIO, Mapping

from .._spans.encoding import without_bom
from .http import MAX_PIPELINED
from .jsonrpc import (PARSE_ERROR, SHUTDOWN_MESSAGE, SHUTTING_DOWN, Request, batch_response, dispatch, dispatch_batch,
                      encode, error_response, parse)

DEFAULT_MAX_LINE = 4 * 1024 * 1024  # bytes
_TOO_LONG = object()


class _ReadAhead:
    """Bytes read and not yet taken by the server, at most ``limit`` (one line alone always passes)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._room = threading.Condition()

    def reserve(self, size: int) -> None:
        """Reader thread: wait until ``size`` more bytes fit."""
        with self._room:
            while self.held and self.held + size > self.limit:
                self._room.wait()
            self.held += size

    def release(self, size: int) -> None:
        """Server: ``size`` bytes were taken."""
        with self._room:
            self.held -= size
            self._room.notify()


def _read_lines(stdin: BinaryIO, max_line: int, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue,
                ahead: _ReadAhead) -> None:
    """Reader thread: each line (or ``_TOO_LONG``) onto ``queue``, then ``None`` at end of input; it waits while
    ``ahead`` is full."""
    def put(item: Any) -> None:
        if isinstance(item, bytes):
            ahead.reserve(len(item))
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: the server has stopped
            raise SystemExit from None

    try:
        while True:
            line = stdin.readline(max_line + 1)
            if not line:
                break
            if len(line) > max_line and not line.endswith(b"\n"):
                while (rest := stdin.readline(max_line)) and not rest.endswith(b"\n"):
                    pass
                put(_TOO_LONG)
                if not rest:
                    break
                continue
            put(line)
    except (OSError, ValueError):  # stdin closed under us
        pass
    except SystemExit:
        return
    put(None)


async def serve_stdio(methods: Mapping[str, Any], stdin: BinaryIO, stdout: BinaryIO,
                      max_line: int = DEFAULT_MAX_LINE) -> None:
    """Answer each non-blank line of ``stdin`` (binary) on ``stdout`` (binary) until end of input; a line
    longer than ``max_line`` bytes is answered with a parse error (``-32700``).

    Cancel the task to stop (a signal handler does): the step in flight is abandoned and answered
    with a ``-32003`` error (``server shutting down``) before the task ends cancelled.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    ahead = _ReadAhead(MAX_PIPELINED)
    threading.Thread(target=_read_lines, args=(stdin, max_line, loop, queue, ahead), name="ecp-stdin",
                     daemon=True).start()
    first = True  # the first line: a byte-order mark at its start is ignored (see jsonrpc.parse)
    while (line := await queue.get()) is not None:
        at_start, first = first, False
        if isinstance(line, bytes):
            ahead.release(len(line))
        if line is _TOO_LONG:
            response: dict | list | None = error_response(None, PARSE_ERROR,
                                                   f"parse error: message longer than {max_line} bytes")
        elif not (without_bom(line) if at_start else line).strip():
            continue
        else:
            request = parse(line, at_start=at_start)
            if isinstance(request, list):  # a batch: one line with the array of its answers
                done: list = []
                try:
                    await dispatch_batch(request, methods, done)
                except asyncio.CancelledError:
                    if (answers := batch_response(request, done)) is not None:
                        with contextlib.suppress(OSError, ValueError):
                            _write(stdout, answers)
                    raise
                response = batch_response(request, done)
            elif not isinstance(request, Request):
                response = request
            else:
                try:
                    response = await dispatch(request, methods)
                except asyncio.CancelledError:
                    if not request.notification:
                        with contextlib.suppress(OSError, ValueError):  # the client may be gone already
                            _write(stdout, error_response(request.id, SHUTTING_DOWN, SHUTDOWN_MESSAGE))
                    raise
        if response is not None:
            _write(stdout, response)


def _write(stdout: BinaryIO, response: Mapping[str, Any] | list[Mapping[str, Any]]) -> None:
    stdout.write(encode(response) + b"\n")
    stdout.flush()
