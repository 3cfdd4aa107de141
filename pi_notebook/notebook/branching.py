"""Re-running an ``%%agent`` cell forks the conversation, the way Pi's ``/tree`` navigation does.

Each run of a cell appends a ``custom`` entry (``customType: "pi_notebook.cell"``, extension state that never
reaches the LLM) before its prompt, so the session file itself remembers which entry each cell started from
— across kernel restarts, with no cell metadata needed. Running the cell again, while that earlier run is on
the current branch, moves the leaf back to where it started and records a branch summary of what was
abandoned; the new turn grows from there. A cell whose earlier run is on an abandoned branch (say, the next
cell after an edited one, in "Run All") simply continues from the current leaf.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..coding_agent.session import CustomEntry, SessionFile
from ..coding_agent.session_context import entry_messages, nested_details

if TYPE_CHECKING:
    from ..coding_agent.branch_summary import BranchSummary

CELL_ENTRY_TYPE = "pi_notebook.cell"

Summarize = Callable[[Sequence[Any], dict[str, Any]], "BranchSummary"]
"""``summarize(abandoned_messages, nested_details)``: the branch summary; ``nested_details`` are the merged file
lists of summaries inside the abandoned branch."""


class BranchPlanner:
    """Decides, per cell run, whether to fork, and records the cell's starting point."""

    def __init__(self, file: SessionFile):
        self.file = file
        self._runs: dict[str, CustomEntry] = {}  # cellId → its last run's entry, for the entries seen so far
        self._seen = 0  # how many of the file's entries (only ever appended to) _runs covers

    def _last_run_of(self, cell_id: str) -> CustomEntry | None:
        entries = self.file.entries
        for entry in entries[self._seen :]:  # each entry is looked at once, not at every cell run
            if (
                isinstance(entry, CustomEntry)
                and entry.custom_type == CELL_ENTRY_TYPE
                and isinstance(entry.data, dict)
                and isinstance(entry.data.get("cellId"), str)
            ):
                self._runs[entry.data["cellId"]] = entry
        self._seen = len(entries)
        return self._runs.get(cell_id)

    def start_cell(self, cell_id: str | None, summarize: Summarize | None = None) -> bool:
        """Record that ``cell_id`` starts a run now; fork first if it ran before on this branch, summarising
        what is left behind with ``summarize`` (default: :func:`describe_branch`, no model). Returns True
        when the leaf moved (the caller reloads the history)."""
        if not cell_id:
            return False
        forked = False
        previous = self._last_run_of(cell_id)
        path = self.file.get_branch() if previous is not None else []  # (a cell's first run needs no path)
        if previous is not None and any(e.id == previous.id for e in path):
            cut = next(i for i, e in enumerate(path) if e.id == previous.id)
            # As Pi: every message the branch holds (custom messages and earlier summaries too), and the file
            # lists of the summaries inside it.
            abandoned, details = entry_messages(path[cut:]), nested_details(path[cut:])
            if summarize is None:
                from ..coding_agent.branch_summary import describe_branch  # only when a cell is re-run

                summarize = describe_branch
            summary = summarize(abandoned, details)
            self.file.branch_with_summary(previous.parent_id, summary.summary, details=summary.details)
            forked = True
        self.file.append_custom_entry(CELL_ENTRY_TYPE, {"cellId": cell_id})
        return forked
