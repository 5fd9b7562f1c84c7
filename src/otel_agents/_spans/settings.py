"""The span layer's one typed settings object, read from the environment.

Environment variables (read when each span starts, so a test or a process can
change them at run time; a span keeps the values it started with; each read is one dictionary
look-up, see :func:`getenv`):

``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
    The content switch (OTel GenAI convention, opentelemetry-util-genai's values), case-insensitive.
    ``NO_CONTENT``/``false`` (also ``0``, ``off``, ``no``, ``none``) turn content capture off, and so
    does ``EVENT_ONLY`` ("content in events only": we write content only in span attributes, so
    none); ``SPAN_ONLY``, ``SPAN_AND_EVENT``, ``true`` (also ``1``, ``on``, ``yes``) turn it on.
    Unset or blank: **on** (our default, because evaluation needs the content; OTel's own helpers
    default to off). Any other value turns it **off** (fails closed, as opentelemetry-util-genai
    does), with one WARNING naming the value.
``OTEL_AGENTS_MAX_CONTENT_LENGTH``
    Budget per content attribute, in characters: a whole number, at least 64 (default 16384).
``OTEL_AGENTS_MAX_MEDIA_BYTES``
    Largest inline media (an image, audio or document sent as bytes) recorded in a
    message part, in bytes: a whole number, at least 0 (default 4096); larger media keep only their
    MIME type, modality, size and SHA-256.
``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``
    Seconds a wrapped stream may sit unconsumed before its span is ended as
    abandoned: a finite number, at least 0.01 (default 300).

    For these three numbers, one rule, the OpenTelemetry specification's for a numeric variable
    (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/#numeric-value): a
    value that is not one (``abc``, ``inf``, ``1.5`` characters) or is outside its range (``-5``, ``0``
    seconds) is logged once as a WARNING naming the variable and its range, and ignored: the default is
    used, as when it is unset (never raised to the minimum). ``otel-agents doctor`` lists it as a problem.
    The same values given to :class:`Settings` raise :class:`ValueError` naming the argument.
``OTEL_AGENTS_STATUS_OK``
    ``true`` (also ``1``, ``yes``, ``on``) marks each span that ends without an error (and was not
    cancelled, interrupted or abandoned) with status OK; ``false`` or unset leave it unset, and any
    other value does too, logged once as a warning. Default off: the OTel tracing spec
    says instrumentation leaves the status unset on success unless configured
    otherwise, but some backends (Phoenix's span list) show unset as "—" where
    OpenInference instrumentations show a green check.
``OTEL_AGENTS_VOCABULARIES``
    Which attribute vocabularies spans are written in: a comma-separated selection of
    ``gen_ai`` (OTel GenAI semantic conventions), ``openinference`` (Arize Phoenix) and
    ``langfuse`` (what Langfuse reads; see :mod:`otel_agents.semconv.vocabularies`). Default all
    three. A user who sends to one backend pays for one. ``otel_agents.*`` attributes and the general
    OTel ones (``error.type``, ``mcp.*``…) are always written. An unknown name is logged once as a
    warning and the default is used.
"""

from __future__ import annotations

import logging
import math
import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ..semconv import vocabularies as V

ENV_CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
ENV_MAX_CONTENT_LENGTH = "OTEL_AGENTS_MAX_CONTENT_LENGTH"
ENV_STREAM_IDLE_TIMEOUT = "OTEL_AGENTS_STREAM_IDLE_TIMEOUT"
ENV_MAX_MEDIA_BYTES = "OTEL_AGENTS_MAX_MEDIA_BYTES"
ENV_STATUS_OK = "OTEL_AGENTS_STATUS_OK"
ENV_VOCABULARIES = "OTEL_AGENTS_VOCABULARIES"

DEFAULT_MAX_CONTENT_LENGTH = 16_384
MIN_CONTENT_LENGTH = 64
DEFAULT_STREAM_IDLE_TIMEOUT = 300.0
MIN_STREAM_IDLE_TIMEOUT = 0.01
DEFAULT_MAX_MEDIA_BYTES = 4096

_OFF = {"no_content", "event_only", "false", "0", "off", "none", "no"}

RedactHook = Callable[[str, str], str]
"""``hook(attribute_key, text) -> text``: called on every content value after
our own redaction and before truncation."""


_ON = {"span_only", "span_and_event", "true", "1", "on", "yes"}

# ``os.environ.get`` of an unset variable costs a few Python calls and a caught ``KeyError``, and
# every span reads 3 or 4 variables. CPython's ``os.environ`` (``os._Environ``) keeps its values in the
# dictionary ``_data`` (bytes on POSIX, upper-cased str on Windows), which every write through
# ``os.environ`` (``monkeypatch.setenv``, ``mock.patch.dict``, ``del``) updates before it returns: reading
# that dictionary is reading ``os.environ``, at the cost of one look-up.
_ENVIRON = os.environ
_ENV_DATA = getattr(_ENVIRON, "_data", None)
_ENV_KEY = getattr(_ENVIRON, "encodekey", None)
_ENV_VALUE = getattr(_ENVIRON, "decodevalue", None)
if not (isinstance(_ENV_DATA, dict) and callable(_ENV_KEY) and callable(_ENV_VALUE)):  # another Python
    _ENV_DATA = None
_ENV_KEYS: dict[str, object] = {}
# The variables Settings.span_policy() depends on, encoded as os.environ's dictionary keys.
_POLICY_KEYS = tuple(_ENV_KEY(name) for name in (  # type: ignore[misc]
    ENV_CAPTURE_CONTENT, ENV_MAX_CONTENT_LENGTH, ENV_STATUS_OK, ENV_VOCABULARIES, ENV_MAX_MEDIA_BYTES)) \
    if _ENV_DATA is not None else ()


def getenv(name: str) -> str | None:
    """``os.environ.get(name)``, the current value (never cached), as one dictionary look-up while
    ``os.environ`` is the interpreter's own (CPython); otherwise ``os.environ.get``."""
    if _ENV_DATA is None or os.environ is not _ENVIRON:  # replaced (a test's plain dict): ask it
        return os.environ.get(name)
    key = _ENV_KEYS.get(name)
    if key is None:
        key = _ENV_KEY(name)  # type: ignore[misc]
        if len(_ENV_KEYS) < 64:  # bounded: our variables' names
            _ENV_KEYS[name] = key
    raw = _ENV_DATA.get(key)
    return None if raw is None else _ENV_VALUE(raw)  # type: ignore[misc]


_warned_variables: set[tuple[str, str]] = set()
# the list a bad_values() block collects into, in this thread or task; None: bad values are logged (once)
_collecting: ContextVar[list[str] | None] = ContextVar("otel_agents_bad_values", default=None)


@contextmanager
def bad_values(into: list[str]) -> Iterator[list[str]]:
    """Within the block, append every bad variable value read (in this thread or task) to ``into``, one message
    each (``NAME='raw' is not valid; ...``), instead of logging it: each time it is read, whether or not it was
    logged before. ``otel-agents doctor`` lists them so, the same on every run in one process."""
    token = _collecting.set(into)
    try:
        yield into
    finally:
        _collecting.reset(token)


def _report(message: str) -> bool:
    """Add ``message`` to the open :func:`bad_values` list; ``False`` when none is open (log it then)."""
    collected = _collecting.get()
    if collected is None:
        return False
    collected.append(message)
    return True


def shown_variable(name: str, raw: str) -> str:
    """``raw``, the value of the environment variable ``name``, as it may be shown (``otel-agents doctor``, a
    WARNING): a headers variable (``OTEL_EXPORTER_OTLP_(TRACES_|LOGS_)HEADERS``: ``name=value,...``) as its header
    names, each value ``[REDACTED]`` (an entry that is not ``name=value`` wholly); a variable holding a key or
    token (named like a secret, :func:`~.redaction.is_secret_key`: ``PHOENIX_API_KEY``, ``LANGFUSE_SECRET_KEY``,
    ``MLFLOW_TRACKING_TOKEN``; or ending in ``_KEY``: ``LANGFUSE_PUBLIC_KEY``) as ``[REDACTED]``; any other with
    secret shapes redacted (:func:`~.redaction.redact_text`)."""
    from .redaction import REDACTED, is_secret_key, redact_text

    if name.upper().endswith("_HEADERS"):
        entries = [entry.split("=", 1) for entry in raw.split(",") if entry.strip()]
        return ",".join(f"{entry[0].strip()}={REDACTED}" if len(entry) == 2 else REDACTED for entry in entries)
    if is_secret_key(name) or name.upper().endswith("_KEY"):
        return REDACTED
    return redact_text(raw)


def warn_bad_variable(name: str, raw: str, instead: str) -> None:
    """Log one WARNING per variable and value (bounded): ``name=raw`` is not valid, ``instead`` is used (inside
    :func:`bad_values`, reported there every time instead). The value is shown as :func:`shown_variable` shows it."""
    shown = shown_variable(name, raw)
    if _report(f"{name}={shown!r} is not valid; {instead}"):
        return
    if (name, raw) in _warned_variables or len(_warned_variables) >= 32:
        return
    _warned_variables.add((name, raw))
    logging.getLogger("otel_agents").warning("otel_agents: %s=%r is not valid; %s", name, shown, instead)


_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def flag_from_env(name: str, raw: str | None, default: bool, instead: str) -> bool:
    """A boolean variable ``name`` whose value is ``raw``: ``true``/``1``/``yes``/``on`` or
    ``false``/``0``/``no``/``off`` (any case); unset or blank: ``default``; any other value also reads as
    ``default``, with one WARNING (:func:`warn_bad_variable`) saying ``instead``."""
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if value:
        warn_bad_variable(name, raw, instead)
    return default


def _capture_from_env() -> bool:
    raw = getenv(ENV_CAPTURE_CONTENT)
    if raw is None or not raw.strip():
        return True
    value = raw.strip().lower()
    if value in _ON:
        return True
    if value not in _OFF:
        warn_bad_variable(ENV_CAPTURE_CONTENT, raw, "content capture is off (known values: NO_CONTENT, EVENT_ONLY, "
                          "false, SPAN_ONLY, SPAN_AND_EVENT, true)")
    return False  # off, or a value we do not know: a typo of "off" must not record content


# (raw value, selection, what is wrong with the value or None): parsed (and a bad value logged) once per value
_vocabularies_read: tuple[str | None, frozenset[str], str | None] = (None, V.ALL, None)


def _vocabularies_from_env() -> frozenset[str]:
    global _vocabularies_read
    raw = getenv(ENV_VOCABULARIES)
    if raw == _vocabularies_read[0]:
        if _vocabularies_read[2] is not None:
            _report(_vocabularies_read[2])  # a bad_values() block hears of it every time
        return _vocabularies_read[1]
    chosen, problem = V.ALL, None
    if raw is not None and raw.strip():
        try:
            chosen = V.parse(raw)
        except ValueError as exc:
            problem = f"{ENV_VOCABULARIES}={raw!r}: {exc}; writing all of them"
            if not _report(problem):
                logging.getLogger("otel_agents").warning("otel_agents: %s", problem)
    _vocabularies_read = (raw, chosen, problem)
    return chosen


@dataclass(frozen=True)
class _Number:
    """What a numeric setting takes: a finite number of ``unit``, at least ``minimum``, whole when ``whole``."""

    argument: str
    variable: str
    default: float
    minimum: float
    whole: bool
    unit: str

    def rule(self) -> str:
        return f"{'a whole' if self.whole else 'a finite'} number of {self.unit}, at least {self.minimum:g}"

    def take(self, value: object) -> float | None:
        """``value`` as the setting uses it (an ``int`` when ``whole``), or ``None`` when it is not one it takes."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if isinstance(value, float):
            if not math.isfinite(value) or (self.whole and not value.is_integer()):
                return None
            value = int(value) if self.whole else value
        return value if value >= self.minimum else None  # an int is compared exactly, past a float's range too


_CONTENT_LENGTH = _Number("max_content_length", ENV_MAX_CONTENT_LENGTH, DEFAULT_MAX_CONTENT_LENGTH,
                          MIN_CONTENT_LENGTH, True, "characters")
_MEDIA_BYTES = _Number("max_media_bytes", ENV_MAX_MEDIA_BYTES, DEFAULT_MAX_MEDIA_BYTES, 0, True, "bytes")
_IDLE_TIMEOUT = _Number("stream_idle_timeout", ENV_STREAM_IDLE_TIMEOUT, DEFAULT_STREAM_IDLE_TIMEOUT,
                        MIN_STREAM_IDLE_TIMEOUT, False, "seconds")


def _number_from_env(number: _Number) -> float:
    """The variable's value, or its default when unset, empty or not valid (a WARNING, once: see the module
    docstring; a timeout of 0 raised to the minimum ended every stream after 10 ms without a word)."""
    raw = getenv(number.variable)
    if not raw:
        return number.default
    value: float | None
    try:  # an integer as it is written (a float holds 53 bits: a huge budget was read, and shown, rounded)
        value = int(raw)
    except ValueError:
        try:
            value = float(raw)
        except ValueError:
            value = None
    taken = None if value is None else number.take(value)
    if taken is None:
        warn_bad_variable(number.variable, raw, f"it must be {number.rule()}; using the default, {number.default:g}")
        return number.default
    return taken


def _checked_number(number: _Number, value: object) -> None:
    """Raise :class:`ValueError` naming the argument when ``value`` (not ``None``) is not a number it takes."""
    if value is not None and number.take(value) is None:
        raise ValueError(f"{number.argument} must be {number.rule()} (None follows {number.variable}), "
                         f"not {value!r}")


ENV_SDK_DISABLED = "OTEL_SDK_DISABLED"


def sdk_disabled() -> bool:
    """Whether ``OTEL_SDK_DISABLED`` turns the OTel SDK off (its tracers record nothing), read as the SDK reads
    it: ``true`` in any case, surrounding spaces ignored; every other value leaves it on."""
    return os.environ.get(ENV_SDK_DISABLED, "").strip().lower() == "true"


def check_capture_content(value: object) -> bool | None:
    """``value`` when it is ``True``, ``False`` or ``None`` (follow the environment).

    Raises:
        TypeError: anything else, naming ``capture_content``: a truthy string such as ``"false"`` would
            otherwise leave content capture on.
    """
    if value is None or isinstance(value, bool):
        return value
    raise TypeError(f"capture_content must be True, False or None (None follows {ENV_CAPTURE_CONTENT}), "
                    f"not {value!r}")


@dataclass
class Settings:
    """What the span layer records and how much.

    Attributes:
        capture_content: ``None`` follows the environment switch (read per span);
            ``True``/``False`` overrides it.
        max_content_length: budget per content attribute, in characters; ``None``
            follows ``OTEL_AGENTS_MAX_CONTENT_LENGTH``.
        stream_idle_timeout: seconds (float) before an unconsumed stream's span
            is ended as abandoned; ``None`` follows the environment.
        max_media_bytes: largest inline media kept in a message part, in bytes;
            ``None`` follows ``OTEL_AGENTS_MAX_MEDIA_BYTES``.
        redact_hook: extra redaction, ``hook(attribute_key, text) -> text``.
        status_ok: mark spans that end without an error with status OK; ``None``
            follows ``OTEL_AGENTS_STATUS_OK`` (default off, as the OTel spec asks).
        vocabularies: the attribute vocabularies to write, any of ``gen_ai``, ``openinference``,
            ``langfuse`` (a comma-separated string or an iterable); ``None`` follows
            ``OTEL_AGENTS_VOCABULARIES`` (default all three).

    Raises:
        ValueError: ``vocabularies`` names an unknown vocabulary or none (the message names the
            value and the allowed ones); ``max_content_length`` is not a whole number of at least 64,
            ``max_media_bytes`` not one of at least 0, ``stream_idle_timeout`` not a finite number of at
            least 0.01 (the message names the argument and its range).
        TypeError: ``capture_content`` is not ``True``, ``False`` or ``None``.
    """

    capture_content: bool | None = None
    max_content_length: int | None = None
    stream_idle_timeout: float | None = None
    max_media_bytes: int | None = None
    redact_hook: RedactHook | None = field(default=None, repr=False)
    status_ok: bool | None = None
    vocabularies: frozenset[str] | str | Iterable[str] | None = None
    # span_policy()'s last reading: (what it depended on, the policy); not a setting.
    _policy: tuple = field(default=((), ()), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_capture_content(self.capture_content)
        for number in (_CONTENT_LENGTH, _MEDIA_BYTES, _IDLE_TIMEOUT):
            _checked_number(number, getattr(self, number.argument))
        if self.vocabularies is not None:
            self.vocabularies = V.parse(self.vocabularies)

    def selected_vocabularies(self) -> frozenset[str]:
        """The vocabularies spans are written in (a subset of ``gen_ai``, ``openinference``, ``langfuse``)."""
        if self.vocabularies is not None:
            return self.vocabularies  # type: ignore[return-value]  # parsed in __post_init__
        return _vocabularies_from_env()

    def content_enabled(self) -> bool:
        """Whether content (inputs, outputs, messages, tool arguments…) is recorded."""
        if self.capture_content is not None:
            return self.capture_content
        return _capture_from_env()

    def vocabulary_filter(self) -> frozenset[str] | None:
        """:meth:`selected_vocabularies`, or ``None`` when all three are selected (nothing to filter)."""
        only = self.selected_vocabularies()
        return None if only == V.ALL else only

    def mark_status_ok(self) -> bool:
        """Whether a span that ends without an error gets status OK (rather than unset)."""
        if self.status_ok is not None:
            return self.status_ok
        return flag_from_env(ENV_STATUS_OK, getenv(ENV_STATUS_OK), False, "spans keep status unset (true or false)")

    def content_budget(self) -> int:
        """The per-attribute content budget in characters (>= 64)."""
        return int(self._number(_CONTENT_LENGTH, self.max_content_length))

    def media_budget(self) -> int:
        """The largest inline media recorded in a message part, in bytes (>= 0)."""
        return int(self._number(_MEDIA_BYTES, self.max_media_bytes))

    @staticmethod
    def _number(number: _Number, value: object) -> float:
        """The setting's value; ``None``: the variable's (:func:`_number_from_env`). One not valid (set on the
        object after it was made, which checks its arguments) is the default."""
        if value is None:
            return _number_from_env(number)
        taken = number.take(value)
        return number.default if taken is None else taken

    def span_policy(self) -> tuple[bool, int, bool, frozenset[str] | None, int]:
        """What a span keeps for its life, read when it starts: ``(content_enabled(), content_budget(),
        mark_status_ok(), vocabulary_filter(), media_budget())``.

        The same values as those five reads, from the environment as it is now; parsed again only when one
        of their variables or of these settings changed since the last call (the variables' raw values are
        compared, as one dictionary look-up each: see :func:`getenv`). A reading during which one of them
        changed (another thread) is not kept. Raises what those reads raise."""
        data = _ENV_DATA  # self._policy_key(), written out: every span runs this
        if data is not None and os.environ is _ENVIRON:
            k1, k2, k3, k4, k5 = _POLICY_KEYS
            key: tuple | None = (self.capture_content, self.max_content_length, self.status_ok, self.vocabularies,
                                 self.max_media_bytes, data.get(k1), data.get(k2), data.get(k3), data.get(k4),
                                 data.get(k5))
            last = self._policy
            if last[0] == key:
                return last[1]
        else:
            key = None
        policy = (self.content_enabled(), self.content_budget(), self.mark_status_ok(), self.vocabulary_filter(),
                  self.media_budget())
        if key is not None and self._policy_key() == key:  # nothing changed while parsing: the key names it
            self._policy = (key, policy)
        return policy

    def _policy_key(self) -> tuple | None:
        """What :meth:`span_policy` depends on, as it is now (``None``: ``os.environ`` is not CPython's own)."""
        data = _ENV_DATA
        if data is None or os.environ is not _ENVIRON:
            return None
        k1, k2, k3, k4, k5 = _POLICY_KEYS
        return (self.capture_content, self.max_content_length, self.status_ok, self.vocabularies,
                self.max_media_bytes, data.get(k1), data.get(k2), data.get(k3), data.get(k4), data.get(k5))

    def idle_timeout(self) -> float:
        """Seconds before an idle stream is ended as abandoned."""
        return float(self._number(_IDLE_TIMEOUT, self.stream_idle_timeout))
