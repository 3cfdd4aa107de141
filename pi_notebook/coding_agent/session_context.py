"""``build_session_context``: the context an agent resumes with, from the entries of a session file.

Walk from the leaf to the root; the last thinking level and model on the path win; the last compaction
replaces what precedes its ``first_kept_entry_id`` with a summary; branch summaries and custom messages become
their AgentMessages. Also here: the entries as a tree (``SessionFile.get_tree``).
"""

from __future__ import annotations

import gc
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pydantic import ValidationError

from ..agent_core import OpaqueMessage, to_pi_json
from .messages import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from .session_entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionMessageEntry,
    SessionWarning,
    ThinkingLevelChangeEntry,
    entry_time_ms,
)


@dataclass
class SessionContext:
    """What the agent resumes with: the messages of the path and the settings in force at the leaf."""

    messages: list[Any] = field(default_factory=list)
    """Typed AgentMessages, in order (summaries and custom messages built from their entries)."""
    thinking_level: str = "off"
    """The last thinking level set on the path (``"off"`` if none)."""
    model: dict[str, Any] | None = None
    """``{"provider", "modelId"}`` from the last model change or assistant message on the path."""
    entry_ids: list[str] = field(default_factory=list, repr=False, compare=False)
    """The id of the entry each of :attr:`messages` comes from, in the same order (not part of Pi's result)."""

    def to_pi_json(self) -> dict[str, Any]:
        """``{"messages", "thinkingLevel", "model"}`` as Pi's ``buildSessionContext`` returns it."""
        return {
            "messages": [to_pi_json(m) for m in self.messages],
            "thinkingLevel": self.thinking_level,
            "model": dict(self.model) if self.model is not None else None,
        }


@dataclass
class SessionTreeNode:
    """One entry in :meth:`SessionFile.get_tree`."""

    entry: SessionEntry
    """The entry."""
    children: list[SessionTreeNode] = field(default_factory=list)
    """Child nodes, oldest timestamp first."""
    label: str | None = None
    """The entry's current label, if any."""


class DefaultLeaf(Enum):
    """The type of :data:`DEFAULT_LEAF`: "no leaf given", told apart from ``None`` (an empty context)."""

    LEAF = "default leaf"


DEFAULT_LEAF = DefaultLeaf.LEAF


def build_session_context(
    entries: list[SessionEntry], leaf_id: str | DefaultLeaf | None = DEFAULT_LEAF
) -> SessionContext:
    """Pi's ``buildSessionContext``: the context at ``leaf_id``.

    ``None`` gives an empty context; an id not among ``entries`` (or no argument) means the last entry.
    Along the path root → leaf: the last thinking level and model win (assistant messages set the model);
    the last compaction replaces what precedes ``first_kept_entry_id``; empty branch summaries add nothing.
    """
    if leaf_id is None:
        return SessionContext()
    by_id = {e.id: e for e in entries}
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) and leaf_id else None
    if leaf is None and entries:
        leaf = entries[-1]
    return context_at(leaf, by_id)


def path_to_leaf(leaf: Any, by_id: dict[str, Any]) -> list[Any]:
    """The path root → ``leaf``, stopping where ``parentId`` loops back (Pi would loop forever)."""
    path: list[Any] = []
    append, get, longest = path.append, by_id.get, len(by_id) + 1
    current = leaf
    while current is not None:
        append(current)
        parent = current.parent_id
        current = get(parent) if isinstance(parent, str) and parent else None
        if len(path) > longest:  # longer than the file: a cycle (the loader told it); walk again, stopping there
            return _path_with_cycle(leaf, by_id)
    path.reverse()
    return path


def _path_with_cycle(leaf: Any, by_id: dict[str, Any]) -> list[Any]:
    path: list[Any] = []
    seen: set[int] = set()
    current = leaf
    while current is not None:
        if id(current) in seen:
            warnings.warn(f"parentId cycle at {current.id!r}: the path stops there", SessionWarning, stacklevel=4)
            break
        seen.add(id(current))
        path.append(current)
        parent = current.parent_id
        current = by_id.get(parent) if isinstance(parent, str) and parent else None
    path.reverse()
    return path


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while many objects without cycles are built (its passes would double the time)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def context_at(leaf: Any, by_id: dict[str, Any]) -> SessionContext:
    """The context on the path root → ``leaf`` (``by_id`` maps entry ids to entries)."""
    if leaf is None:
        return SessionContext()
    with gc_paused():  # typing the messages of a long path builds many objects
        path = path_to_leaf(leaf, by_id)
        return _context_of(path)


def _context_of(path: list[Any]) -> SessionContext:
    ctx = SessionContext()
    compaction_at, thinking, model = -1, None, None
    # The last thinking level, model and compaction on the path win: look for them from the leaf back, so that
    # only one assistant message is read for its model, and a long path is not walked to its root for them.
    for i in range(len(path) - 1, -1, -1):
        entry = path[i]
        kind = type(entry)
        if kind is SessionMessageEntry:
            if model is None and entry.role == "assistant":
                model = entry
        elif isinstance(entry, ThinkingLevelChangeEntry):
            thinking = entry if thinking is None else thinking
        elif isinstance(entry, ModelChangeEntry):
            model = entry if model is None else model
        elif isinstance(entry, CompactionEntry) and compaction_at < 0:
            compaction_at = i
        if thinking is not None and model is not None and compaction_at >= 0:
            break
    if thinking is not None:
        ctx.thinking_level = thinking.thinking_level
    if isinstance(model, ModelChangeEntry):
        ctx.model = {"provider": model.provider, "modelId": model.model_id}
    elif model is not None:
        ctx.model = _assistant_model(model)
    if compaction_at >= 0:  # the last compaction wins: its summary, then what it kept, then what follows it
        compaction = path[compaction_at]
        summary = {"summary": compaction.summary, "tokensBefore": compaction.tokens_before}
        ctx.messages.append(_dated(CompactionSummaryMessage, summary, compaction))
        ctx.entry_ids.append(compaction.id)
        first_kept = compaction.first_kept_entry_id  # (ids on a path are unique: the last match is the first)
        kept = next((i for i in range(compaction_at - 1, -1, -1) if path[i].id == first_kept), compaction_at)
        path = path[kept:compaction_at] + path[compaction_at + 1 :]
    out, ids = ctx.messages, ctx.entry_ids
    for entry in path:
        if type(entry) is SessionMessageEntry:
            out.append(entry.message)
            ids.append(entry.id)
        elif type(entry) is not CustomEntry:  # (custom entries, extension state, are frequent and never messages)
            count = len(out)
            _emit(entry, out)
            if len(out) > count:
                ids.append(entry.id)
    return ctx


def _assistant_model(entry: SessionMessageEntry) -> dict[str, Any]:
    # Pi reads provider/model off any assistant message, valid or not; absent keys stay absent.
    raw = entry.raw_message
    return {key: raw[src] for key, src in (("provider", "provider"), ("modelId", "model")) if src in raw}


def _emit(entry: Any, out: list[Any]) -> None:
    if isinstance(entry, SessionMessageEntry):
        out.append(entry.message)
    elif isinstance(entry, CustomMessageEntry):
        fields: dict[str, Any] = {"customType": entry.custom_type, "content": entry.content}
        # Absent (or null): Pi's message has no `display`, which its UI and its export read as false: hidden, and
        # still sent to the model. (The entry keeps it absent: it is written back as it was.)
        fields["display"] = entry.display is True
        if entry.details is not None or "details" in entry._explicit_nulls:
            fields["details"] = entry.details
        out.append(_dated(CustomMessage, fields, entry))
    elif isinstance(entry, BranchSummaryEntry) and entry.summary:
        summary = {"summary": entry.summary, "fromId": entry.from_id}
        out.append(_dated(BranchSummaryMessage, summary, entry))


def entry_messages(entries: list[Any]) -> list[Any]:
    """Every message a run of entries holds, in order, as Pi's branch summary collects them: ``message``,
    ``custom_message``, ``branch_summary`` (non-empty) and ``compaction`` entries (as their summary message)."""
    out: list[Any] = []
    for entry in entries:
        if isinstance(entry, CompactionEntry):
            summary = {"summary": entry.summary, "tokensBefore": entry.tokens_before}
            out.append(_dated(CompactionSummaryMessage, summary, entry))
        else:
            _emit(entry, out)
    return out


def nested_details(entries: list[Any]) -> dict[str, list[str]]:
    """The read/modified file lists of the summaries among ``entries`` (``branch_summary`` and ``compaction``
    details), merged: what a summary of those entries must still list."""
    merged: dict[str, list[str]] = {"readFiles": [], "modifiedFiles": []}
    for entry in entries:
        details = getattr(entry, "details", None) if isinstance(entry, (CompactionEntry, BranchSummaryEntry)) else None
        if isinstance(details, dict):
            for key, files in merged.items():
                files += [f for f in details.get(key) or [] if isinstance(f, str) and f not in files]
    return merged


def _dated(cls: Any, fields: dict[str, Any], entry: Any) -> Any:
    """A message built from ``entry``, its timestamp = ``new Date(entry.timestamp).getTime()`` (``null`` for NaN),
    as Pi dates it: an ISO string parsed, a number as milliseconds (:func:`entry_time_ms`).

    If the entry's fields do not make a valid message, an :class:`OpaqueMessage` (kept, never sent) and a
    warning: a damaged field costs that message, not the context.
    """
    ms = entry_time_ms(entry)
    try:
        message = cls.model_validate({**fields, "timestamp": 0 if ms is None else ms})
    except ValidationError as e:
        raw = {"role": cls.__pydantic_fields__["role"].default, **fields, "timestamp": ms}
        role = raw["role"]
        warnings.warn(
            f"a {role!r} message could not be built ({e.errors()[0]['msg']}); not sent", SessionWarning, stacklevel=3
        )
        return OpaqueMessage(raw=raw, reason=f"invalid {role!r} message: {e}")
    if ms is None:
        message.timestamp = None
        message._explicit_nulls = message._explicit_nulls | {"timestamp"}
    return message


def build_tree(entries: list[Any], labels: dict[str, str]) -> list[SessionTreeNode]:
    """The entries as a forest (``SessionFile.get_tree``): the roots, in file order, each node with its label.

    Roots have a ``null``, missing or self parent; children are sorted by timestamp (stable). Entries in a
    ``parentId`` cycle are kept (Pi drops them): the first of each cycle in file order becomes a root.
    """
    nodes = [SessionTreeNode(e, [], labels.get(e.id)) for e in entries]
    node_of = {n.entry.id: n for n in nodes}
    parent_of: dict[int, SessionTreeNode] = {}
    for node in nodes:
        parent_id = node.entry.parent_id
        parent = node_of.get(parent_id) if isinstance(parent_id, str) and parent_id != node.entry.id else None
        if parent is not None:
            parent.children.append(node)
            parent_of[id(node)] = parent
    roots = [node for node in nodes if id(node) not in parent_of]
    reached: set[int] = set()
    for node in [*roots, *nodes]:
        if id(node) in reached:
            continue
        if id(node) in parent_of:  # not reachable from a root: a cycle, cut at its first entry
            parent_of[id(node)].children.remove(node)
            roots.append(node)
        stack = [node]
        while stack:
            current = stack.pop()
            reached.add(id(current))
            stack.extend(current.children)
    for node in nodes:
        if len(node.children) > 1:
            node.children.sort(key=_time_key)
    return roots


def _time_key(node: SessionTreeNode) -> float:
    ms = entry_time_ms(node.entry)  # (an ISO string or a number, as Pi's getTree compares them)
    return float("inf") if ms is None else ms


def covered_by_summaries(file: Any) -> dict[str, list[dict[str, Any]]]:
    """For each compaction on the file's branch, its summary → the messages it replaced (Pi JSON): those from the
    previous compaction's first kept entry (or the start) up to its own first kept entry."""
    branch = file.get_branch()
    covered: dict[str, list[dict[str, Any]]] = {}
    start = 0
    for at, entry in enumerate(branch):
        if not isinstance(entry, CompactionEntry):
            continue
        kept = next((i for i in range(at - 1, -1, -1) if branch[i].id == entry.first_kept_entry_id), at)
        replaced = [e for e in branch[start:kept] if not isinstance(e, CompactionEntry)]
        covered[entry.summary] = [to_pi_json(m) for m in entry_messages(replaced)]
        start = kept
    return covered


def entry_lines(file: Any, limit: int = 50) -> list[str]:
    """The newest entries of a session file, one line each: ``*`` marks the leaf, then the id, the entry's type
    (a message's role and the start of its text) and its label."""
    out = []
    for entry in file.entries[-limit:]:
        label = file.get_label(entry.id)
        what = entry.type
        if isinstance(entry, SessionMessageEntry):
            what = f"message {entry.role}"
            text = _first_words(to_pi_json(entry.message))
            what += f": {text}" if text else ""
        mark = "*" if entry.id == file.leaf_id else " "
        out.append(f"{mark} {entry.id}  {what}" + (f"  [{label}]" if label else ""))
    return out


def _first_words(data: dict[str, Any], width: int = 70) -> str:
    content = data.get("content", data.get("command", data.get("summary", "")))
    if isinstance(content, list):
        content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    text = re.sub(r"\s+", " ", str(content)).strip()
    return text if len(text) <= width else text[: width - 1] + "…"
