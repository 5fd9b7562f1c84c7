"""The ``otel-agents`` command: ``demo``, ``ecp serve``, ``ecp annotate``, ``ecp collect``, ``ecp report``, ``fold``, ``export``, ``doctor``.

Each subcommand lives in its own module and registers itself through
:data:`SUBCOMMANDS` (module name → ``register(subparsers)``); a subcommand's
module is imported only when the command line names it or asks for help.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import re
import sys
from typing import Any, Sequence

SUBCOMMANDS = {
    "demo": "otel_agents.cli.demo",
    "doctor": "otel_agents.cli.doctor",
    "fold": "otel_agents.cli.fold",
    "export": "otel_agents.cli.export",
    "ecp": "otel_agents.cli.ecp",
}


class _LogFormat(logging.Formatter):
    """``logging``'s default format, ``LEVEL:logger:message``, without the logger's name before a message that
    already starts with where it comes from: ours do (``otel_agents: …``, ``otel-agents collect: …``) so that they
    say so in any application's log, and read ``WARNING:otel_agents:otel_agents: …`` under the default format."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        if record.message.startswith(("otel_agents: ", "otel-agents ")):
            return f"{record.levelname}:{record.message}"
        return super().formatMessage(record)


def log_to_stderr() -> None:
    """Log WARNINGs and above to the current ``sys.stderr``, in :class:`_LogFormat` (as
    ``logging.basicConfig(level=WARNING)``: nothing changes when the root logger already has a handler)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_LogFormat(logging.BASIC_FORMAT))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])


def plain(doc: str) -> str:
    """A docstring as plain text for ``--help``: reST roles and double backquotes removed."""
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", doc).replace("``", "")


def shown(text: str) -> str:
    """``text`` for a terminal or a page: each character that does not print as its Python escape — escape
    sequences, carriage returns and newlines (which retitle or redraw a terminal, forge a row), and the invisible
    format characters (Unicode category Cf: the bidirectional controls U+202A-U+202E, U+2066-U+2069, U+200E/U+200F,
    which reorder the text after them, zero-width ones) and line/paragraph separators (U+2028/U+2029), which a
    terminal and a browser both honour: ``refund`` + U+202E + ``gnp.exe`` (read as ``refundexe.png``) is shown as
    ``refund\\u202egnp.exe``."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


NO_SPAN_IN_INPUT = ("no span in the input: no line holds OTLP/JSON traces (`resourceSpans`), as the OTLP file "
                    "exporters and `otel-agents` trace files write")
"""What ``fold`` and ``export`` say of an input without a span (a file of envelopes, a report given by mistake)."""


def skipped_summary(errors: Sequence) -> str:
    """``N malformed line(s) skipped``, and ``M span(s) left out of K other line(s)`` when some lines lost only
    their bad spans (``errors``: :class:`~otel_agents.exporters.file.MalformedLine` items)."""
    partial = [e for e in errors if e.spans]
    text = f"{len(errors) - len(partial)} malformed line(s) skipped"
    if partial:
        text += f", {sum(e.spans for e in partial)} span(s) left out of {len(partial)} other line(s)"
    return text


def same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one existing file (a link or another spelling too); ``False`` when either
    does not exist yet."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def written_over(outputs: Sequence[tuple[str, str | None]],
                 inputs: Sequence[tuple[str, str | None]]) -> str | None:
    """Why a command would write over one of its own inputs, or write two outputs to one file; ``None`` when it
    would not. ``outputs`` and ``inputs`` are ``(what, path)`` pairs (``("--json", path)``, ``("the input report",
    path)``); ``None`` and ``-`` (a standard stream) are no file. Said before anything is written (exit status 2):
    ``ecp report r.json --json r.json`` replaced the report it read by its summary."""
    files = [(what, path) for what, path in outputs if path and path != "-"]
    for i, (what, path) in enumerate(files):
        for source_what, source in inputs:
            if source and source != "-" and same_file(path, source):
                return f"{what} {path} is {source_what} {source}: writing into it would break it"
        for other, earlier in files[:i]:
            if same_file(path, earlier) or os.path.realpath(path) == os.path.realpath(earlier):
                return f"{what} and {other} name one file, {path}"
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only`` just that subcommand's module is imported."""
    parser = argparse.ArgumentParser(prog="otel-agents", description=plain(__doc__.splitlines()[0]))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        try:
            importlib.import_module(module).register(sub)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            sub.add_parser(name, help="(not available in this build)")
    return parser


CLOSED_AT_START: set[int] = set()
"""The standard descriptors (0, 1) the process started without (``<&-``, ``>&-``); :func:`main` puts
``/dev/null`` on them, so that no file opened later takes their number (a trace file on descriptor 1 would
receive what is written to standard output)."""


def standard_input() -> Any:
    """Standard input to read bytes from (its binary buffer).

    Raises:
        OSError: the process started with descriptor 0 closed (``<&-``): nothing to read.
    """
    if 0 in CLOSED_AT_START or sys.stdin is None:
        raise OSError(errno.EBADF, "standard input is closed")
    return getattr(sys.stdin, "buffer", sys.stdin)


def _claim_closed_descriptors() -> None:
    for fd, stream in ((0, sys.stdin), (1, sys.stdout)):
        if stream is not None:
            continue
        try:
            os.fstat(fd)
            continue  # open after all (sys.stdin None for another reason)
        except OSError:
            pass
        CLOSED_AT_START.add(fd)
        null = os.open(os.devnull, os.O_RDWR)  # the lowest free number: fd itself when nothing lower is free
        if null != fd:
            os.dup2(null, fd)
            os.close(null)


class _Watched:
    """Standard output, keeping the error of a write or flush that failed: what :func:`main` reports when it
    ends the command (the command's own handler, as ``fold``'s, may have reported it already)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.failed: OSError | None = None

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            self.failed = exc
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            self.failed = exc
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Closed:
    """Standard output when the process started with descriptor 1 closed (``>&-``): Python makes ``sys.stdout``
    ``None`` and ``print()`` then drops every line without a word; here a write fails, as on the descriptor."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "it is closed")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code: 1 when standard output was closed by its reader,
    as in ``otel-agents doctor | head -1``, 2 when it could not be written otherwise (``> /dev/full``: a
    full disk; ``>&-``), said in one line; 130 on Ctrl-C (SIGINT) in a command without a handler of its own;
    no traceback in any of these."""
    _claim_closed_descriptors()
    stdout = sys.stdout
    watched = _Watched(stdout if stdout is not None else _Closed())
    returned: int | None = None
    try:
        sys.stdout = watched
        try:
            returned = _main(argv)
        except KeyboardInterrupt:  # Ctrl-C where the command has no handler of its own (a fold, a report)
            print("otel-agents: interrupted", file=sys.stderr)
            returned = 130  # 128 + SIGINT, the shell's status for a command a signal ended
        finally:
            if sys.stdout is watched:
                sys.stdout = stdout
            watched.flush()  # here, not at exit, where a closed pipe prints "Exception ignored"
    except OSError as exc:
        if exc is not watched.failed:
            raise
    except SystemExit as exit_:  # argparse's --help and errors: its writes pass over a failure
        if watched.failed is None:
            raise
        if isinstance(watched.failed, BrokenPipeError):  # the reader had what it wanted: argparse's status
            if stdout is not None:
                os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
            raise
        returned = exit_.code if isinstance(exit_.code, int) else None
    else:
        if watched.failed is None or returned:  # a failure the command caught and reported (fold's) keeps its code
            return returned or 0
    if stdout is not None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())  # the interpreter's last flush
    if isinstance(watched.failed, BrokenPipeError):  # the reader went away (| head -1): nothing to say
        return returned or 1
    print(f"otel-agents: cannot write standard output: {watched.failed.strerror or watched.failed}",
          file=sys.stderr)
    return returned or 2


def _command_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The (sub)parser of the command ``argv`` names: ``fold`` for ``fold x --frob``, ``ecp serve`` for
    ``ecp serve ...``; each level's command is its first argument that is not an option."""
    for action in parser._actions:  # noqa: SLF001 - argparse exposes its subcommands no other way
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for i, token in enumerate(argv):
                if not token.startswith("-"):
                    if token in action.choices:
                        return _command_parser(action.choices[token], argv[i + 1:])
                    break
    return parser


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    only = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    parser = build_parser(only)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the command they were given to, with its usage (not the top level's `COMMAND ...`)
        _command_parser(parser, argv).error(f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
