"""Client side: wrappers on ``a2a.client.base_client.BaseClient``'s public methods.

``BaseClient`` is the one ``Client`` implementation ``ClientFactory``/``create_client`` build, over
every transport (JSON-RPC, HTTP+JSON, gRPC): its methods see the request, the Agent Card, the
``ClientCallContext`` (whose ``service_parameters`` the transports send as HTTP headers or gRPC
metadata), the results or stream events, and the errors. a2a-sdk's ``ClientCallInterceptor`` sees
no transport error and no stream end, so it cannot own a span's lifetime.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ..._spans import SemanticSpan, Telemetry, guard, in_context, wrap_stream
from ..._spans.propagation import PROPAGATION_KEYS, inject
from ..._spans.remote import claim_remote_agent
from ...semconv import Kind, attributes as A
from . import _protocol as P

# BaseClient method → a2a.method.name (the JSON-RPC method, the gRPC service method).
METHODS = {
    "get_task": "GetTask",
    "list_tasks": "ListTasks",
    "cancel_task": "CancelTask",
    "create_task_push_notification_config": "CreateTaskPushNotificationConfig",
    "get_task_push_notification_config": "GetTaskPushNotificationConfig",
    "list_task_push_notification_configs": "ListTaskPushNotificationConfigs",
    "delete_task_push_notification_config": "DeleteTaskPushNotificationConfig",
    "get_extended_agent_card": "GetExtendedAgentCard",
}
STREAMS = {"send_message": None, "subscribe": "SubscribeToTask"}  # async generator methods


class ClientSide:
    """The ``BaseClient`` wrappers."""

    def __init__(self, telemetry: Telemetry, propagate: bool | None = None):
        self.telemetry = telemetry
        self.propagate = propagate

    # -- wrappers --------------------------------------------------------------------------
    def stream(self, method_attr: str) -> Any:
        """The wrapper of an async generator method (``send_message``, ``subscribe``)."""

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            opened = None
            with guard("a2a.client.start"):
                opened = self._start(instance, method_attr, args, kwargs)
            if opened is None:
                return wrapped(*args, **kwargs)
            span, kwargs, owned, method = opened
            if not owned:  # a framework's remote-agent span, enriched: it ends with the framework's run
                return _observed(in_context(wrapped(*args, **kwargs), trace.set_span_in_context(span.span)), span)
            try:
                stream = wrapped(*args, **kwargs)
            except BaseException as exc:
                span.end(error=exc)
                raise
            outcome = P.Outcome()

            def on_end(s: SemanticSpan, abandoned: bool) -> None:
                outcome.apply(s)

            def complete() -> bool:  # a caller that leaves once it has the whole result did not abandon the call
                return outcome.settled() or (method == P.SEND_MESSAGE and outcome.events > 0)  # unary: one event

            return wrap_stream(in_context(stream, trace.set_span_in_context(span.span)), span,
                               on_chunk=outcome.add, on_end=on_end, is_error=_is_error_for(span), complete=complete)

        return wrapper

    def call(self, method_attr: str) -> Any:
        """The wrapper of a coroutine method (``get_task``, ``cancel_task``, …)."""

        async def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            opened = None
            with guard("a2a.client.start"):
                opened = self._start(instance, method_attr, args, kwargs)
            if opened is None:
                return await wrapped(*args, **kwargs)
            span, kwargs, _, _ = opened
            token = otel_context.attach(trace.set_span_in_context(span.span))
            try:
                result = await wrapped(*args, **kwargs)
            except BaseException as exc:
                P.end_with(span, exc)
                raise
            finally:
                otel_context.detach(token)
            with guard("a2a.client.result"):
                _record_plain_result(span, result)
            span.end()
            return result

        return wrapper

    # -- start -----------------------------------------------------------------------------
    def _start(self, client: Any, method_attr: str, args: tuple, kwargs: dict
               ) -> tuple[SemanticSpan, dict, bool, str] | None:
        """The call's span (a framework's remote-agent span when one waits for the call: then not ours to end), the
        call's keyword arguments carrying its context, whether the span is ours to end, and ``a2a.method.name``."""
        request = kwargs.get("request", args[0] if args else None)
        card = getattr(client, "_card", None)
        attrs = P.card_attributes(card)
        if method_attr == "send_message":
            config = getattr(client, "_config", None)
            streaming = bool(getattr(config, "streaming", False)) and bool(
                getattr(getattr(card, "capabilities", None), "streaming", False))
            method = P.SEND_STREAMING_MESSAGE if streaming else P.SEND_MESSAGE
        else:
            method = STREAMS.get(method_attr) or METHODS[method_attr]
        attrs[A.A2A_METHOD_NAME] = method
        tenant = getattr(request, "tenant", None)
        if tenant:
            attrs[A.A2A_TENANT] = tenant
        if method in P.AGENT_METHODS:
            message = getattr(request, "message", None)
            attrs[A.A2A_MESSAGE_ID] = getattr(message, "message_id", None) or None
            attrs[A.A2A_TASK_ID] = getattr(message, "task_id", None) or None
            attrs[A.GEN_AI_CONVERSATION_ID] = getattr(message, "context_id", None) or None
            owned = False
            span = claim_remote_agent()  # a framework's span for this remote agent (ADK's RemoteA2aAgent)
            if span is not None:
                attrs.pop(A.GEN_AI_AGENT_NAME, None)  # the framework's name for the agent stays
                attrs.pop(A.AGENT_NAME, None)
                span.set_attributes(attrs)
            else:
                # semconv v1.41 ``invoke_agent`` CLIENT: the remote agent, named after its card
                span = self.telemetry.start_span(Kind.AGENT, getattr(card, "name", None) or None,
                                                 span_kind=SpanKind.CLIENT, attributes=attrs)
                owned = True
            if message is not None and owned and span.records_content:  # parts not converted to be dropped
                span.set_input(P.parts_value(message.parts))
            description = getattr(card, "description", None)
            if description and owned:
                span.set_content(A.GEN_AI_AGENT_DESCRIPTION, description)
        else:
            owned = True
            task_id = getattr(request, "id", None) or getattr(request, "task_id", None)
            if isinstance(task_id, str) and task_id:
                attrs[A.A2A_TASK_ID] = task_id
            if method == "CancelTask":  # its stream (or call) ending canceled is what the caller asked for
                P.CANCEL_REQUESTS.add(task_id)
            span = self.telemetry.start_plain_span(method, span_kind=SpanKind.CLIENT, attributes=attrs)
        try:
            kwargs = dict(kwargs, context=self._carrying(kwargs.get("context"), trace.set_span_in_context(span.span)))
        except Exception:
            if owned:
                span.end()
            raise
        return span, kwargs, owned, method

    def _carrying(self, context: Any, ctx: otel_context.Context) -> Any:
        """A copy of the ``ClientCallContext`` whose ``service_parameters`` carry ``ctx`` (propagation on)
        or no W3C keys (off); the caller's own object is never changed. A ``traceparent`` already there
        (set by the caller or another library) is replaced: one on the wire, naming our span."""
        from a2a.client.client import ClientCallContext

        params = dict(getattr(context, "service_parameters", None) or {})
        stale = [k for k in params if k.lower() in PROPAGATION_KEYS]
        carrier = inject(ctx) if P.propagating(self.propagate) else {}
        if not stale and not carrier:
            return context
        for key in stale:
            del params[key]
        params.update(carrier)
        if context is None:
            return ClientCallContext(service_parameters=params)
        return context.model_copy(update={"service_parameters": params})


def _is_error_for(span: SemanticSpan) -> Any:
    """``is_error`` for a stream: a protocol error is recorded in-band first (its JSON-RPC code)."""

    def is_error(exc: BaseException) -> bool:
        with guard("a2a.client.error"):
            P.record_protocol_error(span, exc)
        return isinstance(exc, Exception)

    return is_error


async def _observed(stream: Any, span: SemanticSpan) -> Any:
    """The events of a call made inside a framework's remote-agent span: its outcome recorded on that span
    (state, status, output) when the stream ends, however it ends; the span itself is the framework's to end."""
    outcome = P.Outcome()
    try:
        async for event in stream:
            outcome.add(event)
            yield event
    finally:
        with guard("a2a.client.enriched"):
            outcome.apply(span)


def _record_plain_result(span: SemanticSpan, result: Any) -> None:
    """The task a plain method returned (``GetTask``, ``CancelTask``): its id, state and context id."""
    if type(result).__name__ == "Task":
        outcome = P.Outcome()
        outcome.add(result)
        span.set_attributes({A.A2A_TASK_ID: outcome.task_id, A.A2A_TASK_STATE: outcome.state,
                             A.GEN_AI_CONVERSATION_ID: outcome.context_id})
