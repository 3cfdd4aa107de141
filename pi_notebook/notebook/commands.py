"""The sub-commands of ``%agent_session`` and ``%agent_config`` (parsing and output only)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from traitlets import TraitError

from ..coding_agent.pi_sessions import is_draft
from ..coding_agent.session import EntryNotFoundError, SessionFile, SessionLockedError
from .models_command import default_model_line
from .pi_layout import pi_sessions_for, session_lines

SESSION_USAGE = "%agent_session [new | open [N | PATH] | list | branch ID | label ID TEXT]"
SHOWN_WARNINGS = 5
"""Loading warnings printed when a session is opened; the rest are counted (all are in ``file.warnings``)."""


def session_command(session: Any, line: str) -> None:
    """Run one ``%agent_session`` sub-command against the kernel's session."""
    try:
        words = shlex.split(line)
    except ValueError as e:
        raise UsageError(f"{e}; usage: {SESSION_USAGE}") from e
    command, rest = (words[0], words[1:]) if words else ("", [])
    if command == "":
        print(session.describe())
    elif command == "new" and not rest:
        session.switch_to(*session.open_fresh())
        print(session.describe())
    elif command == "open" and not rest:
        _list_pi_sessions(session)
    elif command == "open" and len(rest) == 1:
        path = _pi_session_numbered(session, rest[0]) if rest[0].isdigit() else Path(rest[0]).expanduser()
        if not path.is_file():
            raise UsageError(f"no session file at {path}")
        try:
            session.switch_to(SessionFile.open(path))
        except SessionLockedError as e:
            raise UsageError(str(e)) from e
        warnings = session.file.warnings
        for warning in warnings[:SHOWN_WARNINGS]:
            print(f"warning: {warning}")
        if len(warnings) > SHOWN_WARNINGS:
            print(f"... and {len(warnings) - SHOWN_WARNINGS} more warnings (current_session().file.warnings)")
        print(session.describe())
    elif command == "list" and not rest:
        print("\n".join(session.entry_lines()) or "(no entries)")
    elif command == "branch" and len(rest) == 1:
        try:
            session.file.branch(rest[0])
        except (EntryNotFoundError, KeyError) as e:
            raise UsageError(f"no entry {rest[0]!r} in {session.file.path.name}") from e
        session.reload()
        print(session.describe())
    elif command == "label" and len(rest) >= 2:
        if session.file.get_entry(rest[0]) is None:
            raise UsageError(f"no entry {rest[0]!r} in {session.file.path.name}")
        session.file.append_label_change(rest[0], " ".join(rest[1:]))
        print(f"labelled {rest[0]}: {' '.join(rest[1:])}")
    else:
        raise UsageError(f"usage: {SESSION_USAGE}")


def _list_pi_sessions(session: Any) -> None:
    """``%agent_session open``: Pi's sessions for the kernel's working directory, newest first, numbered."""
    folder, sessions = pi_sessions_for(session.cwd)
    if not sessions:
        print(f"no Pi sessions for {session.cwd} (Pi keeps them in {folder})")
    else:
        print(f"Pi sessions for {session.cwd}, newest first (in {folder}):")
        print("\n".join(session_lines(sessions, session.file.path)))
        print("open one with %agent_session open N")
    if is_draft(session.file.path):
        print("this notebook's session is a draft: Pi lists it once it holds a reply")


def _pi_session_numbered(session: Any, word: str) -> Path:
    """The path of session number ``word`` in the listing of ``%agent_session open``."""
    _, sessions = pi_sessions_for(session.cwd)
    number = int(word)
    if not 1 <= number <= len(sessions):
        have = f"1 to {len(sessions)}" if sessions else "none"
        raise UsageError(
            f"no Pi session {number} for {session.cwd} (numbers: {have}; list them with %agent_session open)"
        )
    return sessions[number - 1].path


def config_command(config: Any, line: str) -> None:
    """Print the settings, or set ``name=value`` pairs (values checked like IPython config)."""
    try:
        pairs = shlex.split(line)
    except ValueError as e:
        raise UsageError(str(e)) from e
    if not pairs:
        print(config.describe())
        print(default_model_line(config.default_model))
        return
    names = set(config.trait_names(config=True))
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in names:
            raise UsageError(f"expected name=value with name in {', '.join(sorted(names))}; got {pair!r}")
        try:
            trait = config.traits()[name]
            setattr(config, name, _typed(trait, value))
        except (TraitError, ValueError) as e:
            raise UsageError(f"{name}: {e}") from e
    print(config.describe())


_BOOLEANS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}


def _typed(trait: Any, value: str) -> Any:
    """``value`` as the trait's type: an int for ``Int``, a bool for ``Bool`` (true/false, yes/no, on/off, 1/0)."""
    kind = trait.__class__.__name__
    if kind == "Int":
        return int(value)
    if kind == "Bool":
        if value.lower() not in _BOOLEANS:
            raise ValueError(f"expected true or false, not {value!r}")
        return _BOOLEANS[value.lower()]
    return value
