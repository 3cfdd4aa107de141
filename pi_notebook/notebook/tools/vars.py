"""The ``vars`` tool: what the user's notebook namespace holds, read without running the user's code (see
:mod:`.namespace`). Read-only, so the offline model is given it too.

It reads the namespace on the kernel's main thread during a notebook run (where a time limit can interrupt a slow
repr); outside one (a script, an eval driving the session directly) it reads it on a worker thread.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import os
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from ...coding_agent.tools.errors import ToolError

DESCRIPTION = (
    "List the variables in the user's notebook (the Jupyter kernel's namespace): name, type and size of each; "
    "for DataFrames and arrays their shape, columns with dtypes and first rows; a short repr for the rest. "
    "Give name to see one variable in more detail."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "One variable to describe in more detail (optional)"},
    },
}

NO_KERNEL = "The vars tool reads a notebook's kernel: no IPython kernel is running here."


def _read(shell: Any, name: str | None) -> str:
    from .namespace import describe, listing, user_variables

    if not name:
        return listing(shell)
    if name not in shell.user_ns:
        known = ", ".join(user_variables(shell)) or "none yet"
        raise ToolError(f"No variable {name!r} in the notebook. Its variables: {known}")
    return describe(name, shell.user_ns[name], full=True)


def create_vars_tool(cwd: str | os.PathLike[str] | None = None, *, shell: Any = None) -> AgentTool:
    """The ``vars`` tool, reading ``shell``'s namespace (default: the running IPython's, at each call)."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        from IPython import get_ipython

        from ..runner import NoMainThread, on_main_thread

        target = shell if shell is not None else get_ipython()
        if target is None:
            raise ToolError(NO_KERNEL)
        name = (params.get("name") or "").strip() or None
        try:
            text = await on_main_thread(lambda: _read(target, name))
        except NoMainThread:
            text = await asyncio.to_thread(_read, target, name)
        return AgentToolResult.text(text)

    return AgentTool(name="vars", label="vars", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)


def with_name_choices(tool: AgentTool, cwd: Any = None, prompt: str = "", *, shell: Any = None) -> AgentTool:
    """The ``vars`` tool for a very small model: its ``name`` must be one of the notebook's variables (a JSON-Schema
    ``enum``), so a prompt that names one ("the value of total") gets a call on it, as a path gets a ``read``."""
    from IPython import get_ipython

    from .namespace import user_variables

    target = shell if shell is not None else get_ipython()
    found = user_variables(target) if target is not None else {}
    # data, not modules, classes or functions; no one-letter names ("a", "x"), which a question uses as words
    names = [n for n, v in found.items() if len(n) > 1 and not (inspect.ismodule(v) or callable(v))]
    if not names:
        return tool
    parameters = copy.deepcopy(tool.parameters)
    parameters["properties"]["name"]["enum"] = names
    return dataclasses.replace(tool, parameters=parameters)
