"""Evaluation results as OTel log records: ``gen_ai.evaluation.result`` events, each carrying the
trace and span id of the span it graded (the event's parent, as the GenAI semconv asks), written as
OTLP/JSON lines or exported over OTLP/HTTP through the OTel Logs SDK."""

from __future__ import annotations

import logging
import os
import time
from typing import Any, Sequence

from opentelemetry import trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from ._results import EVALUATION_RESULT_EVENT, EvaluationResult

SCOPE = "otel_agents.evaluations"
DEFAULT_SERVICE_NAME = "otel-agents-ecp"  # the name `ecp serve` gives the graded runs


class _Counted(LogRecordExporter):
    """``exporter``, counting the records of the batches it accepted (an export reports failure, never raises);
    with ``answers`` (the session the exporter sends with), what the backend's answer says it accepted."""

    def __init__(self, exporter: LogRecordExporter, answers: Any = None) -> None:
        self.exporter = exporter
        self.answers = answers
        self.accepted = 0

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        result = self.exporter.export(batch)
        if result == LogRecordExportResult.SUCCESS:
            if self.answers is None:
                self.accepted += len(batch)
                return result
            verdict = self.answers.verdict(len(batch))
            self.accepted += verdict.accepted
            if verdict.problem:
                logging.getLogger("otel_agents").warning("otel_agents: %s: %s", self.answers.url,
                                                         verdict.problem)
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.exporter.shutdown()


def emit_logs(results: Sequence[EvaluationResult], exporter: LogRecordExporter,
              resource: Resource | None = None, *, answers: Any = None) -> int:
    """Emit one ``gen_ai.evaluation.result`` event per result through ``exporter``; returns how many
    the exporter accepted (fewer than ``len(results)`` when a backend refused or a write failed).
    ``answers``: the :class:`~otel_agents.exporters._accepted.Answers` whose session an OTLP/HTTP ``exporter``
    sends with: records a ``partial_success`` answer rejected, and a batch answered with a redirect (which the
    exporter does not follow), are not counted as accepted, and each such answer is logged as a WARNING.

    The events go through a private ``LoggerProvider`` (never the global one) that is shut down,
    and so flushed, before this returns. ``resource`` defaults to ``Resource.create`` with
    ``service.name`` ``otel-agents-ecp`` (``ecp serve``'s), which ``OTEL_SERVICE_NAME`` and
    ``OTEL_RESOURCE_ATTRIBUTES`` override.
    """
    from .. import __version__

    if resource is None:
        resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE_NAME})
    provider = LoggerProvider(resource=resource)
    counted = _Counted(exporter, answers)
    provider.add_log_record_processor(BatchLogRecordProcessor(counted))
    logger = provider.get_logger(SCOPE, __version__)
    try:
        for result in results:
            logger.emit(timestamp=time.time_ns(), context=_context(result), event_name=EVALUATION_RESULT_EVENT,
                        attributes=result.attributes())
    finally:
        provider.shutdown()
    return counted.accepted


def _context(result: EvaluationResult):
    """A context whose current span is the graded one (no span: the event has no parent)."""
    if not result.trace_id:
        return trace.set_span_in_context(trace.INVALID_SPAN)
    ctx = SpanContext(int(result.trace_id, 16), int(result.span_id or "0", 16), is_remote=True,
                      trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return trace.set_span_in_context(NonRecordingSpan(ctx))


def write_file(results: Sequence[EvaluationResult], path: str | os.PathLike[str]) -> int:
    """Append the results to ``path`` as OTLP/JSON log lines (one ``ExportLogsServiceRequest`` per line).

    Raises:
        OSError: the file cannot be opened for appending.
    """
    from ..exporters.file import OTLPJsonLogFileExporter

    return emit_logs(results, OTLPJsonLogFileExporter(path))


def export_otlp(results: Sequence[EvaluationResult], endpoint: str | None = None,
                headers: dict[str, str] | None = None) -> int:
    """Export the results with the OTLP/HTTP log exporter (``opentelemetry-exporter-otlp-proto-http``); returns how
    many the backend accepted.

    Args:
        endpoint: the logs URL (``http://host:4318/v1/logs``); ``None``: the exporter's own defaults
            (``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT``, ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/logs``, ...).
        headers: extra request headers (else ``OTEL_EXPORTER_OTLP_*HEADERS``).

    An endpoint whose host name is not looked up within
    :data:`~otel_agents.exporters._reach.BOUND` seconds (the exporter's timeout does not cover the lookup: a
    resolver that does not answer held it without limit) gets nothing: 0 is returned and one WARNING names the
    URL and why.

    The exporter's variables are read under the OpenTelemetry specification's rules, as the ``otlp`` preset reads
    the traces ones: ``OTEL_EXPORTER_OTLP_(LOGS_)TIMEOUT`` that is no positive number of seconds, and, without
    ``endpoint``, ``OTEL_EXPORTER_OTLP_(LOGS_)PROTOCOL`` that is no known protocol (read in any case), and
    ``OTEL_EXPORTER_OTLP_(LOGS_)COMPRESSION`` that is none of ``gzip``, ``deflate``, ``none``, are ignored with a WARNING
    naming them (``otel-agents doctor`` lists such values among the traces exporter's).

    Raises:
        ImportError: the exporter is not installed (``pip install 'otel-agents[otlp]'``).
        ValueError: without ``endpoint``, ``OTEL_EXPORTER_OTLP_(LOGS_)ENDPOINT`` is no http(s) URL, or
            ``OTEL_EXPORTER_OTLP_(LOGS_)PROTOCOL`` is ``grpc`` (the records are sent over HTTP), naming the variable.
    """
    import logging

    accepted, unreachable = _export_otlp(results, endpoint, headers)
    if unreachable:
        logging.getLogger("otel_agents").warning("otel_agents: %s", unreachable)
    return accepted


def _export_otlp(results: Sequence[EvaluationResult], endpoint: str | None,
                 headers: dict[str, str] | None) -> tuple[int, str | None]:
    """:func:`export_otlp`: how many were accepted, and why none was sent when the endpoint's name was not looked
    up in time (``"http://host:4318/v1/logs: host:4318: the name lookup did not finish within 2 s; 3 evaluation
    records not sent"``), else ``None``."""
    try:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    except ImportError as exc:  # said as every OTLP preset says it: the package and the extra
        from ..exporters.presets import _missing_exporter

        raise _missing_exporter("http/protobuf", "--to otlp (OTLP/HTTP logs)") from exc
    from ..exporters._reach import lookup_problem

    from opentelemetry.exporter.otlp.proto.http import Compression

    from .._spans.redaction import redact_url
    from ..exporters._accepted import Answers

    timeout, compression = checked_otlp_variables(endpoint)
    answers = Answers("log_records")  # the exporter counts a partial success or a redirect as sent
    exporter = OTLPLogExporter(endpoint=endpoint, headers=headers, timeout=timeout,
                               compression=Compression(compression), session=answers.session)
    url = getattr(exporter, "_endpoint", None) or endpoint  # as the exporter resolved it from the variables
    answers.url = redact_url(url) if url else "the OTLP logs endpoint"  # for messages: no credentials
    unreachable = lookup_problem(url) if url and results else None
    if unreachable is not None:
        exporter.shutdown()
        return 0, f"{answers.url}: {unreachable}; {len(results)} evaluation records not sent"
    return emit_logs(results, exporter, answers=answers), None


def checked_otlp_variables(endpoint: str | None) -> tuple[float | None, str]:
    """The OTLP/HTTP log exporter's variables checked as the ``otlp`` preset checks the traces ones (see
    :func:`export_otlp`); returns the timeout to give the exporter (``None``: it reads its variables itself) and
    its compression (``gzip``, ``deflate`` or ``none``: ``OTEL_EXPORTER_OTLP_(LOGS_)COMPRESSION``, a value it does
    not take ignored with a WARNING, :func:`~otel_agents.exporters.presets.checked_compression`).

    Raises:
        ValueError: without ``endpoint``, ``OTEL_EXPORTER_OTLP_(LOGS_)ENDPOINT`` is no http(s) URL, or
            ``OTEL_EXPORTER_OTLP_(LOGS_)PROTOCOL`` is ``grpc``, naming the variable.
    """
    from ..exporters.presets import _checked_timeout, check_endpoint_variables, checked_compression, http_protobuf_only

    if endpoint is None:  # the exporter reads these itself
        check_endpoint_variables(("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"))
        http_protobuf_only("--to otlp", ("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"))
    return (_checked_timeout(None, ("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")),
            checked_compression(None, "http/protobuf",
                                ("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION")))
