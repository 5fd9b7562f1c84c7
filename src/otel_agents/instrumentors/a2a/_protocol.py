"""What the A2A instrumentation reads off a2a-sdk's objects: states, cards, parts, errors, outcomes.

Duck-typed over the SDK's protobuf classes (``a2a.types``); ``a2a`` is imported only inside the
functions that need its enums, so importing this module (``otel-agents doctor``) does not import it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ..._spans import SemanticSpan, guard
from ..._spans.address import server_attributes
from ..._spans.propagation import propagating as shared_propagating
from ...semconv import attributes as A

ENV_PROPAGATE = "OTEL_AGENTS_A2A_PROPAGATE"
"""``false`` (or ``0``/``no``/``off``): the client sends no trace context, the server takes none."""

SEND_MESSAGE = "SendMessage"
SEND_STREAMING_MESSAGE = "SendStreamingMessage"
AGENT_METHODS = frozenset({SEND_MESSAGE, SEND_STREAMING_MESSAGE})
"""The methods that run the remote agent: ``agent`` spans; every other method is a plain span."""

# Task states by their wire names (a2a.proto ``TaskState``), the values of ``a2a.task.state``.
COMPLETED, FAILED, CANCELED = "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"
REJECTED = "TASK_STATE_REJECTED"
INTERRUPTED = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})
SETTLED = INTERRUPTED | {COMPLETED, FAILED, CANCELED, REJECTED}
"""States a stream of the task ends at by itself (terminal or waiting for the caller)."""
_FAILURES = {FAILED: A.A2A_TASK_FAILED, REJECTED: A.A2A_TASK_REJECTED, CANCELED: A.A2A_TASK_CANCELED}


class CancelRequests:
    """Ids of the tasks this process asked to cancel (client) or was asked to cancel (server) with ``CancelTask``:
    such a task's ``TASK_STATE_CANCELED`` is what its caller wanted, not a failure. Bounded (the latest
    1,024), thread-safe."""

    LIMIT = 1024

    def __init__(self) -> None:
        self._ids: "OrderedDict[str, None]" = OrderedDict()
        self._lock = threading.Lock()

    def add(self, task_id: Any) -> None:
        """Record a ``CancelTask`` of ``task_id`` (anything but a non-empty string is ignored)."""
        if not isinstance(task_id, str) or not task_id:
            return
        with self._lock:
            self._ids[task_id] = None
            self._ids.move_to_end(task_id)
            while len(self._ids) > self.LIMIT:
                self._ids.popitem(last=False)

    def __contains__(self, task_id: Any) -> bool:
        with self._lock:
            return task_id in self._ids


CANCEL_REQUESTS = CancelRequests()
"""The ``CancelTask`` requests of this process, whichever side (and client object) sent or served them."""


def propagating(override: bool | None) -> bool:
    """Whether trace context travels in the service parameters: ``override`` (``instrument(propagate=)``)
    when given, else :data:`ENV_PROPAGATE` (read per call), default on."""
    return shared_propagating(override, ENV_PROPAGATE)


def state_name(state: Any) -> str | None:
    """The wire name of a ``TaskState`` value (``TASK_STATE_COMPLETED``), ``None`` when unspecified."""
    if not isinstance(state, int) or state == 0:
        return None
    from a2a.types import TaskState

    try:
        return TaskState.Name(state)
    except ValueError:
        return None


def has(message: Any, field: str) -> bool:
    """Whether a protobuf message has ``field`` set (``False`` for anything else)."""
    try:
        return bool(message.HasField(field))
    except (AttributeError, ValueError):
        return False


def part_value(part: Any) -> Any:
    """One ``Part`` as content: its text, its data as JSON-able value, or a file/URL reference."""
    kind = part.WhichOneof("content")
    if kind == "text":
        return part.text
    if kind == "data":
        from google.protobuf.json_format import MessageToDict

        return {"data": MessageToDict(part.data) if hasattr(part.data, "DESCRIPTOR") else part.data}
    if kind == "url":
        return {"url": part.url, "media_type": part.media_type or None}
    if kind == "raw":
        return {"file": part.filename or None, "media_type": part.media_type or None, "bytes": len(part.raw)}
    return None


def parts_value(parts: Any) -> Any:
    """Parts as content: the text when they are all text (joined by newlines), else a list of values."""
    values = [part_value(p) for p in parts or ()]
    values = [v for v in values if v is not None]
    if not values:
        return None
    if all(isinstance(v, str) for v in values):
        return "\n".join(values)
    return values


def card_attributes(card: Any) -> dict[str, Any]:
    """The Agent Card's identity (semconv A2A: ``gen_ai.agent.name``/``version``, the chosen interface's
    ``server.address``/``server.port``, as far as its URL gives them, and ``a2a.protocol.version``); the
    description is content."""
    attrs: dict[str, Any] = {}
    if card is None:
        return attrs
    name = getattr(card, "name", None)
    if name:
        attrs[A.GEN_AI_AGENT_NAME] = attrs[A.AGENT_NAME] = name
    if getattr(card, "version", None):
        attrs[A.GEN_AI_AGENT_VERSION] = card.version
    for interface in getattr(card, "supported_interfaces", None) or ():
        attrs.update(server_attributes(interface.url, scheme_port=True))
        attrs[A.A2A_PROTOCOL_VERSION] = interface.protocol_version or None
        break
    return attrs


def error_code(exc: BaseException) -> int | None:
    """The JSON-RPC error code of an a2a-sdk protocol error (``TaskNotFoundError`` → ``-32001``), else ``None``."""
    try:
        from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP
    except ImportError:  # pragma: no cover - moved in another SDK version
        return None
    for cls in type(exc).__mro__:
        code = JSON_RPC_ERROR_CODE_MAP.get(cls)
        if code is not None:
            return code
    return None


def record_protocol_error(span: SemanticSpan, exc: BaseException) -> None:
    """An A2A protocol error (JSON-RPC error response, or the gRPC/REST status a2a-sdk maps to the same
    class): ``error.type`` and ``rpc.response.status_code`` = its JSON-RPC code, its message the description."""
    code = error_code(exc)
    if code is not None:
        span.set_attribute(A.RPC_RESPONSE_STATUS_CODE, str(code))
        span.set_error(str(code), getattr(exc, "message", None) or str(exc))


def end_with(span: SemanticSpan, exc: BaseException) -> None:
    """End ``span`` on an exception: a protocol error with its code (:func:`record_protocol_error`),
    a cancellation (``asyncio.CancelledError``, not an ``Exception``) as control flow, not an error."""
    with guard("a2a.error"):
        record_protocol_error(span, exc)
    span.end(error=exc)


class Outcome:
    """What a call returned, accumulated event by event: the task, its last state, its status text,
    its artifacts, the agent's reply message. Fed with ``StreamResponse`` (client) or with the
    ``Task``/``Message``/status and artifact update events a request handler yields (server)."""

    def __init__(self) -> None:
        self.events = 0
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.state: str | None = None
        self.status_text: Any = None
        self.reply: Any = None
        self.artifacts: dict[str, list[Any]] = {}

    def add(self, event: Any) -> None:
        """Take one event in (never raises)."""
        self.events += 1
        with guard("a2a.outcome"):
            self._add(event)

    def settled(self) -> bool:
        """Whether the call has given its whole result: the agent's reply message, or the task at a state its
        stream ends at (:data:`SETTLED`)."""
        return self.reply is not None or self.state in SETTLED

    def _add(self, event: Any) -> None:
        payload = event.WhichOneof("payload") if type(event).__name__ == "StreamResponse" else None
        if payload is not None:
            event = getattr(event, payload)
        kind = type(event).__name__
        if kind == "Message":
            self.context_id = event.context_id or self.context_id
            self.task_id = event.task_id or self.task_id
            self.reply = parts_value(event.parts)
        elif kind == "Task":
            self._ids(event.id, event.context_id)
            self._status(event.status)
            self.artifacts = {a.artifact_id or str(i): list(a.parts) for i, a in enumerate(event.artifacts)}
        elif kind == "TaskStatusUpdateEvent":
            self._ids(event.task_id, event.context_id)
            self._status(event.status)
        elif kind == "TaskArtifactUpdateEvent":
            self._ids(event.task_id, event.context_id)
            key = event.artifact.artifact_id or str(len(self.artifacts))
            parts = list(event.artifact.parts)
            self.artifacts[key] = self.artifacts.get(key, []) + parts if event.append else parts

    def _ids(self, task_id: str, context_id: str) -> None:
        self.task_id = task_id or self.task_id
        self.context_id = context_id or self.context_id

    def _status(self, status: Any) -> None:
        self.state = state_name(status.state) or self.state
        self.status_text = parts_value(status.message.parts) if has(status, "message") else None

    def output(self) -> Any:
        """The call's output: the reply message, else the artifacts' parts, else the status message."""
        if self.reply is not None:
            return self.reply
        parts = [p for ps in self.artifacts.values() for p in ps]
        return parts_value(parts) if parts else self.status_text

    def apply(self, span: SemanticSpan) -> None:
        """Record the outcome on ``span``: ids, ``a2a.task.state``, the output (content), and the status:
        failed/rejected/canceled → ERROR with ``error.type`` (a cancel someone asked for with ``CancelTask``,
        :data:`CANCEL_REQUESTS`, is control flow: ``otel_agents.control_flow`` = ``cancelled``, not an error),
        input-required/auth-required → paused (``otel_agents.run.paused``)."""
        span.set_attributes({A.A2A_TASK_ID: self.task_id, A.A2A_TASK_STATE: self.state,
                             A.GEN_AI_CONVERSATION_ID: self.context_id})
        output = self.output() if span.records_content else None  # content: not assembled to be dropped
        if output is not None:
            span.set_output(output)
        failure = _FAILURES.get(self.state or "")
        if self.state == CANCELED and self.task_id in CANCEL_REQUESTS:
            span.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, "cancelled")  # stopped as asked: not a failure, nor done
        elif failure is not None:
            text = self.status_text
            span.set_error(failure, text if isinstance(text, str) else None)
        elif self.state in INTERRUPTED:
            span.mark_paused()
