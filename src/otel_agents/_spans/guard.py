"""The never-raise guard around every hook we install.

A failure inside our code is logged once per site (WARNING with the traceback the
first time, DEBUG after that) and never reaches the user: their own result or
exception passes through unchanged.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from types import CodeType
from typing import Any, Callable, TypeVar

logger = logging.getLogger("otel_agents")

_F = TypeVar("_F", bound=Callable[..., Any])
_seen: set[str] = set()
_seen_lock = threading.Lock()
_MAX_SITES = 1024  # bounded: sites are code locations, but stay safe


class UserCallbackError(Exception):
    """A callback the user gave us raised ``error``: its failure, not ours. Raised through our code in place of
    ``error`` (:func:`call_user`), it is logged as the callback's by :func:`report_internal_error` wherever that
    code catches it.

    Attributes:
        setting: what the callback is, as the log names it (``"redaction hook (redact_hook)"``).
        callback: the callback.
        error: what it raised.
    """

    def __init__(self, setting: str, callback: Any, error: BaseException) -> None:
        super().__init__(setting, error)
        self.setting, self.callback, self.error = setting, callback, error


def call_user(setting: str, callback: Callable[..., Any], *args: Any) -> Any:
    """``callback(*args)``, the user's (``setting``: what it is, as the log names it); an ``Exception`` it raises
    comes out as :class:`UserCallbackError` (a ``BaseException`` as it is: the program is stopping)."""
    try:
        return callback(*args)
    except Exception as exc:  # noqa: BLE001
        raise UserCallbackError(setting, callback, exc) from exc


def report_user_error(setting: str, callback: Any, exc: BaseException) -> None:
    """Log ``exc`` raised by the user's ``callback`` (``setting``: what it is, ``"ECP envelope callback
    (configure(ecp=), on_envelope=)"``) as that callback's failure, naming it (its module and qualified name):
    WARNING with the traceback once per callback (:func:`_callback_key`: two lambdas of one module are two
    callbacks), then DEBUG."""
    name = _callback_name(callback)
    what = _describe(exc)
    if _first_time(f"user:{setting}:{_callback_key(callback)}"):
        logger.warning("otel_agents: your %s %s raised %s (a failure of that callback, not of otel_agents; "
                       "instrumentation continues)", setting, name, what, exc_info=exc)
    else:
        logger.debug("otel_agents: your %s %s raised %s", setting, name, what)


def _callback_key(callback: Any) -> str:
    """What tells one callback from another: its code object (a function's or a bound method's, else its class's
    ``__call__``'s), by file, first line and identity (two lambdas on one line are two; the closures one ``def``
    makes share it), else the object's ``id``. Not its qualified name, which every ``<lambda>`` of a module
    shares. Kept among the bounded keys of :func:`_first_time`."""
    try:
        code = getattr(callback, "__code__", None)
        if type(code) is not CodeType:
            code = getattr(getattr(type(callback), "__call__", None), "__code__", None)
        if type(code) is CodeType:
            return f"{code.co_filename}:{code.co_firstlineno}:{id(code):x}"
    except Exception:  # noqa: BLE001 - the user's object: even its attributes may raise
        pass
    return f"id:{id(callback):x}"


def _callback_name(callback: Any) -> str:
    try:
        name = getattr(callback, "__qualname__", None) or type(callback).__qualname__
        module = getattr(callback, "__module__", None)
        return f"{module}.{name}" if isinstance(module, str) and isinstance(name, str) else str(name)
    except Exception:  # noqa: BLE001 - the user's object: even its attributes may raise
        return "(unnamed)"


def report_internal_error(site: str, exc: BaseException) -> None:
    """Log ``exc`` raised by our code at ``site``: WARNING once per site, then DEBUG. A
    :class:`UserCallbackError` is the user's callback's failure: :func:`report_user_error`."""
    if isinstance(exc, UserCallbackError):
        report_user_error(exc.setting, exc.callback, exc.error)
        return
    what = _describe(exc)  # not %r: the exception may be the user's, and its repr may raise
    if _first_time(site):
        logger.warning("otel_agents: internal error in %s (instrumentation continues): %s",
                       site, what, exc_info=exc)
    else:
        logger.debug("otel_agents: internal error in %s: %s", site, what)


def _first_time(key: str) -> bool:
    """Whether ``key`` (a site, a user's callback) is logged for the first time: noted, up to ``_MAX_SITES`` keys."""
    with _seen_lock:
        first = key not in _seen
        if first and len(_seen) < _MAX_SITES:
            _seen.add(key)
    return first


def _after_fork() -> None:
    """A forked child has not the thread that may have held the lock at the fork: a fresh one (see .finalisers)."""
    global _seen_lock
    _seen_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _describe(exc: BaseException) -> str:
    try:
        return repr(exc)
    except Exception:  # noqa: BLE001
        return f"{type(exc).__name__} (unprintable)"


def reset_reported_sites() -> None:
    """Forget which sites have logged already (for tests)."""
    with _seen_lock:
        _seen.clear()


class _Guard:
    """The context manager :func:`guard` returns (one per site: it holds nothing but the site)."""

    __slots__ = ("site",)

    def __init__(self, site: str):
        self.site = site

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is not None and issubclass(exc_type, Exception):  # the point of the guard
            report_internal_error(self.site, exc)
            return True
        return False


@functools.lru_cache(maxsize=_MAX_SITES)  # sites are code locations: one guard each, made once
def guard(site: str) -> _Guard:
    """Run a block of *our* code; any ``Exception`` in it is reported (as ``site``) and swallowed.

    ``with guard("site"): ...``. Never wrap the user's call in this: it would
    swallow their exception. A class rather than a ``@contextmanager`` generator
    (it runs dozens of times per span, and this costs a fraction of a generator), and
    the same instance for a site each time (the cache's look-up is cheaper than making one).
    """
    return _Guard(site)


def guarded(site: str, default: Any = None) -> Callable[[_F], _F]:
    """Decorate one of our hook functions so it never raises; returns ``default`` on failure."""

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001
                report_internal_error(site, exc)
                return default

        return wrapper  # type: ignore[return-value]

    return decorate
