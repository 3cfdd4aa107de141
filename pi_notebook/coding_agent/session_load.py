"""Loading a session file: its lines read as Pi reads them, then the tree repaired where damage broke it.

Pi's rules hold for every file Pi wrote intact. Three kinds of damage are repaired in memory (the file is
never rewritten; ``entry.to_pi_json()`` still gives what the file holds), each with one warning:

* **a lost line** (not JSON, or JSON that is not an entry): the entries whose ``parentId`` named the entry
  it held would become roots, and the context would start there, dropping everything before it. They are
  re-attached to the nearest earlier entry that survived, so a damaged line costs only itself;
* **a file Pi wrote twice** (Pi writes every entry again, header too, when it continues a session that had
  no assistant reply): an exact repeat of an entry (same id, same content) is dropped, one copy kept;
* **two different entries with one id**: lookups by id find the later one, as in Pi; the earlier one is
  renamed in memory (``<id>@<line>``), keeping the entries written under it before the second copy.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .session_entries import (
    CURRENT_SESSION_VERSION,
    SessionEntry,
    SessionHeader,
    migrate_values,
    not_an_entry,
    parse_entry,
    read_json_lines,
)


@dataclass
class LoadedSession:
    """What :func:`load_session_text` read: the header, the entries (repaired) and what to warn about."""

    header: SessionHeader | None = None
    """The header, ``version`` migrated to 3; ``None`` when the file has no valid header."""
    version: int | float | None = None
    """The format version as the file has it (1 when the header has none)."""
    entries: list[SessionEntry] = field(default_factory=list)
    """The entries in file order, one per id (exact repeats dropped)."""
    by_id: dict[str, SessionEntry] = field(default_factory=dict)
    """Each entry by its (in-memory) id."""
    line_of: dict[int, int] = field(default_factory=dict)
    """``id(entry)`` → its line number."""
    leaf_id: str | None = None
    """The id of the entry on the last entry line (Pi's leaf after loading)."""
    notes: list[tuple[int, str]] = field(default_factory=list)
    """``(line, warning)``: what was skipped, repeated or repaired, in line order, then tree problems."""


def load_session_text(text: str) -> LoadedSession:
    """Read a session file's text as Pi's ``SessionManager`` does, repairing what damage did to the tree.

    Never raises on content: whatever cannot be read is skipped and described in ``notes``.
    """
    parsed, problems, unreadable = read_json_lines(text)
    loaded = LoadedSession()
    notes = [(line, f"line {line}: {problem}") for line, problem in problems]
    header_line, header = parsed[0] if parsed else (1, None)
    if not isinstance(header, dict) or header.get("type") != "session" or not isinstance(header.get("id"), str):
        what = "not a session header" if parsed else "the file is empty"
        notes.append(
            (header_line, f"line {header_line}: {what}: read as empty (Pi would overwrite the file); appends refused")
        )
        loaded.notes = sorted(notes, key=lambda n: n[0])
        return loaded
    _read_header(loaded, header_line, header, parsed, notes)
    lost = _read_entries(loaded, parsed, notes, unreadable)
    if lost:
        _reattach_orphans(loaded, lost, notes)
    loaded.notes = sorted(notes, key=lambda n: n[0])
    loaded.notes += _tree_problems(loaded)
    return loaded


def _read_header(
    loaded: LoadedSession, line: int, header: dict[str, Any], parsed: list[Any], notes: list[tuple[int, str]]
) -> None:
    version = header.get("version")
    if version is None:
        version = 1  # v1 headers have no version
    elif isinstance(version, bool) or not isinstance(version, int | float):
        notes.append((line, f"line {line}: header version {version!r} is not a number; read as 3"))
        version = CURRENT_SESSION_VERSION
    elif version > CURRENT_SESSION_VERSION:
        notes.append((line, f"line {line}: version {version} is newer than 3; unknown entry types are kept as is"))
    migrate_values([value for _, value in parsed], version)
    try:
        loaded.header = SessionHeader.model_validate(header)
    except ValidationError as e:
        notes.append((line, f"line {line}: {e.error_count()} invalid header field(s); only the id is kept"))
        loaded.header = SessionHeader(id=header["id"])
    if version < CURRENT_SESSION_VERSION:  # migrated in memory only
        loaded.header = loaded.header.model_copy(update={"version": CURRENT_SESSION_VERSION})
    loaded.version = version


def _read_entries(
    loaded: LoadedSession, parsed: list[tuple[int, Any]], notes: list[tuple[int, str]], unreadable: dict[int, str]
) -> list[tuple[int, Any]]:
    """Type every entry line; drop exact repeats; rename clashing ids. Returns the lost lines: ``(line, what
    is left of it)``, the raw text of a line that is not JSON or the parsed value of one that is no entry."""
    entries, by_id, line_of = loaded.entries, loaded.by_id, loaded.line_of
    header_line, header = parsed[0]
    lost: list[tuple[int, Any]] = list(unreadable.items())
    repeats: list[tuple[int, int]] = []  # (line, the line it repeats)
    value_at: dict[int, Any] | None = None  # built on the first clash only
    for line, value in parsed[1:]:
        problem = not_an_entry(value)
        if problem is not None:
            if isinstance(value, dict) and value.get("type") == "session":
                if _same(value, header):
                    repeats.append((line, header_line))
                    continue
            else:
                lost.append((line, value))
            notes.append((line, f"line {line}: {problem}"))
            continue
        entry_id = value["id"]
        held = by_id.get(entry_id)
        if held is not None:
            value_at = value_at if value_at is not None else dict(parsed)
            held_line = line_of[id(held)]
            if _same(value, value_at[held_line]):
                repeats.append((line, held_line))
                loaded.leaf_id = entry_id
                continue
            notes.append((line, _rename_earlier(loaded, held, line)))
        entry, problem = parse_entry(value)
        entries.append(entry)
        by_id[entry_id] = entry
        line_of[id(entry)] = line
        loaded.leaf_id = entry_id
        if problem is not None:
            notes.append((line, f"line {line}: {problem}"))
    if repeats:
        lines, originals = [r[0] for r in repeats], sorted({r[1] for r in repeats})
        notes.append(
            (
                lines[0],
                f"{_lines(lines)}: {_repeat(len(lines))} {_lines(originals)} exactly (same ids, same content: Pi "
                "writes a session's entries again when it continues one that had no assistant reply); one copy kept",
            )
        )
    return lost


def _same(a: Any, b: Any) -> bool:
    """Identical JSON: equal, and equal as text (so ``1``, ``1.0`` and ``true`` differ)."""
    return a == b and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _rename_earlier(loaded: LoadedSession, earlier: Any, line: int) -> str:
    """Another entry takes ``earlier``'s id: rename ``earlier`` in memory, with the entries under it so far."""
    entry_id, earlier_line = earlier.id, loaded.line_of[id(earlier)]
    new_id = f"{entry_id}@{earlier_line}"
    while new_id in loaded.by_id:
        new_id += "+"
    earlier.set_in_memory(id=new_id)
    loaded.by_id[new_id] = earlier
    after = next(i for i, e in enumerate(loaded.entries) if e is earlier) + 1
    moved = [e for e in loaded.entries[after:] if e.parent_id == entry_id]
    for child in moved:
        child.set_in_memory(parent_id=new_id)
    note = (
        f"line {line}: id {entry_id!r} was already used on line {earlier_line} by a different entry; lookups by "
        f"id find this one (as in Pi), the earlier one is kept as {new_id!r}"
    )
    return note + (f" with the {_count(len(moved))} written under it before line {line}" if moved else "")


def _reattach_orphans(loaded: LoadedSession, lost: list[tuple[int, Any]], notes: list[tuple[int, str]]) -> None:
    """Entries whose parent was on a lost line hang under the nearest earlier entry that survived."""
    lost.sort(key=lambda item: item[0])
    entries, by_id, line_of = loaded.entries, loaded.by_id, loaded.line_of
    entry_lines = [line_of[id(e)] for e in entries]
    resolved: dict[str, tuple[int, Any] | None] = {}  # missing parent id → (lost line, stand-in)
    orphans: dict[int, list[tuple[Any, str]]] = {}  # lost line → [(orphan, missing parent id)]
    for entry in entries:
        parent_id = entry.parent_id
        if not isinstance(parent_id, str) or not parent_id or parent_id in by_id:
            continue
        if parent_id not in resolved:
            lost_line = _line_that_held(parent_id, line_of[id(entry)], lost)
            before = bisect.bisect_left(entry_lines, lost_line) if lost_line is not None else 0
            resolved[parent_id] = (lost_line, entries[before - 1]) if before else None
        found = resolved[parent_id]
        if found is not None:
            orphans.setdefault(found[0], []).append((entry, parent_id))
    if not orphans:
        return
    index = {line: i for i, (line, _) in enumerate(notes)}
    for lost_line, hung in orphans.items():
        stand_in = resolved[hung[0][1]][1]  # type: ignore[index]
        for orphan, _ in hung:
            orphan.set_in_memory(parent_id=stand_in.id)
        i = index[lost_line]
        notes[i] = (lost_line, notes[i][1] + _reattached(hung, stand_in, line_of))


def _line_that_held(parent_id: str, before: int, lost: list[tuple[int, Any]]) -> int | None:
    """The lost line that held ``parent_id``: the last one before line ``before`` that names it, else the last
    one there whose id cannot be read; ``None`` if no lost line can have held it (Pi's root then)."""
    named = re.compile(r'"id"\s*:\s*"' + re.escape(parent_id) + '"')
    unnamed = None
    for line, rest in reversed(lost):
        if line >= before:
            continue
        if isinstance(rest, dict) and isinstance(rest.get("id"), str):
            if rest["id"] == parent_id:
                return line
        elif isinstance(rest, str) and named.search(rest):
            return line
        elif unnamed is None:
            unnamed = line
    return unnamed


def _reattached(hung: list[tuple[Any, str]], stand_in: Any, line_of: dict[int, int]) -> str:
    lines = ", ".join(str(line_of[id(e)]) for e, _ in hung[:5]) + (", ..." if len(hung) > 5 else "")
    ids = ", ".join(repr(e.id) for e, _ in hung[:5]) + (", ..." if len(hung) > 5 else "")
    parents = ", ".join(sorted({repr(p) for _, p in hung}))
    which = (
        f"the entry on line {lines} ({ids})" if len(hung) == 1 else f"the {len(hung)} entries on lines {lines} ({ids})"
    )
    return (
        f"; {which}, whose parent {parents} was lost with it, re-attached to {stand_in.id!r} "
        f"(line {line_of[id(stand_in)]}), the nearest earlier entry that survived"
    )


def _tree_problems(loaded: LoadedSession) -> list[tuple[int, str]]:
    """Missing parents (a root, as in Pi) and ``parentId`` cycles (walks stop at them instead of looping)."""
    by_id, line_of, out = loaded.by_id, loaded.line_of, []
    done: set[int] = set()
    for entry in loaded.entries:
        parent_id = entry.parent_id
        if isinstance(parent_id, str) and parent_id and parent_id not in by_id:
            line = line_of[id(entry)]
            out.append((line, f"line {line}: parent {parent_id!r} is missing: a root here"))
        chain: list[Any] = []
        current: Any = entry
        while current is not None and id(current) not in done:
            done.add(id(current))
            chain.append(current)
            parent = current.parent_id
            current = by_id.get(parent) if isinstance(parent, str) and parent else None
        if current is not None and any(current is e for e in chain):
            cycle = chain[next(i for i, e in enumerate(chain) if e is current) :]
            where = f"line {line_of[id(cycle[0])]}"
            if len(cycle) == 1:
                out.append((0, f"{where}: entry {current.id!r} is its own parent; walks stop there"))
            else:
                ids = " -> ".join(repr(e.id) for e in [*cycle, cycle[0]])
                out.append((0, f"{where}: parentId cycle {ids}; walks stop where it closes"))
    return out


def _lines(numbers: list[int]) -> str:
    """``line 7`` or ``lines 5-8, 12``."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    text = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in spans)
    return f"line {text}" if len(numbers) == 1 else f"lines {text}"


def _repeat(n: int) -> str:
    return "repeats" if n == 1 else "repeat"


def _count(n: int) -> str:
    return "entry" if n == 1 else f"{n} entries"
