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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json as _FROM_JSON

from ..ai.jstext import JS_WHITESPACE
from .json_lines import parse_json_line
from .session_entries import (
    CURRENT_SESSION_VERSION,
    LabelEntry,
    SessionEntry,
    SessionHeader,
    SessionMessageEntry,
    intern_role,
    migrate_values,
    not_an_entry,
    parse_entry,
)


@dataclass
class LoadedSession:
    """What :func:`load_session_lines` read: the header, the entries (repaired) and what to warn about."""

    header: SessionHeader | dict[str, Any] | None = None
    """The header, ``version`` migrated to 3; ``None`` when the file has no valid header. A plain header (only
    Pi's keys, each of its type) stays a dict, typed when first read (:attr:`SessionFile.header`): opening a
    session does not wait for pydantic to build the header's validator."""
    version: int | float | None = None
    """The format version as the file has it (1 when the header has none)."""
    entries: list[SessionEntry] = field(default_factory=list)
    """The entries in file order, one per id (exact repeats dropped)."""
    by_id: dict[str, SessionEntry] = field(default_factory=dict)
    """Each entry by its (in-memory) id."""
    line_of: dict[int, int] = field(default_factory=dict)
    """``id(entry)`` → its line number."""
    labels: list[LabelEntry] = field(default_factory=list)
    """The ``label`` entries, in file order."""
    leaf_id: str | None = None
    """The id of the entry on the last entry line (Pi's leaf after loading)."""
    notes: list[tuple[int, str]] = field(default_factory=list)
    """``(line, warning)``: what was skipped, repeated or repaired, in line order, then tree problems."""


class _Lines:
    """A file's lines (UTF-8 bytes, split on "\\n") read as Pi reads them: the whole text trimmed as JS ``trim()``
    does (a leading BOM goes), blank lines dropped, each other line ``JSON.parse``d. Parsed one at a time, so a
    long file never has all its lines parsed at once.

    A line that is not valid UTF-8 raises ``UnicodeDecodeError`` (the caller reads the file again, repaired)."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        filled = (i for i, line in enumerate(lines) if not _blank(line))
        self.first = next(filled, len(lines))
        filled_from_end = (i for i in range(len(lines) - 1, self.first - 1, -1) if not _blank(lines[i]))
        self.last = next(filled_from_end, self.first - 1)
        self.problems: list[tuple[int, str]] = []
        """``(line number, problem)`` of the lines read so far that are not JSON."""
        self.unreadable: dict[int, str] = {}
        """``{line number: text}`` of those lines (what is left of them may still name an id)."""

    def raw(self, index: int) -> bytes:
        """Line ``index`` (0-based) as its entry keeps it: the bytes, trimmed if it is the first or last line."""
        line = self.lines[index]
        return line if index != self.first and index != self.last else self.text(index).encode("utf-8")

    def text(self, index: int) -> str:
        text = self.lines[index].decode("utf-8")
        if index == self.first:
            text = text.lstrip(JS_WHITESPACE)
        if index == self.last:
            text = text.rstrip(JS_WHITESPACE)
        return text

    def parse(self, index: int) -> Any:
        """``JSON.parse`` of line ``index`` (0-based); ``ValueError`` or ``RecursionError`` if it is not JSON."""
        return parse_json_line(self.raw(index))

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        """``(line number, parsed JSON)`` of every line that is JSON; the others go to ``problems``."""
        lines, first, last = self.lines, self.first, self.last
        for index in range(first, last + 1):
            line = lines[index]
            if not line or (line[0] != 123 and _blank(line)):  # 123: "{", the start of every entry line
                continue
            try:
                value = _FROM_JSON(line if index != first and index != last else self.raw(index), allow_inf_nan=False)
            except ValueError:  # not JSON to jiter: the standard decoder decides, and says why
                try:
                    value = parse_json_line(self.raw(index))
                except UnicodeDecodeError:
                    raise
                except (ValueError, RecursionError) as e:
                    reason = e.msg if isinstance(e, json.JSONDecodeError) else str(e) or type(e).__name__
                    self.problems.append((index + 1, f"not valid JSON ({reason}), skipped"))
                    self.unreadable[index + 1] = self.text(index)
                    continue
            yield index + 1, value


def _blank(line: bytes) -> bool:
    """True if the line is only JavaScript whitespace."""
    stripped = line.strip()  # the ASCII part of JS whitespace: space, \\t, \\n, \\v, \\f, \\r
    if not stripped:
        return True
    if stripped[0] < 0x80:
        return False
    return not line.decode("utf-8").strip(JS_WHITESPACE)


def load_session_text(text: str) -> LoadedSession:
    """:func:`load_session_lines` of a file's text."""
    return load_session_lines(text.encode("utf-8").split(b"\n"))


def load_session_lines(lines: list[bytes]) -> LoadedSession:
    """Read a session file's lines (its bytes, valid UTF-8, split on ``b"\\n"``) as Pi's ``SessionManager``
    does, repairing what damage did to the tree.

    Never raises on content: whatever cannot be read is skipped and described in ``notes``.
    """
    source = _Lines(lines)
    values = iter(source)
    loaded = LoadedSession()
    first = next(values, None)
    header_line, header = first if first is not None else (1, None)
    if not isinstance(header, dict) or header.get("type") != "session" or not isinstance(header.get("id"), str):
        for _ in values:  # every line that is not JSON is told too
            pass
        notes: list[tuple[int, str]] = [(line, f"line {line}: {problem}") for line, problem in source.problems]
        what = "not a session header" if first is not None else "the file is empty"
        notes.append(
            (header_line, f"line {header_line}: {what}: read as empty (Pi would overwrite the file); appends refused")
        )
        loaded.notes = sorted(notes, key=lambda n: n[0])
        return loaded
    notes = []
    version = _read_header(loaded, header_line, header, notes)
    migrated: dict[int, Any] | None = None
    if version < CURRENT_SESSION_VERSION:  # old files are migrated as a whole, in memory
        rest = list(values)
        migrate_values([header, *(value for _, value in rest)], version)
        migrated, values = dict(rest), iter(rest)
    read = _read_entries(loaded, values, header_line, header, notes, source, migrated)
    notes += [(line, f"line {line}: {problem}") for line, problem in source.problems]
    lost = [*source.unreadable.items(), *read.lost]
    if lost:
        _reattach_orphans(loaded, lost, notes)
    loaded.notes = sorted(notes, key=lambda n: n[0])
    loaded.notes += _tree_problems(loaded, read.suspects, renamed=read.renamed)
    return loaded


def _read_header(loaded: LoadedSession, line: int, header: dict[str, Any], notes: list[tuple[int, str]]) -> Any:
    version = header.get("version")
    if version is None:
        version = 1  # v1 headers have no version
    elif isinstance(version, bool) or not isinstance(version, int | float):
        notes.append((line, f"line {line}: header version {version!r} is not a number; read as 3"))
        version = CURRENT_SESSION_VERSION
    elif version > CURRENT_SESSION_VERSION:
        notes.append((line, f"line {line}: version {version} is newer than 3; unknown entry types are kept as is"))
    if _plain_header(header):
        loaded.header = {**header, "version": CURRENT_SESSION_VERSION} if version < CURRENT_SESSION_VERSION else header
        loaded.version = version
        return version
    try:
        loaded.header = SessionHeader.model_validate(header)
    except ValidationError as e:
        notes.append((line, f"line {line}: {e.error_count()} invalid header field(s); only the id is kept"))
        loaded.header = SessionHeader(id=header["id"])
    if version < CURRENT_SESSION_VERSION:  # migrated in memory only
        loaded.header = loaded.header.model_copy(update={"version": CURRENT_SESSION_VERSION})
    loaded.version = version
    return version


_HEADER_TEXT = ("timestamp", "cwd", "parentSession")


def _plain_header(header: dict[str, Any]) -> bool:
    """Whether ``header`` has only Pi's header keys, each of the type :class:`SessionHeader` declares (what
    its validation would accept unchanged)."""
    version = header.get("version")
    return (
        header.keys() <= {"type", "version", "id", *_HEADER_TEXT}
        and (version is None or (type(version) in (int, float)))
        and all(header.get(key) is None or type(header[key]) is str for key in _HEADER_TEXT)
    )


@dataclass
class _Read:
    """What :func:`_read_entries` found besides the entries."""

    lost: list[tuple[int, Any]] = field(default_factory=list)
    """``(line, value)`` of the lines that are JSON but no entry."""
    suspects: list[Any] = field(default_factory=list)
    """The entries whose parent was not read before them: a missing parent, or one later in the file (only
    those can close a ``parentId`` cycle)."""
    renamed: bool = False
    """An id was taken by a second entry (the earlier one renamed)."""


def _read_entries(
    loaded: LoadedSession,
    values: Iterator[tuple[int, Any]],
    header_line: int,
    header: dict[str, Any],
    notes: list[tuple[int, str]],
    source: _Lines,
    migrated: dict[int, Any] | None,
) -> _Read:
    """Type every entry line; drop exact repeats; rename clashing ids. A message entry keeps its line as the file
    holds it (``source``), or its migrated value (``migrated``: line number → migrated value, for an old file)."""
    entries, by_id, line_of, labels = loaded.entries, loaded.by_id, loaded.line_of, loaded.labels
    read = _Read()
    lost, suspects = read.lost, read.suspects
    repeats: list[tuple[int, int]] = []  # (line, the line it repeats)
    append, get = entries.append, by_id.get
    for line, value in values:
        if type(value) is dict and value.get("type") == "message":  # most lines: the fast path
            entry_id, message = value.get("id"), value.get("message")
            parent_id, stamp = value.get("parentId"), value.get("timestamp")  # (any timestamp: Pi reads the entry)
            if (
                type(entry_id) is str
                and type(message) is dict
                and (parent_id is None or type(parent_id) is str)
                and entry_id not in by_id
            ):
                parent = get(parent_id) if parent_id else None
                if parent is not None:
                    parent_id = parent.id  # one string object for both
                raw = source.raw(line - 1) if migrated is None else value
                entry: SessionEntry = SessionMessageEntry(
                    entry_id, parent_id, stamp, intern_role(message.get("role")), raw
                )
                if parent is None and parent_id:
                    suspects.append(entry)
                append(entry)
                by_id[entry_id] = entry
                line_of[id(entry)] = line
                loaded.leaf_id = entry_id
                continue
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
            held_line = line_of[id(held)]
            earlier = migrated[held_line] if migrated is not None else source.parse(held_line - 1)
            if _same(value, earlier):
                repeats.append((line, held_line))
                loaded.leaf_id = entry_id
                continue
            notes.append((line, _rename_earlier(loaded, held, line)))
            read.renamed = True
        entry, problem = parse_entry(value, source.raw(line - 1) if migrated is None else value)
        parent_id = entry.parent_id
        if isinstance(parent_id, str) and parent_id and parent_id not in by_id:
            suspects.append(entry)
        append(entry)
        by_id[entry_id] = entry
        line_of[id(entry)] = line
        loaded.leaf_id = entry_id
        if type(entry) is LabelEntry:
            labels.append(entry)
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
    return read


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
            resolved[parent_id] = (lost_line, entries[before - 1]) if lost_line is not None and before else None
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


def _tree_problems(loaded: LoadedSession, suspects: list[Any], *, renamed: bool) -> list[tuple[int, str]]:
    """Missing parents (a root, as in Pi) and ``parentId`` cycles (walks stop at them instead of looping).

    When every entry's parent was read before it (``suspects``, the others, all have a missing parent) and no id
    changed hands (``renamed``), there is no cycle: only the missing parents are told, without walking the tree.
    """
    by_id, line_of, out = loaded.by_id, loaded.line_of, []
    if not renamed and not any(entry.parent_id in by_id for entry in suspects):
        for entry in suspects:
            line = line_of[id(entry)]
            out.append((line, f"line {line}: parent {entry.parent_id!r} is missing: a root here"))
        return out
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
