"""The sub-commands of ``%agent_session`` and ``%agent_config`` (parsing and output only)."""

from __future__ import annotations

import json
import shlex
import warnings
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from traitlets import Int, TraitError

from ..ai.keys import MissingApiKeyError, require_api_key
from ..coding_agent.pi_sessions import is_draft
from ..coding_agent.run_policy import parse_tools
from ..coding_agent.session import EntryNotFoundError, SessionError, SessionFile, SessionLockedError
from .config import one_line
from .models_command import default_model_line
from .pi_layout import pi_sessions_for, session_lines
from .session_words import describe_session, entry_lines
from .utf8 import say

SESSION_USAGE = (
    "%agent_session [new | open [N | PATH] | list | branch ID | label ID TEXT | "
    "export PATH.html|.jsonl|.md [--tree] [--no-private]]"
)
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
        say(describe_session(session))
    elif command == "new" and not rest:
        start_new_session(session, "%agent_session new")
        say(describe_session(session))
    elif command == "open" and not rest:
        _list_pi_sessions(session)
    elif command == "open" and len(rest) == 1:
        path = _pi_session_numbered(session, rest[0]) if rest[0].isdigit() else Path(rest[0]).expanduser()
        file = open_session_file(path)
        try:
            session.switch_to(file)
        except BaseException:
            if session.file is not file:  # not switched (the current file holds unwritten messages): release it
                file.close()
            raise
        warnings = session.file.warnings
        for warning in warnings[:SHOWN_WARNINGS]:
            say(f"warning: {warning}")
        if len(warnings) > SHOWN_WARNINGS:
            say(f"... and {len(warnings) - SHOWN_WARNINGS} more warnings (current_session().file.warnings)")
        say(describe_session(session))
    elif command == "list" and not rest:
        say("\n".join(entry_lines(session)) or "(the session is empty)")
    elif command == "branch" and len(rest) == 1:
        try:
            session.file.branch(rest[0])
        except (EntryNotFoundError, KeyError) as e:
            raise UsageError(f"no entry {rest[0]!r} in {session.file.path.name}") from e
        session.reload()
        say(describe_session(session))
    elif command == "label" and len(rest) >= 2:
        if session.file.get_entry(rest[0]) is None:
            raise UsageError(f"no entry {rest[0]!r} in {session.file.path.name}")
        try:
            session.file.append_label_change(rest[0], " ".join(rest[1:]))
        except (SessionError, OSError) as e:
            raise UsageError(f"cannot label {rest[0]}: {e}") from None
        say(f"labelled {rest[0]}: {' '.join(rest[1:])}")
    elif command == "export" and rest:
        _export(session, rest)
    else:
        raise UsageError(f"usage: {SESSION_USAGE}")


def _export(session: Any, words: list[str]) -> None:
    """``%agent_session export PATH [--tree] [--no-private]``: the session as an HTML page, a Pi session file or
    Markdown; the page is titled with the notebook's name."""
    from .export import ExportError, export_session
    from .session_paths import notebook_path

    flags = {w for w in words if w.startswith("-")}
    paths = [w for w in words if not w.startswith("-")]
    unknown = flags - {"--tree", "--no-private"}
    if len(paths) != 1 or unknown:
        raise UsageError(f"usage: {SESSION_USAGE}")
    path = Path(paths[0]).expanduser()
    notebook = notebook_path(getattr(session, "shell", None))
    private = "--no-private" not in flags
    try:
        written = export_session(
            session, path, tree="--tree" in flags, private=private, notebook=notebook.name if notebook else None
        )
    except ExportError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"cannot export to {path}: {e.strerror or e}") from None
    hidden = sum(1 for m in session.messages if getattr(m, "exclude_from_context", None))
    page = path.suffix.lower() in (".html", ".md")
    shown = len(session.messages) - (0 if private or not page else hidden)
    say(f"exported {'the whole tree' if '--tree' in flags else f'{shown} messages'} to {written}")
    if hidden and page:
        kept = f"{hidden} message{'s' if hidden > 1 else ''} never sent to the LLM (%bash!, %agent_private)"
        say(f"{kept}: shown, marked so (--no-private leaves them out)" if private else f"{kept}: left out")
    unsaved = len(session.writer.unsaved)
    if unsaved and path.suffix.lower() == ".jsonl":  # the file could not be written lately: say what is missing
        say(f"note: {unsaved} entries the session file could not take yet are not in {written.name}")


def start_new_session(session: Any, what: str) -> None:
    """Switch ``session`` to a new, empty session file, or say in one line (:class:`UsageError`) why there is
    none (its folder takes no file now: disk full, permissions changed, a file where the folder was); the
    current session is kept then."""
    try:
        file, note = session.open_fresh()
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        raise UsageError(
            f"{what}: cannot create the session file{where}: {e.strerror or e}; the current session is kept"
        ) from None
    try:
        session.switch_to(file, note)
    except BaseException:
        if session.file is not file:  # not switched (the current file holds unwritten messages): release it
            file.close()
        raise


def open_session_file(path: Path) -> SessionFile:
    """Open ``path`` for writing, or refuse in one line (:class:`UsageError`) what cannot be recorded into: a
    missing file, one another kernel holds, one that is not a session (no header on its first line: read, it
    would look empty and refuse every append) or a v1 session (entry ids change at every load)."""
    if not path.is_file():
        raise UsageError(f"no session file at {path}")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            file = SessionFile.open(path)
        except SessionLockedError as e:
            raise UsageError(str(e)) from None
        except OSError as e:
            raise UsageError(f"cannot open {path} for writing: {e.strerror or e}") from None
    refusal = None
    if file.header is None:
        refusal = f"{path} is not a session file ({_what_it_is(path)}; a session file starts with a session header)"
    elif file.file_version is not None and file.file_version < 2:
        refusal = (
            f"{path} is a version 1 session, whose entry ids change at every load; open a migrated copy "
            "(SessionFile.open(path, readonly=True).write_migrated(new_path))"
        )
    if refusal is not None:
        file.close()
        raise UsageError(f"{refusal}; the current session is kept")
    for warning in said:  # the file is opened: its loading warnings are said as usual
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return file


def _what_it_is(path: Path) -> str:
    """What the first non-blank line of ``path`` is, in a few words (why it is not a session header)."""
    with open(path, "rb") as fh:
        head = fh.read(64 * 1024)
    if not head.strip():
        return "it is empty"
    first = head.lstrip().split(b"\n", 1)[0].strip()
    try:
        value = json.loads(first.decode("utf-8"))
    except UnicodeDecodeError:
        return "it is not text"
    except ValueError:
        return "its first line is not JSON"
    if not isinstance(value, dict):
        return f"its first line is a JSON {_JSON_KINDS.get(type(value), 'value')}, not an object"
    if value.get("type") != "session":
        return f"its first line is a {value.get('type')!r} entry, not a session header"
    return "its session header has no id"


_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def recording_problem(file: SessionFile) -> str | None:
    """Why nothing can be recorded into ``file`` now (closed, read-only, no session header, v1, deleted), in one
    line, or ``None``. A file deleted or moved since it was opened still takes appends, but they would be lost
    with it."""
    refusal = file.append_refusal()
    if refusal is not None:
        return refusal
    if not file.path.exists():
        return f"{file.path} no longer exists (deleted or moved)"
    return None


def _list_pi_sessions(session: Any) -> None:
    """``%agent_session open``: Pi's sessions for the kernel's working directory, newest first, numbered."""
    folder, sessions = pi_sessions_for(session.cwd)
    if not sessions:
        say(f"no Pi sessions for {session.cwd} (Pi keeps them in {folder})")
    else:
        say(f"Pi sessions for {session.cwd}, newest first (in {folder}):")
        say("\n".join(session_lines(sessions, session.file.path)))
        say("open one with %agent_session open N")
    if is_draft(session.file.path):
        say("this notebook's session is a draft: Pi lists it once it holds a reply")


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


def config_command(session: Any, line: str) -> None:
    """Print the settings and what a plain ``%%agent`` runs with, or set ``name=value`` pairs (values checked like
    IPython config)."""
    config = session.config
    try:
        pairs = shlex.split(line)
    except ValueError as e:
        raise UsageError(str(e)) from e
    if not pairs:
        say(config.describe())
        say(next_run_text(session))
        say(default_model_line(config.default_model))  # last: the line that says why that model
        return
    names = set(config.trait_names(config=True))
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in names:
            raise UsageError(f"expected name=value with name in {', '.join(sorted(names))}; got {pair!r}")
        try:
            config.set_from("%agent_config", name, _typed(config.traits()[name], name, value))
        except (TraitError, ValueError) as e:
            text = one_line(e)
            raise UsageError(text if text.startswith(f"{name}: ") else f"{name}: {text}") from None
    say(config.describe())


def next_run_text(session: Any) -> str:
    """The tools and system prompt a ``%%agent`` without options runs with: the plan of the run itself
    (:meth:`~pi_notebook.coding_agent.agent_session.AgentSession.plan_run`), which for a small local model are its
    own while the settings hold the defaults; said so when they differ from the settings shown above."""
    plan = session.plan_run(None)
    config = session.config
    tools = ",".join(plan.tool_names) or "none"
    lines = [f"a %%agent without options runs {plan.model.provider}/{plan.model.id} with:"]
    why = ""
    if list(plan.tool_names) != parse_tools(config.tools):
        why = f"  (not the tools setting: a small local model gets these while tools is {config.tools!r})"
    lines.append(f"  tools          {tools}{why}")
    why = ""
    if plan.system_prompt != config.system_prompt:
        why = "  (not the system_prompt setting: a small local model gets this short one while it is the default)"
    lines.append(f"  system prompt  {plan.system_prompt!r}{why}")
    return "\n".join(lines)


def require_key(session: Any, model: Any) -> None:
    """A one-line :class:`UsageError` before anything runs or is recorded when ``model``'s provider needs a key
    that is not set (and none is given to the agent in Python): the variable to set, and how to set it from the
    notebook without the key being saved in it (``%env NAME=value`` prints the value into the cell's output)."""
    agent = session.agent
    if agent.get_api_key is not None or agent.stream_options.get("api_key"):
        return
    try:
        require_api_key(model.provider)
    except MissingApiKeyError as e:
        if e.env_var is None:
            raise UsageError(f"{model.provider}/{model.id} needs an API key, and none is known for it") from None
        name = e.env_var
        raise UsageError(
            f"{name} is not set ({model.provider}/{model.id} needs it): in a cell, run "
            f'import os, getpass; os.environ["{name}"] = getpass.getpass()  (or set it before starting Jupyter)'
        ) from None


def _typed(trait: Any, name: str, value: str) -> Any:
    """``value`` as the trait's type: an int for ``Int``; yes/no words are read by the trait itself (:class:`Flag`)."""
    if isinstance(trait, Int):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"{name}: expected a whole number, not {value!r}") from None
    return value
