"""Which Streamable HTTP transport a client session writes to, for ``mcp.session.id`` on the client.

``ClientSession`` does not know its transport; the Streamable HTTP transport's ``post_writer``
is handed the very send stream the session writes to, so a wrapper on it records
stream → transport (weakly: an entry lives as long as the stream), and the session's
``_write_stream`` finds the transport's ``session_id`` (set from the server's
``Mcp-Session-Id`` header after ``initialize``).
"""

from __future__ import annotations

import weakref
from typing import Any

_TRANSPORTS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def post_writer(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """Wrapper of ``StreamableHTTPTransport.post_writer(client, write_stream_reader,
    read_stream_writer, write_stream, ...)``: remember ``write_stream`` → transport."""
    try:
        stream = kwargs.get("write_stream", args[3] if len(args) > 3 else None)
        if stream is not None:
            _TRANSPORTS[stream] = instance
    except Exception:  # noqa: BLE001 - a changed signature: no client-side session id, nothing else lost
        pass
    return wrapped(*args, **kwargs)


def session_id_for(session: Any) -> str | None:
    """The Streamable HTTP session id of a ``ClientSession``, or ``None`` (stdio, not known yet)."""
    try:
        transport = _TRANSPORTS.get(getattr(session, "_write_stream", None))
    except TypeError:  # not weak-referenceable: not one of ours
        return None
    value = getattr(transport, "session_id", None) if transport is not None else None
    return value if isinstance(value, str) and value else None
