"""Stop code that runs too long, on the thread that runs it (the kernel's main thread, for the notebook's tools).

On the main thread of a platform with ``SIGALRM`` (Linux, macOS) a real-time timer raises :class:`TimeLimitExceeded`
in the code, even in a ``time.sleep`` or a blocking read (the signal interrupts the system call, as the stop
button's SIGINT does). Elsewhere (Windows, another thread) the exception is set on the thread asynchronously: it
is raised at the next Python bytecode, so code blocked in a C call stops only when that call returns.

:class:`TimeLimitExceeded` is a ``BaseException``, as ``KeyboardInterrupt`` is, so the user's ``except
Exception:`` does not swallow it.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any


class TimeLimitExceeded(BaseException):
    """The code ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` in the code of the ``with`` block after ``seconds`` (``None`` or 0: no
    limit). Nested limits are not supported on the main thread (the inner one replaces the outer's timer)."""
    if not seconds or seconds <= 0:
        yield
        return
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        with _alarm(seconds):
            yield
    else:
        with _async_exception(seconds):
            yield


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    armed = True

    def on_alarm(signum: int, frame: Any) -> None:
        if armed:  # (a timer that fired as the block ended raises nothing)
            raise TimeLimitExceeded(seconds)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    started = time.monotonic()
    earlier, _interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        try:
            armed = False
        finally:  # (even when the alarm raised just before the line above: the timer fires once)
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        if earlier > 0:  # someone else's timer was running: it gets the time it had left
            signal.setitimer(signal.ITIMER_REAL, max(0.001, earlier - (time.monotonic() - started)))


@contextlib.contextmanager
def _async_exception(seconds: float) -> Iterator[None]:
    ident = threading.get_ident()
    done = threading.Event()
    lock = threading.Lock()

    def fire() -> None:
        with lock:
            if not done.is_set():
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(TimeLimitExceeded))

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            done.set()
        timer.cancel()
