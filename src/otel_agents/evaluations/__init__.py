"""Verdicts back into the trace: every ECP check as a ``gen_ai.evaluation.result`` on the span it graded.

``ecp run`` grades a run; Phoenix, Langfuse or any OTel backend shows the same run's spans. This
module joins the two: each check of an ``ecp run`` JSON report becomes one evaluation result
(OTel GenAI semconv v1.38+: the ``gen_ai.evaluation.result`` event with ``gen_ai.evaluation.name``,
``.score.value``, ``.score.label``, ``.explanation``) parented to the step it graded: the step's
root span (``agent/step``, as served by ``otel-agents ecp serve``), for every check, passed or
failed, so a check's mean score over root spans means something; a passing ``tool_usage`` check
names the tool span it matched as its evidence. The CLI is ``otel-agents ecp annotate REPORT.json``.

Usage::

    from otel_agents.evaluations import load_report, evaluation_results, emit_evaluations

    results = evaluation_results(load_report("report.json"))   # list[EvaluationResult]
    emit_evaluations(results, "file", "evaluations.jsonl")      # OTLP/JSON log lines
    emit_evaluations(results, "otlp")                           # OTel Logs SDK, OTLP/HTTP
    emit_evaluations(results, "phoenix", "http://127.0.0.1:6006")   # span annotations
    emit_evaluations(results, "langfuse", "https://cloud.langfuse.com")  # scores (LANGFUSE_*_KEY)

Content: the explanation is the grader's reasoning, which quotes what it graded (expected text,
tool arguments, a judge's comments); with content capture off
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=false``) no result carries one, in any target.
"""

from __future__ import annotations

import os
from typing import Sequence

from ._langfuse import score_langfuse
from ._logs import _export_otlp, emit_logs, export_otlp, write_file
from ._phoenix import Delivery, annotate_phoenix
from ._results import EVALUATION_RESULT_EVENT, EvaluationResult, evaluation_results, load_manifest, load_report

TARGETS = ("file", "otlp", "phoenix", "langfuse")


def emit_evaluations(results: Sequence[EvaluationResult], to: str = "file",
                     destination: str | os.PathLike[str] | None = None) -> Delivery:
    """Send ``results`` to one target.

    Args:
        to: ``file`` (OTLP/JSON log lines appended to ``destination``, a path, required),
            ``otlp`` (``destination``: the OTLP/HTTP logs URL, default from ``OTEL_EXPORTER_OTLP_*``),
            ``phoenix`` (``destination``: Phoenix's URL, default ``PHOENIX_COLLECTOR_ENDPOINT``),
            ``langfuse`` (``destination``: Langfuse's URL, default ``LANGFUSE_HOST``; keys from
            ``LANGFUSE_PUBLIC_KEY``/``LANGFUSE_SECRET_KEY``).

    Returns:
        A :class:`Delivery`: how many were sent, which failed (a line per refused trace for Phoenix and
        Langfuse, one line for log records a file or an OTLP backend did not take; one naming the endpoint
        when its host name was not looked up within 2 s, nothing sent) and how many had no
        trace to go on (``skipped``: Phoenix and Langfuse need one; log records are written without).

    Raises:
        ValueError: an unknown target, ``file`` without a path, Langfuse keys missing.
        OSError: the file cannot be opened.
        ImportError: ``otlp`` without ``opentelemetry-exporter-otlp-proto-http``.
    """
    if to == "file":
        if destination is None:
            raise ValueError("the file target needs a path")
        return _logs_delivery(len(results), write_file(results, destination), os.fspath(destination))
    if to == "otlp":
        from .._spans.redaction import redact_url

        url = os.fspath(destination) if destination else None
        accepted, unreachable = _export_otlp(results, url, None)
        if unreachable:  # its name not looked up in time: nothing sent
            return Delivery(failed=[unreachable])
        return _logs_delivery(len(results), accepted, redact_url(url) if url else "the OTLP logs endpoint")
    if to == "phoenix":
        return annotate_phoenix(results, os.fspath(destination) if destination else None)
    if to == "langfuse":
        return score_langfuse(results, os.fspath(destination) if destination else None)
    raise ValueError(f"unknown target {to!r}; choose from {', '.join(TARGETS)}")


def _logs_delivery(total: int, accepted: int, where: str) -> Delivery:
    """A :class:`Delivery` of log records: those the exporter did not accept are one failure line."""
    failed = [f"{total - accepted} of {total} evaluation records not accepted by {where} (see the log above)"]
    return Delivery(sent=accepted, failed=failed if accepted < total else [])


__all__ = ["EVALUATION_RESULT_EVENT", "TARGETS", "Delivery", "EvaluationResult", "annotate_phoenix",
           "emit_evaluations", "emit_logs", "evaluation_results", "export_otlp", "load_manifest", "load_report",
           "score_langfuse", "write_file"]
