"""MCP sampling: the model call a server asks its client for (``sampling/createMessage``) as a ``model`` span.

A tool server that needs a model asks the client's (``ctx.session.create_message``); the client answers with
its ``sampling_callback``. That model call belongs to the tool call that asked for it, so:

* server side, the request carries the current context (the server's ``tools/call`` span while the tool
  runs) in ``params._meta``, as every client request does (:meth:`~._client.ClientSide.send_request`);
* client side, the ``sampling_callback`` a ``ClientSession`` was given runs inside a ``model`` span of ours
  (``chat``, then ``chat {model}`` once the result names its model), whose parent is the context the request
  carried: the call's tool span, across processes too. The span has ``mcp.method.name`` and
  ``jsonrpc.request.id``, the request's parameters (``max_tokens``, ``temperature``, ``stop_sequences``),
  its messages and system prompt as input (content), the result's model as response model, its
  ``stopReason`` as finish reason (``endTurn`` → ``stop``, ``maxTokens`` → ``length``…) and its message as
  output. MCP reports no token usage: the span has none, unless the callback calls a provider client we
  instrument (``openai``, ``anthropic``), which then opens no span of its own and gives this one its
  response id and usage (one model span per request). A callback that raises, or answers with an
  ``ErrorData``, ends the span with ERROR.

Hooks: ``ClientSession.__init__``, which keeps the callback as ``_sampling_callback`` (mcp 1.x and 2.x): a
session made while instrumented gets it wrapped (the SDK's default callback, which refuses sampling, is left
alone); and where the server's requests reach the session — ``ClientSession._received_request`` (1.x),
``ClientSession.dispatch_input_request`` (2.x) — a session made before ``instrument()`` (or under an earlier
one) gets it wrapped when the server's first request arrives. After ``uninstrument()`` the wrapper only calls
through. On 2.x a server asks over a JSON-RPC connection (stdio, Streamable HTTP, ``mode="legacy"``); the
2026-07-28 envelope has no back-channel for it (the SDK refuses the request).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from ..._spans import ChatMessage, SemanticSpan, Telemetry, guard
from ...semconv import Kind, attributes as A
from . import _protocol as P

METHOD = "sampling/createMessage"


def stop_reason(reason: Any) -> str | None:
    """MCP's camelCase ``stopReason`` (``endTurn``, ``stopSequence``, ``maxTokens``, ``toolUse``) in the
    snake_case the span layer normalises (``end_turn`` → ``stop``…); other values as they are."""
    if not isinstance(reason, str) or not reason:
        return None
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", reason).lower()


def _text(content: Any) -> Any:
    """A sampling message's content: its text, or (an image, audio, a list of blocks) its JSON form."""
    if isinstance(content, list):
        return [_text(c) for c in content]
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text
    dump = getattr(content, "model_dump", None)
    return dump(mode="json", exclude_none=True) if dump is not None else str(content)


class SamplingSide:
    """Wraps the ``sampling_callback`` of each ``ClientSession`` made while instrumented."""

    def __init__(self, telemetry: Telemetry, propagate: bool | None, default: Callable[..., Any] | None):
        self.telemetry = telemetry
        self.propagate = propagate
        self.default = default
        self.active = True

    def init(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """Wrapper of ``ClientSession.__init__``."""
        result = wrapped(*args, **kwargs)
        self.install(instance)
        return result

    async def received(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """Wrapper of ``ClientSession._received_request``: a session made before ``instrument()``."""
        self.install(instance)
        return await wrapped(*args, **kwargs)

    def install(self, session: Any) -> None:
        """Wrap ``session``'s sampling callback, once (a wrapper of an earlier ``instrument()`` is replaced)."""
        with guard("mcp.sampling.install"):
            callback = getattr(session, "_sampling_callback", None)
            owner = getattr(callback, "_otel_agents", None)
            if owner is self or callback is None or callback is self.default:
                return
            if owner is not None:  # an earlier instrument()'s wrapper, inert now: wrap what it wrapped
                callback = callback.__wrapped__
            session._sampling_callback = self.traced(callback)

    def traced(self, callback: Callable[..., Any]) -> Callable[..., Any]:
        """``callback`` inside a model span (see the module docstring)."""

        async def sampling_callback(context: Any, params: Any) -> Any:
            span = None
            if self.active:
                with guard("mcp.sampling.start"):
                    span = self._start(context, params)
            if span is None:
                return await callback(context, params)
            try:
                with span.activate():  # a provider client called inside fills this span instead of its own
                    result = await callback(context, params)
            except BaseException as exc:
                span.end(error=exc)
                raise
            with guard("mcp.sampling.result"):
                self._result(span, result)
            span.end()
            return result

        sampling_callback._otel_agents = self  # type: ignore[attr-defined]
        sampling_callback.__wrapped__ = callback  # type: ignore[attr-defined]
        return sampling_callback

    def _start(self, context: Any, params: Any) -> SemanticSpan:
        parent = P.extracted_context(getattr(params, "meta", None)) if P.propagating(self.propagate) else None
        attrs = {A.MCP_METHOD_NAME: METHOD}
        request_id = getattr(context, "request_id", None)
        if isinstance(request_id, (int, str)):
            attrs[A.JSONRPC_REQUEST_ID] = str(request_id)
        span = self.telemetry.start_span(Kind.MODEL, None, parent=parent, operation="chat", attributes=attrs)
        with guard("mcp.sampling.request"):
            parameters = {"max_tokens": P.field(params, "max_tokens", "maxTokens"),
                          "temperature": P.field(params, "temperature"),
                          "stop_sequences": P.field(params, "stop_sequences", "stopSequences")}
            span.set_model(parameters={k: v for k, v in parameters.items() if v is not None})
            if span.records_content:
                messages = [ChatMessage(str(getattr(m, "role", "user")), _text(getattr(m, "content", None)))
                            for m in P.field(params, "messages") or ()]
                system = P.field(params, "system_prompt", "systemPrompt")
                span.set_messages(input=messages, system=[system] if system else None)
        return span

    @staticmethod
    def _result(span: SemanticSpan, result: Any) -> None:
        if type(result).__name__ == "ErrorData":  # the client refused or failed the request
            code = getattr(result, "code", None)
            span.set_error(str(code) if code is not None else "error", getattr(result, "message", None))
            return
        model = P.field(result, "model")
        if isinstance(model, str) and model:
            span.rename(model)
            span.set_model(response_model=model)
        reason = stop_reason(P.field(result, "stop_reason", "stopReason"))
        if span.records_content:
            span.set_messages(output=[ChatMessage("assistant", _text(P.field(result, "content")),
                                                  finish_reason=reason)])
        elif reason:
            span.set_finish_reasons([reason])
