"""A tracer that records nothing, for a library's own spans that ours replace while we instrument it.

FastMCP 3's client spans (MCP) and a2a-sdk's ``a2a.utils.telemetry`` spans (A2A) duplicate the
spans we make for the same calls; their code gets :data:`SILENT` instead of a real tracer.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, Tracer


class SilentTracer(Tracer):
    """A tracer whose spans do not record and never become current: each is a non-recording
    view of the current span (so code that reads the yielded span's context sees the caller's)."""

    def start_span(self, name: str, context: Any = None, *args: Any, **kwargs: Any) -> Span:
        return NonRecordingSpan(trace.get_current_span(context).get_span_context())

    @contextlib.contextmanager  # type: ignore[override]
    def start_as_current_span(self, name: str, context: Any = None, *args: Any, **kwargs: Any) -> Iterator[Span]:
        yield self.start_span(name, context)


SILENT = SilentTracer()
