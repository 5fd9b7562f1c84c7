"""Append JSON lines to a file shared by threads and forked worker processes.

Both file exporters (OTLP/JSON traces, ECP envelopes) write through this. The file is opened with
``O_APPEND`` and every line goes out in one ``write(2)`` of the whole line, so lines from several
threads, or from the worker processes of a pre-forking server (gunicorn, uWSGI, ``multiprocessing``
with ``fork``) that inherited the file, land whole, one after the other, never interleaved: POSIX
places each ``O_APPEND`` write at the end of the file, and Linux and macOS do not interleave two
writes to a regular file on a local file system. (Not on NFS, whose appends are not atomic: give
each process its own file there.) Readers of these files (``otel-agents fold``) accept lines in any
order, so one shared file per exporter is the design; no per-process files.

Nothing is buffered in the process, so a worker that dies loses nothing already written, and there
is nothing to flush at fork. The lock is re-made in a forked child (a lock held by another thread
at fork time would stay held there forever).
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Iterator

from .._spans.finalisers import in_forked_child


def file_setting(path: str | os.PathLike[str] | None, variable: str, default: str) -> tuple[str, str]:
    """The file an exporter appends to — ``path`` if given, else the environment ``variable``, else
    ``default`` — and how an error names it: ``path='…'``, ``VARIABLE='…'`` or the default's ``repr``."""
    if path:
        return os.fspath(path), f"path={os.fspath(path)!r}"
    if os.environ.get(variable):
        return os.environ[variable], f"{variable}={os.environ[variable]!r}"
    return default, repr(default)


@contextlib.contextmanager
def naming(setting: str, what: str) -> Iterator[None]:
    """Re-raise an ``OSError`` of opening a file (a directory, no permission) as the same type, its
    message saying which setting (:func:`file_setting`) and what could not be appended to it."""
    try:
        yield
    except OSError as exc:
        raise type(exc)(exc.errno, f"{setting}: cannot append {what} to it: {exc.strerror or exc}") from exc


class JsonLinesAppender:
    """Appends lines to ``path``; each :meth:`append` is one atomic append.

    Args:
        path: the file; created (with its directory) if missing, appended to otherwise.

    Raises:
        OSError: the directory cannot be created or the file cannot be opened for appending.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        self._fd: int | None = os.open(self.path, flags, 0o666)  # the umask applies, as for open(path, "a")
        self._lock = threading.Lock()
        in_forked_child(JsonLinesAppender._after_fork, self)

    def append(self, line: str) -> bool:
        """Write ``line`` plus a newline (UTF-8) at the end of the file; ``False`` once closed.

        Raises:
            OSError: the write failed (disk full...); the caller decides how to report it.
        """
        data = memoryview((line + "\n").encode("utf-8"))
        with self._lock:
            if self._fd is None:
                return False
            while data:  # a regular file takes the whole line at once; loop only for a short write
                data = data[os.write(self._fd, data):]
        return True

    def close(self) -> None:
        """Close the file (idempotent); later appends return ``False``."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
