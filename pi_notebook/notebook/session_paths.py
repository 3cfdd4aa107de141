"""Where a notebook's session file lives, and how a restarted kernel finds it again.

By default ``<notebook dir>/<session_dir>/<notebook name>.jsonl``; ``%agent_session new|open`` and
``%%agent --new`` switch to another file and leave a pointer (``<notebook>.current``) so that a restart comes
back to it. With ``session_layout = "pi"`` new sessions go to Pi's own folder (see :mod:`.pi_layout`).
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

from ..coding_agent.pi_sessions import new_draft_path
from ..coding_agent.session import SessionFile, SessionLockedError
from .config import PiNotebook
from .pi_layout import busy_copy_path


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
        if target is not None and target.is_file():
            return target
    return session_path_for(shell, config)


def remember_session(shell: Any, config: PiNotebook, path: Path) -> None:
    """Make ``path`` the session this notebook reattaches to after a restart."""
    pointer = _pointer_for(shell, config)
    if pointer is None:
        return
    pointer.parent.mkdir(parents=True, exist_ok=True)
    if Path(path).resolve() == session_path_for(shell, config).resolve():
        pointer.unlink(missing_ok=True)
        return
    temp = pointer.with_name(pointer.name + ".tmp")
    temp.write_text(str(Path(path).resolve()) + "\n", encoding="utf-8")
    os.replace(temp, pointer)  # atomic: a crash leaves the old pointer or the new one, never half of one


def open_or_create(path: Path, cwd: str) -> tuple[SessionFile, str | None]:
    """Open the session at ``path`` for writing (creating it if needed). If another kernel holds it, open it
    read-only and say why: the history is shown but this kernel records into a new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.stat().st_size > 0:
        try:
            return SessionFile.open(path), None
        except SessionLockedError:
            fresh = busy_copy_path(path, cwd)
            note = f"{path} is in use by another kernel; this kernel records into {fresh.name}"
            return SessionFile.create(fresh, cwd=cwd, parent_session=str(path)), note
    return SessionFile.create(path, cwd=cwd), None
