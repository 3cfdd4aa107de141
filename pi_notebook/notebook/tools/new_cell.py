"""The ``new_cell`` tool: the agent hands the user a cell, put below the running ``%%agent`` cell and never run.

IPython's ``set_next_input`` carries it: the kernel sends it with the cell's reply, and JupyterLab (as Notebook 7
and the classic notebook) inserts it below as a new code cell, not run, when the ``%%agent`` cell ends well (a run
the stop button ends adds no cell). Two limits of that channel, and what this tool makes of them:

* one new cell per execution: JupyterLab takes the first ``set_next_input`` of a reply (and IPython keeps only the
  last). So every call in one run adds to the same new cell, its parts separated by a blank line.
* code cells only: the payload has no cell type. Markdown is offered as a ``%%markdown`` cell, which shows the text
  rendered when run (IPython's own magic); a Markdown part in a cell that also holds code becomes ``#`` comments.
"""

from __future__ import annotations

import os
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from ...coding_agent.tools.errors import ToolError

DESCRIPTION = (
    "Put a new cell below the running cell for the user to read and run; it is never run by you. Use it to hand "
    "the user code (or Markdown) they asked for. Calls in one answer add to the same new cell."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source": {"type": "string", "description": "The cell's content: Python code, or Markdown text"},
        "kind": {"type": "string", "enum": ["code", "markdown"], "description": "code (default) or markdown"},
    },
    "required": ["source"],
}

NEEDS_A_RUN = (
    "new_cell puts a cell below the running %%agent cell: this run has no notebook cell to put it below "
    "(it was not started from a notebook)."
)


def _as_comment(markdown: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in markdown.splitlines())


def cell_text(parts: list[tuple[str, str]]) -> str:
    """The one new cell holding ``parts`` (``(kind, source)``, in order)."""
    if all(kind == "markdown" for kind, _ in parts):
        return "%%markdown\n" + "\n\n".join(source for _, source in parts)
    return "\n\n".join(source if kind == "code" else _as_comment(source) for kind, source in parts)


def _pending(shell: Any, text: str) -> bool:
    """Whether the cell ``text`` written earlier still waits to be sent with this execution's reply (a kernel
    clears its payloads once it has sent them; a plain shell keeps its next input)."""
    manager = getattr(shell, "payload_manager", None)
    payloads = manager.read_payload() if manager is not None else []
    if any(p.get("source") == "set_next_input" and p.get("text") == text for p in payloads):
        return True
    return getattr(shell, "rl_next_input", None) == text


def create_new_cell_tool(cwd: str | os.PathLike[str] | None = None, *, shell: Any = None) -> AgentTool:
    """The ``new_cell`` tool, putting cells below the cell ``shell`` runs (default: the running IPython's)."""
    parts: list[tuple[str, str]] = []  # what this run put in the new cell so far
    written: list[str] = []  # the new cell's text as last written

    def put(target: Any, source: str, kind: str) -> str:
        if parts and not (written and _pending(target, written[-1])):
            parts.clear()  # that cell was sent with an earlier execution: this is a new one
        parts.append((kind, source))
        text = cell_text(parts)
        target.set_next_input(text, replace=False)
        written[:] = [text]
        what = (
            "a %%markdown cell (running it shows the Markdown rendered)"
            if text.startswith("%%markdown")
            else ("a code cell")
        )
        if len(parts) == 1:
            return f"A new cell is below the running cell, not run: {what}. The user sees it when this run ends."
        return (
            f"Added to the new cell below (one run adds one cell): it now holds {len(parts)} parts, separated by a "
            f"blank line, as {what}. Not run."
        )

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        from IPython import get_ipython

        from ..runner import NoMainThread, on_main_thread

        source = str(params["source"]).strip("\n")
        if not source.strip():
            raise ToolError("new_cell needs the cell's source: it was empty.")
        kind = params.get("kind") or "code"
        target = shell if shell is not None else get_ipython()
        if target is None:
            raise ToolError(NEEDS_A_RUN)
        try:
            return AgentToolResult.text(await on_main_thread(lambda: put(target, source, kind)))
        except NoMainThread:
            raise ToolError(NEEDS_A_RUN) from None

    return AgentTool(name="new_cell", label="new cell", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
