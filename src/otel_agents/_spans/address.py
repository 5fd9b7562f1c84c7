"""``server.address`` and ``server.port`` (OTel semconv) of a URL an instrumentor reads off user data (an A2A
card's interface, a push webhook): what the URL gives, never an exception.

urllib's ``SplitResult.port`` raises ``ValueError`` for a port that is not one (``host:99999``, ``host:x``) and
``urlsplit`` for a malformed IP literal (``http://[::1``): read unguarded, either lost the whole span.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import urlsplit

from ..semconv import attributes as A
from .probes import attr

SCHEME_PORTS = {"http": 80, "https": 443}


def server_attributes(url: Any, *, scheme_port: bool = False) -> dict[str, Any]:
    """``{server.address: host, server.port: port}`` of ``url``, each only when the URL gives it.

    Args:
        url: the URL: a string, or a URL object with ``scheme`` and ``host`` (an ``httpx.URL``: a provider
            client's ``base_url``), read as its text; anything else gives ``{}``.
        scheme_port: with no port in the URL, the scheme's default (http 80, https 443: where a client connects).

    A port that is not a port (out of 0-65535, not a number) is left out, not guessed (nor the scheme's default
    put in its place); a URL that cannot be split gives ``{}``. Never raises.
    """
    global _last_url
    try:
        if not isinstance(url, str):
            last = _last_url
            if url is last[0]:  # a provider client's base_url, the same object on each request: its text kept
                url = last[1]
            elif hasattr(url, "scheme") and hasattr(url, "host"):
                text = str(url)
                if type(url).__module__.partition(".")[0] in _IMMUTABLE_URLS:
                    _last_url = (url, text)
                url = text
            else:
                return {}
        text = str.__str__(url)  # its text (a str subclass's own methods are not called)
        return dict(_split(text, scheme_port) if len(text) <= _CACHED_URL else _split.__wrapped__(text, scheme_port))
    except Exception:  # noqa: BLE001 - a malformed URL (ValueError), a URL object whose str() raises
        return {}


_IMMUTABLE_URLS = ("httpx", "httpx2")  # URL classes whose text never changes (httpx.URL has no setter)
_last_url: tuple[Any, str] = (object(), "")  # the last such URL object read, and its text (one pair: bounded)
_CACHED_URL = 2048  # a longer URL is split each time (the cache holds at most 64)


@functools.lru_cache(maxsize=64)  # a client's base URL, split on every model request: once (~5k instructions)
def _split(url: str, scheme_port: bool) -> tuple[tuple[str, Any], ...]:
    """:func:`server_attributes` of the text ``url``, as pairs (immutable: the cache shares them). Raises
    ``ValueError`` for a URL ``urlsplit`` cannot split (not cached)."""
    parts = urlsplit(url)
    host = parts.hostname
    attrs: list[tuple[str, Any]] = [(A.SERVER_ADDRESS, host)] if host else []
    try:
        port = parts.port
    except ValueError:
        return tuple(attrs)
    if port is None and scheme_port:
        port = SCHEME_PORTS.get(parts.scheme)
    if port is not None:
        attrs.append((A.SERVER_PORT, port))
    return tuple(attrs)


def configured_url(obj: Any, names: tuple[str, ...]) -> str | None:
    """The first of ``obj``'s attributes ``names`` that holds a non-empty string: the base URL a model object was
    given (``base_url``, ``api_base``), for :meth:`~.span.SemanticSpan.set_server`; ``None`` when none does (its
    provider's default endpoint, which such objects leave to their SDK client). Read with :func:`~.probes.attr`:
    a pydantic model without the attribute (a ``BaseLlm`` of ADK's or a LlamaIndex LLM without ``base_url``) costs
    no raised ``AttributeError`` on each model span (~35,000 instructions a name), and a hostile one no exception."""
    for name in names:
        value = attr(obj, name)
        if isinstance(value, str) and value:
            return value
    return None
