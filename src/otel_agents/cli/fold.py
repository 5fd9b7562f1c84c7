"""``otel-agents fold TRACES.jsonl [MORE.jsonl ...] [-o ENVELOPES.jsonl]``: re-fold stored traces into ECP envelopes.

Reads OTLP/JSON lines (written by :class:`otel_agents.exporters.file.OTLPJsonFileExporter`,
an OpenTelemetry Collector ``file`` exporter, or pages of Phoenix's span search;
``-`` reads standard input), folds every run into an ECP result envelope and
writes one envelope per line (to standard output, or to ``-o``), so a new metric
or grader can run over old runs without re-running any agent. Traces recorded by
other instrumentations (OTel GenAI, PydanticAI, OpenInference, OpenLLMetry) fold
too (``docs/ecp.md``).

It streams: lines are read one at a time and each trace is folded as soon as it
is complete (its root span and every parent it names have been read), so
memory is bounded by the largest trace, not by the file; traces that never
complete are folded at the end of input. Envelopes come out in the order their
traces complete. Given several files (one per process of a distributed run: the
agent's, its MCP server's), they are read in order as one input and every trace
is folded at the end, so a trace spread across them is one run (memory then holds
all their spans).

A malformed line is reported on standard error as ``FILE:LINE: problem`` and
skipped; the lines around it are still folded. A trace with duplicate span ids
or spans on a parent cycle, and a run that cannot be folded, are reported there
too (``trace ID: problem``), once each. Output is strict JSON (no ``NaN``).
Exit codes: 0 — everything was read and folded; 1 — some lines, spans or runs
were skipped (the envelopes of the rest were written); 2 — the input could not
be read, or the output not written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, TextIO

from . import plain


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fold", help="fold stored OTLP/JSON traces into ECP envelopes (one JSON object per line)",
                       description=plain(__doc__.split("\n\n")[1]), epilog="exit codes: 0 all read and folded, "
                       "1 malformed lines, spans or runs skipped, 2 input unreadable or output unwritable")
    p.add_argument("traces", metavar="TRACES.jsonl", nargs="+",
                   help="OTLP/JSON lines, one file or several folded together; '-' for standard input")
    p.add_argument("-o", "--output", metavar="ENVELOPES.jsonl", help="write envelopes here (default: standard output)")
    p.add_argument("--include-thoughts", action="store_true",
                   help="add models' reasoning to evaluation_context (off by default)")
    p.set_defaults(func=run)


def _strict_json(envelope: dict[str, Any]) -> str:
    """One envelope as a strict JSON line (``orjson``; the standard encoder for what it refuses,
    e.g. integers wider than 64 bits). Raises ``ValueError`` for a value JSON cannot hold."""
    import orjson

    try:
        return orjson.dumps(envelope).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


class _WriteError(Exception):
    """Writing an envelope failed (wraps the ``OSError``)."""


def run(args: argparse.Namespace) -> int:
    from ..exporters.ecp import StreamFolder
    from ..exporters.file import MalformedLine, iter_otlp_json

    out: TextIO = sys.stdout
    if args.traces.count("-") > 1:
        print("otel-agents fold: '-' (standard input) can be given once", file=sys.stderr)
        return 2
    for path in args.traces:
        if args.output and path != "-" and _same_file(path, args.output):
            print(f"otel-agents fold: -o {args.output} is the input file {path}: writing it would erase the traces",
                  file=sys.stderr)
            return 2
    if args.output:
        try:
            out = open(args.output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            print(f"otel-agents fold: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    problems = 0

    def report(message: str) -> None:
        nonlocal problems
        problems += 1
        print(f"otel-agents fold: {message}", file=sys.stderr)

    def write(envelope: dict[str, Any]) -> None:
        try:
            line = _strict_json(envelope)
        except ValueError as exc:
            report(f"trace {envelope.get('trace_id')}: an envelope is not strict JSON, skipped ({exc})")
            return
        try:
            out.write(line + "\n")
        except OSError as exc:
            raise _WriteError(exc) from None

    class Errors(list):  # reports each malformed line the moment it is read
        def append(self, problem: MalformedLine) -> None:
            super().append(problem)
            print(f"otel-agents fold: skipped {problem}", file=sys.stderr)

    errors = Errors()
    folder = StreamFolder(write, on_problem=report, include_thoughts=args.include_thoughts,
                          hold=len(args.traces) > 1)
    reading = args.traces[0]
    try:
        for reading in args.traces:
            # bytes from stdin when possible: a line that is not UTF-8 is then reported, not fatal
            source: Any = reading if reading != "-" else getattr(sys.stdin, "buffer", sys.stdin)
            for number, spans in iter_otlp_json(source, errors=errors):
                folder.add(spans, number)
        folder.finish()
        out.flush()
    except _WriteError as exc:
        error = exc.args[0]
        print(f"otel-agents fold: cannot write {args.output or 'standard output'}: {error.strerror or error}",
              file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"otel-agents fold: cannot read {reading}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        if out is not sys.stdout:
            out.close()
    print(f"otel-agents fold: {folder.runs} run(s) from {folder.spans} span(s); "
          f"{len(errors)} malformed line(s) skipped; {problems} other problem(s)", file=sys.stderr)
    return 1 if errors or problems else 0
