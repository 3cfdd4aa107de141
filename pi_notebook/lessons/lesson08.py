"""Lesson 8 (``notebooks/08-persistence.ipynb``): the session file, its tree, and what a reload rebuilds.

The ``check_*`` functions check the lesson's two exercises; both build a real session file in a temporary folder
and read it with :class:`~pi_notebook.coding_agent.session.SessionFile`, as a new kernel would.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from ..coding_agent.session import SessionFile
from .exercise import expect, report, unanswered

_HEADER = {"type": "session", "version": 3, "id": "lesson-08", "timestamp": "2026-01-01T10:00:00.000Z", "cwd": "/"}


def _message(entry_id: str, parent: str | None, role: str, text: str, minute: int) -> dict[str, Any]:
    stamp = f"2026-01-01T10:{minute:02d}:00.000Z"
    message: dict[str, Any] = {"role": role, "timestamp": 1767261600000 + minute * 60000}
    if role == "user":
        message["content"] = text
    else:
        message.update(
            content=[{"type": "text", "text": text}], api="faux", provider="faux", model="faux-1", stopReason="stop",
            usage={"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                   "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        )  # fmt: skip
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}


TREE_ENTRIES: list[dict[str, Any]] = [
    _message("a1", None, "user", "Plan a weekend trip.", 1),
    _message("b2", "a1", "assistant", "Rome or Lisbon?", 2),
    _message("c3", "b2", "user", "Rome.", 3),
    _message("d4", "c3", "assistant", "Booked a hotel in Rome.", 4),
    {"type": "branch_summary", "id": "e5", "parentId": "b2", "fromId": "b2", "timestamp": "2026-01-01T10:05:00.000Z",
     "summary": "The user first chose Rome; a hotel was booked."},
    _message("f6", "e5", "user", "Lisbon.", 6),
    _message("g7", "f6", "assistant", "Booked a hotel in Lisbon.", 7),
]  # fmt: skip
"""Exercise 1: a session file's entries, in file order (the last one is the leaf)."""

RELOAD_ENTRIES: list[dict[str, Any]] = [
    _message("m1", None, "user", "Tell me about topic A.", 1),
    _message("m2", "m1", "assistant", "A is the first topic.", 2),
    _message("m3", "m2", "user", "And topic B?", 3),
    _message("m4", "m3", "assistant", "B is the second topic.", 4),
    {"type": "custom", "id": "x5", "parentId": "m4", "timestamp": "2026-01-01T10:05:00.000Z",
     "customType": "pi_notebook.cell", "data": {"cell": "capital-cell"}},
    {"type": "compaction", "id": "c6", "parentId": "x5", "timestamp": "2026-01-01T10:06:00.000Z",
     "summary": "## Goal\nLearn about topics A and B.", "firstKeptEntryId": "m3", "tokensBefore": 4200},
    _message("m7", "c6", "user", "And topic C?", 7),
    _message("m8", "m7", "assistant", "C is the third topic.", 8),
]  # fmt: skip
"""Exercise 2: a session file's entries, in file order, with a compaction."""


def show_entries(entries: list[dict[str, Any]]) -> None:
    """One line per entry, in file order: id, parent, type, and what it says."""
    for e in entries:
        message = e.get("message", {})
        content = message.get("content", "")
        said = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
        if message:
            what = f"{message['role']}: {said}"
        elif e["type"] == "compaction":
            what = f"firstKeptEntryId={e['firstKeptEntryId']}, summary: {e['summary']!r}"
        else:
            what = str(e.get("summary") or e.get("customType"))
        print(f"{e['id']}  parentId={e['parentId']!s:<5} {e['type']:<15} {what}")


def _opened(entries: list[dict[str, Any]], folder: str) -> SessionFile:
    path = Path(folder) / "lesson.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [_HEADER, *entries]), encoding="utf-8")
    return SessionFile.open(path, readonly=True)


def check_branch(answer: Any) -> None:
    """Exercise 1: ``answer`` lists, root first, the ids of the entries on the branch that ends at the leaf."""
    name = "Exercise 1 (follow the parents)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, (list, tuple)), "answer with a list of ids, root first, such as ['a1', 'b2']")
    with tempfile.TemporaryDirectory() as folder, _opened(TREE_ENTRIES, folder) as session:
        right = [e.id for e in session.get_branch()]
    hint = "start at the leaf (the last line of the file) and follow parentId until it is null; then reverse."
    expect(name, all(i in {e["id"] for e in TREE_ENTRIES} for i in answer), f"{answer!r} holds an id not in the file")
    left = [i for i in answer if i not in right]
    expect(name, not left, f"{left} are on the branch that was left: the leaf's parents never lead there", hint)
    missing = [i for i in right if i not in answer]
    expect(name, not missing, f"{missing} are on the leaf's branch too", hint)
    expect(name, list(answer) == right, f"the ids are right but not in order: root first, {right}", hint)
    report(name, f"the leaf's branch is {right}; c3 and d4 stay in the file, on the branch that was left.")


def check_reload(answer: Any) -> None:
    """Exercise 2: ``answer`` lists the roles of the messages a new kernel rebuilds from :data:`RELOAD_ENTRIES`."""
    name = "Exercise 2 (what a reload rebuilds)"
    if unanswered(name, answer):
        return
    expect(name, isinstance(answer, (list, tuple)), "answer with a list of roles, such as ['user', 'assistant']")
    with tempfile.TemporaryDirectory() as folder, _opened(RELOAD_ENTRIES, folder) as session:
        right = [m.role for m in session.build_session_context().messages]
    hint = (
        "with a compaction on the branch, the context is: its summary, then the entries from firstKeptEntryId up "
        "to the compaction, then the entries after it. A custom entry is app state: never a message."
    )
    expect(name, list(answer)[:1] == right[:1], f"the context starts with {right[0]!r}: the compaction summary", hint)
    expect(name, "custom" not in answer, "the custom entry (a cell mark) is state, not a message: it is left out", hint)
    expect(
        name, len(answer) == len(right),
        f"{len(answer)} messages; the context holds {len(right)}: m1 and m2 are replaced by the summary, m3 on stay",
        hint,
    )  # fmt: skip
    expect(name, list(answer) == right, f"the roles are {right}", hint)
    report(name, f"{right}: the summary, then m3, m4, m7, m8.")


def _label(entry: Any) -> str:
    message = getattr(entry, "message", None)
    if message is not None:
        said: Any = getattr(message, "command", None) or getattr(message, "content", "")
        text = said if isinstance(said, str) else " ".join(getattr(b, "text", "") for b in said)
        return f"{message.role}: {text[:40]}"
    return entry.type + (f" ({entry.custom_type})" if getattr(entry, "custom_type", None) else "")


def draw_tree(file: SessionFile) -> None:
    """Print a session file's tree: a chain of entries one per line; a fork opens ├─ / └─ branches."""

    def draw(node: Any, first: str = "", rest: str = "") -> None:
        while True:
            leaf = "   ← leaf" if node.entry.id == file.leaf_id else ""
            print(f"{first}{_label(node.entry)}{leaf}")
            if len(node.children) != 1:
                break
            node, first = node.children[0], rest
        for i, child in enumerate(node.children):
            last = i == len(node.children) - 1
            draw(child, rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  "))

    for root in file.get_tree():
        draw(root)
