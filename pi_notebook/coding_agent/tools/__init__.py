"""The tools a run may be given: Pi's seven built-ins (``read``, ``bash``, ``edit``, ``write``, ``grep``, ``find``,
``ls``) and those an app registers with :func:`register_tool`.

Each ``create_*_tool(cwd)`` returns an :class:`~pi_notebook.agent_core.tool.AgentTool` with Pi's name,
description, JSON-Schema parameters and output texts, resolving relative paths against ``cwd``. A tool
fails by raising; the agent loop turns the message into an error result for the model.

The registry is the one list of tool names a run, ``--tools`` and ``tools=`` know: the built-ins are registered
through the same :func:`register_tool` an app calls (the notebook app registers its own tools so), as roles
are with :func:`~pi_notebook.agent_core.register_message_type`. A tool registered with
``default=True`` joins the default set (:func:`~pi_notebook.coding_agent.run_policy.default_tools`), and a
small in-process model's too when it is also ``read_only``.

:func:`run_shell` is the shell executor behind ``bash``, shared with the notebook's ``%bash`` magic.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
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
"""``factory(cwd)`` → the tool, working in ``cwd``: called for every run (and every preview of one)."""
Narrow = Callable[["AgentTool", str, str], "AgentTool"]
"""How a registered tool is narrowed for a very small model (:attr:`RegisteredTool.narrow`)."""

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


class ToolRegistryError(ValueError):
    """A tool registered wrongly (a bad name, a name taken) or a name that is not registered."""


@dataclass(frozen=True)
class RegisteredTool:
    """One entry of the registry."""

    name: str
    """What ``--tools`` and ``tools=`` call it; the factory's tool should carry the same name."""
    factory: ToolFactory
    read_only: bool
    """It changes nothing: no file, no process, no kernel state, no notebook (a small model may be given it)."""
    default: bool
    """It joins the default set (for a small model, only if it is also read-only)."""
    narrow: Narrow | None = None
    """``narrow(tool, cwd, prompt)``: the copy a very small model is given, its arguments limited to what exists
    (as a path tool's ``path`` is to the entries near ``cwd``); ``None``: the tool as it is."""


# Provider rules for a function's name (Anthropic's and OpenAI's are both ^[a-zA-Z0-9_-]{1,64}$).
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_registry: dict[str, RegisteredTool] = {}
_lock = threading.Lock()


def register_tool(
    name: str,
    factory: ToolFactory,
    *,
    read_only: bool,
    default: bool = False,
    replace: bool = False,
    narrow: Narrow | None = None,
) -> ToolFactory:
    """Make the tool ``factory(cwd)`` makes known as ``name``: ``--tools``, ``%agent_config tools=`` and every run
    can then name it. ``read_only``: it changes nothing (required, so that no app forgets to say); ``default``: it
    joins the default tools (:func:`~pi_notebook.coding_agent.run_policy.default_tools`; a small model's only if it
    is read-only). Registering a name again with another factory or other flags raises
    :class:`ToolRegistryError` unless ``replace=True`` (the same registration again is a no-op, so re-importing
    the module that registers is harmless). ``narrow``: see :attr:`RegisteredTool.narrow`. Returns ``factory``."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name == "none":
        raise ToolRegistryError(
            f"tool name {name!r}: use 1 to 64 letters, digits, '_' or '-' (providers refuse others); 'none' is taken"
        )
    if not callable(factory):
        raise ToolRegistryError(f"tool {name!r}: the factory must be callable as factory(cwd), not {factory!r}")
    if not isinstance(read_only, bool) or not isinstance(default, bool):
        raise ToolRegistryError(f"tool {name!r}: read_only and default must be True or False")
    if narrow is not None and not callable(narrow):
        raise ToolRegistryError(f"tool {name!r}: narrow must be callable as narrow(tool, cwd, prompt)")
    entry = RegisteredTool(name, factory, read_only, default, narrow)
    with _lock:
        existing = _registry.get(name)
        if existing is not None and existing != entry and not replace:
            raise ToolRegistryError(f"tool {name!r} is already registered; pass replace=True to replace it")
        _registry[name] = entry
    return factory


def unregister_tool(name: str) -> None:
    """Forget the tool ``name`` (an app that unloads); :class:`ToolRegistryError` if it is not registered."""
    with _lock:
        if _registry.pop(name, None) is None:
            raise ToolRegistryError(f"no tool {name!r} is registered")


def registered_tools() -> tuple[RegisteredTool, ...]:
    """Every registered tool, in the order of registration (Pi's seven first)."""
    with _lock:
        return tuple(_registry.values())


def tool_names() -> tuple[str, ...]:
    """The names ``--tools`` accepts, in the order of registration."""
    return tuple(t.name for t in registered_tools())


def registered_tool(name: str) -> RegisteredTool:
    """The registry's entry for ``name``; :class:`ToolRegistryError` naming the choices if there is none."""
    with _lock:
        entry = _registry.get(name)
    if entry is None:
        raise ToolRegistryError(f"unknown tool {name!r}; choose from {', '.join(tool_names())}")
    return entry


def make_tool(name: str, cwd: str | os.PathLike[str]) -> AgentTool:
    """The registered tool ``name``, working in ``cwd``."""
    tool = registered_tool(name).factory(cwd)
    if getattr(tool, "name", None) != name:  # the model would call it by a name no --tools knows
        raise ToolRegistryError(f"tool {name!r}: its factory made a tool named {getattr(tool, 'name', None)!r}")
    return tool


def _factory(name: str) -> ToolFactory:
    def make(cwd: str | os.PathLike[str]) -> AgentTool:
        return __getattr__(name)(cwd)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"``{name}(cwd)``, its module imported on first use."
    return make


#: Pi's seven built-in tools: name → factory, in Pi's order (each registered below, as an app's tool is).
TOOL_FACTORIES: dict[str, ToolFactory] = {
    "read": _factory("create_read_tool"),
    "bash": _factory("create_bash_tool"),
    "edit": _factory("create_edit_tool"),
    "write": _factory("create_write_tool"),
    "grep": _factory("create_grep_tool"),
    "find": _factory("create_find_tool"),
    "ls": _factory("create_ls_tool"),
}
_READ_ONLY = frozenset({"read", "grep", "find", "ls"})
for _name, _make in TOOL_FACTORIES.items():
    register_tool(_name, _make, read_only=_name in _READ_ONLY)
del _name, _make


def coding_tools(cwd: str | os.PathLike[str]) -> list[AgentTool]:
    """Pi's default set: ``read``, ``bash``, ``edit``, ``write``."""
    return [TOOL_FACTORIES[name](cwd) for name in ("read", "bash", "edit", "write")]


def read_only_tools(cwd: str | os.PathLike[str]) -> list[AgentTool]:
    """Exploration without changes: ``read``, ``grep``, ``find``, ``ls``."""
    return [TOOL_FACTORIES[name](cwd) for name in ("read", "grep", "find", "ls")]


def all_tools(cwd: str | os.PathLike[str]) -> list[AgentTool]:
    """Pi's seven built-in tools."""
    return [factory(cwd) for factory in TOOL_FACTORIES.values()]


__all__ = [
    "TOOL_FACTORIES",
    "RegisteredTool",
    "ShellResult",
    "ToolError",
    "ToolFactory",
    "ToolRegistryError",
    "all_tools",
    "coding_tools",
    "create_bash_tool",
    "create_edit_tool",
    "create_find_tool",
    "create_grep_tool",
    "create_ls_tool",
    "create_read_tool",
    "create_write_tool",
    "make_tool",
    "read_only_tools",
    "register_tool",
    "registered_tool",
    "registered_tools",
    "run_shell",
    "tool_names",
    "unregister_tool",
]
