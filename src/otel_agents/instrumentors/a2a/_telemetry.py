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

import sys
from typing import Any

from ..._spans.finalisers import new_lock
from ..._spans.silent import SILENT

MODULE = "a2a.utils.telemetry"
_lock = new_lock()
_saved: dict[str, Any] = {}


class _SilentTrace:
    """``opentelemetry.trace`` with ``get_tracer`` returning the silent tracer."""

    def __init__(self, real: Any):
        self._real = real

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        return SILENT

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def silence() -> None:
    """Stand a2a-sdk's spans down (when its telemetry module is on)."""
    module = sys.modules.get(MODULE)
    if module is None:
        import importlib

        module = importlib.import_module(MODULE)
    with _lock:
        if "trace" in _saved or not getattr(module, "otel_installed", False) or not getattr(module, "otel_enabled", False):
            return
        _saved["trace"] = module.trace
        module.trace = _SilentTrace(module.trace)


def restore() -> None:
    """Give a2a-sdk its tracing back (exactly: the original ``trace`` module)."""
    module = sys.modules.get(MODULE)
    with _lock:
        original = _saved.pop("trace", None)
        if module is not None and original is not None:
            module.trace = original
