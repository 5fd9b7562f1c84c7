"""What a process forked by a served agent must not inherit from the server.

An agent may fork: ``os.fork()``, ``multiprocessing`` with the ``fork`` start method, a
fork-started ``Pool``. The child is a copy of the server process, and without care it keeps

* the server's signal handling: asyncio's handlers for SIGTERM/SIGINT do nothing by
  themselves (so ``Process.terminate()`` and ``Pool.__exit__`` wait forever for a child that
  ignores SIGTERM), and its wakeup fd (``signal.set_wakeup_fd``) is the *server's* event
  loop, so a signal sent to the child stops the server;
* the protocol's descriptors: the copy of stdout that carries responses, the listening
  socket and client connections, so a client never sees end of file while the child lives.

Every forked child runs :func:`_after_in_child` (registered with the span layer's
:func:`~otel_agents._spans.in_forked_child`, which runs at :func:`os.register_at_fork`; ``subprocess``
does not run it: it execs at once). It clears the wakeup fd, gives SIGTERM and SIGINT back the
handlers the process had before the server took them (:func:`restore_in_child`; Python's
defaults), and points our descriptors at ``/dev/null`` (:func:`detach_in_child`): ``dup2``
rather than ``close``, so a number that a file or socket object still names is never reused
for another file in the child. A child that returns from the step into the server's worker
thread (``os.fork()`` with no ``os._exit``) is ended there (:func:`end_forked_child`), as
``multiprocessing`` ends its children, rather than living on as a copy of the server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any, Callable, Iterable

from .._spans.finalisers import in_forked_child

FdSource = Callable[[], Iterable[int]]

_handlers: dict[int, Any] = {}   # signal → the handler a forked child gets back
_sources: dict[int, FdSource] = {}  # id → a callable giving descriptors to detach in a child
_registered = False


def _register() -> None:
    global _registered
    if not _registered:
        in_forked_child(_after_in_child)
        _registered = True


def restore_in_child(signum: int, handler: Any) -> None:
    """In forked children, set ``signum``'s handler back to ``handler`` (what ``signal.signal``
    returned when the server installed its own; ``None``, a handler not set from Python, means
    ``SIG_DFL``)."""
    _register()
    _handlers[signum] = signal.SIG_DFL if handler is None else handler


def detach_in_child(source: int | FdSource) -> Callable[[], None]:
    """In forked children, point a descriptor of ours at ``/dev/null``: ``source`` is the
    descriptor, or a callable returning the descriptors to detach at fork time (connections
    come and go). Returns a function that stops doing so."""
    _register()
    get: FdSource = (lambda fd=source: (fd,)) if isinstance(source, int) else source
    key = id(get)
    _sources[key] = get
    return lambda: _sources.pop(key, None) and None


def forget() -> None:
    """Stop resetting anything in forked children (the server has stopped: its descriptor
    numbers may be reused by the process for other files)."""
    _handlers.clear()
    _sources.clear()


def end_forked_child(error: BaseException | None) -> None:
    """End a forked child that returned into the server's code: exit status 0, 1 when the step
    raised (a ``SystemExit``'s integer code as is). ``os._exit``: the child runs none of the
    parent's exit handlers, and exports none of the parent's spans it holds copies of."""
    code = 0
    if error is not None:
        code = error.code if isinstance(error, SystemExit) and isinstance(error.code, int) else 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _after_in_child() -> None:
    try:
        with contextlib.suppress(ValueError):  # not the main thread: nothing to clear
            signal.set_wakeup_fd(-1)
        for signum, handler in _handlers.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, handler)
        fds: set[int] = set()
        for get in list(_sources.values()):
            with contextlib.suppress(Exception):
                fds.update(fd for fd in get() if isinstance(fd, int) and fd > 2)
        if fds:
            null = os.open(os.devnull, os.O_RDWR)
            try:
                for fd in fds:
                    with contextlib.suppress(OSError):
                        os.dup2(null, fd, inheritable=False)
            finally:
                os.close(null)
    except Exception:  # noqa: BLE001 - a fork hook must never break the agent's fork
        pass
