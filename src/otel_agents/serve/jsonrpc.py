"""JSON-RPC 2.0 message handling for the ECP server, transport-independent.

:func:`handle` takes one raw message (a line on stdio, a body over HTTP) and
returns the response object, or ``None`` for a notification. Bad input never
raises: it becomes an error response with the standard code (JSON-RPC 2.0
spec, section 5.1) and the server keeps serving.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Callable, Mapping

logger = logging.getLogger("otel_agents.serve")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AGENT_ERROR = -32000  # implementation-defined server error: the agent under test raised


class RPCError(Exception):
    """An error to answer with: ``code`` (int), ``message`` (str), optional ``data``."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


Method = Callable[[Mapping[str, Any]], Any]


def error_response(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response object."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def handle(raw: str | bytes, methods: Mapping[str, Method]) -> dict[str, Any] | None:
    """Handle one JSON-RPC message.

    Args:
        raw: the message text.
        methods: method name → ``fn(params) -> result``; ``fn`` raises
            :class:`RPCError` for an answerable error.

    Returns:
        The response object, or ``None`` when the message was a valid notification
        (no ``id``). Batches are answered with one ``-32600`` error: ECP exchanges
        one object per message.
    """
    try:
        msg = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return error_response(None, PARSE_ERROR, f"parse error: {exc}")
    if isinstance(msg, list):
        return error_response(None, INVALID_REQUEST, "invalid request: batches are not supported by ECP; "
                              "send one JSON-RPC object per message")
    if not isinstance(msg, dict):
        return error_response(None, INVALID_REQUEST, "invalid request: expected a JSON object")
    id_ = msg.get("id")
    is_notification = "id" not in msg
    if msg.get("jsonrpc") != "2.0":
        return error_response(id_ if _valid_id(id_) else None, INVALID_REQUEST,
                              'invalid request: "jsonrpc" must be "2.0"')
    if not _valid_id(id_):
        return error_response(None, INVALID_REQUEST, 'invalid request: "id" must be a string, a number or null')
    method = msg.get("method")
    if not isinstance(method, str) or not method:
        return error_response(id_, INVALID_REQUEST, 'invalid request: "method" must be a non-empty string')
    params = msg.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return None if is_notification else error_response(
            id_, INVALID_PARAMS, 'invalid params: "params" must be an object')
    fn = methods.get(method)
    if fn is None:
        return None if is_notification else error_response(id_, METHOD_NOT_FOUND, f"method not found: {method}")
    try:
        result = fn(params)
    except RPCError as exc:
        return None if is_notification else error_response(id_, exc.code, exc.message, exc.data)
    except Exception as exc:  # noqa: BLE001 - never a dead server
        logger.exception("internal error in %s", method)
        return None if is_notification else error_response(id_, INTERNAL_ERROR, f"internal error: {exc!r}")
    return None if is_notification else {"jsonrpc": "2.0", "id": id_, "result": result}


def _valid_id(id_: Any) -> bool:
    return id_ is None or (isinstance(id_, (str, int, float)) and not isinstance(id_, bool))
