"""JSON-RPC 2.0 message handling for the ECP server, transport-independent.

:func:`parse` turns one raw message (a line on stdio, a body over HTTP) into a
:class:`Request` or an error response; :func:`dispatch` runs a request against
the methods; :func:`encode` writes a response as strict JSON. :func:`handle`
does all three. Bad input never raises: it becomes an error response with the
standard code (JSON-RPC 2.0 spec, section 5.1) and the server keeps serving.

What counts as bad input:

* not UTF-8, not JSON (a UTF-8 byte-order mark included, except at the start of the input: the body of an HTTP
  request, the first line on stdio, where it is ignored as RFC 8259 section 8.1 allows and ``otel-agents fold``
  does at the start of a file), nested deeper than the parser's recursion limit, a number
  too large for a float (``1e400``) or an integer longer than Python's
  4300-digit limit: ``-32700`` parse error, ``id: null``;
* the non-JSON constants ``NaN``/``Infinity``, an ``id`` that is not a string,
  number or null, a missing ``"jsonrpc": "2.0"`` or ``method``, an empty array:
  ``-32600`` invalid request, with ``id: null`` when the id itself is the problem.

A batch (JSON-RPC 2.0 section 6: a non-empty array of requests) is answered with
an array holding one response per member that is not a notification, in order
(each member is checked and run as a message of its own would be, one after the
other); a batch of notifications only is answered with nothing.

Every response is strict JSON (RFC 8259: no ``NaN``, ASCII with ``\\uXXXX``
escapes, so lone surrogates an agent returns still travel as valid UTF-8).
"""

from __future__ import annotations

import inspect
import json
import logging
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .._spans.encoding import BOM_NOT_AT_START, starts_with_bom, without_bom
from .._spans.redaction import excerpt

logger = logging.getLogger("otel_agents.serve")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AGENT_ERROR = -32000  # implementation-defined server error: the agent under test raised
STEP_TIMEOUT = -32001  # the agent did not answer within --step-timeout
SERVER_BUSY = -32002  # no session could be created: every session is busy
SHUTTING_DOWN = -32003  # the server stopped (SIGTERM/SIGINT) before the request was answered
SHUTDOWN_MESSAGE = "server shutting down: the request was abandoned before it finished"


class RPCError(Exception):
    """An error to answer with: ``code`` (int), ``message`` (str), optional ``data``."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


Method = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Request:
    """A valid JSON-RPC request: ``id`` is absent (``notification``) or a string, finite number or null."""

    id: Any
    method: str
    params: Mapping[str, Any] | None  # None: "params" was neither an object nor absent
    notification: bool


class _NonFinite:
    """Stands for a ``NaN``/``Infinity`` literal while parsing (never a value an agent sees)."""

    def __init__(self, name: str) -> None:
        self.name = name


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]!r} is out of range for a double")
    return value


def error_response(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response object."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def parse(raw: str | bytes, *, at_start: bool = True) -> Request | dict[str, Any] | list[Request | dict[str, Any]]:
    """Parse and validate one message: a :class:`Request`, or the error response to send; for a batch, a list
    with either for each member (:func:`dispatch_batch` runs it). ``at_start``: the message starts its input (an
    HTTP body, the first line on stdio), where a UTF-8 byte-order mark is ignored; elsewhere it is a parse error
    that says so."""
    if at_start:
        raw = without_bom(raw)
    elif starts_with_bom(raw):
        return error_response(None, PARSE_ERROR, f"parse error: {BOM_NOT_AT_START}")
    try:
        text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
        non_finite: list[str] = []
        msg = json.loads(text, parse_float=_finite_float,
                         parse_constant=lambda name: (non_finite.append(name), _NonFinite(name))[1])
    except RecursionError:
        return error_response(None, PARSE_ERROR, "parse error: nested too deeply")
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError and int/float limits are ValueErrors
        return error_response(None, PARSE_ERROR, f"parse error: {str(exc)[:200]}")
    if isinstance(msg, list):
        if not msg:
            return error_response(None, INVALID_REQUEST, "invalid request: an empty batch")
        return [_request(m, _non_finite_in(m) if non_finite else None) for m in msg]
    return _request(msg, non_finite[0] if non_finite else None)


def _non_finite_in(value: Any) -> str | None:
    """The first ``NaN``/``Infinity`` literal inside a batch member (iterative: members nest as deep as
    the parser allows)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _NonFinite):
            return item.name
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _request(msg: Any, non_finite: str | None) -> Request | dict[str, Any]:
    """One message (or batch member) checked: a :class:`Request` or the error response."""
    if not isinstance(msg, dict):
        return error_response(None, INVALID_REQUEST, "invalid request: expected a JSON object")
    id_ = msg.get("id")
    if not _valid_id(id_):
        return error_response(None, INVALID_REQUEST,
                              'invalid request: "id" must be a string, a finite number or null')
    if non_finite:
        return error_response(id_, INVALID_REQUEST, f"invalid request: {non_finite} is not a JSON value")
    if msg.get("jsonrpc") != "2.0":
        return error_response(id_, INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"')
    method = msg.get("method")
    if not isinstance(method, str) or not method:
        return error_response(id_, INVALID_REQUEST, 'invalid request: "method" must be a non-empty string')
    params = msg.get("params", {})
    if params is None:
        params = {}
    return Request(id_, method, params if isinstance(params, dict) else None, "id" not in msg)


async def dispatch(request: Request, methods: Mapping[str, Method]) -> dict[str, Any] | None:
    """Run ``request``: the response object, or ``None`` for a notification.

    A method is ``fn(params)``, sync or async; it raises :class:`RPCError` for an
    answerable error. Any other exception is ``-32603`` (logged with its traceback).
    """
    def answer(response: dict[str, Any]) -> dict[str, Any] | None:
        return None if request.notification else response

    if request.params is None:
        return answer(error_response(request.id, INVALID_PARAMS, 'invalid params: "params" must be an object'))
    fn = methods.get(request.method)
    if fn is None:
        return answer(error_response(request.id, METHOD_NOT_FOUND, f"method not found: {excerpt(request.method)}"))
    try:
        result = fn(request.params)
        if inspect.isawaitable(result):
            result = await result
    except RPCError as exc:
        return answer(error_response(request.id, exc.code, exc.message, exc.data))
    except Exception as exc:  # noqa: BLE001 - never a dead server
        logger.exception("internal error in %s", request.method)
        return answer(error_response(request.id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}"))
    return answer({"jsonrpc": "2.0", "id": request.id, "result": result})


async def dispatch_batch(members: list[Request | dict[str, Any]], methods: Mapping[str, Method],
                         done: list[dict[str, Any] | None]) -> None:
    """Run a batch's members in order, appending to ``done`` each one's response (its error as parsed, or
    ``None`` for a notification); if the task is cancelled, ``done`` holds those finished
    (:func:`batch_response` answers the rest)."""
    for member in members:
        done.append(await dispatch(member, methods) if isinstance(member, Request) else member)


def batch_response(members: list[Request | dict[str, Any]],
                   done: list[dict[str, Any] | None]) -> list[dict[str, Any]] | None:
    """The answer to a batch: the responses in ``done``, then for each member not run (the server is
    shutting down) its parse error or a ``-32003``; ``None`` when there is nothing to answer (JSON-RPC 2.0
    section 6: no empty array)."""
    answers = [r for r in done if r is not None]
    for member in members[len(done):]:
        if not isinstance(member, Request):
            answers.append(member)
        elif not member.notification:
            answers.append(error_response(member.id, SHUTTING_DOWN, SHUTDOWN_MESSAGE))
    return answers or None


async def handle(raw: str | bytes, methods: Mapping[str, Method]) -> dict[str, Any] | list[dict[str, Any]] | None:
    """Parse and dispatch one message: the response object (a list for a batch), or ``None`` when there is
    nothing to answer (a notification)."""
    request = parse(raw)
    if isinstance(request, list):
        done: list[dict[str, Any] | None] = []
        await dispatch_batch(request, methods, done)
        return batch_response(request, done)
    if not isinstance(request, Request):
        return request
    return await dispatch(request, methods)


def encode(response: Mapping[str, Any] | list[Mapping[str, Any]]) -> bytes:
    """``response`` (or a batch's list of responses) as strict, ASCII JSON (UTF-8 bytes, no trailing newline).

    A result that is not strict JSON (``NaN``, a non-serialisable object) becomes a
    ``-32603`` error for the same id rather than invalid output.
    """
    if isinstance(response, list):
        return b"[" + b",".join(encode(r) for r in response) + b"]"
    try:
        return json.dumps(response, allow_nan=False, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    except (ValueError, TypeError, RecursionError) as exc:
        logger.error("response to id %r is not strict JSON: %s", response.get("id"), exc)
        fallback = error_response(response.get("id"), INTERNAL_ERROR,
                                  "internal error: the response is not strict JSON")
        return json.dumps(fallback, allow_nan=False, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _valid_id(id_: Any) -> bool:
    if isinstance(id_, float):
        return math.isfinite(id_)
    return id_ is None or (isinstance(id_, (str, int)) and not isinstance(id_, bool))
