"""Cancellation that works across threads and event loops (Pi passes an ``AbortSignal``).

A notebook's stop button arrives as ``KeyboardInterrupt`` in the kernel's main thread while the agent runs
on an event loop, possibly in another thread. ``AbortController.abort()`` may be called from anywhere;
``await signal.wait()`` wakes every loop waiting on it; ``add_listener(callback)`` runs a callback on a loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable


class AbortSignal:
    """Read side: ``aborted``, ``reason``, ``await wait()`` and ``add_listener()``."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        # (loop, callback): what to call on which loop when the signal fires.
        self._waiters: list[tuple[asyncio.AbstractEventLoop, Callable[[], None]]] = []
        self.reason: str | None = None

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def is_set(self) -> bool:
        """Alias of :attr:`aborted`, so a :class:`threading.Event` works wherever a signal does."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        if self._event.is_set():
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        remove = self.add_listener(lambda: _resolve(future), loop)
        try:
            await future
        finally:
            remove()

    def add_listener(
        self, callback: Callable[[], None], loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        """Call ``callback()`` on ``loop`` (default: the running loop) when the signal aborts — soon, if it
        already has. Returns a function that removes the listener (harmless after it was called)."""
        loop = loop or asyncio.get_running_loop()
        entry = (loop, callback)
        with self._lock:
            fired = self._event.is_set()
            if not fired:
                self._waiters.append(entry)
        if fired:
            loop.call_soon(callback)
            return _nothing

        def remove() -> None:
            with self._lock:
                self._waiters = [w for w in self._waiters if w is not entry]

        return remove

    def _fire(self, reason: str | None) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            waiters, self._waiters = self._waiters, []
        for loop, callback in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(callback)


def _nothing() -> None:
    return None


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class AbortController:
    """Write side: ``abort()`` once, from any thread; ``signal`` is handed to the work being cancelled."""

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        self.signal._fire(reason)
