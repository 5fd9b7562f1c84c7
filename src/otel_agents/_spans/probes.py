"""Guarded probes of user objects: how instrumentors look at a value they did not make.

A tool result, an agent output or an exception comes from the user's code and may be hostile: a
proxy whose every attribute raises (werkzeug's ``LocalProxy`` outside its context), a mock that
records each access, a class whose ``__getattr__``, ``__len__``, ``__str__`` or ``__repr__`` raises
something other than ``AttributeError``. ``hasattr``/``getattr``/``str`` on such an object raise
*out of our hook into the framework*. These never raise, and the protocol checks
(:func:`is_iterator`, :func:`is_async_iterator`) look at the object's type only, so a proxy's
``__getattr__`` is never reached.
"""

from __future__ import annotations

import inspect
from typing import Any

from .guard import report_internal_error


def attr(obj: Any, name: str, default: Any = None) -> Any:
    """``getattr(obj, name, default)``, or ``default`` when the lookup raises anything."""
    try:
        return getattr(obj, name, default)
    except Exception:  # noqa: BLE001 - a hostile __getattr__/property: the attribute is not there for us
        return default


def has_attr(obj: Any, name: str) -> bool:
    """``hasattr(obj, name)``, ``False`` when the lookup raises anything (not only ``AttributeError``)."""
    try:
        return hasattr(obj, name)
    except Exception:  # noqa: BLE001
        return False


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
