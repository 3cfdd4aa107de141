"""The ``python`` tool: run Python in the user's kernel, where the notebook's variables are, as a cell would.

The code runs on the kernel's main thread (:func:`~pi_notebook.notebook.runner.on_main_thread`), during an
``%%agent`` run; see :mod:`.python_run` for how it runs and what is kept. The result is what a cell would show:
its output as text (the tail, with the whole in a file, when long), its pictures as image blocks, and a failure
(an exception, a timeout, the stop button) as an error result that ends with the traceback or the reason. The stop
button interrupts the code as it interrupts a cell, and stops the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from ...ai import ImageContent, TextContent
from ...ai.jstext import js_number
from ...coding_agent.tools.errors import ToolError
from ..cell_message import NotebookCellMessage

DEFAULT_TIMEOUT = 60.0
"""Seconds the code may run when the call gives no ``timeout`` (the stop button works at any time)."""

DESCRIPTION = (
    "Run Python code in the user's Jupyter kernel, in the notebook's namespace: the variables, imports and "
    "functions the user's cells defined are there, and what you define stays for the user. Returns what the code "
    "prints, the value of its last expression (as the notebook shows it), displayed output and figures (as "
    "images), or the traceback if it fails. It runs like a cell, on the kernel's main thread, and is stopped after "
    f"{js_number(DEFAULT_TIMEOUT)} seconds unless you give a timeout. Look before you change: do not overwrite or "
    "delete the user's variables unless asked."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "Python code to run; the last expression's value is returned"},
        "timeout": {
            "type": "number",
            "description": f"Seconds before the code is interrupted (optional, default {js_number(DEFAULT_TIMEOUT)})",
        },
    },
    "required": ["code"],
}

ABORT_WAIT_SECONDS = 2.0
"""After the stop button interrupted the code, how long to wait for the run's abort (it follows at once)."""

NEEDS_A_RUN = (
    "The python tool runs code in a notebook's kernel during a %%agent run; this run has no kernel waiting for it "
    "(it was not started from a notebook cell)."
)


def _output_text(cell: NotebookCellMessage) -> str:
    """The output and the notes on it, as the model reads them."""
    parts = [cell.output.rstrip("\n")] if cell.output else []
    if cell.truncated:
        where = f" Full output: {cell.full_output_path}" if cell.full_output_path else ""
        parts.append(f"[Output truncated: this is its end.{where}]")
    if cell.images:
        n = len(cell.images)
        parts.append(f"[{n} image{'s' if n != 1 else ''} attached]")
    parts += [f"[{line}]" for line in cell.omitted]
    return "\n\n".join(parts)


def _failure(cell: NotebookCellMessage, status: str) -> ToolError:
    text = _output_text(cell)
    return ToolError(f"{text}\n\n{status}" if text else status)


def _error_status(cell: NotebookCellMessage) -> str:
    error = cell.error
    assert error is not None
    head = f"{error.name}: {error.value}" if error.value else error.name
    return error.traceback.rstrip("\n") or head  # (IPython's traceback ends with the error's line)


def create_python_tool(cwd: str | os.PathLike[str] | None = None, *, shell: Any = None) -> AgentTool:
    """The ``python`` tool, running code in ``shell`` (default: the running IPython, at each call). ``cwd`` is not
    used: the code runs in the kernel's own working directory, as a cell's does."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        from ..runner import Interrupted, NoMainThread, on_main_thread
        from .python_run import PythonRun, run_python

        code = params["code"]
        timeout = params.get("timeout")
        limit = DEFAULT_TIMEOUT if timeout is None or timeout <= 0 else float(timeout)
        target = shell if shell is not None else _running_shell()
        stopped: list[PythonRun] = []
        try:
            run = await on_main_thread(lambda: run_python(target, code, timeout=limit, stopped=stopped))
        except NoMainThread:
            raise ToolError(NEEDS_A_RUN) from None
        except Interrupted:
            # The kernel's thread aborts the run just after it hands this back: wait for that, so the loop sees
            # an aborted run and asks the model nothing more (a quick model could answer in between).
            if signal is not None and hasattr(signal, "wait"):
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(signal.wait(), ABORT_WAIT_SECONDS)
            cell = stopped[0].cell if stopped else NotebookCellMessage(source=code)
            raise _failure(cell, "Interrupted: the user pressed the stop button; the run stops here.") from None
        cell = run.cell
        if run.timed_out:
            raise _failure(
                cell,
                f"Timed out after {js_number(limit)} seconds: the code was interrupted (what it did before is kept in "
                "the kernel). Give a larger timeout if it needs longer.",
            )
        if cell.error is not None:
            raise _failure(cell, _error_status(cell))
        text = _output_text(cell) or "(no output)"
        content: list[TextContent | ImageContent] = [TextContent(text=text), *cell.images]
        details = {"fullOutputPath": cell.full_output_path} if cell.truncated and cell.full_output_path else None
        return AgentToolResult(content=content, details=details)

    return AgentTool(name="python", label="python", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)


def _running_shell() -> Any:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise ToolError(NEEDS_A_RUN)
    return shell
