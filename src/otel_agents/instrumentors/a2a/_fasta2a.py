"""FastA2A (``fasta2a``, the A2A server PydanticAI's ``agent_to_a2a`` builds): its own implementation of
the protocol, not a2a-sdk's, so a hook of its own: ``FastA2A._answer(request, a2a_request)``.

``_answer`` is where FastA2A dispatches every JSON-RPC request (A2A 1.0 method names are translated to
its 0.3 names before) with the Starlette request at hand: we extract the trace context from its
headers and open the same spans as for an a2a-sdk server (``message/send``/``message/stream`` → the
remote agent's ``agent`` span, named after the app's ``name``; the other methods → plain spans). It is
current while FastA2A hands the task to its broker, which passes the current span to its worker
(``use_span``): the PydanticAI run nests under it. ``message/send`` answers at ``submitted`` (FastA2A
runs the agent after answering), so its span ends then, with that state; ``message/stream``'s span
ends with the stream. Applied when ``fasta2a.applications`` is imported (now or later).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import wrapt
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ..._spans.finalisers import new_lock
from ..._spans import SemanticSpan, Telemetry, entered, guard, in_context, wrap_stream
from ..._spans.propagation import extract, run_attributes_of, server_parent
from ...semconv import Kind, attributes as A
from .._patch import Patch
from . import _protocol as P

MODULE = "fasta2a.applications"
METHODS = {"message/send": P.SEND_MESSAGE, "message/stream": P.SEND_STREAMING_MESSAGE, "tasks/get": "GetTask",
           "tasks/cancel": "CancelTask", "tasks/list": "ListTasks", "tasks/resubscribe": "SubscribeToTask"}

_lock = new_lock()
_state: dict[str, Any] = {"side": None, "hooked": False, "patch": None}


class FastA2ASide:
    """The ``FastA2A._answer`` wrapper."""

    def __init__(self, telemetry: Telemetry, propagate: bool | None = None):
        self.telemetry = telemetry
        self.propagate = propagate

    async def answer(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        opened = None
        with guard("a2a.fasta2a.start"):
            opened = self._start(instance, args, kwargs)
        if opened is None:
            return await wrapped(*args, **kwargs)
        span, ctx, run_attrs = opened
        try:
            with entered(ctx, run_attrs):
                response = await wrapped(*args, **kwargs)
        except BaseException as exc:
            P.end_with(span, exc)
            raise
        body = getattr(response, "body_iterator", None)
        if body is not None:  # a stream (message/stream, tasks/resubscribe): the span ends with it
            outcome = JsonOutcome()
            try:
                response.body_iterator = wrap_stream(in_context(body, ctx, run_attrs), span, on_chunk=outcome.add_sse,
                                                     on_end=lambda s, abandoned: outcome.apply(s))
            except Exception:
                span.end()
                raise
            return response
        with guard("a2a.fasta2a.result"):
            outcome = JsonOutcome()
            outcome.add_json(json.loads(bytes(response.body)))
            outcome.apply(span)
        span.end()
        return response

    def _start(self, app: Any, args: tuple, kwargs: dict) -> tuple[SemanticSpan, Any, dict[str, str]] | None:
        request = kwargs.get("request", args[0] if args else None)
        a2a_request = kwargs.get("a2a_request", args[1] if len(args) > 1 else None)
        method = METHODS.get(a2a_request.get("method")) if isinstance(a2a_request, dict) else None
        if method is None:
            return None
        headers = getattr(request, "headers", None)
        remote = extract(dict(headers.items())) if headers is not None and P.propagating(self.propagate) else None
        parent = server_parent(remote)  # under an HTTP server span of this request, if one is current
        run_attrs = run_attributes_of(remote)
        params = a2a_request.get("params") or {}
        attrs: dict[str, Any] = {A.A2A_METHOD_NAME: method, A.GEN_AI_AGENT_NAME: getattr(app, "name", None),
                                 A.AGENT_NAME: getattr(app, "name", None),
                                 A.GEN_AI_AGENT_VERSION: getattr(app, "version", None)}
        if method in P.AGENT_METHODS:
            message = params.get("message") or {}
            attrs[A.A2A_MESSAGE_ID] = message.get("message_id") or message.get("messageId")
            attrs[A.A2A_TASK_ID] = message.get("task_id") or message.get("taskId")
            attrs[A.GEN_AI_CONVERSATION_ID] = message.get("context_id") or message.get("contextId")
            span = self.telemetry.start_span(Kind.AGENT, getattr(app, "name", None), parent=parent,
                                             span_kind=SpanKind.SERVER, attributes={**run_attrs, **attrs})
            if span.records_content:  # parts not converted to be dropped
                span.set_input(_parts_value(message.get("parts")))
            if getattr(app, "description", None):
                span.set_content(A.GEN_AI_AGENT_DESCRIPTION, app.description)
        else:
            attrs[A.A2A_TASK_ID] = params.get("id")
            if method == "CancelTask":
                P.CANCEL_REQUESTS.add(params.get("id"))
            span = self.telemetry.start_plain_span(method, span_kind=SpanKind.SERVER, parent=parent,
                                                   attributes={**run_attrs, **attrs})
        return span, trace.set_span_in_context(span.span, parent), run_attrs


def _parts_value(parts: Any) -> Any:
    """FastA2A's parts (dicts) as content: the text when all are text, else the parts."""
    if not isinstance(parts, list) or not parts:
        return None
    texts = [p.get("text") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(texts) if len(texts) == len(parts) else parts


def _state_name(state: Any) -> str | None:
    """A 0.3 state (``input-required``) or a 1.0 one (``TASK_STATE_INPUT_REQUIRED``) as the 1.0 wire name."""
    if not isinstance(state, str) or not state:
        return None
    return state if state.startswith("TASK_STATE_") else "TASK_STATE_" + state.upper().replace("-", "_")


class JsonOutcome(P.Outcome):
    """:class:`~._protocol.Outcome` fed with FastA2A's JSON-RPC responses and SSE events (dicts)."""

    def add_sse(self, chunk: Any) -> None:
        with guard("a2a.fasta2a.outcome"):
            text = chunk.decode() if isinstance(chunk, (bytes, bytearray)) else str(chunk)
            for line in text.splitlines():
                if line.startswith("data:"):
                    self.add_json(json.loads(line[5:].strip()))

    def add_json(self, response: Any) -> None:
        result = response.get("result") if isinstance(response, dict) else None
        if not isinstance(result, dict):
            return
        for key in ("task", "statusUpdate", "status_update", "artifactUpdate", "artifact_update", "message"):
            if isinstance(result.get(key), dict):
                result = dict(result[key], kind=key)
                break
        kind = result.get("kind")
        self.task_id = result.get("task_id") or result.get("taskId") or (result.get("id") if kind == "task" else None) \
            or self.task_id
        self.context_id = result.get("context_id") or result.get("contextId") or self.context_id
        status = result.get("status")
        if isinstance(status, dict):
            self.state = _state_name(status.get("state")) or self.state
            message = status.get("message")
            self.status_text = _parts_value(message.get("parts")) if isinstance(message, dict) else None
        artifact = result.get("artifact")
        for index, art in enumerate(result.get("artifacts") or ([artifact] if isinstance(artifact, dict) else [])):
            key = art.get("artifact_id") or art.get("artifactId") or str(index)
            self.artifacts[key] = list(art.get("parts") or [])
        if kind in ("message",) or result.get("role") == "agent":
            self.reply = _parts_value(result.get("parts"))

    def output(self) -> Any:
        if self.reply is not None:
            return self.reply
        parts = [p for ps in self.artifacts.values() for p in ps]
        return _parts_value(parts) if parts else self.status_text


def install(telemetry: Telemetry, propagate: bool | None) -> None:
    """Hook FastA2A, now if it is imported, else when it is."""
    with _lock:
        _state["side"] = FastA2ASide(telemetry, propagate)
        hook = not _state["hooked"]
        _state["hooked"] = True
    if hook:  # once per process: wrapt cannot take a post-import hook off (it checks ``side`` when it fires)
        wrapt.register_post_import_hook(_on_import, MODULE)
    elif MODULE in sys.modules:
        _on_import(sys.modules[MODULE])


def _on_import(module: Any) -> None:
    with guard("a2a.fasta2a.patch"), _lock:
        side = _state["side"]
        if side is not None and _state["patch"] is None:
            _state["patch"] = Patch(module.FastA2A, "_answer", side.answer)


def remove() -> None:
    """Take the hook off (exactly: the original method)."""
    with _lock:
        _state["side"] = None
        patch, _state["patch"] = _state["patch"], None
    if patch is not None:
        patch.remove()
