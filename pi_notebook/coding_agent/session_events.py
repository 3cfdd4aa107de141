"""What a session tells a front end besides the agent's own events (Pi: ``AgentSessionEvent``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CompactionEvent", "SessionNote"]


@dataclass
class CompactionEvent:
    """Told to a run's listener when the history was compacted during the run."""

    message: Any
    """The :class:`~pi_notebook.coding_agent.messages.CompactionSummaryMessage` now standing for the older part."""
    type: str = "compaction"


@dataclass
class SessionNote:
    """Something the user should read that is not part of the history (one line): a fallback taken, a secret
    masked, a full output that could not be saved."""

    text: str
    type: str = "note"
