"""Which Streamable HTTP transport a client session writes to, for ``mcp.session.id`` on the client.

``ClientSession`` does not know its transport; the Streamable HTTP transport's ``post_writer``
is handed the very send stream the session writes to, so a wrapper on it records
stream → transport (weakly: an entry lives as long as the stream), and the session's
``_write_stream`` finds the transport's ``session_id`` (set from the server's
``Mcp-Session-Id`` header after ``initialize``). ``mcp`` 2.x's send stream (a slotted
``ContextSendStream``) cannot be weakly referenced: the memory stream it wraps is the key then.
"""

from __future__ import annotations

import weakref
from typing import Any

_TRANSPORTS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _key(stream: Any) -> Any:
    """``stream``, or the stream it wraps (``mcp`` 2.x's ``ContextSendStream._inner``) when it has no weakref slot."""
    try:
        weakref.ref(stream)
    except TypeError:
        return getattr(stream, "_inner", None)
    return stream


def post_writer(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """Wrapper of ``StreamableHTTPTransport.post_writer(client, write_stream_reader,
    read_stream_writer, write_stream, ...)``: remember ``write_stream`` → transport."""
    try:
        stream = kwargs.get("write_stream", args[3] if len(args) > 3 else None)
        if stream is not None and (key := _key(stream)) is not None:
            _TRANSPORTS[key] = instance
    except Exception:  # noqa: BLE001 - a changed signature: no client-side session id, nothing else lost
        pass
    return wrapped(*args, **kwargs)


def session_id_for(session: Any) -> str | None:
    """The Streamable HTTP session id of a ``ClientSession``, or ``None`` (stdio, not known yet)."""
    if not _TRANSPORTS:  # no Streamable HTTP transport alive (stdio, in memory): nothing to look up
        return None
    # mcp 1.x: the session's own stream; 2.x: its dispatcher's
    stream = getattr(session, "_write_stream", None) or getattr(getattr(session, "_dispatcher", None), "_write_stream", None)
    try:
        transport = _TRANSPORTS.get(_key(stream)) if stream is not None else None
    except TypeError:  # not weak-referenceable: not one of ours
        return None
    value = getattr(transport, "session_id", None) if transport is not None else None
    return value if isinstance(value, str) and value else None
