"""Settings of the notebook extension: ``%agent_config`` and IPython's config system.

In ``ipython_config.py`` / ``ipython_kernel_config.py``::

    c.PiNotebook.default_model = "anthropic/claude-sonnet-4-5"
    c.PiNotebook.session_dir = "~/.pi_sessions"
    c.PiNotebook.session_layout = "pi"  # new sessions where `pi -c` and /resume find them

and, once the extension is loaded, IPython's own ``%config PiNotebook.max_turns = 7`` (the extension puts its
settings in ``shell.configurables``). Each setting remembers where its value came from (:data:`ORIGINS`), which
``%agent_config`` shows.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from difflib import get_close_matches
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from traitlets import Bool, Int, TraitError, Unicode, default, validate
from traitlets.config import Config, Configurable
from traitlets.config.loader import DeferredConfig, LazyConfigValue

from ..ai import UnknownModelError, get_model
from ..coding_agent.approval import APPROVE_DEFAULT, approval_policy, parse_approve
from ..coding_agent.run_policy import (
    DEFAULT_SYSTEM_PROMPT,
    THINKING_LEVELS,
    default_tools,
    parse_tools,
    resolve_model,
)

SESSION_LAYOUTS = ("notebook", "pi")
CELL_SETTINGS = ("all", "errors", "off")
"""``cells``: which cells join the history (see :mod:`.cell_recorder`)."""


ORIGINS = ("default", "config file", "%config", "%agent_config", "Python")
"""Where a setting's value came from: its default; IPython's config (``c.PiNotebook.x`` in ``ipython_config.py``,
or ``--PiNotebook.x=`` on the kernel's command line) as the extension loaded; ``%config PiNotebook.x = ...``;
``%agent_config x=...``; or an assignment in Python (``current_session().config.x = ...``)."""

_GIVEN_TO_PERCENT_CONFIG: WeakKeyDictionary[Any, dict[str, Any]] = WeakKeyDictionary()
"""Per shell, the last value IPython's ``%config`` gave each setting. IPython also merges it into the shell's own
config, where a ``%reload_ext`` finds it among the config file's values: this tells it apart."""

BOOLEANS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
"""The words a yes/no setting accepts (any case), in ``%agent_config`` and in IPython config."""


class Flag(Bool):
    """A yes/no setting that also takes the words of :data:`BOOLEANS` (``"False"``, ``"no"``, ``"off"``...), so
    ``c.PiNotebook.compaction = "false"`` means what it says instead of stopping ``%load_ext``."""

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in BOOLEANS:
            return BOOLEANS[value.strip().lower()]
        if isinstance(value, str):
            raise TraitError(f"{self.name}: expected true or false (yes/no, on/off, 1/0), not {value!r}")
        return super().validate(obj, value)


def one_line(error: BaseException) -> str:
    """An error's text on one line: the first line of a long help (a model error lists every prefix after it)."""
    text = str(error).strip().split("\n", 1)[0].strip()
    return text.removesuffix("Known prefixes:").strip() or type(error).__name__


def check_model(name: str, spec: str, *, also: tuple[str, ...] = ()) -> str:
    """``spec`` if it names a model (``get_model`` resolves it), is empty or one of ``also``; else a one-line
    :class:`TraitError` naming the setting."""
    if spec in ("", *also):
        return spec
    try:
        get_model(spec)
    except (UnknownModelError, ValueError) as e:
        raise TraitError(f"{name}: {one_line(e).rstrip('.')}; %agent_models lists the models") from None
    return spec


def usable_folder(value: str) -> Path:
    """The session folder ``value`` names (relative to the current directory, where a notebook's kernel runs),
    created if missing; a one-line :class:`TraitError` saying why if it cannot be created or a file cannot be
    created in it. A file is really created there and removed (permission bits say nothing for root, nor for
    ``/proc``, a read-only mount or a full disk)."""
    if not value.strip():
        raise TraitError("session_dir: must name a folder (the default is .pi_sessions)")
    folder = Path(value).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TraitError(f"session_dir: cannot create {folder}: {e.strerror or e}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".pi_notebook-probe-", dir=folder)
    except OSError as e:
        # /proc and /sys answer "No such file" for a file that cannot be created there.
        why = "it takes no new files" if e.errno == errno.ENOENT and folder.is_dir() else e.strerror or e
        raise TraitError(f"session_dir: cannot create a session file in {folder}: {why}") from None
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError as e:
        raise TraitError(f"session_dir: cannot remove a file from {folder}: {e.strerror or e}") from None
    return folder


class PiNotebook(Configurable):
    """Defaults for ``%%agent`` and where sessions are stored."""

    default_model = Unicode(
        "", help="Model for %%agent, as provider/id (e.g. anthropic/claude-sonnet-4-5). Empty: pick by keys."
    ).tag(config=True)
    tools = Unicode(
        help="Comma-separated tools for %%agent, or none: Pi's read,bash,edit,write,grep,find,ls and the notebook's "
        "python,vars,new_cell. Default: read,bash,edit,write,python,vars,new_cell (the in-process local model gets "
        "read,ls,vars while this is a default)."
    ).tag(config=True)

    @default("tools")
    def _default_tools(self) -> str:
        return default_tools()  # Pi's four and the tools the notebook app registered as defaults

    system_prompt = Unicode(DEFAULT_SYSTEM_PROMPT, help="System prompt for %%agent.").tag(config=True)
    thinking = Unicode("off", help="Thinking level: off, minimal, low, medium, high, xhigh.").tag(config=True)
    session_dir = Unicode(".pi_sessions", help="Folder for session files, relative to the notebook.").tag(config=True)
    session_layout = Unicode(
        "notebook",
        help="Where new sessions go: 'notebook' (session_dir, next to the notebook) or 'pi' (Pi's own folder for "
        "the working directory, where `pi -c` and /resume find them; session_dir then keeps only the pointer to "
        "the notebook's last session).",
    ).tag(config=True)
    max_turns = Int(20, help="Most LLM calls in one %%agent run (a guard against tool loops); 0 = no limit.").tag(
        config=True
    )

    branch_summary_model = Unicode(
        "",
        help="Writes the summary of an abandoned branch when a cell is re-run: provider/id, 'same' for the "
        "%%agent model, or empty for a summary written without a model.",
    ).tag(config=True)
    warm_up = Flag(
        True,
        help="When the next run's model is the in-process local one, load it in the background after the "
        "extension loads, while no cell runs, so the first %%agent answers sooner (PI_NOTEBOOK_NO_PRELOAD=1 also "
        "turns this off).",
    ).tag(config=True)
    compaction = Flag(True, help="Compact the history automatically before the context window fills.").tag(config=True)
    reserve_tokens = Int(16384, help="Compaction starts when the context exceeds the window minus this.").tag(
        config=True
    )
    keep_recent_tokens = Int(20000, help="How much recent history compaction keeps verbatim.").tag(config=True)
    mask_secrets = Flag(
        True,
        help="Replace the values of known secrets (provider keys, *_API_KEY / *_TOKEN / *_SECRET variables) with "
        "[masked: NAME] in every message (prompts, replies, %bash output, tool results, cells) before it is stored, "
        "shown or sent.",
    ).tag(config=True)
    approve = Unicode(
        APPROVE_DEFAULT,
        help="The tools whose calls wait for your click (the cell shows the command, the code or the diff, with "
        "Approve, Deny and Always this session): comma-separated names, none, or default (python,bash,edit,write "
        "for a model that acts for real; nothing for the scripted faux model and the offline local model). Where "
        "nothing can show the prompt (nbclient, nbval, a script) such a call is refused.",
    ).tag(config=True)
    cells = Unicode(
        "all",
        help="Which cells you run join the agent's history (their code, output, images and error): all, errors "
        "(only the cells that fail) or off. %agent_private keeps one cell out of what is sent.",
    ).tag(config=True)

    @validate("cells")
    def _valid_cells(self, proposal):
        if proposal["value"] not in CELL_SETTINGS:
            raise TraitError(f"cells: must be one of {', '.join(CELL_SETTINGS)}, not {proposal['value']!r}")
        return proposal["value"]

    @validate("tools")
    def _valid_tools(self, proposal):
        parse_tools(proposal["value"])
        return proposal["value"]

    @validate("approve")
    def _valid_approve(self, proposal):
        names = parse_approve(proposal["value"])
        return APPROVE_DEFAULT if names is None else ",".join(names) or "none"

    @validate("thinking")
    def _valid_thinking(self, proposal):
        if proposal["value"] not in THINKING_LEVELS:
            raise ValueError(f"thinking: must be one of {', '.join(THINKING_LEVELS)}, not {proposal['value']!r}")
        return proposal["value"]

    @validate("max_turns")
    def _valid_max_turns(self, proposal):
        if proposal["value"] < 0:
            raise TraitError(f"max_turns: must be 0 (no limit) or more, not {proposal['value']}")
        return proposal["value"]

    @validate("reserve_tokens", "keep_recent_tokens")
    def _valid_tokens(self, proposal):
        if proposal["value"] < 0:
            raise TraitError(f"{proposal['trait'].name}: must be 0 or more tokens, not {proposal['value']}")
        return proposal["value"]

    @validate("session_dir")
    def _valid_session_dir(self, proposal):
        usable_folder(proposal["value"])
        return proposal["value"]

    @validate("default_model")
    def _valid_default_model(self, proposal):
        return check_model("default_model", proposal["value"])

    @validate("branch_summary_model")
    def _valid_branch_summary_model(self, proposal):
        return check_model("branch_summary_model", proposal["value"], also=("same",))

    @validate("session_layout")
    def _valid_session_layout(self, proposal):
        if proposal["value"] not in SESSION_LAYOUTS:
            raise ValueError(f"session_layout must be notebook or pi, not {proposal['value']!r}")
        return proposal["value"]

    # --- where each value came from ----------------------------------------------------------------------------

    def __init__(self, **kwargs: Any) -> None:
        self._origins: dict[str, str] = {}
        self._origin_now = "config file"  # Configurable.__init__ applies IPython's config (the shell's, the file's)
        super().__init__(**kwargs)
        self._origin_now = "Python"  # from now on, a change no magic made is an assignment in Python
        self.observe(self._note_origin, names=self.trait_names(config=True))

    def _note_origin(self, change: Any) -> None:
        self._origins[change["name"]] = self._origin_now

    @contextmanager
    def _setting_from(self, origin: str) -> Iterator[None]:
        before, self._origin_now = self._origin_now, origin
        try:
            yield
        finally:
            self._origin_now = before

    def origin(self, name: str) -> str:
        """Where the value of setting ``name`` came from: one of :data:`ORIGINS`."""
        return self._origins.get(name, "default")

    def set_from(self, origin: str, name: str, value: Any) -> None:
        """Set ``name`` to ``value`` as ``origin`` (one of :data:`ORIGINS`) sets it, or raise a one-line
        :class:`TraitError` starting ``name:`` and keep the value it had."""
        if name not in self.trait_names(config=True):
            near = get_close_matches(name, self.trait_names(config=True), n=1)
            hint = f"did you mean {near[0]}? " if near else ""
            known = ", ".join(sorted(self.trait_names(config=True)))
            raise TraitError(f"{name}: no such setting of PiNotebook ({hint}settings: {known})")
        if isinstance(value, LazyConfigValue):  # cfg.PiNotebook.x.append(...) and the like
            value = value.get_value(getattr(self, name))
        elif isinstance(value, DeferredConfig):  # --PiNotebook.x=... on a command line
            value = value.get_value(self.traits()[name])
        try:
            with self._setting_from(origin):
                setattr(self, name, deepcopy(value))  # not held: a refused value is never stored
        except (TraitError, ValueError) as e:
            text = one_line(e).replace(f"The '{name}' trait of a {type(self).__name__} instance ", "")
            raise TraitError(text if text.startswith(f"{name}: ") else f"{name}: {text}") from None
        self._origins[name] = origin  # also when the value equals the one it had (no change is observed)

    def _load_config(self, cfg: Any, section_names: Any = None, traits: Any = None) -> None:
        """Apply IPython config (``c.PiNotebook.x = ...``) one setting at a time: a value that is refused keeps
        the default and says so in one line, instead of stopping ``%load_ext pi_notebook`` with a traceback."""
        name_of_class = type(self).__name__
        by_magic = _GIVEN_TO_PERCENT_CONFIG.get(self.parent, {}) if self.parent is not None else {}
        for name, value in self._find_my_config(cfg).items():
            if isinstance(value, Config):
                continue  # a subsection (c.PiNotebook.Other.x): not a setting of this class
            origin = self._origin_now
            if origin == "config file" and name in by_magic and by_magic[name] == value:
                origin = "%config"  # IPython merged it into the shell's config, which a reload reads
            using = f"; using {getattr(self, name)!r}" if self.has_trait(name) else ""
            try:
                self.set_from(origin, name, value)
            except TraitError as e:
                reason = one_line(e).removeprefix(f"{name}: ")
                said = f"c.{name_of_class}" if origin == "config file" else f"%config {name_of_class}"
                print(f"pi_notebook: {said}.{name} = {value!r} is ignored ({reason}){using}", file=sys.stderr)

    def update_config(self, config: Config) -> None:
        """``%config PiNotebook.x = value``: set the settings ``config`` names, all or none; a refused value or an
        unknown name raises a one-line :class:`TraitError` (IPython's ``%config`` prints it as an error) and
        changes nothing. Only the settings named are applied: traitlets' own update would apply the config file
        again over what ``%agent_config`` set since."""
        mine = self._find_my_config(config)
        if self.parent is not None:  # (refused or not, the shell keeps it in its config: see _load_config)
            _GIVEN_TO_PERCENT_CONFIG.setdefault(self.parent, {}).update(deepcopy(dict(mine)))
        before = {name: (getattr(self, name), self.origin(name)) for name in mine if self.has_trait(name)}
        try:
            for name, value in mine.items():
                self.set_from("%config", name, value)
        except TraitError as e:
            for was, (value, origin) in before.items():
                self.set_trait(was, value)
                self._origins[was] = origin
            kept = f"; {name} stays {before[name][0]!r}" if name in before else ""
            raise TraitError(f"{type(self).__name__}.{one_line(e)}{kept}") from None

    def describe(self) -> str:
        """The settings, one per line: name, where the value came from (:data:`ORIGINS`), value (what
        ``%agent_config`` prints)."""
        names = sorted(self.trait_names(config=True))
        width = max(len(name) for name in names)
        from_width = max(len(origin) for origin in ORIGINS)  # one width always: the values start in one column
        return "\n".join(
            f"{name:<{width}}  {self.origin(name):<{from_width}}  {getattr(self, name)!r}{self._applied(name)}"
            for name in names
        )

    def _applied(self, name: str) -> str:
        """For ``approve=default``: which tools ask with the default model, and why (``  → python,...  (...)``)."""
        if name != "approve" or self.approve != APPROVE_DEFAULT:
            return ""
        try:
            model = resolve_model(self)
        except (UnknownModelError, ValueError):
            return ""
        return f"  → {approval_policy(self.approve, model).describe()}"
