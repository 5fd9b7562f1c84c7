"""``otel-agents fold TRACES.jsonl [MORE.jsonl ...] [-o ENVELOPES.jsonl]``: re-fold stored traces into ECP envelopes.

Reads OTLP/JSON lines (written by :class:`otel_agents.exporters.file.OTLPJsonFileExporter`,
an OpenTelemetry Collector ``file`` exporter, or pages of Phoenix's span search;
gzip-compressed too; ``-`` reads standard input), folds every run into an ECP result envelope and
writes one envelope per line (to standard output, or to ``-o``), so a new metric
or grader can run over old runs without re-running any agent. Traces recorded by
other instrumentations (OTel GenAI, PydanticAI, OpenInference, OpenLLMetry) fold
too (``docs/ecp.md``).

It streams: lines are read one at a time and each trace is folded once none of
its spans was among the last --idle-spans spans read (the rest at the end of
input), so memory is bounded by the largest trace plus that window, not by the
file, and a run's spans read after its root (a server process's, in a file two
processes write; a stream consumed after its agent returned) are still in its
envelope. A span read later than that is folded apart, as a partial run marked
incomplete, and reported. Envelopes come out in the order their traces go idle. Given several files (one per process
of a distributed run: the agent's, its MCP server's), they are read in order as
one input and every trace is folded at the end, so a trace spread across them is
one run (memory then holds all their spans).

A malformed line is reported on standard error as ``FILE:LINE: problem`` and
skipped; the lines around it are still folded. A trace with spans on a parent
cycle, and a run that cannot be folded, are reported there too (``trace ID:
problem``), once each. Spans read twice (the same trace id and span id: a file
read twice, a batch an exporter retried) are folded once and counted in a
warning; they do not change the exit code, since nothing was lost (OTLP delivery
is at-least-once, so real files hold such repeats). Output is strict JSON (no ``NaN``).
Exit codes: 0 — everything was read and folded; 1 — some lines, spans or runs
were skipped (the envelopes of the rest were written), or the input held no span
at all (lines without ``resourceSpans``, such as logs, metrics or a file of
envelopes, are not traces); 2 — the input could not
be read, or the output not written (``cannot write``, never blamed on the input).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from typing import Any, Callable, Iterator, TextIO

from . import NO_SPAN_IN_INPUT, plain, same_file, skipped_summary, standard_input
from ._types import at_least_one

DEFAULT_IDLE_SPANS = 10_000
"""``--idle-spans``'s default, :class:`~otel_agents.exporters.ecp.StreamFolder`'s ``idle_spans`` (a test keeps the
two equal): written here because ``otel-agents --help`` and ``fold --help`` build this parser, and importing the
fold (genai-prices and its price table, pydantic, an HTTP client) took most of their time."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents fold`` (its arguments, ``func=run``) to ``sub``, the parent's subparsers."""
    p = sub.add_parser("fold", help="fold stored OTLP/JSON traces into ECP envelopes (one JSON object per line)",
                       description=plain(__doc__.split("\n\n")[1]), epilog="exit codes: 0 all read and folded, "
                       "1 malformed lines, spans or runs skipped, 2 input unreadable or output unwritable; warnings (spans "
                       "read twice, a malformed traceState dropped, a status code "
                       "beyond 0-2 read as unset, a span kind beyond 0-5 read as internal) leave it unchanged")
    p.add_argument("traces", metavar="TRACES.jsonl", nargs="+",
                   help="OTLP/JSON lines (gzip-compressed too), one file or several folded together; '-' for "
                        "standard input")
    p.add_argument("-o", "--output", metavar="ENVELOPES.jsonl",
                   help="write envelopes here (default, or -: standard output)")
    p.add_argument("--include-thoughts", action="store_true",
                   help="add models' reasoning to evaluation_context (off by default)")
    p.add_argument("--idle-spans", type=at_least_one, default=DEFAULT_IDLE_SPANS, metavar="N",
                   help="fold a trace once none of its spans was among the last N spans read (default "
                        f"{DEFAULT_IDLE_SPANS})")
    p.set_defaults(func=run)


def _strict_json(envelope: dict[str, Any]) -> str:
    """One envelope as a strict JSON line, with the same serialiser as ``ECPFileExporter``.
    Raises ``ValueError`` for a value JSON cannot hold."""
    from ..exporters.ecp._json import envelope_line

    try:
        return envelope_line(envelope)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


class _WriteError(Exception):
    """Writing an envelope failed (wraps the ``OSError``)."""


def run(args: argparse.Namespace) -> int:
    """``otel-agents fold``: the exit status — 0 every line folded, 1 malformed lines or fold problems (said on
    standard error), or no span in the input, or standard output's reader went away (``| head``: nothing
    said), 2 bad arguments, an input that cannot be read or an output that cannot be written."""
    from ..exporters.ecp import StreamFolder
    from ..exporters.ecp._facts import FoldSpan
    from ..exporters.file import MalformedLine, iter_otlp_json

    out: TextIO = sys.stdout
    if args.traces.count("-") > 1:
        print("otel-agents fold: '-' (standard input) can be given once", file=sys.stderr)
        return 2
    if args.output == "-":  # standard output, as `ecp collect -o -` and `ecp report --json -` take it
        args.output = None
    for path in args.traces:
        if args.output and path != "-" and same_file(path, args.output):
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

    def warn(message: str) -> None:
        print(f"otel-agents fold: warning: {message}", file=sys.stderr)

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

    class Warnings(list):  # a field dropped from a span that was kept (a malformed traceState, an unknown status)
        def append(self, note: MalformedLine) -> None:
            super().append(note)
            warn(str(note))

    def settle() -> None:  # the live input paused: what is complete is folded and written now
        if folder.settle():
            try:
                out.flush()
            except OSError as exc:
                raise _WriteError(exc) from None

    errors = Errors()
    folder = StreamFolder(write, on_problem=report, on_warning=warn, include_thoughts=args.include_thoughts,
                          hold=len(args.traces) > 1, idle_spans=args.idle_spans)
    reading = args.traces[0]
    try:
        try:
            warnings = Warnings()
            for reading in args.traces:
                # bytes from stdin when possible: a line that is not UTF-8 is then reported, not fatal
                source: Any = reading if reading != "-" else live_input(standard_input(), settle)
                with _collecting_between_lines() as collect:
                    # each span decoded straight into what the fold reads, without the SDK's ReadableSpan
                    for number, spans in iter_otlp_json(source, errors=errors, warnings=warnings,
                                                        make=FoldSpan.decoded):
                        folder.add(spans, number)
                        collect(len(spans))
            folder.finish()
        except OSError as exc:  # raised by reading (writing raises _WriteError)
            print(f"otel-agents fold: cannot read {reading}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        _close(out)
    except _WriteError as exc:
        error = exc.args[0]
        if isinstance(error, BrokenPipeError) and out is sys.stdout:  # `| head`: the reader had what it wanted
            return 1  # quietly, as every command of ours into a closed pipe (cli.main)
        print(f"otel-agents fold: cannot write {args.output or 'standard output'}: {error.strerror or error}",
              file=sys.stderr)
        return 2
    finally:
        _discard(out)
    unwarned = folder.duplicates - folder.duplicates_warned  # a repeat inside a trace had its own warning
    if unwarned:
        more = " more" if folder.duplicates_warned else ""
        warn(f"{unwarned}{more} span(s) were read twice (the same trace id and span id: a file read twice, "
             "a batch an exporter retried); each was folded once")
    print(f"otel-agents fold: {folder.runs} run(s) from {folder.spans} span(s); "
          f"{skipped_summary(errors)}; {problems} other problem(s)", file=sys.stderr)
    if not folder.spans and not errors:  # e.g. a file of envelopes (the fold's output) given as its input
        print(f"otel-agents fold: {NO_SPAN_IN_INPUT}; a file of ECP envelopes is the fold's output, not its input",
              file=sys.stderr)
        return 1
    return 1 if errors or problems else 0


PAUSE_S = 0.2
"""Seconds a live input (a pipe) has nothing to read before its complete traces are folded (:func:`live_input`)."""


def live_input(stream: Any, on_pause: Callable[[], Any]) -> Any:
    """``stream`` (standard input's binary buffer) as a buffered reader that calls ``on_pause()`` whenever it must
    wait for more input and none came for :data:`PAUSE_S` seconds, once a pause; ``stream`` itself when it is a
    regular file (never waits) or has no descriptor ``select`` can watch."""
    import io
    import select
    import stat

    try:
        fd = stream.fileno()
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return stream
        select.select([fd], [], [], 0)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return stream

    class Pausing(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            paused = False
            while not select.select([fd], [], [], PAUSE_S)[0]:
                if not paused:
                    paused = True
                    on_pause()
            return os.readv(fd, [buffer])

    return io.BufferedReader(Pausing())


YOUNG_COLLECTION_SPANS = 2_000
"""Spans read between two collections of the young generations while streaming (:func:`_collecting_between_lines`)."""
FULL_COLLECTION_SPANS = 100_000
"""Spans read between two full collections while streaming."""


@contextlib.contextmanager
def _collecting_between_lines() -> Iterator[Callable[[int], None]]:
    """The garbage collector run between lines, not inside them: a line of OTLP/JSON parses into
    hundreds of thousands of objects that all live until the line is decoded, and the collector's
    automatic passes, triggered by their allocation, traverse them again and again (a quarter of the
    streaming fold's time on the benchmark's file, 512 spans a line). The yielded function, called after
    each line with its number of spans, collects the young generations every
    :data:`YOUNG_COLLECTION_SPANS` spans (what refcounting did not free: reference cycles) and every
    generation every :data:`FULL_COLLECTION_SPANS`, so memory stays bounded as before. The collector is
    left as it was found (enabled or not)."""
    if not gc.isenabled():
        yield lambda spans: None
        return
    young = full = 0

    def collect(spans: int) -> None:
        nonlocal young, full
        young += spans
        if young >= YOUNG_COLLECTION_SPANS:
            full += young
            young = 0
            if full >= FULL_COLLECTION_SPANS:
                full = 0
                gc.collect()
            else:
                gc.collect(1)

    gc.disable()
    try:
        yield collect
    finally:
        gc.enable()


def _close(out: TextIO) -> None:
    """Flush the envelopes (and close ``-o``'s file); ``_WriteError`` when that fails (a full disk
    shows here when the last envelopes were still buffered)."""
    try:
        out.flush()
        if out is not sys.stdout:
            out.close()
    except OSError as exc:
        raise _WriteError(exc) from None


def _discard(out: TextIO) -> None:
    """After a failed write, drop what is still buffered, so closing (or the interpreter's last flush
    of standard output) does not fail a second time with a traceback."""
    if out is sys.stdout:
        try:
            out.flush()
        except OSError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        except ValueError:  # closed
            pass
    else:
        with contextlib.suppress(OSError, ValueError):  # closes the file even when its flush fails
            out.close()
