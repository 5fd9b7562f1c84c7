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
   span around the call, detaching in the same frame. A bare ``model.stream()``
   calls the subclass's ``_stream`` directly and is not covered (a limit).

Removal only ever takes out our own wrapper: when another library wrapped the
same function after us, ours stays in place under theirs, switched off (a plain
pass-through), and is switched back on — not stacked again — by the next
``instrument()``.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from typing import Any, Callable

import wrapt
from opentelemetry import context as otel_context

from ..._spans import guard

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


def _wrap_model_calls(install: bool) -> None:
    from langchain_core.language_models.chat_models import BaseChatModel

    for attr, wrapper in zip(MODEL_CALL_TARGETS, (_model_call_wrapper, _amodel_call_wrapper)):
        current = BaseChatModel.__dict__.get(attr)
        if current is None:
            continue
        if install and not _has_our_wrapper(current, wrapper):
            wrapt.wrap_function_wrapper(BaseChatModel, attr, wrapper)
        elif not install and getattr(current, "_self_wrapper", None) is wrapper:
            setattr(BaseChatModel, attr, current.__wrapped__)


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


def install(span_context_for: Callable[[Any], Any]) -> None:
    """Switch both hooks on; ``span_context_for(run_id)`` returns the OTel ``Context`` to attach, or ``None``."""
    global _span_context_for, _graph_codes
    for module_name, attr in CONFIG_CONTEXT_TARGETS:
        with guard("langchain.patch"):
            _wrap(module_name, attr, _config_context_wrapper)
    _span_context_for = span_context_for
    with guard("langchain.patch_model_calls"):
        _wrap_model_calls(True)
    with guard("langchain.graph_codes"):
        _graph_codes = _load_graph_codes()


def remove() -> None:
    """Switch both hooks off and take our wrappers out where they are on top."""
    global _span_context_for, _graph_codes
    _span_context_for = None
    _graph_codes = frozenset()
    for module_name, attr in CONFIG_CONTEXT_TARGETS:
        with guard("langchain.unpatch"):
            _unwrap(module_name, attr, _config_context_wrapper)
    with guard("langchain.unpatch_model_calls"):
        _wrap_model_calls(False)


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
