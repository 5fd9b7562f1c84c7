"""The dispatcher span handler: one semantic span per logical LlamaIndex call.

The dispatcher calls ``new_span`` on entry and ``prepare_to_exit_span`` /
``prepare_to_drop_span`` on exit, in the same contextvars context as the
decorated body (for sync and async methods alike, and across the workflow
runtime's step tasks and executor threads). So the handler opens the span, makes
it current on entry (user code and child spans nest under it) and detaches in
the same context on exit. What each dispatcher span becomes is decided by
:func:`._plan.plan_for`; the rest pass through.

Our per-span state rides in the handler's own ``open_spans`` map (the
dispatcher's bookkeeping): :class:`_Open` is returned by ``new_span`` and
removed by the base class on exit or drop.

A call LlamaIndex fails to report the end of (its dispatcher formats the exception with ``str(e)``
before ``span_drop``: an exception whose ``__str__`` raises skips the drop) would leave our span open
and current. :func:`tool_call_wrappers` wrap every tool's ``call``/``acall``/``__call__`` outside the
dispatcher: the records opened inside the call and still open when an exception escapes it are
ended with that exception and detached, innermost first, before it propagates unchanged.

Cost: under OTel's ``suppress_instrumentation()`` ``new_span`` returns at once
(nothing is recorded, kept or made current; the exit hooks then find no record);
arguments and results are read into content (events, messages, tool arguments)
only when the span records content.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from typing import Any, Callable, Mapping

from llama_index.core.instrumentation.span_handlers import BaseSpanHandler, NullSpanHandler
from opentelemetry import context as otel_context
from opentelemetry import trace
from pydantic import Field

from ..._spans import (SemanticSpan, Telemetry, guard, in_forked_child, instrumentation_enabled, report_internal_error,
                       semantic_span_for, settle_context)
from ...semconv import Kind
from ...semconv import attributes as A
from . import _extract as extract
from . import _plan
from ._agents import AgentSpans
from ._streaming import ModelStreams, hold_response_stream

_CONTROL_FLOW = frozenset({"WorkflowCancelledByUser", "WorkflowDone"})
REJECTED_OUTPUT = "output_rejected"
"""``error.type`` of a workflow agent step whose answer the agent rejected and asked the model again for."""
_MAX_OPEN = 10_000  # dispatcher spans whose exit never came (a sync call returning a Future) are evicted past this


def is_control_flow(exc: BaseException) -> bool:
    """Whether ``exc`` ends a run without being an error: cancellation and the workflow
    runtime's ``WorkflowCancelledByUser`` / ``WorkflowDone`` (and any non-``Exception``)."""
    return (isinstance(exc, asyncio.CancelledError) or type(exc).__name__ in _CONTROL_FLOW
            or not isinstance(exc, Exception))


def step_stop_reason(step: str | None, exc: BaseException) -> str | None:
    """The stop reason of the agent whose workflow step ``step`` failed with ``exc``: ``max_turns`` for the
    ``WorkflowRuntimeError`` a workflow agent's ``parse_agent_output`` step raises when its run reached
    ``max_iterations`` (``early_stopping_method="force"``, the default; that step raises no other), else ``None``."""
    return "max_turns" if step == "parse_agent_output" and type(exc).__name__ == "WorkflowRuntimeError" else None


FORCED_ANSWER_METHOD = "_generate_early_stopping_response"
"""What a workflow agent (``BaseWorkflowAgent``) and ``AgentWorkflow`` call when a run reached
``max_iterations`` with ``early_stopping_method="generate"``: the model is asked for a last answer."""


def forced_answer_wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """wrapt wrapper of :data:`FORCED_ANSWER_METHOD`: the run was cut off at its cap and answers once more
    because of it, so the agent whose step calls it (the nearest agent span above the current span: the
    ``parse_agent_output`` step's) gets the stop reason ``max_turns``."""
    with guard("llama_index.forced_answer"):
        span = semantic_span_for(trace.get_current_span())
        while span is not None and span.kind is not Kind.AGENT:
            span = span.parent
        if span is not None:
            span.set_stop_reason("max_turns")
    return wrapped(*args, **kwargs)


class _Open:
    """Our state for one open dispatcher span.

    A plain slotted object rather than LlamaIndex's pydantic ``BaseSpan``: one is
    made per dispatcher span, and building a pydantic model costs ~20× more. The
    dispatcher only keeps it in ``open_spans`` (it reads the keys, never the values).
    """

    __slots__ = ("id_", "parent_id", "plan", "semantic", "enclosing", "enclosing_object", "context", "token",
                 "tool_call_id", "ran_tool", "agents", "before", "parent_context", "attached")

    def __init__(self, id_: str, parent_id: str | None, plan: Any, enclosing: Any, enclosing_object: Any):
        self.id_ = id_
        self.parent_id = parent_id
        self.plan = plan                          # _plan.Plan, or None for a pass-through span
        self.semantic: Any = None                 # the SemanticSpan we opened for it
        self.enclosing = enclosing                # the nearest semantic span: ours, else the parent's
        self.enclosing_object = enclosing_object  # id() of the object whose call opened ``enclosing``
        self.context: Any = None                  # the OTel context we attached on entry
        self.token: Any = None
        self.tool_call_id: Any = None             # a call_tool step's tool call id, for the tool span under it
        self.ran_tool = False                     # a tool span opened directly under this (step) span
        self.agents: Any = None                   # AgentSpans of an AgentWorkflow run
        self.before: Any = None                   # the OTel context current before any handler's entry
        self.parent_context: Any = None           # where our span (or, passed through, our children) goes
        self.attached: tuple = ()                 # contexts the handlers made current on entry (those we saw)


class LlamaIndexSpanHandler(BaseSpanHandler[_Open]):
    """Opens, fills and ends our spans for the dispatcher's spans.

    Args:
        telemetry: the span factory.
        bases: the LlamaIndex base classes spans are classified by.
    """

    # Plain fields, not pydantic private attributes: those are read through ``__getattr__``
    # (~2 µs a read, ~5 µs for the base class's ``lock``), several times per dispatcher span.
    telemetry: Any = Field(default=None, exclude=True, repr=False)
    bases: Any = Field(default=None, exclude=True, repr=False)
    model_streams: Any = Field(default=None, exclude=True, repr=False)
    open_spans_lock: Any = Field(default_factory=threading.Lock, exclude=True, repr=False)

    def __init__(self, telemetry: Telemetry, bases: _plan.Bases):
        super().__init__()
        self.telemetry = telemetry
        self.bases = bases
        self.model_streams = ModelStreams()
        in_forked_child(LlamaIndexSpanHandler._forget, self)

    def _forget(self) -> None:
        """In a forked child: no open dispatcher span (the parent's are the parent's to end: ``close_all`` would
        end them a second time) and a lock of its own (another thread may have held the parent's at the fork)."""
        self.open_spans_lock = threading.Lock()
        self.open_spans.clear()

    @property
    def lock(self) -> threading.Lock:
        """The lock around ``open_spans`` (the base class takes it for every insertion and removal)."""
        return self.open_spans_lock

    @classmethod
    def class_name(cls) -> str:
        return "OtelAgentsSpanHandler"

    # -- lookups for the event handler and the instrumentor ----------------------------
    def model_span(self, span_id: str | None) -> SemanticSpan | None:
        """The model span a model event tagged ``span_id`` belongs to (open call or running stream)."""
        if not span_id:
            return None
        record = self.open_spans.get(span_id)
        if record is not None:
            span = record.enclosing
            return span if span is not None and span.kind is Kind.MODEL else None
        return self.model_streams.span(span_id)

    def agents_of(self, span_id: str | None) -> AgentSpans | None:
        """The agent spans of the ``AgentWorkflow`` run whose dispatcher span is ``span_id``, if it is one."""
        record = self.open_spans.get(span_id) if span_id else None
        return record.agents if record is not None else None

    def enclosing_span(self, span_id: str | None) -> SemanticSpan | None:
        """The nearest semantic span of the open dispatcher span ``span_id``."""
        record = self.open_spans.get(span_id) if span_id else None
        return record.enclosing if record is not None else None

    @property
    def streams(self) -> ModelStreams:
        """Model spans whose stream is still running."""
        return self.model_streams

    def open_count(self) -> int:
        """How many spans the handler holds now (open dispatcher spans and running streams)."""
        return len(self.open_spans) + len(self.model_streams)

    def close_all(self) -> None:
        """End every span still open (``uninstrument``: no exit will come for them)."""
        with self.lock:
            records = list(self.open_spans.values())
            self.open_spans.clear()
        for record in records:
            with guard("llama_index.close_all"):
                if record.agents is not None:
                    record.agents.close()
                if record.semantic is not None:
                    record.semantic.set_attribute(A.OTEL_AGENTS_SPAN_EVICTED, True)
                    record.semantic.end()
        self.model_streams.clear()

    # -- dispatcher hooks --------------------------------------------------------------
    def new_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                 parent_span_id: str | None = None, tags: dict[str, Any] | None = None,
                 **kwargs: Any) -> _Open | None:
        if not instrumentation_enabled():
            return None  # suppressed: no span, no state (our exit hooks then find no record)
        try:
            return self._enter(id_, bound_args.arguments, instance, parent_span_id, tags)
        except Exception as exc:  # noqa: BLE001 - never reaches the user
            report_internal_error("llama_index.new_span", exc)
            return None

    def prepare_to_exit_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                             result: Any = None, **kwargs: Any) -> _Open | None:
        record = self.open_spans.get(id_)
        if record is None:
            return None
        try:
            with guard("llama_index.exit"):
                if record.semantic is not None:
                    self._exit(record, result)
        finally:
            self._detach(record)
        return record

    def prepare_to_drop_span(self, id_: str, bound_args: inspect.BoundArguments, instance: Any = None,
                             err: BaseException | None = None, **kwargs: Any) -> _Open | None:
        record = self.open_spans.get(id_)
        if record is None:
            return None
        try:
            with guard("llama_index.drop"):
                span = record.semantic
                if span is not None:
                    flow = err is not None and is_control_flow(err)
                    if record.agents is not None:
                        record.agents.close(err, control_flow=flow)
                    if err is not None:
                        span.record_error(err, control_flow=flow)
                        if isinstance(err, asyncio.CancelledError):  # its consumer left or its task was cancelled
                            span.mark_abandoned()
                        agent = span.parent if record.plan is not None and record.plan.role == _plan.STEP else None
                        reason = step_stop_reason(record.plan.name, err) if agent is not None else None
                        if reason is not None and agent.kind is Kind.AGENT:
                            agent.set_stop_reason(reason)
                    span.end()
        finally:
            self._detach(record)
        return record

    # -- entry -----------------------------------------------------------------------
    def _enter(self, span_id: str, args: Mapping[str, Any], instance: Any, parent_id: str | None,
               tags: dict[str, Any] | None) -> _Open:
        parent = self.open_spans.get(parent_id) if parent_id else None
        if len(self.open_spans) >= _MAX_OPEN:
            self._evict_oldest()
        enclosing = parent.enclosing if parent is not None else None
        enclosing_object = parent.enclosing_object if parent is not None else None
        plan = _plan.plan_for(span_id, instance, tags, self.bases,
                              parent_role=parent.plan.role if parent is not None and parent.plan else None,
                              enclosing_kind=enclosing.kind if enclosing is not None else None,
                              enclosing_instance=enclosing_object)
        record = _Open(span_id, parent_id, plan, enclosing, enclosing_object)
        # Where our span goes, as with ours alone: under the context current when the dispatcher span began, not
        # another handler's span made current for this same call before ours; and where that context is only
        # another handler's span for the dispatcher's parent span (its parent is by LlamaIndex's ids, not ours),
        # under what that parent stands for with us.
        current = otel_context.get_current()
        before = _BEFORE_ENTRY.get()
        record.before = current if before is None else before
        record.parent_context = record.before
        if parent is not None and parent.attached and any(record.before is ctx for ctx in parent.attached):
            record.parent_context = parent.context if parent.context is not None else parent.parent_context
        if current is not record.before:
            record.attached = (current,)
        if plan is None:
            return record
        opened = _OPENED_IN_CALL.get()
        if opened is not None:
            opened.append(record)
        explicit_parent = record.parent_context
        if plan.role == _plan.STEP and parent is not None and parent.agents is not None:
            explicit_parent = parent.agents.parent_for_step(extract.step_event(args)) or explicit_parent
        span = self.telemetry.start_span(plan.kind, plan.name, parent=explicit_parent,
                                          operation=plan.operation, workflow=plan.workflow)
        record.semantic = record.enclosing = span
        record.enclosing_object = id(instance) if instance is not None else None
        with guard("llama_index.span_start"):
            self._fill_start(record, span, args, instance, parent)
        record.context = trace.set_span_in_context(span.span, current)
        record.token = otel_context.attach(record.context)
        record.attached += (record.context,)
        return record

    def _fill_start(self, record: _Open, span: SemanticSpan, args: Mapping[str, Any], instance: Any,
                    parent: _Open | None) -> None:
        role = record.plan.role
        content = span.records_content  # else content would be built to be dropped
        value = span.records_value  # likewise an input written nowhere (in OTel GenAI alone, a step's)
        if role == _plan.RUN_AGENT:
            span.set_agent(record.plan.name, description=getattr(instance, "description", None))
            if value:
                span.set_input(extract.run_input(args),
                               messages=extract.run_messages(args) if span.input_as_messages else None)
        elif role in (_plan.RUN_MULTI_AGENT, _plan.RUN_WORKFLOW):
            span.set_attribute(A.GEN_AI_WORKFLOW_NAME, record.plan.name)
            if value:
                span.set_input(extract.run_input(args), messages=extract.run_messages(args)
                               if role == _plan.RUN_MULTI_AGENT and span.input_as_messages else None)
            if role == _plan.RUN_MULTI_AGENT:
                record.agents = AgentSpans(self.telemetry, span, instance)
        elif role == _plan.STEP:
            event = extract.step_event(args)
            record.tool_call_id = extract.attr(event, "tool_id")
            if value:
                span.set_input(extract.event_payload(event))
        elif role == _plan.MODEL:
            # Model and provider even when not recording (a sampled-out span's metrics use them).
            span.set_model(request_model=record.plan.name, provider=extract.provider(instance),
                           parameters=extract.model_parameters(instance, stream=record.plan.stream)
                           if span.is_recording else None)
            span.set_server(extract.base_url(instance))
            if content:
                span.set_tool_definitions(extract.offered_tools(args))
        elif role == _plan.EMBEDDING:
            span.set_model(request_model=record.plan.name, provider=extract.provider(instance))
            span.set_server(extract.base_url(instance))
            if content:
                span.set_embedding(texts=extract.embedding_texts(args))
        elif role == _plan.RETRIEVER:
            span.set_retrieval(query=extract.query_text(_first_argument(args)) if content else None,
                               top_k=extract.top_k(instance))
        elif role == _plan.TOOL:
            if parent is not None:
                parent.ran_tool = True
            name, description = extract.tool_identity(instance)
            span.set_tool(name, call_id=parent.tool_call_id if parent is not None else None,
                          description=description, arguments=extract.tool_arguments(args) if content else None)
        elif role == _plan.COMPONENT:
            if value:
                span.set_input(extract.query_text(_first_argument(args)))

    # -- exit ------------------------------------------------------------------------
    def _exit(self, record: _Open, result: Any) -> None:
        span: SemanticSpan = record.semantic
        role = record.plan.role
        try:
            if role == _plan.MODEL and (inspect.isgenerator(result) or inspect.isasyncgen(result)):
                self.model_streams.start(record.id_, span, result)
                return  # ends with its stream
            if role == _plan.COMPONENT and hold_response_stream(result, span):
                return  # ends with its stream
        except Exception as exc:  # noqa: BLE001
            report_internal_error("llama_index.stream_start", exc)
        with guard("llama_index.span_result"):
            self._fill_result(record, span, result)
        if record.agents is not None:
            record.agents.close()
        span.end()

    def _fill_result(self, record: _Open, span: SemanticSpan, result: Any) -> None:
        role = record.plan.role
        content = span.records_content
        if role in (_plan.RUN_AGENT, _plan.RUN_MULTI_AGENT, _plan.RUN_WORKFLOW, _plan.COMPONENT):
            if span.records_value:
                span.set_output(extract.response_text(result))
        elif role == _plan.STEP:
            if span.records_value:
                span.set_output(extract.event_payload(result))
            rejected = extract.rejected_feedback(result)
            if rejected is not None:  # the step's answer was rejected and the model is asked again: a failed step
                span.set_error(REJECTED_OUTPUT, rejected)
            unknown = None if record.ran_tool else extract.unknown_tool_call(result)
            if unknown is not None:  # a call of a tool the agent lacks, answered with an error: a refused call
                name, call_id, arguments, answer = unknown
                self.telemetry.refused_tool_call(name if isinstance(name, str) else None, A.UNKNOWN_TOOL,
                                                 parent=span, call_id=call_id if isinstance(call_id, str) else None,
                                                 arguments=arguments, result=answer)
            parent = self.open_spans.get(record.parent_id) if record.parent_id else None
            if parent is not None and parent.agents is not None:
                parent.agents.step_result(result)
        elif role == _plan.TOOL:
            if content:
                span.set_tool_result(extract.tool_result(result))
        elif role == _plan.RETRIEVER:
            if span.is_recording:  # document ids and scores are recorded with content off too
                span.set_retrieval(documents=extract.documents(result))
        elif role == _plan.EMBEDDING:
            span.set_embedding(dimension=extract.embedding_dimension(result))

    # -- context ---------------------------------------------------------------------
    @staticmethod
    def _detach(record: _Open) -> None:
        """Detach what ``new_span`` attached, only in the context it was attached in."""
        if record.token is None:
            return
        token, record.token = record.token, None
        with guard("llama_index.detach"):
            if otel_context.get_current() is record.context:
                otel_context.detach(token)

    def drop_left_open(self, records: list[_Open], err: BaseException) -> None:
        """End ``records`` the dispatcher never reported an exit or drop for, with ``err``, innermost first
        (each detaches what it attached, in this same context)."""
        for record in reversed(records):
            with self.lock:
                still_open = self.open_spans.pop(record.id_, None) is record
            if still_open:
                try:
                    with guard("llama_index.drop_left_open"):
                        if record.semantic is not None:
                            record.semantic.record_error(err, control_flow=is_control_flow(err))
                            record.semantic.end()
                finally:
                    self._detach(record)

    def _evict_oldest(self) -> None:
        with self.lock:
            oldest = next(iter(self.open_spans), None)
            record = self.open_spans.pop(oldest, None) if oldest is not None else None
        if record is not None and record.semantic is not None:
            record.semantic.set_attribute(A.OTEL_AGENTS_SPAN_EVICTED, True)
            record.semantic.end()


_BEFORE_ENTRY: contextvars.ContextVar[Any] = contextvars.ContextVar("otel_agents_llama_index_before", default=None)


def other_span_handler(handler: LlamaIndexSpanHandler, dispatcher: Any) -> bool:
    """Whether ``dispatcher``'s spans are handed to a span handler but ``handler`` and LlamaIndex's no-op one
    (``NullSpanHandler``): its own handlers, then its parents' while it propagates, as ``Dispatcher.span_enter``
    calls them."""
    while dispatcher is not None:
        for h in dispatcher.span_handlers:
            if h is not handler and type(h) is not NullSpanHandler:
                return True
        dispatcher = dispatcher.parent if dispatcher.propagate else None
    return False


def handler_added_wrapper(handler: LlamaIndexSpanHandler, keep_apart: Callable[[], None]) -> Callable[..., Any]:
    """wrapt wrapper for ``Dispatcher.add_span_handler`` (how OpenInference, OpenLLMetry and the OTel GenAI
    instrumentation add theirs): once a handler but ours is on a dispatcher's way, ``keep_apart()`` (it puts
    :func:`dispatcher_wrappers` on). A handler put into ``span_handlers`` by hand is not seen: our spans then nest
    as they do without these wrappers."""

    def added(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        result = wrapped(*args, **kwargs)
        with guard("llama_index.span_handler_added"):
            if other_span_handler(handler, instance):
                keep_apart()
        return result

    return added


def dispatcher_wrappers(handler: LlamaIndexSpanHandler) -> dict[str, Callable[..., Any]]:
    """wrapt wrappers for ``Dispatcher.span_enter``, ``span_exit`` and ``span_drop``, which call every span
    handler in turn: what the handlers make current stays between a dispatcher span's entry and its exit.

    LlamaIndex calls the handlers' exits in the order of their entries, so two handlers that each make their span
    current (ours and OpenInference's, OpenLLMetry's or the OTel GenAI one's) detach out of order: the first to
    exit is not the one current, and the other's detaching puts an ended span back as current, after the call
    too; and a later handler's span is current inside the call, whose children it parents by LlamaIndex's ids,
    not to ours. So our span is parented to the context current before any handler's entry, or, when that is
    only another handler's span for the dispatcher's parent span, to what that parent is with us (``_enter``);
    and after the handlers' exits the context they left is put back to the one before the entry when it is stale:
    one of those they made current, or one whose span has ended (never a live one the call's body chose;
    :func:`~otel_agents._spans.settle_context`).

    The instrumentor puts these on only once a span handler but ours is on a dispatcher's way
    (:func:`handler_added_wrapper`); after one is taken off again, a call with none does nothing but LlamaIndex's
    own (these wrappers cost ~7% of our instructions on the benchmark's run even where they change nothing: issue
    40, twentieth round)."""

    def enter(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        try:
            alone = not other_span_handler(handler, instance)
        except Exception as exc:  # noqa: BLE001 - LlamaIndex changed shape: take the full path
            report_internal_error("llama_index.dispatcher_handlers", exc)
            alone = False
        if alone:
            return wrapped(*args, **kwargs)
        token = _BEFORE_ENTRY.set(otel_context.get_current())
        try:
            return wrapped(*args, **kwargs)
        finally:
            _BEFORE_ENTRY.reset(token)
            with guard("llama_index.dispatcher_enter"):
                record = handler.open_spans.get(kwargs.get("id_"))
                if record is not None:
                    now = otel_context.get_current()
                    if now is not record.before and not any(now is ctx for ctx in record.attached):
                        record.attached += (now,)  # a later handler's

    def leave(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        record = handler.open_spans.get(kwargs.get("id_"))  # the handlers' exits take it out
        try:
            return wrapped(*args, **kwargs)
        finally:
            # (one context attached, ours or another handler's, and the one before current again: nothing stale)
            if record is not None and record.attached and (len(record.attached) > 1
                                                           or otel_context.get_current() is not record.before):
                with guard("llama_index.dispatcher_exit"):
                    settle_context(record.before, record.attached)

    return {"span_enter": enter, "span_exit": leave, "span_drop": leave}


_OPENED_IN_CALL: contextvars.ContextVar[list | None] = contextvars.ContextVar("otel_agents_llama_index_opened",
                                                                            default=None)
TOOL_CALL_METHODS = ("call", "acall", "__call__")  # on BaseTool and every subclass defining its own


def tool_call_wrappers(handler: LlamaIndexSpanHandler) -> dict[str, Callable[..., Any]]:
    """wrapt wrappers for a tool's ``call``/``acall``/``__call__`` (outside LlamaIndex's dispatcher
    wrapper): spans opened inside a call that the dispatcher leaves open when an exception escapes
    are ended with it (see the module docstring)."""

    def sync(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        opened: list = []
        token = _OPENED_IN_CALL.set(opened)
        try:
            return wrapped(*args, **kwargs)
        except BaseException as err:
            if opened:
                handler.drop_left_open(opened, err)
            raise
        finally:
            _OPENED_IN_CALL.reset(token)

    async def acall(wrapped: Any, args: tuple, kwargs: dict) -> Any:
        opened: list = []
        token = _OPENED_IN_CALL.set(opened)
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as err:
            if opened:
                handler.drop_left_open(opened, err)
            raise
        finally:
            _OPENED_IN_CALL.reset(token)

    def asynchronous(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        return acall(wrapped, args, kwargs)

    return {"call": sync, "__call__": sync, "acall": asynchronous}


def _first_argument(args: Mapping[str, Any]) -> Any:
    """The query a retriever, query engine, synthesizer or chat engine was called with."""
    for key in ("str_or_query_bundle", "query_bundle", "query", "message"):
        if args.get(key) is not None:
            return args[key]
    return None
