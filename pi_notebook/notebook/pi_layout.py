"""Sessions shared with Pi: ``session_layout = "pi"`` and ``%agent_session open [N]``.

With ``session_layout = "pi"`` a notebook's new sessions go to Pi's folder for the kernel's working directory,
so ``pi -c`` and ``/resume`` in that directory find them. Each starts as a draft that Pi does not list, and is
given its Pi name after the first assistant reply (Pi duplicates a file it continues before that: see
:mod:`pi_notebook.coding_agent.pi_sessions`). The notebook finds its session again through the pointer
``<session_dir>/<notebook>.current``, whatever the layout.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from ..coding_agent.pi_sessions import (
    PiSessionInfo,
    is_draft,
    list_pi_sessions,
    new_draft_path,
    pi_session_dir,
    publish_draft,
)


def busy_copy_path(path: Path, cwd: str) -> Path:
    """Where a kernel records when another kernel holds ``path``: a new draft if ``path`` is in Pi's folder (a
    header-only ``.jsonl`` there is what makes Pi duplicate a file), else ``<stem>-<pid>.jsonl`` beside it."""
    if is_draft(path) or path.parent == pi_session_dir(cwd):
        return new_draft_path(cwd)
    return path.with_name(f"{path.stem}-{os.getpid()}.jsonl")


def publish_when_ready(session: Any) -> None:
    """Give the session's draft its Pi name as soon as it holds an assistant message: now, and after every change
    of the history (the first reply ends a run, which reports a change)."""

    def check() -> None:
        if session.is_streaming or not is_draft(session.file.path):
            return
        published = publish_draft(session.file)
        if published is not None:
            session.switch_to(published, session.note)  # also moves the notebook's pointer to the new name

    session.on_change(check)
    check()


def _one_line(text: str, width: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def session_lines(sessions: list[PiSessionInfo], current: Path | None) -> list[str]:
    """One line per session, numbered from 1, ``*`` marking ``current``:
    ``*  2  2026-03-15 23:40    12 msgs  [name] first message``."""
    out = []
    for number, info in enumerate(sessions, 1):
        mark = "*" if current is not None and info.path == current else " "
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.modified))
        title = f"[{info.name}] " if info.name else ""
        text = _one_line(title + (info.first_message or "(no messages)"), 60)
        out.append(f"{mark} {number:>2}  {when}  {info.message_count:>4} msgs  {text}")
    return out


def pi_sessions_for(cwd: str) -> tuple[Path, list[PiSessionInfo]]:
    """Pi's folder for ``cwd`` and its sessions, newest first (the order of ``/resume`` and of ``open N``)."""
    return pi_session_dir(cwd), list_pi_sessions(cwd)
