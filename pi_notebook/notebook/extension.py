"""``%load_ext pi_notebook``: register the magics and attach the kernel to the notebook's session."""

from __future__ import annotations

from typing import Any

from . import (
    cell_message,  # noqa: F401 - registers the notebookCell role before any session is read
    tools,  # noqa: F401 - registers python, vars and new_cell before any setting names them
)
from .config import PiNotebook
from .kernel import NotebookSession
from .magics import PiMagics
from .plugins import close_mcp_servers, connect_mcp_servers, load_plugins
from .utf8 import say

_state: dict[str, Any] = {}


def current_session() -> NotebookSession:
    """The kernel's session (the extension must be loaded, or one is created for plain Python)."""
    session = _state.get("session")
    if session is None:
        load_plugins()  # (plain Python, no %load_ext: the installed plugins' roles, tools and renderers too)
        session = NotebookSession.for_shell(None, PiNotebook())
        _state["session"] = session
    return session


def load(shell: Any) -> None:
    """Register the magics on ``shell`` and open (or reattach to) its session."""
    from .cell_recorder import CellRecorder

    previous = _state.get("session")
    if previous is not None:
        previous.stop_warm_up()
        previous.file.close()  # a reload reattaches: release the lock first
    if _state.get("recorder") is not None:
        _state.pop("recorder").detach()
    # Installed plugins and MCP servers first: the session file may hold their roles, the settings name their tools.
    load_plugins()
    connect_mcp_servers()
    config = PiNotebook(parent=shell)
    _forget_settings(shell)  # a second load replaces the first one's settings
    shell.configurables.append(config)  # so IPython's %config PiNotebook.x = ... reaches them
    session = NotebookSession.for_shell(shell, config)
    _state["session"] = session
    magics = PiMagics(shell, current_session)
    shell.register_magics(magics)
    shell.register_magic_function(magics.bash_excluded, "line", "bash!")
    if session.note:
        say(f"pi_notebook: {session.note}")
    shown = session.load_warnings[:5]
    for warning in shown:
        say(f"pi_notebook: {warning}")
    if len(session.load_warnings) > len(shown):
        say(f"pi_notebook: and {len(session.load_warnings) - len(shown)} more (%agent_session shows them all)")
    recorder = _state["recorder"] = CellRecorder(shell, current_session, config)
    magics.recorder = recorder  # (%agent_private marks the cell being recorded)
    recorder.attach()  # from the next cell on, the cells you run join the history (%agent_config cells=...)
    if getattr(shell, "kernel", None) is not None:  # interactive Jupyter only: not scripts, not terminal IPython
        session.warm_up(in_cell=True)  # (the %load_ext cell runs: the preload starts when it ends)


def unload(shell: Any) -> None:
    """Close the session file (releasing its lock) and take the settings out of ``%config``."""
    _forget_settings(shell)
    session = _state.pop("session", None)
    if session is not None:
        session.stop_warm_up()
        session.file.close()
    recorder = _state.pop("recorder", None)
    if recorder is not None:
        recorder.detach()
    close_mcp_servers()


def _forget_settings(shell: Any) -> None:
    """Take every :class:`PiNotebook` out of ``shell.configurables`` (``%config`` lists and sets what is there)."""
    configurables = getattr(shell, "configurables", None)
    if configurables is not None:
        configurables[:] = [c for c in configurables if not isinstance(c, PiNotebook)]
