"""``otel-agents doctor``: what is installed, what is instrumented, and what the content policy is."""

from __future__ import annotations

import argparse
import os

from .._spans.settings import ENV_CAPTURE_CONTENT, ENV_MAX_CONTENT_LENGTH, ENV_VOCABULARIES, Settings
from ..semconv.vocabularies import VOCABULARIES


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents doctor`` (its arguments, ``func=run``) to ``sub``, the parent's subparsers."""
    p = sub.add_parser("doctor", help="report installed frameworks, versions and settings")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``otel-agents doctor``: print the version, the content policy, trace-context propagation and each
    framework's status (installed, supported, instrumented); returns 0."""
    from .. import __version__, instrumentation_status

    settings = Settings()
    print(f"otel-agents {__version__}")
    print(f"content capture: {'on' if settings.content_enabled() else 'off'} "
          f"({ENV_CAPTURE_CONTENT}={os.environ.get(ENV_CAPTURE_CONTENT, '<unset>')})")
    print(f"content budget: {settings.content_budget()} characters per attribute "
          f"({ENV_MAX_CONTENT_LENGTH}={os.environ.get(ENV_MAX_CONTENT_LENGTH, '<unset>')})")
    print(f"vocabularies: {','.join(v for v in VOCABULARIES if v in settings.selected_vocabularies())} "
          f"({ENV_VOCABULARIES}={os.environ.get(ENV_VOCABULARIES, '<unset>')})")
    from ..instrumentors.mcp._protocol import ENV_PROPAGATE, propagating  # does not import mcp

    print(f"mcp trace context in params._meta: {'on' if propagating(None) else 'off'} "
          f"({ENV_PROPAGATE}={os.environ.get(ENV_PROPAGATE, '<unset>')})")
    from ..instrumentors.a2a._protocol import ENV_PROPAGATE as A2A_ENV, propagating as a2a_propagating  # no a2a import

    print(f"a2a trace context in service parameters: {'on' if a2a_propagating(None) else 'off'} "
          f"({A2A_ENV}={os.environ.get(A2A_ENV, '<unset>')})")
    status = instrumentation_status()
    rows = [(name, st.installed_version or "-", st.supported, st.reason or "instrumented") for name, st in status.items()]
    widths = [max([len(row[i]) for row in rows], default=0) for i in range(3)]
    for name, version, supported, state in rows:  # columns as wide as their longest value
        print(f"  {name:<{widths[0]}} installed {version:<{widths[1]}} supported {supported:<{widths[2]}} {state}")
    from ..instrumentors.openai_agents._wiring import tracing_disabled_note  # does not import the SDK

    note = tracing_disabled_note()
    if note:
        print(f"  openai_agents: {note}")
    from ..instrumentors.claude_agent_sdk._native import cli_telemetry_note  # does not import the SDK

    print(f"  claude_agent_sdk: {cli_telemetry_note()}")
    for line in peer_warnings():
        print(line)
    return 0


# Other packages that instrument the same provider clients: with two on, every request is traced twice.
PEER_CLIENT_INSTRUMENTATIONS = {
    "openinference-instrumentation-openai": "openai",
    "openinference-instrumentation-anthropic": "anthropic",
    "opentelemetry-instrumentation-openai-v2": "openai",
    "opentelemetry-instrumentation-openai": "openai",  # OpenLLMetry
    "opentelemetry-instrumentation-anthropic": "anthropic",  # OpenLLMetry
    "traceloop-sdk": "openai, anthropic",  # OpenLLMetry's SDK instruments both
}


def peer_warnings() -> list[str]:
    """One line per installed peer instrumentation of the ``openai``/``anthropic`` clients."""
    from importlib import metadata

    lines = []
    for dist, clients in PEER_CLIENT_INSTRUMENTATIONS.items():
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        lines.append(f"  note: {dist} {version} is installed and also traces the {clients} client: keep one "
                     f"instrumentation per client on, or each request gets two model spans (turn ours off with "
                     f"OTEL_PYTHON_DISABLED_INSTRUMENTATIONS={clients.replace(' ', '')}, or do not instrument {dist})")
    return lines
