"""Refuse every network connection except loopback (the CrewAI tests must never reach the network).

:func:`block_network` patches ``socket.getaddrinfo`` and ``socket.socket.connect``
/ ``connect_ex``; a refused attempt raises ``OSError`` at once (as an offline
machine would) and is recorded in the returned list.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any, Callable


def _is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def block_network(setattr_: Callable[[Any, str, Any], None] = setattr) -> list[str]:
    """Install the block (``setattr_`` may be ``monkeypatch.setattr``); returns the refused hosts."""
    refused: list[str] = []
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def refuse(host: Any) -> None:
        refused.append(str(host))
        raise OSError(f"network access blocked in tests: {host}")

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback(host):
            refuse(host)
        return real_getaddrinfo(host, *args, **kwargs)

    def is_remote(sock: socket.socket, address: Any) -> bool:
        return sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0])

    def connect(self: socket.socket, address: Any) -> Any:
        if is_remote(self, address):
            refuse(address[0])
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if is_remote(self, address):
            refuse(address[0])
        return real_connect_ex(self, address)

    setattr_(socket, "getaddrinfo", getaddrinfo)
    setattr_(socket.socket, "connect", connect)
    setattr_(socket.socket, "connect_ex", connect_ex)
    return refused
