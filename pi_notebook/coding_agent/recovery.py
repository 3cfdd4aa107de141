"""What Pi's ``AgentSession`` does after a run ends in an error: compact and retry once on a context
overflow, and retry transient failures (overloads, rate limits, 5xx) with exponential backoff.

Both remove the failed assistant message from the agent's state before continuing, so the retried call does
not see it; a caller that records messages on ``message_end`` still has it in its session file, as Pi does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ..ai import AssistantMessage, RetrySettings, is_context_overflow, is_retryable
from ..ai.retry import retry_delay_ms
from .compaction import Compactor

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
"""Pi's text when the context still overflows after compacting once."""


def _last_assistant(agent: Any) -> AssistantMessage | None:
    messages = agent.state.messages
    last = messages[-1] if messages else None
    return last if isinstance(last, AssistantMessage) else None


def _drop_last(agent: Any) -> None:
    # Agent state only: the caller's session file keeps the failed message as part of the record.
    messages = agent.state.messages
    if messages and getattr(messages[-1], "role", None) == "assistant":
        agent.replace_messages(messages[:-1])


async def run_with_recovery(
    agent: Any,
    run: Callable[[], Awaitable[Any]],
    *,
    compactor: Compactor | None = None,
    retry: RetrySettings = RetrySettings(),  # noqa: B008 - frozen, safe to share
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> None:
    """Await ``run()`` (e.g. ``lambda: agent.prompt("...")``), then recover as Pi does:

    * a context overflow from the agent's own model (same provider and id), with a ``compactor``: drop the
      error message, ``compactor.force()``, ``agent.continue_()``. Once only: a second overflow with no
      successful response in between leaves its error message and sets ``agent.state.error`` to
      :data:`OVERFLOW_RECOVERY_FAILED`. A silent overflow (a successful response whose input exceeded the
      window) is kept; the compactor is forced so the next call compacts.
    * a retryable error (:func:`~pi_notebook.ai.is_retryable`): drop it, wait ``retry_delay_ms(attempt)``
      through ``sleep(seconds)``, ``agent.continue_()``; at most ``retry.max_retries`` times, after which
      the last error stays.

    A run the loop stopped itself (``max_turns``, the loop guard: ``agent.state.stop``) did not fail and is left
    alone. Emits no events of its own and returns normally; failures stay data on the agent.
    """
    overflow_recovered = False
    attempt = 0

    def on_event(event: Any) -> None:
        # Pi's counters restart once a response succeeds: only consecutive failures count.
        nonlocal overflow_recovered, attempt
        message = getattr(event, "message", None)
        succeeded = isinstance(message, AssistantMessage) and message.stop_reason != "error"
        if event.type == "message_end" and succeeded:
            overflow_recovered, attempt = False, 0

    unsubscribe = agent.subscribe(on_event)
    try:
        await run()
        while (last := _last_assistant(agent)) is not None:
            model = agent.state.model
            if model is None:
                return
            same_model = last.provider == model.provider and last.model == model.id
            if same_model and is_context_overflow(last, model.context_window):
                if compactor is None:
                    return
                if last.stop_reason == "stop":
                    compactor.force()
                    return
                if overflow_recovered:
                    agent.state.error = OVERFLOW_RECOVERY_FAILED
                    return
                overflow_recovered = True
                _drop_last(agent)
                compactor.force()
                await agent.continue_()
            elif retry.enabled and is_retryable(last, model.context_window) and attempt < retry.max_retries:
                attempt += 1
                _drop_last(agent)
                await sleep(retry_delay_ms(attempt, retry) / 1000)
                await agent.continue_()
            else:
                return
    finally:
        unsubscribe()
