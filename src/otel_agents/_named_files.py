"""Reading a file whose path came from input data (a field of a report), not from the user's command line.

Such a path is opened only as a regular file and read only up to a size limit, so a hostile or careless one
(``/dev/zero``, a FIFO with no writer, a terminal, a file of gigabytes) is a clear error naming the field, never
a hang or a memory blow-up. Paths the user gives on the command line are read as given (``<(...)`` is a pipe),
up to :data:`MAX_DOCUMENT_BYTES` (:func:`read_document`: ``ecp report /dev/zero`` is an error, not all memory).
"""

from __future__ import annotations

import os
import stat

MAX_NAMED_FILE_BYTES = 16 * 1024 * 1024  # far above any manifest; bounds what one field can make us read
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024  # a report or manifest the user names: far above any (a report is kB-MB)


class NamedFileError(ValueError):
    """A path named in input data that is not a regular file, or is over the size limit (the message names the
    field and the path)."""


def read_named_file(path: str | os.PathLike[str], field: str, limit: int = MAX_NAMED_FILE_BYTES) -> bytes:
    """The bytes of ``path``, named by ``field`` of some input (e.g. ``report field "manifest"``), at most
    ``limit`` bytes.

    Raises:
        OSError: it cannot be opened or read (the message names the field and the path).
        NamedFileError: it is not a regular file, or holds more than ``limit`` bytes.
    """
    name = os.fspath(path)
    # O_NONBLOCK: opening a FIFO that no one writes to returns at once (it is refused below) instead of waiting.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise type(exc)(f"{field}: cannot read {name}: {exc.strerror or exc}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NamedFileError(f"{field}: {name} is not a regular file ({_kind(status.st_mode)}); not read")
        if status.st_size > limit:
            raise NamedFileError(f"{field}: {name} is over {limit} bytes ({status.st_size}); not read")
        chunks, size = [], 0
        while size <= limit:  # read to the end, not trusting st_size: the file may grow while it is read
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise NamedFileError(f"{field}: {name} is over {limit} bytes; not read")
        return b"".join(chunks)
    except OSError as exc:
        raise type(exc)(f"{field}: cannot read {name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_document(path: str | os.PathLike[str], limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a whole-document file the user named (a report, a manifest), of any kind (a pipe too), read
    1 MiB at a time up to ``limit`` bytes.

    Raises:
        OSError: it cannot be opened or read.
        NamedFileError: it holds more than ``limit`` bytes (``/dev/zero``): ``PATH is over LIMIT bytes; not read``.
    """
    chunks, size = [], 0
    with open(path, "rb") as f:
        while size <= limit and (chunk := f.read(min(1 << 20, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
    if size > limit:
        raise NamedFileError(f"{os.fspath(path)} is over {limit} bytes; not read")
    return b"".join(chunks)


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "of an unknown kind"


__all__ = ["MAX_DOCUMENT_BYTES", "MAX_NAMED_FILE_BYTES", "NamedFileError", "read_document", "read_named_file"]
