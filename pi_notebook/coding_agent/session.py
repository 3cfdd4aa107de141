"""Pi JSONL v3 session files: loading, the entry tree, branches, appends and ``build_session_context``.

A session file is one JSON object per line: a ``session`` header, then entries forming a tree through
``parentId``. The *leaf* is where the next append goes; the LLM context is the path root → leaf with
compactions and branch summaries applied. Loading follows Pi's ``SessionManager``; files written here open in
Pi. Where Pi loses data or hangs, this module does better, on purpose:

* :meth:`SessionFile.create` writes the header at once (Pi waits for the first assistant message): a notebook
  records ``%bash`` before any assistant message and must survive a restart;
* opening never writes: migrations happen in memory (:meth:`SessionFile.write_migrated` writes a copy when
  asked); a file without a valid header opens empty with a warning, and appends to it are refused;
* JSON lines that are not entry objects and ``message`` entries without a message are skipped with a warning;
  ``parentId`` cycles are reported and walks stop at them; a cut last line gets a newline before our first;
* a lost line costs only itself, a file Pi wrote twice loads once, clashing ids stay reachable
  (:mod:`.session_load`: the tree is repaired in memory, the file is never rewritten);
* a second writer is refused (:class:`SessionLockedError`); appending to a v1 file (no stable ids) is refused;
* appends are atomic with respect to the leaf (read it, write the entry, move it), from any thread.
"""

from __future__ import annotations

import errno
import os
import threading
import time
import uuid
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from ..agent_core import as_agent_message
from ..ai.jstext import js_trim
from .json_lines import dumps_line, json_line
from .session_context import (
    DEFAULT_LEAF,
    DefaultLeaf,
    SessionContext,
    SessionTreeNode,
    build_tree,
    context_at,
    gc_paused,
    path_to_leaf,
)
from .session_entries import (
    CURRENT_SESSION_VERSION,
    ENTRY_TYPES,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    SessionMessageEntry,
    SessionWarning,
    ThinkingLevelChangeEntry,
    intern_role,
    new_entry_id,
    parse_entry,
    written_id,
)
from .session_load import load_session_lines
from .session_lock import WriterLockHeld, lock_writer, unlock_writer


class SessionError(Exception):
    """Base of the errors raised for misuse of a session file."""


class SessionLockedError(SessionError):
    """The file is already open for writing, by this process or another one."""


class SessionReadOnlyError(SessionError):
    """The session was opened with ``readonly=True``; it cannot be appended to."""


class SessionClosedError(SessionError, ValueError):
    """The session file was closed."""


class InvalidSessionError(SessionError):
    """Appending is refused: the file has no valid session header, or is a v1 file without stable ids."""


class EntryNotFoundError(SessionError, KeyError):
    """No entry has this id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


# --- writing like Pi ----------------------------------------------------------------------------------


def iso_now() -> str:
    """The current UTC time like JS ``new Date().toISOString()``: ``2024-12-03T14:00:00.000Z``."""
    global _iso_second
    ms = time.time_ns() // 1_000_000
    second, prefix = _iso_second
    if second != ms // 1000:
        second = ms // 1000
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _iso_second = (second, prefix)  # one tuple, replaced whole: safe from any thread
    return f"{prefix}.{ms % 1000:03d}Z"


_iso_second: tuple[int | None, str] = (None, "")


# --- the writer lock -----------------------------------------------------------------------------------


def _open_append(path: Path, *, create: bool) -> BinaryIO:
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0) | (os.O_CREAT if create else 0)
    return os.fdopen(os.open(path, flags, 0o644), "ab")


def _lock(fh: BinaryIO, path: Path) -> str | None:
    """Take the exclusive writer lock (released when ``fh`` closes); a warning if it cannot be taken."""
    try:
        # A second open() in this process conflicts too (.session_lock: flock, or msvcrt on Windows).
        lock_writer(fh.fileno())
    except WriterLockHeld as e:
        raise SessionLockedError(
            f"{path} is already open for writing (in this or another process); close that session "
            "first, or open this one with readonly=True"
        ) from e
    except OSError as e:
        return f"could not lock the file ({e.strerror}); a second writer would not be detected"
    return None


# --- the file ------------------------------------------------------------------------------------------


class SessionFile:
    """A Pi session file: its entries, the tree they form, the leaf, and appends that go straight to disk.

    Get one with :meth:`create` or :meth:`open`; :meth:`close` it (or use ``with``) to release the lock.
    """

    def __init__(self, path: Path, fh: BinaryIO | None, *, readonly: bool) -> None:
        """Internal: use :meth:`create` or :meth:`open`."""
        self._path, self._fh, self._readonly, self._closed = path, fh, readonly, False
        self._header: SessionHeader | None = None
        self._plain_header: dict[str, Any] | None = None  # a header as written: typed on first use (`header`)
        self._file_version: int | float | None = None
        self._entries: list[SessionEntry] = []
        self._by_id: dict[str, SessionEntry] = {}
        self._labels: dict[str, str] = {}
        self._leaf_id: str | None = None
        self._needs_newline = False
        # Held from reading the leaf to moving it (and by close): appends from several threads form one branch.
        self._lock = threading.RLock()
        self.warnings: list[str] = []
        """What was skipped or odd while loading, one short line each, with its line number."""

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        cwd: str | os.PathLike[str] | None = None,
        *,
        parent_session: str | None = None,
    ) -> SessionFile:
        """Start a session file at ``path`` (default ``cwd``: the current directory); write the header now.

        ``FileExistsError`` if ``path`` has content; :class:`SessionLockedError` if another writer has it.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = _open_append(path, create=True)
        try:
            problem = _lock(fh, path)
            if os.fstat(fh.fileno()).st_size:
                raise FileExistsError(errno.EEXIST, "file has content; use SessionFile.open", str(path))
            self = cls(path, fh, readonly=False)
            header = {"type": "session", "version": CURRENT_SESSION_VERSION, "id": str(uuid.uuid4())}
            header.update(timestamp=iso_now(), cwd=os.fspath(cwd) if cwd is not None else os.getcwd())
            if parent_session is not None:
                header["parentSession"] = parent_session
            # Written as built (the keys in Pi's order); typed when first read, so that starting a session does
            # not wait for pydantic to build the header's validator (#12, P2).
            self._plain_header, self._file_version = header, CURRENT_SESSION_VERSION
            fh.write(json_line(header))
            fh.flush()
        except BaseException:
            fh.close()
            raise
        if problem:
            self._warn(problem)
        return self

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, readonly: bool = False) -> SessionFile:
        """Load a session file as Pi does, without ever writing to it.

        Unless ``readonly``, take the writer lock (:class:`SessionLockedError` if taken). Bad content never
        raises: it is skipped and listed in :attr:`warnings`. A missing file raises ``FileNotFoundError``.
        """
        path = Path(path)
        fh = None if readonly else _open_append(path, create=False)
        try:
            problem = _lock(fh, path) if fh is not None else None
            data = path.read_bytes()
        except BaseException:
            if fh is not None:
                fh.close()
            raise
        self = cls(path, fh, readonly=readonly)
        if problem:
            self._warn(problem)
        self._needs_newline = bool(data) and not data.endswith(b"\n")
        with gc_paused():
            self._load(data)
        return self

    def _load(self, data: bytes) -> None:
        try:
            loaded = load_session_lines(data.split(b"\n"))  # checks that every line is UTF-8 as it reads it
        except UnicodeDecodeError:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as e:
                self._warn(f"byte {e.start}: not valid UTF-8; bad bytes read as U+FFFD (as Pi does)")
            data = data.decode("utf-8", errors="replace").encode("utf-8")
            loaded = load_session_lines(data.split(b"\n"))
        if isinstance(loaded.header, dict):
            self._header, self._plain_header = None, loaded.header
        else:
            self._header, self._plain_header = loaded.header, None
        self._file_version = loaded.version
        self._entries, self._by_id = loaded.entries, loaded.by_id
        for entry in loaded.labels:
            self._track_label(entry)
        self._leaf_id = loaded.leaf_id
        for _, note in loaded.notes:
            self._warn(note)

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        warnings.warn(f"{self._path}: {message}", SessionWarning, stacklevel=4)

    def _register(self, entry: SessionEntry) -> None:
        self._entries.append(entry)
        self._by_id[entry.id] = entry
        self._leaf_id = entry.id
        if isinstance(entry, LabelEntry):
            self._track_label(entry)

    def _track_label(self, entry: LabelEntry) -> None:
        if entry.label:
            self._labels[entry.target_id] = entry.label
        else:
            self._labels.pop(entry.target_id, None)

    def close(self) -> None:
        """Release the writer lock and close the file; appends then raise :class:`SessionClosedError`."""
        with self._lock:  # not under an append that another thread is writing
            self._closed = True
            fh, self._fh = self._fh, None
        if fh is not None and not fh.closed:  # (the collector may have finalized the file object first)
            unlock_writer(fh.fileno())  # Windows frees a closed file's lock only eventually; POSIX: at close
            fh.close()  # releases the lock

    def __enter__(self) -> SessionFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_fh", None) is not None:
            self.close()

    # -- reading --------------------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The session file."""
        return self._path

    @property
    def readonly(self) -> bool:
        """True when opened with ``readonly=True``: appends are refused."""
        return self._readonly

    @property
    def closed(self) -> bool:
        """True after :meth:`close`: appends are refused."""
        return self._closed

    @property
    def header(self) -> SessionHeader | None:
        """The header (``version`` migrated to 3 in memory), or ``None`` when the file has no valid header."""
        if self._plain_header is not None:
            self._header, self._plain_header = SessionHeader.model_validate(self._plain_header), None
        return self._header

    @property
    def file_version(self) -> int | float | None:
        """The format version as found in the file (1 when the header has none)."""
        return self._file_version

    @property
    def session_id(self) -> str | None:
        """The session's UUID, from the header."""
        if self._plain_header is not None:
            return self._plain_header["id"]
        return self._header.id if self._header else None

    @property
    def cwd(self) -> str | None:
        """The working directory recorded in the header."""
        if self._plain_header is not None:
            return self._plain_header.get("cwd")
        return self._header.cwd if self._header else None

    @property
    def entries(self) -> list[SessionEntry]:
        """All entries in file order, header excluded (a new list)."""
        return list(self._entries)

    @property
    def leaf_id(self) -> str | None:
        """Where the next append goes: the last entry after loading, then each new entry; ``None``: a root."""
        return self._leaf_id

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        """The entry with this id, or ``None`` (with duplicate ids, the later one)."""
        return self._by_id.get(entry_id)

    def get_label(self, entry_id: str) -> str | None:
        """The entry's label: the latest label entry for it wins; an empty or absent label clears it."""
        return self._labels.get(entry_id)

    @property
    def session_name(self) -> str | None:
        """The name of the latest ``session_info`` entry whose name is not empty, as written (Pi's
        ``getSessionName``: :meth:`append_session_info` trims, a name read from a file stays as it is)."""
        for entry in reversed(self._entries):
            if isinstance(entry, SessionInfoEntry) and entry.name:
                return entry.name
        return None

    def get_branch(self, leaf_id: str | None = None) -> list[SessionEntry]:
        """The entries from the root to ``leaf_id`` (default: the leaf); ``[]`` for an unknown id."""
        leaf = self._by_id.get(leaf_id if leaf_id is not None else self._leaf_id)  # type: ignore[arg-type]
        return path_to_leaf(leaf, self._by_id) if leaf is not None else []

    def build_session_context(self, leaf_id: str | DefaultLeaf | None = DEFAULT_LEAF) -> SessionContext:
        """:func:`build_session_context` over this file's entries, at the leaf by default."""
        if leaf_id is DEFAULT_LEAF:
            leaf_id = self._leaf_id
        if leaf_id is None:
            return SessionContext()
        leaf = self._by_id.get(leaf_id) or (self._entries[-1] if self._entries else None)
        return context_at(leaf, self._by_id)

    def get_tree(self) -> list[SessionTreeNode]:
        """The entries as a forest: returns the roots, in file order.

        Roots have a ``null``, missing or self parent; children are sorted by timestamp (stable). Entries in
        a ``parentId`` cycle are kept (Pi drops them): the first of each cycle in file order becomes a root.
        """
        return build_tree(self._entries, self._labels)

    # -- moving the leaf --------------------------------------------------------------------------------

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an existing entry; the next append starts a new branch there."""
        with self._lock:
            self._require(entry_id)
            self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry: the next append is a new root."""
        with self._lock:
            self._leaf_id = None

    def branch_with_summary(
        self, target_id: str | None, summary: str, details: Any = None, from_hook: bool | None = None
    ) -> BranchSummaryEntry:
        """Move the leaf to ``target_id`` (``None``: a new root) and append a ``branch_summary`` there, in one
        step (no append from another thread comes in between)."""
        with self._lock:
            self._check_writable()
            if target_id is not None:
                self._require(target_id)
            self._leaf_id = target_id
            fields = {"fromId": target_id if target_id is not None else "root", "summary": summary}
            return self._append("branch_summary", fields, details=details, fromHook=from_hook)

    def _require(self, entry_id: str) -> None:
        if entry_id not in self._by_id:
            raise EntryNotFoundError(f"no entry with id {entry_id!r} in {self._path}")

    # -- appending --------------------------------------------------------------------------------------

    def append_message(self, message: Any) -> SessionMessageEntry:
        """Append a ``message`` entry: a typed AgentMessage or Pi JSON (any role; unknown ones stay raw).

        Pi JSON is written as given (typed when first used); a typed message is written as its ``to_pi_json()``.
        Summaries are their own entries: use :meth:`append_compaction` and :meth:`branch_with_summary`.
        """
        if isinstance(message, dict):
            role, typed = message.get("role"), None
        elif callable(getattr(message, "to_pi_json", None)):
            role, typed = getattr(message, "role", None), message
        else:
            raise TypeError(f"not an AgentMessage: {type(message).__name__}")
        if role in ("branchSummary", "compactionSummary"):
            raise ValueError(f"a {role} message is written as its own entry type, not with append_message")
        with self._lock:
            self._check_writable()
            leaf = self._by_id.get(self._leaf_id) if self._leaf_id is not None else None
            parent = written_id(leaf) if leaf is not None else self._leaf_id  # the id the file knows it by
            entry_id, stamp = new_entry_id(self._by_id), iso_now()
            raw = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp}
            try:
                raw["message"] = message if typed is None else typed.to_pi_json()
                data = json_line(raw)  # kept as the entry's line too (the newline is JSON whitespace)
            except (TypeError, ValueError):  # typed parts (a content block object), NaN: typed, then written as Pi's
                typed = as_agent_message(message)
                raw["message"] = typed.to_pi_json()
                data = json_line(raw)
            self._write_line(data)
            entry = SessionMessageEntry(entry_id, parent, stamp, intern_role(role), data, typed)
            if parent != self._leaf_id:  # the leaf was renamed in memory: hang the entry under that one
                entry.set_in_memory(parent_id=self._leaf_id)
            self._entries.append(entry)  # (_register, without its label check)
            self._by_id[entry_id] = entry
            self._leaf_id = entry_id
            return entry

    def append_thinking_level_change(self, thinking_level: str) -> ThinkingLevelChangeEntry:
        """Append a ``thinking_level_change`` entry."""
        return self._append("thinking_level_change", {"thinkingLevel": thinking_level})

    def append_model_change(self, provider: str, model_id: str) -> ModelChangeEntry:
        """Append a ``model_change`` entry."""
        return self._append("model_change", {"provider": provider, "modelId": model_id})

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
    ) -> CompactionEntry:
        """Append a ``compaction`` entry: ``summary`` replaces the path before ``first_kept_entry_id``."""
        fields = {"summary": summary, "firstKeptEntryId": first_kept_entry_id, "tokensBefore": tokens_before}
        return self._append("compaction", fields, details=details, fromHook=from_hook)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> CustomEntry:
        """Append a ``custom`` entry (extension state, never in the context)."""
        return self._append("custom", {"customType": custom_type}, data=data)

    def append_custom_message_entry(
        self, custom_type: str, content: Any, display: bool = True, details: Any = None
    ) -> CustomMessageEntry:
        """Append a ``custom_message`` entry: an extension's message that enters the context."""
        fields = {"customType": custom_type, "content": content, "display": display}
        return self._append("custom_message", fields, details=details)

    def append_label_change(self, target_id: str, label: str | None) -> LabelEntry:
        """Label an entry; ``None`` or ``""`` clears its label."""
        with self._lock:
            self._check_writable()
            self._require(target_id)
            return self._append("label", {"targetId": target_id}, label=label)

    def append_session_info(self, name: str) -> SessionInfoEntry:
        """Name the session (trimmed; an empty name does not rename it)."""
        return self._append("session_info", {"name": js_trim(name)})

    def append_refusal(self) -> str | None:
        """Why an append would be refused now (closed, read-only, no valid header, a v1 file), or ``None``.
        Writes nothing."""
        try:
            self._check_writable()
        except SessionError as e:
            return str(e)
        return None

    def _check_writable(self) -> None:
        if self._closed:
            raise SessionClosedError(f"{self._path} is closed")
        if self._readonly:
            raise SessionReadOnlyError(f"{self._path} was opened with readonly=True")
        if self.header is None:
            raise InvalidSessionError(
                f"{self._path} has no valid session header and was read as empty; appending is refused so "
                "that new entries are not mixed into a file that could not be read (see .warnings)"
            )
        if self._file_version is not None and self._file_version < 2:
            raise InvalidSessionError(
                f"{self._path} is a v1 session file, whose entry ids change at every load; "
                "write_migrated(new_path) and open the copy to append"
            )

    def _append(self, entry_type: str, fields: dict[str, Any], **optional: Any) -> Any:
        """Write one entry under the leaf and move the leaf to it: one atomic step under ``self._lock``."""
        with self._lock:
            self._check_writable()
            leaf = self._by_id.get(self._leaf_id) if self._leaf_id is not None else None
            parent = written_id(leaf) if leaf is not None else self._leaf_id  # the id the file knows it by
            raw = {"type": entry_type, "id": new_entry_id(self._by_id), "parentId": parent}
            raw["timestamp"] = iso_now()
            raw.update(fields)
            raw.update((key, value) for key, value in optional.items() if value is not None)
            entry = ENTRY_TYPES[entry_type].model_validate(raw)
            self._write_line(json_line(entry.to_pi_json()))
            if parent != self._leaf_id:  # the leaf was renamed in memory: hang the entry under that one
                entry.set_in_memory(parent_id=self._leaf_id)
            self._register(entry)
            return entry

    def import_entries(self, entries: Iterable[dict[str, Any]]) -> list[SessionEntry]:
        """Append entries of another file of this session tree (Pi JSON, e.g. ``entry.to_pi_json()``), keeping
        their ids and parents, as Pi's ``forkFrom`` copies them: a fork, or another kernel's branch merged back.

        An entry already here (same id, same content) is skipped; an id here with other content gets a new id,
        and the entries under it follow the new one. The leaf ends at the last entry written. Returns those.
        """
        with self._lock:
            self._check_writable()
            renamed: dict[str | None, str] = {}  # old id → new id, looked up with any parentId (None too)
            added: list[SessionEntry] = []
            for raw in entries:
                if not isinstance(raw, dict) or raw.get("type") == "session" or not isinstance(raw.get("id"), str):
                    continue
                raw = {**raw, "parentId": renamed.get(raw.get("parentId"), raw.get("parentId"))}
                here = self._by_id.get(raw["id"])
                if here is not None:
                    if here.to_pi_json() == raw:
                        continue
                    raw["id"] = renamed[raw["id"]] = new_entry_id(self._by_id)
                entry, _ = parse_entry(raw)
                self._write_line(json_line(entry.to_pi_json()))
                self._register(entry)
                added.append(entry)
            return added

    def _write_line(self, data: bytes) -> None:
        """Write ``data`` straight to the file (no buffer that could replay it later). If the write fails
        (disk full, a file-size limit), cut the file back to where it was, so the next line starts clean; if even
        that fails, start the next line on a fresh line."""
        assert self._fh is not None
        if self._needs_newline:  # the file ends in a cut line: keep ours off it
            data = b"\n" + data
        fd = self._fh.fileno()
        written = os.write(fd, data)  # one syscall for a whole line, almost always
        if written == len(data):
            self._needs_newline = False
            return
        view = memoryview(data)[written:]
        try:
            while view:
                n = os.write(fd, view)
                written += n
                view = view[n:]
        except OSError:
            self._cut_back(fd, written)
            raise
        self._needs_newline = False

    def _cut_back(self, fd: int, written: int) -> None:
        """A write failed after ``written`` bytes of its line: remove them (the file is ours, appended at its end)."""
        try:
            if written:
                os.ftruncate(fd, os.fstat(fd).st_size - written)
        except OSError:
            self._needs_newline = True

    def write_migrated(self, path: str | os.PathLike[str]) -> Path:
        """Write this session, as version 3, to a new file (``FileExistsError`` if ``path`` exists).

        Pi does this to the file itself when it opens a v1/v2 file; here it happens only when asked.
        """
        if self.header is None:
            raise InvalidSessionError(f"{self._path} has no valid session header; there is nothing to migrate")
        header = {**self.header.to_pi_json(), "version": CURRENT_SESSION_VERSION}
        lines = [dumps_line(header), *(dumps_line(e.to_pi_json()) for e in self._entries)]
        with open(path, "xb") as f:
            f.write(("\n".join(lines) + "\n").encode("utf-8"))
        return Path(path)
