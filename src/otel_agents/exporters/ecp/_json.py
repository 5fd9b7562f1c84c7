"""The fold's JSON, through ``orjson`` (a C encoder/decoder), with the standard library's exact output.

The fold encodes ``logs`` and evidence ``args`` and parses JSON attribute text for every
span; the standard library's pure-Python encoder paths are a large part of a fold's time.
``orjson`` produces the same bytes as ``json.JSONEncoder(ensure_ascii=False,
separators=(",", ":"))`` except where noted below; each such case is detected and handed
to the standard library, so the results are byte-identical to it:

* floats below 1e-4 in magnitude: ``orjson`` writes ``0.00001`` / ``1e-7`` where ``repr``
  writes ``1e-05`` / ``1e-07`` (detected in the output: ``e-`` after a digit, ``0.0000`` after no digit;
  text such as a ``claude-…`` model name or a time's ``00.000000`` is not taken for one);
* integers beyond 64 bits, lone surrogates, non-``str`` keys: ``orjson`` refuses them;
* subclasses of ``float`` and ``tuple`` (``numpy.float64``, which the OTel SDK keeps as an
  attribute value; named tuples): ``orjson`` hands them to ``default`` (``str``) where the
  standard library writes a number or an array; ``_default`` refuses them instead;
* parsing: ``orjson`` reads integers beyond 64 bits as floats (detected: a run of 19 or
  more digits) and refuses ``NaN``/``Infinity``, which the caller's decoder rejects too.

* non-finite floats: ``orjson`` writes ``null``; that is what ``logs`` wants (strict JSON,
  ``_facts.plain``); other callers pass ``nan_as_null=False`` and output holding ``null``
  goes to the standard library.

Not detected: a plain ``enum.Enum`` member (``orjson`` writes its value, the standard library
``str`` of it); fold data, attribute values and parsed JSON, never holds one.

See https://github.com/ijl/orjson for its behaviour.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

import orjson

from ..._spans.encoding import utf8_safe

_SORT = orjson.OPT_SORT_KEYS
_PASSTHROUGH = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME  # -> default=str, as json does
_LONG_DIGITS = re.compile(r"\d{19}")
# orjson's tiny floats: "e-" after a digit (1.5e-7), "0.0000" after no digit (0.00001); not a "claude-…" model
# name, not a time's "00.000000". The literal first, the look-behind after it: the regex engine then scans for
# the literal in C (a character class first would be tried at every byte).
_EXPONENT = re.compile(r"e-(?<=[0-9]e-)")
_SMALL = re.compile(r"0\.0000(?<![0-9]0\.0000)")


def _default(value: Any) -> str:
    """``orjson``'s ``default``: ``str``, as the standard library's, except for what the standard
    library writes itself (float and tuple subclasses): refused, so the fallback writes them."""
    if isinstance(value, (float, tuple)):
        raise TypeError(type(value).__name__)
    return str(value)


def _differs(text: str) -> bool:
    """Whether ``orjson``'s output (decoded) may differ from ``repr``-formatted floats (tiny floats). A
    string holding such text only costs the standard library's encoder."""
    # the plain searches first (most output holds neither text), the regexes only to tell what is there.
    # In the text, not the bytes: ``b"e-" in out`` first tries its operand as an integer (a byte), raising
    # and clearing a TypeError each time; the text has the same ASCII substrings as its UTF-8.
    return (("e-" in text and _EXPONENT.search(text) is not None)
            or ("0.0000" in text and _SMALL.search(text) is not None))


def compact(value: Any, fallback: Callable[[Any], str], *, sort_keys: bool = False,
            nan_as_null: bool = False) -> str:
    """``value`` as compact JSON, byte-identical to ``fallback`` (a standard-library ``encode``
    with ``ensure_ascii=False``, compact separators, ``default=str`` and the same ``sort_keys``),
    which is used wherever ``orjson`` would write something else. Errors are ``fallback``'s.
    ``nan_as_null``: the caller writes ``NaN``/``Infinity`` as ``null`` too (as ``logs`` does),
    so ``orjson``'s ``null`` for them is kept."""
    try:
        out = orjson.dumps(value, default=_default, option=_PASSTHROUGH | _SORT if sort_keys else _PASSTHROUGH)
    except (TypeError, orjson.JSONEncodeError):
        return fallback(value)
    text = out.decode("utf-8")
    if _differs(text) or (not nan_as_null and "null" in text):
        return fallback(value)
    return text


def envelope_line(envelope: Any) -> str:
    """One ECP envelope as one line of strict JSON: the one serialiser of ``otel-agents fold`` and
    :class:`~._exporter.ECPFileExporter`, so both write the same bytes for the same run.

    The text is ``json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))``'s (floats as
    ``repr`` writes them: ``1e-07``), made by ``orjson`` where that is identical; ``NaN`` and
    ``Infinity`` are written as ``null`` (strict JSON; the fold treats them as missing); a string
    holding a lone surrogate is written with it escaped as text (``\\udcff``, as the span layer's
    ``utf8_safe`` does), so the line is valid UTF-8. ``ValueError``/``TypeError`` only for data
    no JSON can hold (a reference cycle).

    An envelope's ``logs`` (JSON text of its own, most of the line) is encoded apart from the other fields and
    not searched for tiny floats: a string is written alike by both encoders (only numbers can differ), so
    only the text around it is searched (:func:`_differs`), where the whole line was."""
    logs = envelope.get("logs") if type(envelope) is dict else None
    if type(logs) is not str or len(logs) < _APART:
        return compact(envelope, _standard_line, nan_as_null=True)
    head: dict[str, Any] = {}
    tail: dict[str, Any] = {}
    part = head
    for key, value in envelope.items():
        if key == "logs":
            part = tail
        else:
            part[key] = value
    try:
        first = orjson.dumps(head, default=_default, option=_PASSTHROUGH).decode("utf-8")
        last = orjson.dumps(tail, default=_default, option=_PASSTHROUGH).decode("utf-8")
        text = orjson.dumps(logs).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):  # a lone surrogate, an integer beyond 64 bits, a subclass
        return _standard_line(envelope)
    if _differs(first) or _differs(last):
        return _standard_line(envelope)
    return (f"{first[:-1]},\"logs\":{text}" if head else f'{{"logs":{text}') + \
        (f",{last[1:]}" if tail else "}")


_APART = 512  # shorter logs: one encoding and one search of the line cost less than three encodings


def _standard_line(value: Any) -> str:
    return json.dumps(writable(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)


def writable(value: Any) -> Any:
    """``value`` with non-finite floats as ``None`` and lone surrogates escaped (what strict UTF-8 JSON needs)."""
    if isinstance(value, str):
        return utf8_safe(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {utf8_safe(k) if isinstance(k, str) else k: writable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [writable(v) for v in value]
    return value


# Every ASCII byte to b" " but the digits, to b"0": a run of 19 digits is then a run of 19 b"0".
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_DIGIT_RUN = b"0" * 19


def _long_digits(text: str) -> bool:
    """Whether ``text`` holds a run of 19 or more digits (``\\d``, as ``_LONG_DIGITS``). For ASCII text
    (``isascii`` is O(1) on ``str``) by a byte-table translation and one substring search, at C speed:
    the regular expression tries every position and costs far more on long text."""
    if len(text) > 32 and text.isascii():
        return text.encode("ascii").translate(_DIGITS_AS_ZEROS).find(_DIGIT_RUN) >= 0  # not ``in``: see _differs
    return _LONG_DIGITS.search(text) is not None


def _reject(value: str) -> Any:
    raise ValueError(f"non-finite number {value}")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"non-finite number {text}")
    return number


_strict_decoder = json.JSONDecoder(parse_constant=_reject, parse_float=_finite_float).decode


def strict_decode(text: str) -> Any:
    """``text`` read by the standard library's JSON decoder, strict: ``ValueError`` for ``NaN``, ``Infinity``,
    numbers beyond a double (the message names the field: :func:`non_finite_problem`), and nesting past its
    recursion limit (``nested too deeply``, not a ``RecursionError``); lone surrogate escapes and integers of any
    size are read (what orjson refuses)."""
    try:
        return _strict_decoder(text)
    except RecursionError:
        raise ValueError(NESTED_TOO_DEEPLY) from None
    except ValueError as exc:
        if str(exc).startswith("non-finite number"):
            raise ValueError(non_finite_problem(text) or str(exc)) from None
        raise


class _NonFinite:
    """Stands for a ``NaN``, ``Infinity``, ``-Infinity`` or a number beyond a double in a parsed document."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _marked_float(text: str) -> Any:
    number = float(text)
    return number if math.isfinite(number) else _NonFinite(text)


_marking_decoder = json.JSONDecoder(parse_constant=_NonFinite, parse_float=_marked_float).decode


def non_finite_problem(text: str | bytes) -> str | None:
    """Where JSON-like ``text`` holds its first ``NaN``, ``Infinity``, ``-Infinity`` or number beyond a double (which
    strict JSON, RFC 8259 section 6, cannot carry, and our readers refuse), as an error message names it:
    ``path: token is not a finite number (...)``, the path in the form the OTLP/JSON reader names a field with
    (``resourceSpans[0].scopeSpans[0].spans[2].attributes[1].value.doubleValue``); ``None`` when it holds none
    or is no JSON even with them. Only for an error's message: it parses ``text`` again."""
    try:
        data = _marking_decoder(text.decode("utf-8") if isinstance(text, bytes) else text)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:  # depth first, in document order
        value, path = stack.pop()
        if isinstance(value, _NonFinite):
            why = ("strict JSON has no NaN or Infinity" if value.text in ("NaN", "Infinity", "-Infinity") else
                   "beyond a double: infinity when read")
            return f"{path or 'the document'}: {value.text} is not a finite number ({why})"
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(value))))
    return None


NESTED_TOO_DEEPLY = "nested too deeply (arrays or objects deeper than the decoder's recursion limit)"


def attribute_json(text: str) -> Any:
    """A span attribute's JSON text (``input.value``, ``gen_ai.output.messages``, tool arguments) as ``json.loads``
    reads it (``NaN``/``Infinity`` too, as the fold always read them), for the fold's readers of foreign spans,
    which take a ``ValueError`` to mean "not JSON, keep the text": nesting past the decoder's recursion limit
    is one too, not a ``RecursionError`` that ended ``otel-agents fold``.

    Raises:
        ValueError: not JSON, or nested too deeply.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(NESTED_TOO_DEEPLY) from None


def loads(text: str, fallback: Callable[[str], Any]) -> Any:
    """``text`` parsed by ``orjson``, or by ``fallback`` (a standard-library ``decode``) wherever
    ``orjson`` would fail or read a number differently (integers beyond 64 bits)."""
    if not _long_digits(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return fallback(text)


__all__ = ["NESTED_TOO_DEEPLY", "attribute_json", "compact", "envelope_line", "loads", "non_finite_problem",
           "strict_decode", "writable"]
