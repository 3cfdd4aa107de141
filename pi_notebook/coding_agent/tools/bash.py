"""The ``bash`` tool (Pi's ``bash.ts``): run a command in the working directory via :func:`.shell.run_shell`.

Output is tail-truncated (2000 lines / 50 KB) with a notice naming the temp file that holds all of it, and
streamed to the UI while the command runs. A failing command is a failing tool: non-zero exit, abort and
timeout all raise, with the output so far followed by the reason.
"""

from __future__ import annotations

import os
from typing import Any

from ...agent_core import AgentTool, AgentToolResult, OnUpdate
from ...ai.jstext import js_number
from ..truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size
from .errors import ToolError
from .shell import ShellResult, run_shell

DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. Output is "
    f"truncated to last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit "
    "first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Bash command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
    },
    "required": ["command"],
}


def format_shell_output(result: ShellResult, empty_text: str = "(no output)") -> tuple[str, dict | None]:
    """The tool text for ``result`` (output plus truncation notice) and the ``details`` Pi attaches."""
    text = result.output or empty_text
    truncation = result.truncation
    if truncation is None or not truncation.truncated:
        return text, None
    details = {"truncation": truncation.to_pi_json(), "fullOutputPath": result.full_output_path}
    end = truncation.total_lines
    start = end - truncation.output_lines + 1
    path = result.full_output_path
    error = result.full_output_error
    where = f"The full output could not be saved: {error}" if error and not path else f"Full output: {path}"
    if truncation.last_line_partial:
        shown, whole = format_size(truncation.output_bytes), format_size(result.last_line_bytes)
        text += f"\n\n[Showing last {shown} of line {end} (line is {whole}). {where}]"
    elif truncation.truncated_by == "lines":
        text += f"\n\n[Showing lines {start}-{end} of {end}. {where}]"
    else:
        limit = format_size(DEFAULT_MAX_BYTES)
        text += f"\n\n[Showing lines {start}-{end} of {end} ({limit} limit). {where}]"
    return text, details


def _with_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


def create_bash_tool(cwd: str | os.PathLike[str]) -> AgentTool:
    """The ``bash`` tool, running commands in ``cwd``."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: OnUpdate | None = None):
        command, timeout = params["command"], params.get("timeout")
        if not os.path.isdir(cwd):
            raise ToolError(f"Working directory does not exist: {os.fspath(cwd)}\nCannot execute bash commands.")

        def progress(partial: ShellResult) -> None:
            # Like Pi, a partial result is the bare tail (no notice); details say whether it is cut.
            details: dict[str, Any] = {}
            if partial.truncation is not None and partial.truncation.truncated:
                details["truncation"] = partial.truncation.to_pi_json()
            if partial.full_output_path:
                details["fullOutputPath"] = partial.full_output_path
            if on_update is not None:
                on_update(AgentToolResult.text(partial.output, details=details or None))

        result = await run_shell(
            command,
            cwd=cwd,
            signal=signal,
            timeout=timeout if timeout is not None and timeout > 0 else None,
            on_progress=progress if on_update is not None else None,
        )
        if result.timed_out:
            assert timeout is not None  # only a run given a timeout times out
            text, _ = format_shell_output(result, empty_text="")
            raise ToolError(_with_status(text, f"Command timed out after {js_number(timeout)} seconds"))
        if result.cancelled:
            text, _ = format_shell_output(result, empty_text="")
            raise ToolError(_with_status(text, "Command aborted"))
        text, details = format_shell_output(result)
        if result.exit_code:
            raise ToolError(f"{text}\n\nCommand exited with code {result.exit_code}")
        return AgentToolResult.text(text, details=details)

    return AgentTool(name="bash", label="bash", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
