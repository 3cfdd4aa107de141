"""Stream one agent run into the current cell: one output, updated in place, at most ~10 times a second.

The output holds the messages of this run only (a notebook keeps the history in earlier cells), rendered by
:mod:`pi_notebook.notebook.render` as ``text/plain`` + ``text/markdown`` so it reads well wherever the
notebook is opened. A model streams tokens far faster than a frontend can redraw, so :meth:`LiveDisplay.show`
drops calls that come too soon and remembers the newest state; :meth:`LiveDisplay.flush` and
:meth:`LiveDisplay.finish` write it. Nothing here is thread-safe: call it from the kernel's main thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from IPython.core.interactiveshell import InteractiveShell
from IPython.display import DisplayHandle, display

from .render import messages_mimebundle

__all__ = ["LiveDisplay"]

# Events after which the agent may wait a long time (a tool runs, a run ends): show what is pending first,
# so a throttled tool call does not stay invisible while its tool runs.
_FLUSH_EVENTS = ("tool_execution_start", "turn_end")


class LiveDisplay:
    """One live output for one agent run.

    ``show(messages_so_far, streaming)`` as often as you like (at most one redraw per ``min_interval``
    seconds), ``finish(messages)`` once at the end: it always writes the exact final state. With
    ``quiet=True`` nothing is shown until ``finish``. :meth:`on_event` does all of this from the agent's
    events: ``agent.subscribe(live.on_event)``.
    """

    def __init__(
        self,
        min_interval: float = 0.1,
        *,
        quiet: bool = False,
        title: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.min_interval = min_interval
        """Least time in seconds between two redraws while streaming."""
        self.quiet = quiet
        """Show nothing until :meth:`finish`."""
        self.title = title
        """An optional heading above the messages."""
        self.updates = 0
        """How many times the output was written (created or updated)."""
        self.finished = False
        """True once :meth:`finish` ran; later :meth:`show` calls are ignored."""
        self._clock = clock
        self._handle: DisplayHandle | None = None
        self._last: float | None = None
        self._pending: tuple[Sequence[Any], Any] | None = None
        self._run: list[Any] = []  # messages of this run, gathered by on_event
        self._streaming: Any = None

    @property
    def display_id(self) -> str | None:
        """The id of the output, once it exists."""
        return self._handle.display_id if self._handle is not None else None

    def show(self, messages_so_far: Sequence[Any], streaming: Any = None) -> bool:
        """Show this run's finished messages and the one still streaming (or ``None``).

        Returns True if the output was redrawn. A call that comes too soon is remembered for :meth:`flush`
        (a shallow copy of the list: rendering happens only when something is written, so a burst of calls
        costs next to nothing).
        """
        if self.finished or self.quiet:
            return False
        self._pending = (list(messages_so_far), streaming)
        if self._last is not None and self._clock() - self._last < self.min_interval:
            return False
        return self.flush()

    def flush(self) -> bool:
        """Write the state of the last throttled :meth:`show`, if any, now. Returns True if it wrote."""
        if self._pending is None or self.finished or self.quiet:
            return False
        messages, streaming = self._pending
        self._pending = None
        self._write(messages_mimebundle(messages, title=self.title, streaming=streaming))
        return True

    def finish(self, messages: Sequence[Any]) -> None:
        """Write the final state exactly, however recent the last redraw (also in quiet mode)."""
        self._pending = None
        self.finished = True
        self._write(messages_mimebundle(messages, title=self.title))

    def on_event(self, event: Any) -> None:
        """Follow an agent run from its events (``agent.subscribe(live.on_event)``).

        Finished messages accumulate in order, the assistant message being streamed is shown last, and
        ``agent_end`` finishes with every message of the run (including one only ``agent_end`` carries, such
        as the error message of a run that crashed).
        """
        kind = getattr(event, "type", None)
        if kind in ("message_start", "message_update"):
            self._streaming = event.message
        elif kind == "message_end":
            self._streaming = None
            self._run.append(event.message)
        elif kind == "agent_end":
            extra = [m for m in event.messages if not any(m is seen for seen in self._run)]
            self._streaming = None
            self.finish(self._run + extra)
            return
        elif kind in _FLUSH_EVENTS:
            self.flush()
            return
        else:
            return
        self.show(self._run, self._streaming)

    def _write(self, bundle: dict[str, str]) -> None:
        if not InteractiveShell.initialized():
            # Plain Python (a script, a test without a shell): no live output, only the final text.
            if self.finished:
                print(bundle["text/plain"])
            return
        if self._handle is None:
            self._handle = display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)
        self._last = self._clock()
        self.updates += 1

    def __repr__(self) -> str:
        state = "finished" if self.finished else "quiet" if self.quiet else "live"
        return f"<LiveDisplay {state}, {self.updates} updates>"
