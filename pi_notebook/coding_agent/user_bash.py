"""``%bash`` / ``%bash!``: run a user's shell command and record it as a ``BashExecutionMessage``.

The command runs through the agent's shell executor (bounded memory, full output to a temp file, ANSI stripped
in what is recorded, SIGINT → SIGTERM → SIGKILL on interrupt). While it runs, a bounded tail of the raw output
(colours kept) is handed to the cell at most ten times a second, so even 100 MB of output keeps the kernel's
memory and the saved notebook small.

Secrets the extension knows (:mod:`~pi_notebook.coding_agent.secrets`: the provider keys and the
``*_API_KEY`` / ``*_TOKEN`` / ``*_SECRET`` variables of the environment) are masked in the recorded command
and output, in the live tail and in the full-output file, unless ``mask_secrets=False``; the views show a
"secrets masked" badge for a masked output.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .messages import BashExecutionMessage
from .secrets import SecretMasker
from .session_events import SessionNote

LIVE_TAIL_CHARS = 16_000
LIVE_INTERVAL_SECONDS = 0.1


@dataclass(frozen=True)
class BashProgress:
    """What the cell shows while a command runs: the last characters of its raw output."""

    command: str
    tail: str


class _Tail:
    """The last ``LIVE_TAIL_CHARS`` characters of output, posted at most every ``LIVE_INTERVAL_SECONDS``.

    With a ``masker``, what is posted is masked: the tail keeps room for a secret that starts before the
    characters shown, and the end of the output that may be the start of a secret is held back."""

    def __init__(self, command: str, post: Callable[[Any], None], masker: SecretMasker | None = None):
        self.command = masker.mask(command)[0] if masker else command
        self.post, self.masker = post, masker
        self.keep = LIVE_TAIL_CHARS + (masker.longest if masker else 0)
        self.text = ""
        self.last_post = 0.0

    def add(self, chunk: str) -> None:
        # Only what is kept is copied: a 64 KB chunk does not drag the previous tail along.
        room = self.keep - len(chunk)
        self.text = chunk[-self.keep :] if room <= 0 else self.text[-room:] + chunk
        now = time.monotonic()
        if now - self.last_post >= LIVE_INTERVAL_SECONDS:
            self.last_post = now
            shown = self.masker.mask_live(self.text) if self.masker else self.text
            self.post(BashProgress(self.command, shown[-LIVE_TAIL_CHARS:]))


class _SecretWatch:
    """Whether any secret occurs in the cleaned output (what the full-output file holds), found as the output
    is recorded, so that a large file without secrets need not be read again to learn it."""

    def __init__(self, masker: SecretMasker):
        self.masker = masker
        self.overlap = max(masker.longest - 1, 0)  # a secret cut by a chunk boundary is still seen
        self.tail = ""
        self.seen = False

    def __call__(self, clean: str) -> None:
        if self.seen:
            return
        window = self.tail + clean
        self.seen = self.masker.mask(window)[1]
        self.tail = window[len(window) - self.overlap :] if self.overlap else ""


async def run_user_bash(
    command: str,
    *,
    cwd: str,
    exclude_from_context: bool = False,
    timeout: float | None = None,
    signal: Any = None,
    post: Callable[[Any], None] = lambda item: None,
    mask_secrets: bool = True,
) -> BashExecutionMessage:
    """Run ``command`` in ``cwd`` and return the message to record. A non-zero exit is recorded, not raised;
    an interrupt (``signal``) or the timeout records ``cancelled=True``. ``mask_secrets``: mask the known
    secrets (see the module docstring) in all that is recorded or shown."""
    from .tools import run_shell  # asyncio's subprocess machinery: at the first %bash, not at load

    masker = SecretMasker.from_environment() if mask_secrets else None
    masker = masker or None  # no secret known: nothing to mask
    tail = _Tail(command, post, masker)
    watch = _SecretWatch(masker) if masker is not None else None
    result = await run_shell(command, cwd=cwd, signal=signal, on_output=tail.add, timeout=timeout, on_record=watch)
    output = result.output
    if masker is not None:
        command, output = masker.mask(command)[0], masker.mask(output)[0]
        if watch is not None and watch.seen and result.full_output_path and os.path.isfile(result.full_output_path):
            masker.mask_file(result.full_output_path)
    if result.full_output_error is not None:  # the tail is recorded as always; only the full copy is missing
        post(SessionNote(f"the full output could not be saved ({result.full_output_error}): its last lines are kept"))
    return BashExecutionMessage(
        command=command,
        output=output,
        exit_code=result.exit_code,
        cancelled=result.cancelled,
        truncated=result.truncated,
        full_output_path=result.full_output_path,
        exclude_from_context=True if exclude_from_context else None,
    )
