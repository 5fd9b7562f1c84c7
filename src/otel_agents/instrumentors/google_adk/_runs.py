"""What one ADK invocation has open: agent, model and tool spans, keyed by ADK's own ids.

ADK's plugin callbacks come in pairs (before/after agent, model, tool) but hand
over no span: this module keeps, per ``invocation_id``, the spans opened by a
``before_*`` callback until the matching ``after_*``/``on_*_error`` callback (or
the end of the run) ends them. Bounded: at most :data:`MAX_INVOCATIONS`
invocations are tracked; the oldest is ended (marked abandoned) when a new one
would exceed it.
"""

from __future__ import annotations

import asyncio
import contextvars

from collections import OrderedDict
from contextvars import ContextVar
from typing import Any, Callable

from ..._spans.finalisers import in_forked_child, new_lock
from ..._spans import Part, ReasoningPart, SemanticSpan, TextPart, guard

MAX_INVOCATIONS = 1024

# Our tool span whose tool is running now, in this task: an ``AgentTool`` runs its agent through a
# Runner of its own, whose run then nests under this span. ADK awaits before_tool, the tool and
# after_tool in one task (parallel calls each in their own), so a ContextVar follows the tool exactly.
ACTIVE_TOOL: ContextVar["SemanticSpan | None"] = ContextVar("otel_agents_adk_active_tool", default=None)


class ModelCall:
    """One model request: its span, the partial chunks seen, the final response.

    The span opens (with the request's start time) only once the model has answered, failed or been left
    (``opener`` builds it on first use; a streamed response's first chunk is an answer): a request an agent
    callback answers instead never reaches the model and gets none."""

    __slots__ = ("_span", "opener", "agent", "texts", "thoughts", "final", "last", "request", "usage", "chunked",
                 "streamed")

    def __init__(self, opener: Callable[[], SemanticSpan], agent: str, request: Any):
        self._span: SemanticSpan | None = None
        self.chunked = False  # a chunk of a streamed request's response arrived
        self.streamed = False  # the request was streamed (SSE): its responses are timed as chunks
        self.opener = opener
        self.agent = agent
        self.request = request
        self.texts: list[str] = []
        self.thoughts: list[str] = []
        self.final: Any = None   # the last non-partial response
        self.last: Any = None    # the last response of any kind (usage of an all-partial stream)
        self.usage: Any = None   # a live turn's last usage_metadata (Gemini Live sends it in a message of its own)

    @property
    def span(self) -> SemanticSpan:
        if self._span is None:
            self._span = self.opener()
        return self._span

    @property
    def unanswered(self) -> bool:
        """Nothing came back yet and no span was needed: the model may never have been asked."""
        return self._span is None and self.last is None

    def add_partial(self, response: Any) -> None:
        for p in getattr(getattr(response, "content", None), "parts", None) or ():
            if getattr(p, "text", None):
                (self.thoughts if getattr(p, "thought", None) else self.texts).append(p.text)

    def chunk_arrived(self) -> None:
        """A chunk of a streamed (SSE) request's response arrived now: timed by the model span (opened with the
        request's start time, so its time to the first chunk counts from the request)."""
        self.chunked = True
        self.span.chunk_received()

    def assembled(self) -> list[Part]:
        """The partial chunks put together (for a request whose every response was partial)."""
        parts: list[Part] = []
        if self.thoughts:
            parts.append(ReasoningPart("".join(self.thoughts)))
        if self.texts:
            parts.append(TextPart("".join(self.texts)))
        return parts


class Invocation:
    """The spans of one ADK invocation (one ``Runner.run_async``/``run_live`` call)."""

    def __init__(self, invocation_id: str, parent: Any, ids: dict[str, str], delegated_by: str | None):
        self.id = invocation_id
        self.parent = parent                 # where the first agent span opens (caller, or an AgentTool span)
        self.ids = ids                       # session.id, gen_ai.conversation.id, user.id
        self.delegated_by = delegated_by     # the agent whose AgentTool started this invocation
        self.agents: dict[str, SemanticSpan] = {}
        self.order: list[SemanticSpan] = []  # every agent span opened, in order (closed in reverse at the end)
        self.models: dict[str, ModelCall] = {}
        self.tools: dict[str, SemanticSpan] = {}
        self.attached: dict[str, tuple[Any, Any]] = {}  # call id → (our context made current, its token)
        self.transfers: dict[str, tuple[SemanticSpan, str]] = {}  # target agent → (transfer tool span, from agent)
        self.outputs: dict[str, str] = {}    # agent name → its last answer text
        self.answers: list[tuple[str, str]] = []  # (agent name, answer text), in order
        self.named: list[tuple[str, SemanticSpan]] = []  # (agent name, its span), in order
        self.paused = False
        # The ``run_async`` caller left its events (closed or dropped them) before the run ended: ADK then cancels
        # the task running it, and what that cancellation ends was abandoned (:class:`CancellableRun`).
        self.left = False
        self.root: SemanticSpan | None = None
        # Whether an agent span of the invocation records content, so the answers given in it are kept for agent
        # outputs (with content off they would never be read); kept as agent spans open, as an invocation whose
        # first agent has not started yet keeps them.
        self.keeps_answers = True


class Invocations:
    """The open invocations, by id (bounded, thread-safe; none in a forked child: the parent's are the parent's to
    end, evicted or drained there they would be exported twice)."""

    def __init__(self) -> None:
        self._lock = new_lock()
        self._forget()
        in_forked_child(Invocations._forget, self)

    def _forget(self) -> None:
        self._open: "OrderedDict[str, Invocation]" = OrderedDict()

    def add(self, inv: Invocation) -> None:
        evicted: list[Invocation] = []
        with self._lock:
            self._open[inv.id] = inv
            while len(self._open) > MAX_INVOCATIONS:
                evicted.append(self._open.popitem(last=False)[1])
        for old in evicted:
            end_all(old, abandoned=True)

    def get(self, invocation_id: str) -> Invocation | None:
        return self._open.get(invocation_id)

    def pop(self, invocation_id: str) -> Invocation | None:
        with self._lock:
            return self._open.pop(invocation_id, None)

    def drain(self) -> list[Invocation]:
        with self._lock:
            items = list(self._open.values())
            self._open.clear()
        return items

    def __len__(self) -> int:
        return len(self._open)


def stop_reason(error: BaseException | None) -> str | None:
    """``otel_agents.run.stop_reason`` of an agent span ``error`` ends: ``max_turns`` for ADK's
    ``LlmCallsLimitExceededError`` (``RunConfig.max_llm_calls`` reached), else ``None``."""
    if error is None:
        return None
    return "max_turns" if any(c.__name__ == "LlmCallsLimitExceededError" and c.__module__.startswith("google.adk")
                              for c in type(error).__mro__) else None


def end_all(inv: Invocation, *, error: BaseException | None = None, abandoned: bool = False) -> None:
    """End every span ``inv`` still has open: models and tools first, then agents innermost first."""
    with guard("google_adk.end_all"):
        for call in list(inv.models.values()):
            if call.unanswered and stop_reason(error) == "max_turns":
                continue  # refused by max_llm_calls before the model was asked: no request, no span
            if abandoned:
                call.span.mark_abandoned()
            if error is not None:
                call.span.record_error(error, control_flow=not isinstance(error, Exception))
            call.span.end()
        inv.models.clear()
        for span in list(inv.tools.values()):
            if abandoned:
                span.mark_abandoned()
            if error is not None:
                span.record_error(error, control_flow=not isinstance(error, Exception))
            span.end()
        inv.tools.clear()
        inv.attached.clear()
        for span in reversed(inv.order):
            if span.ended:
                continue
            if abandoned:
                span.mark_abandoned()
            if inv.paused:
                span.mark_paused()
            if error is not None:
                span.record_error(error, control_flow=not isinstance(error, Exception))
                if stop_reason(error) is not None:
                    span.set_stop_reason(stop_reason(error))
            span.end()
        inv.agents.clear()


class SyncCaller:
    """One ``Runner.run`` call, seen from the background thread that runs it: ``left`` once the caller
    stopped iterating before the end (closed or dropped its generator)."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = False


SYNC_CALLER: contextvars.ContextVar[SyncCaller | None] = contextvars.ContextVar("otel_agents_adk_sync_caller",
                                                                                   default=None)
"""Set in the context ``Runner.run`` copies into its background thread (see :func:`watched_run`)."""


def watched_run(events: Any) -> Any:
    """``Runner.run``'s event generator, stepped in a context of its own that carries a :class:`SyncCaller`.

    ``Runner.run`` runs the invocation on a background thread in a copy of the context its first step
    runs in, so the plugin's ``after_run`` can read :data:`SYNC_CALLER` there. When the caller leaves
    early, ADK cancels the invocation and the cancellation may be absorbed inside it, so ``after_run``
    sees a normal ending: ``left``, set before the inner generator is closed, says the run did not
    finish for its caller."""
    caller = SyncCaller()
    ctx = contextvars.copy_context()
    ctx.run(SYNC_CALLER.set, caller)
    done = False
    try:
        while True:
            try:
                event = ctx.run(next, events)
            except StopIteration:
                done = True
                return
            yield event
    finally:
        if not done:
            caller.left = True
            ctx.run(events.close)


RUN_IDS: ContextVar["list[str] | None"] = ContextVar("otel_agents_adk_run_ids", default=None)
"""The invocation ids of the ``Runner.run_async`` call being stepped now (set by :class:`CancellableRun` while it
steps ADK's generator, which runs in the caller's context: ``before_run`` adds its invocation's id)."""


class CancellableRun:
    """``Runner.run_async``'s event generator, passed through, item by item. A cancellation that comes out of it
    while its run is open (the task running it was cancelled) ends that run's spans as cancelled: ADK calls no
    plugin callback for a run its task cancelled (2.x skips ``after_run`` then), so without this its spans would
    end only when ADK lets go of the invocation, as abandoned. A caller that leaves before the end (``aclose()``,
    or drops it: a ``break`` out of ``async for``) is told with ``on_left(ids)`` first: ADK cancels the task
    running the run then (``Runner._cleanup_root_task``), and what that ends was abandoned, not cancelled by the
    caller. ``athrow()``/``asend()`` and any other attribute are the generator's own."""

    __slots__ = ("_events", "_on_cancel", "_on_left", "_ids", "_done")

    def __init__(self, events: Any, on_cancel: Callable[[list[str], BaseException], None],
                 on_left: Callable[[list[str]], None] | None = None):
        self._events = events
        self._on_cancel = on_cancel
        self._on_left = on_left
        self._ids: list[str] = []
        self._done = False  # the events ended (exhausted or raised): nothing left to leave

    def __aiter__(self) -> "CancellableRun":
        return self

    async def __anext__(self) -> Any:
        token = RUN_IDS.set(self._ids)
        try:
            return await self._events.__anext__()
        except asyncio.CancelledError as exc:
            self._done = True
            if self._ids:
                with guard("google_adk.run_cancelled"):
                    self._on_cancel(self._ids, exc)
            raise
        except BaseException:
            self._done = True
            raise
        finally:
            RUN_IDS.reset(token)

    def _left(self) -> None:
        if not self._done:
            self._done = True
            if self._ids and self._on_left is not None:
                with guard("google_adk.run_left"):
                    self._on_left(self._ids)

    async def aclose(self) -> None:
        self._left()
        await self._events.aclose()

    def __del__(self) -> None:
        # dropped unfinished: the generator's own finaliser (asyncio's hook) closes it next, which ends the run
        try:
            self._left()
        except Exception:  # noqa: BLE001 - at interpreter exit the module may be gone: nothing left to tell
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._events, name)
