"""The ``otel-agents`` command: ``demo``, ``ecp serve``, ``ecp annotate``, ``ecp collect``, ``ecp report``, ``fold``, ``export``, ``doctor``.

Each subcommand lives in its own module and registers itself through
:data:`SUBCOMMANDS` (module name → ``register(subparsers)``); a subcommand's
module is imported only when the command line names it or asks for help.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from typing import Sequence

SUBCOMMANDS = {
    "demo": "otel_agents.cli.demo",
    "doctor": "otel_agents.cli.doctor",
    "fold": "otel_agents.cli.fold",
    "export": "otel_agents.cli.export",
    "ecp": "otel_agents.cli.ecp",
}


def plain(doc: str) -> str:
    """A docstring as plain text for ``--help``: reST roles and double backquotes removed."""
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", doc).replace("``", "")


def skipped_summary(errors: Sequence) -> str:
    """``N malformed line(s) skipped``, and ``M span(s) left out of K other line(s)`` when some lines lost only
    their bad spans (``errors``: :class:`~otel_agents.exporters.file.MalformedLine` items)."""
    partial = [e for e in errors if e.spans]
    text = f"{len(errors) - len(partial)} malformed line(s) skipped"
    if partial:
        text += f", {sum(e.spans for e in partial)} span(s) left out of {len(partial)} other line(s)"
    return text


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code (1 when standard output was closed by its reader,
    as in ``otel-agents doctor | head -1``: no ``BrokenPipeError`` traceback)."""
    code = 1
    try:
        try:
            code = _main(argv)
        finally:
            sys.stdout.flush()  # here, not at exit, where a closed pipe prints "Exception ignored"
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush
        return code or 1
    return code


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    only = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    parser = build_parser(only)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
