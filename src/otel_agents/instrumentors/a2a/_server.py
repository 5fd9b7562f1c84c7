"""Server side: wrappers on the request handlers' ``on_*`` methods, the agent executor, push delivery.

Every binding (JSON-RPC, HTTP+JSON, gRPC, and the v0.3 compatibility adapters) calls the same
``RequestHandler`` methods (of a2a-sdk's handlers or of the application's own subclass, each wrapped)
with a ``ServerCallContext``, whose ``state`` holds the request's HTTP headers (``state["headers"]``,
``DefaultServerCallContextBuilder``) or the gRPC servicer context (``state["grpc_context"]``, whose
``invocation_metadata()`` are the gRPC metadata): the carrier is read there. One request is one span:
a handler method called while a span of ours serves the same ``ServerCallContext`` (an override's
``super()`` call, a handler delegating to another) joins it (:data:`_SERVING`). The span's context is
kept in the same ``state`` (under a private key) for the agent executor, which a2a-sdk runs in a task
of its own: before 1.2.3 a resumed task's executor runs in the context of the task's *first* request,
so the executor wrapper re-attaches the context of the request it is executing.
"""

from __future__ import annotations

import contextvars
import weakref
from collections import OrderedDict
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ..._spans import SemanticSpan, Telemetry, entered, guard, in_context, in_forked_child, wrap_stream
from ..._spans.address import server_attributes
from ..._spans.propagation import extract, inject, run_attributes_of, server_parent
from ...semconv import Kind, attributes as A
from .._patch import Patch
from . import _protocol as P

STATE_KEY = "otel_agents.a2a.context"
"""``ServerCallContext.state`` key of ``(context, run attributes)`` of the request's span."""
_SERVING = otel_context.create_key("otel_agents.a2a.serving")
"""OTel context key, around a handler method's body: the :class:`_Serving` request of its span."""

# RequestHandler method → a2a.method.name.
METHODS = {
    "on_message_send": P.SEND_MESSAGE,
    "on_get_task": "GetTask",
    "on_list_tasks": "ListTasks",
    "on_cancel_task": "CancelTask",
    "on_create_task_push_notification_config": "CreateTaskPushNotificationConfig",
    "on_get_task_push_notification_config": "GetTaskPushNotificationConfig",
    "on_list_task_push_notification_configs": "ListTaskPushNotificationConfigs",
    "on_delete_task_push_notification_config": "DeleteTaskPushNotificationConfig",
    "on_get_extended_agent_card": "GetExtendedAgentCard",
}
STREAMS = {"on_message_send_stream": P.SEND_STREAMING_MESSAGE, "on_subscribe_to_task": "SubscribeToTask"}

_MAX_TASKS = 1024  # task id → context of its latest request, for push notifications (bounded, oldest out)
# The requests that act on a task (run its agent, cancel it): its push notifications are their effects. A read
# (GetTask, SubscribeToTask, ListTasks…), perhaps from another trace (a dashboard), leaves them where they are.
_ACTING = P.AGENT_METHODS | {"CancelTask"}
# (headers to add, span) of the push notification being sent in this task.
_PUSH: contextvars.ContextVar[tuple[dict[str, str], SemanticSpan] | None] = contextvars.ContextVar(
    "otel_agents_a2a_push", default=None)


class ServerSide:
    """The request handler, agent executor and push sender wrappers, and the executor classes patched."""

    def __init__(self, telemetry: Telemetry, propagate: bool | None = None):
        self.telemetry = telemetry
        self.propagate = propagate
        self.executor_patches: dict[type, list[Patch]] = {}
        self.proxied_clients: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
        self._forget()
        in_forked_child(ServerSide._forget, self)

    def _forget(self) -> None:
        """No task's context known: a new server side's, and a forked child's (the parent's tasks are its own)."""
        self.task_contexts: "OrderedDict[str, otel_context.Context]" = OrderedDict()

    def remove(self) -> None:
        """Take the executor wrappers off, and give each push sender its own httpx client back."""
        for patches in self.executor_patches.values():
            for patch in patches:
                patch.remove()
        self.executor_patches.clear()
        self.task_contexts.clear()
        for sender, client in list(self.proxied_clients.items()):
            with guard("a2a.push.restore"):
                if isinstance(getattr(sender, "_client", None), _PushClient):
                    sender._client = client
        self.proxied_clients.clear()

    # -- request handler -------------------------------------------------------------------
    def call(self, method_attr: str) -> Any:
        """The wrapper of a coroutine ``on_*`` method."""

        async def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            opened = None
            with guard("a2a.server.start"):
                opened = self._open(instance, METHODS[method_attr], args, kwargs)
            if opened is None:
                return await wrapped(*args, **kwargs)
            span, ctx, run_attrs = opened
            try:
                with entered(ctx, run_attrs):
                    result = await wrapped(*args, **kwargs)
            except BaseException as exc:
                P.end_with(span, exc)
                raise
            with guard("a2a.server.result"):
                self._record_result(span, method_attr, result)
            span.end()
            return result

        return wrapper

    def stream(self, method_attr: str) -> Any:
        """The wrapper of an async generator ``on_*`` method (``on_message_send_stream``, ``on_subscribe_to_task``)."""

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            opened = None
            with guard("a2a.server.start"):
                opened = self._open(instance, STREAMS[method_attr], args, kwargs)
            if opened is None:
                return wrapped(*args, **kwargs)
            span, ctx, run_attrs = opened
            try:
                with entered(ctx, run_attrs):  # a plain `def` returning another handler's stream calls it here
                    stream = wrapped(*args, **kwargs)
            except BaseException as exc:
                span.end(error=exc)
                raise
            if not hasattr(stream, "__aiter__"):  # an `async def` override: no binding can iterate it
                span.end(error=TypeError(f"{method_attr} returned {type(stream).__name__}, not an async iterator"))
                return stream
            outcome = P.Outcome()

            def on_chunk(event: Any) -> None:
                outcome.add(event)
                self._remember(outcome.task_id, ctx, STREAMS[method_attr])

            def on_end(s: SemanticSpan, abandoned: bool) -> None:
                if not abandoned and not outcome.settled() and _consumer_cancelled():
                    s.mark_abandoned()  # the client left (a2a-sdk ends the stream as if the task had settled)
                if s.kind is Kind.AGENT:
                    outcome.apply(s)

            def is_error(exc: BaseException) -> bool:
                with guard("a2a.server.error"):
                    P.record_protocol_error(span, exc)
                return isinstance(exc, Exception)

            return wrap_stream(in_context(stream, ctx, run_attrs), span, on_chunk=on_chunk, on_end=on_end,
                               is_error=is_error)

        return wrapper

    def _open(self, handler: Any, method: str, args: tuple, kwargs: dict
              ) -> tuple[SemanticSpan, otel_context.Context, dict[str, str]] | None:
        """The request's span, the context its handler method runs in (the span's, marked as serving the
        request) and its run attributes; ``None`` when a span of ours serves this request already (the
        method then joins it)."""
        params = kwargs.get("params", args[0] if args else None)
        context = kwargs.get("context", args[1] if len(args) > 1 else None)
        request = context if context is not None else params  # a bare call without either: never joined
        serving = otel_context.get_value(_SERVING)
        if isinstance(serving, _Serving) and request is not None and serving.request is request:
            self._join(serving, handler, method)
            return None
        card = _card_of(handler)
        span, ctx, run_attrs = self._start(handler, card, method, params, context)
        serving = _Serving(request, span, named=bool(getattr(card, "name", None)))
        return span, otel_context.set_value(_SERVING, serving, ctx), run_attrs

    def _join(self, serving: "_Serving", handler: Any, method: str) -> None:
        """A handler method of a request a span of ours serves (an override's ``super()`` call, a handler
        delegating to another): its executor gets the request's context, its card names a span opened
        without one."""
        if method in _ACTING:
            with guard("a2a.server.executor"):
                self._patch_executor(getattr(handler, "agent_executor", None))
        card = _card_of(handler)
        if serving.span.kind is Kind.AGENT and not serving.named and getattr(card, "name", None):
            serving.named = True
            serving.span.rename(card.name)
            serving.span.set_attributes(_local_card_attributes(card))
            if getattr(card, "description", None):
                serving.span.set_content(A.GEN_AI_AGENT_DESCRIPTION, card.description)

    def _start(self, handler: Any, card: Any, method: str, params: Any, context: Any
               ) -> tuple[SemanticSpan, otel_context.Context, dict[str, str]]:
        state = getattr(context, "state", None)
        remote = _extracted(state) if P.propagating(self.propagate) and state is not None else None
        parent = server_parent(remote)  # under an HTTP server span of this request, if one is current
        run_attrs = run_attributes_of(remote)
        attrs = _local_card_attributes(card)
        attrs[A.A2A_METHOD_NAME] = method
        tenant = getattr(params, "tenant", None) or getattr(context, "tenant", None)
        if isinstance(tenant, str) and tenant:
            attrs[A.A2A_TENANT] = tenant
        if method in P.AGENT_METHODS:
            message = getattr(params, "message", None)
            attrs[A.A2A_MESSAGE_ID] = getattr(message, "message_id", None) or None
            attrs[A.A2A_TASK_ID] = getattr(message, "task_id", None) or None
            attrs[A.GEN_AI_CONVERSATION_ID] = getattr(message, "context_id", None) or None
            # the remote agent's own run, named after its card
            span = self.telemetry.start_span(Kind.AGENT, getattr(card, "name", None) or None, parent=parent,
                                             span_kind=SpanKind.SERVER, attributes={**run_attrs, **attrs})
            if message is not None and span.records_content:  # parts not converted to be dropped
                span.set_input(P.parts_value(message.parts))
            description = getattr(card, "description", None)
            if description:
                span.set_content(A.GEN_AI_AGENT_DESCRIPTION, description)
            with guard("a2a.server.executor"):
                self._patch_executor(getattr(handler, "agent_executor", None))
        else:
            task_id = getattr(params, "id", None) or getattr(params, "task_id", None)
            if isinstance(task_id, str) and task_id:
                attrs[A.A2A_TASK_ID] = task_id
            span = self.telemetry.start_plain_span(method, span_kind=SpanKind.SERVER, parent=parent,
                                                   attributes={**run_attrs, **attrs})
            if method == "CancelTask":
                P.CANCEL_REQUESTS.add(task_id)  # the task's streams and calls ending canceled: asked for
                with guard("a2a.server.executor"):
                    self._patch_executor(getattr(handler, "agent_executor", None))
        ctx = trace.set_span_in_context(span.span, parent)
        if isinstance(state, dict):
            state[STATE_KEY] = (ctx, run_attrs)
        task_id = attrs.get(A.A2A_TASK_ID)
        if task_id:
            self._remember(task_id, ctx, method)
        return span, ctx, run_attrs

    def _record_result(self, span: SemanticSpan, method_attr: str, result: Any) -> None:
        outcome = P.Outcome()
        outcome.add(result)
        self._remember(outcome.task_id, trace.set_span_in_context(span.span), METHODS[method_attr])
        if span.kind is Kind.AGENT:
            outcome.apply(span)
        elif type(result).__name__ == "Task":
            span.set_attributes({A.A2A_TASK_ID: outcome.task_id, A.A2A_TASK_STATE: outcome.state,
                                 A.GEN_AI_CONVERSATION_ID: outcome.context_id})

    def _remember(self, task_id: str | None, ctx: otel_context.Context, method: str) -> None:
        """``ctx`` (a request's span) is where the task's push notifications go from now on, if ``method`` acts on
        the task (:data:`_ACTING`)."""
        if not task_id or method not in _ACTING:
            return
        self.task_contexts[task_id] = ctx
        self.task_contexts.move_to_end(task_id)
        while len(self.task_contexts) > _MAX_TASKS:
            self.task_contexts.popitem(last=False)

    # -- agent executor --------------------------------------------------------------------
    def _patch_executor(self, executor: Any) -> None:
        """Wrap ``execute``/``cancel`` of the executor's class (the class in its MRO that defines each),
        once per class; taken off by :meth:`remove`."""
        if executor is None:
            return
        cls = type(executor)
        if cls in self.executor_patches:
            return
        patches: list[Patch] = []
        self.executor_patches[cls] = patches
        for name in ("execute", "cancel"):
            owner = next((c for c in cls.__mro__ if name in c.__dict__), None)
            if owner is None or getattr(owner.__dict__[name], "__isabstractmethod__", False):
                continue
            if any(p.owner is owner and p.name == name for ps in self.executor_patches.values() for p in ps):
                continue
            patches.append(Patch(owner, name, self._execute))

    async def _execute(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """Run the executor in the context of the request it serves (its own span, its run attributes)."""
        stash = None
        with guard("a2a.executor.context"):
            request_context = kwargs.get("context", args[0] if args else None)
            state = getattr(getattr(request_context, "call_context", None), "state", None)
            stash = state.get(STATE_KEY) if isinstance(state, dict) else None
        if stash is None:
            return await wrapped(*args, **kwargs)
        ctx, run_attrs = stash
        with entered(ctx, run_attrs):
            return await wrapped(*args, **kwargs)

    # -- push notifications ----------------------------------------------------------------
    async def dispatch_notification(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``BasePushNotificationSender._dispatch_notification(event, push_info, task_id)``: the webhook POST
        as a CLIENT span under the span of the task's latest request that acts on it (:data:`_ACTING`), its
        context in the POST's headers."""
        opened = None
        with guard("a2a.push.start"):
            opened = self._start_push(instance, args, kwargs)
        if opened is None:
            return await wrapped(*args, **kwargs)
        span, headers = opened
        token = _PUSH.set((headers, span))
        try:
            delivered = await wrapped(*args, **kwargs)
        except BaseException as exc:
            P.end_with(span, exc)
            raise
        finally:
            _PUSH.reset(token)
        if delivered is False:
            span.set_error("delivery_failed")
        span.end()
        return delivered

    def _start_push(self, sender: Any, args: tuple, kwargs: dict) -> tuple[SemanticSpan, dict[str, str]] | None:
        push_info = kwargs.get("push_info", args[1] if len(args) > 1 else None)
        task_id = kwargs.get("task_id", args[2] if len(args) > 2 else None)
        url = getattr(push_info, "url", None)
        if not isinstance(url, str) or not url:
            return None
        parent = self.task_contexts.get(task_id) if isinstance(task_id, str) else None
        attrs = {"http.request.method": "POST", **server_attributes(url), "url.path": _path_of(url),
                 A.A2A_TASK_ID: task_id}
        span = self.telemetry.start_plain_span("POST", span_kind=SpanKind.CLIENT, parent=parent, attributes=attrs)
        self._proxy_client(sender)
        headers = inject(trace.set_span_in_context(span.span, parent)) if P.propagating(self.propagate) else {}
        return span, headers

    def _proxy_client(self, sender: Any) -> None:
        """Give the sender an httpx client proxy whose ``post`` adds the headers of the current push."""
        client = getattr(sender, "_client", None)
        if client is None or isinstance(client, _PushClient):
            return
        self.proxied_clients[sender] = client  # (weakly: a sender gone is forgotten) for remove() to put back
        sender._client = _PushClient(client)


class _Serving:
    """The request a span of ours serves: its ``ServerCallContext`` (else its params), the span, whether a card
    named it."""

    __slots__ = ("request", "span", "named")

    def __init__(self, request: Any, span: SemanticSpan, named: bool):
        self.request = request
        self.span = span
        self.named = named


def _card_of(handler: Any) -> Any:
    """The handler's own Agent Card (a2a-sdk's handlers keep it as ``_agent_card`` or ``agent_card``), or ``None``."""
    return getattr(handler, "_agent_card", None) or getattr(handler, "agent_card", None)


def _local_card_attributes(card: Any) -> dict[str, Any]:
    """The card's identity on a server span: not its URL's address, which this request need not have reached."""
    attrs = P.card_attributes(card)
    attrs.pop(A.SERVER_ADDRESS, None)
    attrs.pop(A.SERVER_PORT, None)
    return attrs


class _PushClient:
    """The push sender's httpx client, adding the trace context of the notification being sent."""

    def __init__(self, client: Any):
        self._otel_agents_client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._otel_agents_client, name)

    async def post(self, url: Any, *args: Any, **kwargs: Any) -> Any:
        push = _PUSH.get()
        if push is not None and push[0]:
            kwargs["headers"] = {**(kwargs.get("headers") or {}), **push[0]}
        response = await self._otel_agents_client.post(url, *args, **kwargs)
        if push is not None:
            with guard("a2a.push.status"):
                push[1].set_attribute("http.response.status_code", response.status_code)
        return response


def _path_of(url: str) -> str | None:
    """The URL's path (``/`` when it has none), ``None`` when it cannot be split (``http://[::1``)."""
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).path or "/"
    except ValueError:
        return None


def _consumer_cancelled() -> bool:
    """Whether the task consuming a stream is being cancelled (the client disconnected): a2a-sdk's task
    subscription swallows that ``CancelledError`` and ends its stream as a finished one would end."""
    import asyncio

    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop running
        return False
    cancelling = getattr(task, "cancelling", None)  # Python 3.11+
    return cancelling is not None and cancelling() > 0


def _extracted(state: Any) -> otel_context.Context | None:
    """The context the request carries: its HTTP headers, else its gRPC metadata, else ``None``."""
    headers = state.get("headers") if hasattr(state, "get") else None
    if hasattr(headers, "items"):
        return extract(dict(headers.items()))
    grpc_context = state.get("grpc_context") if hasattr(state, "get") else None
    metadata = getattr(grpc_context, "invocation_metadata", None)
    if metadata is not None:
        pairs = {}
        for item in metadata() or ():
            key, value = (item.key, item.value) if hasattr(item, "key") else item
            pairs[key] = value
        return extract(pairs)
    return None

