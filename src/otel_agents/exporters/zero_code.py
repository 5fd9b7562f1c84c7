"""The trace exporters ``opentelemetry-instrument --traces_exporter ecp,otlp_json_file`` builds (their entry points).

The distro builds each exporter it is told to with no arguments, and an exception there ends its whole set-up: no
exporter at all (``console`` and ``otlp`` included), no instrumentation, the same traceback printed twice. So a
file that cannot be opened (``OTEL_AGENTS_ECP_FILE`` or ``OTEL_AGENTS_TRACES_FILE`` naming a directory, no
permission) is one ERROR here, naming the variable and its value, and that exporter drops what it is given while
the rest of the set-up runs. Built in code, :class:`~otel_agents.exporters.ecp.ECPFileExporter` and
:class:`~otel_agents.exporters.file.OTLPJsonFileExporter` raise the ``OSError`` instead.

Beside them, the distro's own ``otlp`` traces exporter follows ``OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`` (the standard
distro's default is ``grpc``): the ``otlp-grpc`` extra brings its gRPC exporter, ``otlp`` its HTTP one, and
``otel-agents doctor`` says which one it would load and whether it is installed.
"""

from __future__ import annotations

import logging
from typing import Callable, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

logger = logging.getLogger("otel_agents")


class Unwritable(SpanExporter):
    """What a zero-code file exporter is when its file could not be opened: every batch is dropped
    (``FAILURE``); the reason was logged when it was built."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Drop ``spans``: ``FAILURE``."""
        return SpanExportResult.FAILURE


def _built(name: str, make: Callable[[], SpanExporter]) -> SpanExporter:
    try:
        return make()
    except OSError as exc:  # the message names the variable and its value (exporters/_appender.naming)
        logger.error("otel_agents: %s; the %r traces exporter writes nothing (the other exporters and the "
                     "instrumentation run)", exc.strerror or exc, name)
        return Unwritable()


# The distro accepts an entry point only if it is a SpanExporter subclass, and calls it with no arguments:
# each class's __new__ gives it the real exporter (or an Unwritable one), so its own __init__ never runs.
class ECPFile(SpanExporter):
    """Entry point ``ecp``: an :class:`~otel_agents.exporters.ecp.ECPFileExporter` on the global provider."""

    def __new__(cls) -> SpanExporter:  # type: ignore[misc]
        from .ecp import ECPFileExporter

        return _built("ecp", ECPFileExporter)


class OTLPJsonFile(SpanExporter):
    """Entry point ``otlp_json_file``: an :class:`~otel_agents.exporters.file.OTLPJsonFileExporter`."""

    def __new__(cls) -> SpanExporter:  # type: ignore[misc]
        from .file import OTLPJsonFileExporter

        return _built("otlp_json_file", OTLPJsonFileExporter)
