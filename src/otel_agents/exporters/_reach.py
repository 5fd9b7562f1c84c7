"""Whether an endpoint can be reached, within a bound that includes the name lookup.

``socket.create_connection`` and urllib's ``timeout=`` bound each connect and read, not the name lookup before them:
``getaddrinfo`` blocks for as long as the resolver takes (a resolver that does not answer held ``doctor``,
``otel-agents export`` and ``ecp annotate`` for its own retries, 30 s and more, whatever their timeout). The lookup
runs here in a daemon thread, waited for at most the bound, then abandoned (the process does not wait for it). A
name whose lookup is still running is not looked up again: a caller waits on that one (a sender asking before
each request, ``ecp collect --forward``, would otherwise leave a thread behind per request while the resolver
does not answer).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

BOUND = 2.0
"""Seconds an endpoint gets to be looked up (``doctor``: looked up and connected to), in all."""


_running: dict[tuple[str, int], tuple[threading.Thread, list[Any]]] = {}  # lookups not finished: (thread, result)
_running_lock = threading.Lock()


def _run(key: tuple[str, int]) -> None:
    """In a lookup's thread: its result (addresses, or the error) into its list, then no longer running."""
    found = _running[key][1]
    try:
        found.append(socket.getaddrinfo(*key, type=socket.SOCK_STREAM))
    except OSError as exc:  # socket.gaierror: no such name, no resolver
        found.append(exc)
    except Exception as exc:  # noqa: BLE001 - an IDNA error (UnicodeError) and the like: told, not raised
        found.append(OSError(str(exc)))
    finally:
        with _running_lock:
            del _running[key]


def lookup(host: str, port: int, timeout: float) -> list[Any] | str:
    """``socket.getaddrinfo(host, port)`` (stream sockets) within ``timeout`` seconds: its addresses, or why there
    are none (``"the name lookup did not finish within 2 s"``, ``"name lookup failed: …"``). Never raises."""
    key = (host, port)
    with _running_lock:
        running = _running.get(key)
        if running is None:
            running = _running[key] = (threading.Thread(target=_run, args=(key,), name="otel-agents-lookup",
                                                        daemon=True), [])
            running[0].start()
    thread, found = running
    thread.join(timeout)
    if not found:
        return f"the name lookup did not finish within {timeout:g} s"
    if isinstance(found[0], OSError):
        return f"name lookup failed: {found[0].strerror or found[0]}"
    return found[0]


def connect_problem(host: str, port: int, timeout: float) -> str | None:
    """Why no TCP connection to ``host:port`` opened within ``timeout`` seconds in all, name lookup included
    (:func:`lookup`), or ``None`` when one did. Each address gets what is left after the ones before it."""
    deadline = time.monotonic() + timeout
    addresses = lookup(host, port, timeout)
    if isinstance(addresses, str):
        return addresses
    error: OSError | None = None
    for family, kind, proto, _, address in addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(left)
            sock.connect(address)
            return None
        except OSError as exc:
            error = exc
        finally:
            sock.close()
    if error is None or isinstance(error, socket.timeout):
        return f"no answer within {timeout:g} s"
    return str(error.strerror or error)


def lookup_problem(url: str, timeout: float = BOUND) -> str | None:
    """Why the host of http(s) ``url`` could not be looked up within ``timeout`` seconds (``"HOST:PORT: the name
    lookup did not finish within 2 s"``), or ``None`` when it was, or ``url`` names no host. For a sender whose own
    timeout does not cover the lookup (urllib, the OTLP/HTTP exporter's requests): asked once before it sends.
    An IP address is not looked up (no resolver is asked for one): ``None`` at once, no thread started."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a malformed URL: the sender's own check says so
        return None
    if not host or _is_address(host):
        return None
    found = lookup(host, port, timeout)
    return f"{host}:{port}: {found}" if isinstance(found, str) else None


def _is_address(host: str) -> bool:
    """Whether ``host`` (a URL's hostname: an IPv6 address without its brackets) is an IP address, not a name."""
    try:
        ipaddress.ip_address(host.partition("%")[0])  # an IPv6 zone (fe80::1%eth0) is no part of the address
    except ValueError:
        return False
    return True


__all__ = ["BOUND", "connect_problem", "lookup", "lookup_problem"]
