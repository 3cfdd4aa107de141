"""``%bash`` / ``%bash!``: run a user's shell command and record it as a ``BashExecutionMessage``.

The command runs through the agent's shell executor (bounded memory, full output to a temp file, ANSI stripped
in what is recorded, SIGINT → SIGTERM → SIGKILL on interrupt). While it runs, a bounded tail of the raw output
(colours kept) is handed to the cell at most ten times a second, so even 100 MB of output keeps the kernel's
memory and the saved notebook small.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..coding_agent import BashExecutionMessage
from ..coding_agent.tools import run_shell

LIVE_TAIL_CHARS = 16_000
LIVE_INTERVAL_SECONDS = 0.1


@dataclass(frozen=True)
class BashProgress:
    """What the cell shows while a command runs: the last characters of its raw output."""

    command: str
    tail: str


class _Tail:
    """The last ``LIVE_TAIL_CHARS`` characters of output, posted at most every ``LIVE_INTERVAL_SECONDS``."""

    def __init__(self, command: str, post: Callable[[Any], None]):
        self.command, self.post = command, post
        self.text = ""
        self.last_post = 0.0

    def add(self, chunk: str) -> None:
        self.text = (self.text + chunk)[-LIVE_TAIL_CHARS:]
        now = time.monotonic()
        if now - self.last_post >= LIVE_INTERVAL_SECONDS:
            self.last_post = now
            self.post(BashProgress(self.command, self.text))


async def run_user_bash(
    command: str,
    *,
    cwd: str,
    exclude_from_context: bool = False,
    timeout: float | None = None,
    signal: Any = None,
    post: Callable[[Any], None] = lambda item: None,
) -> BashExecutionMessage:
    """Run ``command`` in ``cwd`` and return the message to record. A non-zero exit is recorded, not raised;
    an interrupt (``signal``) or the timeout records ``cancelled=True``."""
    tail = _Tail(command, post)
    result = await run_shell(command, cwd=cwd, signal=signal, on_output=tail.add, timeout=timeout)
    return BashExecutionMessage(
        command=command,
        output=result.output,
        exit_code=result.exit_code,
        cancelled=result.cancelled,
        truncated=result.truncated,
        full_output_path=result.full_output_path,
        exclude_from_context=True if exclude_from_context else None,
    )
