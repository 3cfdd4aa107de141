"""Where a notebook's session file lives, and how a restarted kernel finds it again.

By default ``<notebook dir>/<session_dir>/<notebook name>.jsonl``; ``%agent_session new|open`` and
``%%agent --new`` switch to another file and leave a pointer (``<notebook>.current``) so that a restart comes
back to it. With ``session_layout = "pi"`` new sessions go to Pi's own folder (see :mod:`.pi_layout`).

A write that fails here (a full disk, a read-only folder) loses nothing and never stops a kernel: a pointer that
cannot be written leaves the switch in place and says in one line where a restart would go instead; a copy that
cannot be written beside the notebook's file is written in :func:`fallback_folder` and found there again.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any

from ..coding_agent.pi_sessions import is_draft, new_draft_path
from ..coding_agent.session import SessionError, SessionFile, SessionLockedError
from .config import PiNotebook
from .pi_layout import busy_copy_path

MERGED = "pi_notebook.merged"
"""``customType`` of the ``custom`` entry (never sent to the LLM) that records a merge of another kernel's copy."""


def notebook_path(shell: Any) -> Path | None:
    """The notebook this kernel runs, as front ends tell it (JupyterLab/Notebook: ``JPY_SESSION_NAME`` or
    ``__session__``; VS Code: ``__vsc_ipynb_file__``), or ``None`` (plain IPython)."""
    ns = getattr(shell, "user_ns", {}) or {}
    for candidate in (
        ns.get("__vsc_ipynb_file__"),
        ns.get("__session__"),
        os.environ.get("JPY_SESSION_NAME"),
    ):
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            return Path(candidate).expanduser()
    return None


def _session_folder(shell: Any, config: PiNotebook) -> Path:
    notebook = notebook_path(shell)
    base = notebook.parent if notebook is not None else Path.cwd()
    return (base / Path(config.session_dir).expanduser()).resolve()


def session_path_for(shell: Any, config: PiNotebook, *, fresh: bool = False, cwd: str | None = None) -> Path:
    """Where this notebook's session lives: ``<notebook dir>/<session_dir>/<notebook name>.jsonl``; without a
    notebook (or with ``fresh``), a new timestamped file in the session folder. With ``session_layout = "pi"``,
    always a new draft in Pi's folder for ``cwd`` (default: the current directory)."""
    if config.session_layout == "pi":
        return new_draft_path(cwd or os.getcwd())
    notebook = notebook_path(shell)
    folder = _session_folder(shell, config)
    if notebook is not None and not fresh:
        return folder / f"{notebook.stem}.jsonl"
    stem = notebook.stem if notebook is not None else "ipython"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return folder / f"{stem}-{stamp}-{uuid.uuid4().hex[:6]}.jsonl"


def _pointer_for(shell: Any, config: PiNotebook) -> Path | None:
    """``<session folder>/<notebook>.current``: the session this notebook used last (absent: the default one)."""
    notebook = notebook_path(shell)
    if notebook is None:
        return None
    return _session_folder(shell, config) / f"{notebook.stem}.current"


def last_session_path(shell: Any, config: PiNotebook) -> Path:
    """The session file this notebook used last: the one ``%agent_session new|open`` or ``%%agent --new``
    switched to (if it still exists), else the notebook's default session file."""
    pointer = _pointer_for(shell, config)
    if pointer is not None and pointer.is_file():
        try:
            target = Path(pointer.read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError):
            target = None
        if target is not None and target.is_file() and starts_with_a_header(target):
            return target  # (a pointer to anything else, e.g. a file an old version opened, is not followed)
    return session_path_for(shell, config)


def starts_with_a_header(path: Path) -> bool:
    """True if the first line of ``path`` is a session header (a quick look, not a load)."""
    return _header_of(path) is not None


def _header_of(path: Path) -> dict[str, Any] | None:
    """The first line of ``path`` if it is a session header, else ``None``."""
    try:
        with open(path, "rb") as fh:
            first = json.loads(fh.readline(1 << 20) or b"null")
    except (OSError, ValueError):
        return None
    return first if isinstance(first, dict) and first.get("type") == "session" else None


def fallback_folder() -> Path:
    """Where sessions go when the notebook's session folder cannot be created: ``~/.pi_notebook/sessions``."""
    return Path.home() / ".pi_notebook" / "sessions"


def remember_session(shell: Any, config: PiNotebook, path: Path) -> None:
    """Make ``path`` the session this notebook reattaches to after a restart.

    If the pointer cannot be written (disk full, a read-only folder), the switch to ``path`` stands: one line says
    where a restart would go instead and how to come back (the old pointer, if any, is left whole)."""
    pointer = _pointer_for(shell, config)
    if pointer is None:
        return
    path = Path(path).resolve()
    temp = pointer.with_name(pointer.name + ".tmp")
    try:
        pointer.parent.mkdir(parents=True, exist_ok=True)
        if path == session_path_for(shell, config).resolve():
            pointer.unlink(missing_ok=True)
            return
        temp.write_text(str(path) + "\n", encoding="utf-8")
        os.replace(temp, pointer)  # atomic: a crash leaves the old pointer or the new one, never half of one
    except OSError as e:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        after = last_session_path(shell, config)
        instead = f"reopens {after}" if after.is_file() and after != path else "starts a new session"
        print(
            f"pi_notebook: could not write {pointer.name} ({e.strerror or e}): after a restart this notebook "
            f"{instead}, not this one; %agent_session open {path} comes back here"
        )


def open_or_create(path: Path, cwd: str) -> tuple[SessionFile, str | None]:
    """Open the session at ``path`` for writing (creating it if needed), and a note for the user, if any.

    If another kernel holds it (two kernels on one notebook, or both starting at the same moment), this kernel
    continues in a copy beside it (:func:`open_beside`). Copies that other kernels left and no one holds any
    more are merged back into ``path`` as branches (:func:`merge_copies`), so no kernel's history goes missing.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(5):
        try:
            if path.exists() and path.stat().st_size > 0:
                file = SessionFile.open(path)
            else:
                file = SessionFile.create(path, cwd=cwd)
        except SessionLockedError:
            return open_beside(path, cwd)
        except FileExistsError:
            continue  # another kernel wrote its header between our look and our create: open its file
        return file, merge_copies(file)
    return open_beside(path, cwd)


def copies_of(path: Path) -> list[Path]:
    """The copies other kernels made of ``path``, oldest first: ``<stem>-<pid>.jsonl`` beside it, and in
    :func:`fallback_folder` (where a copy goes when there is no room beside it) those whose header names ``path``
    as their parent session."""
    pattern = re.compile(rf"{re.escape(path.stem)}-\d+\.jsonl")
    spare = fallback_folder().resolve()
    copies = []
    for folder in dict.fromkeys([path.parent.resolve(), spare]):
        for candidate in folder.glob(f"{path.stem}-*.jsonl"):
            if not pattern.fullmatch(candidate.name):
                continue
            if folder == spare and (_header_of(candidate) or {}).get("parentSession") != str(path):
                continue  # the copy of another notebook's file of the same name
            copies.append(candidate)
    return sorted(copies, key=lambda c: c.stat().st_mtime)


def open_beside(path: Path, cwd: str) -> tuple[SessionFile, str]:
    """``path`` is held by another kernel: continue in a copy this kernel can write, with the same history.

    A copy an earlier kernel of this notebook left (no one holds it now) is taken up again, so its history comes
    back after a restart; what the other kernel recorded since is added to it, as a branch beside this one. A new
    copy that cannot be written beside ``path`` (disk full) is written in :func:`fallback_folder`, and the note
    says so; a copy that could not be written is not left behind.
    """
    held = SessionFile.open(path, readonly=True)
    try:
        copy = _earlier_copy(path)
        if copy is not None:
            problem = _add_what_the_other_kernel_recorded(copy, held, path)
            note = f"{path} is in use by another kernel; this kernel continues its history in {copy.path.name}"
            return copy, note + (f" ({problem})" if problem else "")
        target = busy_copy_path(path, cwd)
        try:
            copy = _new_copy(target, held, path, cwd)
        except OSError as e:
            copy = _new_copy(fallback_folder() / target.name, held, path, cwd)
            return copy, (
                f"{path} is in use by another kernel and there is no room for a copy beside it "
                f"({e.strerror or e}); this kernel continues its history in {copy.path}"
            )
        return copy, f"{path} is in use by another kernel; this kernel continues its history in {copy.path.name}"
    finally:
        held.close()


def _earlier_copy(path: Path) -> SessionFile | None:
    """A copy of ``path`` that no kernel holds, opened for writing (files that are not sessions are passed by:
    e.g. an empty one that an older version left when it could not write the header)."""
    for candidate in copies_of(path) if not is_draft(path) else []:
        if not starts_with_a_header(candidate):
            continue
        try:
            copy = SessionFile.open(candidate)
        except (SessionError, OSError):
            continue
        if copy.append_refusal() is None:
            return copy
        copy.close()
    return None


def _add_what_the_other_kernel_recorded(copy: SessionFile, held: SessionFile, path: Path) -> str | None:
    """Import the held file's entries into ``copy`` as a branch beside the copy's own, whose leaf stays current.
    If the disk fills up half-way, what was imported is whole and the rest stays in the other kernel's file (it is
    imported at the next restart); the returned line says so."""
    own_leaf = copy.leaf_id
    try:
        added = copy.import_entries(entry.to_pi_json() for entry in held.entries)
        if own_leaf is not None and added:
            copy.branch(own_leaf)
            copy.append_custom_entry(MERGED, {"from": str(path), "entries": len(added)})
    except OSError as e:
        if own_leaf is not None:
            copy.branch(own_leaf)  # keep going where this copy was, not on the other kernel's branch
        return f"what the other kernel recorded since is not in it yet: {e.strerror or e}"
    return None


def _new_copy(target: Path, held: SessionFile, path: Path, cwd: str) -> SessionFile:
    """A new copy of ``held`` at ``target``; if it cannot be written whole, nothing of it is left and the error
    is raised."""
    copy = None
    try:
        copy = SessionFile.create(target, cwd=cwd, parent_session=str(path))
        copy.import_entries(entry.to_pi_json() for entry in held.entries)
    except OSError:
        with contextlib.suppress(OSError):  # what this call wrote (if that fails too: a later kernel completes it)
            if copy is not None:
                copy.close()
                target.unlink()  # a partial copy
            elif target.stat().st_size == 0:
                target.unlink()  # the empty file left when its header could not be written
        raise
    return copy


def merge_copies(file: SessionFile) -> str | None:
    """Add to ``file`` what other kernels recorded in their copies of it (the ones no kernel holds now), each
    as a branch; the current branch stays. Each merged copy is renamed ``<name>.merged``. Returns the note.

    A copy that cannot be merged now (disk full) stays as it is, and the note says so: the next kernel to open
    ``file`` merges it (entries already added are not added twice)."""
    if file.readonly or is_draft(file.path):
        return None
    merged, failed = [], None
    for candidate in copies_of(file.path):
        try:
            copy = SessionFile.open(candidate)
        except (SessionError, OSError):
            continue  # still in use by its kernel: merged when it is free
        leaf = file.leaf_id
        try:
            added = file.import_entries(entry.to_pi_json() for entry in copy.entries)
            if added:
                if leaf is not None:
                    file.branch(leaf)
                file.append_custom_entry(MERGED, {"from": str(candidate), "entries": len(added)})
                merged.append(f"{len(added)} entries from {candidate.name} (last: {added[-1].id})")
        except OSError as e:
            if leaf is not None:
                file.branch(leaf)  # the current branch stays, whatever was added before the failure
            failed = f"could not merge {candidate.name} yet ({e.strerror or e}); it is merged at the next restart"
            break
        finally:
            copy.close()
        candidate.rename(candidate.with_name(candidate.name + ".merged"))
    notes = [failed] if failed else []
    if merged:
        notes.insert(
            0,
            f"merged what another kernel recorded for this notebook, as a branch: {'; '.join(merged)}. "
            "%agent_session list shows the entries, %agent_session branch ID continues there",
        )
    return "; ".join(notes) or None
