"""``otel-agents doctor``: what is installed, what is instrumented, what the content policy is, and where
``configure()`` would send spans (each network endpoint tried once: a TCP connection, no request, within 2 s
name lookup included). Secrets in
what it shows (a URL's user info, a key in a query) are redacted.

Exit status: 0 when it found no problem; 1 when it reported one (each is listed under ``problems:`` at the end:
a variable with a value we do not take, a framework installed at a version we do not support, an exporter
``configure()`` would refuse or whose endpoint refuses a connection or does not answer, the endpoint tried
whatever else is wrong; each problem once: a variable several settings read is one); 2 for bad arguments. Notes (a peer
instrumentation installed, tracing switched off on purpose) are not problems."""

from __future__ import annotations

import argparse
import logging
import os
from contextlib import contextmanager
from typing import Iterable, Iterator

from .._spans.settings import (ENV_CAPTURE_CONTENT, ENV_MAX_CONTENT_LENGTH, ENV_MAX_MEDIA_BYTES, ENV_SDK_DISABLED,
                               ENV_STATUS_OK, ENV_STREAM_IDLE_TIMEOUT, ENV_VOCABULARIES, Settings, bad_values,
                               sdk_disabled, shown_variable)
from ..semconv.vocabularies import VOCABULARIES


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``otel-agents doctor`` (its arguments, ``func=run``) to ``sub``, the parent's subparsers."""
    from . import plain

    p = sub.add_parser("doctor", help="report installed frameworks, versions and settings (exit 1 on a problem)",
                       description=plain(__doc__))
    p.set_defaults(func=run)


def _shown(name: str) -> str:
    """``NAME=value`` (``<unset>``), the value as :func:`~otel_agents._spans.settings.shown_variable` shows it:
    header names only, no key or token."""
    raw = os.environ.get(name)
    return f"{name}={'<unset>' if raw is None else shown_variable(name, raw)}"


def _credential_variables() -> tuple[str, ...]:
    """The variables holding credentials that configure() or ecp annotate send (shown set or not, never their
    values): the OTLP headers, and the keys the exporter presets read."""
    from ..exporters import presets

    return ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
            presets.ENV_PHOENIX_API_KEY, presets.ENV_LANGFUSE_PUBLIC_KEY, presets.ENV_LANGFUSE_SECRET_KEY,
            presets.ENV_MLFLOW_TRACKING_TOKEN)


def _say(line: str) -> None:
    """Print a line of the report, secrets redacted (:func:`~otel_agents._spans.redaction.redact_url`): an endpoint
    is shown as the exporter resolves it, and ``https://user:PASSWORD@host`` or ``https://TOKEN@host`` (which the
    OTLP/HTTP exporter sends as basic auth) or a ``?api_key=`` in it is a credential."""
    from .._spans.redaction import redact_url

    print(redact_url(line))


def run(args: argparse.Namespace) -> int:
    """``otel-agents doctor``: print the version, the OTel SDK switch, the content policy and the other span
    settings, trace-context propagation, each framework's status (installed, supported, instrumented), what
    ``opentelemetry-instrument`` would load (its OTLP protocol, endpoint and exporter) and the exporters
    ``configure()`` would use, then the problems found: the same on every call in one process.

    Returns:
        0 when no problem was found, 1 when at least one was (see the module docstring).
    """
    from .. import __version__, instrumentation_status

    problems: list[str] = []
    _say(f"otel-agents {__version__}")
    # a variable with a bad value, each time it is read (not the warning logged once per process); any other
    # warning logged meanwhile too
    with _logged_warnings(problems), bad_values(problems):
        _say(f"OpenTelemetry SDK: {_sdk_state(problems)} ({_shown(ENV_SDK_DISABLED)})")
        settings = Settings()
        _say(f"content capture: {'on' if settings.content_enabled() else 'off'} ({_shown(ENV_CAPTURE_CONTENT)})")
        _say(f"content budget: {settings.content_budget()} characters per attribute "
              f"({_shown(ENV_MAX_CONTENT_LENGTH)})")
        _say(f"inline media budget: {settings.media_budget()} bytes per part ({_shown(ENV_MAX_MEDIA_BYTES)})")
        _say(f"stream idle timeout: {settings.idle_timeout():g} s ({_shown(ENV_STREAM_IDLE_TIMEOUT)})")
        _say(f"status OK on success: {'on' if settings.mark_status_ok() else 'off'} ({_shown(ENV_STATUS_OK)})")
        _say(f"vocabularies: {','.join(v for v in VOCABULARIES if v in settings.selected_vocabularies())} "
              f"({_shown(ENV_VOCABULARIES)})")
        from ..instrumentors.mcp._protocol import ENV_PROPAGATE, propagating  # does not import mcp

        _say(f"mcp trace context in params._meta: {'on' if propagating(None) else 'off'} ({_shown(ENV_PROPAGATE)})")
        from ..instrumentors.a2a._protocol import ENV_PROPAGATE as A2A_ENV, propagating as a2a_propagating  # no a2a

        _say(f"a2a trace context in service parameters: {'on' if a2a_propagating(None) else 'off'} "
              f"({_shown(A2A_ENV)})")
        _say(f"ecp annotate --to otlp: {_otlp_logs_state(problems)} ({_shown('OTEL_EXPORTER_OTLP_LOGS_PROTOCOL')}, "
             f"{_shown('OTEL_EXPORTER_OTLP_LOGS_TIMEOUT')})")
        credentials = [_shown(name) for name in _credential_variables() if os.environ.get(name)]
        _say(f"credentials from the environment (header names only, no value): {'; '.join(credentials) or 'none'}")
    status = instrumentation_status()
    rows = [(name, st.installed_version or "-", st.supported, st.reason or "instrumented") for name, st in status.items()]
    widths = [max([len(row[i]) for row in rows], default=0) for i in range(3)]
    for name, version, supported, state in rows:  # columns as wide as their longest value
        _say(f"  {name:<{widths[0]}} installed {version:<{widths[1]}} supported {supported:<{widths[2]}} {state}")
        if state.startswith("unsupported version"):
            problems.append(f"{name}: {state}: it is not instrumented")
    problems.extend(_disabling_nothing(status))
    from ..instrumentors.openai_agents._wiring import tracing_disabled_note  # does not import the SDK

    note = tracing_disabled_note()
    if note:
        _say(f"  openai_agents: {note}")
    from ..instrumentors.claude_agent_sdk._native import cli_telemetry_note  # does not import the SDK

    _say(f"  claude_agent_sdk: {cli_telemetry_note()}")
    for line in peer_warnings():
        _say(line)
    _say(zero_code_line())
    otlp_line = zero_code_otlp_line()
    if otlp_line:
        _say(otlp_line)
    for line in zero_code_file_lines():
        _say(line)
        if ": problem: " in line:
            problems.append(line.strip().replace(": problem: ", ": ", 1))
    for line in exporter_lines(problems):
        _say(line)
    problems = list(dict.fromkeys(problems))  # a value read twice is one problem
    if not problems:
        _say("no problems found")
        return 0
    _say(f"problems: {len(problems)}")
    for problem in problems:
        _say(f"  {problem}")
    return 1


def _disabling_nothing(frameworks: Iterable[str]) -> list[str]:
    """One problem per name ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` lists that is no instrumentation here
    (neither one of ``frameworks`` nor an installed ``opentelemetry_instrumentor`` entry point, the names
    ``opentelemetry-instrument`` matches exactly): a misspelt one (``langchan``) disables nothing, silently."""
    import difflib
    from importlib.metadata import entry_points

    listed = [n.strip() for n in os.environ.get("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "").split(",") if n.strip()]
    if not listed:
        return []
    known = {*frameworks, *(ep.name for ep in entry_points(group="opentelemetry_instrumentor")), "*"}
    problems = []
    for name in listed:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known - {"*"}), n=1)
            problems.append(f"OTEL_PYTHON_DISABLED_INSTRUMENTATIONS names {name!r}, no instrumentation installed here: "
                            "it disables nothing" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return problems


def _otlp_logs_state(problems: list[str]) -> str:
    """How ``ecp annotate --to otlp`` would send evaluation records with no ``-o``; a variable it refuses
    (a gRPC protocol, an endpoint that is no URL) is added to ``problems``, one it ignores is reported by the
    enclosing :func:`~otel_agents._spans.settings.bad_values` block."""
    from ..evaluations._logs import checked_otlp_variables

    try:
        timeout, _ = checked_otlp_variables(None)
    except ValueError as exc:
        problems.append(f"ecp annotate --to otlp: {exc}")
        return "refused"
    return "OTLP/HTTP" + (f", timeout {timeout:g} s" if timeout is not None else "")


def _sdk_state(problems: list[str]) -> str:
    """Whether the OTel SDK records spans (:func:`sdk_disabled`); a value other than ``true``/``false`` leaves it
    on, which the spec asks to warn about and the SDK does not: we count it as a problem."""
    if sdk_disabled():
        return "disabled: no spans are recorded, exported or folded into envelopes"
    if os.environ.get(ENV_SDK_DISABLED, "").strip().lower() not in ("", "false"):
        problems.append(f"{ENV_SDK_DISABLED}={os.environ[ENV_SDK_DISABLED]!r} is not valid; the SDK stays enabled "
                        f"(true disables it, false or unset leaves it on)")
    return "enabled"


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage().removeprefix("otel_agents: "))


@contextmanager
def _logged_warnings(into: list[str]) -> Iterator[None]:
    """Append the WARNINGs the ``otel_agents`` logger gets meanwhile to ``into`` (as problems, not on stderr)."""
    logger = logging.getLogger("otel_agents")
    handler = _Collect(into)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def zero_code_line() -> str:
    """What ``opentelemetry-instrument`` would do in this environment: load our instrumentors (registered as entry
    points only when otel-agents is installed, not merely importable from a source tree) and export through an SDK
    configurator (a distro); without one it records into a no-op provider and exports nothing, silently."""
    from importlib.metadata import entry_points

    ours = [e for e in entry_points(group="opentelemetry_instrumentor") if e.value.startswith("otel_agents.")]
    configurators = sorted({f"{e.dist.name if e.dist else '?'} (entry point {e.name})"
                            for e in entry_points(group="opentelemetry_configurator")})
    line = f"opentelemetry-instrument: {len(ours)} otel-agents instrumentors registered"
    if not ours:
        line += " (otel-agents is importable but not installed here: pip install otel-agents, or -e . in a checkout)"
    if configurators:
        return f"{line}; SDK configurator: {', '.join(configurators)}"
    return (f"{line}; note: no SDK configurator (distro) is installed: it would export nothing "
            f"(pip install 'otel-agents[zero-code]')")


def zero_code_otlp_line() -> str | None:
    """With an SDK configurator (distro) installed and ``otlp`` among ``OTEL_TRACES_EXPORTER`` (the standard
    distro's default): the protocol and endpoint ``opentelemetry-instrument``'s OTLP traces exporter would use
    (``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``, else ``OTEL_EXPORTER_OTLP_PROTOCOL``, else ``grpc``, the standard
    distro's default) and whether its exporter can be imported: without it (or with another protocol) the
    launcher's whole SDK set-up fails at start, and the application runs with no instrumentation and no export.
    A note, not a problem: ``configure()`` does not use it. ``None`` when it does not apply."""
    from importlib.metadata import entry_points

    from ..exporters.presets import (ENV_OTLP_PROTOCOL, ENV_OTLP_TRACES_PROTOCOL, OTLP_EXPORTER_PACKAGES, OTLP_PROTOCOLS,
                                     otlp_traces_endpoint)

    names = [n.strip() for n in (os.environ.get("OTEL_TRACES_EXPORTER") or "otlp").split(",")]
    if "otlp" not in names or not list(entry_points(group="opentelemetry_configurator")):
        return None
    for variable in (ENV_OTLP_TRACES_PROTOCOL, ENV_OTLP_PROTOCOL):
        if os.environ.get(variable, "").strip():
            protocol, source = os.environ[variable].strip(), variable
            break
    else:
        protocol, source = "grpc", "the standard distro's default"
    head = "  opentelemetry-instrument's otlp traces exporter:"
    if protocol not in OTLP_PROTOCOLS:
        return (f"{head} note: {source}={protocol!r} is not a protocol the OpenTelemetry Python SDK has an exporter "
                f"for ({', '.join(OTLP_PROTOCOLS)}): the launcher's set-up would fail (no instrumentation, no export)")
    missing = exporter_missing(protocol)
    return f"{head} {protocol} ({source}) to {otlp_traces_endpoint(protocol)}" + (
        f"; note: {missing}, or the launcher's set-up fails (no instrumentation, no export)" if missing else
        f" ({OTLP_EXPORTER_PACKAGES[protocol][1]} installed)")


def zero_code_file_lines() -> list[str]:
    """The files our ``opentelemetry-instrument`` traces exporters would append to, each with the problem that
    would make it write nothing (a directory, a path that cannot be created or appended to; the launcher then
    logs one error and runs on): ``ecp``'s envelopes (``OTEL_AGENTS_ECP_FILE``, also read by
    ``ECPFileExporter()``: checked when ``OTEL_TRACES_EXPORTER`` names ``ecp`` or the variable is set) and
    ``otlp_json_file``'s traces (``OTEL_AGENTS_TRACES_FILE``: checked when ``OTEL_TRACES_EXPORTER`` names it; the
    ``file`` preset's use of it is :func:`exporter_lines`'). One line each, none for a file not used."""
    from ..exporters._appender import file_setting
    from ..exporters.presets import DEFAULT_ECP_FILE, DEFAULT_TRACES_FILE, ENV_ECP_FILE, ENV_TRACES_FILE

    named = {name.strip() for name in (os.environ.get("OTEL_TRACES_EXPORTER") or "").split(",")}
    lines = []
    for exporter, variable, default, what in (("ecp", ENV_ECP_FILE, DEFAULT_ECP_FILE, "ECP envelopes"),
                                              ("otlp_json_file", ENV_TRACES_FILE, DEFAULT_TRACES_FILE, "traces")):
        if exporter in named or (exporter == "ecp" and os.environ.get(variable)):
            path, _ = file_setting(None, variable, default)
            problem = _file_problem(path)
            lines.append(f"  {what} file of the {exporter!r} traces exporter: {path} ({_shown(variable)})"
                         + (f": problem: {problem}" if problem else ""))
    return lines


def exporter_lines(problems: list[str] | None = None) -> list[str]:
    """Where ``configure()`` with no ``exporters=`` would send spans (``OTEL_AGENTS_EXPORTERS``): one line per
    preset (the ``otlp`` preset's with its protocol and the endpoint its exporter resolves; a network preset's with
    the exporter package it imports, when installed), with the problems ``configure()`` would raise (an unknown
    name, a URL without a scheme, a missing key, a trace file that cannot be appended to, the protocol's exporter
    not installed, one destination given twice), a variable value it ignores with a WARNING (an
    unknown protocol or compression, a timeout that is no positive number), a setting the OpenTelemetry exporter
    would ignore with a warning (:func:`_build_problem`), and whether its endpoint takes a TCP connection (then the
    spans are dropped at exit, after the export timeout): checked whatever else is wrong.

    ``problems``: each problem is appended to it once: a variable's by itself (``NAME='x' is not valid; ...``, as
    the variable's own reading gives it: ``doctor`` lists it once however many read it), a preset's own prefixed
    with the preset (``otlp(...) -> URL: 127.0.0.1:1: Connection refused ...``), one entry each."""
    from .._configure import ENV_EXPORTERS, _exporter_specs, repeated_exporter
    from ..exporters.presets import OTLP_EXPORTER_PACKAGES, resolve

    found: list[str] = [] if problems is None else problems
    lines = [f"exporters configure() would use ({_shown(ENV_EXPORTERS)}):"]
    try:
        specs = _exporter_specs(None)
    except ValueError as exc:
        found.append(str(exc))
        return [*lines, f"  problem: {exc}"]
    resolved = []
    for spec in specs:
        ignored: list[str] = []  # a variable value the preset ignores (an unknown protocol), as the spec asks
        try:
            with bad_values(ignored):
                preset = resolve(spec)
        except ValueError as exc:
            lines.append(f"  {spec}: problem: {exc}")
            found.append(f"{spec}: {exc}")
            continue
        resolved.append((spec, preset))
        url = _endpoint(preset) if preset.batch else None
        protocol = preset.details.get("protocol", "http/protobuf")
        own: list[str | None] = []
        if preset.name == "file":
            own.append(_file_problem(preset.details["path"]))
        elif url:
            missing = exporter_missing(protocol)
            if missing is None:
                variables, built = _build_problem(preset)
                ignored += variables
                own.append(built)
            own += [missing, _endpoint_problem(url)]
        ignored = list(dict.fromkeys(ignored))
        own_problems = [p for p in own if p]
        head = f"  {preset.describe()}" + (f" -> {url}" if url and url != preset.details.get("endpoint") else "")
        found += ignored + [f"{head.strip()}: {p}" for p in own_problems]
        lines.append(head + (f": problem: {'; '.join(ignored + own_problems)}" if ignored or own_problems else
                             f" ({OTLP_EXPORTER_PACKAGES[protocol][1]} installed)" if url else ""))
    repeated = repeated_exporter([spec for spec, _ in resolved], [preset for _, preset in resolved])
    if repeated:  # configure() refuses it
        lines.append(f"  problem: {repeated}")
        found.append(repeated)
    return lines


def _build_problem(preset) -> tuple[list[str], str | None]:
    """Building a network preset's exporter as ``configure()`` does: the variable values we ignore meanwhile
    (``OTEL_EXPORTER_OTLP_TIMEOUT=0`` or ``abc``: every export would fail; a compression the exporter does not
    take), each message once; and what the build raises, or makes the OpenTelemetry exporter warn about and fall
    back from (a header entry that is not ``name=value``), ``None`` when nothing.
    Nothing is sent: the exporter is made and shut down."""
    import contextlib

    warned: list[str] = []
    ignored: list[str] = []  # a variable value we ignore (a timeout of 0), as the OpenTelemetry spec asks
    logger = logging.getLogger("opentelemetry")
    handler, propagate = _Collect(warned), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False  # told once, as a problem, not also on stderr
    try:
        with bad_values(ignored):
            exporter = preset.build()
    except (ValueError, ImportError) as exc:
        return list(dict.fromkeys(ignored)), str(exc)
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    with contextlib.suppress(Exception):
        exporter.shutdown()
    # a header message quotes the entry, which may be a credential: named by its variables instead
    warned = ["OTEL_EXPORTER_OTLP_(TRACES_)HEADERS holds an entry that is not name=value (URL-encoded)"
              if w.startswith("Header format invalid") else w for w in warned]
    return (list(dict.fromkeys(ignored)),
            f"the OpenTelemetry exporter says: {'; '.join(dict.fromkeys(warned))}" if warned else None)


def _endpoint(preset) -> str:
    """The traces URL of a network preset (the ``otlp`` preset's as its exporter resolves it)."""
    from ..exporters.presets import otlp_traces_endpoint

    endpoint = preset.details.get("endpoint", "")
    if preset.name == "otlp" and not endpoint.startswith(("http://", "https://")):
        return otlp_traces_endpoint(preset.details["protocol"])
    return endpoint


def exporter_missing(protocol: str) -> str | None:
    """Why the SDK's OTLP exporter for ``protocol`` (``http/protobuf``, ``grpc``) cannot be imported (it is
    imported, as ``configure()`` would: grpcio missing under an installed gRPC exporter counts): the package and
    our extra to install; ``None`` when it can."""
    from importlib import import_module

    from ..exporters.presets import OTLP_EXPORTER_PACKAGES

    module, distribution, extra = OTLP_EXPORTER_PACKAGES[protocol]
    try:
        import_module(module)
    except ImportError as exc:
        return (f"the OTLP exporter for {protocol} cannot be imported ({exc}): pip install 'otel-agents[{extra}]' "
                f"(it brings {distribution})")
    return None


def _endpoint_problem(url: str) -> str | None:
    """Why spans could not reach ``url``: no TCP connection within :data:`~otel_agents.exporters._reach.BOUND`
    seconds, name lookup included (:func:`~otel_agents.exporters._reach.connect_problem`); ``None`` if one
    opened."""
    from urllib.parse import urlsplit

    from ..exporters._reach import BOUND, connect_problem

    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    problem = connect_problem(parts.hostname or "localhost", port, BOUND)
    return None if problem is None else f"{parts.hostname}:{port}: {problem} (spans sent there are dropped at exit)"


def _file_problem(path: str) -> str | None:
    """Why the trace file could not be opened for appending, or ``None``: tried as ``configure()`` would, leaving
    nothing behind (an existing file opened for appending and closed; otherwise a temporary file or directory made
    and removed where the file or its first missing directory would be). ``os.access`` was not enough: it says yes
    to root everywhere, ``/proc`` included."""
    import tempfile

    target = os.path.abspath(path)
    if os.path.isdir(target):
        return f"{path} is a directory"
    try:
        if os.path.exists(target):
            os.close(os.open(target, os.O_WRONLY | os.O_APPEND))
            return None
        parent = os.path.dirname(target)
        while not os.path.exists(parent):  # configure() creates the missing directories
            parent = os.path.dirname(parent)
        if parent == os.path.dirname(target):
            fd, probe = tempfile.mkstemp(dir=parent, prefix=".otel-agents-doctor-")
            os.close(fd)
            os.unlink(probe)
        else:
            os.rmdir(tempfile.mkdtemp(dir=parent, prefix=".otel-agents-doctor-"))
    except OSError as exc:
        return f"cannot append to {path}: {exc.strerror or exc}"
    return None


# Packages that trace what we trace without an `opentelemetry_instrumentor` entry point named as ours (those with
# one are found from the entry points): with two on, every call is traced twice.
PEER_INSTRUMENTATIONS = {
    "traceloop-sdk": "openai,anthropic",  # OpenLLMetry's SDK instruments both in Traceloop.init()
    "opentelemetry-instrumentation-llamaindex": "llama_index",  # OpenLLMetry's, registered as 'llama-index'
}


def peer_warnings() -> list[str]:
    """One note per installed peer instrumentation of a framework or client we instrument.

    A peer registered under one of our entry-point names (OpenInference's, OTel's GenAI instrumentations,
    OpenLLMetry's: ``langchain``, ``openai`` …) is loaded beside ours by ``opentelemetry-instrument``, and
    ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` turns both off there; the others are :data:`PEER_INSTRUMENTATIONS`."""
    from importlib import metadata

    from ..instrumentors._frameworks import FRAMEWORKS

    peers: dict[str, tuple[str, list[str], bool]] = {}  # distribution -> (version, our names, same entry-point name)
    for ep in metadata.entry_points(group="opentelemetry_instrumentor"):
        if ep.name in FRAMEWORKS and ep.dist is not None and not ep.value.startswith("otel_agents."):
            peers.setdefault(ep.dist.name, (ep.dist.version, [], True))[1].append(ep.name)
    for dist, names in PEER_INSTRUMENTATIONS.items():
        try:
            peers.setdefault(dist, (metadata.version(dist), names.split(","), False))
        except metadata.PackageNotFoundError:
            continue
    lines = []
    for dist, (version, names, same_name) in sorted(peers.items()):
        listed = ",".join(sorted(names))
        how = (f"opentelemetry-instrument loads both, and OTEL_PYTHON_DISABLED_INSTRUMENTATIONS={listed} turns off "
               f"both there: uninstall one; otel_agents.instrument() leaves ours out with frameworks= or that "
               f"variable" if same_name else
               f"turn ours off with OTEL_PYTHON_DISABLED_INSTRUMENTATIONS={listed}, or do not instrument {dist}")
        lines.append(f"  note: {dist} {version} also traces {listed}: keep one instrumentation of each on, or every "
                     f"call is traced twice ({how})")
    return lines
