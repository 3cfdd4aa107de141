"""The session file's writer lock: one writer per file, whether the other one is in this process or another.

POSIX: ``flock`` on the open file description, so a second ``open()`` in this process conflicts too.

Windows: ``msvcrt.locking`` on one byte far past the end of the file. Its byte-range locks belong to the handle
(a second ``open()`` in this process conflicts too), and they are mandatory: a lock on the file's data would make
every reader fail, one past any data stops only a second writer. It is released before the file is closed
(Windows frees the locks of a closed handle only "when resources allow", so an immediate reopen could fail).

Which one applies is decided by the module the platform has (``fcntl``, else ``msvcrt``); with neither, there is
no lock. ``tests/test_windows_import.py`` runs the Windows way on Linux with ``fcntl`` hidden.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

_msvcrt: Any = None
if fcntl is None:
    try:
        _msvcrt = importlib.import_module("msvcrt")  # (imported by name: its stub declares nothing off Windows)
    except ImportError:
        _msvcrt = None

# Where the Windows lock sits: 1 TiB, past the end of any session file (as SQLite locks bytes past its data).
WINDOWS_LOCK_OFFSET = 1 << 40
_HELD_ERRNOS = {errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES, errno.EDEADLK, getattr(errno, "EDEADLOCK", -1)}


class WriterLockHeld(Exception):
    """Another open file (in this process or another) holds the writer lock."""


def lock_writer(fd: int) -> None:
    """Take the exclusive writer lock on the open file ``fd`` without waiting; it is released when ``fd`` closes
    (and by :func:`unlock_writer`). :class:`WriterLockHeld` if it is taken; ``OSError`` if locking failed for
    another reason (a file system without locks)."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                raise WriterLockHeld(str(e)) from e
            raise
    elif _msvcrt is not None:
        try:
            _at_lock_byte(fd, lambda: _msvcrt.locking(fd, _msvcrt.LK_NBLCK, 1))
        except OSError as e:
            if e.errno in _HELD_ERRNOS:
                raise WriterLockHeld(str(e)) from e
            raise


def unlock_writer(fd: int) -> None:
    """Release the lock now, before ``fd`` is closed (Windows; on POSIX closing releases it at once). A lock that
    was never taken (taking it failed with a warning) is no error: closing is all that is left to do."""
    if fcntl is None and _msvcrt is not None:
        with contextlib.suppress(OSError):
            _at_lock_byte(fd, lambda: _msvcrt.locking(fd, _msvcrt.LK_UNLCK, 1))


def _at_lock_byte(fd: int, call: Any) -> None:
    """``call()`` with the file position on the lock byte (msvcrt locks from the position), then back at the end
    (where the file, opened for appending, writes anyway)."""
    os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
    try:
        call()
    finally:
        os.lseek(fd, 0, os.SEEK_END)
