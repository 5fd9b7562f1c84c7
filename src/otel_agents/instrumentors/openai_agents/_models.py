"""A ``model`` span for every request through an ``agents.Model``, whoever wrote the model class.

The SDK records a model call (a ``response`` or ``generation`` span) only inside its own model
classes; a model class of the user's own (a subclass of ``agents.Model``, as written for in-house
or LiteLLM-style providers and in the SDK's docs for tests) makes none, so a run over it would
have no model step. :class:`ModelHook` wraps ``get_response`` and ``stream_response`` on
``agents.Model`` and on every subclass that defines them, now and later
(:class:`~otel_agents.instrumentors._hierarchy.HierarchyPatch`), and opens one model span per
request, current while the model computes it. When the SDK's own ``response``/``generation`` span
starts inside that request (its OpenAI model classes), the processor fills the hook's span with
it instead of opening a second one: one request is one model span either way.

The tools offered (the request's ``tools`` and ``handoffs``) are written as the span opens, from the
request's own arguments: a ``generation`` span's data has none, a ``response`` span's has them only
when a Response came back, and a failed request offered them all the same.

No span when the SDK's tracing is off for the run (``ModelTracing.DISABLED``), or outside a run we
trace; with ``ENABLED_WITHOUT_DATA`` (``trace_include_sensitive_data=False``) the span has no
content, as the SDK's own spans have none.
"""

from __future__ import annotations

import contextvars
from types import SimpleNamespace
from typing import Any

from opentelemetry import context as otel_context

from ..._spans import SemanticSpan, ToolDefinition, guard, report_internal_error, wrap_stream
from ...semconv import Kind
from .._hierarchy import HierarchyPatch

# The Responses stream events that end a request as failed: the SDK's runner raises ModelBehaviorError at each
# (0.20-0.25) and closes the stream, so the model's own stream never raises it (a failed or incomplete Response: its
# usage and status are the terminal event's response; an ``error`` event has none).
_TERMINAL_FAILURES = frozenset({"response.failed", "response.incomplete", "error", "response.error"})
_TRACING_ARG = 6  # get_response/stream_response(system_instructions, input, model_settings, tools,
#                   output_schema, handoffs, tracing, *, ...)


class ModelCall:
    """One request through a model: our span, where it runs, and whether the SDK's span filled it."""

    __slots__ = ("sem", "model", "agent", "trace", "content", "adopted", "args", "kwargs", "final", "items", "failure")

    def __init__(self, sem: SemanticSpan, model: Any, agent: Any, trace_rec: Any, content: bool,
                 args: tuple, kwargs: dict):
        self.sem = sem
        self.model = model
        self.agent = agent
        self.trace = trace_rec
        self.content = content
        self.adopted = False  # the SDK's own response/generation span filled ``sem``
        self.args = args
        self.kwargs = kwargs
        self.final: Any = None  # a stream's terminal Response
        self.items: list[Any] = []  # a stream's output items as they were done
        self.failure: Any = None  # a stream's terminal failure event (_TERMINAL_FAILURES)


def _arg(args: tuple, kwargs: dict, index: int, name: str) -> Any:
    return args[index] if len(args) > index else kwargs.get(name)


def _offered_tools(tools: Any, handoffs: Any) -> list[ToolDefinition]:
    """The SDK's ``tools`` (function tools by name, description and JSON schema; hosted tools by their name,
    as their type) and ``handoffs`` (the function tools the model calls to hand off) as tool definitions."""
    out: list[ToolDefinition] = []
    for t in tools or ():
        schema = getattr(t, "params_json_schema", None)
        if schema is not None:
            out.append(ToolDefinition(getattr(t, "name", ""), getattr(t, "description", None), schema))
        else:
            kind = str(getattr(t, "name", None) or type(t).__name__)
            out.append(ToolDefinition(kind, None, None, type=kind))
    for h in handoffs or ():
        out.append(ToolDefinition(getattr(h, "tool_name", ""), getattr(h, "tool_description", None),
                                  getattr(h, "input_json_schema", None)))
    return out


class ModelHook:
    """The wrappers on ``agents.Model``'s interface; :meth:`remove` takes them off."""

    def __init__(self, processor: Any):
        from agents.models.interface import Model

        self.processor = processor
        # The request this hook has open in the current context. One variable per hook: another
        # instrumentation's hook on the same class (a second instrument() on another provider) neither
        # passes through on our request nor lends its request to our processor.
        self.current: contextvars.ContextVar[ModelCall | None] = contextvars.ContextVar(
            f"otel_agents_agents_model_call_{id(self)}", default=None)
        processor.current_call = self.current
        self.patch = HierarchyPatch(Model, {"get_response": self._get_response, "stream_response": self._stream_response},
                                    site="openai_agents.model")

    def remove(self) -> None:
        self.patch.remove()

    # -- one request ---------------------------------------------------------------------------
    def _begin(self, instance: Any, args: tuple, kwargs: dict) -> ModelCall | None:
        """Open the request's span, or ``None`` (pass through: a ``super()`` call of a request already
        open, tracing off for the run, or no run of ours around it)."""
        current = self.current.get()
        if current is not None and current.model is instance and not current.sem.ended:
            return None
        if not self.processor.active:
            return None
        tracing = _arg(args, kwargs, _TRACING_ARG, "tracing")
        if tracing is not None:
            is_disabled = getattr(tracing, "is_disabled", None)
            if is_disabled is not None and is_disabled():
                return None
        where = self.processor.current_step()
        if where is None:
            return None
        parent, agent, trace_rec = where
        model = getattr(instance, "model", None)
        name = model if isinstance(model, str) and model else type(instance).__name__
        sem = self.processor.telemetry.start_span(Kind.MODEL, name, parent=parent)
        if isinstance(model, str) and model:
            sem.set_model(request_model=model)
        try:  # not `with guard(...)`: two calls fewer, on every model request
            # Where the SDK's OpenAI model classes connect (their AsyncOpenAI client's base_url) and the output
            # format the request asks for: a structured output schema (not plain text) is sent as JSON schema.
            sem.set_server(getattr(getattr(instance, "_client", None), "base_url", None))
            sem.set_request_output(_output_type(_arg(args, kwargs, 4, "output_schema")))
        except Exception as exc:  # noqa: BLE001 - as guard() does
            report_internal_error("openai_agents.model_request", exc)
        include_data = getattr(tracing, "include_data", None) if tracing is not None else None
        content = include_data is None or include_data()
        if content and sem.records_content:  # content: not converted when it would be dropped
            sem.set_tool_definitions(_offered_tools(_arg(args, kwargs, 3, "tools"), _arg(args, kwargs, 5, "handoffs")))
        return ModelCall(sem, instance, agent, trace_rec, content, args, kwargs)

    def _response_of(self, call: ModelCall, output: Any, usage: Any, response_id: Any) -> Any:
        """The span data the processor's model-end reads (a ``response`` span's shape) for a model
        response the SDK did not trace itself."""
        args, kwargs = call.args, call.kwargs
        response = SimpleNamespace(model=None, temperature=None, top_p=None, max_output_tokens=None,
                                   id=response_id, output=list(output or ()) if call.content else [],
                                   status=None, incomplete_details=None,
                                   instructions=_arg(args, kwargs, 0, "system_instructions") if call.content else None,
                                   tools=None,  # written as the span opened (_begin)
                                   usage=None)
        return SimpleNamespace(response=response, input=_arg(args, kwargs, 1, "input") if call.content else None,
                               usage=usage)

    def _end(self, call: ModelCall, result: Any = None, error: BaseException | None = None) -> None:
        if not call.adopted and result is not None:
            with guard("openai_agents.model_hook.end"):
                data = self._response_of(call, getattr(result, "output", None), _usage_dict(getattr(result, "usage", None)),
                                         getattr(result, "response_id", None))
                self.processor.model_end_of(call, data)
        self.processor.end_span(call.sem, error)

    # -- wrappers ------------------------------------------------------------------------------
    def _get_response(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        try:  # not `with guard(...)`: every model request runs this
            call = self._begin(instance, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - as guard() does
            report_internal_error("openai_agents.model_hook.begin", exc)
            call = None
        if call is None:
            return wrapped(*args, **kwargs)
        return self._run(call, wrapped, args, kwargs)

    async def _run(self, call: ModelCall, wrapped: Any, args: tuple, kwargs: dict) -> Any:
        token = self.current.set(call)
        try:
            current = otel_context.attach(call.sem.context())  # as call.sem.activate(), inline (no object per call)
            try:
                result = await wrapped(*args, **kwargs)
            finally:
                otel_context.detach(current)
        except BaseException as exc:
            self._end(call, error=exc)
            raise
        finally:
            self.current.reset(token)
        self._end(call, result)
        return result

    def _stream_response(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        call = None
        with guard("openai_agents.model_hook.begin"):
            call = self._begin(instance, args, kwargs)
        if call is None:
            return wrapped(*args, **kwargs)
        token = self.current.set(call)
        try:
            with call.sem.activate():
                stream = wrapped(*args, **kwargs)
        except BaseException as exc:
            self._end(call, error=exc)
            raise
        finally:
            self.current.reset(token)
        try:
            wrapped_stream = wrap_stream(stream, call.sem, on_chunk=lambda event: _note_event(call, event),
                                         on_end=lambda span, abandoned: self._stream_end(call, abandoned),
                                         complete=lambda: call.failure is not None,
                                         missing=lambda: _ended_without_raising(call))
            return CurrentWhileProducing(wrapped_stream, call, self.current)
        except Exception:  # noqa: BLE001 - never lose the user's stream over ours
            call.sem.end()
            return stream

    def _stream_end(self, call: ModelCall, abandoned: bool) -> None:
        if call.adopted:
            return  # the SDK's span filled it
        final = call.final if call.final is not None else getattr(call.failure, "response", None)
        if final is None:
            # No terminal response (left, failed, or cut short: the span layer says which): the items done so far,
            # with no status (no finish reason) and no usage, both the terminal response's to give.
            if call.items:
                self.processor.model_end_of(call, self._response_of(call, call.items, None, None))
            return
        output = getattr(final, "output", None) or call.items
        data = self._response_of(call, output, _usage_dict(getattr(final, "usage", None)), getattr(final, "id", None))
        data.response.model = getattr(final, "model", None)
        data.response.status = getattr(final, "status", None)
        self.processor.model_end_of(call, data)


def _note_event(call: ModelCall, event: Any) -> None:
    kind = getattr(event, "type", None)
    if kind == "response.completed":
        call.final = getattr(event, "response", None)
    elif kind == "response.output_item.done":
        call.items.append(getattr(event, "item", None))
    elif kind in _TERMINAL_FAILURES:
        call.failure = event


def _ended_without_raising(call: ModelCall) -> str | None:
    """``wrap_stream``'s ``missing``: a stream that ended without raising. After a terminal failure event (the
    consumer, the SDK's runner, stops there and raises it itself) the request failed: recorded here as the
    ``ModelBehaviorError`` the runner raises, with the event's type and the response's status; else the terminal
    event never sent, unless the SDK's span filled ours."""
    if call.failure is not None:
        from agents.exceptions import ModelBehaviorError

        response = getattr(call.failure, "response", None)
        details = getattr(response, "incomplete_details", None) or getattr(response, "error", None) \
            or getattr(call.failure, "message", None)
        reason = getattr(details, "reason", None) or getattr(details, "message", None) or details
        text = f"the model's stream ended with {getattr(call.failure, 'type', None)}"
        call.sem.record_error(ModelBehaviorError(f"{text}: {reason}" if reason else text))
        return None
    return None if call.adopted or call.final is not None else "response.completed"


def _usage_dict(usage: Any) -> Any:
    """The SDK's ``Usage`` (a dataclass) or a Responses usage object, as the dict the converter reads."""
    if usage is None:
        return None
    dump = getattr(usage, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    out = {}
    for key in ("input_tokens", "output_tokens", "total_tokens"):
        value = getattr(usage, key, None)
        if value is not None:
            out[key] = value
    for key in ("input_tokens_details", "output_tokens_details"):
        details = getattr(usage, key, None)
        dump = getattr(details, "model_dump", None)
        if callable(dump):
            out[key] = dump(exclude_none=True)
    if getattr(usage, "requests", 1) == 0 and not any(out.get(k) for k in ("input_tokens", "output_tokens")):
        return None  # the SDK's empty Usage(): the model reported nothing
    return out


class CurrentWhileProducing:
    """An async stream proxy that makes the request's span current, and the request known to the
    processor, while the model computes each event (so spans it opens nest under the model span)."""

    def __init__(self, stream: Any, call: ModelCall, current: contextvars.ContextVar):
        self._stream = stream
        self._call = call
        self._current = current

    def __aiter__(self) -> "CurrentWhileProducing":
        return self

    async def __anext__(self) -> Any:
        token = self._current.set(self._call)
        try:
            current = otel_context.attach(self._call.sem.context())  # as sem.activate(), inline (no object per event)
            try:
                return await self._stream.__anext__()
            finally:
                otel_context.detach(current)
        finally:
            self._current.reset(token)

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _output_type(output_schema: Any) -> str | None:
    """``json`` when the request carries an output schema other than plain text (the SDK's model classes send it
    as a JSON schema: ``text.format`` of a Response request, ``response_format`` of a chat completion), else
    ``None``: no output format asked."""
    if output_schema is None:
        return None
    is_plain_text = getattr(output_schema, "is_plain_text", None)
    return None if callable(is_plain_text) and is_plain_text() else "json"
