"""Redacting the values of spans our span layer did not write, as the fold reads them.

Our span layer redacts every value it writes (:mod:`otel_agents._spans.redaction`); other
instrumentations write theirs as they come (OpenLLMetry's ``gen_ai.openai.api_key``, a password among
a tool call's arguments, a key quoted in an exception's message), and anyone can send spans to
``otel-agents ecp collect``. :class:`~._facts.FoldSpan` reads every span without our kind attribute
into :class:`RedactedAttributes` and its name and status description through :func:`redact_text` and
:func:`redact_status`, so ``fold()``, ``otel-agents fold``, the receiver and the folding processor copy
only redacted values into an envelope, before any cut.

An attribute value is redacted when the fold first reads it, not when the span is read: most of a
foreign span's values never reach the envelope (a chain's inputs and outputs, an HTTP span's headers),
and redacting each of them cost ~3.5× the rest of the fold of such a span. Every way of reading a value
goes through the redaction; what a read gives is what redacting every value first gave.

Same rules as the span layer, by its own functions: nothing here decides what a secret is.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Status

from ..._spans.redaction import REDACTED, is_secret_key, redact_text


def redacted_value(key: str, value: Any) -> Any:
    """One attribute value of a span our span layer did not write, redacted: the value of a secret-named key
    (``gen_ai.openai.api_key``, ``http.request.header.authorization``) becomes ``[REDACTED]`` (``None`` and
    ``""`` stay); every other string, and every string of an array, goes through
    :func:`~otel_agents._spans.redaction.redact_text` (secret shapes, and the values of secret-named keys
    inside JSON, repr, ``key=value`` and header text: JSON text stays JSON text); anything else is kept."""
    if is_secret_key(key):
        return REDACTED if value is not None and value != "" else value
    kind = type(value)
    if kind is str:
        return redact_text(value)
    if kind is tuple or kind is list:  # an attribute array (a file's decoder may give a list)
        return kind(redact_text(v) if type(v) is str else v for v in value)
    return value


class _Unread:
    """The value :class:`RedactedAttributes` holds for a value not read yet. Not JSON, and not the value: a
    reader that bypassed the mapping's methods would fail to encode it, or show ``[REDACTED]``, never the
    secret."""

    __slots__ = ()

    def __repr__(self) -> str:
        return REDACTED


_UNREAD = _Unread()
_get, _getitem, _setitem, _items = dict.get, dict.__getitem__, dict.__setitem__, dict.items


class RedactedAttributes(dict):  # type: ignore[type-arg]
    """The attributes of a span our span layer did not write, each value redacted (:func:`redacted_value`)
    when it is first read, and kept so.

    A ``dict`` with the span's keys; it holds a placeholder for each value not read yet, and the raw values
    aside. Every method that gives a value (``[]``, ``get``, ``items``, ``values``, ``copy``, ``pop``,
    iteration by ``dict()``, ``==``, ``repr``, pickling) gives it redacted; ``in``, ``len`` and the keys read no
    value. Which values reach the envelope is the fold's business: this mapping only makes sure that
    whatever the fold reads is redacted.

    Args:
        raw: the span's attributes (a private copy: kept, not changed).
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[str, Any]) -> None:
        super().__init__(dict.fromkeys(raw, _UNREAD))
        self._raw = raw

    def _read(self, key: str) -> Any:
        value = redacted_value(key, self._raw[key])
        _setitem(self, key, value)
        return value

    def _read_all(self) -> None:
        for key in [k for k, v in _items(self) if v is _UNREAD]:
            self._read(key)

    def __getitem__(self, key: str) -> Any:
        value = _getitem(self, key)
        return self._read(key) if value is _UNREAD else value

    def get(self, key: str, default: Any = None) -> Any:
        value = _get(self, key, default)
        return self._read(key) if value is _UNREAD else value

    def __iter__(self) -> Any:  # defined here, so that dict(), update() and ** read values through __getitem__
        return dict.__iter__(self)

    def items(self) -> Any:
        self._read_all()
        return _items(self)

    def values(self) -> Any:
        self._read_all()
        return dict.values(self)

    def copy(self) -> dict[str, Any]:
        """A plain ``dict`` of the redacted values."""
        self._read_all()
        return dict(_items(self))

    def pop(self, key: str, *default: Any) -> Any:
        if _get(self, key) is _UNREAD:
            self._read(key)
        return dict.pop(self, key, *default)

    def popitem(self) -> tuple[str, Any]:
        key, value = dict.popitem(self)
        return key, redacted_value(key, self._raw[key]) if value is _UNREAD else value

    def setdefault(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else dict.setdefault(self, key, default)

    def __eq__(self, other: object) -> bool:
        self._read_all()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self._read_all()
        return dict.__ne__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: Any) -> Any:
        return self.copy() | other

    def __ror__(self, other: Any) -> Any:
        return other | self.copy()

    def __repr__(self) -> str:
        self._read_all()
        return dict.__repr__(self)

    def __reduce__(self) -> Any:
        return dict, (self.copy(),)


def redact_status(status: Any) -> Any:
    """``status`` with its description (an exception's message) redacted: a new ``Status`` when that changes it."""
    description = getattr(status, "description", None)
    if type(description) is not str:
        return status
    redacted = redact_text(description)
    return status if redacted == description else Status(status.status_code, redacted)
