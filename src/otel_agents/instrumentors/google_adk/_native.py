"""Google ADK's own OpenTelemetry spans, while our instrumentor is on.

ADK traces itself through one module tracer, ``google.adk.telemetry.tracing.tracer`` (scope
``gcp.vertex.agent``): ``invocation``/``invoke_workflow``, ``invoke_agent``, ``call_llm``/
``generate_content``, ``execute_tool`` and a few more. Those are GenAI-semconv spans of the same
steps ours record, in a tree of their own beside ours: exported together, every agent, model
request and tool call shows twice (backends, the ECP fold). So while we are instrumented that
tracer is replaced, at every ADK module that holds it, by :class:`StoodDownTracer`, whose spans do
not record. Each stand-in span carries its parent's span context and is made current where ADK
makes its own current, so the context ADK's code sees is the caller's (our spans keep their
parents) and an attribute ADK writes on "the current span" lands on the stand-in, never on a span
of ours. ``uninstrument()`` puts ADK's tracer back. An application that sets ADK's module tracer
itself after ``instrument()`` gets its spans (the fold still counts each step once).
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan

from ..._spans import Activation

_ADK_MODULES = "google.adk"


class StoodDownTracer(trace.Tracer):
    """A tracer whose spans do not record and stand in for their parent (see the module docstring)."""

    def __init__(self, original: Any):
        self.original = original

    def start_span(self, name: str = "", context: Any = None, *args: Any, **kwargs: Any) -> trace.Span:
        return NonRecordingSpan(trace.get_current_span(context).get_span_context())

    def start_as_current_span(self, name: str = "", context: Any = None, *args: Any,
                              **kwargs: Any) -> "_Current":
        return _Current(self, name, context)


class _Current(Activation):
    """``with``: a stand-in span current inside the block, as ``trace.use_span`` would make it; what
    ``use_span`` does besides (end the span, record the exception on it) a stand-in ignores, as it does not
    record. Also a function decorator, as OTel's ``start_as_current_span`` is: each call runs inside a
    stand-in made at that call."""

    __slots__ = ("_tracer", "_name", "_parent")

    def __init__(self, tracer: StoodDownTracer, name: str, parent: Any):
        self._tracer, self._name, self._parent = tracer, name, parent
        Activation.__init__(self, tracer.start_span(name, parent))

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        tracer, name, parent = self._tracer, self._name, self._parent
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def acall(*args: Any, **kwargs: Any) -> Any:
                with _Current(tracer, name, parent):
                    return await fn(*args, **kwargs)

            return acall

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            with _Current(tracer, name, parent):
                return fn(*args, **kwargs)

        return call


class NativeSpans:
    """ADK's module tracer replaced by a :class:`StoodDownTracer` at every ADK module holding it."""

    def __init__(self) -> None:
        from google.adk.telemetry import tracing

        self.original = tracing.tracer
        self.stand_in = StoodDownTracer(self.original)
        for module in _adk_modules_holding(self.original):  # ADK modules imported later take the stand-in
            module.tracer = self.stand_in

    def restore(self) -> None:
        """Put ADK's tracer back where the stand-in is (a tracer the application set since stays)."""
        for module in _adk_modules_holding(self.stand_in):
            module.tracer = self.original


def _adk_modules_holding(tracer: Any) -> list[Any]:
    return [module for name, module in list(sys.modules.items())
            if (name == _ADK_MODULES or name.startswith(_ADK_MODULES + ".")) and module is not None
            and getattr(module, "__dict__", {}).get("tracer") is tracer]
