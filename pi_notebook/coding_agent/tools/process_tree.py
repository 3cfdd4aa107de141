"""A shell command as one process tree: how it is started, how its output is read, how it is stopped.

POSIX: the command runs in a new session (``start_new_session``), so it and everything it starts form one process
group. The event loop watches its pipe (``add_reader``). Stopping it sends SIGINT, then SIGTERM, then SIGKILL to
the group, moving on as soon as every member is gone.

Windows has no process groups to signal, and its event loops watch sockets, not pipes. The command starts in a
new console process group (``CREATE_NEW_PROCESS_GROUP``) and a thread reads its pipe. Stopping it sends
CTRL_BREAK_EVENT to that group (the console's Ctrl+Break: the gentle stop, as SIGINT is), then ends the shell and
everything it started with ``taskkill /T /F`` (what Pi's ``killProcessTree`` runs on Windows). A child that
ignores Ctrl+Break and outlives the shell is not found: Windows keeps no group to find it by.

Which way applies is decided by what the platform has (``os.killpg``), not by its name: the Windows way is then
exercised on Linux with the POSIX functions hidden (``tests/test_windows_import.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: only the pipe size is lost
    fcntl = None  # type: ignore[assignment]

PROCESS_GROUPS = hasattr(os, "killpg")
"""POSIX process groups (and pipes an event loop can watch); False on Windows."""

_READ_SIZE = 65536
_READS_PER_WAKEUP = 4
_PIPE_SIZE = 1 << 20
# Escalation: (signal, seconds to wait for the process group to go before sending the next one).
_ESCALATION = (
    ((signal.SIGINT, 0.75), (signal.SIGTERM, 1.5), (signal.SIGKILL, 1.0)) if PROCESS_GROUPS else ()
)  # fmt: skip
# Windows: the console's Ctrl+Break (absent elsewhere), how long it may take, and then taskkill's.
_CTRL_BREAK: int | None = getattr(signal, "CTRL_BREAK_EVENT", None)
_BREAK_GRACE = 1.5
_KILL_GRACE = 1.0
_TASKKILL_TIMEOUT = 10.0
# Chunks the reading thread may have handed to the loop and not yet seen taken: a fast writer waits for the loop.
_CHUNKS_IN_FLIGHT = 4

Deliver = Callable[[bytes], bool]
"""``deliver(chunk)`` on the event loop, ``b""`` at the end of the output; it returns False to stop reading."""


def popen_options() -> dict[str, Any]:
    """The ``subprocess.Popen`` arguments that make the command one tree that :func:`stop_tree` can stop."""
    if PROCESS_GROUPS:
        return {"start_new_session": True}
    new_group = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    return {"creationflags": new_group} if new_group else {}


def read_output(loop: asyncio.AbstractEventLoop, proc: subprocess.Popen[bytes], deliver: Deliver) -> Callable[[], None]:
    """Hand ``proc``'s stdout to ``deliver`` chunk by chunk, on ``loop``; returns the function that stops reading.

    ``proc.stdout`` stays the caller's to close (on Windows the thread reads a duplicate, which it closes itself,
    never under a read in progress)."""
    assert proc.stdout is not None
    if PROCESS_GROUPS:
        return _watch_pipe(loop, proc.stdout.fileno(), deliver)
    return _read_in_thread(loop, os.dup(proc.stdout.fileno()), deliver)


def _watch_pipe(loop: asyncio.AbstractEventLoop, fd: int, deliver: Deliver) -> Callable[[], None]:
    os.set_blocking(fd, False)
    if _PIPE_SIZE and fcntl is not None:
        # A larger pipe lets a fast writer run ahead instead of waiting for every 64 KB read.
        with contextlib.suppress(AttributeError, OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)

    def on_readable() -> None:
        # A few reads per wake-up (fewer loop iterations for a fast writer), never more: a fast writer cannot
        # starve the event loop.
        for _ in range(_READS_PER_WAKEUP):
            try:
                data = os.read(fd, _READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                loop.remove_reader(fd)
                deliver(data)
                return
            if not deliver(data):
                loop.remove_reader(fd)
                return
            if len(data) < _READ_SIZE:
                return  # drained: the next read would only fail

    loop.add_reader(fd, on_readable)

    def stop() -> None:
        loop.remove_reader(fd)

    return stop


def _read_in_thread(loop: asyncio.AbstractEventLoop, fd: int, deliver: Deliver) -> Callable[[], None]:
    slots = threading.Semaphore(_CHUNKS_IN_FLIGHT)
    stopped = threading.Event()

    def hand_over(data: bytes) -> None:  # on the loop
        slots.release()
        if not stopped.is_set() and not deliver(data):
            stopped.set()

    def read() -> None:
        try:
            while True:
                slots.acquire()
                if stopped.is_set():
                    return
                try:
                    data = os.read(fd, _READ_SIZE)
                except OSError:
                    data = b""
                if stopped.is_set():
                    return  # closing our end now tells a writer left behind that nobody reads (a broken pipe)
                try:
                    loop.call_soon_threadsafe(hand_over, data)
                except RuntimeError:  # the loop is closed: nobody is waiting for the output any more
                    return
                if not data:
                    return
        finally:
            os.close(fd)

    threading.Thread(target=read, name="pi-shell-output", daemon=True).start()

    def stop() -> None:
        stopped.set()
        slots.release()  # a thread waiting for a slot sees the stop at once

    return stop


async def stop_tree(proc: subprocess.Popen[bytes], exited: asyncio.Future[Any]) -> None:
    """Stop the command and what it started, gently first; ``exited`` completes when the shell has exited."""
    if PROCESS_GROUPS:
        await _terminate_group(proc.pid, exited)
        return
    if _CTRL_BREAK is not None and _send_break(proc.pid, _CTRL_BREAK):
        await asyncio.wait({exited}, timeout=_BREAK_GRACE)
        if exited.done():
            return
    await asyncio.get_running_loop().run_in_executor(None, _kill_tree, proc)
    await asyncio.wait({exited}, timeout=_KILL_GRACE)


def kill_tree_now(proc: subprocess.Popen[bytes]) -> None:
    """Kill the whole tree at once and reap the shell (it dies within moments)."""
    if PROCESS_GROUPS:
        _signal_group(proc.pid, signal.SIGKILL)
    else:
        _kill_tree(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(0.5)


# --- POSIX: the process group ---------------------------------------------------------------------------------


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the process group; False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # Some member changed credentials (setuid); signal at least the shell itself.
        try:
            os.kill(pgid, sig)
        except ProcessLookupError:
            return False
    return True


def _group_alive(pgid: int) -> bool:
    """Whether the group still has a running member. Killed orphans stay zombies until init reaps them,
    which a container's PID 1 may do late; on Linux, /proc tells them apart from live processes."""
    if not _signal_group(pgid, 0):
        return False
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return True  # no /proc: trust kill(0), zombies included
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue  # exited while we looked
        # After "pid (comm) ": state, ppid, pgrp. comm may contain spaces and parentheses.
        state, _ppid, pgrp = stat[stat.rfind(b")") + 2 :].split()[:3]
        if int(pgrp) == pgid and state not in (b"Z", b"X"):
            return True
    return False


async def _terminate_group(pgid: int, exited: asyncio.Future[Any]) -> None:
    """SIGINT, then SIGTERM, then SIGKILL the group, moving on as soon as every member is gone."""
    for sig, grace in _ESCALATION:
        if not _signal_group(pgid, sig):
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            await asyncio.sleep(0.02)
            # The shell counts as a member (a zombie) until it has been reaped, hence ``exited`` first.
            if exited.done() and not _group_alive(pgid):
                return


# --- Windows: the console group and the tree ------------------------------------------------------------------


def _send_break(pid: int, event: int) -> bool:
    """Ctrl+Break to the console process group the shell leads; False if there is no console to send it through
    (a kernel started without one): then taskkill is the only way."""
    try:
        os.kill(pid, event)
    except OSError:
        return False
    return True


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """``taskkill /T /F``: the shell and every process it started, forcibly; then the shell itself, should taskkill
    be missing or fail. (Popen holds the shell's handle, so its pid cannot have been reused.)"""
    taskkill = shutil.which("taskkill")
    if taskkill is not None and proc.poll() is None:
        # Should it fail or hang, what remains is TerminateProcess on the shell, below (its children may live on).
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                [taskkill, "/T", "/F", "/PID", str(proc.pid)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=_TASKKILL_TIMEOUT,
                check=False,
                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # no console window flashes up
            )
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):  # it exited between the two calls
            proc.kill()
