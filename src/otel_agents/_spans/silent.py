"""A tracer that records nothing, for a library's own spans that ours replace while we instrument it.

FastMCP 3's client spans and ``mcp`` 2.x's (MCP) and a2a-sdk's ``a2a.utils.telemetry`` spans (A2A) duplicate
the spans we make for the same calls; their code gets :data:`SILENT` instead of a real tracer
(:class:`StandDown` swaps the module global a library looks its tracer up in).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, Tracer

from .finalisers import new_lock


class SilentTracer(Tracer):
    """A tracer whose spans do not record and never become current: each is a non-recording
    view of the current span (so code that reads the yielded span's context sees the caller's)."""

    def start_span(self, name: str, context: Any = None, *args: Any, **kwargs: Any) -> Span:
        return NonRecordingSpan(trace.get_current_span(context).get_span_context())

    @contextlib.contextmanager  # type: ignore[override]
    def start_as_current_span(self, name: str, context: Any = None, *args: Any, **kwargs: Any) -> Iterator[Span]:
        yield self.start_span(name, context)


SILENT = SilentTracer()


class StandDown:
    """A library's own tracing, stood down while we instrument it: :meth:`silence` replaces the module global
    ``name`` (what the library's spans look their tracer up in, at each span) with ``silent(original)``, and
    :meth:`restore` puts the very same object back. Silencing twice keeps the first original; a module
    without ``name`` (another release) is left as it is."""

    def __init__(self, name: str, silent: Callable[[Any], Any]):
        self.name = name
        self._silent = silent
        self._lock = new_lock()
        self._saved: tuple[Any, Any] | None = None  # (module, its original global) while silenced

    def silence(self, module: Any) -> None:
        """Replace ``module.<name>`` (no-op when already silenced or when ``module`` has no such global)."""
        with self._lock:
            if self._saved is not None or not hasattr(module, self.name):
                return
            original = getattr(module, self.name)
            self._saved = (module, original)
            setattr(module, self.name, self._silent(original))

    def restore(self) -> None:
        """Put the original back (no-op when not silenced)."""
        with self._lock:
            saved, self._saved = self._saved, None
            if saved is not None:
                setattr(saved[0], self.name, saved[1])
