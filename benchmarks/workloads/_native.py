"""Frameworks whose native tracing writes to the *global* tracer provider (Google ADK, AutoGen's
``autogen-core`` GenAI spans): a switch installed once as that provider, so the native variant can
be turned on and off between batches like any instrumentor (the SDK lets the global provider be set
only once per process).

Off, every tracer it hands out is OpenTelemetry's no-op tracer: what these frameworks do when no
provider is configured, the baseline and every other variant's condition.
"""

from __future__ import annotations

from typing import Any, Callable

from opentelemetry import trace

_switch: "_Switch | None" = None


class _SwitchTracer(trace.Tracer):
    def __init__(self, switch: "_Switch", args: tuple, kwargs: dict) -> None:
        self._switch, self._args, self._kwargs = switch, args, kwargs

    def _tracer(self) -> trace.Tracer:
        target = self._switch.target
        return target.get_tracer(*self._args, **self._kwargs) if target is not None else trace.NoOpTracer()

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return self._tracer().start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._tracer().start_as_current_span(*args, **kwargs)


class _Switch(trace.TracerProvider):
    def __init__(self) -> None:
        self.target: Any = None

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return _SwitchTracer(self, args, kwargs)


def global_switch() -> _Switch:
    """The switch, set as the global tracer provider on first use."""
    global _switch
    if _switch is None:
        _switch = _Switch()
        trace.set_tracer_provider(_switch)
        if trace.get_tracer_provider() is not _switch:
            raise RuntimeError("a global tracer provider was already set: the native variant cannot be switched")
    return _switch


def native(provider: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``(install, remove)``: the framework's native spans go to ``provider`` between the two."""
    switch = global_switch()

    def install() -> None:
        switch.target = provider

    def remove() -> None:
        switch.target = None

    return install, remove
