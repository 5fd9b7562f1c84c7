"""``otel-agents fold TRACES.jsonl [-o ENVELOPES.jsonl]``: re-fold stored traces into ECP envelopes.

Reads OTLP/JSON lines (written by :class:`otel_agents.exporters.file.OTLPJsonFileExporter`
or an OpenTelemetry Collector ``file`` exporter; ``-`` reads standard input),
folds every run into an ECP result envelope and writes one envelope per line
(to standard output, or to ``-o``), so a new metric or grader can run over old
runs without re-running any agent.

A malformed line is reported on standard error as ``FILE:LINE: problem`` and
skipped; the lines around it are still folded. Exit codes: 0 — every line was
read; 1 — some lines were skipped (the envelopes of the rest were written);
2 — the input could not be read at all.
"""

from __future__ import annotations

import argparse
import json
import sys
from . import plain


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fold", help="fold stored OTLP/JSON traces into ECP envelopes (one JSON object per line)",
                       description=plain(__doc__.split("\n\n")[1]), epilog="exit codes: 0 all lines read, "
                       "1 malformed lines skipped, 2 input unreadable")
    p.add_argument("traces", metavar="TRACES.jsonl", help="OTLP/JSON lines; '-' for standard input")
    p.add_argument("-o", "--output", metavar="ENVELOPES.jsonl", help="write envelopes here (default: standard output)")
    p.add_argument("--include-thoughts", action="store_true",
                   help="add models' reasoning to evaluation_context (off by default)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..exporters.ecp import fold
    from ..exporters.file import MalformedLine, read_otlp_json

    errors: list[MalformedLine] = []
    try:
        spans = read_otlp_json(sys.stdin if args.traces == "-" else args.traces, errors=errors)
    except OSError as exc:
        print(f"otel-agents fold: cannot read {args.traces}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for problem in errors:
        print(f"otel-agents fold: skipped {problem}", file=sys.stderr)
    envelopes = fold(spans, include_thoughts=args.include_thoughts)
    lines = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in envelopes)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(lines)
        except OSError as exc:
            print(f"otel-agents fold: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(lines)
    print(f"otel-agents fold: {len(envelopes)} run(s) from {len(spans)} span(s); "
          f"{len(errors)} malformed line(s) skipped", file=sys.stderr)
    return 1 if errors else 0
