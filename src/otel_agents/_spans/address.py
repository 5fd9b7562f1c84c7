"""``server.address`` and ``server.port`` (OTel semconv) of a URL an instrumentor reads off user data (an A2A
card's interface, a push webhook): what the URL gives, never an exception.

urllib's ``SplitResult.port`` raises ``ValueError`` for a port that is not one (``host:99999``, ``host:x``) and
``urlsplit`` for a malformed IP literal (``http://[::1``): read unguarded, either lost the whole span.
"""

from __future__ import annotations

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
    try:
        if not isinstance(url, str):
            if not (hasattr(url, "scheme") and hasattr(url, "host")):
                return {}
            url = str(url)
        parts = urlsplit(url)
        host = parts.hostname
    except Exception:  # noqa: BLE001 - a malformed URL (ValueError), a URL object whose str() raises
        return {}
    attrs: dict[str, Any] = {A.SERVER_ADDRESS: host} if host else {}
    try:
        port = parts.port
    except ValueError:
        return attrs
    if port is None and scheme_port:
        port = SCHEME_PORTS.get(parts.scheme)
    if port is not None:
        attrs[A.SERVER_PORT] = port
    return attrs


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
