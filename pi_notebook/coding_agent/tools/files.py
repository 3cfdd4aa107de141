"""Opening a file for a tool or a prompt: regular files only, never blocking, never read without a bound.

Opening a FIFO for reading waits until something writes to it (a tool, or ``--system @fifo``, would hang until
the stop button, and its thread forever); a character device such as ``/dev/zero`` never ends; a socket cannot
be opened at all. So what a path names is looked at first (``os.stat`` never blocks), the file is opened with
``O_NONBLOCK`` (a FIFO put there in between cannot block either) and what was opened is looked at again.

Files under ``/proc`` and ``/sys`` are regular files that report a size of 0 (or 4096) whatever they hold, and a
log may grow while it is read: no more than ``max(size, UNSIZED_LIMIT)`` bytes are read of any file
(:class:`BoundedReader`), so every read has a bound known before it starts.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

UNSIZED_LIMIT = 64 << 20
"""The most read of a file beyond the size it reports (``/proc`` and ``/sys`` files report 0 or 4096)."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # Windows has no FIFOs to wait on, and no O_NONBLOCK
_OPEN_FLAGS = _NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, from its ``st_mode``: ``"a FIFO"``, ``"a directory"``..."""
    return next((kind for test, kind in _KINDS if test(mode)), "a special file")


class NotRegularFileError(OSError):
    """The path names something other than a regular file: :attr:`kind` says what (see :func:`kind_of`)."""

    def __init__(self, path: str | os.PathLike[str], mode: int):
        self.kind = kind_of(mode)
        self.is_dir = stat.S_ISDIR(mode)
        self.path = os.fspath(path)
        super().__init__(f"{self.path} is not a regular file ({self.kind})")


class FileTooLargeError(OSError):
    """The file holds more than the reader takes: :attr:`size` (what it reports) and :attr:`limit`, in bytes."""

    def __init__(self, path: str | os.PathLike[str], size: int, limit: int):
        self.path, self.size, self.limit = os.fspath(path), size, limit
        super().__init__(f"{self.path} is larger than {limit} bytes")


def open_regular(path: str | os.PathLike[str], *, write: bool = False) -> tuple[BinaryIO, os.stat_result]:
    """Open the regular file at ``path`` for reading (``write``: reading and writing, in place) without ever
    blocking; return it with its ``fstat``. Anything else raises :class:`NotRegularFileError`, before it is
    opened; the ``OSError`` of ``os.stat`` or ``os.open`` otherwise."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(path, mode)
    fd = os.open(path, (os.O_RDWR if write else os.O_RDONLY) | _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # replaced between the look and the open
            raise NotRegularFileError(path, info.st_mode)
        if _NONBLOCK:
            os.set_blocking(fd, True)  # no effect on a regular file's reads; writes should not return short
        return os.fdopen(fd, "r+b" if write else "rb"), info
    except BaseException:
        os.close(fd)
        raise


def create_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for writing from its start (created or truncated) if it is missing or a regular file;
    anything else raises :class:`NotRegularFileError` without being opened (opening a FIFO for writing waits
    for a reader), a directory included."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # missing (or not reachable): os.open says why, or creates it
    if mode is not None and not stat.S_ISREG(mode):
        raise NotRegularFileError(path, mode)
    # O_NONBLOCK: a FIFO put there since the look fails with ENXIO instead of waiting for a reader.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _OPEN_FLAGS, 0o666)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(path, info.st_mode)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def read_limit(info: os.stat_result) -> int:
    """The most that is read of a file whose ``fstat`` is ``info``: its size, or :data:`UNSIZED_LIMIT` if larger."""
    return max(info.st_size, UNSIZED_LIMIT)


class BoundedReader:
    """``file`` read up to ``limit`` bytes; :attr:`cut` is true once a read stopped at the limit with more left."""

    def __init__(self, file: BinaryIO, limit: int):
        self.file, self.remaining, self.cut = file, limit, False

    def read(self, size: int) -> bytes:
        if self.remaining <= 0:
            self.cut = self.cut or bool(self.file.read(1))
            return b""
        data = self.file.read(min(size, self.remaining))
        self.remaining -= len(data)
        return data


def read_at_most(file: BinaryIO, limit: int, size: int) -> bytes:
    """Up to ``limit + 1`` bytes of ``file`` (one more than ``limit`` says it holds more), ``size`` being what
    it says it holds: read in one piece when that is right, in 1 MB pieces past it (``read(n)`` would set aside
    ``n`` bytes at once, however little the file holds)."""
    pieces: list[bytes] = []
    total, want = 0, max(size, 0) + 1
    while total <= limit:
        piece = file.read(min(want, limit + 1 - total))
        if not piece:
            break
        pieces.append(piece)
        total, want = total + len(piece), 1 << 20
    return b"".join(pieces)


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``, refused (:class:`FileTooLargeError`) if more than ``limit``;
    :class:`NotRegularFileError` for anything else (nothing is opened), an ``OSError`` if it cannot be read."""
    file, info = open_regular(path)
    with file:
        if info.st_size > limit:
            raise FileTooLargeError(path, info.st_size, limit)
        data = read_at_most(file, limit, info.st_size)
    if len(data) > limit:  # a /proc file reporting 0, or one that grew since
        raise FileTooLargeError(path, len(data), limit)
    return data
