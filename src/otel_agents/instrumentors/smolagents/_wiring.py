"""What ``instrument()`` installs into smolagents, and takes out again.

* ``MultiStepAgent.run`` (and every override): the ``agent`` span of a run; a
  streamed run (``stream=True``) hands back our wrapper of smolagents' step
  generator, which makes the agent span current only while the consumer advances
  it and ends it when the stream ends (exhausted, closed, raised or abandoned).
* ``MultiStepAgent.__call__`` (how a manager calls a managed agent, from JSON
  tool calls or from generated code): a ``tool`` span named after the managed
  agent, under which its run's ``agent`` span nests.
* ``MultiStepAgent._step_stream`` / ``_generate_planning_step``: one ``chain``
  span per ``ActionStep`` (``step {n}``) and per ``PlanningStep`` (``planning``);
  ``_validate_final_answer``: a final answer the agent's ``final_answer_checks``
  reject fails its step's span with smolagents' ``AgentError``.
  smolagents' public step callbacks only fire when a step is over, too late to
  parent the step's model and tool spans, so we wrap the two generators every
  step goes through (private names; a rename is logged once and loses step spans only).
* ``Model.generate`` / ``Model.generate_stream`` on the base class and on every
  subclass that defines its own, including classes defined after ``instrument()``
  (:mod:`._hierarchy`): one ``model`` span per request, whatever the class.
* ``BaseTool.__call__`` on every tool class: one ``tool`` span per call, named
  after the tool's ``name`` (every ``@tool`` function is the same class).
* ``ToolCallingAgent.execute_tool_call``: a JSON tool call smolagents refuses before any tool runs — a name the
  agent has no tool or managed agent for (``AgentToolExecutionError``), arguments ``validate_tool_arguments``
  rejects (``AgentToolCallError``) — fails its step, and the next step shows the model the error; it is a
  zero-length refused tool span (``unknown_tool`` / ``validation_error``) under the step, with that error's message
  as its result.
* ``smolagents.local_python_executor.timeout``: the local executor runs generated
  code on a worker thread; our version of this decorator runs the code in a copy
  of the caller's context, so tools called from code nest under their step.

Nested calls of the same object (an override calling ``super().generate()``, a
tool's ``__call__`` calling its parent's) open one span: a context variable holds
the objects whose span is open.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import types
import weakref
from typing import Any, Callable

from smolagents import local_python_executor
from smolagents.agents import ActionOutput, MultiStepAgent, RunResult, ToolCallingAgent
from smolagents.memory import ActionStep, FinalAnswerStep, PlanningStep
from smolagents.models import Model, agglomerate_stream_deltas, supports_stop_parameter
from smolagents.tools import BaseTool
from smolagents.utils import AgentMaxStepsError, AgentToolCallError, AgentToolExecutionError

from ..._spans import (ChatMessage, SemanticSpan, StepIterator, Telemetry, guard, in_forked_child, instrumentation_enabled,
                       output_type_of, report_internal_error, wrap_stream)
from ..._spans.address import configured_url
from ...semconv import Kind
from ...semconv import attributes as A
from . import _convert
from .. import _hf_inference, _litellm
from .._hierarchy import HierarchyPatch
from .._patch import Patch, PatchSet

FINAL_ANSWER_TOOL = "final_answer"

_OPEN: contextvars.ContextVar[frozenset] = contextvars.ContextVar("otel_agents_smolagents_open", default=frozenset())
"""``(role, id(obj))`` of the models and tools whose span is open in this context."""


class _opened:
    """``with _opened(key)``: ``key`` marked open in this context for the block (a class, not a
    ``@contextmanager`` generator: it runs around every model request and tool call)."""

    __slots__ = ("key", "token")

    def __init__(self, key: tuple[str, int]):
        self.key = key

    def __enter__(self) -> None:
        self.token = _OPEN.set(_OPEN.get() | {self.key})

    def __exit__(self, *exc: Any) -> None:
        _OPEN.reset(self.token)


def _base_url(model: Any) -> Any:
    """Where a model's client connects: LiteLLMModel's ``api_base``, else the ``base_url`` of the API client an
    ``ApiModel`` made (OpenAIServerModel's ``openai`` client, whose default is its provider's endpoint), else
    ``None``."""
    api_base = configured_url(model, ("api_base",))
    if api_base is not None:
        return api_base
    return getattr(vars(model).get("client"), "base_url", None) if hasattr(model, "__dict__") else None


def _bound(args: tuple, kwargs: dict, index: int, name: str) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else None


def _is_error(exc: BaseException) -> bool:
    return isinstance(exc, Exception)


class Activating(StepIterator):
    """An iterator over ``source`` that makes ``span`` current (and ``key`` open) only while it advances
    (the span layer's :class:`~otel_agents._spans.StepIterator`); closed at most once."""

    __slots__ = ("_closed",)

    def __init__(self, source: Any, span: SemanticSpan, key: tuple[str, int] | None = None):
        super().__init__(source, span.context(), (lambda: _opened(key)) if key else None)
        self._closed = False

    def close(self) -> None:
        """Close the source generator (its own spans end first, as abandoned)."""
        if self._closed:
            return
        self._closed = True
        super().close()

    def abandon(self) -> None:
        """Close the source on abandonment; smolagents' run generator yields in a ``finally`` and then
        raises ``RuntimeError`` on close — its own behaviour, which the abandoning consumer never sees."""
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


def _parent_agent(span: SemanticSpan) -> str | None:
    parent = span.parent
    while parent is not None:
        if parent.kind is Kind.AGENT:
            return parent.name.removeprefix("invoke_agent ") or None
        parent = parent.parent
    return None


class Installation:
    """Our wrappers in smolagents for one ``instrument()`` call."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry
        self.patches = PatchSet("smolagents.patch")
        self.steps: weakref.WeakKeyDictionary[Any, SemanticSpan] = weakref.WeakKeyDictionary()  # agent → open step
        in_forked_child(lambda installation: installation.steps.clear(), self)  # the parent's steps are its own
        self._add(lambda: HierarchyPatch(Model, {"generate": self._generate, "generate_stream": self._generate_stream},
                                         site="smolagents.patch"))
        self._add(lambda: HierarchyPatch(BaseTool, {"__call__": self._tool_call}, site="smolagents.patch"))
        self._add(lambda: HierarchyPatch(MultiStepAgent, {
            "run": self._run, "__call__": self._delegate, "_step_stream": self._step_stream,
            "_generate_planning_step": self._planning_step, "_validate_final_answer": self._validate_final_answer},
            site="smolagents.patch"))
        self._add(lambda: HierarchyPatch(ToolCallingAgent, {"execute_tool_call": self._execute_tool_call},
                                         site="smolagents.patch"))
        self._add(lambda: Patch(local_python_executor, "timeout", self._timeout))  # type: ignore[arg-type]
        self.patches.keep(_litellm.use())  # LiteLLMModel's streams: what LiteLLM makes up at their end (see .._litellm)
        self.patches.keep(_hf_inference.use())  # InferenceClientModel's streams cut short (see .._hf_inference)

    def _add(self, make: Callable[[], Any]) -> None:
        try:
            self.patches.keep(make())
        except Exception as exc:  # noqa: BLE001 - smolagents changed shape: lose that part only
            report_internal_error("smolagents.install", exc)

    def remove(self) -> None:
        """Take every wrapper off (an inert one stays inside a later foreign wrapper)."""
        self.patches.remove()

    # -- agent runs --------------------------------------------------------------
    def _start_agent(self, agent: Any, task: Any, images: Any = None) -> SemanticSpan:
        name = getattr(agent, "name", None) or type(agent).__name__
        span = self.telemetry.start_span(Kind.AGENT, name)
        with guard("smolagents.agent_attributes"):
            span.set_agent(name, description=getattr(agent, "description", None))
            delegator = _parent_agent(span)
            if delegator:
                span.set_attribute(A.OTEL_AGENTS_PARENT_AGENT, delegator)
            # With images (run(images=...)), where the input is messages: one user message of the task and
            # them, converted as a model span's content is (the images media parts)
            span.set_input(task, messages=[ChatMessage("user", parts=_convert.content_parts(
                [{"type": "text", "text": task}] + [{"type": "image", "image": image} for image in images]))]
                if images and isinstance(task, str) and span.input_as_messages else None)
        return span

    def _run(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        span = self._start_agent(instance, _bound(args, kwargs, 0, "task"), _bound(args, kwargs, 3, "images"))
        result = _call_in(span, wrapped, args, kwargs, agent=instance)
        if not _bound(args, kwargs, 1, "stream"):
            with guard("smolagents.run_output"):
                span.set_output(result.output if isinstance(result, RunResult) else result)
                _record_max_steps(span, instance)
            span.end()
            return result
        steps = Activating(result, span)
        outcome: dict[str, Any] = {}

        def on_chunk(item: Any) -> None:
            if isinstance(item, FinalAnswerStep):
                outcome["output"] = item.output

        def on_end(ended: SemanticSpan, abandoned: bool) -> None:
            if abandoned:
                steps.abandon()
            if "output" in outcome:
                ended.set_output(outcome["output"])
            _record_max_steps(ended, instance)
            _record_interrupt(ended, instance)

        return wrap_stream(steps, span, on_chunk=on_chunk, on_end=on_end, is_error=_is_error,
                           complete=lambda: "output" in outcome)  # let go after its FinalAnswerStep: finished

    def _delegate(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """A managed agent called by its manager: a ``tool`` span named after it, its run nested below (one,
        when a subclass's ``__call__`` calls its parent's)."""
        key = ("delegate", id(instance))
        if not instrumentation_enabled() or key in _OPEN.get():
            return wrapped(*args, **kwargs)
        name = getattr(instance, "name", None) or type(instance).__name__
        span = self.telemetry.start_span(Kind.TOOL, name)
        with guard("smolagents.delegate_attributes"):
            span.set_tool(name, description=getattr(instance, "description", None),
                          arguments={"task": _bound(args, kwargs, 0, "task"),
                                     **{k: v for k, v in kwargs.items() if k != "task"}}
                          if span.records_content else None)
        with _opened(key):
            result = _call_in(span, wrapped, args, kwargs)
        span.set_tool_result(result)
        span.end()
        return result

    # -- steps -----------------------------------------------------------------------
    def _step_stream(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        memory_step = _bound(args, kwargs, 0, "memory_step")
        number = getattr(memory_step, "step_number", None)
        span = self.telemetry.start_span(Kind.CHAIN, f"step {number}" if number is not None else "step")
        with guard("smolagents.step_index"):
            self.steps[instance] = span
        return self._stream_step(wrapped, args, kwargs, span, lambda ended, _: _fill_action_step(ended, memory_step),
                                 last=ActionOutput)

    def _validate_final_answer(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``final_answer_checks`` rejecting the step's final answer (``AgentError``; smolagents then steps on and
        asks the model again): the step failed, its span ends with that error."""
        try:
            return wrapped(*args, **kwargs)
        except Exception as exc:
            with guard("smolagents.final_answer_rejected"):
                span = self.steps.get(instance)
                if span is not None and not span.ended:
                    span.record_error(exc)
            raise

    def _planning_step(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        span = self.telemetry.start_span(Kind.CHAIN, "planning")

        def fill(ended: SemanticSpan, step: Any) -> None:
            if isinstance(step, PlanningStep):
                ended.set_output(step.plan)

        return self._stream_step(wrapped, args, kwargs, span, fill, last=PlanningStep)

    def _stream_step(self, wrapped: Any, args: tuple, kwargs: dict, span: SemanticSpan,
                     fill: Callable[[SemanticSpan, Any], None], last: type) -> Any:
        """A step's generator in ``span``; ``fill(span, item)`` with the last item seen, before the span ends.
        smolagents' step generators yield a ``last`` (``ActionOutput``, ``PlanningStep``) as their last item: a
        step let go after it (its run stops there, on a final answer the agent's checks reject or a consumer that
        has its answer) is finished, not abandoned."""
        generator = _call_in(span, wrapped, args, kwargs, current=not _makes_generator(wrapped))
        steps = Activating(generator, span)
        seen: dict[str, Any] = {}

        def on_chunk(item: Any) -> None:
            seen["item"] = item

        def on_end(ended: SemanticSpan, abandoned: bool) -> None:
            if abandoned:
                steps.abandon()
            fill(ended, seen.get("item"))

        return wrap_stream(steps, span, on_chunk=on_chunk, on_end=on_end, is_error=_is_error,
                           complete=lambda: isinstance(seen.get("item"), last))

    # -- models ------------------------------------------------------------------------
    def _start_model(self, model: Any, args: tuple, kwargs: dict, stream: bool) -> SemanticSpan:
        model_id = getattr(model, "model_id", None) or type(model).__name__
        span = self.telemetry.start_span(Kind.MODEL, model_id, operation="chat")
        with guard("smolagents.model_request"):
            parameters: dict[str, Any] = {}
            if span.is_recording:
                stop = _bound(args, kwargs, 1, "stop_sequences")
                model_kwargs = getattr(model, "kwargs", None) or {}
                parameters = {k: v for k, v in model_kwargs.items() if isinstance(v, (int, float, str, list))}
                # The model's own "stop" replaces the request's (or removes it: REMOVE_PARAMETER), as in
                # smolagents' _prepare_completion_kwargs; a model without the stop parameter is sent none.
                if stop and "stop" not in model_kwargs and _supports_stop(model):
                    parameters["stop_sequences"] = list(stop)
                if stream:
                    parameters["stream"] = True
            span.set_model(request_model=getattr(model, "model_id", None) or None, parameters=parameters or None)
            span.set_server(_base_url(model))
            # the response_format an agent asks for (structured outputs), and n when the model's kwargs send one
            span.set_request_output(output_type_of(_bound(args, kwargs, 2, "response_format")),
                                    (getattr(model, "kwargs", None) or {}).get("n"))
        with guard("smolagents.model_input"):
            if span.records_content:
                span.set_messages(input=_convert.input_messages(_bound(args, kwargs, 0, "messages")),
                                  tools=_convert.tool_definitions(_bound(args, kwargs, 3, "tools_to_call_from")))
        return span

    def _fill_model(self, span: SemanticSpan, message: Any, usage: Any) -> None:
        with guard("smolagents.model_usage"):
            span.set_usage(usage)
        with guard("smolagents.model_response"):
            response_model, response_id = _convert.response_identity(getattr(message, "raw", None))
            span.set_model(response_model=response_model, response_id=response_id)
        with guard("smolagents.model_output"):
            if span.records_content:
                if message is not None:
                    span.set_messages(output=[_convert.output_message(message)])
            else:
                reason = _convert.finish_reason(getattr(message, "raw", None))
                if reason:
                    span.set_finish_reasons([reason])

    def _call_under_model_span(self, key: tuple, wrapped: Any, instance: Any, args: tuple, kwargs: dict, *,
                               stream: bool) -> tuple[SemanticSpan, Any]:
        """Calls ``wrapped`` with a new model span current and ``key`` marked open (a model method calling
        another of the same model is one span); returns the span, still open, and what the call returned.
        A call that raises ends the span with the error and re-raises it (:func:`_call_in`)."""
        span = self._start_model(instance, args, kwargs, stream=stream)
        with _opened(key):
            return span, _call_in(span, wrapped, args, kwargs)

    def _generate(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        key = ("model", id(instance))
        if not instrumentation_enabled() or key in _OPEN.get():
            return wrapped(*args, **kwargs)
        span, message = self._call_under_model_span(key, wrapped, instance, args, kwargs, stream=False)
        usage = None
        with guard("smolagents.model_token_usage"):
            usage = _convert.usage(getattr(message, "token_usage", None))
        self._fill_model(span, message, usage)
        span.end()
        return message

    def _generate_stream(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        key = ("model", id(instance))
        if not instrumentation_enabled() or key in _OPEN.get():
            return wrapped(*args, **kwargs)
        span, deltas_source = self._call_under_model_span(key, wrapped, instance, args, kwargs, stream=True)
        deltas: list[Any] = []
        chunks = Activating(deltas_source, span, key)

        def on_end(ended: SemanticSpan, abandoned: bool) -> None:
            if abandoned:
                chunks.abandon()
            usage = None
            with guard("smolagents.model_token_usage"):
                usage = _convert.stream_usage(deltas)
            # the stream wrapper ends the span after this (marking it abandoned or failed first)
            self._fill_model(ended, agglomerate_stream_deltas(deltas) if deltas else None, usage)

        return wrap_stream(chunks, span, on_chunk=deltas.append, on_end=on_end, is_error=_is_error)

    # -- tools -----------------------------------------------------------------------------
    def _tool_call(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        key = ("tool", id(instance))
        if not instrumentation_enabled() or key in _OPEN.get():
            return wrapped(*args, **kwargs)
        name = str(getattr(instance, "name", None) or type(instance).__name__)
        span = self.telemetry.start_span(Kind.TOOL, name)
        with guard("smolagents.tool_attributes"):
            if name == FINAL_ANSWER_TOOL:
                span.set_attribute(A.OTEL_AGENTS_FINAL_ANSWER, True)
            span.set_tool(name, description=getattr(instance, "description", None),
                          arguments=_convert.tool_arguments(instance, args, kwargs) if span.records_content else None)
        with _opened(key):
            result = _call_in(span, wrapped, args, kwargs)
        if span.records_content:
            with guard("smolagents.tool_result"):
                span.set_tool_result(_convert.jsonable_result(result))
        span.end()
        return result

    def _execute_tool_call(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """A JSON tool call (``tool_name``, ``arguments``): one smolagents refuses before running anything (a name
        the agent lacks, arguments it rejects) is a refused tool span under the current span (the step)."""
        name = _bound(args, kwargs, 0, "tool_name")
        try:
            return wrapped(*args, **kwargs)
        except (AgentToolExecutionError, AgentToolCallError) as exc:
            if instrumentation_enabled():
                with guard("smolagents.tool_refused"):
                    known = name in {**instance.tools, **instance.managed_agents}
                    if not known or isinstance(exc, AgentToolCallError):  # else the tool ran (and has its span)
                        self.telemetry.refused_tool_call(
                            name if isinstance(name, str) else None,
                            A.INVALID_TOOL_ARGUMENTS if known else A.UNKNOWN_TOOL,
                            arguments=_bound(args, kwargs, 1, "arguments"), result=getattr(exc, "message", None))
            raise

    # -- the local executor's worker thread ----------------------------------------------------
    def _timeout(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        decorate = wrapped(*args, **kwargs)

        def carry_context(func: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(func)
            def in_callers_context(*a: Any, **kw: Any) -> Any:
                ctx = contextvars.copy_context()
                return decorate(functools.partial(ctx.run, func))(*a, **kw)

            return in_callers_context

        return carry_context


def _record_max_steps(span: SemanticSpan, agent: Any) -> None:
    """``max_steps`` reached: smolagents asks the model for a last answer and returns it, and records
    ``AgentMaxStepsError`` on the last step (its own test for ``RunResult.state`` ``max_steps_error``); we
    make it the run's error and its stop reason ``max_turns``."""
    steps = getattr(getattr(agent, "memory", None), "steps", None) or ()
    last = steps[-1] if steps else None
    error = getattr(last, "error", None)
    if isinstance(error, AgentMaxStepsError):
        span.record_error(error)
        span.set_stop_reason("max_turns")


def _fill_action_step(span: SemanticSpan, step: Any) -> None:
    """An ``ActionStep``'s span: the code it ran (``CodeAgent``) or its tool calls as input, its observations as output."""
    if not isinstance(step, ActionStep) or not span.records_content:
        return
    code = getattr(step, "code_action", None)
    if code:
        span.set_input(code)
    elif step.tool_calls:
        span.set_input([{"name": c.name, "arguments": c.arguments, "id": c.id} for c in step.tool_calls])
    if step.observations:
        span.set_output(step.observations)


def _call_in(span: SemanticSpan, wrapped: Any, args: tuple, kwargs: dict, agent: Any = None,
             current: bool = True) -> Any:
    """``wrapped(*args, **kwargs)`` with ``span`` current (unless not ``current``); the span stays open on
    return. A call that raises ends the span with the error (a ``BaseException`` that is not an
    ``Exception``, such as a cancellation, as control flow) and re-raises it; an ``agent``'s run its
    caller interrupted also gets the stop reason (:func:`_record_interrupt`)."""
    try:
        if not current:
            return wrapped(*args, **kwargs)
        with span.activate():
            return wrapped(*args, **kwargs)
    except BaseException as exc:
        if agent is not None:
            with guard("smolagents.interrupt"):
                _record_interrupt(span, agent)
        span.record_error(exc, control_flow=not isinstance(exc, Exception))  # (after an interrupt: ended, no-op)
        span.end()
        raise


def _supports_stop(model: Any) -> bool:
    """smolagents' ``Model.supports_stop_parameter`` (false for OpenAI's o3, o4 and gpt-5 families and grok:
    smolagents then sends no stop sequences), its regular expression run once per model id unless a subclass
    overrides it."""
    if getattr(type(model), "supports_stop_parameter", None) is Model.supports_stop_parameter:
        model_id = model.model_id
        return _model_id_supports_stop(model_id if isinstance(model_id, str) else "")
    return bool(getattr(model, "supports_stop_parameter", True))


@functools.lru_cache(maxsize=256)  # model ids: a handful per process
def _model_id_supports_stop(model_id: str) -> bool:
    return supports_stop_parameter(model_id)


def _makes_generator(func: Any) -> bool:
    """Whether ``func`` is a plain generator function (or one bound to an instance): calling it runs none of
    its body, so nothing needs to be current for the call (each step of the generator gets the span).
    Anything else (another instrumentation's wrapper, a decorated function) may run code when called."""
    if type(func) is types.MethodType:
        func = func.__func__
    return type(func) is types.FunctionType and bool(func.__code__.co_flags & inspect.CO_GENERATOR)


def _record_interrupt(span: SemanticSpan, agent: Any) -> None:
    """The caller called ``agent.interrupt()``: smolagents sets ``interrupt_switch`` (reset when a run starts)
    and raises ``AgentError`` before the next step. The run was stopped, not failed (a cancellation, as in every
    framework): ``otel_agents.control_flow`` ``interrupt``, the stop reason ``cancelled``, and the span ends here,
    so the ``AgentError`` that says so is not recorded as its failure."""
    if getattr(agent, "interrupt_switch", None) is True:
        span.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, "interrupt")
        span.set_stop_reason("cancelled")
        span.end()
