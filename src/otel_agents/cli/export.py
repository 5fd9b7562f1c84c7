"""``otel-agents export TRACES.jsonl [...] --to URL``: send stored OTLP/JSON traces to an OTLP backend.

Reads OTLP/JSON lines (``--trace-file`` of ``ecp serve``, the ``file`` preset, ``make demo``'s
``out/*/trace.jsonl``, a Collector ``file`` exporter; ``-`` reads standard input) with the reader
``otel-agents fold`` uses, and sends the spans over OTLP/HTTP in protobuf, the encoding every OTLP
backend takes (Phoenix, for one, refuses OTLP/JSON with 415), through the OpenTelemetry OTLP/HTTP
span exporter (the ``otlp`` extra). Trace, span and parent ids are sent as the file has them (hex in
JSON, bytes on the wire), resources and scopes kept, so the backend shows the runs as they were
recorded, under the ids ``ecp annotate`` puts its checks on.

URL is the traces endpoint (``http://127.0.0.1:6006/v1/traces``); a URL without a path gets
``/v1/traces``. Headers: ``--header NAME=VALUE`` (repeatable), else the standard
``OTEL_EXPORTER_OTLP_TRACES_HEADERS`` / ``OTEL_EXPORTER_OTLP_HEADERS``. Spans go in batches of
``--batch-size``; the exporter retries a batch refused with 429, 502, 503 or 504 or a connection
error, with backoff, for at most ``--timeout`` seconds per batch. A batch still refused stops the
export: the error names the HTTP status and the lines the batch came from, and the spans not sent
are counted. The endpoint's name is looked up first, within 2 s (the exporter's timeout does not
cover the lookup): one not found in that time stops the export before anything is sent.

A batch the receiver finds too large (413) is sent again in halves, down to single spans.
What the exporter counts as sent is checked against the answer (it takes any status from 200 to 399 and never
reads the body): spans a ``partial_success`` answer says were rejected are counted and its message shown (the
export goes on), and a redirect, which the exporter does not follow, stops the export as a refusal does; so does a
2xx whose body is not an ``ExportTraceServiceResponse`` (an HTML page: a proxy's or a login page), its content type
and start quoted (``otel_agents.exporters._accepted``).

A malformed line is reported on standard error as ``FILE:LINE: problem`` and skipped; the spans of
the lines around it are sent. Lines holding logs or metrics (``ecp annotate``'s evaluation records)
are skipped silently. Exit codes: 0 — every span was read and sent; 1 — some lines were skipped, some
spans not sent or rejected, or no span in the input (a file of envelopes given by mistake); 2 — bad arguments, an
input that cannot be read, or no OTLP/HTTP exporter.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from . import NO_SPAN_IN_INPUT, plain, skipped_summary, standard_input
from ._types import at_least_one, positive_seconds

DEFAULT_BATCH = 512  # the SDK BatchSpanProcessor's max_export_batch_size
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp"  # where the OTLP exporters report a refused batch


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents export`` (its arguments, ``func=run``) to ``sub``, the parent's subparsers."""
    p = sub.add_parser("export", help="send stored OTLP/JSON traces to an OTLP/HTTP backend (protobuf)",
                       description=plain(__doc__.split("\n\n", 1)[1]),
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="exit codes: 0 all sent, 1 lines skipped or spans not sent, 2 bad arguments or "
                              "unreadable input")
    p.add_argument("traces", nargs="+", metavar="TRACES.jsonl", help="OTLP/JSON lines; '-' for standard input")
    p.add_argument("--to", required=True, metavar="URL",
                   help="the OTLP/HTTP traces endpoint, e.g. http://127.0.0.1:6006/v1/traces")
    p.add_argument("-H", "--header", action="append", default=[], metavar="NAME=VALUE",
                   help="a request header (repeatable; default OTEL_EXPORTER_OTLP_TRACES_HEADERS)")
    p.add_argument("--timeout", type=positive_seconds, default=10.0, metavar="SECONDS",
                   help="per batch, retries included (default 10)")
    p.add_argument("--batch-size", type=at_least_one, default=DEFAULT_BATCH, metavar="SPANS",
                   help=f"spans per request (default {DEFAULT_BATCH})")
    p.set_defaults(func=run)


def traces_url(value: str) -> str:
    """``value`` checked to be an http(s) URL; ``/v1/traces`` appended when it has no path.

    Raises:
        ValueError: not an ``http``/``https`` URL with a host (a malformed host or port included).
    """
    from ..exporters.presets import check_url  # the presets' own check: malformed hosts and ports named too

    parsed = urlsplit(check_url(value, "--to"))
    if parsed.path in ("", "/"):
        parsed = parsed._replace(path="/v1/traces")
    return urlunsplit(parsed)


def parse_headers(values: list[str]) -> dict[str, str]:
    """``["name=value", ...]`` → a dict (``name: value`` is taken too, as curl writes it).

    Raises:
        ValueError: a header without ``=`` or ``:``, with an empty name or a name or value HTTP cannot carry
            (:func:`~otel_agents.exporters.presets.check_header`: a line break, a space in the name).
    """
    from ..exporters.presets import check_header

    headers: dict[str, str] = {}
    for item in values:
        sep = min((i for i in (item.find("="), item.find(":")) if i > 0), default=-1)
        if sep <= 0 or not item[:sep].strip():
            raise ValueError(f"--header must be NAME=VALUE, got {item.split('=')[0].split(':')[0]!r}…")
        name = item[:sep].strip().lower()
        check_header("", "--header", name)
        headers[name] = check_header(item[sep + 1:].strip(), f"--header {name}")
    return headers


class _Refusals(logging.Handler):
    """Keeps the OTLP exporter's error lines (why a batch was refused), instead of printing them raw."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage().strip())
        except Exception:  # noqa: BLE001 - a log line we cannot format is no reason to fail
            self.messages.append(str(record.msg))


def run(args: argparse.Namespace) -> int:
    """``otel-agents export``: the exit status — 0 every span sent, 1 malformed lines skipped, spans the
    backend refused or no span in the input (each said on standard error), 2 bad arguments, a missing OTLP exporter, or an input
    that cannot be read."""
    from opentelemetry.sdk.trace.export import SpanExportResult

    from .._spans.redaction import redact_url
    from ..exporters._reach import lookup_problem
    from ..exporters.file import MalformedLine, iter_otlp_json
    from ..exporters.presets import otlp

    def fail(message: str) -> int:
        print(f"otel-agents export: {message}", file=sys.stderr)
        return 2

    try:
        url = traces_url(args.to)
        headers = parse_headers(args.header)
    except ValueError as exc:
        return fail(str(exc))
    endpoint = redact_url(url)  # as messages show it: never the credentials of a user:password@ URL
    if args.traces.count("-") > 1:
        return fail("standard input ('-') can be read once")
    try:
        from ..exporters._accepted import Answers

        answers = Answers("spans")  # the exporter counts a partial success or a redirect as sent: we read the answer
        exporter = otlp(url, headers or None, timeout=args.timeout, protocol="http/protobuf",
                        session=answers.session).build()
    except ImportError:
        return fail("needs the OTLP/HTTP exporter: pip install 'otel-agents[otlp]'")
    unreachable = lookup_problem(url)  # the exporter's timeout does not cover the name lookup
    if unreachable is not None:
        exporter.shutdown()
        print(f"otel-agents export: cannot reach {endpoint}: {unreachable}; no span sent", file=sys.stderr)
        return 1

    class Errors(list):  # reports each malformed line the moment it is read
        def append(self, problem: MalformedLine) -> None:
            super().append(problem)
            print(f"otel-agents export: skipped {problem}", file=sys.stderr)

    errors = Errors()
    refusals = _Refusals()
    exporter_log = logging.getLogger(_EXPORTER_LOGGER)
    exporter_log.addHandler(refusals)
    batch: list[Any] = []
    lines: list[tuple[str, int]] = []  # (file, line) of the first and last span in the batch
    counts = {"sent": 0, "read": 0, "rejected": 0}
    traces: set[int] = set()
    refused: str | None = None

    def deliver(spans: list[Any], where: str) -> str | None:
        """Send ``spans`` (read from ``where``), counting what the backend accepted and rejected; why none of them
        was accepted, or ``None``. A batch answered 413 (too large for the receiver: ``ecp collect`` takes 4 MiB,
        our batch of 512 spans with their content can be far more) is sent again in halves."""
        refusals.messages.clear()
        result = exporter.export(spans)
        if result is not SpanExportResult.SUCCESS:
            if answers.too_large() and len(spans) > 1:
                half = len(spans) // 2
                return deliver(spans[:half], where) or deliver(spans[half:], where)
            # the exporter's last lines: the refusal, or the last transient error and "timeout, max retries"
            why = " / ".join(dict.fromkeys(refusals.messages[-2:])) or "the exporter gave no reason"
            return f"{len(spans)} span(s) from {where} not accepted by {endpoint}: {why}"
        verdict = answers.verdict(len(spans))
        if not verdict.arrived:  # a redirect: refused, as a 4xx is
            return f"{len(spans)} span(s) from {where} not accepted by {endpoint}: {verdict.problem}"
        counts["sent"] += verdict.accepted
        counts["rejected"] += len(spans) - verdict.accepted
        if verdict.problem:
            print(f"otel-agents export: {where}: {endpoint} answered: {verdict.problem}", file=sys.stderr)
        return None

    def send() -> None:
        nonlocal refused
        if not batch or refused:
            return
        (first_file, first), (last_file, last) = lines[0], lines[-1]
        where = f"{first_file}:{first}" + (f"-{last}" if first_file == last_file and last != first else
                                           "" if first_file == last_file else f" to {last_file}:{last}")
        refused = deliver(list(batch), where)
        batch.clear()
        lines.clear()

    try:
        for name in args.traces:
            shown = "<stdin>" if name == "-" else name
            try:
                source: Any = standard_input() if name == "-" else name
                for number, spans in iter_otlp_json(source, errors=errors):
                    counts["read"] += len(spans)
                    traces.update(s.context.trace_id for s in spans)
                    for span in spans:
                        if refused:
                            break
                        batch.append(span)
                        if not lines:
                            lines.append((shown, number))
                        lines[1:] = [(shown, number)]
                        if len(batch) >= args.batch_size:
                            send()
            except OSError as exc:
                send()
                exporter.shutdown()
                print(f"otel-agents export: {counts['sent']} span(s) sent before the error", file=sys.stderr)
                return fail(f"cannot read {shown}: {exc.strerror or exc}")
        send()
    finally:
        exporter_log.removeHandler(refusals)
    exporter.shutdown()
    if refused:
        print(f"otel-agents export: {refused}; stopped, "
              f"{counts['read'] - counts['sent'] - counts['rejected']} span(s) not sent", file=sys.stderr)
    rejected = f"; {counts['rejected']} span(s) rejected by the backend" if counts["rejected"] else ""
    print(f"otel-agents export: {counts['sent']} span(s) of {len(traces)} trace(s) sent to {endpoint}{rejected}; "
          f"{skipped_summary(errors)}", file=sys.stderr)
    if not counts["read"] and not errors:  # envelopes, an ecp run report, annotate's log lines: nothing was sent
        print(f"otel-agents export: {NO_SPAN_IN_INPUT}; ECP envelopes, `ecp run` reports and `ecp annotate`'s "
              "evaluation records hold none", file=sys.stderr)
        return 1
    return 1 if errors or refused or counts["rejected"] else 0
