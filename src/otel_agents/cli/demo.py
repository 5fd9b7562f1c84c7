"""``otel-agents demo`` (``make demo``): one ECP manifest graded across every framework we instrument, PydanticAI over MCP and over A2A, plain Python and the provider-client loops, offline.

What it does, with no network and no API key:

1. For each framework (LangChain/LangGraph, LlamaIndex, CrewAI, PydanticAI,
   smolagents, the OpenAI Agents SDK, Agno, Google ADK, AutoGen AgentChat, the Claude Agent SDK; ``mcp``: the PydanticAI agent with its
   tools served over MCP by a stdio child process, ``mcp_agent.py`` and
   ``mcp_server.py``, served with ``ecp serve --collect`` so the server process's spans (and its
   side-effect twin's e-mail, sent from the server) fold into each step; ``a2a``: the same PydanticAI agent
   whose ``lookup_order`` asks a remote LangGraph agent over A2A (``a2a_agent.py``, ``a2a_server.py``, another
   process), also served with ``--collect`` so the remote agent's run folds into each step; ``plain_python``: the
   same agent without a framework,
   instrumented with otel-agents' decorators, ``examples/plain_python/agent.py``;
   ``anthropic``/``openai``: a hand-written loop on each provider client, whose
   model spans come from the client instrumentors) and for each of
   its three agents in ``examples/customer_support/`` — the correct ``agent``, its
   ``faulty_agent`` twin and its ``side_effect_agent`` twin (right trajectory,
   right answer, plus an e-mail sent over HTTP behind the chat's back) — it writes a copy of the example's
   ``manifest.yaml`` under ``out/manifests/`` whose ``target`` serves that agent
   with ``otel-agents ecp serve`` (which also writes the run's spans as an
   OTLP/JSON trace file and its own log under ``out/<framework>/``). While the demo runs, each
   framework's ``ecp serve`` processes are forks of one fork server that imported the framework once
   (:class:`ForkServer`, ``otel_agents.cli.forkserver``; its log ``out/<framework>/forkserver.log``):
   ``ecp run`` starts a stdio agent for every scenario, and the imports were most of the demo's time.
2. It runs the real ECP runtime on each copy (``ecp run`` from ``ecp-runtime``,
   found next to this Python; each a fork of one more fork server, which imported ecp-runtime once, its log
   ``ecp-run.forkserver.log`` in the first row's directory), a few at a time, writing the JSON and HTML
   reports: ``out/<framework>/report.{json,html}`` for the agent and
   ``out/<framework>/faulty/report.{json,html}`` for its twin.
3. It prints a table: framework × verdict (checks passed/total), whether the
   verdicts agree across frameworks, and, for the faulty twins, how many of the
   injected faults the ECP checks caught versus an outcome-only check (the
   graders on ``public_output`` alone); then the same for the side-effect twins
   (``out/<framework>/side_effect/``), whose fault only the fold's ``effect``
   lines show.

A framework whose instrumentor or example fails shows as an ``ERROR`` row; the
table is printed anyway. Exit status: 0 when every run completed, 1 otherwise, 2 for bad arguments, a
missing dependency (PyYAML, ecp-runtime) or a ``--json`` file that cannot be written, 130 on Ctrl-C, 143 on
SIGTERM, 129 on SIGHUP (every child process it started is ended first, :mod:`._children`).

Options: ``--out DIR`` (default ``out``), ``--frameworks a,b`` (default: every
row this venv can run: a framework tested in a venv of its own — ``google_adk`` —
only where it is installed), ``--venv DIR=ROWS`` (repeatable: grade ROWS in another venv,
``DIR/bin/otel-agents demo --frameworks ROWS --json -``, beside this one's rows, and fold them into the
one table: how ``make demo`` shows the frameworks of Makefile ``ISOLATED``), ``--json FILE`` (also write
every run's result as JSON; ``-``: the JSON alone on standard output, progress on standard error, no
table), ``--examples DIR`` (default: ``examples/customer_support`` in the current
directory or in this source checkout), ``--jobs N`` (``ecp run`` processes at
once), ``--timeout S`` (per ECP request, passed to ``ecp run``), ``--phoenix URL`` (a running
Phoenix: every served agent also exports its spans there over OTLP/HTTP and, after grading,
``otel-agents ecp annotate --to phoenix`` puts every check on the span it graded, so the faulty
twins show their failed checks in Phoenix's Annotations panel).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import json
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from . import plain
from ._children import CHILDREN, map_all
from ._types import at_least_one, http_url, positive_seconds

PLAIN_PYTHON = "plain_python"  # no framework: the decorated example next to customer_support/
MCP = "mcp"  # PydanticAI whose tools are served over MCP: examples/customer_support/mcp_agent.py
A2A = "a2a"  # PydanticAI asking a remote LangGraph agent over A2A: examples/customer_support/a2a_agent.py
CLIENT_LOOPS = ("anthropic", "openai")  # no framework: a hand-written loop on the provider's client
FRAMEWORKS = ("langchain", "llama_index", "crewai", "pydantic_ai", "smolagents", "openai_agents", MCP, A2A, "agno", PLAIN_PYTHON, "anthropic", "openai",
              "google_adk", "autogen_agentchat", "claude_agent_sdk")
TWINS = ("agent", "faulty_agent", "side_effect_agent")
_SUBDIRS = {"agent": "", "faulty_agent": "faulty", "side_effect_agent": "side_effect"}
_SUFFIXES = {"agent": "", "faulty_agent": "-faulty", "side_effect_agent": "-side-effect"}
_LABELS = {"agent": "agent", "faulty_agent": "faulty twin", "side_effect_agent": "side-effect twin"}
_LONGEST_FIRST = ("crewai", "llama_index", "langchain", "smolagents", MCP, A2A, "pydantic_ai", "openai_agents", "agno", "google_adk", "autogen_agentchat",
                  "claude_agent_sdk", PLAIN_PYTHON, "anthropic", "openai")  # start the slow imports first


def agent_frameworks() -> list[str]:
    """The demo's rows that are agent frameworks (not PydanticAI over MCP or A2A, plain Python, a provider-client
    loop)."""
    return [f for f in FRAMEWORKS if f not in (MCP, A2A, PLAIN_PYTHON, *CLIENT_LOOPS)]


def summary() -> str:
    """What the demo grades, with counts taken from :data:`FRAMEWORKS` (the ``--help`` line)."""
    return (f"{len(agent_frameworks())} frameworks, PydanticAI over MCP and over A2A, plain Python, "
            f"{len(CLIENT_LOOPS)} provider-client loops: {len(FRAMEWORKS)} rows")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents demo`` (its arguments, ``func=run``) to ``sub``, the parent's subparsers."""
    p = sub.add_parser("demo", help=f"grade the customer-support example ({summary()}) with ECP, offline",
                       description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="out", help="output directory (default: out)")
    p.add_argument("--frameworks", type=_framework_list, default=None, help="comma-separated subset of " + ", ".join(FRAMEWORKS)
                   + " (default: every row this venv can run)")
    p.add_argument("--examples", help="the customer_support example directory")
    p.add_argument("--jobs", type=at_least_one, default=4, help="ecp run processes at once (default 4)")
    p.add_argument("--timeout", type=positive_seconds, default=120.0, help="seconds per ECP request (default 120)")
    p.add_argument("--json", metavar="FILE", dest="json_out",
                   help="also write every run's result as JSON to FILE ('-': JSON alone on standard output, "
                        "progress on standard error, no table); what --venv reads")
    p.add_argument("--venv", action="append", default=[], metavar="DIR=ROWS",
                   help="grade ROWS (comma-separated) with DIR/bin/otel-agents demo --json - (a framework's venv "
                        "of its own, Makefile ISOLATED), beside this venv's rows, and fold them into one table; "
                        "repeatable")
    p.add_argument("--phoenix", metavar="URL", type=http_url,
                   help="a running Phoenix (http://127.0.0.1:6006): export the runs there and annotate them "
                        "with their checks")
    p.add_argument("--repeat", type=at_least_one, default=1, metavar="K",
                   help="grade each agent K times (seeds 1..K) and print pass@k/pass^k (otel_agents.cli.campaign)")
    p.set_defaults(func=run)


def _framework_list(text: str) -> str:
    """An argparse type: comma-separated rows; ``""`` (no row here, e.g. with ``--venv``) but not ``,``."""
    if text.strip() and not any(name.strip() for name in text.split(",")):
        raise argparse.ArgumentTypeError(f"{text!r} names no framework; choose from {', '.join(FRAMEWORKS)}")
    return text


def _unwritable(path: Path, directory: bool) -> str | None:
    """Why ``path`` (an output directory, or a file whose directory must exist) cannot be written, or ``None``;
    checked before the demo runs, not after."""
    try:
        if directory:
            path.mkdir(parents=True, exist_ok=True)
        elif not path.resolve().parent.is_dir():
            return f"cannot write {path}: {path.resolve().parent} is not a directory"
        elif path.is_dir():
            return f"cannot write {path}: it is a directory"
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    return None


@dataclass
class Run:
    """One ``ecp run`` of one agent of one framework, and what came of it."""

    framework: str
    attr: str  # "agent" or "faulty_agent"
    out: Path  # this run's output directory
    manifest: Path = Path()
    report: dict[str, Any] | None = None
    error: str | None = None
    passed: int = 0
    total: int = 0
    check_results: list[bool] = field(default_factory=list)  # every check, in manifest order
    annotated: int | None = None  # --phoenix: checks annotated on their spans
    faults: int = 0  # steps where the faulty twin injects a fault
    caught_ecp: int = 0  # ... where at least one check failed
    caught_outcome: int = 0  # ... where a public_output check failed

    @property
    def faulty(self) -> bool:
        """Whether this is the run of the faulty twin (``faulty_agent``), whose checks are meant to fail."""
        return self.attr == "faulty_agent"

    @property
    def verdict(self) -> str:
        """``ERROR`` (not run or not graded), ``PASS`` (every check passed) or ``FAIL``."""
        if self.error:
            return "ERROR"
        return "PASS" if self.passed == self.total else "FAIL"


class _Stopped(BaseException):
    """SIGTERM or SIGHUP reached the demo (``kill``, ``timeout``, a CI job cancelled, the terminal closed): ended
    as a Ctrl-C is. A ``BaseException``, as ``KeyboardInterrupt``, so no ``except Exception`` on the way takes it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: Any) -> None:
    raise _Stopped(signum)


def run(args: argparse.Namespace) -> int:
    """``otel-agents demo``: the exit status — 0 every agent graded (failed checks are the demo's findings,
    not errors), 1 some agent could not be run or graded, 2 a missing dependency (PyYAML, ecp-runtime), bad
    arguments, an output not writable, or another demo writing the same rows under the same ``--out``; 130 on
    Ctrl-C (SIGINT), 143 on SIGTERM, 129 on SIGHUP (128 + the signal), after ending every child process it
    started (:mod:`._children`: SIGTERM, SIGKILL after a few seconds), not waiting for them to finish their
    manifests. The children have sessions of their own (a terminal's Ctrl-C reaches the demo alone), so no one
    else ends them: before, a SIGTERM ended the demo alone and its fork servers served on, orphaned, forever.
    ``--repeat K`` > 1 runs the campaign (:mod:`.campaign`) instead."""
    import threading

    from ._children import CHILDREN

    stops = (signal.SIGTERM, signal.SIGHUP)
    main = threading.current_thread() is threading.main_thread()  # signal handlers are set there only
    before = {sig: signal.signal(sig, _raise_stopped) for sig in stops} if main else {}
    if main:  # restored with the others: an ignored SIGINT would outlive a demo run in-process (and be inherited)
        before[signal.SIGINT] = signal.getsignal(signal.SIGINT)
    try:
        with contextlib.ExitStack() as held:  # the rows' locks (:func:`_lock_rows`), released when it returns
            try:
                return _run(args, held)
            except (KeyboardInterrupt, _Stopped) as exc:
                for sig in before:  # a second signal must not cut the children's ending short
                    signal.signal(sig, signal.SIG_IGN)
                stopped = CHILDREN.stop()
                print(f"otel-agents demo: interrupted; {stopped} child process(es) stopped", file=sys.stderr,
                      flush=True)
                return 128 + (exc.signum if isinstance(exc, _Stopped) else signal.SIGINT)
    finally:
        for sig, handler in before.items():
            if handler is not None:  # None: set outside Python, cannot be put back
                signal.signal(sig, handler)


LOCK_NAME = ".otel-agents-demo.lock"


def _lock_rows(held: contextlib.ExitStack, out: Path, rows: list[str]) -> str | None:
    """Lock ``out/<row>/`` for each row this demo writes (``campaign`` for ``--repeat``), until ``held``
    closes; why not, or ``None``. Two demos writing one row would delete each other's traces and reports and
    rewrite each other's manifests, whose targets name their own fork server (one demo's agents served, then
    stopped, by the other's). A ``--venv`` child grades other rows: it takes their locks beside ours. The
    locks are ``flock``s: a demo killed with SIGKILL leaves none held."""
    import fcntl

    for row in rows:
        path = out / row / LOCK_NAME
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            f = held.enter_context(open(path, "a+", encoding="utf-8"))
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            pid = f.read().strip()
            return (f"another otel-agents demo{f' (pid {pid})' if pid.isdigit() else ''} is writing "
                    f"{_shown(path.parent)}: wait for it to finish, or give this one another --out")
        except OSError as exc:
            return f"cannot write {path}: {exc.strerror or exc}"
        f.truncate(0)
        f.write(f"{os.getpid()}\n")
        f.flush()
    return None


def _run(args: argparse.Namespace, held: contextlib.ExitStack) -> int:
    try:
        import yaml
    except ImportError:
        print("otel-agents demo needs PyYAML: pip install 'otel-agents[ecp]'", file=sys.stderr)
        return 2
    bindir = Path(sys.executable).parent
    ecp = bindir / "ecp"
    if not ecp.exists():
        print(f"otel-agents demo needs the ECP runtime (no {ecp}): pip install ecp-runtime", file=sys.stderr)
        return 2
    examples = find_examples(args.examples)
    if examples is None:
        print(f"otel-agents demo: --examples {args.examples}: no manifest.yaml and common.py there (the files of "
              "examples/customer_support)" if args.examples else "otel-agents demo: examples/customer_support not "
              "found; run it from the repository root or pass --examples DIR", file=sys.stderr)
        return 2
    console = sys.stderr if args.json_out == "-" else sys.stdout  # stdout carries the JSON alone
    try:
        venvs = [parse_venv(v) for v in args.venv]
    except ValueError as exc:
        print(f"otel-agents demo: {exc}", file=sys.stderr)
        return 2
    elsewhere = {fw for _, rows in venvs for fw in rows}
    frameworks = [f for f in default_frameworks() if f not in elsewhere] if args.frameworks is None else \
        [f.strip() for f in args.frameworks.split(",") if f.strip()]
    unknown = sorted((set(frameworks) | elsewhere) - set(FRAMEWORKS))
    if unknown:
        print(f"otel-agents demo: unknown framework(s) {unknown}; choose from {', '.join(FRAMEWORKS)}", file=sys.stderr)
        return 2
    problem = _unwritable(Path(args.out), directory=True) or \
        (_unwritable(Path(args.json_out), directory=False) if args.json_out not in (None, "-") else None)
    if problem:
        print(f"otel-agents demo: {problem}", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    from ..evaluations import load_manifest

    try:
        base = load_manifest(examples / "manifest.yaml")
    except (OSError, ValueError) as exc:
        print(f"otel-agents demo: {exc}", file=sys.stderr)
        return 2
    # `--frameworks "$ROWS"` with ROWS unset graded nothing, status 0 (`--json -` is a program's call: {"runs": []})
    if not frameworks and not venvs and args.repeat == 1 and args.json_out != "-":
        print(f"otel-agents demo: --frameworks {args.frameworks!r} names no row and no --venv grades any: nothing to "
              f"grade; choose from {', '.join(FRAMEWORKS)}", file=sys.stderr)
        return 2
    busy = _lock_rows(held, out, ["campaign"] if args.repeat > 1 else frameworks)
    if busy:
        print(f"otel-agents demo: {busy}", file=sys.stderr)
        return 2
    common = load_module(examples / "common.py", "_otel_agents_demo_common")
    serve = [str(bindir / "otel-agents")] if (bindir / "otel-agents").exists() else [sys.executable, "-m", "otel_agents.cli"]
    if args.repeat > 1:  # the K-run campaign (issue 39)
        from .campaign import run_campaign

        return run_campaign(args, yaml, base, examples, out, serve, ecp,
                            frameworks if args.frameworks else [PLAIN_PYTHON], example_file)

    runs = [Run(fw, attr, out / fw / _SUBDIRS[attr]) for fw in frameworks for attr in TWINS]
    sockets = Path(tempfile.mkdtemp(prefix="otel-agents-demo-"))  # mode 0700: only we can reach the fork servers
    for r in runs:
        r.error = preflight(r.framework, example_file(examples, r.framework))
        if r.error is None:
            via = str(sockets / f"{r.framework}.sock") if len(serve) == 1 else None
            r.manifest = write_manifest(yaml, base, r, examples, out, serve, phoenix=args.phoenix, via=via)
    n_agents = len(runs) + len(TWINS) * len(elsewhere)
    if args.json_out != "-":  # with "-", the caller (--venv) announced these agents among its own
        print(f"otel-agents demo: grading {n_agents} agents with `ecp run` (manifest {_shown(examples / 'manifest.yaml')}) ...",
              file=console, flush=True)
    children = [start_venv(d, rows, args, out, examples) for d, rows in venvs]
    todo = sorted((r for r in runs if r.error is None), key=lambda r: _LONGEST_FIRST.index(r.framework))
    servers = {fw: ForkServer.of_framework(fw, examples, out, sockets)
               for fw in dict.fromkeys(r.framework for r in todo)} if len(serve) == 1 else {}
    # `ecp run` itself (ecp-runtime's imports, ~0.35 s of CPU a run) from a fork server too; its log beside the
    # first row's (every row's directory is this demo's own, _lock_rows)
    graders = ForkServer.of_ecp_run(sockets, out / todo[0].framework) if todo else None

    def grade(r: Run) -> None:
        if r.framework in servers:
            servers[r.framework].wait_ready(args.timeout)
        run_ecp(r, ecp, args.timeout, graders)
        if not CHILDREN.stopping.is_set():  # interrupted: no line per run it ended
            print(f"  {r.framework} {_LABELS[r.attr]}: "
                  f"{'error' if r.error else 'graded'} ({_shown(r.out / 'report.html')})", file=console, flush=True)

    try:
        map_all(grade, todo, args.jobs)
    finally:
        for server in [*servers.values(), *([graders] if graders else [])]:
            server.stop()
        shutil.rmtree(sockets, ignore_errors=True)
    for r in runs:
        if r.error is None:
            summarise(r, base, common)
    if args.phoenix:
        for r in runs:
            if r.report is not None:
                annotate(r, args.phoenix, console)
    for child in children:
        runs += finish_venv(*child)
    runs.sort(key=lambda r: FRAMEWORKS.index(r.framework))  # stable: a framework's twins keep their order
    failed_output = False
    if args.json_out:
        data = json.dumps({"runs": [run_json(r) for r in runs]}, indent=1)
        if args.json_out == "-":
            print(data)
        else:
            try:
                Path(args.json_out).write_text(data + "\n", encoding="utf-8")
            except OSError as exc:  # checked at the start; the table below still shows the runs
                print(f"otel-agents demo: cannot write {args.json_out}: {exc.strerror or exc}", file=sys.stderr)
                failed_output = True
    if args.json_out != "-":  # with "-", the caller (--venv) folds these rows into its own table
        print(file=console)
        print(render(runs, out), file=console)
    return 2 if failed_output else 0 if all(r.error is None for r in runs) else 1


# -- setting up ---------------------------------------------------------------------------------

def default_frameworks() -> list[str]:
    """Every row, minus the frameworks tested in a venv of their own (``Framework.venv``) not installed here."""
    from .._api import _installed_version
    from ..instrumentors._frameworks import FRAMEWORKS as SPECS

    return [f for f in FRAMEWORKS if f not in SPECS or SPECS[f].venv is None or _installed_version(SPECS[f]) is not None]


def find_examples(explicit: str | None) -> Path | None:
    """The example directory: ``explicit``, else under the current directory, else in this source checkout."""
    candidates = [Path(explicit)] if explicit else [
        Path.cwd() / "examples" / "customer_support",
        Path(__file__).resolve().parents[3] / "examples" / "customer_support",
    ]
    for c in candidates:
        if (c / "manifest.yaml").is_file() and (c / "common.py").is_file():
            return c.resolve()
    return None


def load_module(path: Path, name: str) -> ModuleType:
    """Import a file as a module (the example's framework-free ``common.py``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def example_file(examples: Path, framework: str) -> Path:
    """The module defining ``framework``'s ``agent`` and ``faulty_agent``: ``<examples>/<framework>_agent.py``,
    or for ``plain_python`` ``examples/plain_python/agent.py`` (next to the ``customer_support`` directory)."""
    if framework == PLAIN_PYTHON:
        return examples.parent / PLAIN_PYTHON / "agent.py"
    return examples / f"{framework}_agent.py"


def preflight(framework: str, example: Path) -> str | None:
    """Why ``framework``'s ``example`` cannot be served (file, framework or instrumentor missing), or ``None``."""
    from .._api import _installed_version
    from ..instrumentors._frameworks import FRAMEWORKS as SPECS

    if not example.is_file():
        return f"{_shown(example)} not found"
    if framework == PLAIN_PYTHON:
        return None  # decorators only: no framework, no instrumentor
    spec = SPECS[framework]
    if _installed_version(spec) is None:
        return f"{spec.distribution} is not installed"
    try:
        importlib.import_module(spec.module)  # instrumentor modules import their framework lazily: cheap
    except Exception as exc:  # noqa: BLE001 - shown in the table
        return f"instrumentor unavailable: {type(exc).__name__}: {exc}"
    return None


def write_manifest(yaml: Any, base: dict[str, Any], r: Run, examples: Path, out: Path, serve: list[str],
                   phoenix: str | None = None, via: str | None = None) -> Path:
    """Writes ``out/manifests/<framework>[-faulty].yaml``: the example manifest with ``target`` swapped
    to serve ``r``'s agent (its spans also exported to ``phoenix`` when given; run by a fork of the
    fork server at socket ``via`` while it listens, see :class:`ForkServer`); returns its path."""
    r.out.mkdir(parents=True, exist_ok=True)
    for name in ("trace.jsonl", "serve.log", "report.json", "report.html", "ecp.log"):
        (r.out / name).unlink(missing_ok=True)  # the trace file and log are appended to: start clean
    command = [*serve, "ecp", "serve", f"{_shown(example_file(examples, r.framework))}:{r.attr}",
               "--name", f"customer-support-{r.framework}{_SUFFIXES[r.attr]}",
               "--trace-file", _shown(r.out / "trace.jsonl"), "--log-file", _shown(r.out / "serve.log")]
    if r.framework in (MCP, A2A):  # the server's / remote agent's spans come back to `ecp serve` and fold into each step
        command += ["--collect", "0", "--collect-grace", "30"]  # an upper bound: a step waits only until they came
    if phoenix:
        command += ["--otlp-endpoint", phoenix.rstrip("/").removesuffix("/v1/traces") + "/v1/traces"]
    if via:
        command = [sys.executable, "-I", _FORKSERVER, via, *command]
    manifest = dict(base)
    twin = f", {_LABELS[r.attr]}" if r.attr != "agent" else ""
    manifest["name"] = f"{base.get('name', 'customer support')} ({r.framework}{twin})"
    manifest["target"] = "exec " + shlex.join(command)  # exec: ecp's SIGTERM reaches the server itself
    path = out / "manifests" / f"{r.framework}{_SUFFIXES[r.attr]}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=1000), encoding="utf-8")
    return path


_FORKSERVER = str(Path(__file__).with_name("forkserver.py"))


class ForkServer:
    """A fork server (:mod:`otel_agents.cli.forkserver`) started with ``args`` (its ``--serve...`` arguments,
    the first its socket), its log ``log``: the processes it serves are forks of it, each a process of its own
    as if started afresh, without importing again. A client that finds no server listening runs its command
    itself."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.socket = args[1]
        with open(log, "w", encoding="utf-8") as err:
            self.proc = CHILDREN.popen(
                [sys.executable, "-m", "otel_agents.cli.forkserver", *args],
                # the environment of the clients (default: of the `ecp run`s, ecp_environment()): one that differs
                # execs its command itself (imports and all), as every client did when this was the demo's own
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                env=ecp_environment() if env is None else env)
        self._lock = threading.Lock()
        self._waited = False

    @classmethod
    def of_framework(cls, framework: str, examples: Path, out: Path, sockets: Path) -> ForkServer:
        """``framework``'s: it imports the framework and the example once, and each ``ecp run`` scenario's
        ``ecp serve`` runs in a fork of it (without the 1-5 s of CPU of the imports each time). Its log:
        ``out/<framework>/forkserver.log``."""
        example = _shown(example_file(examples, framework))
        return cls(["--serve", str(sockets / f"{framework}.sock"), *(f"{example}:{attr}" for attr in TWINS)],
                   out / framework / "forkserver.log")

    @classmethod
    def of_ecp_run(cls, sockets: Path, folder: Path, env: dict[str, str] | None = None) -> ForkServer:
        """``ecp run``'s: it imports ecp-runtime's CLI once, and each ``ecp run`` is a fork of it calling its
        entry point (:meth:`client`). Its log: ``folder/ecp-run.forkserver.log``; ``env``: as :class:`ForkServer`'s."""
        return cls(["--serve-ecp-run", str(sockets / "ecp-run.sock")], folder / "ecp-run.forkserver.log", env)

    def client(self, command: list[str]) -> list[str]:
        """The command that runs ``command`` in a fork of this server (or runs it itself, no server listening)."""
        return [sys.executable, "-I", _FORKSERVER, self.socket, *command]

    def wait_ready(self, timeout: float) -> None:
        """Wait (once, at most ``timeout`` seconds) for the server to listen or to give up."""
        with self._lock:
            if not self._waited:
                self._waited = True
                select.select([self.proc.stdout], [], [], timeout)

    def stop(self) -> None:
        """End the server (it ends any child still running) and wait for it."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        CHILDREN.forget(self.proc)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _shown(path: Path) -> str:
    """``path`` relative to the current directory when under it (readable manifests), else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path.resolve())


# -- running ------------------------------------------------------------------------------------

def ecp_environment() -> dict[str, str]:
    """The environment of the ``ecp run`` processes the demo starts (and so of the agents they serve): ours, with
    ``LITELLM_LOCAL_MODEL_COST_MAP=True`` unless it is set. ecp-runtime imports LiteLLM whenever it is installed
    (for its ``llm_judge`` grader, which no demo manifest uses), and LiteLLM fetches its price list from GitHub
    at import unless told to read its bundled copy: the demo runs offline."""
    return {"LITELLM_LOCAL_MODEL_COST_MAP": "True", **os.environ}


def ecp_run(args: list[str], log: Path, timeout: float, server: ForkServer | None = None) -> int:
    """``ECP ARGS`` (``args[0]`` the ``ecp`` script, then ``run`` and its options), in a fork of ``server`` when
    given (once it is ready, within ``timeout`` seconds), its output to the file ``log``, stopped after ten times
    ``timeout`` seconds. Returns its exit status (``ecp run``: 0 passed, 2 a check failed); raises ``OSError``
    when it could not start and ``subprocess.TimeoutExpired`` when it was stopped. The demo's and the campaign's
    way to grade one manifest."""
    if server is not None:
        server.wait_ready(timeout)
        args = server.client(args)
    with open(log, "w", encoding="utf-8") as out:
        return CHILDREN.run(args, timeout * 10, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=ecp_environment())


def run_ecp(r: Run, ecp: Path, timeout: float, server: ForkServer | None = None) -> None:
    """``ecp run`` on ``r``'s manifest with ``timeout`` seconds per RPC (``ecp run --timeout``; the whole run
    is stopped after ten times that), in a fork of ``server`` when given; fills ``r.report`` or ``r.error``."""
    report = r.out / "report.json"
    try:
        returncode = ecp_run([str(ecp), "run", "--manifest", str(r.manifest), "--json-out", str(report),
                              "--report", str(r.out / "report.html"), "--timeout", str(timeout)],
                             r.out / "ecp.log", timeout, server)
    except (OSError, subprocess.TimeoutExpired) as exc:
        r.error = f"ecp run did not complete: {exc}"
        return
    if returncode not in (0, 2) or not report.exists():
        r.error = f"ecp run exited with {returncode}: {_last_line(r.out / 'ecp.log')}"
        return
    try:
        r.report = json.loads(report.read_text(encoding="utf-8"))
    except ValueError as exc:
        r.error = f"unreadable report {report}: {exc}"


def annotate(r: Run, phoenix: str, console: Any = None) -> None:
    """``otel-agents ecp annotate --to phoenix`` for ``r``'s report: fills ``r.annotated``."""
    from ..evaluations import annotate_phoenix, evaluation_results
    from ..exporters.file import read_otlp_json

    assert r.report is not None
    trace = r.out / "trace.jsonl"
    spans = read_otlp_json(trace, errors=[]) if trace.exists() else None
    delivery = annotate_phoenix(evaluation_results(r.report, spans), phoenix)
    r.annotated = delivery.sent
    from . import shown  # the first refusal quotes the backend's answer: nothing in it may drive the terminal

    failed = f" ({len(delivery.failed)} traces not annotated: {shown(delivery.failed[0])})" if delivery.failed else ""
    print(f"  {r.framework} {_LABELS[r.attr]}: {delivery.sent} checks annotated in Phoenix"
          f"{failed}", file=console or sys.stdout, flush=True)


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][-200:] if lines else "(empty log)"


def summarise(r: Run, base: dict[str, Any], common: ModuleType) -> None:
    """Counts checks and faults from ``r.report``; a crashed or unreadable run becomes ``r.error``."""
    assert r.report is not None
    serve_log = r.out / "serve.log"
    if serve_log.exists():
        for line in serve_log.read_text(encoding="utf-8", errors="replace").splitlines():
            if "could not instrument" in line:
                r.error = f"instrumentor failed: {line.strip()[-160:]}"
                return
    plan = common.FAULT_PLANS.get(r.framework) if r.faulty else None
    if r.attr == "side_effect_agent":
        plan = common.SIDE_EFFECT_PLAN
    scenarios = r.report.get("scenarios") or []
    for m_scenario, scenario in zip(base.get("scenarios", []), scenarios):
        for m_step, step in zip(m_scenario.get("steps", []), scenario.get("steps") or []):
            checks = step.get("checks") or []
            broken = [c for c in checks if c.get("type") == "execution" and not c.get("passed")]
            if step.get("error") or broken:
                reason = str(step.get("error") or broken[0].get("reasoning"))[:160]
                log = _last_line(serve_log)
                r.error = f"agent failed: {reason}" + (f" | serve.log: {log}" if serve_log.exists() and log != "(empty log)" else "")
                return
            r.check_results.extend(bool(c.get("passed")) for c in checks)
            if plan is not None and common.fault_for(plan, m_step.get("input", "")):
                r.faults += 1
                r.caught_ecp += any(not c.get("passed") for c in checks)
                r.caught_outcome += any(not c.get("passed") for c in checks if c.get("field") == "public_output")
    r.passed, r.total = sum(r.check_results), len(r.check_results)
    expected = sum(len(s.get("graders") or []) for sc in base.get("scenarios", []) for s in sc.get("steps", []))
    if r.total != expected:
        r.error = f"the report has {r.total} checks, the manifest {expected}"


# -- rows graded in another venv (a framework's venv of its own) -------------------------------

_JSON_FIELDS = ("framework", "attr", "error", "passed", "total", "check_results", "annotated", "faults",
                "caught_ecp", "caught_outcome")


def parse_venv(spec: str) -> tuple[Path, list[str]]:
    """``DIR=ROWS`` (``--venv``) as ``(DIR, [row, ...])``; ``ValueError`` naming what is wrong."""
    directory, _, rows = spec.partition("=")
    names = [f.strip() for f in rows.split(",") if f.strip()]
    if not directory or not names:
        raise ValueError(f"--venv {spec!r}: expected DIR=ROWS, e.g. .venv-google_adk=google_adk")
    return Path(directory), names


def start_venv(directory: Path, rows: list[str], args: argparse.Namespace, out: Path,
               examples: Path) -> tuple[Path, list[str], Path, subprocess.Popen[str] | None, str | None]:
    """Starts ``DIR/bin/otel-agents demo --frameworks ROWS --json -`` (same ``--out``, examples, timeout,
    Phoenix); its progress goes straight to our standard error. Returns what :func:`finish_venv` needs."""
    command = [str(directory / "bin" / "otel-agents"), "demo", "--frameworks", ",".join(rows), "--json", "-",
               "--out", str(out), "--examples", str(examples), "--timeout", str(args.timeout),
               "--jobs", str(max(1, args.jobs // 2))]
    if args.phoenix:
        command += ["--phoenix", args.phoenix]
    try:
        proc = CHILDREN.popen(command, ends_its_own=True, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    except OSError as exc:
        return directory, rows, out, None, f"{shlex.join(command[:2])} could not start: {exc}"
    return directory, rows, out, proc, None


def finish_venv(directory: Path, rows: list[str], out: Path, proc: subprocess.Popen[str] | None,
                error: str | None) -> list[Run]:
    """The runs a :func:`start_venv` child graded, read from its JSON; every twin of its rows an ``ERROR``
    run when it produced none."""
    if proc is not None:
        stdout, _ = proc.communicate()
        CHILDREN.forget(proc)
        try:
            runs = [Run(framework=d["framework"], attr=d["attr"], out=out / d["framework"] / _SUBDIRS[d["attr"]],
                        **{k: d[k] for k in _JSON_FIELDS[2:]}) for d in json.loads(stdout)["runs"]]
        except (ValueError, KeyError, TypeError) as exc:
            error = f"{directory}/bin/otel-agents demo (exit status {proc.returncode}) gave no result: {exc}"
        else:
            if {r.framework for r in runs} == set(rows):
                return runs
            error = f"{directory}/bin/otel-agents demo graded {sorted({r.framework for r in runs})}, not {rows}"
    return [Run(fw, attr, out / fw / _SUBDIRS[attr], error=error) for fw in rows for attr in TWINS]


def run_json(r: Run) -> dict[str, Any]:
    """One run's result as the JSON ``--json`` writes (what :func:`finish_venv` reads back)."""
    return {k: getattr(r, k) for k in _JSON_FIELDS}


# -- the table ----------------------------------------------------------------------------------

def render(runs: list[Run], out: Path) -> str:
    """The summary table and the agreement and fault-detection lines."""
    by = {(r.framework, r.attr): r for r in runs}
    frameworks = list(dict.fromkeys(r.framework for r in runs))
    header = ("framework", "agent", "faulty twin", "faults", "caught by ECP", "caught by outcome-only")
    rows = [header]
    errors = []
    for fw in frameworks:
        good, bad = by[(fw, "agent")], by[(fw, "faulty_agent")]
        row = [fw, _cell(good), _cell(bad)]
        if bad.error:
            row += ["-", "-", "-"]
        else:
            row += [str(bad.faults), f"{bad.caught_ecp}/{bad.faults}", f"{bad.caught_outcome}/{bad.faults}"]
        rows.append(tuple(row))
        errors += [f"  {fw} {_LABELS[r.attr]}: {r.error}" for r in (good, bad) if r.error]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))

    ok_good = [by[(fw, "agent")] for fw in frameworks if not by[(fw, "agent")].error]
    ok_bad = [by[(fw, "faulty_agent")] for fw in frameworks if not by[(fw, "faulty_agent")].error]
    lines.append("")
    if ok_good:
        columns = list(zip(*(r.check_results for r in ok_good)))
        agreeing = sum(len(set(col)) == 1 for col in columns)
        lines.append(f"verdict agreement: agent {_verdicts(ok_good)}, faulty twin {_verdicts(ok_bad)}; "
                     f"check by check, the agents of {_frameworks(len(ok_good))} agree on {agreeing}/{len(columns)} checks")
    faults = sum(r.faults for r in ok_bad)
    lines.append(f"faults injected in the faulty twins: {faults}; caught by the ECP checks: "
                 f"{sum(r.caught_ecp for r in ok_bad)}/{faults}; by an outcome-only check: "
                 f"{sum(r.caught_outcome for r in ok_bad)}/{faults}")
    lines += _side_effect_table(runs, frameworks, errors)
    lines.append(f"reports and traces: {_shown(out)}/<framework>/report.html, trace.jsonl "
                 f"(faulty twin: {_shown(out)}/<framework>/faulty/, side-effect twin: .../side_effect/); "
                 f"manifests: {_shown(out / 'manifests')}/")
    if any(r.annotated is not None for r in runs):
        sent = sum(r.annotated or 0 for r in runs)
        lines.append(f"Phoenix: {sent} checks annotated on their spans (trace view → Annotations; "
                     "the faulty twins' failed checks have label 'fail')")
    if errors:
        lines.append("errors:")
        lines.extend(errors)
    return "\n".join(lines)


def _side_effect_table(runs: list[Run], frameworks: list[str], errors: list[str]) -> list[str]:
    """The side-effect twins' rows (issue 28: a fault seen only as an HTTP call the run made) and their
    fault-detection line; appends their errors to ``errors``. Empty when no side-effect twin ran."""
    by = {(r.framework, r.attr): r for r in runs}
    twins = [by[(fw, "side_effect_agent")] for fw in frameworks if (fw, "side_effect_agent") in by]
    if not twins:
        return []
    header = ("framework", "side-effect twin", "faults", "caught by ECP", "caught by outcome-only")
    rows = [header]
    for r in twins:
        counts = ["-", "-", "-"] if r.error else [str(r.faults), f"{r.caught_ecp}/{r.faults}",
                                                  f"{r.caught_outcome}/{r.faults}"]
        rows.append((r.framework, _cell(r), *counts))
        if r.error:
            errors.append(f"  {r.framework} side-effect twin: {r.error}")
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["", *("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)]
    lines.insert(2, "  ".join("-" * w for w in widths))
    ok = [r for r in twins if not r.error]
    faults = sum(r.faults for r in ok)
    lines += ["", f"side effects injected in the side-effect twins: {faults}; caught by the ECP checks: "
                  f"{sum(r.caught_ecp for r in ok)}/{faults}; by an outcome-only check: "
                  f"{sum(r.caught_outcome for r in ok)}/{faults}"]
    return lines


def _cell(r: Run) -> str:
    return "ERROR" if r.error else f"{r.verdict} {r.passed}/{r.total}"


def _verdicts(runs: list[Run]) -> str:
    """``"PASS on 5/5 frameworks"`` (the most common verdict and how many frameworks share it)."""
    if not runs:
        return "(no completed run)"
    verdicts = [r.verdict for r in runs]
    top = max(set(verdicts), key=verdicts.count)
    return f"{top} on {verdicts.count(top)}/{_frameworks(len(runs))}"


def _frameworks(n: int) -> str:
    """``"1 framework"``, ``"5 frameworks"``."""
    return f"{n} framework" if n == 1 else f"{n} frameworks"
