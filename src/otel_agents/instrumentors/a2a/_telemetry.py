"""a2a-sdk's own spans (``a2a.utils.telemetry``), stood down while we instrument A2A.

a2a-sdk decorates its client transports, request handlers, dispatchers and event queue with
``trace_function``/``trace_class``: on whenever ``opentelemetry-api`` is importable (unless
``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false``), dozens of attribute-less spans per call
(``a2a.client.transports.jsonrpc.JsonRpcTransport.send_message``, …), streaming ones ending when
the stream is created, none carrying context across the wire. Each decorated call looks up the
module global ``trace`` and asks it for a tracer; while we are instrumented that global is a view
of ``opentelemetry.trace`` whose ``get_tracer`` returns the span layer's silent tracer (spans that
do not record and never become current, so nesting through the SDK's methods is untouched).
``restore()`` puts the very same module back. Nothing is done when a2a-sdk's tracing is off.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..._spans.silent import SILENT, StandDown

MODULE = "a2a.utils.telemetry"


class _SilentTrace:
    """``opentelemetry.trace`` with ``get_tracer`` returning the silent tracer."""

    def __init__(self, real: Any):
        self._real = real

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        return SILENT

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


_TRACE = StandDown("trace", _SilentTrace)


def silence() -> None:
    """Stand a2a-sdk's spans down (when its telemetry module is on)."""
    module = importlib.import_module(MODULE)
    if getattr(module, "otel_installed", False) and getattr(module, "otel_enabled", False):
        _TRACE.silence(module)


def restore() -> None:
    """Give a2a-sdk its tracing back (exactly: the original ``trace`` module)."""
    _TRACE.restore()
