"""``otel-agents ecp serve TARGET``: serve an instrumented agent over ECP (stdio or Streamable HTTP).

TARGET is ``module:attr`` or ``path/to/file.py:attr``: a callable taking the step
input (sync or async), or an object with ``step(input)`` and optional ``reset()``.
Every installed framework is instrumented; each step's spans are folded into its
ECP envelope and, when asked, also exported (``--trace-file`` OTLP/JSON lines,
``--otlp-endpoint`` or the standard ``OTEL_EXPORTER_OTLP_*`` variables for OTLP/HTTP),
so the run an ECP runtime grades is the run a tracing backend shows.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from . import plain


def register(sub: argparse._SubParsersAction) -> None:
    ecp = sub.add_parser("ecp", help="Evaluation Context Protocol commands")
    ecp_sub = ecp.add_subparsers(dest="ecp_command", metavar="COMMAND")
    p = ecp_sub.add_parser("serve", help="serve an agent over ECP", description=plain(__doc__))
    p.add_argument("target", help="module:attr or path/to/file.py:attr")
    p.add_argument("--name", help="agent name reported by agent/initialize (default: the target's)")
    p.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765; 0 = any free port)")
    p.add_argument("--path", default="/ecp", help="HTTP endpoint path (default /ecp)")
    p.add_argument("--allow-origin", action="append", default=[],
                   help="an extra allowed Origin for HTTP requests (loopback origins are always allowed)")
    p.add_argument("--trace-file", help="also write every span as OTLP/JSON lines to this file")
    p.add_argument("--otlp-endpoint", help="also export spans over OTLP/HTTP to this URL (…/v1/traces)")
    p.add_argument("--log-file", help="send this process's stderr (logs, the agent's prints) to a file")
    p.set_defaults(func=run)
    ecp.set_defaults(func=lambda args: (ecp.print_help(), 2)[1])


def _provider(args: argparse.Namespace):
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "otel-agents-ecp")}))
    if args.trace_file:
        from ..exporters.file import OTLPJsonFileExporter

        provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(args.trace_file)))
    endpoint = args.otlp_endpoint or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or \
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=args.otlp_endpoint) if args.otlp_endpoint else OTLPSpanExporter()
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def run(args: argparse.Namespace) -> int:
    # ecp-runtime ends a stdio agent with SIGTERM after each scenario: exit through `finally`,
    # so spans are flushed and instrumentation removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.log_file:
        os.makedirs(os.path.dirname(os.path.abspath(args.log_file)), exist_ok=True)
        log = open(args.log_file, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives with the process
        os.dup2(log.fileno(), 2)
        sys.stderr = log
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    from .. import instrument, uninstrument
    from ..serve import ECPSession, TargetError, load_target

    protocol_out = sys.stdout
    if not args.http:
        # Keep the protocol on a private copy of stdout and point file descriptor 1 at stderr, so
        # nothing the agent writes (print, a child process, C code) can corrupt the JSON-RPC stream.
        sys.stdout.flush()
        protocol_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)
    provider = _provider(args)
    # The served agent's own spans (decorators, manual spans) use the global provider: make it ours.
    from opentelemetry import trace

    trace.set_tracer_provider(provider)
    instrument(provider)  # before the target is imported, so agents built at import are covered too
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the protocol
            target = load_target(args.target)
    except TargetError as exc:
        print(f"otel-agents ecp serve: {exc}", file=sys.stderr)
        uninstrument()
        return 2
    session = ECPSession(target, provider, name=args.name)
    try:
        if args.http:
            from ..serve.http import serve_http

            serve_http(session.methods(), args.host, args.port, args.path, args.allow_origin,
                       announce=lambda url: print(f"serving ECP at {url}", file=sys.stderr, flush=True))
        else:
            from ..serve.stdio import serve_stdio

            serve_stdio(session.methods(), sys.stdin, protocol_out)
    except KeyboardInterrupt:
        pass
    finally:
        uninstrument()
        provider.shutdown()
        session.close()
    return 0
