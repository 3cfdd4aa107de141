"""Which failed responses are worth retrying, and how long to wait (Pi's auto-retry rules)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .overflow import is_context_overflow
from .types import AssistantMessage

RETRYABLE = re.compile(
    r"overloaded|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error"
    r"|internal.?error|connection.?error|connection.?refused|other side closed|fetch failed"
    r"|upstream.?connect|reset before headers|terminated|retry delay",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class RetrySettings:
    """Pi's defaults: three retries, 2 s doubling, at most 60 s."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60_000


def is_retryable(message: AssistantMessage, context_window: int | None = None) -> bool:
    """An ``error`` response that a retry may fix: overloads, rate limits, 5xx, dropped connections.
    Context overflows are not retryable (they need compaction)."""
    if message.stop_reason != "error" or is_context_overflow(message, context_window):
        return False
    return bool(RETRYABLE.search(message.error_message or ""))


def retry_delay_ms(attempt: int, settings: RetrySettings = RetrySettings()) -> int:
    """Delay before retry number ``attempt`` (1-based): base × 2^(attempt-1), capped."""
    doubled: int = settings.base_delay_ms * 2 ** (attempt - 1)
    return min(doubled, settings.max_delay_ms)
