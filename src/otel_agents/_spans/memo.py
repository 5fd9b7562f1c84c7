"""Bounded caches of rendered content, keyed by the content itself.

An agent loop sends the same content with every model request: the tools offered, the request
parameters, every earlier message of the conversation. Rendering it (to JSON-able data, redaction,
the budget, the vocabularies' attributes) gives the same attributes each time, so a rendering is kept
in a :class:`Memo` under its content's :func:`json_key`. The rules every cache here follows:

* the key is the content (its compact JSON text, plus every setting the rendering depends on), never
  an object's ``id()``; content that is not plain JSON data (a pydantic model, a ``str`` subclass,
  ``NaN``…) has no key and is rendered each time;
* only rendered attribute values (strings, numbers, booleans) are kept, never a user's object, and the
  cache is bounded by entries and by key size;
* the callers bypass it when a user redaction hook is set (user code may not be deterministic).
"""

from __future__ import annotations

import enum
import json
from collections import OrderedDict
from typing import Any, Generic, Hashable, TypeVar

import orjson

from .finalisers import new_lock

STRICT = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""``orjson`` options under which it raises on a subclass, a dataclass or a datetime (no default is given)."""

V = TypeVar("V")


def json_key(data: Any, max_bytes: int, *, finite: bool = False) -> bytes | None:
    """The compact JSON text (UTF-8 bytes) of ``data`` when it is plain JSON data and at most ``max_bytes``
    long, else ``None`` (no cache). Plain JSON data: ``dict`` with ``str`` keys, ``list``, ``str``, ``int``
    (64-bit), finite ``float``, ``bool``, ``None``, exactly those types (a subclass's methods are user code),
    plus what ``orjson`` writes as the JSON value :func:`~.encoding.to_jsonable` gives it (tuples, enums
    inside data, UUIDs, an ``orjson.Fragment``): two values with one key are rendered alike. A bare enum member
    has no key: a ``str``/``int`` member is rendered as its text, which orjson does not write. ``finite``: the
    caller refuses NaN and infinity itself (orjson writes them as ``null``), so their check here is skipped."""
    if isinstance(data, enum.Enum):  # orjson writes its value, where a str or int member renders as its text
        return None
    try:
        key = orjson.dumps(data, option=STRICT)  # raises on a subclass, a dataclass, a datetime, a big int…
    except (TypeError, orjson.JSONEncodeError):
        return None
    if len(key) > max_bytes:
        return None
    # orjson writes NaN and Infinity as null: they must not share a key with None (`find`, not `in`: `in` on
    # bytes first tries its operand as an integer, raising and clearing a TypeError each time)
    if not finite and key.find(b"null") >= 0:
        try:
            json.dumps(data, allow_nan=False)
        except (TypeError, ValueError):
            return None
    return key


class Memo(Generic[V]):
    """A thread-safe LRU map of at most ``entries`` items (the least recently used is dropped).

    Values must be immutable renderings (tuples of attribute pairs, strings): they are shared
    by every span that gets them."""

    __slots__ = ("entries", "_items", "_lock")

    def __init__(self, entries: int):
        self.entries = entries
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = new_lock()

    def get(self, key: Hashable) -> V | None:
        """The value kept under ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value`` under ``key``, dropping the least recently used item past the bound."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Drop every item."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
