"""``otel-agents ecp annotate REPORT.json``: put every check of an ``ecp run`` report on the step it graded.

Each check becomes one OTel GenAI ``gen_ai.evaluation.result`` (``gen_ai.evaluation.name`` such
as ``tool_usage:lookup_order``, ``.score.value``, ``.score.label`` pass/fail, ``.explanation``
when content capture is on) carrying the trace and span id of the step's root span, whether the
check passed or failed (so its mean over root spans means something); a passing ``tool_usage``
check names the tool span it matched as its evidence (explanation, otel_agents.ecp.evidence_span_id). Steps served by ``otel-agents ecp serve`` name
their spans in the report's ``logs``; for other reports give the run's trace files (--traces, once per file).

Targets (--to): ``file`` (default) appends OTLP/JSON log lines, one ExportLogsServiceRequest per
line, to -o (default: REPORT's name + ``.evaluations.jsonl``); ``otlp`` exports them over OTLP/HTTP
(-o: the logs URL; default from OTEL_EXPORTER_OTLP_*); ``phoenix`` adds span annotations (-o:
Phoenix's URL; default PHOENIX_COLLECTOR_ENDPOINT, key PHOENIX_API_KEY); ``langfuse`` adds scores
(-o: Langfuse's URL; default LANGFUSE_HOST, keys LANGFUSE_PUBLIC_KEY/LANGFUSE_SECRET_KEY).
Malformed lines of --traces files are each named (``FILE:LINE: field: problem``) and skipped; the spans
of the lines around them are read, and the results are delivered. So is a record of a step's logs whose span,
trace or parent id is not one (``REPORT: scenarios[0].steps[0].logs[3].trace_id: 'zz…' is not 32 lowercase hex
digits (scenario 'order status', step 1)``); when it is the step's root record, the step's checks are put on no
span (never on a span under it). A field dropped from a span that is kept
(a malformed traceState) is named as a warning, which leaves the exit status as it is.
Exit status: 0 when every line was read and every result delivered; 1 when some --traces lines or damaged
log records were skipped or some results not delivered (the rest were); 2 when the report, a --traces file or --manifest
could not be read (a report given as the manifest, or the reverse, is named so) or the destination not set up.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import plain, shown
from ._types import seconds


def register(ecp_sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents ecp annotate`` (its arguments, ``func=run``) to ``ecp_sub``, the parent's subparsers."""
    from ..evaluations import TARGETS

    p = ecp_sub.add_parser("annotate", help="put an ecp run report's verdicts on the spans they graded",
                           description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog="exit codes: 0 all read and delivered, 1 malformed --traces lines skipped, "
                                  "damaged\nlog records of the report skipped or results not delivered (the rest "
                                  "were), 2 input\nunreadable or destination not set up; warnings (a malformed "
                                  "traceState dropped) leave\nit unchanged")
    p.add_argument("report", help="the JSON report of `ecp run --json-out`")
    p.add_argument("--traces", action="append", default=[], metavar="TRACES.jsonl",
                   help="an OTLP/JSON trace file of the graded runs (gzip too), for steps whose logs do not name "
                        "their span; repeat the option for several files")
    p.add_argument("--manifest", help="the manifest the report was graded with (default: the path the report names, "
                                      "if a regular file of at most 16 MiB)")
    p.add_argument("--to", choices=TARGETS, default="file", help="where the results go (default file)")
    p.add_argument("-o", "--out", help="--to file: the file the records are appended to (default: REPORT's name + "
                                       ".evaluations.jsonl); otlp: the logs URL (http://host:4318/v1/logs); phoenix, "
                                       "langfuse: the base URL (defaults: see above)")
    p.add_argument("--wait", type=seconds, default=30.0, metavar="SECONDS",
                   help="phoenix: how long to retry spans Phoenix has not ingested yet (default 30)")
    p.set_defaults(func=run)


def default_out(report: str) -> Path:
    """``out/report.json`` → ``out/report.evaluations.jsonl``."""
    path = Path(report)
    return path.with_name(path.stem + ".evaluations.jsonl")


def run(args: argparse.Namespace) -> int:
    """``otel-agents ecp annotate``: the exit status — 0 every line read and every check delivered (failed checks
    included), 1 malformed lines of the traces skipped (the first five named ``FILE:LINE: problem``, the rest
    counted), damaged span records of the report's logs skipped (named so, by their field, scenario and step) or
    some checks not delivered (each said on standard error), the rest delivered, as ``fold`` and
    ``export`` say skipped lines (a field dropped from a span that was kept, a malformed ``traceState``, is said
    as a warning, as ``fold`` says it, and changes nothing); 2 the report or a traces file could not be read (or the traces hold no span),
    or a manifest given could not (a report given for it is named so), or the destination not set up (``-o`` the
    report or the manifest: appending records would break it). Every line said shows what does not print (a
    report's scenario name, a server's answer) as its escape (:func:`~otel_agents.cli.shown`)."""
    from .._spans.redaction import redact_url
    from ..evaluations import annotate_phoenix, emit_evaluations, evaluation_results, load_manifest, load_report
    from ..exporters.file import MalformedLine, read_otlp_json

    try:
        report = load_report(args.report)
        manifest = None if args.manifest is None else load_manifest(args.manifest)  # given: it must be read
    except (OSError, ValueError) as exc:
        _say(str(exc))
        return 2
    spans = None
    errors: list[MalformedLine] = []  # lines of --traces skipped
    warnings: list[MalformedLine] = []  # fields dropped from spans that were kept (a malformed traceState)
    if args.traces:
        spans = []
        for path in args.traces:
            try:
                spans.extend(read_otlp_json(path, errors=errors, warnings=warnings))
            except OSError as exc:
                _say(f"cannot read {path}: {exc.strerror or exc}")
                return 2
        for error in errors[:5]:
            _say(f"skipped {error}")
        if len(errors) > 5:
            _say(f"skipped {len(errors) - 5} more malformed line(s)")
        for note in warnings[:5]:  # as fold's, and no change of the exit status: no span was lost
            _say(f"warning: {note}")
        if len(warnings) > 5:
            _say(f"warning: {len(warnings) - 5} more field(s) dropped from spans that were kept")
        if not spans and not errors:  # envelopes or a report given as --traces: no check could be placed
            from . import NO_SPAN_IN_INPUT

            _say(f"--traces {' '.join(args.traces)}: {NO_SPAN_IN_INPUT}; a file of ECP envelopes or a report "
                 "holds none")
            return 2
    damaged: list[str] = []  # span records of the steps' logs whose ids are not ids: skipped, named
    results = evaluation_results(report, spans, manifest=manifest, skipped=damaged)
    for problem in damaged[:5]:
        _say(f"skipped {args.report}: {problem}")
    if len(damaged) > 5:
        _say(f"skipped {len(damaged) - 5} more damaged log record(s) of {args.report}")
    placed = sum(1 for r in results if r.span_id)
    failed = sum(1 for r in results if not r.passed)
    out = args.out or (str(default_out(args.report)) if args.to == "file" else None)
    if args.to == "file":  # the trace file may take the records (fold skips log lines), the report and manifest not
        from . import written_over

        problem = written_over([("-o", out)],
                               [("the report", args.report), ("the manifest", args.manifest)])
        if problem:
            _say(problem)
            return 2
    if args.to != "file" and args.out:  # a URL there: said before anything is sent, not as each send's failure
        from ..exporters.presets import check_url

        try:
            check_url(args.out, f"-o (--to {args.to})")
        except ValueError as exc:
            _say(str(exc))
            return 2
    try:
        if args.to == "phoenix":
            delivery = annotate_phoenix(results, out, wait=args.wait)
        else:
            delivery = emit_evaluations(results, args.to, out)
    except OSError as exc:
        _say(f"{f'cannot write {out}: ' if args.to == 'file' else ''}{exc.strerror or exc}")
        return 2
    except (ValueError, ImportError) as exc:
        _say(str(exc))
        return 2
    where = out if args.to == "file" else f"{args.to}{' ' + redact_url(out) if out else ''}"
    _say(f"{len(results)} checks ({len(results) - failed} pass, {failed} fail), "
         f"{placed} on their spans; {delivery.sent} sent to {where}"
         + (f"; {delivery.skipped} without a trace not sent" if delivery.skipped else ""))
    unplaced = len(results) - placed
    if unplaced:
        _say(f"{unplaced} checks have no span in the report's logs"
             + (" nor in the traces given" if args.traces else "; --traces TRACES.jsonl may place them"))
    for line in delivery.failed:
        _say(line)
    if errors:
        from . import skipped_summary

        _say(f"--traces: {skipped_summary(errors)} (the spans of the other lines were read)")
    return 1 if delivery.failed or errors or damaged else 0


def _say(message: str) -> None:
    """``message`` on standard error, prefixed, each character that does not print shown as its escape."""
    print(f"otel-agents ecp annotate: {shown(message)}", file=sys.stderr)
