"""The notebook's own tools, registered like any app's (:func:`~pi_notebook.coding_agent.tools.register_tool`):

* ``python`` (:mod:`.python`): run code in the user's kernel, as a cell would; its output, value, figures or
  traceback come back. A default tool for models that are not small (it changes the kernel's state).
* ``vars`` (:mod:`.vars`): what the namespace holds (names, types, sizes; a DataFrame's shape, dtypes, columns and
  first rows), without running the user's code. Read-only: a default tool for every model, the small one included.
* ``new_cell`` (:mod:`.new_cell`): a cell put below for the user, never run. A default tool for models that are
  not small.

Importing this package registers them (``%load_ext pi_notebook`` does); their modules load at a run's first use.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ...coding_agent.tools import register_tool

if TYPE_CHECKING:
    from ...agent_core import AgentTool

NOTEBOOK_TOOLS = ("python", "vars", "new_cell")
"""The notebook's tools, in the order they join the defaults."""


def _python(cwd: str | os.PathLike[str]) -> AgentTool:
    from .python import create_python_tool

    return create_python_tool(cwd)


def _vars(cwd: str | os.PathLike[str]) -> AgentTool:
    from .vars import create_vars_tool

    return create_vars_tool(cwd)


def _new_cell(cwd: str | os.PathLike[str]) -> AgentTool:
    from .new_cell import create_new_cell_tool

    return create_new_cell_tool(cwd)


register_tool("python", _python, read_only=False, default=True)


def _narrow_vars(tool: AgentTool, cwd: str, prompt: str) -> AgentTool:
    from .vars import with_name_choices

    return with_name_choices(tool, cwd, prompt)


register_tool("vars", _vars, read_only=True, default=True, narrow=_narrow_vars)
register_tool("new_cell", _new_cell, read_only=False, default=True)

__all__ = ["NOTEBOOK_TOOLS"]
