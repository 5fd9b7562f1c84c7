"""What ``instrument()`` installs into the Claude Agent SDK, and takes out again.

* ``InternalClient.process_query`` (what ``query()`` runs, whichever name it was imported under):
  the run's ``agent`` span, current while each step of the SDK's generator runs (so the CLI's
  ``TRACEPARENT`` and the SDK's read task, hooks and permission callbacks inherit it), never
  between the messages the caller receives.
* ``ClaudeSDKClient.connect``/``disconnect``: the session's tracker is made inside ``connect``;
  ``disconnect`` ends what a turn left open. ``ClaudeSDKClient.query``/``receive_messages``: a client
  connected before ``instrument()`` (or under an earlier one) gets its tracker there, from its next turn.
* ``Query.__init__``: per instance, a tap (:func:`_tap`) feeding the :class:`~._tracker.Tracker`: the
  frames its reader task hands to its message stream (on arrival), the lines written to its transport.
  It works on a running session too (the reader looks the stream up a frame at a time), which is how
  a client connected earlier is adopted. ``Query._handle_control_request`` gives it the CLI's requests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import weakref
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from ..._spans import (Telemetry, finalize, guard, in_forked_child, instrumentation_enabled, propagation,
                       report_internal_error)
from ...semconv import Kind
from .._patch import Patch
from ._tracker import AGENT_NAME, Tracker, Turn

# What the next Query made in this context belongs to: (turn or None, partials we turned on, system prompt, model).
_SESSION = otel_context.create_key("otel_agents.claude_agent_sdk.session")


def _with_partials(options: Any, stream_usage: bool) -> tuple[Any, bool]:
    """``options`` with partial messages on (so each response's ``message_delta`` gives its true output
    tokens), and whether we turned them on (then the caller never sees them)."""
    if not stream_usage or options is None or getattr(options, "include_partial_messages", True):
        return options, False
    try:
        return dataclasses.replace(options, include_partial_messages=True), True
    except Exception as exc:  # noqa: BLE001 - not the dataclass we know: leave the options alone
        report_internal_error("claude_agent_sdk.partials", exc)
        return options, False


def _system(options: Any) -> Any:
    system = getattr(options, "system_prompt", None)
    return system if isinstance(system, str) else None


class Installation:
    """Our patches into the Claude Agent SDK for one ``instrument()`` call."""

    def __init__(self, telemetry: Telemetry, stream_usage: bool = True):
        from claude_agent_sdk import ClaudeSDKClient
        from claude_agent_sdk._internal.client import InternalClient
        from claude_agent_sdk._internal.query import Query

        self.telemetry = telemetry
        self.stream_usage = stream_usage
        self.trackers: "weakref.WeakKeyDictionary[Any, Tracker]" = weakref.WeakKeyDictionary()
        self.taps: "list[weakref.ref[_Tap]]" = []  # pruned as sessions go (see _track)
        in_forked_child(Installation._forget, self)
        self.patches = [
            Patch(InternalClient, "process_query", self._process_query),
            Patch(ClaudeSDKClient, "connect", self._connect),
            Patch(ClaudeSDKClient, "disconnect", self._disconnect),
            Patch(ClaudeSDKClient, "query", self._adopting),
            Patch(ClaudeSDKClient, "receive_messages", self._adopting),
            Patch(Query, "__init__", self._query_init),
            Patch(Query, "_handle_sdk_mcp_request", self._sdk_mcp_request),
            Patch(Query, "_handle_control_request", self._control_request),
        ]

    def _forget(self) -> None:
        """In a forked child: no session (the parent's turns are the parent's to end: ``remove`` would end them
        a second time)."""
        self.trackers = weakref.WeakKeyDictionary()
        self.taps = []

    def remove(self) -> None:
        """Take every patch off; sessions still running stop feeding us (their open spans end now)."""
        for patch in reversed(self.patches):
            patch.remove()
        self.patches.clear()
        for ref in self.taps:
            tap = ref()
            if tap is not None and tap.tracker is not None:
                tap.tracker.end_turn(abandoned=True)
                tap.tracker.end_background(abandoned=True)
                tap.tracker = None
        self.taps.clear()

    # -- query() --------------------------------------------------------------------
    def _process_query(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return self._run(wrapped, args, kwargs)

    async def _run(self, wrapped: Any, args: tuple, kwargs: dict) -> Any:
        span = self.telemetry.start_span(Kind.AGENT, AGENT_NAME)
        turn = Turn(span, own_span=False)
        options = kwargs.get("options")
        hide = False
        with guard("claude_agent_sdk.options"):
            if kwargs.get("transport") is None and "options" in kwargs:
                kwargs = dict(kwargs)
                kwargs["options"], hide = _with_partials(options, self.stream_usage)
        ctx = otel_context.set_value(_SESSION, (turn, hide, _system(options), getattr(options, "model", None)),
                                     span.context())
        inner = None
        outcome: BaseException | None = None
        abandoned = True
        suspended = False  # at a yield: the caller holds the stream (what reaches us there is its closing)
        try:
            inner = wrapped(*args, **kwargs)  # (arguments it cannot take raise here: the span still ends)
            while True:
                token = otel_context.attach(ctx)
                try:
                    message = await inner.__anext__()
                except StopAsyncIteration:
                    abandoned = False
                    break
                finally:
                    otel_context.detach(token)
                suspended = True
                yield message
                suspended = False
        except BaseException as exc:
            if not suspended:
                outcome, abandoned = exc, False
            raise
        finally:
            # The caller let the stream go (a `break`, the stream dropped): the run is over for it, so its span
            # ends now, before the SDK's generator is closed. Dropped in `asyncio.run`, that close is a task the
            # loop's shutdown never finishes (the SDK's own generators are closed beside it: "aclose(): already
            # running"), and a span ended after it would be lost with the task.
            left = suspended
            if left:
                self._end_query(turn, outcome, abandoned)
            try:
                if inner is not None:
                    token = otel_context.attach(ctx)
                    try:
                        await inner.aclose()
                    finally:
                        otel_context.detach(token)
            finally:
                if not left:
                    self._end_query(turn, outcome, abandoned)

    @staticmethod
    def _end_query(turn: Turn, error: BaseException | None, abandoned: bool) -> None:
        with guard("claude_agent_sdk.end"):
            finished = turn.done  # its result came (or the tracker saw the CLI's output end: turn.incomplete)
            # The SDK's iterator ended, no exception, no result: the CLI exited without finishing the run.
            incomplete = turn.incomplete or (not finished and error is None and not abandoned)
            tracker: Tracker | None = getattr(turn, "tracker", None)
            if tracker is not None and tracker.turn is turn:
                tracker.end_turn(error=error, abandoned=abandoned, incomplete=incomplete)
            if tracker is not None:
                tracker.end_background(error=error, abandoned=abandoned, incomplete=incomplete)
            if not finished or incomplete or error is not None:
                Tracker._mark_unfinished(turn.span, turn, error, abandoned and not finished, incomplete)
            elif turn.pending_output is not None and not abandoned:  # no later result came: that one was the last
                turn.span.set_output(turn.pending_output)
        turn.span.end()

    # -- ClaudeSDKClient -----------------------------------------------------------
    def _connect(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return self._connecting(wrapped, instance, args, kwargs)

    async def _connecting(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        options = getattr(instance, "options", None)
        hide = False
        if getattr(instance, "_custom_transport", None) is None:
            with guard("claude_agent_sdk.options"):
                instance.options, hide = _with_partials(options, self.stream_usage)
        token = otel_context.attach(otel_context.set_value(
            _SESSION, (None, hide, _system(options), getattr(options, "model", None))))
        try:
            return await wrapped(*args, **kwargs)
        finally:
            otel_context.detach(token)
            if hide:
                instance.options = options  # the user's own object again (the CLI already has its flags)

    def _disconnect(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        with guard("claude_agent_sdk.disconnect"):
            query = getattr(instance, "_query", None)
            tracker = self.trackers.get(query) if query is not None else None
            if tracker is not None:
                if _cancelling():  # `async with client` left because the task running it was cancelled
                    tracker.end_turn(error=asyncio.CancelledError())
                    tracker.end_background(error=asyncio.CancelledError())
                else:
                    tracker.end_turn(abandoned=True)
                    tracker.end_background(abandoned=True)
        return wrapped(*args, **kwargs)

    def _adopting(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``ClaudeSDKClient.query``/``receive_messages``: a client whose session we do not track yet (connected
        before ``instrument()``, or under an earlier one) is tracked from here on: from its next prompt."""
        query = getattr(instance, "_query", None)
        if query is not None and query not in self.trackers and instrumentation_enabled():
            with guard("claude_agent_sdk.adopt"):
                options = getattr(instance, "options", None)
                self._track(query, Tracker(self.telemetry, system=_system(options),
                                           model=getattr(options, "model", None), joining=True))
        return wrapped(*args, **kwargs)

    # -- every Query: the frame tap --------------------------------------------------
    def _query_init(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        result = wrapped(*args, **kwargs)
        if instrumentation_enabled():
            with guard("claude_agent_sdk.tap"):
                session = otel_context.get_value(_SESSION)
                turn, hide, system, model = session if isinstance(session, tuple) else (None, False, None, None)
                if isinstance(turn, Turn) and getattr(turn, "tracker", None) is not None:
                    turn = None  # a second Query in the same run: its own session
                tracker = Tracker(self.telemetry, turn, system=system, model=model)
                if turn is not None:
                    turn.tracker = tracker  # type: ignore[attr-defined]
                self._track(instance, tracker, hide)
        return result

    def _track(self, query: Any, tracker: Tracker, hide_partials: bool = False) -> None:
        if len(self.taps) > 256:  # bounded: drop the taps of transports that are gone
            self.taps = [ref for ref in self.taps if ref() is not None]
        self.taps.append(weakref.ref(_tap(query, tracker, hide_partials)))
        self.trackers[query] = tracker
        # A session its caller never disconnected (no `async with`, no disconnect()): its spans end, abandoned,
        # when its Query goes (its event loop closed) or at exit.
        finalize(query, _abandon, tracker)


    # -- the user's hooks and can_use_tool: a span around each ------------------------------
    def _control_request(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        tracker = None
        with guard("claude_agent_sdk.control_request"):
            tracker = self.trackers.get(instance)
            if tracker is not None:  # the reader task calls this as the CLI's request arrives
                tracker.on_frame(kwargs.get("request", args[0] if args else None))
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return self._calling_back(wrapped, instance, args, kwargs, tracker)

    async def _calling_back(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict,
                            tracker: Tracker | None) -> Any:
        request = kwargs.get("request", args[0] if args else None)
        span = None
        with guard("claude_agent_sdk.callback"):
            span = tracker.open_callback(request) if tracker is not None else None
        if span is None:
            return await wrapped(*args, **kwargs)
        token = otel_context.attach(span.context())  # the user's callback (and its spans) run inside it
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            span.record_error(exc, control_flow=not isinstance(exc, Exception))
            raise
        finally:
            otel_context.detach(token)
            with guard("claude_agent_sdk.callback_end"):
                tracker.close_callback(request)  # type: ignore[union-attr]

    # -- SDK MCP tools: the tool span reaches the handler -------------------------------------
    def _sdk_mcp_request(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        with guard("claude_agent_sdk.mcp_request"):
            tracker = self.trackers.get(instance)
            server = kwargs.get("server_name", args[0] if args else None)
            message = kwargs.get("message", args[1] if len(args) > 1 else None)
            if tracker is not None and isinstance(message, dict) and message.get("method") == "tools/call":
                _handler_in_request_context(getattr(instance, "sdk_mcp_servers", {}).get(server))
                span = tracker.sdk_mcp_tool_span(server, message.get("params") or {})
                if span is not None:
                    params = dict(message.get("params") or {})
                    meta = dict(params.get("_meta") or {})
                    meta.update(propagation.inject(span.context()))  # W3C trace context, as MCP carries it
                    params["_meta"] = meta
                    message = {**message, "params": params}
                    args, kwargs = (server, message), {}
        return wrapped(*args, **kwargs)


def _abandon(tracker: Tracker) -> None:
    with guard("claude_agent_sdk.abandon"):
        tracker.end_turn(abandoned=True)
        tracker.end_background(abandoned=True)


def _cancelling() -> bool:
    """Whether the current asyncio task is being cancelled (``Task.cancelling()``, Python 3.11+)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not in an asyncio loop (trio)
        return False
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if callable(cancelling) else False


def _handler_in_request_context(server: Any) -> None:
    """An SDK MCP server on mcp 1.x (made before ``instrument()`` or after): its ``tools/call`` handler is made,
    once, to run in the context that the request's ``params._meta`` carries (the bridge's server task froze
    the context of its first request), so the user's handler — and any span it opens — is inside our tool
    span. mcp 2.x does this itself (its request handling runs in the ``_meta`` trace context)."""
    handlers = getattr(server, "request_handlers", None)
    if not isinstance(handlers, dict):  # not mcp 1.x's low-level Server
        return
    from mcp.types import CallToolRequest

    handler = handlers.get(CallToolRequest)
    if handler is not None and not getattr(handler, "_otel_agents_context", False):
        handlers[CallToolRequest] = _in_request_context(handler)
        handlers[CallToolRequest]._otel_agents_context = True


def _in_request_context(run: Any) -> Any:
    async def run_in_request_context(*args: Any) -> Any:
        ctx = None
        with guard("claude_agent_sdk.tool_context"):
            ctx = _request_context()
        if ctx is None:
            return await run(*args)
        token = otel_context.attach(ctx)
        try:
            return await run(*args)
        finally:
            otel_context.detach(token)

    return run_in_request_context


def _request_context() -> Any:
    """The context in the current MCP request's ``params._meta`` (mcp 1.x ``request_ctx``), unless the
    span it names, or a child of it (our MCP server instrumentor's, which extracted it too), is current."""
    from mcp.server.lowlevel.server import request_ctx

    request = request_ctx.get(None)
    meta = getattr(request, "meta", None)
    fields = meta if isinstance(meta, dict) else dict(getattr(meta, "model_extra", None) or {})
    ctx = propagation.extract(fields)
    if ctx is None:
        return None
    carried = trace.get_current_span(ctx).get_span_context().span_id
    current = trace.get_current_span()
    parent = getattr(current, "parent", None)
    if current.get_span_context().span_id == carried or getattr(parent, "span_id", None) == carried:
        return None
    return ctx


class _Tap:
    """What one session's taps feed: one tracker at a time (a custom transport reused by a second ``Query``,
    or a session tapped under an earlier ``instrument()``, is re-pointed, never tapped twice); ``None`` after
    ``uninstrument()``. ``hide_partials``: we turned partial messages on, so their frames are dropped, traced
    or not (the caller did not ask for them)."""

    __slots__ = ("tracker", "hide_partials", "__weakref__")

    def __init__(self, tracker: Tracker, hide_partials: bool):
        self.tracker: Tracker | None = tracker
        self.hide_partials = hide_partials


class _TappedStream:
    """Stands in for a ``Query``'s ``_message_send``, the memory stream its reader task sends each frame to
    as it arrives (all but the control protocol's): the tap's tracker sees the frame first, and the end of the
    stream the reader signals when it stops (``send_nowait({"type": "end"})``, after its ``error`` frame if the
    transport raised)."""

    __slots__ = ("stream", "tap", "query")

    def __init__(self, stream: Any, tap: _Tap, query: Any):
        self.stream = stream
        self.tap = tap
        self.query = weakref.ref(query)

    async def send(self, frame: Any) -> None:
        tap = self.tap
        if tap.tracker is not None:
            tap.tracker.on_frame(frame)
        if tap.hide_partials and isinstance(frame, dict) and frame.get("type") == "stream_event":
            return
        await self.stream.send(frame)

    def send_nowait(self, frame: Any) -> Any:
        tap = self.tap
        if tap.tracker is not None and isinstance(frame, dict) and frame.get("type") == "end":
            with guard("claude_agent_sdk.end_of_stream"):
                query = self.query()
                # The reader stopped on its own: the CLI's output ended. Not when the Query was closed (its
                # caller's disconnect, a query() run ended or abandoned) or the reader cancelled (loop shutdown).
                if query is not None and not getattr(query, "_closed", False) and not _cancelling():
                    tap.tracker.on_stream_end()
        return self.stream.send_nowait(frame)

    def __getattr__(self, name: str) -> Any:  # send_nowait, close, …: the stream's own
        return getattr(self.stream, name)


def _tap(query: Any, tracker: Tracker, hide_partials: bool) -> _Tap:
    """Feed ``tracker`` from ``query``'s message stream and its transport's ``write`` (instance attributes;
    nothing else changes)."""
    transport = query.transport
    tap = getattr(transport.write, "_otel_agents_tap", None)
    if isinstance(tap, _Tap):
        tap.tracker = tracker
    else:
        tap = _Tap(tracker, hide_partials)
        write = transport.write

        async def tapped_write(data: str) -> None:
            current = tap.tracker
            if current is not None:
                current.on_write(data)
            await write(data)

        tapped_write._otel_agents_tap = tap  # type: ignore[attr-defined]
        transport.write = tapped_write
    stream = query._message_send
    if isinstance(stream, _TappedStream):
        stream.tap = tap
    else:
        query._message_send = _TappedStream(stream, tap, query)
    return tap
