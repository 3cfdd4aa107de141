"""The ``edit`` tool: replace one unique occurrence of a text in a file (Pi's ``edit.ts``).

Matching is exact, then fuzzy (see :mod:`.edit_diff`); the text must occur once. Line endings are matched
as LF and written back in the file's own style (CRLF stays CRLF), and a UTF-8 BOM is kept. ``details`` holds
Pi's line-numbered diff and the first changed line.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from .edit_diff import (
    count_occurrences,
    detect_line_ending,
    generate_diff_string,
    normalize_to_lf,
    replace_text,
    restore_line_endings,
    strip_bom,
)
from .errors import ToolError, abortable, check_aborted, os_error_message
from .paths import resolve_to_cwd
from .write import write_text

DESCRIPTION = (
    "Edit a file by replacing exact text. The oldText must match exactly (including whitespace). "
    "Use this for precise, surgical edits."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
        "oldText": {"type": "string", "description": "Exact text to find and replace (must match exactly)"},
        "newText": {"type": "string", "description": "New text to replace the old text with"},
    },
    "required": ["path", "oldText", "newText"],
}


def _edit(absolute_path: str, path: str, old_text: str, new_text: str, signal: Any) -> dict[str, Any]:
    if not os.access(absolute_path, os.R_OK | os.W_OK):
        raise ToolError(f"File not found: {path}")
    try:
        with open(absolute_path, "rb") as file:
            raw = file.read().decode("utf-8", errors="replace")
    except IsADirectoryError as exc:
        raise ToolError(os_error_message(exc, "read", "")) from exc
    except OSError as exc:
        raise ToolError(os_error_message(exc, "open", absolute_path)) from exc
    check_aborted(signal)

    bom, content = strip_bom(raw)
    ending = detect_line_ending(content)
    content = normalize_to_lf(content)
    old_text, new_text = normalize_to_lf(old_text), normalize_to_lf(new_text)
    match = replace_text(content, old_text, new_text)
    if match is None:
        raise ToolError(
            f"Could not find the exact text in {path}. "
            "The old text must match exactly including all whitespace and newlines."
        )
    occurrences = count_occurrences(content, old_text)
    if occurrences > 1:
        raise ToolError(
            f"Found {occurrences} occurrences of the text in {path}. "
            "The text must be unique. Please provide more context to make it unique."
        )
    if match.matched_text == new_text:
        raise ToolError(
            f"No changes made to {path}. The replacement produced identical content. "
            "This might indicate an issue with special characters or the text not existing as expected."
        )
    check_aborted(signal)
    write_text(absolute_path, bom + restore_line_endings(match.new_content, ending))
    diff, first_changed_line = generate_diff_string(content, match.new_content)
    details: dict[str, Any] = {"diff": diff}
    if first_changed_line is not None:
        details["firstChangedLine"] = first_changed_line
    return details


def create_edit_tool(cwd: str | os.PathLike[str]) -> AgentTool:
    """The ``edit`` tool, resolving paths against ``cwd``."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        path = params["path"]
        absolute_path = resolve_to_cwd(path, cwd)
        work = asyncio.to_thread(_edit, absolute_path, path, params["oldText"], params["newText"], signal)
        details = await abortable(work, signal)
        return AgentToolResult.text(f"Successfully replaced text in {path}.", details=details)

    return AgentTool(name="edit", label="edit", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
