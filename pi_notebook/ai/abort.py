"""Cancellation that works across threads and event loops (Pi passes an ``AbortSignal``).

A notebook's stop button arrives as ``KeyboardInterrupt`` in the kernel's main thread while the agent runs
on an event loop, possibly in another thread. ``AbortController.abort()`` may be called from anywhere;
``await signal.wait()`` wakes every loop waiting on it.
"""

from __future__ import annotations

import asyncio
import threading


class AbortSignal:
    """Read side: ``aborted``, ``reason`` and ``await wait()``."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self.reason: str | None = None

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def is_set(self) -> bool:
        """Alias of :attr:`aborted`, so a :class:`threading.Event` works wherever a signal does."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._event.is_set():
                return
            self._waiters.append((loop, future))
        try:
            await future
        finally:
            with self._lock:
                self._waiters = [(lp, f) for lp, f in self._waiters if f is not future]

    def _fire(self, reason: str | None) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class AbortController:
    """Write side: ``abort()`` once, from any thread; ``signal`` is handed to the work being cancelled."""

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        self.signal._fire(reason)
