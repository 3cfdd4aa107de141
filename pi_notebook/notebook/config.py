"""Settings of the notebook extension: ``%agent_config`` and IPython's config system.

In ``ipython_config.py`` / ``ipython_kernel_config.py``::

    c.PiNotebook.default_model = "anthropic/claude-sonnet-4-5"
    c.PiNotebook.session_dir = "~/.pi_sessions"
    c.PiNotebook.session_layout = "pi"  # new sessions where `pi -c` and /resume find them
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from traitlets import Bool, Int, TraitError, Unicode, default, validate
from traitlets.config import Config, Configurable

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
        help="When the default model is the in-process local one, import its libraries in the background as "
        "the extension loads, so the first %%agent answers sooner.",
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

    def _load_config(self, cfg: Any, section_names: Any = None, traits: Any = None) -> None:
        """Apply IPython config (``c.PiNotebook.x = ...``) one setting at a time: a value that is refused keeps
        the default and says so in one line, instead of stopping ``%load_ext pi_notebook`` with a traceback."""
        name_of_class = type(self).__name__
        for name, value in self._find_my_config(cfg).items():
            before = getattr(self, name) if self.has_trait(name) else None
            try:
                super()._load_config(Config({name_of_class: {name: value}}), section_names, traits)
            except (TraitError, ValueError) as e:
                if self.has_trait(name):  # traitlets rolls back a held TraitError only, not a ValueError
                    self.set_trait(name, before)
                reason = one_line(e).removeprefix(f"{name}: ")
                print(f"pi_notebook: c.{name_of_class}.{name} = {value!r} is ignored ({reason}); using {before!r}",
                      file=sys.stderr)  # fmt: skip

    def describe(self) -> str:
        """The settings, one per line (what ``%agent_config`` prints)."""
        rows = [(name, repr(getattr(self, name)) + self._applied(name)) for name in self.trait_names(config=True)]
        width = max(len(n) for n, _ in rows)
        return "\n".join(f"{name:<{width}}  {value}" for name, value in sorted(rows))

    def _applied(self, name: str) -> str:
        """For ``approve=default``: which tools ask with the default model, and why (``  → python,...  (...)``)."""
        if name != "approve" or self.approve != APPROVE_DEFAULT:
            return ""
        try:
            model = resolve_model(self)
        except (UnknownModelError, ValueError):
            return ""
        return f"  → {approval_policy(self.approve, model).describe()}"
