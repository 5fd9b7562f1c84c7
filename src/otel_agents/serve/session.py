"""One served agent: ``agent/initialize``, ``agent/step``, ``agent/reset`` as ECP defines them.

Each step runs under its own root span (a ``chain`` named ``agent/step``, carrying the served
agent's name as ``gen_ai.agent.name``: ``--name``, else the target's); the
spans of that trace are collected as they end and folded by the ECP exporter
into the step's result envelope, so the envelope an ECP runtime grades is built
from the very spans that go to Phoenix or Langfuse over OTLP.

The agent runs in a :class:`~.worker.Worker` thread, never in the server's event
loop. A step that does not answer within ``step_timeout`` seconds is answered with
a ``-32001`` error naming the timeout; its root span ends as an error
(``error.type`` ``TimeoutError``) and every span of the step still open ends
marked abandoned (``otel_agents.stream.abandoned``), so nothing stays open. The agent's
thread goes on: on an agent object the next call waits for it (at most its own timeout from
its arrival, then runs with its whole timeout) or is refused, never run beside it
(:meth:`AgentRunner.wait_abandoned`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import json
import logging
import secrets
import threading
import time
import traceback
from typing import Any, Callable, Mapping, Sequence

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

from .._spans import SemanticSpan, Telemetry, encode, in_forked_child, probes, semantic_span_for
from .._spans.redaction import redact_text
from ..instrumentors.a2a._protocol import ENV_PROPAGATE as A2A_PROPAGATE
from ..instrumentors.a2a._protocol import propagating as a2a_propagating  # (imports no a2a, as no mcp below)
from ..instrumentors.mcp._protocol import ENV_PROPAGATE as MCP_PROPAGATE
from ..instrumentors.mcp._protocol import propagating as mcp_propagating
from ..semconv import Kind
from ..semconv import attributes as A
from .jsonrpc import AGENT_ERROR, INVALID_PARAMS, STEP_TIMEOUT, RPCError
from .replay import input_key
from .target import Target
from .worker import Outcome, Worker

logger = logging.getLogger("otel_agents.serve")

PROTOCOL_VERSION = "1.0"
DEFAULT_STEP_TIMEOUT = 300.0  # seconds; ecp run's own request timeout is 30 s by default
_MAX_TRACES = 1024  # traces watched at once: one per step in flight, at most one per session


def _as_text(result: Any) -> str | None:
    """The agent's answer as ECP ``public_output``: a string as is, ``None`` as null, else compact JSON."""
    if result is None or isinstance(result, str):
        return result
    return encode(result)


# Local spans that carried the trace context to another process whose spans come back (``--collect``): the MCP
# and A2A instrumentors' client sides (every request they trace has a server span in the other process); their
# server sides (SpanKind.SERVER), served in this process, wait for nothing. Each with the switch of its
# instrumentor's propagation (its environment variable, and whether it is on): switched off, its requests carry no
# context (the other process's spans are traces of their own), so nothing is waited for under them.
CALLS_OUT = {"mcp.method.name": (MCP_PROPAGATE, mcp_propagating), "a2a.method.name": (A2A_PROPAGATE, a2a_propagating)}
_MAX_REMOTE_SPANS = 2000  # per trace


class TraceCollector(SpanProcessor):
    """Keeps the spans of the traces it is asked to watch (bounded): finished ones, and open ones to end;
    with ``ecp serve --collect``, also the spans other processes send for them (:meth:`add_remote`)."""

    def __init__(self) -> None:
        self._reset()
        in_forked_child(TraceCollector._reset, self)  # a child the agent forks watches nothing of the parent's

    def _reset(self) -> None:
        self._finished: dict[int, list[ReadableSpan]] = {}
        self._open: dict[int, dict[int, Any]] = {}
        self._remote: dict[int, dict[int, ReadableSpan]] = {}
        self._ended: dict[int, None] = {}  # traces watched no longer, oldest first (at most _MAX_TRACES)
        self._lock = threading.Lock()  # new in a forked child: another thread may have held it at fork
        self.remote_dropped = 0  # spans received for traces not watched, or over the per-trace cap

    def watch(self, trace_id: int) -> None:
        """Collect the spans of ``trace_id`` (one step's trace) from now until :meth:`take`; at most
        ``_MAX_TRACES`` (1024) are watched, the oldest dropped first."""
        with self._lock:
            while len(self._finished) >= _MAX_TRACES:
                oldest = next(iter(self._finished))
                self._finished.pop(oldest)
                self._open.pop(oldest, None)
                self._remote.pop(oldest, None)
                self._end(oldest)
            self._finished[trace_id] = []
            self._open[trace_id] = {}
            self._remote[trace_id] = {}

    def take(self, trace_id: int) -> list[ReadableSpan]:
        """The trace's finished spans, remote ones included; the trace is no longer watched."""
        with self._lock:
            self._open.pop(trace_id, None)
            remote = self._remote.pop(trace_id, {})
            self._end(trace_id)
            return self._finished.pop(trace_id, []) + list(remote.values())

    def _end(self, trace_id: int) -> None:
        """``trace_id`` is watched no longer: a span of it arriving later came too late (the lock held)."""
        self._ended[trace_id] = None
        if len(self._ended) > _MAX_TRACES:
            del self._ended[next(iter(self._ended))]

    def add_remote(self, spans: Any, raw: Any = None) -> None:
        """Spans received from other processes (the ``--collect`` receiver's sink): those of watched
        traces are kept (a span id seen already is kept once), the rest dropped and counted."""
        with self._lock:
            for span in spans:
                ctx = span.context
                bucket = self._remote.get(ctx.trace_id)
                if bucket is None or len(bucket) >= _MAX_REMOTE_SPANS:
                    self.remote_dropped += 1
                    n = self.remote_dropped
                    if n == 10 ** (len(str(n)) - 1):  # counted at 1, 10, 100...: never a flood
                        logger.warning("--collect: a span of trace %032x was not folded (%d so far): %s",
                                       ctx.trace_id, n, self._why_dropped(ctx.trace_id, bucket))
                    continue
                bucket.setdefault(ctx.span_id, span)

    def _why_dropped(self, trace_id: int, bucket: dict[int, ReadableSpan] | None) -> str:
        """Why a span received for ``trace_id`` is not folded, with what would help, if anything does."""
        if bucket is not None:
            return f"its step had {_MAX_REMOTE_SPANS} spans from other processes already, the most it keeps"
        if trace_id in self._ended:
            return "it arrived after its step had ended: raise --collect-grace"
        # never a step's trace: a request that carried no trace context started it in the other process
        off = [switch for switch, propagating in CALLS_OUT.values() if not propagating(None)]
        if off:
            return (f"its trace is no step's: with {' and '.join(off)} off here, those requests carry no trace "
                    "context, so the other process's spans are traces of their own (never folded into a step)")
        return ("its trace is no step's: the other process started it (a request that carried no trace context, "
                "as with propagation off in code, propagate=False, or spans sent here by another program)")

    def remote_missing(self, trace_id: int) -> list[str]:
        """What the trace still waits for from other processes: one message per local call out
        (:data:`CALLS_OUT`, its protocol's propagation on) with no span of the other process under it, and per
        remote span whose parent has not arrived. Empty when nothing is missing."""
        with self._lock:
            local = list(self._finished.get(trace_id, ()))
            remote = list(self._remote.get(trace_id, {}).values())
        have = {s.context.span_id for s in local} | {s.context.span_id for s in remote}
        # a call out is answered by a remote span under it or under a local span beneath it (the HTTP client
        # span of another instrumentation may be the remote span's parent)
        local_parent = {s.context.span_id: s.parent.span_id if s.parent is not None else None for s in local}
        answered: set[int] = set()
        for r in remote:
            at = r.parent.span_id if r.parent is not None else None
            while at is not None and at not in answered:
                answered.add(at)
                at = local_parent.get(at)
        calls_out = [key for key, (_, propagating) in CALLS_OUT.items() if propagating(None)]
        missing = [f"no span arrived from the process that served {s.name!r} (span {s.context.span_id:016x})"
                   for s in local if s.context.span_id not in answered and s.kind is not trace.SpanKind.SERVER
                   and any((s.attributes or {}).get(key) is not None for key in calls_out)]
        missing += [f"span {s.name!r} ({s.context.span_id:016x}) of another process arrived without its parent "
                    f"{s.parent.span_id:016x}" for s in remote if s.parent is not None and s.parent.span_id not in have]
        return missing

    def still_open(self, trace_id: int) -> list[Any]:
        """The trace's spans started and not yet ended, newest first."""
        with self._lock:
            spans = list(self._open.get(trace_id, {}).values())
        return sorted(spans, key=lambda s: s.start_time or 0, reverse=True)

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        """A span of a watched trace is open (see :meth:`still_open`)."""
        ctx = span.get_span_context()
        with self._lock:
            bucket = self._open.get(ctx.trace_id)
            if bucket is not None:
                bucket[ctx.span_id] = span

    def on_end(self, span: ReadableSpan) -> None:
        """A span of a watched trace ended: kept for :meth:`take`."""
        with self._lock:
            bucket = self._finished.get(span.context.trace_id)
            if bucket is not None:
                bucket.append(span)
                self._open[span.context.trace_id].pop(span.context.span_id, None)

    def shutdown(self) -> None:
        """Nothing to release: the spans are kept until taken."""
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered: ``True`` at once."""
        return True


class Tracing:
    """What every session of one server shares: the span factory and the collector on the provider.

    Args:
        provider: the tracer provider.
        remote_grace: with ``ecp serve --collect``, seconds a step waits after its root span ends for
            the spans of its other processes (``None``: no other process sends any).
    """

    def __init__(self, provider: TracerProvider, remote_grace: float | None = None) -> None:
        self.provider = provider
        self.collector = TraceCollector()
        provider.add_span_processor(self.collector)
        self.telemetry = Telemetry(provider, framework="ecp")
        self.remote_grace = remote_grace


class AgentRunner:
    """One agent (made on first use, in its worker) and the worker its calls run in, one call at a time.

    A call given up (past the step timeout) goes on in its thread, which cannot be killed. On an agent object
    (``target.stateful``: a module-level object, or a session's instance of a class or factory) no later call
    runs beside it: :meth:`wait_abandoned` waits for it to return first, for a bounded time. A plain function
    has no object to share: its next call runs at once, in a new thread."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.lock = asyncio.Lock()  # held by the caller while a call runs, released on timeout too
        self._agent: tuple[Callable[[str], Any], Callable[[], Any] | None] | None = None
        self._worker: Worker | None = None
        # The call given up on the agent object while it still ran: (its future, what it was, when it was given up).
        self._abandoned: tuple[concurrent.futures.Future[Outcome], str, float] | None = None

    def submit(self, what: str, *args: Any, context: contextvars.Context | None = None
               ) -> concurrent.futures.Future[Outcome]:
        """Run the agent's ``step`` or ``reset`` (``what``) in the worker."""
        if self._worker is None:
            self._worker = Worker()
        return self._worker.submit(self._invoke, what, *args, context=context)

    async def wait_abandoned(self, timeout: float | None, arrived: float) -> None:
        """Before a call on the agent object: wait for the call given up on it (:meth:`abandon`) to return, until
        ``timeout`` seconds (``None``: no limit) after ``arrived`` (``time.monotonic()`` when the call came in:
        calls waiting together, for the lock too, are each refused within their own timeout, not one after the
        other). The call then runs with its whole timeout.

        Raises:
            RPCError: ``-32001`` when that call still runs then, naming it and how long ago it was given up
                (``data``: ``type`` ``AgentBusy``, ``running``, ``timed_out_s_ago``, ``waited_s``, ``timeout_s``).
        """
        abandoned = self._abandoned
        if abandoned is None:
            return
        future, what, since = abandoned
        left = None if timeout is None else max(timeout - (time.monotonic() - arrived), 0.0)
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), left)
        except asyncio.TimeoutError:
            now = time.monotonic()
            ago, waited = now - since, now - arrived
            raise RPCError(STEP_TIMEOUT, f"agent busy: its {what}, given up {ago:.1f} s ago (--step-timeout), is "
                           f"still running in it; this call waited {waited:.1f} s for it and did not run (an agent "
                           "object runs one call at a time)",
                           {"type": "AgentBusy", "running": what, "timed_out_s_ago": round(ago, 3),
                            "waited_s": round(waited, 3), "timeout_s": timeout}) from None
        if self._abandoned is abandoned:
            self._abandoned = None

    def _invoke(self, what: str, *args: Any) -> Any:
        if self._agent is None:  # here, so a slow or failing constructor is a step's timeout or error
            self._agent = self.target.instance()
        step, reset = self._agent
        fn = step if what == "step" else reset
        return None if fn is None else fn(*args)

    def abandon(self, what: str, running: concurrent.futures.Future[Outcome]) -> None:
        """The running call (``what``: ``step (trace …)``, ``reset``; ``running``: its future, as :meth:`submit`
        returned it) is given up: the next call gets a new worker (the same agent), once that call returned when
        the agent is an object (:meth:`wait_abandoned`)."""
        if self.target.stateful and not running.done():
            self._abandoned = (running, what, time.monotonic())
        if self._worker is not None:
            self._worker.abandon()
            self._worker = None

    def close(self) -> None:
        """Let the worker thread exit once its queued calls are done (a later call starts a new one)."""
        if self._worker is not None:
            self._worker.retire()
            self._worker = None


def shares_one_runner(target: Target) -> bool:
    """Whether every session uses the same runner: a shared agent object, or an async function
    (whose loop-bound clients need the one event loop); a sync function or a factory gets one per session."""
    if target.factory is not None:
        return False
    if target.stateful:
        return True
    fn = target.step
    return inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)


class ECPSession:
    """The ECP methods over one agent.

    Args:
        target: the agent.
        provider: the tracer provider every instrumentor and the root span use;
            a :class:`TraceCollector` is added to it (unless ``tracing`` is given).
        name: the agent name ``agent/initialize`` reports (default: the target's).
        step_timeout: seconds a step or reset may run; ``None`` or ``0`` = no limit.
        tracing: shared by the sessions of one server.
        runner: the agent runner (shared between sessions for a shared agent).

    Raises:
        TypeError: neither ``provider`` nor ``tracing`` given.
    """

    def __init__(self, target: Target, provider: TracerProvider | None = None, name: str | None = None, *,
                 step_timeout: float | None = DEFAULT_STEP_TIMEOUT, tracing: Tracing | None = None,
                 runner: AgentRunner | None = None):
        if tracing is None:
            if provider is None:
                raise TypeError("ECPSession needs a provider or a Tracing")
            tracing = Tracing(provider)
        self.target = target
        self.name = name or target.name
        self.tracing = tracing
        self.telemetry = tracing.telemetry
        self.collector = tracing.collector
        self.runner = runner or AgentRunner(target)
        self.step_timeout = step_timeout or None
        self._scenario = secrets.token_hex(8)  # a new one at each agent/initialize: ecp run starts a scenario so
        self._steps = 0                        # (recorded on each root, so --replay can match it again)

    # -- the ECP methods ---------------------------------------------------------
    def methods(self) -> dict[str, Any]:
        """Method name → ``fn(params)`` for :func:`~.jsonrpc.dispatch` (``step`` and ``reset`` are async)."""
        return {"agent/initialize": self.initialize, "agent/step": self.astep, "agent/reset": self.areset}

    def initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``{name, protocol_version, capabilities}``; capabilities are those this server really has.

        Starts a new scenario: the next steps' roots record a new ``otel_agents.ecp.scenario.id`` and their
        position from 1 (``otel_agents.ecp.step.index``), with their input's hash (see :mod:`.replay`)."""
        self._scenario = secrets.token_hex(8)
        self._steps = 0
        caps: dict[str, dict] = {"tool_calls": {}, "evaluation_context": {}, "usage": {}, "reset": {}}
        if self.target.stateful:
            caps["multi_turn"] = {}
        return {"name": self.name, "protocol_version": PROTOCOL_VERSION, "capabilities": caps}

    async def areset(self, params: Mapping[str, Any]) -> bool:
        """Calls the agent's ``reset()`` when it has one; answers ``true``.

        Raises:
            RPCError: ``-32000`` when ``reset()`` raised, ``-32001`` past the step timeout.
        """
        if self.target.reset is None and self.target.factory is None:
            return True
        arrived = time.monotonic()
        await self.runner.wait_abandoned(self.step_timeout, arrived)  # with every call waiting, not after them
        async with self.runner.lock:
            await self.runner.wait_abandoned(self.step_timeout, arrived)  # one given up while this call queued
            future = self.runner.submit("reset")
            try:
                outcome = await asyncio.wait_for(asyncio.wrap_future(future), self.step_timeout)
            except asyncio.TimeoutError:
                self.runner.abandon("reset", future)
                raise RPCError(STEP_TIMEOUT, f"agent reset timed out after {self.step_timeout:g} s "
                               "(--step-timeout)", {"type": "TimeoutError", "timeout_s": self.step_timeout}) from None
            except asyncio.CancelledError:
                self.runner.abandon("reset", future)
                raise
        if outcome.error is not None:
            self._log_failure("reset", outcome.error)
            raise RPCError(AGENT_ERROR, self._error_message(outcome.error), {"type": type(outcome.error).__name__})
        return True

    async def astep(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Run one step and return its ECP result envelope.

        ``public_output`` is what the agent returned (a string as is, anything
        else as compact JSON), never the span's copy, which the content budget
        may have cut; the rest of the envelope is folded from the run's spans.

        Raises:
            RPCError: ``-32602`` when ``input`` is missing or not a string;
                ``-32000`` when the agent raised (any ``BaseException``, e.g.
                ``sys.exit`` or ``KeyboardInterrupt``): the exception type, its
                message only when content capture is on (redacted), and the
                trace id; ``-32001`` when the step ran past ``step_timeout``.
        """
        user_input = params.get("input")
        if not isinstance(user_input, str):
            raise RPCError(INVALID_PARAMS, 'invalid params: "input" must be a string')
        arrived = time.monotonic()
        await self.runner.wait_abandoned(self.step_timeout, arrived)  # with every call waiting, not after them
        async with self.runner.lock:
            # one given up while this call queued; before the root: a step refused runs nothing
            await self.runner.wait_abandoned(self.step_timeout, arrived)
            # The served agent's name (--name, else the target's; what agent/initialize reports) on the root,
            # so the runs of an agent and of its twins are told apart in a backend by their spans alone.
            root = self.telemetry.start_span(Kind.CHAIN, "agent/step", parent=otel_context.Context(),
                                             attributes={A.GEN_AI_AGENT_NAME: self.name} if self.name else None)
            trace_id = root.span.get_span_context().trace_id
            trace_hex = f"{trace_id:032x}"
            self.collector.watch(trace_id)
            root.set_input(user_input)
            self._steps += 1
            root.set_attributes({A.OTEL_AGENTS_ECP_SCENARIO_ID: self._scenario, A.OTEL_AGENTS_ECP_STEP_INDEX: self._steps})
            if self.telemetry.settings.content_enabled():  # a short input's SHA-256 gives it back to a dictionary
                root.set_attribute(A.OTEL_AGENTS_ECP_STEP_INPUT_SHA256, input_key(user_input))
            future = self.runner.submit("step", user_input, context=_context_with(root))
            try:
                outcome = await asyncio.wait_for(asyncio.wrap_future(future), self.step_timeout)
            except asyncio.TimeoutError:
                logger.warning("step (trace %s) timed out after %g s; its thread is abandoned", trace_hex,
                               self.step_timeout)
                self.runner.abandon(f"step (trace {trace_hex})", future)
                self._abandon(root, trace_id, TimeoutError(f"step timed out after {self.step_timeout:g} s"))
                raise RPCError(STEP_TIMEOUT, f"agent step timed out after {self.step_timeout:g} s (--step-timeout); "
                               "its spans were ended as abandoned",
                               {"type": "TimeoutError", "timeout_s": self.step_timeout, "trace_id": trace_hex}
                               ) from None
            except asyncio.CancelledError:  # the server is shutting down
                self.runner.abandon(f"step (trace {trace_hex})", future)
                self._abandon(root, trace_id, None)
                raise
            if outcome.error is None:
                root.set_output(outcome.value)
            else:
                root.record_error(outcome.error)
            root.end()
            missing = await self._await_remote(trace_id)
            spans = self.collector.take(trace_id)
        if outcome.error is not None:
            self._log_failure(f"step (trace {trace_hex})", outcome.error)
            raise RPCError(AGENT_ERROR, self._error_message(outcome.error),
                           {"type": type(outcome.error).__name__, "trace_id": trace_hex})
        envelope = self._envelope(spans, root.span.get_span_context().span_id, trace_hex)
        envelope["public_output"] = _as_text(outcome.value)
        if missing:
            _report_missing(envelope, missing, self.tracing.remote_grace or 0.0)
        return envelope

    async def _await_remote(self, trace_id: int) -> list[str]:
        """With ``--collect``: wait (at most the grace period) until the spans of the step's other
        processes have arrived (:meth:`TraceCollector.remote_missing`); returns what is still missing."""
        grace = self.tracing.remote_grace
        if grace is None:
            return []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while True:
            missing = self.collector.remote_missing(trace_id)
            if not missing or loop.time() >= deadline:
                return missing
            await asyncio.sleep(0.02)

    # -- blocking forms, for callers without an event loop ---------------------------
    def step(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`astep`, blocking (do not call from a running event loop)."""
        return asyncio.run(self.astep(params))

    def reset(self, params: Mapping[str, Any]) -> bool:
        """:meth:`areset`, blocking (do not call from a running event loop)."""
        return asyncio.run(self.areset(params))

    # -- helpers -------------------------------------------------------------------
    def _log_failure(self, what: str, error: BaseException) -> None:
        """The agent's traceback to the log (``--log-file``); its message only when content is on."""
        if self.telemetry.settings.content_enabled():
            logger.warning("%s: the agent raised", what, exc_info=error)
        else:
            logger.warning("%s: the agent raised %s\n%s", what, type(error).__name__,
                           "".join(traceback.format_tb(error.__traceback__)).rstrip())

    def _error_message(self, error: BaseException) -> str:
        message = f"agent raised {type(error).__name__}"
        if self.telemetry.settings.content_enabled():
            message += f": {redact_text(probes.text(error)[:2000])}"  # its __str__ may raise
        return message

    def _abandon(self, root: SemanticSpan, trace_id: int, error: BaseException | None) -> None:
        """End the step's spans still open (innermost first) marked abandoned, then the root."""
        for span in self.collector.still_open(trace_id):
            if span.get_span_context().span_id == root.span.get_span_context().span_id:
                continue
            semantic = semantic_span_for(span)
            with contextlib.suppress(Exception):
                if semantic is not None and semantic.span is span:
                    semantic.mark_abandoned()
                    semantic.end()
                else:  # an application's own span inside the agent
                    span.set_attribute(A.OTEL_AGENTS_STREAM_ABANDONED, True)
                    span.end()
        root.mark_abandoned()
        if error is not None:
            root.record_error(error)
        root.end()
        self.collector.take(trace_id)

    @staticmethod
    def _envelope(spans: Sequence[ReadableSpan], root_span_id: int, trace_hex: str) -> dict[str, Any]:
        """The envelope of the run rooted at this step's span (``logs`` lists the root first)."""
        from ..exporters.ecp import fold

        envelopes = [env for env in fold(spans) if env.get("trace_id") == trace_hex]
        root_hex = f"{root_span_id:016x}"
        for env in envelopes:
            with contextlib.suppress(Exception):
                if json.loads(env.get("logs") or "[]")[0]["span_id"] == root_hex:
                    return env
        if envelopes:
            return envelopes[0]
        logger.warning("no run folded from %d spans; answering with the output only", len(spans))
        return {"status": "done", "public_output": None, "tool_calls": [], "evaluation_context": None,
                "trace_id": trace_hex}

    def close(self) -> None:
        """Let the agent's worker thread exit (a shared runner is closed by its owner)."""
        self.runner.close()


def _report_missing(envelope: dict[str, Any], missing: Sequence[str], grace: float) -> None:
    """The step's remote part did not all arrive within the grace period: say so in ``logs`` (one record)
    and ``incomplete``; the envelope is what arrived."""
    message = f"after waiting {grace:g} s (--collect-grace): " + "; ".join(missing[:5]) + \
        (f"; and {len(missing) - 5} more" if len(missing) > 5 else "")
    logger.warning("step (trace %s): remote spans missing %s", envelope.get("trace_id"), message)
    with contextlib.suppress(Exception):
        records = json.loads(envelope.get("logs") or "[]")
        records.append({"trace_id": envelope.get("trace_id"), "span_id": None, "parent_id": None, "kind": None,
                        "name": "otel_agents.collect.missing", "start": None, "duration_ms": None,
                        "status": "error", "attributes": {}, "error": f"remote spans missing {message}"})
        envelope["logs"] = json.dumps(records, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    envelope["incomplete"] = f"remote spans missing {message}"


def _context_with(root: SemanticSpan) -> contextvars.Context:
    """A copy of the current context in which ``root`` is the current span (for the worker thread)."""
    token = otel_context.attach(trace.set_span_in_context(root.span))
    try:
        return contextvars.copy_context()
    finally:
        otel_context.detach(token)
