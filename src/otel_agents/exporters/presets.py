"""Exporter presets: where :func:`otel_agents.configure` sends spans, by name.

* ``console`` — the OTel SDK's ``ConsoleSpanExporter`` (JSON on stdout); simple processor.
* ``file`` — OTLP/JSON lines (:class:`otel_agents.exporters.file.OTLPJsonFileExporter`); simple
  processor. The default when no exporter is named: an embedded run leaves a file to replay to a
  backend (``otel-agents export``) or fold into ECP envelopes (``otel-agents fold``). Needs the OTLP encoder package (extras
  ``otlp`` or ``ecp``).
* ``otlp`` — any OTLP receiver, over HTTP (``http/protobuf``, the default) or gRPC (``grpc``), as
  ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL`` or ``protocol=`` say; endpoint,
  headers, timeout, compression (and, for gRPC, ``OTEL_EXPORTER_OTLP_(TRACES_)INSECURE``) from the standard
  ``OTEL_EXPORTER_OTLP_*`` variables, read by the SDK's exporter for that protocol; batch processor.
* ``phoenix`` — Arize Phoenix's OTLP/HTTP collector, with its project; batch processor.
* ``langfuse`` — Langfuse's OTLP/HTTP endpoint with Basic auth; batch processor.
* ``mlflow`` — an MLflow tracking server's OTLP/HTTP endpoint, with its experiment; batch processor.

Each function below returns an :class:`ExporterPreset`; a bare name (``"phoenix"``) is the same as
calling the function with no arguments, so the environment supplies everything. Network presets
need the ``otlp`` extra (``pip install 'otel-agents[otlp]'``, which brings
``opentelemetry-exporter-otlp-proto-http``); the ``otlp`` preset over gRPC needs the ``otlp-grpc`` extra
(``opentelemetry-exporter-otlp-proto-grpc``) instead. The import happens when the exporter is built, and a
missing package raises :class:`ImportError` naming the package and the extra.

Environment variables read here (an argument always wins over its variable):

``OTEL_AGENTS_TRACES_FILE``
    The ``file`` preset's path (default ``otel-agents-traces.jsonl`` in the working directory;
    lines are appended).
``PHOENIX_COLLECTOR_ENDPOINT``
    Phoenix's base URL (default ``http://127.0.0.1:6006``); ``/v1/traces`` is appended unless the
    URL already ends with it. The same variable Phoenix's own ``phoenix.otel`` reads.
``PHOENIX_PROJECT_NAME``
    The Phoenix project, sent as the resource attribute ``openinference.project.name`` (Phoenix
    files spans without it under ``default``).
``PHOENIX_API_KEY``
    Sent as ``authorization: Bearer <key>`` (Phoenix Cloud, or a self-hosted Phoenix with auth on).
``LANGFUSE_HOST``
    Langfuse's base URL (default ``https://cloud.langfuse.com``, the EU cloud); spans go to
    ``{host}/api/public/otel/v1/traces``.
``LANGFUSE_PUBLIC_KEY`` / ``LANGFUSE_SECRET_KEY``
    The project's key pair, sent as ``Authorization: Basic base64(public:secret)`` (Langfuse's
    documented OTel authentication). Missing keys raise :class:`ValueError` naming the variable.
``MLFLOW_TRACKING_URI``
    The MLflow tracking server's URL (default ``http://127.0.0.1:5000``, ``mlflow server``'s own
    default); spans go to ``{uri}/v1/traces``. The same variable MLflow's client reads; a
    non-HTTP tracking URI (``file:``, ``sqlite:``, ``databricks``) raises :class:`ValueError`.
``MLFLOW_EXPERIMENT_ID``
    The experiment the traces are logged to, sent as the ``x-mlflow-experiment-id`` header MLflow
    requires (default ``0``, MLflow's ``Default`` experiment).
``MLFLOW_TRACKING_TOKEN``
    Sent as ``authorization: Bearer <token>`` (a tracking server behind token auth).
``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL``
    The ``otlp`` preset's protocol (the traces one wins, as the spec says): ``http/protobuf`` (default) or
    ``grpc``. Any other value (``http/json``, which the OpenTelemetry Python SDK has no exporter for) is ignored,
    as if unset, with a WARNING naming the variable and the allowed values (the specification's rule for an
    enum value); a ``protocol=`` argument other than those two raises :class:`ValueError`. Read in any case
    (``HTTP/PROTOBUF``), as the specification asks of enum values.
``OTEL_EXPORTER_OTLP_TRACES_COMPRESSION`` / ``OTEL_EXPORTER_OTLP_COMPRESSION``
    The compression of the ``otlp``, phoenix, langfuse and mlflow presets (the traces one wins): ``gzip``,
    ``none`` (default) or, over HTTP only, ``deflate``, in any case. Any other value is ignored, as if unset, with
    a WARNING naming the variable and the allowed values (:func:`checked_compression`); a ``compression=``
    argument of the ``otlp`` preset other than those raises :class:`ValueError`.
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``, ...
    Read by the OTel exporter itself for the ``otlp`` preset (the spec's defaults: the generic endpoint gets
    ``/v1/traces`` over HTTP, nothing over gRPC; unset, ``http://localhost:4318/v1/traces`` or
    ``http://localhost:4317``). Note that the HTTP exporter also adds
    ``OTEL_EXPORTER_OTLP_(TRACES_)HEADERS`` to the phoenix and langfuse requests (an explicit
    ``authorization`` of the preset replaces one from the environment).

Every URL, from an argument or a variable, is checked when the preset is made (so at
``configure()``): one without an ``http://``/``https://`` scheme or a host (``127.0.0.1:6006``)
raises :class:`ValueError` naming the argument or variable, instead of an export error later; so does a
``timeout=`` that is not a positive number of seconds, when the preset is built (``configure()``). An
``OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT`` that is no number (``abc``), ``0`` or less, ``nan`` or ``inf`` (every export
would fail with it) is ignored with a WARNING naming it, over HTTP and gRPC alike, as the OpenTelemetry
specification asks of a numeric environment variable that cannot be parsed or is out of range.

Secrets: a preset's ``repr`` (and :meth:`ExporterPreset.describe`) shows header names, never their
values, and no key beyond its first characters; nothing here logs a header or a key.
"""

from __future__ import annotations

import base64
import json
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TextIO
from urllib.parse import urlsplit

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter

from ._appender import file_setting

ENV_TRACES_FILE = "OTEL_AGENTS_TRACES_FILE"
ENV_ECP_FILE = "OTEL_AGENTS_ECP_FILE"  # ECPFileExporter's, here so that doctor reads it without the fold
ENV_PHOENIX_ENDPOINT = "PHOENIX_COLLECTOR_ENDPOINT"
ENV_PHOENIX_PROJECT = "PHOENIX_PROJECT_NAME"
ENV_PHOENIX_API_KEY = "PHOENIX_API_KEY"
ENV_LANGFUSE_HOST = "LANGFUSE_HOST"
ENV_LANGFUSE_PUBLIC_KEY = "LANGFUSE_PUBLIC_KEY"
ENV_LANGFUSE_SECRET_KEY = "LANGFUSE_SECRET_KEY"
ENV_MLFLOW_TRACKING_URI = "MLFLOW_TRACKING_URI"
ENV_MLFLOW_EXPERIMENT_ID = "MLFLOW_EXPERIMENT_ID"
ENV_MLFLOW_TRACKING_TOKEN = "MLFLOW_TRACKING_TOKEN"
ENV_OTLP_TRACES_ENDPOINT = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
ENV_OTLP_ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
ENV_OTLP_TRACES_PROTOCOL = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
ENV_OTLP_PROTOCOL = "OTEL_EXPORTER_OTLP_PROTOCOL"

DEFAULT_TRACES_FILE = "otel-agents-traces.jsonl"
DEFAULT_ECP_FILE = "otel-agents-envelopes.jsonl"
PHOENIX_DEFAULT_BASE = "http://127.0.0.1:6006"
LANGFUSE_DEFAULT_HOST = "https://cloud.langfuse.com"
LANGFUSE_OTEL_PATH = "/api/public/otel/v1/traces"
MLFLOW_DEFAULT_URI = "http://127.0.0.1:5000"
MLFLOW_DEFAULT_EXPERIMENT = "0"
MLFLOW_EXPERIMENT_HEADER = "x-mlflow-experiment-id"  # MLflow's OTLP endpoint requires it
OTLP_TRACES_PATH = "/v1/traces"
OTLP_PROTOCOLS = ("grpc", "http/protobuf")  # what the OTel Python SDK has exporters for (no http/json)
DEFAULT_OTLP_PROTOCOL = "http/protobuf"
OTLP_DEFAULT_ENDPOINTS = {"http/protobuf": "http://localhost:4318" + OTLP_TRACES_PATH, "grpc": "http://localhost:4317"}
# per protocol: the SDK exporter's module, its distribution and our extra that brings it
OTLP_EXPORTER_PACKAGES = {
    "http/protobuf": ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "opentelemetry-exporter-otlp-proto-http",
                      "otlp"),
    "grpc": ("opentelemetry.exporter.otlp.proto.grpc.trace_exporter", "opentelemetry-exporter-otlp-proto-grpc",
             "otlp-grpc"),
}
PROJECT_RESOURCE_ATTRIBUTE = "openinference.project.name"  # how Phoenix picks the project


@dataclass(frozen=True, repr=False)
class ExporterPreset:
    """A named recipe for one span exporter.

    Attributes:
        name: ``console``, ``file``, ``otlp``, ``phoenix``, ``langfuse``, ``mlflow`` or ``custom``.
        build: makes the ``SpanExporter`` (called once, by ``configure``).
        batch: whether the exporter goes behind a ``BatchSpanProcessor`` (network exporters) rather
            than a ``SimpleSpanProcessor``.
        resource: resource attributes the destination reads (Phoenix's project).
        details: what :meth:`describe` shows: endpoint, path, header *names* — never secrets.
    """

    name: str
    build: Callable[[], SpanExporter] = field(compare=False)
    batch: bool = False
    resource: Mapping[str, str] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """``"phoenix(endpoint=..., project=...)"``: safe to log."""
        inner = ", ".join(f"{k}={v!r}" for k, v in self.details.items())
        return f"{self.name}({inner})"

    def __repr__(self) -> str:
        return f"ExporterPreset<{self.describe()}>"


def _mask(key: str, keep: int = 10) -> str:
    """The first characters of a key, enough to tell two keys apart in a log."""
    return key[:keep] + "…" if len(key) > keep else "***"


def check_url(value: str, source: str) -> str:
    """``value`` without a trailing ``/``, checked to be an absolute http(s) URL.

    Raises:
        ValueError: no ``http``/``https`` scheme, no host, or a malformed host or port (an unclosed ``[``,
            a port that is no number or over 65535); the message names ``source`` (the
            argument or environment variable the value came from) and shows the value, its credentials
            (``user:password@``) and secret query parameters redacted.
    """
    from .._spans.redaction import redact_url
    try:
        parsed = urlsplit(value.strip())
        host, _ = parsed.hostname, parsed.port  # a malformed port ("h:99999", "h:x") raises here
    except ValueError as exc:  # "Invalid IPv6 URL" (an unclosed "["), a port out of range: named, not bare
        raise ValueError(f"{source} must be an http:// or https:// URL with a host, got {redact_url(value)!r} ({exc})"
                         ) from None
    if parsed.scheme not in ("http", "https") or not host:
        example = _http_example(value.strip())
        raise ValueError(f"{source} must be an http:// or https:// URL with a host, got {redact_url(value)!r}"
                         + (f" (e.g. {redact_url(example)})" if example else ""))
    return value.strip().rstrip("/")


def split_userinfo(url: str) -> tuple[str, str | None]:
    """``url`` (checked by :func:`check_url`) without its user info, and that user info as an HTTP Basic
    ``Authorization`` value (``Basic base64(user:password)``, RFC 7617, in UTF-8; percent-escapes decoded, as
    RFC 3986 writes them), or ``None`` when it has none: ``http://user:pw@host:6006`` → ``("http://host:6006",
    "Basic dXNlcjpwdw==")``. The requests-based OTLP exporters do the same with a URL's user info; urllib does not
    (it took ``user:pw@host`` for the host name, and would have sent it in the ``Host`` header). Never raises: the
    value is base64, sendable whatever the user info holds."""
    from urllib.parse import unquote

    parsed = urlsplit(url)
    if "@" not in parsed.netloc:
        return url, None
    userinfo, _, hostport = parsed.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    credential = f"{unquote(user)}:{unquote(password)}".encode()
    return parsed._replace(netloc=hostport).geturl(), f"Basic {base64.b64encode(credential).decode('ascii')}"


_TCHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")  # RFC 9110


def check_header(value: str, source: str, name: str | None = None) -> str:
    """``value``, checked to be sendable as an HTTP header value (RFC 9110 section 5.5: no control character,
    no whitespace at either end, Latin-1), and ``name``, when given, as a header name (a token).

    A key read from a file or a Kubernetes secret often ends with a newline: the HTTP clients then refuse
    every request, and their error quotes the whole value (``'Bearer <key>\\n'``) into the log.

    Raises:
        ValueError: naming ``source`` (the argument, option or variable) and the character's position, never
            showing the value (it is usually a secret).
    """
    if name is not None and (not name or not set(name) <= _TCHARS):
        bad = next((i for i, ch in enumerate(name) if ch not in _TCHARS), 0)
        raise ValueError(f"{source}: header name {name[:bad]!r}… is not a token (RFC 9110: letters, digits "
                         f"and !#$%&'*+-.^_`|~), at character {bad + 1}")
    for i, ch in enumerate(value):
        if (ord(ch) < 0x20 and ch != "\t") or ch == "\x7f":
            hint = "; a key file's trailing newline?" if i == len(value) - 1 and ch == "\n" else ""
            raise ValueError(f"{source} cannot be sent as an HTTP header: it holds a line break or another control "
                             f"character (character {i + 1} of {len(value)}{hint})")
        if ord(ch) > 0xFF:
            raise ValueError(f"{source} cannot be sent as an HTTP header: character {i + 1} of {len(value)} is "
                             "outside Latin-1")
    if value != value.strip(" \t"):
        raise ValueError(f"{source} cannot be sent as an HTTP header: it begins or ends with whitespace")
    return value


def _http_example(value: str) -> str | None:
    """The http URL ``value`` probably meant: ``host[:port]`` or another scheme's ``scheme://host…`` with
    ``http://``; ``None`` where no host is there to keep (``sqlite:///mlflow.db``, ``file:/tmp``, ``http://``)."""
    example = "http://" + (value.split("://", 1)[1] if "://" in value else value or "127.0.0.1:4318")
    try:
        parsed = urlsplit(example)
        parsed.port  # noqa: B018 - raises ValueError for a port that is not a number (sqlite:x.db)
    except ValueError:
        return None
    return example if parsed.hostname and not parsed.netloc.endswith(":") else None


def _setting(argument: str | None, argument_name: str, variable: str, default: str) -> tuple[str, str]:
    """``(value, where it came from)``: the argument, else the environment variable, else the default."""
    if argument:
        return argument, f"the {argument_name}= argument"
    if os.environ.get(variable):
        return os.environ[variable], variable
    return default, f"the default {argument_name}"


_TIMEOUT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")  # the exporters' order


def _checked_timeout(timeout: object, variables: tuple[str, ...] = _TIMEOUT_VARIABLES) -> float | None:
    """The timeout to give the OpenTelemetry exporter: ``timeout=`` when it is a positive finite number of seconds
    (else :class:`ValueError` naming it: the exporters take any number and fail every export with ``0`` or ``-1``,
    "the timeout cannot be set to a value less than or equal to 0", and a wrong type is a TypeError in their
    worker thread, the spans lost); else ``None`` (the exporter reads ``variables``, its timeout variables, the
    signal's first), unless one of them set is no number of seconds (``abc``) or out of range (``0``, ``-1``,
    ``nan``, ``inf``): then, as the OpenTelemetry specification asks of a numeric variable
    (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/#numeric-value), a WARNING
    naming it, and what follows it (the next variable, else 10 s), given explicitly so that the exporter does
    not read it (the gRPC exporter raised for ``abc`` at construction; the HTTP one warned and took 10 s)."""
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise ValueError(f"the timeout= argument must be a positive number of seconds, got {timeout!r}")
        return timeout
    from .._spans.settings import warn_bad_variable

    ignored = None
    for variable in variables:
        raw = os.environ.get(variable)
        if not raw:  # empty is unset (the spec; the HTTP exporter reads it so)
            continue
        try:
            seconds = float(raw)
        except ValueError:  # no number (abc): ignored as one out of range is
            seconds = math.nan
        if 0 < seconds < math.inf:
            return None if ignored is None else seconds
        ignored = variable
        warn_bad_variable(variable, raw, "it must be a positive number of seconds (every export would fail with "
                          "it); ignored, as if unset")
    return None if ignored is None else _DEFAULT_TIMEOUT


_DEFAULT_TIMEOUT = 10.0  # seconds: the OTLP exporters' default


def _missing_exporter(protocol: str, why: str) -> ImportError:
    _, distribution, extra = OTLP_EXPORTER_PACKAGES[protocol]
    return ImportError(f"{why} needs the OTLP exporter for {protocol} ({distribution}): "
                       f"pip install 'otel-agents[{extra}]'")


_COMPRESSION_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION")  # the spec's order
# what the SDK's exporters take, per protocol (its gRPC exporter maps only gzip, and refused even ``none``)
OTLP_COMPRESSIONS = {"http/protobuf": ("gzip", "deflate", "none"), "grpc": ("gzip", "none")}


def checked_compression(compression: object, protocol: str,
                        variables: tuple[str, ...] = _COMPRESSION_VARIABLES) -> str:
    """The compression to give the OpenTelemetry ``protocol`` exporter (``gzip``, ``deflate``, ``none``; always
    given, so that it does not read the variables itself): ``compression=`` when it is one the exporter takes (any
    case), else the first of ``variables`` (the signal's, then the generic one) set to one (any case: the
    specification asks enum values to be case-insensitive, and the SDK's exporters lower-case them), else ``none``
    (the default). A variable set to another value (``brotli``; ``deflate`` over gRPC) is ignored, as if unset, with
    a WARNING naming it and what it takes (:func:`~otel_agents._spans.settings.warn_bad_variable`), as the
    specification asks of an enum value it does not recognise
    (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/#enum-value): the SDK's gRPC
    exporter raised at construction (``configure()`` failed), its HTTP one warned without naming the variable and
    sent uncompressed even when the generic variable was valid.

    Raises:
        ValueError: a ``compression=`` argument the exporter does not take, naming it and the allowed values.
    """
    allowed = OTLP_COMPRESSIONS[protocol]
    said = f"allowed over {protocol}: {', '.join(allowed)}"
    if compression is not None:
        if not isinstance(compression, str) or compression.strip().lower() not in allowed:
            raise ValueError(f"the compression= argument {compression!r} is not valid; {said}")
        return compression.strip().lower()
    from .._spans.settings import warn_bad_variable

    for variable in variables:
        raw = os.environ.get(variable, "")
        if raw.strip().lower() in allowed:
            return raw.strip().lower()
        if raw.strip():
            warn_bad_variable(variable, raw, f"{said}; ignored, as if unset")
    return "none"


def _otlp_http_exporter(compression: str | None = None, **kwargs: Any) -> SpanExporter:
    """The SDK's OTLP/HTTP span exporter; without a ``session=`` of the caller's (who then reads the answers
    itself), one whose batches a receiver refuses as too large (413) are sent again in halves
    (:class:`~otel_agents.exporters._accepted.HalvingExporter`)."""
    kwargs["timeout"] = _checked_timeout(kwargs.get("timeout"))
    chosen = checked_compression(compression, "http/protobuf")
    try:
        from opentelemetry.exporter.otlp.proto.http import Compression
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise _missing_exporter("http/protobuf", "this exporter preset") from exc
    from ._accepted import Answers, HalvingExporter

    answers = Answers("spans") if kwargs.get("session") is None else None
    if answers is not None and answers.session is not None:
        kwargs["session"] = answers.session
    exporter = OTLPSpanExporter(compression=Compression(chosen), **{k: v for k, v in kwargs.items() if v is not None})
    return HalvingExporter(exporter, answers) if answers is not None and answers.session is not None else exporter


def _otlp_grpc_exporter(endpoint: str | None, headers: Mapping[str, str], timeout: float | None,
                        why: str, compression: str | None = None) -> SpanExporter:
    """The SDK's OTLP/gRPC span exporter; it reads endpoint, headers, timeout and insecure from the
    ``OTEL_EXPORTER_OTLP_(TRACES_)*`` variables itself (the compression ones are read by
    :func:`checked_compression`). ``headers`` are added to the variables' (as the HTTP exporter does; the gRPC one
    would drop the variables' headers for them)."""
    timeout = _checked_timeout(timeout)
    chosen = checked_compression(compression, "grpc")
    try:
        from grpc import Compression
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise _missing_exporter("grpc", why) from exc
    merged = None
    if headers:
        from opentelemetry.util.re import parse_env_headers

        merged = dict(parse_env_headers(os.environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
                                        or os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", ""), liberal=True))
        merged.update({key.lower(): value for key, value in headers.items()})  # gRPC metadata keys are lower case
    return OTLPSpanExporter(endpoint=endpoint, headers=merged, timeout=timeout,
                            compression=Compression.Gzip if chosen == "gzip" else Compression.NoCompression)


def otlp_protocol(protocol: str | None = None,
                  variables: tuple[str, ...] = (ENV_OTLP_TRACES_PROTOCOL, ENV_OTLP_PROTOCOL)) -> tuple[str, str]:
    """``(protocol, where it came from)`` for OTLP traces: ``protocol`` when given, else
    ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``, else ``OTEL_EXPORTER_OTLP_PROTOCOL`` (the spec's precedence; blank
    counts as unset), else ``http/protobuf``. ``where`` is ``protocol=``, the variable's name or ``default``.
    ``variables``: another signal's (``OTEL_EXPORTER_OTLP_LOGS_PROTOCOL``, then the generic one).

    Values are read in any case (``HTTP/PROTOBUF``, ``gRPC``), as the OpenTelemetry specification asks of enum
    values (the SDK's own ``opentelemetry-instrument`` set-up matches them exactly, and fails on ``GRPC``).
    A variable whose value is neither ``grpc`` nor ``http/protobuf`` (surrounding spaces ignored) is logged once as
    a WARNING naming it and the allowed values, and ignored, as if unset: the OpenTelemetry specification's rule
    for an enum value it does not recognise
    (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/#enum-value), as for our
    numeric variables (:func:`~otel_agents._spans.settings.warn_bad_variable`; ``otel-agents doctor`` lists it).

    Raises:
        ValueError: a ``protocol`` argument other than those two, naming it, the value and the allowed ones.
    """
    allowed = f"allowed: {', '.join(OTLP_PROTOCOLS)} (the OpenTelemetry Python SDK has no http/json exporter)"
    if protocol is not None:
        if not isinstance(protocol, str) or protocol.strip().lower() not in OTLP_PROTOCOLS:
            raise ValueError(f"the protocol= argument {protocol!r} is not an OTLP protocol otel-agents can send spans "
                             f"over; {allowed}")
        return protocol.strip().lower(), "protocol="
    from .._spans.settings import warn_bad_variable

    for variable in variables:
        value = os.environ.get(variable, "")
        if value.strip().lower() in OTLP_PROTOCOLS:
            return value.strip().lower(), variable
        if value.strip():
            warn_bad_variable(variable, value, f"{allowed}; ignored, as if unset")
    return DEFAULT_OTLP_PROTOCOL, "default"


def http_protobuf_only(who: str, variables: tuple[str, ...] = (ENV_OTLP_TRACES_PROTOCOL, ENV_OTLP_PROTOCOL)) -> None:
    """For a sender of OTLP over HTTP only (``who``, ``ecp serve``): the protocol ``variables`` say
    (:func:`otlp_protocol`: an unknown one is warned about and ignored).

    Raises:
        ValueError: they ask for ``grpc``, naming the variable (its endpoint is then likely a gRPC port).
    """
    protocol, source = otlp_protocol(None, variables)
    if protocol != DEFAULT_OTLP_PROTOCOL:
        raise ValueError(f"{source}={os.environ[source]!r}: {who} sends OTLP over HTTP (http/protobuf) only; set it "
                         "to http/protobuf, with an HTTP endpoint (port 4318)")


def check_endpoint_variables(variables: tuple[str, ...] = (ENV_OTLP_TRACES_ENDPOINT, ENV_OTLP_ENDPOINT)) -> None:
    """The first of the endpoint ``variables`` set (the signal's, then the generic one), which the OpenTelemetry
    exporter reads itself, checked with :func:`check_url` now rather than at the first export.

    Raises:
        ValueError: it is no http(s) URL with a host, naming the variable.
    """
    for variable in variables:
        if os.environ.get(variable):
            check_url(os.environ[variable], variable)
            return


def otlp_traces_endpoint(protocol: str) -> str:
    """Where the SDK's ``protocol`` exporter sends spans when it is given no endpoint, as the spec says:
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as it is; else ``OTEL_EXPORTER_OTLP_ENDPOINT``, with ``/v1/traces``
    appended over HTTP (gRPC takes no path); else ``http://localhost:4318/v1/traces`` or ``http://localhost:4317``."""
    if os.environ.get(ENV_OTLP_TRACES_ENDPOINT):
        return os.environ[ENV_OTLP_TRACES_ENDPOINT]
    base = os.environ.get(ENV_OTLP_ENDPOINT)
    if not base:
        return OTLP_DEFAULT_ENDPOINTS[protocol]
    return base if protocol == "grpc" else base.rstrip("/") + OTLP_TRACES_PATH


def console(out: TextIO | None = None) -> ExporterPreset:
    """Spans as JSON on ``out`` (default ``sys.stdout``), one ``ConsoleSpanExporter`` object per span, strict JSON:
    a non-finite double (an attribute ``nan``, ``inf``) is written as the ``file`` preset writes it
    (:func:`~.file.double_text`: ``"NaN"``, ``"Infinity"``), where the SDK's own format writes ``NaN``."""
    return ExporterPreset("console", lambda: ConsoleSpanExporter(out=out or sys.stdout, formatter=console_json))


def console_json(span: ReadableSpan) -> str:
    """The ``console`` preset's text of one span: the SDK's ``span.to_json()`` and a newline, its non-finite
    numbers (the only non-strict JSON it writes) as :func:`~.file.double_text` writes them."""
    text = span.to_json()
    if "NaN" in text or "Infinity" in text:  # else nothing to change: no second parse
        from .file import double_text

        text = json.dumps(json.loads(text, parse_constant=lambda name: double_text(float(name))), indent=4)
    return text + os.linesep


def file(path: str | os.PathLike[str] | None = None) -> ExporterPreset:
    """OTLP/JSON lines, appended by :class:`otel_agents.exporters.file.OTLPJsonFileExporter`.

    Args:
        path: the file (its directory is created); default ``OTEL_AGENTS_TRACES_FILE``, else
            ``otel-agents-traces.jsonl`` in the working directory.

    Building it (``configure()``) raises the ``OSError`` of a file that cannot be opened for
    appending (a directory, no permission), its message naming the path and where it came from
    (the argument or ``OTEL_AGENTS_TRACES_FILE``).
    """
    target, _ = file_setting(path, ENV_TRACES_FILE, DEFAULT_TRACES_FILE)

    def build() -> SpanExporter:
        from .file import OTLPJsonFileExporter

        return OTLPJsonFileExporter(path)  # its OSError names the path and where it came from, as ``target``

    return ExporterPreset("file", build, details={"path": target})


def otlp(endpoint: str | None = None, headers: Mapping[str, str] | None = None, *,
         timeout: float | None = None, protocol: str | None = None, compression: str | None = None,
         session: Any = None) -> ExporterPreset:
    """Any OTLP receiver: a collector, a vendor, a local Jaeger..., over HTTP (protobuf) or gRPC.

    Args:
        endpoint: the traces endpoint: over HTTP the full URL (``http://host:4318/v1/traces``), over gRPC
            ``http://host:4317`` (``https://`` for TLS); ``None`` = the exporter's own resolution
            (:func:`otlp_traces_endpoint`). Either way it must be an http(s) URL with a host.
        headers: extra request headers (gRPC metadata), added to ``OTEL_EXPORTER_OTLP_(TRACES_)HEADERS``.
        timeout: seconds per export request (default ``OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT`` or 10).
        protocol: ``"http/protobuf"`` or ``"grpc"``; ``None`` = ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL``, else
            ``OTEL_EXPORTER_OTLP_PROTOCOL``, else ``http/protobuf`` (:func:`otlp_protocol`). ``endpoint`` does
            not choose it.
        compression: ``"gzip"``, ``"none"`` or, over HTTP, ``"deflate"``; ``None`` =
            ``OTEL_EXPORTER_OTLP_TRACES_COMPRESSION``, else ``OTEL_EXPORTER_OTLP_COMPRESSION``, else ``none``
            (:func:`checked_compression`: a variable set to another value is ignored with a WARNING).
        session: over HTTP, the ``requests.Session`` the exporter sends with (its ``session=`` argument; ``otel-agents
            export`` watches the answers through one); ``None`` = the exporter's own.

    Raises:
        ValueError: a ``protocol`` other than those two, a ``compression`` the protocol's exporter does not take,
            an endpoint (argument or variable) that is not an http(s) URL, or a header that cannot be sent
            (:func:`check_header`), naming the argument or variable. Building it (``configure()``) raises
            :class:`ImportError` naming the package and the extra when the protocol's exporter is not installed.
    """
    chosen, source = otlp_protocol(protocol)
    if compression is not None:
        compression = checked_compression(compression, chosen)
    if endpoint:
        endpoint = check_url(endpoint, "the endpoint= argument")
    else:
        check_endpoint_variables()
    hdrs = dict(headers or {})
    for key, value in hdrs.items():
        check_header(value, f"the headers= argument's {key!r}", key)
    if chosen == "grpc":
        why = f"the otlp preset over gRPC ({'protocol=' if source == 'protocol=' else source + '='}grpc)"
        build = lambda: _otlp_grpc_exporter(endpoint, hdrs, timeout, why, compression)  # noqa: E731
    else:
        build = lambda: _otlp_http_exporter(compression, endpoint=endpoint, headers=hdrs or None,  # noqa: E731
                                            timeout=timeout, session=session)
    return ExporterPreset(
        "otlp", build, batch=True,
        details={"protocol": chosen, "endpoint": endpoint or "from OTEL_EXPORTER_OTLP_* environment",
                 "headers": sorted(hdrs)},
    )


def phoenix(endpoint: str | None = None, project: str | None = None, *, api_key: str | None = None,
            timeout: float | None = None) -> ExporterPreset:
    """Arize Phoenix over OTLP/HTTP.

    Args:
        endpoint: Phoenix's base URL or its ``/v1/traces`` URL; default ``PHOENIX_COLLECTOR_ENDPOINT``,
            else ``http://127.0.0.1:6006``.
        project: the Phoenix project (default ``PHOENIX_PROJECT_NAME``; unset = Phoenix's ``default``).
        api_key: default ``PHOENIX_API_KEY``; sent as ``authorization: Bearer <key>``.
        timeout: seconds per export request.

    Raises:
        ValueError: the endpoint is not an http(s) URL, or the key cannot be sent as a header
            (:func:`check_header`: a trailing newline), naming the argument or variable.
    """
    url = check_url(*_setting(endpoint, "endpoint", ENV_PHOENIX_ENDPOINT, PHOENIX_DEFAULT_BASE))
    if not url.endswith(OTLP_TRACES_PATH):
        url += OTLP_TRACES_PATH
    project = project or os.environ.get(ENV_PHOENIX_PROJECT) or None
    key = api_key or os.environ.get(ENV_PHOENIX_API_KEY) or None
    if key:
        check_header(key, "the api_key= argument" if api_key else ENV_PHOENIX_API_KEY)
    headers = {"authorization": f"Bearer {key}"} if key else None
    details: dict[str, Any] = {"endpoint": url, "project": project or "default"}
    if key:
        details["api_key"] = "***"
    return ExporterPreset(
        "phoenix", lambda: _otlp_http_exporter(endpoint=url, headers=headers, timeout=timeout), batch=True,
        resource={PROJECT_RESOURCE_ATTRIBUTE: project} if project else {}, details=details,
    )


def langfuse(host: str | None = None, public_key: str | None = None, secret_key: str | None = None, *,
             timeout: float | None = None) -> ExporterPreset:
    """Langfuse's OpenTelemetry endpoint (OTLP/HTTP protobuf; Langfuse takes no gRPC).

    Args:
        host: Langfuse's base URL; default ``LANGFUSE_HOST``, else ``https://cloud.langfuse.com``.
        public_key, secret_key: default ``LANGFUSE_PUBLIC_KEY`` / ``LANGFUSE_SECRET_KEY``.
        timeout: seconds per export request.

    Raises:
        ValueError: a key is missing or cannot be sent (:func:`check_header`: a trailing newline; the
            message names the variable, never a value), or the host is not an http(s) URL.
    """
    base = check_url(*_setting(host, "host", ENV_LANGFUSE_HOST, LANGFUSE_DEFAULT_HOST))
    public = public_key or os.environ.get(ENV_LANGFUSE_PUBLIC_KEY)
    secret = secret_key or os.environ.get(ENV_LANGFUSE_SECRET_KEY)
    missing = [name for name, value in ((ENV_LANGFUSE_PUBLIC_KEY, public), (ENV_LANGFUSE_SECRET_KEY, secret))
               if not value]
    if missing:
        raise ValueError(f"the langfuse preset needs {' and '.join(missing)} "
                         "(or public_key=/secret_key= arguments)")
    check_langfuse_keys(public_key, secret_key, str(public), str(secret))
    token = base64.b64encode(f"{public}:{secret}".encode()).decode("ascii")
    headers = {"authorization": f"Basic {token}"}
    url = base + LANGFUSE_OTEL_PATH
    return ExporterPreset(
        "langfuse", lambda: _otlp_http_exporter(endpoint=url, headers=headers, timeout=timeout), batch=True,
        details={"endpoint": url, "public_key": _mask(str(public)), "secret_key": "***"},
    )


def check_langfuse_keys(public_argument: str | None, secret_argument: str | None, public: str, secret: str) -> None:
    """The Langfuse key pair checked with :func:`check_header`: base64 would carry a key's trailing newline
    into a Basic credential Langfuse refuses (401) with no word of why. Raises ``ValueError`` naming the
    argument or variable."""
    check_header(public, "the public_key= argument" if public_argument else ENV_LANGFUSE_PUBLIC_KEY)
    check_header(secret, "the secret_key= argument" if secret_argument else ENV_LANGFUSE_SECRET_KEY)


def mlflow(url: str | None = None, experiment_id: str | int | None = None, *, token: str | None = None,
           timeout: float | None = None) -> ExporterPreset:
    """An MLflow tracking server, which takes OTLP/HTTP at ``/v1/traces`` (MLflow 3; tested with 3.17).

    Args:
        url: the tracking server's URL (``http://127.0.0.1:5000``) or its ``/v1/traces`` URL;
            default ``MLFLOW_TRACKING_URI``, else ``http://127.0.0.1:5000``.
        experiment_id: the experiment traces are logged to, sent as the ``x-mlflow-experiment-id``
            header; default ``MLFLOW_EXPERIMENT_ID``, else ``0`` (MLflow's ``Default`` experiment).
            An id, not a name: ``mlflow experiments create`` (or the UI) gives it.
        token: default ``MLFLOW_TRACKING_TOKEN``; sent as ``authorization: Bearer <token>``.
        timeout: seconds per export request.

    Raises:
        ValueError: the URL is not an http(s) URL (a ``file:`` or ``sqlite:`` tracking URI has no
            server to send spans to), or the token or experiment id cannot be sent as a header
            (:func:`check_header`), naming the argument or variable.

    MLflow shows each span's inputs and outputs from ``input.value``/``output.value`` and each
    trace's request and response previews from its root span's.
    """
    base = check_url(*_setting(url, "url", ENV_MLFLOW_TRACKING_URI, MLFLOW_DEFAULT_URI))
    endpoint = base if base.endswith(OTLP_TRACES_PATH) else base + OTLP_TRACES_PATH
    experiment = str(experiment_id if experiment_id is not None else
                     os.environ.get(ENV_MLFLOW_EXPERIMENT_ID) or MLFLOW_DEFAULT_EXPERIMENT)
    check_header(experiment, "the experiment_id= argument" if experiment_id is not None else ENV_MLFLOW_EXPERIMENT_ID)
    headers = {MLFLOW_EXPERIMENT_HEADER: experiment}
    key = token or os.environ.get(ENV_MLFLOW_TRACKING_TOKEN) or None
    if key:
        headers["authorization"] = f"Bearer {check_header(key, 'the token= argument' if token else ENV_MLFLOW_TRACKING_TOKEN)}"
    details: dict[str, Any] = {"endpoint": endpoint, "experiment_id": experiment}
    if key:
        details["token"] = "***"
    return ExporterPreset(
        "mlflow", lambda: _otlp_http_exporter(endpoint=endpoint, headers=headers, timeout=timeout), batch=True,
        details=details,
    )


PRESETS: dict[str, Callable[[], ExporterPreset]] = {
    "console": console, "file": file, "otlp": otlp, "phoenix": phoenix, "langfuse": langfuse, "mlflow": mlflow,
}


def resolve(spec: str | ExporterPreset | SpanExporter) -> ExporterPreset:
    """An :class:`ExporterPreset` for a preset name, a preset, or any ``SpanExporter`` instance
    (wrapped as ``custom``, behind a simple processor).

    Raises:
        ValueError: an unknown name (the message lists the valid ones).
        TypeError: anything else.
    """
    if isinstance(spec, ExporterPreset):
        return spec
    if isinstance(spec, SpanExporter):
        return ExporterPreset("custom", lambda: spec, details={"exporter": type(spec).__name__})
    if isinstance(spec, str):
        name = spec.strip().lower()
        if name not in PRESETS:
            raise ValueError(f"unknown exporter preset {spec!r}; valid: {sorted(PRESETS)}")
        return PRESETS[name]()
    raise TypeError(f"an exporter must be a preset name, an ExporterPreset or a SpanExporter, not {type(spec)!r}")
