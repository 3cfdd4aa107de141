"""The shell executor shared by the ``bash`` tool and the notebook's ``%bash`` magic (``bash-executor.ts``).

:func:`run_shell` runs ``bash -c <command>`` in a new session, so the command and everything it starts form
one process group that can be signalled together. stdin is ``/dev/null``; stderr is merged into stdout in
arrival order. Output is cleaned and kept with bounded memory by :class:`~.shell_output.OutputCollector`;
the result holds the tail-truncated output (``truncate_tail``: 2000 lines / 50 KB) and, for large output,
the temp file with all of it.

A non-zero exit status is data (``exit_code``), not an exception. Cancellation (``signal`` or ``timeout``)
escalates SIGINT → SIGTERM → SIGKILL to the process group and reports ``cancelled=True, exit_code=None``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import signal as signals
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..truncate import TruncationResult
from .errors import is_aborted, wait_aborted
from .shell_output import OutputCollector

_READ_SIZE = 65536
_READS_PER_WAKEUP = 4
_PIPE_SIZE = 1 << 20
# Escalation: (signal, seconds to wait for the process group to go before sending the next one).
_ESCALATION = ((signals.SIGINT, 0.75), (signals.SIGTERM, 1.5), (signals.SIGKILL, 1.0))
# After the shell exits, a background child (``cmd &``) may still hold the pipe open; stop reading once it
# has been quiet this long, or after the cap, rather than wait for it to finish.
_DRAIN_IDLE = 0.2
_DRAIN_CAP = 2.0
_PROGRESS_INTERVAL = 0.1


@dataclass(frozen=True)
class ShellResult:
    """What :func:`run_shell` returns (Pi's ``BashResult``, plus ``timed_out`` and the truncation facts)."""

    output: str
    """Cleaned, tail-truncated output (stdout and stderr merged); no truncation notice is added."""
    exit_code: int | None
    """The exit status; ``None`` when cancelled. A shell killed by signal N reports ``128 + N``."""
    cancelled: bool = False
    """The command was stopped by the abort signal or the timeout."""
    truncated: bool = False
    """``output`` is only the tail of what the command printed."""
    full_output_path: str | None = None
    """The temp file with all of the cleaned output: set once it exceeded ``DEFAULT_MAX_BYTES``, or was
    truncated."""
    timed_out: bool = False
    """The command was stopped because ``timeout`` expired (``cancelled`` is then also true)."""
    truncation: TruncationResult | None = None
    """``truncate_tail`` of the output; its ``total_lines`` / ``total_bytes`` count everything printed."""
    last_line_bytes: int = 0
    """UTF-8 size of the whole last line, for the "line is N KB" notice when only its end is shown."""
    full_output_error: str | None = None
    """Why the full output could not be saved (the temp folder is full...); then ``full_output_path`` is None."""


def shell_path() -> str:
    """``/bin/bash``, else ``bash`` on PATH, else ``sh`` (independent of ``$SHELL``, as in Pi)."""
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "sh"


async def run_shell(
    command: str,
    *,
    cwd: str | os.PathLike[str],
    signal: Any = None,
    on_output: Callable[[str], None] | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    on_progress: Callable[[ShellResult], None] | None = None,
    on_record: Callable[[str], None] | None = None,
) -> ShellResult:
    """Run ``command`` with ``bash -c`` in ``cwd`` and collect its merged output.

    ``on_output(text)`` receives each chunk as the process prints it, decoded but otherwise raw — ANSI
    sequences and ``\\r`` kept — for a live terminal display; the recorded ``output`` is cleaned.
    ``on_progress(partial)`` receives, at most every 0.1 s, a :class:`ShellResult` snapshot of the output so
    far (tail-truncated, ``exit_code=None``): what a tool streams to its UI. ``on_record(text)`` receives the
    cleaned output piece by piece, as it is recorded (all of it, in order: what the full-output file holds).

    ``signal`` (an ``AbortSignal``) or ``timeout`` (seconds; ``None`` or ``<= 0`` for none) stops the command
    with SIGINT, then SIGTERM, then SIGKILL to its process group. If the calling task is cancelled, the group
    is killed and ``CancelledError`` propagates. A signal that is already aborted returns a cancelled result
    without starting anything. ``env`` replaces the environment (default: inherit). Raises
    ``FileNotFoundError`` if ``cwd`` is not a directory.
    """
    if is_aborted(signal):
        return ShellResult(output="", exit_code=None, cancelled=True)
    if not os.path.isdir(cwd):
        raise FileNotFoundError(f"Working directory does not exist: {os.fspath(cwd)}")

    loop = asyncio.get_running_loop()
    collector = OutputCollector(on_record)
    # Popen rather than asyncio's subprocess API: there, wait() returns only once the pipe closes, which a
    # background child (``server &``) can hold open for as long as it lives.
    proc = subprocess.Popen(
        [shell_path(), "-c", command],
        cwd=os.fspath(cwd),
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    if _PIPE_SIZE:
        # A larger pipe lets a fast writer run ahead instead of waiting for every 64 KB read.
        with contextlib.suppress(AttributeError, OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    progress = _Throttle(on_progress, lambda: _partial_result(collector)) if on_progress else None
    eof: asyncio.Future[None] = loop.create_future()
    last_data = [time.monotonic()]

    def on_readable() -> None:
        # A few reads per wake-up (fewer loop iterations for a fast writer), never more: a fast writer cannot
        # starve the event loop.
        try:
            for _ in range(_READS_PER_WAKEUP):
                try:
                    data = os.read(fd, _READ_SIZE)
                except BlockingIOError:
                    return
                except OSError:
                    data = b""
                if not data:
                    loop.remove_reader(fd)
                    eof.set_result(None)
                    return
                last_data[0] = time.monotonic()
                text = collector.feed(data)
                if on_output is not None and text:
                    on_output(text)
                if progress is not None:
                    progress.poke()
                if len(data) < _READ_SIZE:
                    return  # drained: the next read would only fail
        except Exception as exc:  # an on_output/on_progress callback failed: surface it to the caller
            loop.remove_reader(fd)
            if not eof.done():
                eof.set_exception(exc)

    loop.add_reader(fd, on_readable)
    exited = asyncio.ensure_future(_wait_exit(proc))
    stoppers: dict[asyncio.Future[Any], str] = {}
    if signal is not None:
        stoppers[asyncio.ensure_future(wait_aborted(signal))] = "aborted"
    if timeout is not None and timeout > 0:
        stoppers[asyncio.ensure_future(asyncio.sleep(timeout))] = "timeout"
    stop_reason: str | None = None
    try:
        waiting: set[asyncio.Future[Any]] = {exited, eof, *stoppers}
        while not exited.done():
            done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if eof in done and eof.exception() is not None:
                _kill_now(proc)
                eof.result()  # re-raises the callback's exception
            stopped = [stoppers[f] for f in done if f in stoppers]
            if stopped and not exited.done():
                stop_reason = "timeout" if "timeout" in stopped else "aborted"
                await _terminate_group(proc.pid, exited)
                break
        await exited
        await _drain(eof, last_data)
        tail = collector.finish()
        if on_output is not None and tail:
            on_output(tail)
        truncation = collector.snapshot()  # before close(): it may still create the temp file
    except BaseException:
        # The caller gave up on us (task cancelled, KeyboardInterrupt) or something failed: either way nothing
        # may keep running in the background.
        _kill_now(proc)
        raise
    finally:
        for future in (*stoppers, exited):
            future.cancel()
        if progress is not None:
            progress.cancel()
        loop.remove_reader(fd)
        proc.stdout.close()
        collector.close()

    cancelled = stop_reason is not None
    code = proc.returncode
    return ShellResult(
        output=truncation.content,
        exit_code=None if cancelled or code is None else (128 - code if code < 0 else code),
        cancelled=cancelled,
        truncated=truncation.truncated,
        full_output_path=collector.temp_path,
        timed_out=stop_reason == "timeout",
        truncation=truncation,
        last_line_bytes=collector.last_line_bytes,
        full_output_error=collector.temp_error,
    )


def _partial_result(collector: OutputCollector) -> ShellResult:
    truncation = collector.snapshot()
    return ShellResult(
        output=truncation.content,
        exit_code=None,
        truncated=truncation.truncated,
        full_output_path=collector.temp_path,
        truncation=truncation,
        last_line_bytes=collector.last_line_bytes,
    )


class _Throttle:
    """Calls ``sink(make())`` at most every ``_PROGRESS_INTERVAL`` seconds; the last poke is never lost."""

    def __init__(self, sink: Callable[[ShellResult], None], make: Callable[[], ShellResult]) -> None:
        self._sink, self._make = sink, make
        self._last = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        wait = self._last + _PROGRESS_INTERVAL - time.monotonic()
        if wait <= 0:
            self._fire()
        elif self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(wait, self._fire)

    def _fire(self) -> None:
        self.cancel()
        self._last = time.monotonic()
        self._sink(self._make())

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


async def _wait_exit(proc: subprocess.Popen[bytes]) -> int:
    """Wait for the shell itself to exit (not for the pipe to close) and reap it."""
    loop = asyncio.get_running_loop()
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        # Linux: the pidfd becomes readable the moment the process exits.
        ready: asyncio.Future[None] = loop.create_future()

        def exited() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(pidfd, exited)
        try:
            await ready
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        return proc.wait()
    delay = 0.001
    while proc.poll() is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


def _kill_now(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the whole group at once and reap the shell (it dies within moments)."""
    _signal_group(proc.pid, signals.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(0.5)


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


async def _drain(eof: asyncio.Future[None], last_data: list[float]) -> None:
    """Read to EOF, unless a leftover background process keeps the pipe open (and quiet, or for too long)."""
    started = time.monotonic()
    while not eof.done():
        await asyncio.wait({eof}, timeout=_DRAIN_IDLE / 2)
        now = time.monotonic()
        if not eof.done() and (now - last_data[0] > _DRAIN_IDLE or now - started > _DRAIN_CAP):
            return
    eof.result()
