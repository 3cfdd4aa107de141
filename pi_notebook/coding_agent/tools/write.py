"""The ``write`` tool: create or overwrite a file, creating parent directories (Pi's ``write.ts``)."""

from __future__ import annotations

import asyncio
import errno
import os
import re
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from ...ai.jstext import js_length
from .errors import ToolError, abortable, check_aborted, os_error_message
from .files import NotRegularFileError, create_regular
from .paths import resolve_to_cwd

DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
    "Automatically creates parent directories."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
        "content": {"type": "string", "description": "Content to write to the file"},
    },
    "required": ["path", "content"],
}

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def write_text(absolute_path: str, text: str, path: str | None = None) -> None:
    """Write ``text`` as UTF-8 with no newline translation; lone surrogates become U+FFFD, as in Node. Only a
    regular file is written (or created): a FIFO would block until a reader came, a device is no file."""
    data = _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")
    try:
        file = create_regular(absolute_path)
    except NotRegularFileError as exc:
        if exc.is_dir:
            raise ToolError(os_error_message(OSError(errno.EISDIR, "is a directory"), "open", absolute_path)) from None
        raise ToolError(f"Cannot write {path or absolute_path}: it is not a regular file ({exc.kind}).") from None
    except OSError as exc:
        raise ToolError(os_error_message(exc, "open", absolute_path)) from exc
    try:
        with file:
            file.write(data)
    except OSError as exc:
        raise ToolError(os_error_message(exc, "write")) from exc


def _write(absolute_path: str, path: str, content: str) -> None:
    directory = os.path.dirname(absolute_path)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise ToolError(os_error_message(exc, "mkdir", exc.filename or directory)) from exc
    write_text(absolute_path, content, path)


def create_write_tool(cwd: str | os.PathLike[str]) -> AgentTool:
    """The ``write`` tool, resolving paths against ``cwd``."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        path, content = params["path"], params["content"]
        absolute_path = resolve_to_cwd(path, cwd)
        await abortable(asyncio.to_thread(_write, absolute_path, path, content), signal)
        check_aborted(signal)
        # Pi reports the JavaScript string length, not the number of bytes written.
        return AgentToolResult.text(f"Successfully wrote {js_length(content)} bytes to {path}")

    return AgentTool(name="write", label="write", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
