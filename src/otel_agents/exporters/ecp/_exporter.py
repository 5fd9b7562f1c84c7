"""``ECPFileExporter``: a span exporter that writes one ECP envelope per finished run as JSON lines.

It is what the ``ecp`` entry point of the ``opentelemetry_traces_exporter`` group builds
(:mod:`otel_agents.exporters.zero_code`), so the OpenTelemetry distro can name it with no change to the
application::

    opentelemetry-instrument --traces_exporter ecp,otlp_json_file \\
        --metrics_exporter none --logs_exporter none python app.py

writes ``otel-agents-envelopes.jsonl`` (``OTEL_AGENTS_ECP_FILE``) beside the OTLP/JSON traces.

How runs are assembled: exactly as :class:`ECPFoldingProcessor` does, because it *is* one
(:attr:`ECPFileExporter.folding`): its ``on_end`` is fed from :meth:`export`, batch by batch, and
its ``on_start`` from a small span processor the exporter adds to the tracer provider when it is
built (:class:`SpanStarts`). An exporter alone sees spans only after they end, and from ended
spans a sub-agent whose parent agent is still running cannot be told apart from a run under a
still-open HTTP span (see :mod:`._processor`); the start of each span settles it. So runs whose
spans arrive in several export batches, late children, runs that never finish (age limit; folded,
marked ``incomplete``, at shutdown) and the memory bounds all behave as documented for the
processor. A batch processor in front (the distro's ``BatchSpanProcessor``) only delays the ends,
which the open-span counts wait for. Spans a batch processor drops (its queue full) never end
here: their runs are folded at the age limit or at shutdown, marked ``incomplete``.

Processes that fork (gunicorn workers): a forked child starts with no open runs (the parent's
open runs stay the parent's, whose batch processor also keeps their queued spans), and all
processes append to the same file, one whole line per envelope
(:mod:`otel_agents.exporters._appender`). Each process writes the envelopes of its own runs when
they finish and the rest when it exits normally (the SDK shuts the provider down at exit); a
worker killed with ``SIGKILL`` or ended with ``os._exit`` loses its unfinished runs.
"""

from __future__ import annotations

import os
import weakref
from typing import Any, Sequence

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ..._spans.guard import report_internal_error
from .._appender import JsonLinesAppender, file_setting, naming
from ..presets import DEFAULT_ECP_FILE, ENV_ECP_FILE
from ._json import envelope_line
from ._processor import ECPFoldingProcessor


class ECPFileExporter(SpanExporter):
    """Append one ECP envelope (:func:`otel_agents.exporters.ecp.fold`'s shape) per finished run
    to ``path``, one JSON object per line — the same lines ``otel-agents fold`` writes.

    Args:
        path: the file; created (with its directory) if missing, appended to otherwise. Default:
            ``OTEL_AGENTS_ECP_FILE``, else ``otel-agents-envelopes.jsonl`` in the working directory.
        tracer_provider: the SDK ``TracerProvider`` whose spans this exporter receives; default
            the global one (the distro sets it before it builds its exporters). The exporter adds a
            :class:`SpanStarts` processor to it.
        **options: passed to :class:`ECPFoldingProcessor` (``max_open_runs``,
            ``max_spans_per_run``, ``max_age_s``, ``include_thoughts``, ``grace_s``, ``clock``).

    Raises:
        TypeError: no SDK ``TracerProvider`` to watch span starts on (the global provider is not
            set yet: pass ``tracer_provider=``).
        OSError: the file cannot be opened for appending (its message names the path and where it
            came from: the argument or ``OTEL_AGENTS_ECP_FILE``).

    Put it behind a ``BatchSpanProcessor`` or a ``SimpleSpanProcessor`` on that same provider.
    Envelopes are written when a run's last span reaches :meth:`export`; :meth:`force_flush`
    folds runs waiting out ``grace_s``; :meth:`shutdown` folds every open run (marked
    ``incomplete``) and closes the file. :attr:`folding` ``.dropped`` counts what the bounds cut.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 tracer_provider: TracerProvider | None = None, **options: Any):
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            raise TypeError("ECPFileExporter needs the SDK TracerProvider it exports for, to see spans start: "
                            f"got {type(provider).__name__}; pass tracer_provider=")
        self._options = options
        self.folding = self._new_folding()
        target, setting = file_setting(path, ENV_ECP_FILE, DEFAULT_ECP_FILE)
        with naming(setting, "envelopes"):
            self._out = JsonLinesAppender(target)
        self.path = self._out.path
        provider.add_span_processor(SpanStarts(self))
        # Fork: the folding processor starts a forked child with no open runs itself, and the
        # appender re-makes its lock; nothing else here holds state.

    # -- SpanExporter ----------------------------------------------------------------
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Fold ``spans`` (ended): each run whose last span this is becomes one envelope line; ``SUCCESS``
        (a lost envelope is reported, never raised)."""
        folding = self.folding
        for span in spans:
            folding.on_end(span)  # folds and writes each run whose last span this is
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Fold the runs waiting out ``grace_s`` and those past ``max_age_s`` now; ``True``
        (:meth:`ECPFoldingProcessor.force_flush`)."""
        return self.folding.force_flush(timeout_millis)

    def shutdown(self) -> None:
        """Fold every open run (marked ``incomplete``) and close the file."""
        self.folding.shutdown()
        self._out.close()

    # -- internals -------------------------------------------------------------------
    def _new_folding(self) -> ECPFoldingProcessor:
        return ECPFoldingProcessor(self._write, **self._options)

    def _write(self, envelope: dict[str, Any]) -> None:
        try:
            line = envelope_line(envelope)  # the same bytes as otel-agents fold
            self._out.append(line)  # False only after shutdown, when the folding is closed too
        except Exception as exc:  # noqa: BLE001 - a lost envelope is reported, never raised into the app
            report_internal_error("ecp.write", exc)


class SpanStarts(SpanProcessor):
    """Hands span starts to an :class:`ECPFileExporter`'s folding processor (ends arrive through
    :meth:`ECPFileExporter.export`). Only sampled spans: no other span is ever exported."""

    def __init__(self, exporter: ECPFileExporter):
        self._exporter = weakref.ref(exporter)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        exporter = self._exporter()
        if exporter is not None and span.context is not None and span.context.trace_flags.sampled:
            exporter.folding.on_start(span, parent_context)
