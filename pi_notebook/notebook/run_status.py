"""What a running cell says it is doing while nothing else shows it: a ``%bash`` command that prints nothing yet,
an ``%%agent`` waiting for the model's first word (or for the offline model to load), a tool at work.

The texts go to the transcript's ``status`` (:attr:`~.widgets.TranscriptWidget.status`); the view puts the time
since the text changed in ``{elapsed}`` and counts on its own, so the kernel sends nothing while it waits.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RUNNING", "status_after", "waiting_for"]

RUNNING = "running for {elapsed}"
"""A ``%bash`` command, from its start to its end."""
LOADING = "loading the model ({elapsed}): the first answer of a kernel takes longer"
WAITING = "waiting for the model ({elapsed})"
TOOL = "running the tool {name} ({{elapsed}})"


def waiting_for(model: Any) -> str:
    """What an ``%%agent`` cell says until the model's reply starts: the offline model not loaded yet in this
    kernel is loaded first (seconds to a minute on a small machine), any other model is waited for."""
    if getattr(model, "api", None) == "local":
        from ..ai.providers.local import is_loaded

        if not is_loaded(model):
            return LOADING
    return WAITING


def status_after(event: Any, model: Any) -> str | None:
    """The status after an agent event of a run with ``model``, or ``None`` when the event changes nothing: a turn
    starts by waiting for the model, its reply shows itself once it starts, a tool call says which tool runs."""
    kind = getattr(event, "type", None)
    if kind == "turn_start":
        return waiting_for(model)
    if kind == "message_start" and getattr(event.message, "role", None) == "assistant":
        return ""
    if kind == "tool_execution_start":
        return TOOL.format(name=event.tool_name)
    if kind in ("tool_execution_end", "agent_end"):
        return ""
    return None
