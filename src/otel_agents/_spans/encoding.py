"""Safe JSON encoding and JSON-preserving truncation of content values.

:func:`to_jsonable` turns any Python value into plain JSON data, best effort:
one part that cannot be encoded becomes a short placeholder string, the rest is
kept. :func:`fit` cuts an encoded value down to a character budget so that the
result is still valid JSON (strings shortened with ``…``, lists and objects
shortened, and as a last resort the whole text re-encoded as one JSON string).
"""

from __future__ import annotations

import abc
import base64
import dataclasses
import datetime as _dt
import decimal
import enum
import hashlib
import json
import math
import pathlib
import sys
import types
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import orjson

ELLIPSIS = "…"
MAX_DEPTH = 48  # levels to_jsonable converts; deeper ones become a placeholder
_MAX_ITEMS = 10_000  # a container larger than this is cut while converting


_INT_TEXT = 10 ** 4300  # Python writes no integer this long as text (its default ``sys.get_int_max_str_digits()``)


def _placeholder(obj: Any, why: str) -> str:
    return f"<{why}: {type(obj).__name__}>"


def _int(n: int) -> Any:
    """``n``, or a placeholder with its size where Python would refuse to write it as text (a ``ValueError``
    that would lose the whole value: ``math.factorial(2000)`` has 5,736 digits). Runs no code of a subclass."""
    return n if int.__abs__(n) < _INT_TEXT else f"<int: {int.bit_length(n)} bits>"


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, int) and type(k) is not bool:
        size = _int(k)
        if type(size) is str:  # too long for Python to write as text: its size
            return size
    if isinstance(k, (int, float, bool)) or k is None:
        return json.dumps(k)
    if isinstance(k, enum.Enum):
        return str(k.value)
    try:
        return str(k)
    except Exception:  # noqa: BLE001
        return _placeholder(k, "key")


def _float(x: float) -> Any:
    return x if math.isfinite(x) else str(x)


def _bytes(obj: bytes | bytearray | memoryview) -> str:
    """UTF-8 text, ``base64:``-prefixed binary within the media budget, else a summary that
    keeps size and SHA-256 (binary past the budget is media: never inlined, never base64-encoded)."""
    from .settings import Settings  # late: settings is a leaf module; keep this one import-free

    raw = obj if isinstance(obj, bytes) else bytes(obj)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if len(raw) <= Settings().media_budget():
        return "base64:" + base64.b64encode(raw).decode("ascii")
    return f"<bytes: {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()}>"


def to_jsonable(obj: Any, _seen: frozenset[int] = frozenset(), _depth: int = 0) -> Any:
    """Convert ``obj`` into data ``json.dumps`` accepts without a ``default``, reading plain data only.

    Serialising for a span never runs the user's code with side effects: no ``model_dump()``, no
    iteration of anything but built-in containers, no attribute probes that reach ``__getattr__``
    (types are checked with ``type(obj)``, which a proxy cannot fake). Handles pydantic models
    (their fields' values as stored, v2 and v1; computed fields and serializers are user code and
    are not run), dataclasses (their fields), datetimes/dates/times (ISO 8601), UUIDs, Decimals (as
    strings, exact), sets (sorted when possible), paths, bytes (UTF-8 text, ``base64:``-prefixed within
    the media budget, else ``<bytes: N bytes, sha256 HEX>``), enums, mappings with non-string keys
    (keys stringified), circular references (``"<circular: T>"``) and integers too long for Python to write as
    text (``"<int: N bits>"``). Generators, iterators,
    coroutines and mocks are recorded by type (``"<generator>"``) and left untouched; any other
    object is its ``repr``. Never raises.
    """
    try:
        t = type(obj)
        if t is str or t is bool or obj is None:
            return obj
        if t is int:
            return obj if -_INT_TEXT < obj < _INT_TEXT else _int(obj)
        if t is float:
            return _float(obj)
        if t is dict or t is list or t is tuple:  # the common containers first: none of the checks below is theirs
            if _depth > MAX_DEPTH:
                return _placeholder(obj, "max depth")
            oid = id(obj)
            return _placeholder(obj, "circular") if oid in _seen else _container(obj, _seen | {oid}, _depth + 1)
        if issubclass(t, enum.Enum):  # before str/int: a mixed-in member's text may not be its value
            return to_jsonable(obj.value, _seen, _depth + 1) if _depth <= MAX_DEPTH else _placeholder(obj, "max depth")
        if issubclass(t, (bool, int, str)):
            return _int(obj) if issubclass(t, int) else obj
        if t is orjson.Fragment:  # JSON text already: its data (as orjson, and so the caches' keys, write it)
            return _fragment(obj, _seen, _depth)
        if issubclass(t, float):
            return _float(obj)
        if _depth > MAX_DEPTH:
            return _placeholder(obj, "max depth")
        oid = id(obj)
        if oid in _seen:
            return _placeholder(obj, "circular")
        seen = _seen | {oid}
        d = _depth + 1
        if t in _MODELS and _MODELS[t] == abc.get_cache_token():  # a model class met before: the checks below said so
            return _v2_fields(t, obj, seen, d)
        if issubclass(t, (bytes, bytearray, memoryview)):
            return _bytes(obj)
        if issubclass(t, (_dt.datetime, _dt.date, _dt.time)):
            return obj.isoformat()
        if issubclass(t, _dt.timedelta):
            return obj.total_seconds()
        if issubclass(t, (uuid.UUID, decimal.Decimal, pathlib.PurePath)):
            return str(obj)
        if issubclass(t, (Mapping, list, tuple)):
            return _container(obj, seen, d)
        if issubclass(t, (set, frozenset)):
            items = [to_jsonable(v, seen, d) for v in list(set.__iter__(obj) if issubclass(t, set)
                                                           else frozenset.__iter__(obj))[:_MAX_ITEMS]]
            try:
                return sorted(items)
            except TypeError:
                return sorted(items, key=lambda x: json.dumps(x, sort_keys=True, ensure_ascii=False))
        mock = sys.modules.get("unittest.mock")
        if issubclass(t, _OPAQUE) or (mock is not None and issubclass(t, mock.NonCallableMock)):
            return f"<{t.__name__}>"  # reading it would consume it, or record a call
        fields = _model_fields(t, obj, seen, d)
        if fields is not None:
            return fields if type(fields) is not _Root else to_jsonable(fields.value, seen, d)
        if dataclasses.is_dataclass(t):
            return {f.name: to_jsonable(_field_value(obj, f.name), seen, d) for f in dataclasses.fields(t)}
        if t.__module__.startswith(("pydantic", "pydantic_core")):  # Url, SecretStr…: their str is the value
            return str(obj)
        return repr(obj)
    except Exception:  # noqa: BLE001 - one bad part never loses the rest
        return _placeholder(obj, "unserializable")


# Never read: reading a generator, iterator or coroutine consumes or starts it (the ABCs look at the
# class only, so a proxy's __getattr__ is never reached).
def _fragment(obj: orjson.Fragment, seen: frozenset[int], depth: int) -> Any:
    try:
        data = orjson.loads(orjson.dumps(obj))  # a Fragment shows its text only to orjson
    except orjson.JSONDecodeError:
        return repr(obj)  # not JSON after all: recorded as any other object
    return to_jsonable(data, seen, depth + 1)


_OPAQUE = (types.GeneratorType, types.AsyncGeneratorType, types.CoroutineType, Iterator, AsyncIterator)


class _Root:
    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def _field_value(obj: Any, name: str) -> Any:
    try:
        return object.__getattribute__(obj, "__dict__")[name]
    except Exception:  # noqa: BLE001 - a slot, or a field without a stored value
        return object.__getattribute__(obj, name)


def _model_fields(t: type, obj: Any, seen: frozenset[int], d: int) -> Any:
    """A pydantic model's stored field values as a dict (``_Root`` for a ``RootModel``), else ``None``.

    Reads the instance ``__dict__`` (where pydantic keeps field values) and the class's field
    definitions; fields marked ``exclude`` are left out, as ``model_dump`` would. Nothing of the
    model runs: no serializer, validator or computed field (those are user code)."""
    v2, root, v1 = _pydantic_bases()
    if v2 is not None and issubclass(t, v2):
        if root is not None and issubclass(t, root):
            return _Root(object.__getattribute__(obj, "__dict__").get("root"))
        # Every check to_jsonable makes before this one said no for ``t``: only an ABC's register() can change
        # that (the mock check cannot: a class made before unittest.mock is no mock), so the answer is kept
        # with ABCs' cache token and to_jsonable comes straight here for ``t`` until a register() (five ABC
        # checks a model, each a Python call, saved).
        if len(_MODELS) >= _MODELS_MAX:
            _MODELS.clear()
        _MODELS[t] = abc.get_cache_token()
        return _v2_fields(t, obj, seen, d)
    if v1 is not None and issubclass(t, v1):
        defs = getattr(t, "__fields__", None) or {}
        return {k: to_jsonable(v, seen, d) for k, v in object.__getattribute__(obj, "__dict__").items() if k in defs}
    return None


def _v2_fields(t: type, obj: Any, seen: frozenset[int], d: int) -> dict[str, Any]:
    """A pydantic v2 model's stored field values (not ``exclude``-d) and extra fields, converted."""
    values = object.__getattribute__(obj, "__dict__")
    defs = getattr(t, "__pydantic_fields__", None) or {}
    out = {k: to_jsonable(v, seen, d) for k, v in values.items() if k in defs and not defs[k].exclude}
    try:
        extra = object.__getattribute__(obj, "__pydantic_extra__")
    except AttributeError:
        extra = None
    if type(extra) is dict:
        out.update((_key(k), to_jsonable(v, seen, d)) for k, v in extra.items())
    return out


_MODELS: dict[type, Any] = {}  # pydantic v2 model classes (not RootModel) -> abc.get_cache_token() when met
_MODELS_MAX = 1024

_bases: tuple[Any, Any, Any, Any, Any] = (None, None, None, None, None)  # (pydantic, pydantic.v1, v2, root, v1)


def _pydantic_bases() -> tuple[Any, Any, Any]:
    """pydantic's ``BaseModel``, ``RootModel`` and v1 ``BaseModel`` (``None`` for each not imported). We never
    import pydantic ourselves (no object is a model before it is imported); looked up again only when
    the modules in ``sys.modules`` change (pydantic's lazy module attributes are slow to read)."""
    global _bases
    mod, v1mod = sys.modules.get("pydantic"), sys.modules.get("pydantic.v1")
    if mod is not _bases[0] or v1mod is not _bases[1]:
        _bases = (mod, v1mod, getattr(mod, "BaseModel", None), getattr(mod, "RootModel", None),
                  getattr(v1mod, "BaseModel", None))
    return _bases[2], _bases[3], _bases[4]


def _container(obj: Any, seen: frozenset[int], d: int) -> Any:
    """A mapping (keys stringified) or a list/tuple, converted item by item (at most ``_MAX_ITEMS``).
    Subclasses of ``dict``/``list``/``tuple`` are read through the built-in type's own methods, so
    an override (a ``__len__`` that raises, an ``items`` with side effects) is never called."""
    t = type(obj)
    if t is dict or (t is not list and t is not tuple and issubclass(t, Mapping)):  # (`is` first: no ABC check)
        is_dict = t is dict or issubclass(t, dict)
        out: dict[str, Any] = {}
        for i, (k, v) in enumerate(dict.items(obj) if is_dict else obj.items()):
            if i >= _MAX_ITEMS:
                out[ELLIPSIS] = f"{(dict.__len__(obj) if is_dict else len(obj)) - i} more"
                break
            out[_key(k)] = to_jsonable(v, seen, d)
        return out
    base = list if issubclass(t, list) else tuple
    items = [to_jsonable(v, seen, d) for v in base.__getitem__(obj, slice(0, _MAX_ITEMS))]
    n = base.__len__(obj)
    if n > _MAX_ITEMS:
        items.append(f"{ELLIPSIS} {n - _MAX_ITEMS} more")
    return items


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates (undecodable file names, broken bytes) escaped as ``\\udcff``,
    so exporters can encode it as UTF-8; other text is returned unchanged."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


# --- reading: a byte-order mark ---------------------------------------------------
BOM_NOT_AT_START = ("a UTF-8 byte-order mark (U+FEFF) here, not at the start of the input, the one place a JSON "
                    "reader may ignore it (RFC 8259, section 8.1)")
"""Why a JSON text that starts with a byte-order mark anywhere but at the start of its input is refused."""


def without_bom(text: str | bytes) -> str | bytes:
    """``text`` without the UTF-8 byte-order mark some editors (and PowerShell) write at the start of a file or
    stream: RFC 8259 section 8.1 lets a JSON parser ignore it (orjson and ``json.loads`` refuse it). Call it on the
    start of an input only, each JSON text we read there (a file's or a stream's first line, a request body); a
    mark elsewhere stays, and is refused with :data:`BOM_NOT_AT_START` (:func:`starts_with_bom`)."""
    if isinstance(text, (bytes, bytearray)):
        return text[3:] if text.startswith(b"\xef\xbb\xbf") else text
    return text[1:] if text.startswith("\ufeff") else text


def starts_with_bom(text: str | bytes) -> bool:
    """Whether ``text`` (UTF-8 bytes or text) starts with a byte-order mark."""
    return text.startswith(b"\xef\xbb\xbf" if isinstance(text, (bytes, bytearray)) else "\ufeff")


_ORJSON_OPTIONS = (orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
                   | orjson.OPT_PASSTHROUGH_DATETIME)


def dumps(data: Any) -> str:
    """Compact JSON text of already-jsonable ``data`` (non-ASCII kept); ``ValueError`` for ``NaN``
    or ``Infinity`` (strict JSON), ``TypeError`` for a value JSON cannot hold.

    The text is exactly ``json.dumps(data, ensure_ascii=False, separators=(",", ":"),
    allow_nan=False)``'s, made by ``orjson`` (https://github.com/ijl/orjson, several times
    faster) where it writes the same: output with ``null`` (``orjson`` writes ``NaN`` as
    ``null`` where the standard library raises), floats below 1e-4 (``1e-05`` vs ``0.00001``),
    and whatever ``orjson`` refuses (integers beyond 64 bits, lone surrogates, non-``str``
    keys, subclasses of ``str``/``int``/``dict``/``list``) go to the standard library.
    """
    try:
        text = orjson.dumps(data, option=_ORJSON_OPTIONS).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        text = None
    # Searched in the text, not the bytes: `b"null" in out` first tries the operand as an integer (a byte),
    # raising and clearing a TypeError each time; the text has the same ASCII substrings as its UTF-8.
    # (The same test as is_dumps_text's, written out: this runs for every value encoded.)
    if text is None or "null" in text or "e-" in text or "0.0000" in text:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text


def is_dumps_text(text: str, *, finite: bool = False) -> bool:
    """Whether ``text``, ``orjson``'s encoding of some data made with :func:`dumps`'s options, is what :func:`dumps`
    gives that data: it holds none of the forms :func:`dumps` leaves to the standard library (``null``, small floats).
    ``finite``: the data is known to hold no ``NaN`` or infinity, so a ``null`` in the text is a ``None`` (which both
    write alike) and only small floats differ."""
    return not (("null" in text and not finite) or "e-" in text or "0.0000" in text)


def dumps_strings(data: Any) -> str:
    """:func:`dumps` of ``data`` made of strings, lists and dicts with string keys only (no number,
    ``None`` or bool: a text message's GenAI JSON): the same text, without :func:`dumps`'s scans of the
    output for the ``null`` and float forms where ``orjson`` and the standard library differ (several
    times ``orjson``'s own time on a long text); whatever ``orjson`` refuses (lone surrogates, ``str``
    subclasses) goes to the standard library, as in :func:`dumps`."""
    try:
        return orjson.dumps(data, option=_ORJSON_OPTIONS).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode(obj: Any) -> str:
    """``dumps(to_jsonable(obj))``. Never raises."""
    return dumps(to_jsonable(obj))


# --- truncation -----------------------------------------------------------------


def _cap(data: Any, max_str: int, max_items: int) -> Any:
    if isinstance(data, str):
        return data if len(data) <= max_str else data[:max_str] + ELLIPSIS
    if isinstance(data, list):
        out = [_cap(v, max_str, max_items) for v in data[:max_items]]
        if len(data) > max_items:
            out.append(ELLIPSIS)
        return out
    if isinstance(data, dict):
        out_d: dict[str, Any] = {}
        for i, (k, v) in enumerate(data.items()):
            if i >= max_items:
                out_d[ELLIPSIS] = ELLIPSIS
                break
            out_d[_cap(k, max_str, max_items) if len(k) > max_str else k] = _cap(v, max_str, max_items)
        return out_d
    return data


def _string_within(text: str, budget: int) -> str:
    """A JSON string literal of a prefix of ``text`` (plus ``…``) no longer than ``budget``."""
    lo, hi = 0, min(len(text), budget)
    best = dumps(ELLIPSIS)
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = dumps(text[:mid] + ELLIPSIS)
        if len(candidate) <= budget:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best


def fit_json(data: Any, text: str, budget: int) -> tuple[str, bool]:
    """Shrink JSON ``text`` (the encoding of ``data``) to at most ``budget`` characters.

    Returns ``(text, truncated)``; the text is always valid JSON. Strategy: cap
    every string and container at decreasing sizes until the encoding fits, so
    the structure survives; past that, the original text as one JSON string.
    """
    if len(text) <= budget:
        return text, False
    max_str, max_items = budget, 1024
    for _ in range(40):
        candidate = dumps(_cap(data, max_str, max_items))
        if len(candidate) <= budget:
            return candidate, True
        if max_str > 8:
            max_str = max(8, int(max_str * min(0.9, budget / len(candidate))))
        elif max_items > 1:
            max_items = max(1, max_items // 2)
        else:
            break
    return _string_within(text, budget), True


def fit_text(text: str, budget: int) -> tuple[str, bool]:
    """Cut plain ``text`` to at most ``budget`` characters, ending with ``…`` when cut."""
    if len(text) <= budget:
        return text, False
    return text[: max(0, budget - len(ELLIPSIS))] + ELLIPSIS, True
