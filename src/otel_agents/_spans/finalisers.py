"""Work a finaliser does (end an abandoned stream's span), run where it cannot deadlock.

A finaliser (``__del__``, a ``weakref.finalize`` callback) of an object in a reference cycle runs inside the
garbage collector, and the collector runs in whatever thread allocated at that moment: also one that holds a
non-reentrant lock — the ECP folding processor's (it allocates in ``on_start`` under it), a span registry's,
the OTel SDK's span processors' and exporters'. Ending a span there calls those same locks (``span.end()`` →
the processors' ``on_end``): the thread waits for itself forever (``tests/test_finalisers.py`` forces it).

So every finaliser of ours hands its work to :func:`from_finaliser`, which runs it at once, unless the garbage
collector is running in this thread (known from ``gc.callbacks``; it covers the OTel SDK's locks too) or one of
our locks (made by :func:`new_lock`) is held by any thread (the last reference dropped inside a locked section):
then it is queued for the span layer's finaliser thread, which runs it as soon as the lock is let go. The span
still ends; only then it ends in that thread, just after. A finaliser run when the last reference is dropped
anywhere else (a ``for`` loop's ``break``) runs at once. Queued work left at interpreter exit runs in an
``atexit`` hook (registered after the tracer provider's, so it runs before the provider shuts down).

A forked child has neither the finaliser thread nor the threads that held our locks at the fork: it gets a queue
and unlocked locks of its own, and what :func:`in_forked_child` registered forgets the parent's open spans.
"""

from __future__ import annotations

import atexit
import gc
import itertools
import os
import queue
import threading
import weakref
from typing import Any, Callable

from .guard import report_internal_error

_get_ident = threading.get_ident
_collecting: int | None = None  # the id of the thread the garbage collector is running in, or None
_pending: "queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]" = queue.SimpleQueue()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()
generation = 0
"""Bumped in each forked child. A finaliser set up in an earlier generation (an abandoned stream's, a
``weakref.finalize`` of :func:`finalize`: ``atexit`` runs those) is the parent's: its span is the parent's to end,
and ending it here would export it a second time, from the child. So it does nothing."""


# Weak references to every lock new_lock made that is still in use (each removes itself when its lock goes).
# A plain set, copied in one C call (``tuple``) before it is looked at: other threads add to it at any time (a
# PydanticAI run makes a lock), and a ``WeakSet`` iterated in Python meanwhile fails ("Set changed size").
_LOCKS: "set[weakref.ref[Any]]" = set()


def new_lock() -> Any:
    """A ``threading.Lock`` that finalisers respect: while it is held, :func:`from_finaliser` defers its work.
    Every non-reentrant lock of the span layer, the instrumentors and the exporters is one of these."""
    lock = threading.Lock()
    _LOCKS.add(weakref.ref(lock, _LOCKS.discard))
    return lock


def _held() -> bool:
    for ref in tuple(_LOCKS):
        lock = ref()
        if lock is not None and lock.locked():
            return True
    return False


def _unsafe() -> bool:
    """Whether a finaliser's work must wait: the collector runs in this thread, or one of our locks is held (by
    this thread, perhaps: a lock does not say by which; waiting costs only promptness)."""
    return _collecting == _get_ident() or _held()


def _on_collection(phase: str, info: dict[str, Any]) -> None:
    global _collecting
    _collecting = _get_ident() if phase == "start" else None


gc.callbacks.append(_on_collection)


def from_finaliser(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
    """Run ``fn(*args, **kwargs)`` for a finaliser: now, or in the finaliser thread when the garbage collector
    is running in this thread or one of our locks is held (see the module docstring). Never raises; ``fn``'s own
    failure is logged once."""
    try:
        if _unsafe():
            _pending.put((fn, args, kwargs))  # SimpleQueue.put: safe from a finaliser (no Python-level lock)
            return
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a finaliser must never raise
        report_internal_error("finaliser", exc)


def prepare() -> None:
    """Start the finaliser thread if it is not running: called when a finaliser is set up (a wrapped stream,
    :func:`finalize`), never from one (starting a thread takes locks). One attribute read when it runs."""
    if _thread is None:
        _start()


def finalize(obj: Any, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> weakref.finalize:
    """``weakref.finalize(obj, fn, *args, **kwargs)`` whose callback goes through :func:`from_finaliser`; in a
    child forked after it was set up, it does nothing (see :data:`generation`)."""
    prepare()
    return weakref.finalize(obj, _finalise, generation, fn, *args, **kwargs)


def _finalise(set_up_in: int, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
    if set_up_in == generation:
        from_finaliser(fn, *args, **kwargs)


def settle(timeout: float = 5.0) -> bool:
    """Wait until the finaliser thread has run everything queued (after a ``gc.collect()``, for tests: no flush
    of ours calls it, so a span ended by queued work may miss a flush made at once); whether it has, within
    ``timeout`` seconds. Never call it from the finaliser thread or under one of our locks (it would wait out
    ``timeout``)."""
    prepare()
    done = threading.Event()
    _pending.put((done.set, (), {}))  # one thread runs the queue in order: what was queued before has run
    return done.wait(timeout)


def _start() -> None:
    global _thread
    with _start_lock:
        if _thread is None:
            thread = threading.Thread(target=_run, name="otel-agents-finalisers", daemon=True)
            thread.start()
            _thread = thread
            atexit.register(_drain)


def _run_one(item: tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]) -> None:
    fn, args, kwargs = item
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        report_internal_error("finaliser", exc)


def _run() -> None:
    while True:
        _run_one(_pending.get())


def _drain() -> None:
    """At exit: run what is still queued, in this thread."""
    while True:
        try:
            item = _pending.get_nowait()
        except queue.Empty:
            return
        _run_one(item)


# What a forked child resets (see in_forked_child): key → (weak reference to the owner, or None; the reset).
_RESETS: "dict[int, tuple[weakref.ref[Any] | None, Callable[..., Any]]]" = {}
_next_reset = itertools.count().__next__


def in_forked_child(reset: Callable[..., Any], owner: Any = None) -> None:
    """Call ``reset(owner)`` in every child this process forks from now on, while ``owner`` lives; without an
    ``owner``, ``reset()`` (module state). The one way the span layer, the instrumentors and the exporters forget
    in a forked child (``os.fork()``, ``multiprocessing``'s ``fork``, gunicorn's workers) what the parent holds:
    its open spans and runs are the parent's to end (ended in the child too, by an eviction, ``uninstrument()``
    or a run's end, they would be exported twice, once from each process), so the child starts with empty
    bookkeeping. ``owner`` is held weakly and the registration leaves with it: pass an unbound method
    (``SpanRegistry._forget``), so nothing here keeps the owner alive. Resets run in registration order, after
    our locks are released; one that raises is logged once, and the others still run."""
    key = _next_reset()
    ref = None if owner is None else weakref.ref(owner, lambda _, key=key: _RESETS.pop(key, None))
    _RESETS[key] = (ref, reset)


def _after_fork() -> None:
    """A forked child has no finaliser thread (nor the parent's queue), nor the threads that held our locks at the
    fork (a run in another thread, mid-bookkeeping): each lock is released in the child, or the child's first span
    would wait for it forever. What a lock guards is consistent between two bytecodes (a dict, a deque), so the
    child could read it as the parent left it; then what :func:`in_forked_child` registered forgets the parent's
    open spans and runs."""
    global _thread, _pending, _start_lock, generation
    _thread, _pending, _start_lock = None, queue.SimpleQueue(), threading.Lock()
    generation += 1
    for ref in tuple(_LOCKS):
        lock = ref()
        if lock is not None:
            _reinit(lock)
    for owner_ref, reset in list(_RESETS.values()):
        try:
            if owner_ref is None:
                reset()
            else:
                owner = owner_ref()
                if owner is not None:
                    reset(owner)
        except Exception as exc:  # noqa: BLE001 - a fork hook must never break the program's fork
            report_internal_error("fork.reset", exc)


def _reinit(lock: Any) -> None:
    """``lock`` unlocked, in a forked child (CPython's own at-fork reset, the one ``threading`` and ``logging`` use;
    an interpreter without it keeps the lock as it was)."""
    reinit = getattr(lock, "_at_fork_reinit", None)
    if reinit is not None:
        reinit()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
