"""Run the agent's async work from synchronous magics, and keep the stop button working.

The kernel's own event loop is busy running the cell, so agent coroutines run on a private loop in a daemon
thread (as IPython's script magics do). The kernel's main thread waits for them, draining a queue of events
to display (display calls must happen on the main thread to reach the right cell), and turns the
``KeyboardInterrupt`` that Jupyter's stop button raises into a clean abort.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import queue
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

#: After an interrupt, how long to wait for the work to wind down before giving up on it.
ABORT_GRACE_SECONDS = 5.0


class BackgroundLoop:
    """An asyncio event loop on a daemon thread."""

    def __init__(self) -> None:
        import asyncio  # with its subprocess and SSL machinery: at the first run, not at %load_ext

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pi-notebook-loop", daemon=True)
        self._thread.start()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; the returned future is thread-safe."""
        import asyncio

        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=2)


_shared: BackgroundLoop | None = None
_shared_lock = threading.Lock()


def background_loop() -> BackgroundLoop:
    """The process-wide background loop (created on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = BackgroundLoop()
        return _shared


class Interrupted(Exception):
    """The user interrupted and the work did not stop within the grace period."""


class NoMainThread(RuntimeError):
    """Work for the kernel's main thread was asked for outside a run of :func:`run_blocking`."""


@dataclass
class _OnMain:
    """A call the background loop hands to the kernel's main thread (run by :func:`run_blocking`'s wait)."""

    fn: Callable[[], Any]
    done: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)

    def run(self) -> None:
        """Run the call. The stop button during it propagates (KeyboardInterrupt) with the future left pending:
        :func:`run_blocking` stops the run first, then fails the call (:meth:`stopped`), so the agent cannot act on
        the failure before it is aborted."""
        if not self.done.set_running_or_notify_cancel():
            return
        try:
            result = self.fn()
        except KeyboardInterrupt:
            raise
        except BaseException as e:
            self.done.set_exception(e)
        else:
            self.done.set_result(result)

    def stopped(self) -> None:
        if not self.done.done():  # (Interrupted, not the BaseException: the loop's thread would die of it)
            self.done.set_exception(Interrupted("the stop button interrupted it"))


_main_post: contextvars.ContextVar[Callable[[Any], None] | None] = contextvars.ContextVar("pi_main_post", default=None)


async def on_main_thread(fn: Callable[[], T]) -> T:
    """Run ``fn`` on the kernel's main thread (where a cell's code runs, displays reach the cell and the stop button
    raises) and return what it returns; called from the agent's work inside :func:`run_blocking`. The stop button
    during ``fn`` raises :class:`Interrupted` here and stops the run. :class:`NoMainThread` outside a run."""
    import asyncio

    post = _main_post.get()
    if post is None:
        raise NoMainThread("no notebook run is waiting on the kernel's main thread")
    call = _OnMain(fn)
    post(call)
    try:
        return await asyncio.wrap_future(call.done)
    except asyncio.CancelledError:
        call.done.cancel()  # not started yet: it never runs
        raise


def run_blocking(
    make: Callable[[Callable[[Any], None]], Coroutine[Any, Any, T]],
    *,
    on_event: Callable[[Any], None] | None = None,
    on_interrupt: Callable[[concurrent.futures.Future[Any]], None] | None = None,
    poll_seconds: float = 0.05,
) -> tuple[T | None, bool]:
    """Run ``make(post)`` on the background loop and wait for it on this (the kernel's main) thread.

    ``post(item)`` may be called from the loop to hand ``item`` to ``on_event`` here, in order. A
    ``KeyboardInterrupt`` while waiting calls ``on_interrupt(future)`` (e.g. ``agent.abort()``, or
    ``future.cancel()`` when nothing is streaming) and keeps waiting so everything already recorded is kept; a
    second interrupt stops waiting. Returns ``(result, interrupted)``; a cancelled run returns ``(None, True)``.
    """
    events: queue.Queue[Any] = queue.Queue()

    async def work() -> T:
        _main_post.set(events.put)  # what the run's tasks inherit: on_main_thread() posts here
        return await make(events.put)

    future = background_loop().submit(work())
    interrupted = False
    deadline: float | None = None
    running: list[_OnMain] = []  # the main-thread call in progress, if any

    def drain() -> None:
        while True:
            try:
                item = events.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, _OnMain):
                if interrupted:  # stopped: nothing more runs in the user's kernel
                    item.done.cancel()
                    continue
                running.append(item)
                item.run()
                running.clear()
            elif on_event is not None:
                on_event(item)

    while True:
        try:
            finished = cancelled = False
            try:
                result = future.result(timeout=poll_seconds)
                finished = True
            except concurrent.futures.CancelledError:
                cancelled = True
            except concurrent.futures.TimeoutError:
                pass
            drain()  # (outside the except blocks: an error of a main-thread call is not chained to a timeout)
            if cancelled:
                return None, True
            if finished:
                return result, interrupted
            if deadline is not None and time.monotonic() > deadline:
                raise Interrupted("the interrupted work did not stop in time")
        except KeyboardInterrupt:
            if interrupted:  # a second interrupt: stop waiting, the loop finishes on its own
                drain()
                raise Interrupted("interrupted twice: stopped waiting") from None
            interrupted = True
            deadline = time.monotonic() + ABORT_GRACE_SECONDS
            if on_interrupt is not None:
                on_interrupt(future)
            for call in running:  # the stop button hit a main-thread call: it fails now that the run is stopped
                call.stopped()
            running.clear()
