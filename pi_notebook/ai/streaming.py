"""``stream()`` / ``complete()``: one LLM call, dispatched by ``model.api`` to the provider registered for it
(:mod:`~pi_notebook.ai.api_registry`).

A provider is an async generator of :mod:`~pi_notebook.ai.events`. This module guards it so that a stream
never raises once it has started: an exception becomes a terminal ``error`` event, an abort (the
``signal`` option) a terminal ``error`` event with ``stop_reason="aborted"``, and in both cases the content
streamed so far is kept on the final message. Every error text is passed through
:func:`~pi_notebook.ai.redact.redact` with the call's key first, so no form of the key becomes data.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, Literal, Protocol, cast

from .api_registry import stream_function_for
from .events import TERMINAL_EVENTS, AssistantMessageEvent, ErrorEvent
from .keys import resolve_api_key
from .options import StreamOptions
from .redact import auth_header_values, redact
from .types import AssistantMessage, Context, Model

ABORTED_MESSAGE = "Request was aborted"


class _Aborted(Exception):
    pass


def _empty_message(model: Model) -> AssistantMessage:
    return AssistantMessage(content=[], api=model.api, provider=model.provider, model=model.id)


class AssistantMessageStream:
    """The events of one response (``async for``) and its final message (``await result()``)."""

    def __init__(
        self,
        model: Model,
        open_source: Callable[[], AsyncIterator[AssistantMessageEvent]],
        signal: Any = None,
        secrets: tuple[str | None, ...] = (),
    ):
        self._model = model
        self._secrets = secrets  # redacted from every error text
        self._events = self._guard(open_source, signal)
        self._result: AssistantMessage | None = None

    def __aiter__(self) -> AsyncIterator[AssistantMessageEvent]:
        return self

    def __anext__(self) -> Awaitable[AssistantMessageEvent]:
        # The guard's own step, with no coroutine of ours around it: this runs for every event.
        return self._events.__anext__()

    async def result(self) -> AssistantMessage:
        """The final assistant message; consumes whatever events are left."""
        async for _ in self._events:
            pass
        assert self._result is not None  # _guard always ends with a terminal event
        return self._result

    async def _guard(
        self, open_source: Callable[[], AsyncIterator[AssistantMessageEvent]], signal: Any
    ) -> AsyncGenerator[AssistantMessageEvent, None]:
        partial: AssistantMessage | None = None
        iterator: Any = None
        reason: Literal["error", "aborted"]
        cheap_abort = _CAN_UNCANCEL and signal is not None and hasattr(signal, "add_listener")
        watch = _AbortWatch(signal) if cheap_abort else None
        try:
            iterator = open_source().__aiter__()
            step = iterator.__anext__
            while True:
                try:
                    if watch is None:
                        event = await (step() if signal is None else _next_or_abort(iterator, signal))
                    else:
                        # _AbortWatch.next(), inlined: this runs for every event.
                        if signal.is_set():
                            raise _Aborted
                        task = cast(_UncancellableTask, asyncio.current_task())
                        cancelling = task.cancelling()
                        watch.task = task
                        try:
                            event = await step()
                        except BaseException:
                            watch.task = None
                            if watch.take_back(task, cancelling):
                                raise _Aborted from None
                            raise
                        watch.task = None
                        if watch.take_back(task, cancelling):  # the provider swallowed the cancellation
                            raise _Aborted
                except StopAsyncIteration:
                    break
                if isinstance(event, TERMINAL_EVENTS):
                    final = event.error if isinstance(event, ErrorEvent) else event.message
                    if final.error_message:
                        final.error_message = redact(final.error_message, self._secrets)
                    self._result = final
                    yield event
                    return
                partial = getattr(event, "partial", partial)
                yield event
            failure, reason = "The provider's stream ended without a final event", "error"
        except _Aborted:
            failure, reason = ABORTED_MESSAGE, "aborted"
        except Exception as e:  # the contract: a started stream never raises
            failure, reason = str(e) or type(e).__name__, "error"
        finally:
            if watch is not None:
                watch.close()
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
        message = partial.model_copy(deep=True) if partial is not None else _empty_message(self._model)
        message.stop_reason = reason
        message.error_message = redact(failure, self._secrets)
        self._result = message
        yield ErrorEvent(reason=reason, error=message)


_CAN_UNCANCEL = hasattr(asyncio.Task, "uncancel")
"""Python 3.11+: a cancellation can be taken back (what :class:`_AbortWatch` needs); 3.10 waits the old way."""


class _UncancellableTask(Protocol):
    """The running task where :data:`_CAN_UNCANCEL` holds (Python 3.11+). The type checker reads Python 3.10's
    ``asyncio.Task``, which has neither method: the task is cast to this where the flag was checked."""

    def cancel(self, msg: Any | None = None) -> bool: ...
    def cancelling(self) -> int: ...
    def uncancel(self) -> int: ...


class _AbortWatch:
    """Stops the wait for the provider's next event when an :class:`~.abort.AbortSignal` fires, at no cost per
    event: one listener on the signal cancels the task while (and only while) it awaits the provider (``task``
    is set for that wait), which then sees ``CancelledError`` at its await point and closes its connection. As in
    ``asyncio.timeout``, the cancellation is then taken back and becomes :class:`_Aborted`, unless someone else
    cancelled the task too."""

    def __init__(self, signal: Any):
        self.task: _UncancellableTask | None = None
        self._cancelled = False
        self._remove = signal.add_listener(self._on_abort)

    def _on_abort(self) -> None:
        if self.task is not None and not self._cancelled:
            self._cancelled = True
            self.task.cancel()

    def take_back(self, task: _UncancellableTask, cancelling: int) -> bool:
        """Whether our cancellation stopped the wait and no other is pending (it is then taken back)."""
        if not self._cancelled:
            return False
        self._cancelled = False
        return task.uncancel() <= cancelling

    def close(self) -> None:
        self._remove()


async def _next_or_abort(iterator: AsyncIterator[AssistantMessageEvent], signal: Any) -> AssistantMessageEvent:
    """The next event, or :class:`_Aborted` once ``signal`` (any object with ``is_set()`` and ``wait()``) fires."""
    if signal is None:
        return await iterator.__anext__()
    if signal.is_set():
        raise _Aborted
    step = asyncio.ensure_future(iterator.__anext__())
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({step, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if step.done():
        return step.result()
    step.cancel()  # the provider sees CancelledError at its await point and closes its connection
    with contextlib.suppress(BaseException):
        await step
    raise _Aborted


def stream(
    model: Model,
    context: Context | dict[str, Any],
    options: StreamOptions | dict[str, Any] | None = None,
    **kw: Any,
) -> AssistantMessageStream:
    """Start one LLM call. Raises :class:`~.api_registry.UnknownApiError` at once for an unregistered api; after that,
    failures are data on the final message."""
    provider = stream_function_for(model.api)
    ctx = context if isinstance(context, Context) else Context.model_validate(context)
    opts = StreamOptions.coerce(options, **kw)
    secrets = (resolve_api_key(model.provider, opts.api_key), *auth_header_values(model.headers, opts.headers))
    return AssistantMessageStream(model, lambda: provider(model, ctx, opts), opts.signal, secrets)


async def complete(
    model: Model,
    context: Context | dict[str, Any],
    options: StreamOptions | dict[str, Any] | None = None,
    **kw: Any,
) -> AssistantMessage:
    """One LLM call, returning only the final assistant message."""
    return await stream(model, context, options, **kw).result()
