"""JSON-RPC error handling of the ECP server: bad input gets the standard code, the server keeps serving."""

from __future__ import annotations

import asyncio
import json

import pytest

from otel_agents.serve import jsonrpc
from otel_agents.serve.jsonrpc import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
                                       PARSE_ERROR, RPCError)


def handle(raw, methods):
    return asyncio.run(jsonrpc.handle(raw, methods))


def _methods():
    def step(params):
        if not isinstance(params.get("input"), str):
            raise RPCError(INVALID_PARAMS, 'invalid params: "input" must be a string')
        return {"status": "done", "public_output": params["input"]}

    def boom(params):
        raise RuntimeError("bug")

    return {"agent/step": step, "boom": boom}


@pytest.mark.parametrize("raw,code", [
    ("{not json", PARSE_ERROR),
    ("[]", INVALID_REQUEST),
    ('"just a string"', INVALID_REQUEST),
    ('{"jsonrpc":"1.0","id":1,"method":"agent/step"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":1}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":{"x":1},"method":"agent/step"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":1,"method":"agent/nope"}', METHOD_NOT_FOUND),
    ('{"jsonrpc":"2.0","id":1,"method":"agent/step","params":[1]}', INVALID_PARAMS),
    ('{"jsonrpc":"2.0","id":1,"method":"agent/step","params":{"input":5}}', INVALID_PARAMS),
    ('{"jsonrpc":"2.0","id":1,"method":"boom"}', INTERNAL_ERROR),
])
def test_error_codes_then_next_request_succeeds(raw: str, code: int) -> None:
    methods = _methods()
    err = handle(raw, methods)
    assert err is not None and err["error"]["code"] == code and err["jsonrpc"] == "2.0"
    assert isinstance(err["error"]["message"], str) and err["error"]["message"]
    ok = handle(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "agent/step", "params": {"input": "hi"}}), methods)
    assert ok == {"jsonrpc": "2.0", "id": 7, "result": {"status": "done", "public_output": "hi"}}


def test_notifications_get_no_response() -> None:
    assert handle('{"jsonrpc":"2.0","method":"agent/step","params":{"input":"x"}}', _methods()) is None
    assert handle('{"jsonrpc":"2.0","method":"agent/unknown"}', _methods()) is None


def test_id_type_is_echoed() -> None:
    for id_ in (1, "abc", 1717171717171):
        resp = handle(json.dumps({"jsonrpc": "2.0", "id": id_, "method": "agent/step", "params": {"input": "x"}}),
                      _methods())
        assert resp["id"] == id_ and type(resp["id"]) is type(id_)


def test_an_unknown_method_is_quoted_bounded_and_redacted() -> None:
    """The -32601 message quotes the method: a secret in it is redacted and a 100 kB name is cut to an excerpt
    (before, both were echoed whole)."""
    key = "sk-proj-" + "a1b2c3d4" * 4
    for method, kept in ((f"Bearer {key}", "Bearer [REDACTED]"), (key, "[REDACTED]"), ("m" * 100_000, "mmm")):
        err = handle(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method}), _methods())
        message = err["error"]["message"]
        assert err["error"]["code"] == METHOD_NOT_FOUND and kept in message, message
        assert "a1b2c3d4" not in message and len(message) < 100, message


def test_a_batch_is_answered_member_by_member_in_order() -> None:
    """JSON-RPC 2.0 section 6: an array of requests gets the array of their responses (notifications none), each
    member checked as a message of its own; an array of notifications only gets nothing (before, any batch was
    refused with one -32600)."""
    batch = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "agent/step", "params": {"input": "a"}},
                        {"jsonrpc": "2.0", "method": "agent/step", "params": {"input": "b"}}, 5,
                        {"jsonrpc": "2.0", "id": "x", "method": "agent/nope"},
                        {"jsonrpc": "2.0", "id": 3, "method": "boom"}])
    answers = handle(batch, _methods())
    assert answers[0] == {"jsonrpc": "2.0", "id": 1, "result": {"status": "done", "public_output": "a"}}
    assert [(a["id"], a["error"]["code"]) for a in answers[1:]] == [(None, INVALID_REQUEST), ("x", METHOD_NOT_FOUND),
                                                                    (3, INTERNAL_ERROR)]
    assert json.loads(jsonrpc.encode(answers)) == answers
    assert handle('[{"jsonrpc":"2.0","method":"agent/step","params":{"input":"x"}}]', _methods()) is None
    nan = handle('[{"jsonrpc":"2.0","id":1,"method":"agent/step","params":{"input":"x"}},'
                 '{"jsonrpc":"2.0","id":2,"method":"agent/step","params":{"input":"x","t":[[NaN]]}}]', _methods())
    assert "result" in nan[0] and nan[1]["error"] == {"code": INVALID_REQUEST,
                                                        "message": "invalid request: NaN is not a JSON value"}
