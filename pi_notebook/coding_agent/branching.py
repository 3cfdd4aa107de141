"""Running the same prompt again forks the conversation, the way Pi's ``/tree`` navigation does.

A front end names where each run comes from with an *anchor* (a notebook's cell id). Each run appends a ``custom``
entry (``customType: "pi_notebook.cell"``, extension state that never reaches the LLM) before its prompt, so the
session file itself remembers which entry each anchor started from — across restarts, with no metadata kept
elsewhere. Running an anchor again, while its earlier run is on the current branch, moves the leaf back to where
it started and records a branch summary of what was abandoned; the new turn grows from there. An anchor whose
earlier run is on an abandoned branch (say, the next cell after an edited one, in "Run All") simply continues from
the current leaf.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .session import SessionFile
from .session_context import entry_messages, nested_details
from .session_entries import CustomEntry

CELL_ENTRY_TYPE = "pi_notebook.cell"
"""``customType`` of the entry that marks where an anchor's run started (its data: ``{"cellId": anchor}``)."""


@dataclass(frozen=True)
class Fork:
    """What running an anchor again leaves behind."""

    parent_id: str | None
    """The entry the new branch grows from (where the earlier run started)."""
    abandoned: list[Any]
    """Every message the abandoned part holds (custom messages and earlier summaries too, as Pi)."""
    details: dict[str, Any]
    """The merged file lists of the summaries inside it."""


class BranchPlanner:
    """Finds, per run, whether its anchor forks, and records where the run starts."""

    def __init__(self, file: SessionFile):
        self.file = file
        self._runs: dict[str, CustomEntry] = {}  # anchor → its last run's entry, for the entries seen so far
        self._seen = 0  # how many of the file's entries (only ever appended to) _runs covers

    def _last_run_of(self, anchor: str) -> CustomEntry | None:
        entries = self.file.entries
        for entry in entries[self._seen :]:  # each entry is looked at once, not at every run
            if (
                isinstance(entry, CustomEntry)
                and entry.custom_type == CELL_ENTRY_TYPE
                and isinstance(entry.data, dict)
                and isinstance(entry.data.get("cellId"), str)
            ):
                self._runs[entry.data["cellId"]] = entry
        self._seen = len(entries)
        return self._runs.get(anchor)

    def fork_for(self, anchor: str | None) -> Fork | None:
        """The fork a run of ``anchor`` starts with, if its earlier run is on the current branch; else ``None``."""
        if not anchor:
            return None
        previous = self._last_run_of(anchor)
        if previous is None:
            return None
        path = self.file.get_branch()
        cut = next((i for i, e in enumerate(path) if e.id == previous.id), None)
        if cut is None:
            return None
        return Fork(previous.parent_id, entry_messages(path[cut:]), nested_details(path[cut:]))

    def start_cell(self, anchor: str | None) -> bool:
        """Record that ``anchor`` runs now, forking first if it ran before on this branch, with a summary written
        without a model (a run with ``branch_summary_model`` set writes Pi's). Returns True when the leaf moved
        (reload the history then)."""
        from .branch_summary import describe_branch

        fork = self.fork_for(anchor)
        self.start(anchor, fork, describe_branch(fork.abandoned, fork.details) if fork is not None else None)
        return fork is not None

    def start(self, anchor: str | None, fork: Fork | None = None, summary: Any = None) -> None:
        """Record that ``anchor`` runs now: first the ``fork`` with its branch ``summary`` (a
        :class:`~pi_notebook.coding_agent.branch_summary.BranchSummary`), if any."""
        if fork is not None and summary is not None:
            self.fork(fork, summary)
        if anchor:
            self.mark(anchor)

    def fork(self, fork: Fork, summary: Any) -> Any:
        """Move the leaf back to where the anchor's earlier run started, with the summary of what it leaves."""
        return self.file.branch_with_summary(fork.parent_id, summary.summary, details=summary.details)

    def mark(self, anchor: str) -> Any:
        """The entry that says ``anchor`` starts a run here."""
        return self.file.append_custom_entry(CELL_ENTRY_TYPE, {"cellId": anchor})
