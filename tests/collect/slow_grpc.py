"""A hostile OTLP/gRPC sender, as its own process: ``python slow_grpc.py HOST:PORT N``.

Opens ``N`` gRPC connections that each start a ``TraceService/Export`` call and never send its message, and
``N`` TCP connections that never speak at all; says ``started`` on standard error, and holds them until a line
arrives on standard input (or 120 s pass). Then it prints one JSON object: ``{"codes": [how each call ended:
a status code name, or "still running"], "sockets_closed": how many of the TCP connections the server closed}``.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time

import grpc

_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (what it sent before, its preface, is read and dropped)."""
    sock.settimeout(0.5)
    try:
        while sock.recv(4096):
            pass
        return True
    except OSError:  # still open (timed out), or reset: reset is closed too
        return not isinstance(sys.exc_info()[1], socket.timeout)


def main() -> None:
    target, n = sys.argv[1], int(sys.argv[2])
    never = threading.Event()

    def no_message():  # the request stream: nothing until the end of this process
        never.wait()
        yield b""

    calls = []
    for _ in range(n):  # a channel each: its own connection, not one shared subchannel
        channel = grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        grpc.channel_ready_future(channel).result(timeout=60)
        calls.append(channel.stream_unary(_METHOD).future(no_message()))
    host, port = target.rsplit(":", 1)
    sockets = [socket.create_connection((host, int(port)), timeout=60) for _ in range(n)]
    time.sleep(0.5)  # the calls' headers reach the server (a worker takes each up) before "started"
    print("started", file=sys.stderr, flush=True)
    select.select([sys.stdin], [], [], 120)
    codes = []
    for call in calls:
        if not call.done():
            codes.append("still running")
        elif call.exception() is not None:
            codes.append(call.code().name)
        else:
            codes.append("OK")
    print(json.dumps({"codes": codes, "sockets_closed": sum(map(_closed, sockets))}), flush=True)
    never.set()


if __name__ == "__main__":
    main()
