"""Re-running an ``%%agent`` cell forks the conversation, the way Pi's ``/tree`` navigation does.

Each run of a cell appends a ``custom`` entry (``customType: "pi_notebook.cell"``, extension state that never
reaches the LLM) before its prompt, so the session file itself remembers which entry each cell started from
— across kernel restarts, with no cell metadata needed. Running the cell again, while that earlier run is on
the current branch, moves the leaf back to where it started and records a branch summary of what was
abandoned; the new turn grows from there. A cell whose earlier run is on an abandoned branch (say, the next
cell after an edited one, in "Run All") simply continues from the current leaf.
"""

from __future__ import annotations

import json
from typing import Any

from ..agent import to_pi_json
from ..agent.session import CustomEntry, SessionFile, SessionMessageEntry

CELL_ENTRY_TYPE = "pi_notebook.cell"
# Pi's wording for a branch summary (its branch summarization); the body is ours and needs no model.
BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
)
_ITEM_CHARS = 200


def describe_abandoned(entries: list[Any]) -> str:
    """A deterministic summary of abandoned entries: the prompts, shell commands, tool calls and answers."""
    lines = []
    for entry in entries:
        if not isinstance(entry, SessionMessageEntry):
            continue
        data = to_pi_json(entry.message)
        role = data.get("role")
        if role == "user":
            lines.append(f"- The user asked: {_clip(_text(data.get('content')))}")
        elif role == "bashExecution":
            code = data.get("exitCode")
            lines.append(f"- Ran `{_clip(data.get('command', ''))}`" + (f" (exit code {code})" if code else ""))
        elif role == "assistant":
            for block in data.get("content", []):
                if block.get("type") == "toolCall":
                    args = json.dumps(block.get("arguments", {}), ensure_ascii=False)
                    lines.append(f"- The assistant called {block.get('name')}({_clip(args)})")
            answer = _text([b for b in data.get("content", []) if b.get("type") == "text"])
            if answer:
                lines.append(f"- The assistant answered: {_clip(answer)}")
    return BRANCH_SUMMARY_PREAMBLE + ("\n".join(lines) if lines else "No content to summarize")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ITEM_CHARS else text[: _ITEM_CHARS - 1] + "…"


class BranchPlanner:
    """Decides, per cell run, whether to fork, and records the cell's starting point."""

    def __init__(self, file: SessionFile):
        self.file = file

    def _last_run_of(self, cell_id: str) -> CustomEntry | None:
        for entry in reversed(self.file.entries):
            if (
                isinstance(entry, CustomEntry)
                and entry.custom_type == CELL_ENTRY_TYPE
                and isinstance(entry.data, dict)
                and entry.data.get("cellId") == cell_id
            ):
                return entry
        return None

    def start_cell(self, cell_id: str | None) -> bool:
        """Record that ``cell_id`` starts a run now; fork first if it ran before on this branch. Returns True
        when the leaf moved (the caller reloads the history)."""
        if not cell_id:
            return False
        forked = False
        previous = self._last_run_of(cell_id)
        path = self.file.get_branch()
        on_path = {e.id for e in path}
        if previous is not None and previous.id in on_path:
            start = previous.parent_id
            cut = next(i for i, e in enumerate(path) if e.id == previous.id)
            summary = describe_abandoned(path[cut:])
            self.file.branch_with_summary(start, summary)
            forked = True
        self.file.append_custom_entry(CELL_ENTRY_TYPE, {"cellId": cell_id})
        return forked
