"""``otel-agents ecp serve TARGET``: serve an instrumented agent over ECP (stdio or Streamable HTTP).

TARGET is ``module:attr`` or ``path/to/file.py:attr``: a callable taking the step
input (sync or async), an object with ``step(input)`` and optional ``reset()``, or
a class (or a factory: a function with no positional parameter) making such objects, one per
HTTP session; ``def agent(q=""):`` takes the step input (an agent, not a factory).
Every installed framework is instrumented; each step's spans are folded into its
ECP envelope and, when asked, also exported (``--trace-file`` OTLP/JSON lines,
``--otlp-endpoint`` or the standard ``OTEL_EXPORTER_OTLP_*`` variables for OTLP/HTTP),
so the run an ECP runtime grades is the run a tracing backend shows. With PHOENIX_PROJECT_NAME
set, the spans' resource carries it as openinference.project.name: Phoenix files them in that
project (as Phoenix's own OpenTelemetry package does).

With --collect PORT, an OTLP/HTTP receiver on 127.0.0.1 takes the spans of the agent's
other processes (its MCP servers, launched with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT pointing
there) and each step waits for them, at most --collect-grace seconds after its root span
ends, and folds them into its envelope; a part that did not come is reported in the
envelope (incomplete, and a logs record), never waited for longer (docs/collect.md).

With --replay SOURCE (no TARGET), stored runs answer the steps instead of an agent, so `ecp run` grades
yesterday's runs with a new manifest without a model call (otel_agents.serve.replay). Every step's root
records otel_agents.ecp.scenario.id, otel_agents.ecp.step.index and, with content capture on,
otel_agents.ecp.step.input_sha256, which the replay matches on (with content off no digest of the input is
written: a short input's SHA-256 gives it back to a dictionary, so such runs are replayed from their traces
only when they hold the input, which they do not).

A step still running after --step-timeout seconds is answered with an error and
the server keeps serving; on an agent object the next step or reset waits (within
its own timeout) for that step to return, and is refused, naming it, if it does
not. HTTP binds loopback only unless --allow-remote is given, checks Host and
Origin, and with --auth-token (or OTEL_AGENTS_ECP_TOKEN) requires a bearer token;
see "Serving safely" in the README.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from . import log_to_stderr, plain
from ._types import at_least_one, bearer_token, http_url, origin, port, positive_seconds, seconds, url_path

DEFAULT_COLLECT_GRACE = 5.0  # seconds
# (tracer provider, {target spec: Target}, os.environ then) set up and imported by a fork server's parent
# (otel_agents.cli.forkserver): what a forked `ecp serve` uses instead of doing it again. A target is
# imported again when the environment differs (an example may read it at import: --collect changes it).
PRELOADED: tuple | None = None


class _Shutdown(BaseException):
    """SIGTERM/SIGINT before the server loop runs (while the target imports): not the agent's own exit."""


def _stop(*_: object) -> None:
    raise _Shutdown


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents ecp`` and its subcommands (``serve`` here; ``annotate``, ``collect``, ``report`` from
    their modules) to ``sub``, the parent's subparsers."""
    from ..serve.http import HTTPLimits
    from ..serve.session import DEFAULT_STEP_TIMEOUT
    from ..serve.sessions import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT

    limits = HTTPLimits()
    ecp = sub.add_parser("ecp", help="Evaluation Context Protocol commands")
    ecp_sub = ecp.add_subparsers(dest="ecp_command", metavar="COMMAND")
    p = ecp_sub.add_parser("serve", help="serve an agent over ECP", description=plain(__doc__))
    p.add_argument("target", nargs="?", help="module:attr or path/to/file.py:attr (not with --replay)")
    p.add_argument("--replay", metavar="SOURCE",
                   help="serve the runs stored in SOURCE (OTLP/JSON traces, a Phoenix span export or envelopes, "
                        "one per line) instead of an agent: each step answered with its stored envelope, no model "
                        "call (see otel_agents.serve.replay)")
    p.add_argument("--replay-cursor", metavar="FILE",
                   help="with --replay: keep what was replayed in FILE, so k `ecp run`s of a stdio target grade "
                        "stored runs 1..k")
    p.add_argument("--name", help="agent name reported by agent/initialize "
                                  "(default: the target's; with --replay, 'replay')")
    p.add_argument("--step-timeout", type=seconds, default=DEFAULT_STEP_TIMEOUT, metavar="SECONDS",
                   help=f"answer a step (or reset) still running after this long with an error and keep serving "
                        f"(default {DEFAULT_STEP_TIMEOUT:g}; 0 = no limit)")
    p.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=port, default=8765, help="HTTP port (default 8765; 0 = any free port)")
    p.add_argument("--path", type=url_path, default="/ecp", help="HTTP endpoint path (default /ecp)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow binding a non-loopback --host (use with --auth-token)")
    p.add_argument("--auth-token", type=bearer_token, default=os.environ.get("OTEL_AGENTS_ECP_TOKEN") or None, metavar="TOKEN",
                   help="require 'Authorization: Bearer TOKEN' on every HTTP request "
                        "(default: $OTEL_AGENTS_ECP_TOKEN; prefer the variable: arguments show in ps)")
    p.add_argument("--allow-origin", action="append", default=[], type=origin, metavar="ORIGIN",
                   help="let pages from ORIGIN (scheme://host[:port]; '*' = any, with a token only) call the "
                        "HTTP server: their "
                        "requests pass the Origin check and get CORS answers, preflights included (loopback origins "
                        "always do)")
    p.add_argument("--allow-host", action="append", default=[],
                   help="an extra allowed Host header name (loopback names and the bound address always are)")
    p.add_argument("--max-sessions", type=at_least_one, default=DEFAULT_MAX_SESSIONS,
                   help=f"HTTP sessions open at once (default {DEFAULT_MAX_SESSIONS})")
    p.add_argument("--session-idle-timeout", type=positive_seconds, default=DEFAULT_SESSION_IDLE_TIMEOUT, metavar="SECONDS",
                   help=f"end an HTTP session after this long without a request "
                        f"(default {DEFAULT_SESSION_IDLE_TIMEOUT:g})")
    p.add_argument("--connection-timeout", type=positive_seconds, default=limits.connection_timeout, metavar="SECONDS",
                   help=f"close an HTTP connection that sends no complete request for this long "
                        f"(default {limits.connection_timeout:g})")
    p.add_argument("--max-body-bytes", type=at_least_one, default=limits.max_body,
                   help=f"largest request (HTTP body or stdio line) in bytes (default {limits.max_body})")
    p.add_argument("--trace-file", help="also write every span as OTLP/JSON lines to this file")
    p.add_argument("--otlp-endpoint", type=http_url,
                   help="also export spans over OTLP/HTTP to this URL (http(s)://host:port/v1/traces)")
    p.add_argument("--log-file", help="send this process's stderr (logs, the agent's prints) to a file")
    p.add_argument("--collect", type=port, metavar="PORT",
                   help="also receive OTLP/HTTP spans on 127.0.0.1:PORT (0 = any free port) from the agent's other "
                        "processes (its MCP servers...), which inherit OTEL_EXPORTER_OTLP_TRACES_ENDPOINT pointing "
                        "there, and fold them into each step's envelope")
    p.add_argument("--collect-grace", type=seconds, default=DEFAULT_COLLECT_GRACE, metavar="SECONDS",
                   help=f"with --collect: how long a step waits, after its root span ends, for the spans of its "
                        f"other processes (default {DEFAULT_COLLECT_GRACE:g}); what has not arrived by then is "
                        "reported in the envelope's logs and incomplete")
    p.set_defaults(func=run)
    from .annotate import register as register_annotate
    from .collect import register as register_collect

    register_annotate(ecp_sub)
    register_collect(ecp_sub)
    from .report import register as register_report

    register_report(ecp_sub)
    ecp.set_defaults(func=lambda args: (ecp.print_help(), 2)[1])


def _provider(args: argparse.Namespace | None, provider=None):
    """A tracer provider (or ``provider``) with the exporters ``args`` asks for (none for ``None``).

    Raises:
        OSError: the ``--trace-file`` cannot be appended to.
        ValueError: ``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`` is no http(s) URL, or the protocol variables ask for
            ``grpc`` (the message names the variable): ``ecp serve`` sends OTLP/HTTP only (``--otlp-endpoint`` is
            an OTLP/HTTP URL whatever they say). An unknown protocol is ignored with a WARNING
            (:func:`~otel_agents.exporters.presets.otlp_protocol`).
        ImportError: an OTLP destination without the ``otlp`` extra.
    """
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    from ..exporters.presets import ENV_PHOENIX_PROJECT, PROJECT_RESOURCE_ATTRIBUTE

    if provider is None:
        attributes = {"service.name": os.environ.get("OTEL_SERVICE_NAME", "otel-agents-ecp")}
        if os.environ.get(ENV_PHOENIX_PROJECT):  # Phoenix files the spans in this project, as its own otel package does
            attributes[PROJECT_RESOURCE_ATTRIBUTE] = os.environ[ENV_PHOENIX_PROJECT]
        provider = TracerProvider(resource=Resource.create(attributes))
    if args is None:
        return provider
    if args.trace_file:
        from ..exporters.file import OTLPJsonFileExporter

        provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(args.trace_file)))
    endpoint = args.otlp_endpoint or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or \
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if endpoint:  # the otlp preset checks what the variables say (a URL, the protocol) before the first span
        from ..exporters.presets import http_protobuf_only, otlp

        if not args.otlp_endpoint:  # --collect forwards request bodies as they came: OTLP/HTTP
            http_protobuf_only("ecp serve")
        provider.add_span_processor(BatchSpanProcessor(otlp(args.otlp_endpoint, protocol="http/protobuf").build()))
    return provider


def _refusal(args: argparse.Namespace) -> str | None:
    """Why these options (or this environment) are refused, or ``None``."""
    from .._spans.settings import ENV_SDK_DISABLED, sdk_disabled
    from ..serve.http import is_loopback, missing_server_packages, open_origin_refusal

    if args.replay is not None:  # no agent runs, no span is recorded: these would do nothing, silently
        idle = [option for option, value in (("--collect", args.collect), ("--trace-file", args.trace_file),
                                             ("--otlp-endpoint", args.otlp_endpoint)) if value is not None]
        if idle:
            return (f"{' and '.join(idle)} with --replay: a replay runs no agent and records no span, so there is "
                    "nothing to collect or export (the stored runs are answered as they were recorded)")
    elif args.replay_cursor is not None:
        return "--replay-cursor keeps what a --replay server replayed; it does nothing with an agent TARGET"
    dashed = [option for option, value in (("--log-file", args.log_file), ("--trace-file", args.trace_file),
                                           ("--replay-cursor", args.replay_cursor)) if value == "-"]
    if dashed:  # not a stream here: a file named "-", the log and the spans in one file when both say it
        return (f"{' and '.join(o + ' -' for o in dashed)}: these options name files (in stdio mode standard output "
                "carries the ECP answers, and the log goes to standard error without --log-file); give a file name")
    from . import written_over

    problem = written_over([("--log-file", args.log_file), ("--trace-file", args.trace_file),
                            ("--replay-cursor", args.replay_cursor)], [("the --replay source", args.replay)])
    if problem:  # the agent's prints among the spans (fold: malformed lines), or the stored runs overwritten
        return problem
    if args.http and not is_loopback(args.host) and not args.allow_remote:
        return (f"--host {args.host} is not a loopback address: anyone who can reach it could run the agent. "
                "Pass --allow-remote to bind it anyway (with --auth-token or OTEL_AGENTS_ECP_TOKEN).")
    if args.http and (refusal := open_origin_refusal(args.allow_origin, args.auth_token,
                                                        "run the agent through this server")):
        return refusal
    if args.http or args.collect is not None:
        missing = missing_server_packages(otlp=args.collect is not None)
        if missing:
            return f"{'--collect' if not args.http else '--http'}: {missing}"
    if args.replay is None and sdk_disabled():  # every step would be answered with no tool call, no context
        return (f"{ENV_SDK_DISABLED}={os.environ[ENV_SDK_DISABLED]!r} turns the OpenTelemetry SDK off, and each "
                "step's envelope is folded from its spans: unset it for this process (--replay needs no spans)")
    return None


def run(args: argparse.Namespace) -> int:
    """``otel-agents ecp serve``: serve until the input ends or a stop signal (SIGTERM, SIGINT: spans flushed, those
    ``--collect`` received still queued for the OTLP destination sent within 5 s and counted in a summary line,
    instrumentation removed); the exit status — 0 stopped, 2 refused options, ``OTEL_SDK_DISABLED=true`` (no
    spans to fold), a bad TARGET/--replay or a port not bound (the reason on standard error)."""
    # ecp-runtime ends a stdio agent with SIGTERM after each scenario: exit 0 through `finally`,
    # so spans are flushed and instrumentation removed. Once the server loop runs, it owns the signals.
    from ..serve import fork

    before = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig, handler in before.items():  # an agent's forked child gets the handlers back
        fork.restore_in_child(sig, handler)
    try:
        return _run(args)
    except _Shutdown:
        return 0
    finally:
        fork.forget()  # the server's descriptors are closed: their numbers may be reused
        # as found (cleanup ignores them): an ignored signal would outlive a server run in-process, inherited by
        # every process started after it
        for sig, handler in before.items():
            if handler is not None:  # None: set outside Python, cannot be put back
                signal.signal(sig, handler)


def _run(args: argparse.Namespace) -> int:
    refusal = _refusal(args)
    if refusal:
        print(f"otel-agents ecp serve: {refusal}", file=sys.stderr)
        return 2
    if (args.target is None) == (args.replay is None):
        print("otel-agents ecp serve: give a TARGET or --replay SOURCE (one of them)", file=sys.stderr)
        return 2
    listening = None
    if args.http:  # bound before anything is imported: a port in use fails at once, with its reason
        from ..serve.http import HTTPLimits, bind

        try:
            listening = bind(args.host, args.port, HTTPLimits().backlog)
        except OSError as exc:
            print(f"otel-agents ecp serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
    if args.log_file:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(args.log_file)), exist_ok=True)
            log = open(args.log_file, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives with the process
        except OSError as exc:
            print(f"otel-agents ecp serve: cannot write {args.log_file}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        os.dup2(log.fileno(), 2)
        sys.stderr = log
    log_to_stderr()
    from .. import instrument, uninstrument
    from ..serve import TargetError, load_target

    # The protocol keeps private copies of stdin and stdout; the agent gets /dev/null as its stdin and
    # stderr as its stdout, so nothing it reads or writes (input(), print, a child process, C code) can
    # take a request or corrupt a response.
    from ..serve import fork
    from . import CLOSED_AT_START

    if not args.http and CLOSED_AT_START:  # the stdio transport's requests come on 0, its answers go to 1
        which = " and ".join(name for fd, name in ((0, "input"), (1, "output")) if fd in CLOSED_AT_START)
        print(f"otel-agents ecp serve: standard {which} closed: the stdio transport reads requests on standard "
              "input and answers on standard output (or serve --http)", file=sys.stderr)
        return 2
    protocol_in = os.fdopen(os.dup(0), "rb")
    fork.detach_in_child(protocol_in.fileno())  # a forked child of the agent must not hold them
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    protocol_out = None
    if not args.http:
        sys.stdout.flush()
        protocol_out = os.fdopen(os.dup(1), "wb")
        fork.detach_in_child(protocol_out.fileno())
        os.dup2(2, 1)
    if args.replay is not None:
        return _serve_replay(args, protocol_in, protocol_out, listening)
    preloaded_provider, preloaded, environ = PRELOADED or (None, {}, None)
    try:
        provider = _provider(args, preloaded_provider)
    except OSError as exc:  # --trace-file
        print(f"otel-agents ecp serve: cannot write {args.trace_file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (ValueError, ImportError) as exc:  # OTEL_EXPORTER_OTLP_*: no URL, not HTTP; the otlp extra missing
        print(f"otel-agents ecp serve: {exc}", file=sys.stderr)
        return 2
    receiver = sock = None
    forward_to = _otlp_destination(args)  # before --collect points the children's OTLP variables at us
    if args.collect is not None:
        try:
            receiver, sock = _collect_receiver(args)
        except OSError as exc:
            print(f"otel-agents ecp serve: cannot listen on 127.0.0.1:{args.collect}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
    # The served agent's own spans (decorators, manual spans) use the global provider: make it ours.
    from opentelemetry import trace

    if preloaded_provider is None:
        trace.set_tracer_provider(provider)
        instrument(provider)  # before the target is imported, so agents built at import are covered too
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the protocol
            target = (environ == os.environ and preloaded.get(args.target)) or load_target(args.target)
    except TargetError as exc:
        print(f"otel-agents ecp serve: {exc}", file=sys.stderr)
        uninstrument()
        return 2
    from ..serve.session import Tracing
    from ..serve.sessions import SessionManager

    tracing = Tracing(provider, remote_grace=args.collect_grace if receiver is not None else None)
    forwarder = None
    if receiver is not None:
        receiver.sink, forwarder = _remote_sink(args, tracing, forward_to)
    sessions = SessionManager(target, tracing, args.name, step_timeout=args.step_timeout or None,
                              max_sessions=args.max_sessions, idle_timeout=args.session_idle_timeout)
    try:
        main = _serve_http(args, sessions, listening) if args.http else \
            _serve_stdio(args, sessions, protocol_in, protocol_out)
        asyncio.run(main if receiver is None else _with_receiver(main, receiver, sock))
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # cleanup is short; let it finish
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        uninstrument()
        if forwarder is not None:  # the receiver is closed: what it queued is sent, the counts said
            from .collect import finish_forwarding

            finish_forwarding(forwarder, "otel-agents ecp serve", "--collect: received spans sent on to")
        provider.shutdown()
        sessions.close()
    return 0


def _serve_replay(args: argparse.Namespace, protocol_in, protocol_out, listening=None) -> int:
    """``--replay``: no agent, no instrumentation, no model: stored envelopes answer the steps."""
    from ..serve.jsonrpc import RPCError
    from ..serve.replay import Replayer, ReplaySourceError, load_runs, replay_sessions

    skipped: list = []
    try:
        runs = load_runs(args.replay, errors=skipped)
    except ReplaySourceError as exc:
        print(f"otel-agents ecp serve --replay: {exc}", file=sys.stderr)
        return 2
    for problem in skipped:  # as otel-agents fold reports them; the runs of the other lines are served
        print(f"otel-agents ecp serve --replay: skipped {problem}", file=sys.stderr)
    logging.getLogger("otel_agents.serve").info("replaying %d stored run(s) from %s", len(runs), args.replay)
    replayer = Replayer(runs, args.replay, args.replay_cursor)
    try:
        replayer.cursor.claimed()
    except RPCError as exc:
        print(f"otel-agents ecp serve --replay: {exc.message.removeprefix('replay: ')}", file=sys.stderr)
        return 2
    for note in (replayer.inputless_note(), replayer.cut_note()):  # inputless: each unmatched step's error says it too
        if note:
            print(f"otel-agents ecp serve --replay: {args.replay}: {note}", file=sys.stderr)
    sessions = replay_sessions(replayer, args.name or "replay",
                               max_sessions=args.max_sessions, idle_timeout=args.session_idle_timeout)
    main = _serve_http(args, sessions, listening) if args.http else \
        _serve_stdio(args, sessions, protocol_in, protocol_out)
    asyncio.run(main)
    return 0


def _collect_receiver(args: argparse.Namespace):
    """``--collect``: the OTLP receiver (its sink is set once the sessions exist) and its bound socket.
    The agent's child processes inherit its address in ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (and
    ``OTEL_BSP_SCHEDULE_DELAY`` = 100 ms unless set, so their spans arrive within the grace period);
    this process's own exporters were made before and are not affected."""
    from ..serve.http import HTTPLimits, bind
    from ..serve.otlp import OTLPReceiver

    limits = HTTPLimits(connection_timeout=args.connection_timeout, max_body=args.max_body_bytes)
    sock = bind("127.0.0.1", args.collect, limits.backlog)
    port = sock.getsockname()[1]
    os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"http://127.0.0.1:{port}/v1/traces"
    os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
    os.environ.setdefault("OTEL_BSP_SCHEDULE_DELAY", "100")
    return OTLPReceiver(lambda spans, raw: None, limits=limits), sock


def _otlp_destination(args: argparse.Namespace) -> str | None:
    """Where this process's spans go over OTLP/HTTP (``--otlp-endpoint`` or the standard variables), if anywhere."""
    if args.otlp_endpoint:
        return args.otlp_endpoint
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return base.rstrip("/") + "/v1/traces" if base else None


def _remote_sink(args: argparse.Namespace, tracing, forward_to: str | None):
    """What ``--collect`` does with received spans: hold them for their step's envelope, and send them
    where this process's own spans go (``--trace-file``; the OTLP destination, unchanged), so the trace
    file and the backend hold the whole run too. Returns ``(sink, forwarder)``: the
    :class:`~otel_agents.serve.otlp.Forwarder` to ``forward_to`` (``None`` without one), for the caller to finish
    at exit (:func:`~otel_agents.cli.collect.finish_forwarding`)."""
    from ..serve.otlp import Forwarder

    file_exporter = None
    if args.trace_file:
        from ..exporters.file import OTLPJsonFileExporter

        file_exporter = OTLPJsonFileExporter(args.trace_file)
    forwarder = Forwarder(forward_to) if forward_to else None

    def sink(spans, raw) -> None:
        if forwarder is not None and not forwarder.submit(raw):
            return  # one it forwarded, come back (a loop): its spans were handled when it first came
        tracing.collector.add_remote(spans)
        if file_exporter is not None and spans:
            file_exporter.export(spans)

    return sink, forwarder


async def _with_receiver(main, receiver, sock) -> None:
    """Run ``main`` (the ECP server) with the ``--collect`` receiver beside it; stop the receiver after."""
    from ..serve.http import serve_http

    servers: list = []
    task = asyncio.ensure_future(serve_http(receiver, "127.0.0.1", 0, receiver.limits, started=servers.append,
                                            sock=sock, announce=lambda url: print(f"collecting spans at {url}",
                                                                                  file=sys.stderr, flush=True)))
    try:
        await main
    finally:
        for server in servers:
            server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 5)
        receiver.close()


async def _serve_stdio(args: argparse.Namespace, sessions, stdin, stdout) -> None:
    from ..serve.stdio import serve_stdio

    task = asyncio.ensure_future(serve_stdio(sessions.default.methods(), stdin, stdout, args.max_body_bytes))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)  # the step in flight is abandoned, its spans ended
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _serve_http(args: argparse.Namespace, sessions, sock=None) -> None:
    """Serve ``sessions`` over Streamable HTTP on ``sock`` (bound by :func:`~otel_agents.serve.http.bind`;
    ``None``: bind ``args.host``/``args.port`` here)."""
    from ..serve.http import ECPApp, HTTPLimits, HTTPSecurity, is_loopback, serve_http

    limits = HTTPLimits(connection_timeout=args.connection_timeout, max_body=args.max_body_bytes)
    security = HTTPSecurity(allowed_hosts=args.allow_host, allowed_origins=args.allow_origin,
                            auth_token=args.auth_token)
    if not is_loopback(args.host) and not args.auth_token:
        logging.getLogger("otel_agents.serve").warning(
            "serving %s without --auth-token: anyone who can reach it can run the agent", args.host)
    app = ECPApp(sessions, args.path, security, limits, bound_host=args.host)
    loop = asyncio.get_running_loop()

    def started(server) -> None:
        def stop() -> None:
            server.force_exit = server.should_exit  # a second signal: stop waiting for steps in flight
            server.should_exit = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)

    await serve_http(app, args.host, args.port, limits, started=started, sock=sock,
                     announce=lambda url: print(f"serving ECP at {url}", file=sys.stderr, flush=True))

