"""How the built-in tools fail: the exception they raise, the abort checks, and Node-style OS error texts.

A tool fails by raising; the agent loop turns the exception's text into an ``is_error`` tool result that the
model reads. The texts therefore matter, and match Pi's: an aborted tool says ``Operation aborted`` and a
failed file system call reads like Node's (``ENOENT: no such file or directory, access '/abs/path'``).
"""

from __future__ import annotations

import asyncio
import errno
import inspect
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")

ABORTED = "Operation aborted"

# Node's wording for the errors a file tool meets in practice; others fall back to strerror.
_NODE_DESCRIPTIONS = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENOTDIR: "not a directory",
    errno.EEXIST: "file already exists",
    errno.ENOSPC: "no space left on device",
    errno.EROFS: "read-only file system",
}


class ToolError(Exception):
    """A tool failure; ``str(error)`` is exactly what the model is told."""


def is_aborted(signal: Any) -> bool:
    """True if ``signal`` (an ``AbortSignal``, a ``threading.Event`` or ``None``) has fired."""
    if signal is None:
        return False
    aborted = getattr(signal, "aborted", None)
    return bool(aborted) if aborted is not None else bool(signal.is_set())


def check_aborted(signal: Any) -> None:
    """Raise ``ToolError("Operation aborted")`` if ``signal`` has fired."""
    if is_aborted(signal):
        raise ToolError(ABORTED)


async def wait_aborted(signal: Any) -> None:
    """Return once ``signal`` fires (never, for ``None``)."""
    if signal is None:
        await asyncio.Event().wait()
        return
    wait = getattr(signal, "wait", None)
    if wait is not None and inspect.iscoroutinefunction(wait):
        await wait()
        return
    # A threading.Event has only a blocking wait(); polling keeps the event loop free.
    while not is_aborted(signal):
        await asyncio.sleep(0.05)


async def abortable(work: Awaitable[T], signal: Any) -> T:
    """Await ``work``, but raise ``ToolError("Operation aborted")`` as soon as ``signal`` fires.

    The work is cancelled on abort. Work running in a thread cannot be interrupted, so such work should
    also poll :func:`is_aborted` to stop early.
    """
    if is_aborted(signal):
        if inspect.iscoroutine(work):
            work.close()  # never started; closing it avoids a "never awaited" warning
        raise ToolError(ABORTED)
    task = asyncio.ensure_future(work)
    if signal is None:
        return await task
    stopper = asyncio.ensure_future(wait_aborted(signal))
    try:
        done, _ = await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if task in done:
        return task.result()
    task.cancel()
    raise ToolError(ABORTED)


def os_error_message(error: OSError, syscall: str, path: str | None = None) -> str:
    """Describe ``error`` the way Node does: ``<CODE>: <description>, <syscall> '<path>'``."""
    number = error.errno or errno.EIO
    code = errno.errorcode.get(number, "EIO")
    description = _NODE_DESCRIPTIONS.get(number) or (error.strerror or str(error)).lower()
    target = path if path is not None else error.filename
    return f"{code}: {description}, {syscall} '{target}'" if target else f"{code}: {description}, {syscall}"
