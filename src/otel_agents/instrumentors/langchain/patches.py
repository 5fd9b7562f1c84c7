"""The places where LangChain offers no callback, so we wrap a function with ``wrapt``.

1. **Run bodies see their span.** LangChain runs a runnable's body (a
   ``RunnableLambda``, a LangGraph node, a tool) inside a *fresh copy* of the
   caller's ``contextvars.Context``: ``set_config_context`` calls
   ``ctx = copy_context(); ctx.run(_set_config_context, child_config)`` and then
   runs the body in ``ctx``. We wrap ``_set_config_context`` (in
   ``langchain_core.runnables.config`` and LangGraph's
   ``langgraph._internal._runnable``): after it, still inside ``ctx.run``, we
   attach the span of the run whose child config this is
   (``child_config["callbacks"].parent_run_id``). Only that throw-away copy
   changes, so nothing needs detaching and nothing leaks into the caller —
   unlike attaching from ``on_chain_start``, which fails for async runs
   (LangChain calls ``on_chain_end`` in a shielded task with another context)
   and for ``batch`` (starts and ends are not nested).

2. **Nested graphs are agents.** A graph run inside another graph (a subgraph,
   an agent used as a node) reports its start through ``on_chain_start`` with
   the same metadata as any runnable inside a node. The one thing that tells
   it apart is the caller: a graph's root run is started by LangGraph's
   ``Pregel.stream``/``Pregel.astream`` calling the callback manager directly.
   :func:`started_by_graph` looks past the callback-dispatch frames for those
   two functions' code; no function is wrapped.

3. **A chat model's provider call sees its model span.** The model span opens in
   ``on_chat_model_start`` but is not made current, so a provider client called
   by the model (``ChatOpenAI`` → ``openai``, ``ChatAnthropic`` → ``anthropic``)
   could not see it and, instrumented too, would open a second model span for
   the same request. We wrap ``BaseChatModel._generate_with_cache`` /
   ``_agenerate_with_cache`` (every ``invoke``/``ainvoke``/``batch`` and agent
   step goes through them, with the run's ``run_manager``) and attach the run's
   span around the call, detaching in the same frame.

4. **A streamed model call sees its model span too.** ``model.stream()`` /
   ``astream()`` (on ``BaseChatModel`` and ``BaseLLM``) are generators that
   start the run and call the subclass's ``_stream``/``_astream`` — and so the
   provider client — inside the consumer's ``next()``. We wrap them so that
   each step runs in a context carrying a :class:`_StreamRun`; when the run's
   start callback opens the model span, the handler calls
   :func:`model_run_started`, which makes the span current for the rest of
   that step, and each later step attaches it again. Every step detaches what
   it attached before handing the chunk back, so the span is never current
   between chunks or after the consumer stops. An ``astream()`` its consumer
   drops unfinished (no ``aclose()``) ends its model span as abandoned when the
   proxy is collected: LangChain reports that end (``on_llm_error`` with
   ``GeneratorExit``) only once the event loop finalises the generator, in a task
   of the loop's, and from a further task (``@shielded``) that a loop shutting
   down (``asyncio.run`` returning) cancels before it runs: the call would look
   complete, ended only when the run map evicts it. The callback that comes later
   finds the span ended and does nothing.

5. **A tool run LangChain gives up on still ends.** ``BaseTool.run``/``arun`` can raise after
   ``on_tool_start`` without calling ``on_tool_end`` or ``on_tool_error`` (formatting a result it
   cannot handle, such as a list whose ``__len__`` raises): the tool span would never end. We wrap both;
   the handler notes each tool run started inside the call (:func:`tool_run_started`), and an exception
   escaping the call ends those still open with it before it propagates unchanged. (The tool body sees
   its span through 1: ``BaseTool.run``/``arun`` run it in a context made with the tool run's child config.)

6. **An ``astream_events()`` left early still ends its run.** ``Runnable.astream_events`` (v1/v2, through
   ``Runnable._astream_events_v1_v2``) runs the runnable in a task of its own; closed right after its first
   event it cancels that task, and when the cancellation lands before LangChain has its run manager (the
   graph's ``on_chain_start`` is still being dispatched to the other handlers) LangChain never reports the
   run's end. We wrap the method: each step of the event stream runs with a marker in the context (copied
   into that task), the handler notes the first run opened under it (the stream's root run,
   :func:`run_opened`), and when the stream ends — exhausted, raised, closed, or finalised after its
   consumer dropped it — once LangChain's own clean-up is done, the root run, if LangChain left it open,
   ends with what ended the stream (abandoned when the consumer left; its open children with it). A run
   LangChain did report has left the run map, so nothing ends twice.

7. **A structured output ``create_agent`` rejects is a failed step.** With ``response_format=ToolStrategy(...)``
   (LangChain 1.x) the model answers by calling an output tool; arguments that fail the schema are answered with
   the error as a ``ToolMessage`` and the model is asked again, all inside the ``model`` node, reported by no
   callback. We wrap ``langchain.agents.factory._handle_structured_output_error`` (looked up by name at each
   call): when it decides to retry, the handler records a failed ``chain`` step under the node's run (the run
   id of LangChain's own context variable ``var_child_runnable_config``).

8. **A run whose callback dispatch raised still ends.** A handler of the user's with ``raise_error = True`` that
   raises (a guardrail refusing a prompt) makes LangChain's ``handle_event``/``ahandle_event`` re-raise out of the
   dispatch: the handlers after it never see the event, and a run whose start or end dispatch raised is never
   reported again. Ours runs before it (inline handlers come first in an async dispatch) or after it (a configure
   hook's handler comes last in a sync one), so a start may have opened a span no end will come for, or an end
   may never have reached us. We wrap both functions of ``langchain_core.callbacks.manager``: a run's start, end
   or error whose dispatch raised ends that run's span, if still open, with the exception the caller gets.

9. **A call of a tool the agent does not have is a refused call.** LangGraph's ``ToolNode`` answers a tool call
   naming no tool it holds with an error ``ToolMessage`` ("Error: X is not a valid tool…") and runs nothing,
   which no callback reports. We wrap ``ToolNode._validate_tool_call`` (when ``langgraph.prebuilt.tool_node`` is
   imported; ``instrument()`` never imports it): when it returns such a message, the handler records a refused
   ``tool`` span under the node's run (found as in 7).

Removal only ever takes out our own wrapper: when another library wrapped the
same function after us, ours stays in place under theirs, switched off (a plain
pass-through), and is switched back on — not stacked again — by the next
``instrument()``.
"""

from __future__ import annotations

import contextvars
import importlib
import inspect
import sys
from typing import Any, Callable

import wrapt
from opentelemetry import context as otel_context

from ..._spans import AsyncStepIterator, StepIterator, guard, prepare_finalisers

_output_rejected: Callable[[Any, BaseException], None] | None = None  # while instrumented

# (module, function) pairs whose call runs inside the body's fresh Context.
CONFIG_CONTEXT_TARGETS = (
    ("langchain_core.runnables.config", "_set_config_context"),
    ("langgraph._internal._runnable", "_set_config_context"),
)

# Frames of callback dispatch between the code that starts a run and our handler method.
_DISPATCH_MODULES = ("otel_agents.", "langchain_core.callbacks.")
_MAX_DISPATCH_FRAMES = 16

_span_context_for: Callable[[Any], Any] | None = None  # run id → OTel Context to attach, while instrumented
_graph_codes: frozenset[Any] = frozenset()


def _config_context_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    result = wrapped(*args, **kwargs)
    lookup = _span_context_for
    if lookup is not None:
        with guard("langchain.set_config_context"):
            config = args[0] if args else kwargs.get("config")
            run_id = getattr(config.get("callbacks") if isinstance(config, dict) else None, "parent_run_id", None)
            ctx = lookup(run_id) if run_id is not None else None
            if ctx is not None:
                otel_context.attach(ctx)  # into the throw-away copy; see the module docstring
    return result


MODEL_CALL_TARGETS = ("_generate_with_cache", "_agenerate_with_cache")  # on BaseChatModel


def _model_call_context(args: Any, kwargs: Any) -> Any:
    lookup = _span_context_for
    if lookup is None:
        return None
    with guard("langchain.model_call_context"):
        run_manager = kwargs.get("run_manager") if "run_manager" in kwargs else (args[2] if len(args) > 2 else None)
        run_id = getattr(run_manager, "run_id", None)
        return lookup(run_id) if run_id is not None else None
    return None


def _model_call_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    ctx = _model_call_context(args, kwargs)
    if ctx is None:
        return wrapped(*args, **kwargs)
    token = otel_context.attach(ctx)
    try:
        return wrapped(*args, **kwargs)
    finally:
        otel_context.detach(token)


def _amodel_call_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    async def call() -> Any:
        ctx = _model_call_context(args, kwargs)
        if ctx is None:
            return await wrapped(*args, **kwargs)
        token = otel_context.attach(ctx)
        try:
            return await wrapped(*args, **kwargs)
        finally:
            otel_context.detach(token)
    return call()


_STREAM_RUN = otel_context.create_key("otel_agents.langchain.stream_run")


class _StreamRun:
    """The model run one ``stream()``/``astream()`` call started: its span's context and run id, once opened."""

    __slots__ = ("ctx", "run_id")

    def __init__(self) -> None:
        self.ctx: Any = None
        self.run_id: Any = None

    def step_context(self) -> Any:
        """The context one step of the stream runs in: the model span's once known, else a marker for
        :func:`model_run_started`."""
        return self.ctx if self.ctx is not None else otel_context.set_value(_STREAM_RUN, self)


def model_run_started(run_id: Any) -> None:
    """The handler opened ``run_id``'s model span: inside a step of a wrapped ``stream()``, make it current
    for the rest of the step (the step's own detach undoes this; see the module docstring, 4)."""
    run = otel_context.get_value(_STREAM_RUN)
    lookup = _span_context_for
    if not isinstance(run, _StreamRun) or run.ctx is not None or lookup is None:
        return
    ctx = lookup(run_id)
    if ctx is not None:
        run.ctx, run.run_id = ctx, run_id
        otel_context.attach(ctx)


class _ModelAsyncStream(AsyncStepIterator):
    """A wrapped ``astream()``: an :class:`AsyncStepIterator` that, collected before its source ended or was
    closed, ends the model run as abandoned (see the module docstring, 4)."""

    __slots__ = ("_run", "_over")

    def __init__(self, source: Any, run: _StreamRun):
        super().__init__(source, run.step_context)
        self._run = run
        self._over = False
        prepare_finalisers()  # __del__ may need it

    async def __anext__(self) -> Any:
        try:
            return await super().__anext__()
        except BaseException:
            self._over = True  # the source ended (or raised): LangChain reported the run's end
            raise

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            self._over = True

    def __del__(self) -> None:
        try:
            hook = _run_dropped
            if hook is not None and not self._over and self._run.run_id is not None:
                hook(self._run.run_id)
        except Exception:  # noqa: BLE001 - a finaliser must never raise (nor report, at interpreter exit)
            pass


def _stream_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    iterator = wrapped(*args, **kwargs)
    if _span_context_for is None or not inspect.isgenerator(iterator):
        return iterator
    return StepIterator(iterator, _StreamRun().step_context)


def _astream_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    iterator = wrapped(*args, **kwargs)
    if _span_context_for is None or not inspect.isasyncgen(iterator):
        return iterator
    return _ModelAsyncStream(iterator, _StreamRun())


STREAM_TARGETS = (("stream", _stream_wrapper), ("astream", _astream_wrapper))  # on BaseChatModel and BaseLLM


_EVENTS_RUN = otel_context.create_key("otel_agents.langchain.events_run")
_run_left: Callable[[Any, BaseException | None], None] | None = None  # while instrumented
_run_dropped: Callable[[Any], None] | None = None  # the same, abandoned, from a finaliser


class _EventsRun:
    """One ``astream_events()`` call: the first run opened under it (its root run), once known."""

    __slots__ = ("root",)

    def __init__(self) -> None:
        self.root: Any = None

    def step_context(self) -> Any:
        return otel_context.set_value(_EVENTS_RUN, self)


def run_opened(run_id: Any) -> None:
    """The handler opened ``run_id``'s span: the first one under an ``astream_events()`` step is its root run."""
    run = otel_context.get_value(_EVENTS_RUN)
    if isinstance(run, _EventsRun) and run.root is None:
        run.root = run_id


def _left(run_id: Any, error: BaseException | None) -> None:
    """End ``run_id`` if LangChain left it open: with ``error``, else as abandoned."""
    hook = _run_left
    if hook is not None:
        with guard("langchain.run_left"):
            hook(run_id, error)


async def _events(source: Any, run: _EventsRun) -> Any:
    """``astream_events()``'s events, each step with ``run`` in the context; at the end, whatever it is, the
    source is closed and then the root run ended if LangChain left it open (see the module docstring, 6)."""
    steps = AsyncStepIterator(source, run.step_context)
    error: BaseException | None = None
    try:
        async for event in steps:
            yield event
    except GeneratorExit:
        raise
    except BaseException as exc:
        error = exc
        raise
    finally:
        try:
            await steps.aclose()
        finally:
            if run.root is not None:
                _left(run.root, error)


def _astream_events_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    iterator = wrapped(*args, **kwargs)
    if _run_left is None or not inspect.isasyncgen(iterator):
        return iterator
    return _events(iterator, _EventsRun())


EVENTS_TARGETS = ("_astream_events_v1_v2", "astream_events")  # on Runnable: the first one it has


_TOOL_RUNS: contextvars.ContextVar[list | None] = contextvars.ContextVar("otel_agents_langchain_tool_runs",
                                                                        default=None)
_tool_run_failed: Callable[[list, BaseException], None] | None = None  # while instrumented


def tool_run_started(run_id: Any) -> None:
    """The handler opened a tool span: note it for the ``BaseTool.run``/``arun`` call it runs in."""
    runs = _TOOL_RUNS.get()
    if runs is not None:
        runs.append(run_id)


def _tool_run_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    if _tool_run_failed is None:
        return wrapped(*args, **kwargs)
    runs: list = []
    token = _TOOL_RUNS.set(runs)
    try:
        return wrapped(*args, **kwargs)
    except BaseException as exc:
        _end_tool_runs(runs, exc)
        raise
    finally:
        _TOOL_RUNS.reset(token)


def _atool_run_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    async def call() -> Any:
        if _tool_run_failed is None:
            return await wrapped(*args, **kwargs)
        runs: list = []
        token = _TOOL_RUNS.set(runs)
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            _end_tool_runs(runs, exc)
            raise
        finally:
            _TOOL_RUNS.reset(token)
    return call()


def _end_tool_runs(runs: list, exc: BaseException) -> None:
    hook = _tool_run_failed
    if runs and hook is not None:
        with guard("langchain.tool_run_failed"):
            hook(runs, exc)


TOOL_RUN_TARGETS = (("run", _tool_run_wrapper), ("arun", _atool_run_wrapper))  # on BaseTool


def _node_run_id() -> Any:
    """The run id of the node whose body is running (LangChain's own context variable ``var_child_runnable_config``:
    the child config's callbacks' ``parent_run_id``), or ``None``."""
    from langchain_core.runnables.config import var_child_runnable_config

    config = var_child_runnable_config.get()
    callbacks = config.get("callbacks") if isinstance(config, dict) else None
    return getattr(callbacks, "parent_run_id", None)


def _structured_output_error_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    result = wrapped(*args, **kwargs)
    hook = _output_rejected
    if hook is not None:
        with guard("langchain.output_rejected"):
            exception = args[0] if args else kwargs.get("exception")
            if isinstance(result, tuple) and result and result[0] is True and isinstance(exception, BaseException):
                hook(_node_run_id(), exception)
    return result


_tool_unknown: Callable[[Any, Any, Any], None] | None = None  # while instrumented
TOOL_NODE_TARGET = ("langgraph.prebuilt.tool_node", "ToolNode", "_validate_tool_call")  # see the docstring, 9
_tool_node_hook_registered = False


def _invalid_tool_call_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    message = wrapped(*args, **kwargs)
    hook = _tool_unknown
    if message is not None and hook is not None:
        with guard("langchain.unknown_tool"):
            hook(_node_run_id(), args[0] if args else kwargs.get("call"), message)
    return message


def _wrap_tool_node(install: bool) -> None:
    """Put our wrapper on :data:`TOOL_NODE_TARGET` (or take it off where it is on top), if its module is imported."""
    module = sys.modules.get(TOOL_NODE_TARGET[0])
    owner = getattr(module, TOOL_NODE_TARGET[1], None)
    current = owner.__dict__.get(TOOL_NODE_TARGET[2]) if isinstance(owner, type) else None
    if current is None:
        return
    if install and not _has_our_wrapper(current, _invalid_tool_call_wrapper):
        wrapt.wrap_function_wrapper(owner, TOOL_NODE_TARGET[2], _invalid_tool_call_wrapper)
    elif not install and getattr(current, "_self_wrapper", None) is _invalid_tool_call_wrapper:
        setattr(owner, TOOL_NODE_TARGET[2], current.__wrapped__)


def _tool_node_imported(module: Any) -> None:
    if _tool_unknown is not None:  # still instrumented
        with guard("langchain.patch_tool_node"):
            _wrap_tool_node(True)


OUTPUT_TARGET = ("langchain.agents.factory", "_handle_structured_output_error")  # LangChain 1.x
_output_hook_registered = False


def _wrap_output_when_imported() -> None:
    """Wrap :data:`OUTPUT_TARGET` now if LangChain's agents are imported, else when they are (a post-import hook,
    registered once: ``instrument()`` never imports ``langchain.agents`` itself)."""
    global _output_hook_registered
    if OUTPUT_TARGET[0] in sys.modules:
        _wrap(*OUTPUT_TARGET, _structured_output_error_wrapper)
    elif not _output_hook_registered:
        _output_hook_registered = True
        wrapt.register_post_import_hook(_output_module_imported, OUTPUT_TARGET[0])


def _output_module_imported(module: Any) -> None:
    if _output_rejected is not None:  # still instrumented
        with guard("langchain.patch_output"):
            _wrap(*OUTPUT_TARGET, _structured_output_error_wrapper)


def _wrap_methods(install: bool) -> None:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.language_models.llms import BaseLLM

    targets = [(BaseChatModel, attr, wrapper)
               for attr, wrapper in zip(MODEL_CALL_TARGETS, (_model_call_wrapper, _amodel_call_wrapper))]
    targets += [(cls, attr, wrapper) for cls in (BaseChatModel, BaseLLM) for attr, wrapper in STREAM_TARGETS]
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool

    targets += [(BaseTool, attr, wrapper) for attr, wrapper in TOOL_RUN_TARGETS]
    events = next((attr for attr in EVENTS_TARGETS if attr in Runnable.__dict__), None)
    if events is not None:
        targets.append((Runnable, events, _astream_events_wrapper))
    for owner, attr, wrapper in targets:
        current = owner.__dict__.get(attr)
        if current is None:
            continue
        if install and not _has_our_wrapper(current, wrapper):
            wrapt.wrap_function_wrapper(owner, attr, wrapper)
        elif not install and getattr(current, "_self_wrapper", None) is wrapper:
            setattr(owner, attr, current.__wrapped__)


def _has_our_wrapper(obj: Any, wrapper: Any) -> bool:
    """Whether ``wrapper`` (a wrapt wrapper function of ours) is anywhere in ``obj``'s ``__wrapped__`` chain."""
    for _ in range(32):
        if getattr(obj, "_self_wrapper", None) is wrapper:
            return True
        obj = getattr(obj, "__wrapped__", None)
        if obj is None:
            return False
    return False


def _wrap(module_name: str, attr: str, wrapper: Any) -> None:
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return  # LangGraph is optional
    current = vars(module).get(attr)
    if current is None or _has_our_wrapper(current, wrapper):
        return
    wrapt.wrap_function_wrapper(module, attr, wrapper)


def _unwrap(module_name: str, attr: str, wrapper: Any) -> None:
    module = sys.modules.get(module_name)
    current = vars(module).get(attr) if module is not None else None
    if current is not None and getattr(current, "_self_wrapper", None) is wrapper:
        setattr(module, attr, current.__wrapped__)
    # Otherwise a later wrapper sits on top of ours: leave ours there, switched off.


_dispatch_failed: Callable[[Any, BaseException], None] | None = None  # while instrumented
DISPATCH_TARGETS = ("handle_event", "ahandle_event")  # in langchain_core.callbacks.manager
_RUN_EVENTS = ("_start", "_end", "_error")  # the events that open or end a run (not tokens, retries, text)


def _dispatch_raised(event_name: Any, kwargs: Any, exc: BaseException) -> None:
    hook = _dispatch_failed
    run_id = kwargs.get("run_id")
    if hook is not None and run_id is not None and isinstance(event_name, str) and event_name.endswith(_RUN_EVENTS):
        with guard("langchain.dispatch_failed"):
            hook(run_id, exc)


def _dispatch_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    try:
        return wrapped(*args, **kwargs)
    except BaseException as exc:
        _dispatch_raised(args[1] if len(args) > 1 else None, kwargs, exc)
        raise


def _adispatch_wrapper(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
    async def call() -> Any:
        try:
            return await wrapped(*args, **kwargs)
        except BaseException as exc:
            _dispatch_raised(args[1] if len(args) > 1 else None, kwargs, exc)
            raise
    return call()


def install(span_context_for: Callable[[Any], Any], tool_run_failed: Callable[[list, BaseException], None],
            run_left: Callable[[Any, BaseException | None], None], run_dropped: Callable[[Any], None],
            output_rejected: Callable[[Any, BaseException], None] | None = None,
            dispatch_failed: Callable[[Any, BaseException], None] | None = None,
            tool_unknown: Callable[[Any, Any, Any], None] | None = None) -> None:
    """Switch the hooks on; ``span_context_for(run_id)`` returns the OTel ``Context`` to attach, or ``None``;
    ``tool_run_failed(run_ids, exc)`` ends the tool runs a failed ``BaseTool.run``/``arun`` left open;
    ``run_left(run_id, exc)`` ends a run LangChain left open (with ``exc``, or abandoned when ``None``);
    ``run_dropped(run_id)`` the same, abandoned, safe to call from a finaliser; ``output_rejected(run_id, exc)``
    records a structured output ``create_agent`` rejected and retries (see the module docstring, 7);
    ``dispatch_failed(run_id, exc)`` ends a run whose start or end dispatch raised ``exc`` (8);
    ``tool_unknown(run_id, call, message)`` records a call ``ToolNode`` answered as naming no tool it has (9)."""
    global _span_context_for, _graph_codes, _tool_run_failed, _run_left, _run_dropped, _output_rejected
    global _dispatch_failed, _tool_unknown, _tool_node_hook_registered
    _tool_run_failed = tool_run_failed
    _tool_unknown = tool_unknown
    with guard("langchain.patch_tool_node"):
        if TOOL_NODE_TARGET[0] in sys.modules:
            _wrap_tool_node(True)
        elif not _tool_node_hook_registered:
            _tool_node_hook_registered = True
            wrapt.register_post_import_hook(_tool_node_imported, TOOL_NODE_TARGET[0])
    _dispatch_failed = dispatch_failed
    _run_left, _run_dropped = run_left, run_dropped
    _output_rejected = output_rejected
    with guard("langchain.patch_output"):
        _wrap_output_when_imported()
    for module_name, attr in CONFIG_CONTEXT_TARGETS:
        with guard("langchain.patch"):
            _wrap(module_name, attr, _config_context_wrapper)
    for attr, wrapper in zip(DISPATCH_TARGETS, (_dispatch_wrapper, _adispatch_wrapper)):
        with guard("langchain.patch_dispatch"):
            _wrap("langchain_core.callbacks.manager", attr, wrapper)
    _span_context_for = span_context_for
    with guard("langchain.patch_model_calls"):
        _wrap_methods(True)
    with guard("langchain.graph_codes"):
        _graph_codes = _load_graph_codes()


def remove() -> None:
    """Switch both hooks off and take our wrappers out where they are on top."""
    global _span_context_for, _graph_codes, _tool_run_failed, _run_left, _run_dropped, _output_rejected
    global _dispatch_failed, _tool_unknown
    _span_context_for = None
    _tool_run_failed = _output_rejected = _dispatch_failed = _tool_unknown = None
    _run_left = _run_dropped = None
    _graph_codes = frozenset()
    for module_name, attr in CONFIG_CONTEXT_TARGETS:
        with guard("langchain.unpatch"):
            _unwrap(module_name, attr, _config_context_wrapper)
    for attr, wrapper in zip(DISPATCH_TARGETS, (_dispatch_wrapper, _adispatch_wrapper)):
        with guard("langchain.unpatch_dispatch"):
            _unwrap("langchain_core.callbacks.manager", attr, wrapper)
    with guard("langchain.unpatch_model_calls"):
        _wrap_methods(False)
    with guard("langchain.unpatch_output"):
        _unwrap(*OUTPUT_TARGET, _structured_output_error_wrapper)
    with guard("langchain.unpatch_tool_node"):
        _wrap_tool_node(False)


def _load_graph_codes() -> frozenset[Any]:
    try:
        from langgraph.pregel import Pregel
    except ImportError:
        return frozenset()
    codes = set()
    for name in ("stream", "astream"):
        fn = getattr(Pregel, name, None)
        code = getattr(inspect.unwrap(fn), "__code__", None) if fn is not None else None
        if code is not None:
            codes.add(code)
    return frozenset(codes)


def started_by_graph() -> bool:
    """Whether the run whose start callback is being handled was started by LangGraph's
    ``Pregel.stream``/``astream`` itself, i.e. it is a graph's root run (the first frame
    above the callback dispatch is one of those two functions)."""
    codes = _graph_codes
    if not codes:
        return False
    frame = sys._getframe(1)
    for _ in range(_MAX_DISPATCH_FRAMES):
        if frame is None or not str(frame.f_globals.get("__name__", "")).startswith(_DISPATCH_MODULES):
            break
        frame = frame.f_back
    return frame is not None and frame.f_code in codes
