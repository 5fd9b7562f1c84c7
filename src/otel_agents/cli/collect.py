"""``otel-agents ecp collect``: an OTLP/HTTP receiver that folds every trace it receives into ECP envelopes.

Point any OpenTelemetry SDK or Collector at it (``OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318``):
it receives spans on ``/v1/traces`` (protobuf or JSON, gzip or not), groups them by
trace across every process that sends them, and folds each trace once it is complete
(its root span has arrived and no span of it for --trace-idle seconds, default 5: the
semantics of the Collector's groupbytrace processor) into ECP envelopes, one JSON object per line,
appended to --output. --forward passes every request on, unchanged, to another OTLP/HTTP
endpoint (a tracing backend; collect's own address is refused, and a request that comes back
through a loop, marked in its otel-agents-forwarded header, is not forwarded or folded again).
At most --max-traces traces and --max-spans spans are held (the oldest trace is folded early,
marked incomplete), --max-spans-per-trace per trace.
On SIGTERM/SIGINT it stops receiving, folds what it holds (marked incomplete) and logs how
many traces and spans that was (with --forward, also how many requests were forwarded, failed and were
dropped, and how many spans the endpoint rejected in an OTLP partial success). An envelope that
cannot be written (a full disk) is lost, logged and counted (exit status 1), and the receiver goes on;
with -o -, it stops once standard output's reader has closed it. Binds loopback unless --allow-remote;
Host, Origin, token, body and time checks as for ecp serve --http. --grpc-port also serves OTLP/gRPC (the protocol
the Collector's loadbalancing exporter speaks), with the token check, --max-body-bytes (x 4, as
decompressed) and --connection-timeout (a call whose message has not arrived by then is cancelled;
an idle connection is closed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from typing import Any

from . import log_to_stderr, plain
from ._types import at_least_one, bearer_token, http_url, origin, port, positive_seconds, seconds

DEFAULT_PORT = 4318  # the OTLP/HTTP port
DEFAULT_OUTPUT = "otel-agents-envelopes.jsonl"
DEFAULT_TRACE_IDLE = 5.0  # seconds: at least the senders' batch delay (OTEL_BSP_SCHEDULE_DELAY default 5000 ms)


def register(ecp_sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents ecp collect`` (its arguments, ``func=run``) to ``ecp_sub``, the parent's subparsers."""
    from ..serve.http import HTTPLimits

    limits = HTTPLimits()
    p = ecp_sub.add_parser("collect", help="receive OTLP spans and fold each trace into ECP envelopes",
                           description=plain(__doc__))
    p.add_argument("-o", "--output", default=DEFAULT_OUTPUT, metavar="ENVELOPES.jsonl",
                   help=f"append envelopes here, one per line (default {DEFAULT_OUTPUT}; '-' = standard output)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any free port)")
    p.add_argument("--trace-idle", type=seconds, default=DEFAULT_TRACE_IDLE, metavar="SECONDS",
                   help="fold a trace whose root has arrived after this long without a new span (default "
                        f"{DEFAULT_TRACE_IDLE:g}: the SDKs' batch delay, OTEL_BSP_SCHEDULE_DELAY, is 5 s, so one "
                        "process's spans may come that much later than another's)")
    p.add_argument("--trace-timeout", type=seconds, default=30.0, metavar="SECONDS",
                   help="fold a trace whose root never arrived after this long without a new span (default 30)")
    p.add_argument("--max-traces", type=at_least_one, default=10_000, help="traces held at once (default 10000)")
    p.add_argument("--max-spans", type=at_least_one, default=500_000, help="spans held at once (default 500000)")
    p.add_argument("--max-spans-per-trace", type=at_least_one, default=2000,
                   help="spans kept per trace (default 2000); past it, only the parents of spans kept (a run's "
                        "root), up to twice this")
    p.add_argument("--grpc-port", type=port, metavar="PORT",
                   help="also serve OTLP/gRPC on this port of --host (0 = any free port; 4317 is OTLP/gRPC's): what "
                        "the Collector's loadbalancing exporter sends (needs the collect-grpc extra)")
    p.add_argument("--forward", metavar="URL", type=http_url,
                   help="also pass every request on, unchanged, to this OTLP/HTTP traces URL (…/v1/traces)")
    p.add_argument("--include-thoughts", action="store_true", help="add models' reasoning to evaluation_context")
    p.add_argument("--allow-remote", action="store_true", help="allow binding a non-loopback --host "
                                                               "(use with --auth-token)")
    p.add_argument("--auth-token", type=bearer_token, default=os.environ.get("OTEL_AGENTS_ECP_TOKEN") or None, metavar="TOKEN",
                   help="require 'Authorization: Bearer TOKEN' (default: $OTEL_AGENTS_ECP_TOKEN)")
    p.add_argument("--allow-origin", action="append", default=[], type=origin, metavar="ORIGIN",
                   help="let pages from ORIGIN (scheme://host[:port]; '*' = any, with a token only) send spans "
                        "(OpenTelemetry JS in a "
                        "browser): their requests pass the Origin check and get CORS answers, preflights included "
                        "(loopback origins always do)")
    p.add_argument("--allow-host", action="append", default=[], help="an extra allowed Host header name")
    p.add_argument("--connection-timeout", type=positive_seconds, default=limits.connection_timeout, metavar="SECONDS",
                   help=f"close a connection that sends no complete request for this long; on gRPC, cancel a "
                        f"call whose message has not arrived by then and close an idle connection "
                        f"(default {limits.connection_timeout:g})")
    p.add_argument("--max-body-bytes", type=at_least_one, default=limits.max_body,
                   help=f"largest request body in bytes, as sent (default {limits.max_body})")
    p.set_defaults(func=run)


def forwards_to_itself(url: str, host: str, port: int) -> bool:
    """Whether the ``http`` URL ``url`` reaches a receiver bound to ``host`` (``--host``) and ``port`` (not 0, which
    is known only once bound): the same port, and a host that is ``host`` itself, ``localhost`` for 127.0.0.1 or ::1
    (either way round), or, for a wildcard ``host`` (``0.0.0.0``: every IPv4 address of the machine, ``::`` every
    address), a loopback or wildcard address of its family or this machine's name. Names are compared as written,
    not looked up: a loop this cannot see is cut by the :class:`~otel_agents.serve.otlp.Forwarder`'s mark."""
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        target_port = parts.port or 80
    except ValueError:
        return False
    if parts.scheme != "http" or port == 0 or target_port != port:
        return False  # https: a TLS handshake with this plain-HTTP receiver fails, no loop
    target, here = (parts.hostname or "").lower(), host.strip("[]").lower()
    if target == here or {target, here} in ({"localhost", "127.0.0.1"}, {"localhost", "::1"}):
        return True
    if here not in ("0.0.0.0", "::"):
        return False
    if target in ("localhost", socket.gethostname().lower()):
        return True
    try:
        address = ipaddress.ip_address(target)
    except ValueError:
        return False
    return (address.is_loopback or address.is_unspecified) and (here == "::" or address.version == 4)


def _refusal(args: argparse.Namespace) -> str | None:
    from .._spans.redaction import redact_url
    from ..serve.http import is_loopback, missing_server_packages, open_origin_refusal

    if not is_loopback(args.host) and not args.allow_remote:
        return (f"--host {args.host} is not a loopback address: anyone who can reach it could send spans. "
                "Pass --allow-remote to bind it anyway (with --auth-token or OTEL_AGENTS_ECP_TOKEN).")
    refusal = open_origin_refusal(args.allow_origin, args.auth_token, "send spans to this server")
    if refusal:
        return refusal
    if args.trace_idle > args.trace_timeout:  # each bound alone is checked by its argparse type
        return f"--trace-idle {args.trace_idle:g} is longer than --trace-timeout {args.trace_timeout:g}"
    if args.forward and forwards_to_itself(args.forward, args.host, args.port):
        return (f"--forward {redact_url(args.forward)} is this receiver's own address ({args.host}:{args.port}): "
                "every request would be forwarded back to it, for ever; give the tracing backend's URL")
    return missing_server_packages(otlp=True)


def run(args: argparse.Namespace) -> int:
    """``otel-agents ecp collect``: receive until stopped (SIGINT/SIGTERM, or standard output's reader closing
    it with ``-o -``); the exit status — 0 stopped, 1 some envelopes could not be written (a full disk, a closed
    pipe: each loss logged, the receiver kept going), 2 refused options (a non-loopback ``--host`` without
    ``--allow-remote``, --trace-idle over --trace-timeout, a --forward URL that is the receiver's own address), the
    output not writable or the port not bound."""
    refusal = _refusal(args)
    if refusal:
        print(f"otel-agents ecp collect: {refusal}", file=sys.stderr)
        return 2
    log_to_stderr()
    from .._spans.encoding import dumps as strict_json
    from ..exporters._appender import JsonLinesAppender
    from ..serve.otlp import worth_logging

    if args.output == "-":
        def write(line: str) -> bool:
            data = memoryview((line + "\n").encode("utf-8"))
            while data:  # unbuffered: a line that could not be written is not written again later
                data = data[os.write(sys.stdout.fileno(), data):]
            return True
        close: Any = lambda: None  # noqa: E731
    else:
        try:
            appender = JsonLinesAppender(args.output)
        except OSError as exc:
            print(f"otel-agents ecp collect: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        write, close = appender.append, appender.close
    where = args.output if args.output != "-" else "standard output"
    log = logging.getLogger("otel_agents.collect")
    lost: list[int] = []  # envelopes that could not be written
    reader_gone = threading.Event()  # standard output's reader closed it: nothing can be written any more

    def on_envelope(envelope: dict[str, Any]) -> None:
        try:
            line = strict_json(envelope)
        except ValueError as exc:
            log.warning("otel-agents collect: trace %s: envelope is not strict JSON, skipped (%s)",
                        envelope.get("trace_id"), exc)
            return
        try:
            write(line)
        except OSError as exc:  # a full disk, a closed pipe: that envelope is lost; the receiver goes on (or stops)
            lost.append(1)
            if isinstance(exc, BrokenPipeError):
                reader_gone.set()
            if worth_logging(len(lost)):
                log.error("otel-agents collect: cannot write %s: %s; the envelope of trace %s is lost (%d so far; "
                          "logged at the 1st, 2nd, 4th, … loss)", where, exc.strerror or exc,
                          envelope.get("trace_id"), len(lost))

    try:
        code = asyncio.run(_serve(args, on_envelope, reader_gone))
    finally:
        close()
    if lost:
        print(f"otel-agents collect: {len(lost)} envelope(s) could not be written to {where}", file=sys.stderr)
        return code or 1
    return code


async def _serve(args: argparse.Namespace, on_envelope: Any, reader_gone: threading.Event) -> int:
    from ..exporters.ecp import TraceGatherer
    from ..serve.http import HTTPLimits, HTTPSecurity, bind, is_loopback, serve_http
    from ..serve.otlp import Forwarder, OTLPReceiver

    log = logging.getLogger("otel_agents.collect")
    if not is_loopback(args.host) and not args.auth_token:  # --allow-remote alone: allowed, and said (as ecp serve)
        log.warning("otel-agents collect: listening on %s without --auth-token: anyone who can reach it can send "
                    "spans, and poison the envelopes written", args.host)
    gatherer = TraceGatherer(on_envelope, trace_idle=args.trace_idle, trace_timeout=args.trace_timeout,
                             max_traces=args.max_traces, max_spans=args.max_spans,
                             max_spans_per_trace=args.max_spans_per_trace, include_thoughts=args.include_thoughts)
    forwarder = Forwarder(args.forward) if args.forward else None

    def sink(spans: list, raw: tuple) -> None:
        if forwarder is not None and not forwarder.submit(raw):
            return  # one it forwarded, come back (a loop): its spans were gathered when it first came
        gatherer.add(spans)
        gatherer.fold_ready()

    limits = HTTPLimits(connection_timeout=args.connection_timeout, max_body=args.max_body_bytes)
    security = HTTPSecurity(allowed_hosts=args.allow_host, allowed_origins=args.allow_origin,
                            auth_token=args.auth_token)
    receiver = OTLPReceiver(sink, security=security, limits=limits, bound_host=args.host)
    try:
        sock = bind(args.host, args.port, limits.backlog)
    except OSError as exc:
        print(f"otel-agents ecp collect: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    loop = asyncio.get_running_loop()
    servers: list[Any] = []

    def started(server: Any) -> None:
        servers.append(server)

        def stop() -> None:
            server.force_exit = server.should_exit
            server.should_exit = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)

    async def tick() -> None:  # folds traces that went idle between requests
        period = max(0.05, min(args.trace_idle / 4, 0.5))
        while True:
            await asyncio.sleep(period)
            await receiver.run_in_worker(gatherer.fold_ready)
            if reader_gone.is_set() and servers and not servers[0].should_exit:
                log.error("otel-agents collect: standard output was closed by its reader: stopping")
                servers[0].should_exit = True

    grpc_server = None
    if args.grpc_port is not None:
        from ..serve.otlp_grpc import serve_grpc

        try:
            grpc_server, grpc_port = serve_grpc(receiver, args.host, args.grpc_port, args.auth_token)
        except RuntimeError as exc:
            sock.close()
            print(f"otel-agents ecp collect: {exc}", file=sys.stderr)
            return 2
        print(f"collecting OTLP/gRPC at {args.host}:{grpc_port}", file=sys.stderr, flush=True)
    ticker = asyncio.ensure_future(tick())
    where = args.output if args.output != "-" else "standard output"
    try:
        await serve_http(receiver, args.host, args.port, limits, started=started, sock=sock,
                         announce=lambda url: print(f"collecting OTLP at {url}; envelopes to {where}",
                                                    file=sys.stderr, flush=True))
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
        if grpc_server is not None:
            await asyncio.get_running_loop().run_in_executor(None, lambda: grpc_server.stop(2).wait(5))
        receiver.close()  # the request in the worker finishes first
        traces, spans = gatherer.flush("the receiver shut down before the trace was complete")
        if traces:  # nothing held: the summary below says 0, no warning about spans that cannot be missing
            log.warning("otel-agents collect: shutting down: folded the %d trace(s) (%d span(s)) held now; "
                        "spans of them arriving later are not in their envelopes", traces, spans)
        if forwarder is not None:
            finish_forwarding(forwarder)
        print(f"otel-agents collect: {receiver.received + receiver.rejected} span(s) received, "
              f"{receiver.rejected} of them rejected; "
              f"{gatherer.traces} trace(s) folded into {gatherer.runs} envelope(s); "
              f"{traces} trace(s) held at shutdown; dropped: {dict(gatherer.dropped) or 'none'}",
              file=sys.stderr, flush=True)
    return 0


def finish_forwarding(forwarder: Any, command: str = "otel-agents collect", what: str = "--forward") -> None:
    """The end of a :class:`~otel_agents.serve.otlp.Forwarder` (``ecp collect --forward``; ``ecp serve --collect``
    passing received spans on to its OTLP destination): what is queued is sent (at most 5 s), then its summary
    line goes to standard error, ``COMMAND: WHAT URL: …`` (``otel-agents collect: --forward URL: 12 request(s)
    sent, 0 failed, 0 dropped``). Call it once nothing is submitted any more (the receiver closed)."""
    forwarder.close()
    print(f"{command}: {forwarder.summary(what)}", file=sys.stderr, flush=True)
