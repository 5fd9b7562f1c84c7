"""One served agent: ``agent/initialize``, ``agent/step``, ``agent/reset`` as ECP defines them.

Each step runs under its own root span (a ``chain`` named ``agent/step``); the
spans of that trace are collected as they end and folded by the ECP exporter
into the step's result envelope, so the envelope an ECP runtime grades is built
from the very spans that go to Phoenix or Langfuse over OTLP.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import sys
import threading
from typing import Any, Mapping, Sequence

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

from .._spans import Telemetry, encode
from .._spans.redaction import redact_text
from ..semconv import Kind
from .jsonrpc import AGENT_ERROR, INVALID_PARAMS, RPCError
from .target import Target

logger = logging.getLogger("otel_agents.serve")

PROTOCOL_VERSION = "1.0"
_MAX_TRACES = 64  # traces collected at once (steps are serialised; the cap only bounds leftovers)


def _as_text(result: Any) -> str | None:
    """The agent's answer as ECP ``public_output``: a string as is, ``None`` as null, else compact JSON."""
    if result is None or isinstance(result, str):
        return result
    return encode(result)


async def _collect_async(agen: Any) -> list[Any]:
    return [item async for item in agen]


class TraceCollector(SpanProcessor):
    """Keeps the finished spans of the traces it is asked to watch (bounded)."""

    def __init__(self) -> None:
        self._spans: dict[int, list[ReadableSpan]] = {}
        self._lock = threading.Lock()

    def watch(self, trace_id: int) -> None:
        with self._lock:
            while len(self._spans) >= _MAX_TRACES:
                self._spans.pop(next(iter(self._spans)))
            self._spans[trace_id] = []

    def take(self, trace_id: int) -> list[ReadableSpan]:
        with self._lock:
            return self._spans.pop(trace_id, [])

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            bucket = self._spans.get(span.context.trace_id)
            if bucket is not None:
                bucket.append(span)

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class ECPSession:
    """The ECP methods over one :class:`~.target.Target`.

    Args:
        target: the agent.
        provider: the tracer provider every instrumentor and the root span use;
            a :class:`TraceCollector` is added to it.
        name: the agent name ``agent/initialize`` reports (default: the target's).
    """

    def __init__(self, target: Target, provider: TracerProvider, name: str | None = None):
        self.target = target
        self.name = name or target.name
        self.provider = provider
        self.collector = TraceCollector()
        provider.add_span_processor(self.collector)
        self.telemetry = Telemetry(provider, framework="ecp")
        self._loop = asyncio.new_event_loop()
        self._lock = threading.Lock()  # one step at a time: the agent is one agent

    # -- the ECP methods ---------------------------------------------------------
    def methods(self) -> dict[str, Any]:
        return {"agent/initialize": self.initialize, "agent/step": self.step, "agent/reset": self.reset}

    def initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``{name, protocol_version, capabilities}``; capabilities are those this server really has."""
        caps: dict[str, dict] = {"tool_calls": {}, "evaluation_context": {}, "usage": {}, "reset": {}}
        if self.target.stateful:
            caps["multi_turn"] = {}
        return {"name": self.name, "protocol_version": PROTOCOL_VERSION, "capabilities": caps}

    def reset(self, params: Mapping[str, Any]) -> bool:
        """Calls the target's ``reset()`` when it has one; always answers ``true``."""
        if self.target.reset is not None:
            with self._lock:
                self._call(self.target.reset)
        return True

    def step(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Run one step and return its ECP result envelope.

        ``public_output`` is what the agent returned (a string as is, anything
        else as compact JSON), never the span's copy, which the content budget
        may have cut; the rest of the envelope is folded from the run's spans.

        Raises:
            RPCError: ``-32602`` when ``input`` is missing or not a string;
                ``-32000`` when the agent raised (or called ``sys.exit``): the
                exception type, its message only when content capture is on
                (redacted), and the trace id.
        """
        user_input = params.get("input")
        if not isinstance(user_input, str):
            raise RPCError(INVALID_PARAMS, 'invalid params: "input" must be a string')
        with self._lock:
            root = self.telemetry.start_span(Kind.CHAIN, "agent/step")
            trace_id = root.span.get_span_context().trace_id
            self.collector.watch(trace_id)
            root.set_input(user_input)
            error: BaseException | None = None
            result: Any = None
            try:
                with root.activate():
                    result = self._call(self.target.step, user_input)
                root.set_output(result)
            except (Exception, SystemExit) as exc:  # an agent's failure (even sys.exit) is this step's error
                error = exc
                root.record_error(exc)
            finally:
                root.end()
            self.provider.force_flush()
            spans = self.collector.take(trace_id)
        trace_hex = f"{trace_id:032x}"
        if error is not None:
            message = f"agent raised {type(error).__name__}"
            if self.telemetry.settings.content_enabled():
                message += f": {redact_text(str(error)[:2000])}"
            raise RPCError(AGENT_ERROR, message, {"type": type(error).__name__, "trace_id": trace_hex})
        envelope = self._envelope(spans, root.span.get_span_context().span_id, trace_hex)
        envelope["public_output"] = _as_text(result)
        return envelope

    # -- helpers -------------------------------------------------------------------
    def _call(self, fn: Any, *args: Any) -> Any:
        """Call a sync or async function; a returned generator is consumed (its text chunks joined)."""
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the protocol
            result = fn(*args)
            if inspect.isawaitable(result):
                result = self._loop.run_until_complete(result)
            if inspect.isasyncgen(result):
                result = self._loop.run_until_complete(_collect_async(result))
            elif inspect.isgenerator(result):
                result = list(result)
            if isinstance(result, list) and result and all(isinstance(x, str) for x in result):
                result = "".join(result)
        return result

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
        with contextlib.suppress(Exception):
            self._loop.close()
