"""The shell executor shared by the ``bash`` tool and the notebook's ``%bash`` magic (``bash-executor.ts``).

:func:`run_shell` runs ``bash -c <command>`` as one process tree that can be stopped together (a new session on
POSIX, a new console process group on Windows: :mod:`.process_tree`). stdin is ``/dev/null``; stderr is merged
into stdout in arrival order. Output is cleaned and kept with bounded memory by
:class:`~.shell_output.OutputCollector`; the result holds the tail-truncated output (``truncate_tail``: 2000 lines
/ 50 KB) and, for large output, the temp file with all of it.

A non-zero exit status is data (``exit_code``), not an exception. Cancellation (``signal`` or ``timeout``)
escalates SIGINT → SIGTERM → SIGKILL to the process group (on Windows: Ctrl+Break, then ``taskkill /T /F``) and
reports ``cancelled=True, exit_code=None``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..truncate import TruncationResult
from .errors import is_aborted, wait_aborted
from .process_tree import kill_tree_now, popen_options, read_output, stop_tree
from .shell_output import OutputCollector

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
    """``/bin/bash``, else ``bash`` on PATH, else ``sh`` (independent of ``$SHELL``, as in Pi). On Windows, as
    Pi's ``getShellConfig``: Git Bash where Git for Windows installs it, else ``bash.exe`` on PATH (Cygwin, MSYS2,
    WSL); ``FileNotFoundError`` saying what to install if there is none."""
    if sys.platform == "win32":
        return _windows_bash(os.environ)
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "sh"


def _windows_bash(
    environ: Mapping[str, str],
    exists: Callable[[str], bool] = os.path.isfile,
    which: Callable[[str], str | None] = shutil.which,
) -> str:
    places = [
        f"{environ[key]}\\Git\\bin\\bash.exe" for key in ("ProgramFiles", "ProgramFiles(x86)") if environ.get(key)
    ]
    for place in places:
        if exists(place):
            return place
    on_path = which("bash.exe")
    if on_path:
        return on_path
    searched = "".join(f"\n  {place}" for place in places)
    raise FileNotFoundError(
        "No bash shell found. Options:\n"
        "  1. Install Git for Windows: https://git-scm.com/download/win\n"
        "  2. Add your bash to PATH (Cygwin, MSYS2, etc.)\n\n"
        f"Searched Git Bash in:{searched}"
    )


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
    with SIGINT, then SIGTERM, then SIGKILL to its process group (Windows: Ctrl+Break, then ``taskkill /T /F``).
    If the calling task is cancelled, the group is killed and ``CancelledError`` propagates. A signal that is
    already aborted returns a cancelled result without starting anything. ``env`` replaces the environment
    (default: inherit). Raises ``FileNotFoundError`` if ``cwd`` is not a directory.
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
        **popen_options(),
    )
    assert proc.stdout is not None
    progress = _Throttle(on_progress, lambda: _partial_result(collector)) if on_progress else None
    eof: asyncio.Future[None] = loop.create_future()
    last_data = [time.monotonic()]

    def deliver(data: bytes) -> bool:
        """One chunk of output (``b""``: the end of it), on the loop; False: read no more."""
        if eof.done():
            return False
        if not data:
            eof.set_result(None)
            return False
        try:
            last_data[0] = time.monotonic()
            text = collector.feed(data)
            if on_output is not None and text:
                on_output(text)
            if progress is not None:
                progress.poke()
        except Exception as exc:  # an on_output/on_progress callback failed: surface it to the caller
            eof.set_exception(exc)
            return False
        return True

    stop_reading = read_output(loop, proc, deliver)
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
                kill_tree_now(proc)
                eof.result()  # re-raises the callback's exception
            stopped = [stoppers[f] for f in done if f in stoppers]
            if stopped and not exited.done():
                stop_reason = "timeout" if "timeout" in stopped else "aborted"
                await stop_tree(proc, exited)
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
        kill_tree_now(proc)
        raise
    finally:
        for future in (*stoppers, exited):
            future.cancel()
        if progress is not None:
            progress.cancel()
        stop_reading()
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


async def _drain(eof: asyncio.Future[None], last_data: list[float]) -> None:
    """Read to EOF, unless a leftover background process keeps the pipe open (and quiet, or for too long)."""
    started = time.monotonic()
    while not eof.done():
        await asyncio.wait({eof}, timeout=_DRAIN_IDLE / 2)
        now = time.monotonic()
        if not eof.done() and (now - last_data[0] > _DRAIN_IDLE or now - started > _DRAIN_CAP):
            return
    eof.result()
