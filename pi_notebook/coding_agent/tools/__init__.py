"""Pi's seven built-in coding tools (``read``, ``bash``, ``edit``, ``write``, ``grep``, ``find``, ``ls``).

Each ``create_*_tool(cwd)`` returns an :class:`~pi_notebook.agent_core.tool.AgentTool` with Pi's name,
description, JSON-Schema parameters and output texts, resolving relative paths against ``cwd``. A tool
fails by raising; the agent loop turns the message into an error result for the model.

:func:`run_shell` is the shell executor behind ``bash``, shared with the notebook's ``%bash`` magic.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...ai.lazy import lazy_exports

if TYPE_CHECKING:
    from ...agent_core import AgentTool
    from .bash import create_bash_tool
    from .edit import create_edit_tool
    from .errors import ToolError
    from .find import create_find_tool
    from .grep import create_grep_tool
    from .ls import create_ls_tool
    from .read import create_read_tool
    from .shell import ShellResult, run_shell
    from .write import create_write_tool

ToolFactory = Callable[[str | os.PathLike[str]], "AgentTool"]

# Each tool's module is imported when the tool is first made (or its name first read from this package), so
# that importing the package (``%load_ext`` does, through ``%bash``'s run_shell) imports only what it uses.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".read": ["create_read_tool"],
        ".bash": ["create_bash_tool"],
        ".edit": ["create_edit_tool"],
        ".write": ["create_write_tool"],
        ".grep": ["create_grep_tool"],
        ".find": ["create_find_tool"],
        ".ls": ["create_ls_tool"],
        ".shell": ["ShellResult", "run_shell"],
        ".errors": ["ToolError"],
    },
)


def _factory(name: str) -> ToolFactory:
    def make(cwd: str | os.PathLike[str]) -> AgentTool:
        return __getattr__(name)(cwd)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``{name}(cwd)``, its module imported on first use."
    return make


#: Tool name → factory, in Pi's order.
TOOL_FACTORIES: dict[str, ToolFactory] = {
    "read": _factory("create_read_tool"),
    "bash": _factory("create_bash_tool"),
    "edit": _factory("create_edit_tool"),
    "write": _factory("create_write_tool"),
    "grep": _factory("create_grep_tool"),
    "find": _factory("create_find_tool"),
    "ls": _factory("create_ls_tool"),
}


def coding_tools(cwd: str | os.PathLike[str]) -> list[AgentTool]:
    """Pi's default set: ``read``, ``bash``, ``edit``, ``write``."""
    return [TOOL_FACTORIES[name](cwd) for name in ("read", "bash", "edit", "write")]


def read_only_tools(cwd: str | os.PathLike[str]) -> list[AgentTool]:
    """Exploration without changes: ``read``, ``grep``, ``find``, ``ls``."""
    return [TOOL_FACTORIES[name](cwd) for name in ("read", "grep", "find", "ls")]


def all_tools(cwd: str | os.PathLike[str]) -> list[AgentTool]:
    """All seven tools."""
    return [factory(cwd) for factory in TOOL_FACTORIES.values()]


__all__ = [
    "TOOL_FACTORIES",
    "ShellResult",
    "ToolError",
    "ToolFactory",
    "all_tools",
    "coding_tools",
    "create_bash_tool",
    "create_edit_tool",
    "create_find_tool",
    "create_grep_tool",
    "create_ls_tool",
    "create_read_tool",
    "create_write_tool",
    "read_only_tools",
    "run_shell",
]
