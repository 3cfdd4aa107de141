"""Pi's own session folder: where ``pi -c`` and ``/resume`` look, listing it, and writing there safely.

Pi keeps the sessions of a working directory in one folder (``config.ts`` and ``session-manager.ts``)::

    <agent dir>/sessions/--<cwd>--/<timestamp>_<session id>.jsonl

* agent dir: ``$PI_CODING_AGENT_DIR`` if set and not empty (``~`` and ``~/`` expanded), else ``~/.pi/agent``;
* ``--<cwd>--``: the cwd with one leading ``/`` or ``\\`` dropped and every ``/``, ``\\`` and ``:`` made ``-``
  (``/home/me/proj`` → ``--home-me-proj--``, ``C:\\Users\\me`` → ``--C--Users-me--``);
* file name: the header's ISO timestamp with ``:`` and ``.`` made ``-``, ``_``, the header's id, ``.jsonl``;
* newer Pi versions (0.73 has them) take, in this order, ``--session-dir``, ``$PI_CODING_AGENT_SESSION_DIR``
  or ``sessionDir`` in ``settings.json`` (the project's ``.pi/settings.json`` over the agent dir's) instead:
  one flat folder for every cwd. :func:`pi_session_dir` follows the last two (a command-line flag it cannot see).

``pi -c`` continues the ``.jsonl`` file with the newest modification time whose first line is a session
header; ``/resume`` lists every ``.jsonl`` file there, newest "activity" first (the last user or assistant
message's time, else the header's, else the file's), with the first user message and the session name.

**Pi's re-append bug** (``SessionManager._persist``, still in 0.73.1). Pi writes nothing until a session holds
an assistant message, then the header and every entry so far, then each new entry. A file Pi *continues*
(``-c``, ``/resume``, ``--session``) counts as written; but while no entry in it is an assistant message, each
append marks the session unwritten again and stays in memory, and at the first assistant message Pi appends
the header and *every* entry of the session, the ones already in the file included. A header-only file gets a
second header; a file of ``%bash`` commands gets each of them twice, with the same ids. Pi rarely leaves such
a file behind (it fixed the fork case, pi-mono #1672); a notebook does: its header is written at once, and
``%bash`` is recorded before any reply. So in Pi's folder a notebook writes a *draft* (``<name>.jsonl.draft``,
which neither ``pi -c`` nor ``/resume`` lists) and :func:`publish_draft` gives it its Pi name once it holds an
assistant message; from then on Pi appends to it one entry at a time. (A notebook-layout file with no reply
yet, handed to ``pi --session`` by hand, is still duplicated.) A file Pi has already duplicated still loads,
with a warning: :class:`~.session.SessionFile` follows ids, so nothing is lost and nothing is doubled in the
context.
"""

from __future__ import annotations

import errno
import json
import os
import re
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ai.jstext import js_trim
from .session import SessionFile, iso_now
from .session_entries import SessionMessageEntry, SessionWarning, parse_iso_ms

ENV_AGENT_DIR = "PI_CODING_AGENT_DIR"
"""Moves Pi's agent dir (``APP_NAME.toUpperCase() + "_CODING_AGENT_DIR"`` with Pi's app name ``pi``)."""
ENV_SESSION_DIR = "PI_CODING_AGENT_SESSION_DIR"
"""Newer Pi: one flat folder for all sessions, instead of a folder per cwd."""
DRAFT_SUFFIX = ".draft"
"""Appended to a session file in Pi's folder until Pi can continue it safely (see the module docstring)."""

_CWD_SEPARATORS = re.compile(r"[/\\:]")


# --- where ---------------------------------------------------------------------------------------------


def _expand_tilde(path: str) -> str:
    """Pi's tilde expansion: only ``~`` and ``~/...`` (not ``~user``, not ``~\\``)."""
    if path == "~":
        return str(Path.home())
    return str(Path.home()) + path[1:] if path.startswith("~/") else path


def pi_agent_dir() -> Path:
    """Pi's agent dir: ``$PI_CODING_AGENT_DIR`` when set and not empty, else ``~/.pi/agent``."""
    value = os.environ.get(ENV_AGENT_DIR)
    return Path(_expand_tilde(value)) if value else Path.home() / ".pi" / "agent"


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    """The per-project folder name Pi uses: ``/home/me/proj`` → ``--home-me-proj--``."""
    text = os.fspath(cwd)
    if text[:1] in ("/", "\\"):
        text = text[1:]
    return f"--{_CWD_SEPARATORS.sub('-', text)}--"


def _settings_session_dir(cwd: str) -> str | None:
    """``sessionDir`` from settings.json: the project's ``.pi/settings.json`` wins over the agent dir's."""
    found: Any = None
    for path in (pi_agent_dir() / "settings.json", Path(cwd) / ".pi" / "settings.json"):
        try:
            settings = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(settings, dict) and "sessionDir" in settings and settings["sessionDir"] is not None:
            found = settings["sessionDir"]
    return found if isinstance(found, str) and found else None


def pi_session_dir(cwd: str | os.PathLike[str]) -> Path:
    """The folder where Pi keeps (and ``pi -c`` / ``/resume`` look for) the sessions of ``cwd``.

    ``cwd`` is taken as Pi's ``process.cwd()`` gives it: absolute and not normalised. The folder may not exist.
    """
    cwd = os.fspath(cwd)
    override = os.environ.get(ENV_SESSION_DIR) or _settings_session_dir(cwd)
    if override:
        return Path(cwd) / _expand_tilde(override)  # a relative folder is relative to the cwd, as for Pi
    return pi_agent_dir() / "sessions" / encode_cwd(cwd)


def pi_session_file_name(timestamp: str | None = None, session_id: str | None = None) -> str:
    """``<timestamp>_<id>.jsonl`` as Pi names a session file (default: now and a new UUID)."""
    stamp = re.sub(r"[:.]", "-", timestamp or iso_now())
    return f"{stamp}_{session_id or uuid.uuid4()}.jsonl"


def new_pi_session_path(cwd: str | os.PathLike[str]) -> Path:
    """A new session file path in Pi's folder for ``cwd``, named as Pi names them (nothing is created)."""
    return pi_session_dir(cwd) / pi_session_file_name()


# --- drafts -------------------------------------------------------------------------------------------


def new_draft_path(cwd: str | os.PathLike[str]) -> Path:
    """Where a notebook starts a session in Pi's folder: ``<timestamp>_<uuid>.jsonl.draft``, invisible to Pi.

    The name is provisional: :func:`publish_draft` names the file after its header, as Pi would.
    """
    path = new_pi_session_path(cwd)
    return path.with_name(path.name + DRAFT_SUFFIX)


def is_draft(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a draft that Pi does not see yet."""
    return os.fspath(path).endswith(DRAFT_SUFFIX)


def has_assistant_message(file: SessionFile) -> bool:
    """Pi's test before it trusts a file it continues: does any ``message`` entry hold an assistant message?"""
    return any(isinstance(e, SessionMessageEntry) and e.role == "assistant" for e in file.entries)


def publish_draft(file: SessionFile) -> SessionFile | None:
    """Give a draft its Pi name once Pi can continue it safely, i.e. once it holds an assistant message.

    ``file`` must be open for writing. It is closed, renamed to ``<header timestamp>_<header id>.jsonl`` in
    the same folder and opened again, which is returned. ``None``, and ``file`` untouched, when it is not a
    draft or not ready. If the rename fails, the draft is opened again and returned, with a warning.
    """
    if not is_draft(file.path) or file.header is None or not has_assistant_message(file):
        return None
    final = file.path.with_name(pi_session_file_name(file.header.timestamp, file.header.id))
    if final.exists():  # a copy of this session has the name: a new one (Pi reads the id from the header)
        final = file.path.with_name(pi_session_file_name())
    file.close()
    try:
        if final.exists():
            raise FileExistsError(errno.EEXIST, "the Pi name is taken", str(final))
        os.rename(file.path, final)
    except OSError as e:
        warnings.warn(f"{file.path}: could not give the draft its Pi name ({e})", SessionWarning, stacklevel=2)
        return SessionFile.open(file.path)
    return SessionFile.open(final)


# --- listing ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PiSessionInfo:
    """One session file as ``/resume`` shows it."""

    path: Path
    """The session file."""
    id: str
    """The session id, from the header."""
    cwd: str
    """The working directory in the header (``""`` if absent)."""
    name: str | None
    """The name of the latest ``session_info`` entry, trimmed for display (JS ``trim``); ``None`` if absent or
    empty. (:attr:`SessionFile.session_name` gives it as written.)"""
    created: str | None
    """The header's ISO timestamp."""
    modified: float
    """Pi's "last activity", epoch seconds: the last user or assistant message's time, else the header's, else
    the file's modification time. ``/resume`` sorts by it."""
    mtime: float
    """The file's modification time, epoch seconds: ``pi -c`` continues the newest."""
    message_count: int
    """``message`` entries (a message Pi wrote twice with the same id counts once)."""
    first_message: str
    """The text of the first user message that has text; ``""`` if none."""


_ROLE = re.compile(rb'"message":\{"role":"([A-Za-z]+)"')
_MESSAGE = b'{"type":"message","id":"'
_ENTRY = b'{"type":"'
_LINE_END = (b"}", b"}\r")
_BROKEN = object()


def _loads(line: bytes, broken: Any = None) -> Any:
    try:
        return json.loads(line)
    except ValueError:  # also UnicodeDecodeError
        return broken


def _message_text(entry: Any) -> str:
    """Pi's text of a message entry's message: string content, or its text blocks joined by spaces."""
    message = entry.get("message") if isinstance(entry, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and "text" in b)
    return ""


def _role(entry: Any) -> Any:
    message = entry.get("message") if isinstance(entry, dict) else None
    return message.get("role") if isinstance(message, dict) else None


def _activity_ms(entry: Any) -> float | None:
    """When a user/assistant message happened: its ``timestamp`` (ms), else the entry's ISO timestamp."""
    if not isinstance(entry, dict):
        return None
    message = entry.get("message")
    stamp = message.get("timestamp") if isinstance(message, dict) else None
    if isinstance(stamp, int | float) and not isinstance(stamp, bool):
        return float(stamp)
    return parse_iso_ms(entry["timestamp"]) if isinstance(entry.get("timestamp"), str) else None


def _name(entry: Any) -> str | None:
    """The name a ``session_info`` entry sets, trimmed for the list (JS ``trim``, as Pi's list does; the session
    keeps it as written): the latest wins, and an empty one clears it (as Pi 0.73 reads it; 0.58 kept the
    previous name)."""
    value = entry.get("name") if isinstance(entry, dict) else None
    return js_trim(value) or None if isinstance(value, str) else None


@dataclass
class _Scan:
    count: int = 0
    first: str = ""
    name: str | None = None
    last_chat: Any = None


def _plain(line: bytes) -> bool:
    """Written as Pi writes entries: ``{"type":"...`` to ``}``, a message with its id second; or blank."""
    if line.startswith(_ENTRY):
        return line.endswith(_LINE_END) and (line.startswith(_MESSAGE) or not line.startswith(b'{"type":"message"'))
    return not line or line.isspace()


def _scan_plain(lines: list[bytes]) -> _Scan:
    """Lines written as Pi writes them are told apart by how they start: only the first user message, the last
    user or assistant message and the last ``session_info`` are parsed."""
    messages = [line for line in lines if line.startswith(_MESSAGE)]
    ids = {line[len(_MESSAGE) : line.find(b'"', len(_MESSAGE))] for line in messages}  # Pi's re-append: once
    scan = _Scan(count=len(ids))

    def role(line: bytes) -> Any:
        found = _ROLE.search(line, 0, 400)
        return found.group(1).decode() if found else _role(_loads(line))

    for line in messages:
        if role(line) == "user" and (text := _message_text(_loads(line))):
            scan.first = text
            break
    scan.last_chat = next((_loads(m) for m in reversed(messages) if role(m) in ("user", "assistant")), None)
    infos = [line for line in lines if line.startswith(b'{"type":"session_info"')]
    scan.name = _name(_loads(infos[-1])) if infos else None
    return scan


def _scan_parsed(lines: list[bytes]) -> _Scan:
    """Any other file: every line parsed, as Pi reads it (broken lines skipped)."""
    scan, ids = _Scan(), set()
    for entry in (_loads(line) for line in lines if line and not line.isspace()):
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind == "session_info":
            scan.name = _name(entry)
        elif kind == "message":
            ids.add(json.dumps(entry.get("id")))
            role = _role(entry)
            scan.last_chat = entry if role in ("user", "assistant") else scan.last_chat
            if not scan.first and role == "user":
                scan.first = _message_text(entry)
    scan.count = len(ids)
    return scan


def read_session_info(path: str | os.PathLike[str]) -> PiSessionInfo | None:
    """What ``/resume`` shows of one file, or ``None`` if its first line that parses is not a session header.

    Cheap on long files written as Pi writes them: one read, and JSON parsing of the header, the first user
    message, the last user or assistant message and the last ``session_info`` only. Any other file is parsed
    line by line, as Pi reads it.
    """
    path = Path(path)
    try:
        stat = path.stat()
        lines = path.read_bytes().removeprefix(b"\xef\xbb\xbf").split(b"\n")
    except OSError:
        return None
    start, header = 0, _BROKEN
    while start < len(lines) and header is _BROKEN:  # the first line that parses, as Pi reads it
        header = _loads(lines[start], _BROKEN) if lines[start] and not lines[start].isspace() else _BROKEN
        start += 1
    if not isinstance(header, dict) or header.get("type") != "session" or not isinstance(header.get("id"), str):
        return None
    body = lines[start:]
    scan = _scan_plain(body) if all(map(_plain, body)) else _scan_parsed(body)
    created = header.get("timestamp") if isinstance(header.get("timestamp"), str) else None
    modified = _activity_ms(scan.last_chat) or (parse_iso_ms(created) if created else None)
    return PiSessionInfo(
        path=path,
        id=header["id"],
        cwd=header["cwd"] if isinstance(header.get("cwd"), str) else "",
        name=scan.name,
        created=created,
        modified=modified / 1000 if modified else stat.st_mtime,
        mtime=stat.st_mtime,
        message_count=scan.count,
        first_message=scan.first,
    )


def list_pi_sessions(cwd: str | os.PathLike[str]) -> list[PiSessionInfo]:
    """The sessions ``/resume`` lists for ``cwd``, newest activity first (drafts and non-session files left out)."""
    folder = pi_session_dir(cwd)
    try:
        names = sorted(p for p in folder.iterdir() if p.name.endswith(".jsonl") and p.is_file())
    except OSError:
        return []
    found = [info for info in map(read_session_info, names) if info is not None]
    return sorted(found, key=lambda s: (s.modified, s.mtime), reverse=True)
