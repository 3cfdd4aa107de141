"""``%agent_session`` and ``%agent_session list`` in a notebook user's words.

A session file is Pi's tree of entries; the notebook user meets it as a history: the messages the next
``%%agent`` continues from (the current branch), the latest of them, and other branches (the earlier try a cell
run again leaves, or what ``%agent_session branch`` stepped away from). So the description names those, and each
entry is said as what it is (your prompt, the model's reply, a failed reply, a shell command, a cell) instead of
Pi's entry kinds; the ids stay, for ``%agent_session branch ID`` and ``label ID``.
"""

from __future__ import annotations

import re
from typing import Any

from ..coding_agent.branching import CELL_ENTRY_TYPE

__all__ = ["describe_session", "entry_lines"]

WIDTH = 70
"""Characters of a message's text in a line of the list."""

_CUSTOM_WORDS = {CELL_ENTRY_TYPE: "a cell started here (kept for re-runs, not sent)"}


def _words(text: Any, width: int = WIDTH) -> str:
    flat = re.sub(r"\s+", " ", str(text or "")).strip()
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            parts.append("[image]")
        elif block.get("type") == "toolCall":
            parts.append(f"→ {block.get('name', '?')}")
    return " ".join(p for p in parts if p)


def message_words(data: dict[str, Any]) -> str:
    """One message (Pi JSON) as the notebook says it: ``prompt: …``, ``reply: …``, ``reply failed: <why>``..."""
    role = data.get("role")
    text = _text_of(data.get("content"))
    if role == "user":
        return f"prompt: {_words(text)}"
    if role == "assistant":
        stop = data.get("stopReason")
        if stop == "error":
            return f"reply failed: {_words(data.get('errorMessage') or text or 'no reason given')}"
        if stop == "aborted":
            return f"reply stopped: {_words(text or data.get('errorMessage') or '(nothing said)')}"
        return f"reply: {_words(text) or '(empty)'}"
    if role == "toolResult":
        kind = "tool failed" if data.get("isError") else "tool result"
        return f"{kind} ({data.get('toolName', '?')}): {_words(text)}"
    if role == "bashExecution":
        code = data.get("exitCode")
        end = " (stopped)" if data.get("cancelled") else f" (exit {code})" if isinstance(code, int) else ""
        private = ", not sent to the LLM" if data.get("excludeFromContext") else ""
        return f"shell{private}: $ {_words(data.get('command'), WIDTH - 10)}{end}"
    if role == "notebookCell":
        count = data.get("executionCount")
        error = data.get("error") if isinstance(data.get("error"), dict) else None
        failed = f" → {error.get('name', 'error')}" if error else ""
        private = ", not sent to the LLM" if data.get("excludeFromContext") else ""
        number = f" [{count}]" if isinstance(count, int) else ""
        return f"cell{number}{private}: {_words(data.get('source'), WIDTH - 10)}{failed}"
    if role == "custom":
        shown = "" if data.get("display", True) is not False else ", hidden"
        return f"note ({data.get('customType', '?')}{shown}): {_words(text)}"
    if role == "compactionSummary":
        return f"summary of older messages: {_words(data.get('summary'))}"
    if role == "branchSummary":
        return f"summary of the branch left: {_words(data.get('summary'))}"
    return f"{role or 'message'}: {_words(text)}"


def entry_words(entry: Any) -> str:
    """One entry of the file as the notebook says it."""
    kind = entry.type
    if kind == "message":
        raw = entry.raw_message  # as the file holds it (a damaged field still reads)
        return message_words(raw if isinstance(raw, dict) else {})
    if kind == "model_change":
        return f"model: {entry.provider}/{entry.model_id}"
    if kind == "thinking_level_change":
        return f"thinking: {entry.thinking_level}"
    if kind == "compaction":
        return f"older messages summarised: {_words(entry.summary)}"
    if kind == "branch_summary":
        return f"summary of the branch left: {_words(entry.summary)}"
    if kind == "custom_message":
        return message_words({"role": "custom", **entry.to_pi_json()})
    if kind == "custom":
        return _CUSTOM_WORDS.get(entry.custom_type, f"data of {entry.custom_type} (not sent)")
    if kind == "label":
        return f"label of {entry.target_id}: {entry.label}" if entry.label else f"label of {entry.target_id} removed"
    if kind == "session_info":
        return f"session name: {entry.name}"
    return f"{kind} (not known here)"


def _latest_message(branch: list[Any]) -> Any:
    return next((e for e in reversed(branch) if e.type in ("message", "custom_message")), None)


def _other_branches(entries: list[Any]) -> int:
    """How many branches end elsewhere than the current one: entries no other entry continues, less one."""
    continued = {e.parent_id for e in entries}
    ends = [e for e in entries if e.id not in continued and e.type != "label"]
    return max(0, len(ends) - 1)


def describe_session(session: Any) -> str:
    """What ``%agent_session`` prints: the file, the history the next ``%%agent`` continues from, its latest
    message, and how many other branches the file keeps."""
    file = session.file
    branch = file.get_branch()
    n = len(session.messages)
    lines = [f"session file: {file.path}"]
    if file.session_name:
        lines.append(f"name: {file.session_name}")
    lines.append(
        f"history: {n} message{'' if n == 1 else 's'} on the current branch (what the next %%agent continues from)"
        if n
        else "history: empty (the next %%agent starts a new conversation)"
    )
    latest = _latest_message(branch)
    if latest is not None:
        lines.append(f"latest message: {latest.id}  {entry_words(latest)}")
    others = _other_branches(file.entries)
    if others:
        lines.append(
            f"other branches: {others} (kept in the file, not sent: a cell run again leaves its earlier try there; "
            "%agent_session list shows them)"
        )
    if session.note:
        lines.append(f"note: {session.note}")
    lines += [f"warning: {warning}" for warning in file.warnings]
    return "\n".join(lines)


def entry_lines(session: Any, limit: int = 50) -> list[str]:
    """What ``%agent_session list`` prints: the newest ``limit`` entries, oldest first, each with its id (for
    ``branch`` and ``label``), what it is, its label; the latest message is marked, and what is not on the current
    branch says so."""
    file = session.file
    entries = file.entries[-limit:]
    if not entries:
        return []
    on_branch = {e.id for e in file.get_branch()}
    latest = _latest_message(file.get_branch())
    out = [f"{'id':<8}  oldest first; ← the latest message, where the next %%agent continues"]
    skipped = len(file.entries) - len(entries)
    if skipped:
        out.append(f"… {skipped} older entries not shown")
    for entry in entries:
        label = file.get_label(entry.id)
        where = "" if entry.id in on_branch else "(other branch) "
        mark = "   ← latest" if latest is not None and entry.id == latest.id else ""
        out.append(f"{entry.id:<8}  {where}{entry_words(entry)}" + (f"  [{label}]" if label else "") + mark)
    return out
