"""Guarded probes of user objects: how instrumentors look at a value they did not make.

A tool result, an agent output or an exception comes from the user's code and may be hostile: a
proxy whose every attribute raises (werkzeug's ``LocalProxy`` outside its context), a mock that
records each access, a class whose ``__getattr__``, ``__len__``, ``__str__`` or ``__repr__`` raises
something other than ``AttributeError``. ``hasattr``/``getattr``/``str`` on such an object raise
*out of our hook into the framework*. These never raise, and the protocol checks
(:func:`is_iterator`, :func:`is_async_iterator`) look at the object's type only, so a proxy's
``__getattr__`` is never reached.

:func:`attr`, :func:`has_attr` and :func:`field` are also the cheap way to read an attribute a pydantic
model may not have (see :func:`attr`): every instrumentor reads optional fields of framework and SDK
models through them.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from .guard import report_internal_error


def attr(obj: Any, name: str, default: Any = None) -> Any:
    """``getattr(obj, name, default)``, or ``default`` when the lookup raises anything.

    Why not plain ``getattr``: a pydantic (v2) model answers a name it lacks by raising ``AttributeError``
    inside its ``__getattr__`` (private attributes, then extra fields, then the raise), which ``getattr``
    catches — ~35,000 CPU instructions a miss against ~2,000 for a hit, and instrumentors probe models for
    optional fields on every span (an event's ``tool_id``, a response's ``usage``, a request's ``root``). So
    for a model class whose attribute access is pydantic's own (no ``__getattr__``/``__getattribute__`` of
    its own below ``BaseModel``), a name that is neither defined on the class (field-shadowing properties,
    methods, class attributes) nor a private attribute is read as that ``__getattr__`` would read it — the
    instance's ``__dict__`` (the fields), then ``__pydantic_extra__`` — and a miss is ``default`` without a
    raise. Every other name, and every other object (a pydantic dataclass, pydantic v1, a class with its own
    ``__getattr__``), is asked with ``getattr``. Which names a class defines is worked out once per class.
    """
    return field(obj, name, default, keys=False)


def has_attr(obj: Any, name: str) -> bool:
    """``hasattr(obj, name)``, ``False`` when the lookup raises anything (not only ``AttributeError``);
    a pydantic model's miss costs no raise (see :func:`attr`)."""
    return attr(obj, name, _UNSEEN) is not _UNSEEN


def field(obj: Any, name: str, default: Any = None, *, keys: bool = True) -> Any:
    """``obj.get(name, default)`` for a mapping (a request body, a wire dict), else :func:`attr`: how SDK
    and protocol objects that arrive either as dicts or as pydantic models are read. Never raises.
    ``keys=False``: a mapping's attribute too (what :func:`attr` is; written here once, so the read of a
    model's field costs ``field`` no second call: instrumentors read dozens a model call)."""
    cls = type(obj)
    if cls is dict and keys:
        return obj.get(name, default)
    how = _READINGS.get(cls, _UNSEEN)
    if how is _UNSEEN:
        how = _reading(cls)
    try:
        if how is _KEYS and keys:
            return obj.get(name, default)
        if how is None or how is _KEYS or name in how:
            return getattr(obj, name, default)
        value = obj.__dict__.get(name, _UNSEEN)
        if value is _UNSEEN:
            extra = obj.__pydantic_extra__
            value = extra.get(name, default) if extra else default
        return value
    except Exception:  # noqa: BLE001 - a hostile mapping, __getattr__ or property: not there for us
        return default


_UNSEEN = object()
_KEYS = object()  # a Mapping (``field`` reads its keys)
_PLAIN_ACCESS = ("pydantic.main", "builtins")  # pydantic's BaseModel, object: their attribute access is the usual
_READINGS: dict[type, Any] = {}  # class -> names to ask (a plain pydantic model), _KEYS, or None; see _reading
_READINGS_MAX = 1024


def _reading(cls: type) -> Any:
    """How instances of ``cls`` are read, remembered per class (at most :data:`_READINGS_MAX`): ``_KEYS`` for a
    ``Mapping``; for a pydantic v2 model whose attribute access is pydantic's own, the names :func:`attr` asks
    ``getattr`` for (those defined on the class or its bases, and the private attributes); ``None`` (ask
    ``getattr`` for every name) for anything else."""
    how: Any = None
    try:
        if issubclass(cls, Mapping):
            how = _KEYS
        elif hasattr(cls, "__pydantic_fields__"):
            found: set[str] | None = set()
            for klass in cls.__mro__:
                own = vars(klass)
                if ("__getattr__" in own or "__getattribute__" in own) and klass.__module__ not in _PLAIN_ACCESS:
                    found = None  # the class answers names itself
                    break
                found.update(own)
            if found is not None and {"__dict__", "__pydantic_extra__"} <= found:  # not a pydantic dataclass
                found.update(getattr(cls, "__private_attributes__", None) or ())
                how = frozenset(found)
    except Exception:  # noqa: BLE001 - an odd class: ask getattr
        how = None
    if len(_READINGS) >= _READINGS_MAX:
        _READINGS.clear()
    _READINGS[cls] = how
    return how


def type_defines(obj: Any, name: str) -> bool:
    """Whether ``obj``'s class defines ``name`` (a protocol method such as ``__anext__``); the instance
    is never asked, so its ``__getattr__`` does not run."""
    try:
        return hasattr(type(obj), name)
    except Exception:  # noqa: BLE001 - a metaclass __getattr__ that raises
        return False


def is_awaitable(obj: Any) -> bool:
    """``inspect.isawaitable(obj)``, judged by the type (a coroutine, or a class defining ``__await__``)."""
    return inspect.iscoroutine(obj) or type_defines(obj, "__await__")


def is_async_iterator(obj: Any) -> bool:
    """An async generator or any object whose class defines ``__anext__``."""
    return inspect.isasyncgen(obj) or type_defines(obj, "__anext__")


def is_iterator(obj: Any) -> bool:
    """A generator or any iterator (its class defines ``__next__`` and ``__iter__``); ``str``/``bytes`` are not."""
    if inspect.isgenerator(obj):
        return True
    t = type(obj)
    return t is not str and t is not bytes and type_defines(obj, "__next__") and type_defines(obj, "__iter__")


def text(obj: Any) -> str:
    """``str(obj)``; its ``repr`` when ``__str__`` raises; ``<unprintable T>`` when both do. The message
    of an exception whose ``__str__`` raises is recorded this way, so error recording never fails. A ``str``
    subclass is its value, as an attribute records it (a ``(str, Enum)`` member's ``__str__`` is ``Role.X``)."""
    if issubclass(type(obj), str):
        return str.__str__(obj)
    try:
        return str(obj)
    except Exception:  # noqa: BLE001
        pass
    try:
        return repr(obj)
    except Exception:  # noqa: BLE001
        return f"<unprintable {type_name(obj)}>"


def identifier(obj: Any, site: str) -> str | None:
    """An id the user gave (a session, user or conversation id) as text, or ``None``: for ``None``, an empty id,
    and a value that cannot be written as text (its ``__str__`` raises, an ``int`` past Python's digit limit for
    text), which is logged once at ``site`` and loses only itself: the run's other attributes still land. An id is
    never guessed (no ``repr``, no placeholder: two runs would share it). A ``str`` subclass is its value, as
    :func:`text` reads it; no ``__bool__`` or ``__eq__`` of the value runs. Never raises."""
    if obj is None:
        return None
    try:
        value = str.__str__(obj) if issubclass(type(obj), str) else str(obj)
        if type(value) is not str:  # a __str__ returning a str subclass: its value
            value = str.__str__(value)
    except Exception as exc:  # noqa: BLE001 - the user's object: without its id, the run is still recorded
        report_internal_error(site, exc)
        return None
    return value or None


def type_name(obj: Any) -> str:
    """The name of ``obj``'s class (``type(obj)``: a proxy cannot fake it)."""
    return type(obj).__name__
