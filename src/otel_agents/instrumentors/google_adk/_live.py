"""Model spans of a live run (``Runner.run_live``): one per turn of the live connection.

In live mode ADK calls no ``before_model``/``after_model`` plugin callback per request (only to screen
user content and output transcriptions), so the plugin alone sees no model request. Every ``BaseLlm``
subclass's ``connect()`` is wrapped instead (:class:`~.._hierarchy.HierarchyPatch`): the connection it
yields is handed to ADK inside :class:`LiveConnection`, which sees what is really sent and received. A
turn (one model request) starts with the first content sent after the last turn (``send_history``,
``send_content``: the user's message, the function responses) or, for audio sent with
``send_realtime``, with the first response; it ends at ``turn_complete``/``interrupted``, at the next
content sent while the model is answering (a function call: Gemini completes no turn there), or when the
connection closes (then marked ``otel_agents.stream.abandoned`` if the model was still answering; ERROR with
the exception when the connection raised: a request that failed). ADK's ``before_model`` plugin callback only
screens the user's content in live mode: it opens no request there. Usage
is the last ``usage_metadata`` of the turn (Gemini Live sends it in a message of its own); the finish reason
the one a response carried, none when none did. The agent whose connection it is: the live agent whose
``before_agent_callback`` ran last in this task (:data:`LIVE_AGENT`).
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any

from ..._spans import guard
from ._runs import Invocation, ModelCall

LIVE_AGENT: ContextVar["tuple[Any, Invocation, str] | None"] = ContextVar("otel_agents_adk_live_agent", default=None)
"""``(hooks, invocation, agent name)`` of the live agent running in this task (set by ``before_agent``; ADK opens
the agent's live connection in the task that ran its callbacks)."""


def live_key(agent: str) -> str:
    """The key of an agent's live turn in ``Invocation.models`` (apart from a screening callback's request)."""
    return f"{agent}\x00live"


class LiveConnection:
    """A ``BaseLlmConnection`` as ADK uses it, forwarding everything, opening a model span per turn."""

    def __init__(self, connection: Any, hooks: Any, inv: Invocation, agent: str, request: Any):
        self._connection = connection
        self._hooks = hooks
        self._inv = inv
        self._agent = agent
        self._request = request  # the connect request: model, system instruction, tools

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)

    # -- sending ---------------------------------------------------------------------------------
    def _sent(self, contents: list) -> None:
        with guard("google_adk.live.sent"):
            key = live_key(self._agent)
            call = self._inv.models.get(key)
            if call is not None and not call.unanswered:  # the model was answering: its turn is over
                self._end(call)
                call = None
            if call is None:
                self._open(list(contents))
            else:
                call.request = call.request.model_copy(update={"contents": [*call.request.contents, *contents]})

    async def send_history(self, history: list) -> None:
        self._sent(history)
        return await self._connection.send_history(history)

    async def send_content(self, content: Any) -> None:
        self._sent([content])
        return await self._connection.send_content(content)

    async def _send_content(self, content: Any, *, partial: bool = False) -> None:
        self._sent([content])
        return await self._connection._send_content(content, partial=partial)

    async def send_realtime(self, blob: Any) -> None:
        return await self._connection.send_realtime(blob)

    async def close(self) -> None:
        return await self._connection.close()

    # -- receiving -------------------------------------------------------------------------------
    async def receive(self) -> Any:
        agen = self._connection.receive()
        try:
            async for response in agen:
                self._received(response)
                yield response
        finally:
            close = getattr(agen, "aclose", None)
            if close is not None:
                await close()

    def _received(self, response: Any) -> None:
        with guard("google_adk.live.received"):
            key = live_key(self._agent)
            call = self._inv.models.get(key)
            carries = bool(getattr(getattr(response, "content", None), "parts", None)) or \
                getattr(response, "usage_metadata", None) is not None or getattr(response, "error_code", None)
            if call is None and not carries:
                return  # a turn_complete, a session resumption update, with no turn open
            if call is None:
                call = self._open([])
            call.last = response
            if getattr(response, "usage_metadata", None) is not None:
                call.usage = response.usage_metadata
            if getattr(response, "content", None) is not None and getattr(response.content, "parts", None):
                if getattr(response, "partial", None):
                    call.add_partial(response)
                else:
                    call.final = response
            if getattr(response, "turn_complete", None) or getattr(response, "interrupted", None):
                self._end(call)

    # -- turns -----------------------------------------------------------------------------------
    def _open(self, contents: list) -> ModelCall:
        request = self._request.model_copy(update={"contents": contents})
        call = self._hooks.model_call(self._inv, self._agent, request, time.time_ns())
        self._inv.models[live_key(self._agent)] = call
        return call

    def _end(self, call: ModelCall, abandoned: bool = False, error: BaseException | None = None) -> None:
        if self._inv.models.get(live_key(self._agent)) is call:
            self._inv.models.pop(live_key(self._agent), None)
        if call.unanswered and error is None:
            return  # sent, never answered before the connection went: no response to record
        if abandoned:
            call.span.mark_abandoned()
        self._hooks.end_model(call, self._inv, error)

    def closed(self, error: BaseException | None = None) -> None:
        """The connection's context exited: a turn the model was still answering was left, or failed with
        ``error`` (the connection raised: the request failed; a cancellation or the caller leaving: abandoned)."""
        with guard("google_adk.live.closed"):
            call = self._inv.models.get(live_key(self._agent))
            if call is not None:
                last = call.last
                done = last is not None and (getattr(last, "turn_complete", None) or getattr(last, "interrupted", None))
                failed = error if isinstance(error, Exception) else None
                self._end(call, abandoned=not done and failed is None, error=failed)


class LiveConnect:
    """The async context manager ``connect()`` returns, giving ADK a :class:`LiveConnection`."""

    def __init__(self, manager: Any, request: Any):
        self._manager = manager
        self._request = request
        self._live: LiveConnection | None = None

    async def __aenter__(self) -> Any:
        connection = await self._manager.__aenter__()
        with guard("google_adk.live.connect"):
            live = LIVE_AGENT.get()
            if live is not None and not isinstance(connection, LiveConnection):
                hooks, inv, agent = live
                self._live = LiveConnection(connection, hooks, inv, agent, self._request)
                return self._live
        return connection

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._manager.__aexit__(*exc)
        finally:
            if self._live is not None:
                self._live.closed(exc[1] if len(exc) > 1 else None)
