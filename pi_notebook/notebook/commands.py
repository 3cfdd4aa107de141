"""The sub-commands of ``%agent_session`` and ``%agent_config`` (parsing and output only)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from traitlets import TraitError

from ..coding_agent.session import EntryNotFoundError, SessionFile, SessionLockedError
from .models_command import default_model_line

SESSION_USAGE = "%agent_session [new | open PATH | list | branch ID | label ID TEXT]"


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
    elif command == "open" and len(rest) == 1:
        path = Path(rest[0]).expanduser()
        if not path.is_file():
            raise UsageError(f"no session file at {path}")
        try:
            session.switch_to(SessionFile.open(path))
        except SessionLockedError as e:
            raise UsageError(str(e)) from e
        for warning in session.file.warnings:
            print(f"warning: {warning}")
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
