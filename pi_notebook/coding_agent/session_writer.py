"""Writing a session's messages to its session file: in the order they happened, durable at once, never lost.

Three rules, beyond what :class:`~pi_notebook.coding_agent.session.SessionFile` does for one append:

* **One writer at a time.** A lock makes "write the entry, remember its id" one step for every thread (a
  background thread's ``pi_notebook.record``, the agent's loop, the cell).
* **Deferred, but durable.** A message recorded while a run streams (a ``%bash`` from another thread) joins the
  history only when the run is over, as Pi queues it, so a tool call and its result stay together. Until then it
  waits in a journal next to the session file (``<file>.pending``), so a crash does not lose it: the next
  kernel writes it to the session when it opens the file.
* **A failed write loses nothing.** When the file cannot be written (disk full, a file-size limit, permissions)
  the message stays in memory, in order, with the error; every later write retries the backlog first, so the
  file never gets a message before an older one. :meth:`SessionWriter.check` turns a backlog into one clear line.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agent_core import from_pi_json, to_pi_json
from .messages import CustomMessage
from .session import SessionError, SessionFile
from .session_entries import BranchSummaryEntry, CompactionEntry, CustomMessageEntry, SessionMessageEntry


class SessionWriteError(RuntimeError):
    """Messages could not be written to the session file; they are kept in memory and written when possible."""

    def _render_traceback_(self) -> list[str]:  # IPython: one line, not a traceback
        return [f"pi_notebook: {self}"]


def journal_path(path: Path) -> Path:
    """Where the messages deferred during a run wait: ``<session file>.pending`` (Pi lists only ``.jsonl``)."""
    return path.with_name(path.name + ".pending")


class _Entry:
    """A backlog item that is not a message: how to write it."""

    def __init__(self, append: Callable[[], Any]):
        self.append = append


class SessionWriter:
    """The one way a session writes messages; it remembers which entry holds each message it knows."""

    def __init__(self, file: SessionFile):
        self.file = file
        self.lock = threading.RLock()
        self.entry_ids: dict[int, str] = {}
        """``id(message)`` → the entry that holds it (written, or read back: :meth:`read_back`)."""
        self.unsaved: list[Any] = []
        """What the history holds and the file does not yet (oldest first), because writing failed."""
        self.deferred: list[Any] = []
        """Messages recorded while a run streamed; they join the history when it ends."""
        self.error: BaseException | None = None
        """The last write error, while :attr:`unsaved` is not empty."""
        self._journal_pending = False  # the journal holds messages: removed once they are all in the file

    # --- writing ------------------------------------------------------------------------------------------

    def write(self, message: Any) -> bool:
        """Write ``message`` after any backlog; False (and kept in :attr:`unsaved`) if the file refused it."""
        with self.lock:
            self.unsaved.append(message)
            return self.retry()

    def write_entry(self, append: Callable[[], Any]) -> bool:
        """Like :meth:`write`, for an entry that is not a message (``append`` writes it: a model change...)."""
        with self.lock:
            self.unsaved.append(_Entry(append))
            return self.retry()

    def retry(self) -> bool:
        """Write the backlog, oldest first, stopping at the first failure. True when nothing is left."""
        with self.lock:
            while self.unsaved:
                item = self.unsaved[0]
                try:
                    entry = item.append() if isinstance(item, _Entry) else self._append(item)
                except (OSError, SessionError) as e:
                    self.error = e
                    return False
                self.unsaved.pop(0)
                if not isinstance(item, _Entry):
                    self.entry_ids[id(item)] = entry.id
            self.error = None
            if self._journal_pending and not self.deferred:  # all it held is in the file now
                self._drop_journal()
            return True

    def _drop_journal(self) -> None:
        try:
            journal_path(self.file.path).unlink(missing_ok=True)
        except OSError:
            return  # (kept: the next kernel skips what the file already holds)
        self._journal_pending = False

    def _append(self, message: Any) -> Any:
        """Write a message as Pi does: ``custom`` messages as ``custom_message`` entries, the rest as ``message``."""
        if isinstance(message, CustomMessage):
            return self.file.append_custom_message_entry(
                message.custom_type, message.content, display=message.display, details=message.details
            )
        return self.file.append_message(message)

    def check(self) -> None:
        """Raise :class:`SessionWriteError` (one line) if some messages could not be written."""
        with self.lock:
            if self.unsaved and not self.retry():
                n = sum(not isinstance(item, _Entry) for item in self.unsaved)
                reason = getattr(self.error, "strerror", None) or str(self.error)
                raise SessionWriteError(
                    f"could not write {self.file.path.name} ({reason}); {n} message{'s' if n != 1 else ''} "
                    "kept in memory, written as soon as writing works again (a restart before that loses them)"
                )

    # --- which entry holds a message ---------------------------------------------------------------------

    def read_back(self, messages: list[Any], entry_ids: list[str]) -> None:
        """The messages of a history read from the file, and their entries (all that is known is replaced)."""
        self.entry_ids = {id(m): entry_id for m, entry_id in zip(messages, entry_ids, strict=False)}

    def entry_id_of(self, message: Any) -> str:
        """The entry holding ``message`` (compaction's ``firstKeptEntryId``): known by identity, else the entry of
        the current branch it was rebuilt from (a custom message, a summary), else the leaf."""
        known = self.entry_ids.get(id(message))
        if known is not None:
            return known
        wanted = to_pi_json(message)
        role = wanted.get("role")
        for entry in self.file.get_branch():
            if isinstance(entry, SessionMessageEntry):
                found = to_pi_json(entry.message) == wanted
            elif isinstance(entry, CustomMessageEntry):
                found = role == "custom" and (entry.custom_type, entry.content) == (
                    wanted.get("customType"),
                    message.content,
                )
            elif isinstance(entry, BranchSummaryEntry):
                found = role == "branchSummary" and entry.summary == wanted.get("summary")
            elif isinstance(entry, CompactionEntry):
                found = role == "compactionSummary" and entry.summary == wanted.get("summary")
            else:
                found = False
            if found:
                return entry.id
        return self.file.leaf_id or ""

    # --- deferring ----------------------------------------------------------------------------------------

    def defer(self, message: Any) -> None:
        """Hold ``message`` until the run ends; journal it at once so that a crash does not lose it."""
        with self.lock:
            self.deferred.append(message)
            self._journal_pending = True
            try:
                with open(journal_path(self.file.path), "a", encoding="utf-8") as journal:
                    journal.write(json.dumps(to_pi_json(message), ensure_ascii=False) + "\n")
                    journal.flush()
                    os.fsync(journal.fileno())
            except OSError as e:
                self.error = e  # kept in memory; written to the session with the rest when the run ends

    def release(self) -> list[Any]:
        """The deferred messages, written now (after any backlog) in the order they were recorded."""
        with self.lock:
            released, self.deferred = self.deferred, []
            for message in released:
                self.write(message)  # the last write that empties the backlog drops the journal
            return released

    def recover(self) -> list[Any]:
        """Messages a previous kernel deferred and never wrote (it crashed mid-run): written now, returned. Those
        the file already holds (the kernel wrote them, then died before removing the journal, or a backlog was
        written after the run) are not written again."""
        journal = journal_path(self.file.path)
        try:
            lines = journal.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        recovered = []
        for line in lines:
            try:
                recovered.append(from_pi_json(json.loads(line)))
            except (ValueError, TypeError):
                continue  # a line cut by the crash: only it is lost
        written = {_fingerprint(m) for m in _file_messages(self.file)}
        recovered = [m for m in recovered if _fingerprint(m) not in written]
        with self.lock:
            self._journal_pending = True
            self.deferred = recovered + self.deferred
            released = self.release()
            if not self.unsaved and not self.deferred:
                self._drop_journal()
            return released


def _file_messages(file: SessionFile) -> list[Any]:
    """Every message the file holds as a message or custom_message entry, on any branch."""
    out: list[Any] = []
    for entry in file.entries:
        if isinstance(entry, SessionMessageEntry):
            out.append(entry.message)
        elif isinstance(entry, CustomMessageEntry):
            out.append(entry)
    return out


def _fingerprint(item: Any) -> str:
    """What identifies a recorded message across a restart: its Pi JSON (a custom message: its type, content,
    display and details, which is what its entry keeps)."""
    if not isinstance(item, (CustomMessageEntry, CustomMessage)):
        return json.dumps(to_pi_json(item), sort_keys=True, default=str)
    fields = [item.custom_type, item.content, item.display is not False, item.details]
    return json.dumps(["custom", *fields], sort_keys=True, default=str)
