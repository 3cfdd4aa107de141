"""The ``ls`` tool: list a directory (Pi's ``ls.ts``).

Entries are sorted case-insensitively, directories get a trailing ``/`` (symbolic links are followed to
decide), dotfiles are included; at most ``limit`` entries (default 500) and 50 KB, with a notice when a limit
is hit. Pi sorts with ``localeCompare``; here the order is by lower-cased code point, which differs only in
where punctuation and accented letters fall.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from ..truncate import DEFAULT_MAX_BYTES
from .errors import ToolError, abortable, check_aborted
from .paths import resolve_to_cwd
from .search import listing_result

DEFAULT_LIMIT = 500

DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
    f"Includes dotfiles. Output is truncated to {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"},
    },
}


def _list(dir_path: str, limit: int) -> tuple[list[str], bool]:
    if not os.path.exists(dir_path):
        raise ToolError(f"Path not found: {dir_path}")
    if not os.path.isdir(dir_path):
        raise ToolError(f"Not a directory: {dir_path}")
    try:
        names = os.listdir(dir_path)
    except OSError as exc:
        raise ToolError(f"Cannot read directory: {exc.strerror or exc}") from exc
    names.sort(key=lambda name: (name.lower(), name))
    entries: list[str] = []
    for name in names:
        if len(entries) >= limit:
            return entries, True
        full_path = os.path.join(dir_path, name)
        if not os.path.exists(full_path):
            continue  # a dangling symbolic link cannot be stat'ed; Pi leaves such entries out
        entries.append(name + "/" if os.path.isdir(full_path) else name)
    return entries, False


def create_ls_tool(cwd: str | os.PathLike[str]) -> AgentTool:
    """The ``ls`` tool, resolving paths against ``cwd``."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        check_aborted(signal)
        dir_path = resolve_to_cwd(params.get("path") or ".", cwd)
        limit = int(params["limit"]) if params.get("limit") is not None else DEFAULT_LIMIT
        entries, limit_reached = await abortable(asyncio.to_thread(_list, dir_path, limit), signal)
        if not entries:
            return AgentToolResult.text("(empty directory)")

        notices = []
        if limit_reached:
            notices.append(
                (f"{limit} entries limit reached. Use limit={limit * 2} for more", "entryLimitReached", limit)
            )
        return listing_result(entries, notices)

    return AgentTool(name="ls", label="ls", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
