"""The ``read`` tool (Pi's ``read.ts``): a text file, head-truncated and paged, or an image.

Images (PNG, JPEG, GIF, WebP, recognised by their first bytes, not their name) come back as an image block
after a ``Read image file [<mime>]`` line. Pi also shrinks images to at most 2000×2000 px / 4.5 MB and
adds a note with the scale; that needs an image library, so it is not done here: images are sent as they are.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import os
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from ...ai import ImageContent, TextContent
from ..truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head
from .errors import ToolError, abortable, js_number, os_error_message
from .paths import resolve_read_path

DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as "
    f"attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. When you "
    "need the full file, continue with offset until complete."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
}


def detect_image_mime_type(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP file from its first bytes, else ``None``."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _read_bytes(absolute_path: str) -> bytes:
    if not os.access(absolute_path, os.R_OK):
        # Pi checks readability first (fs.access), so a missing file fails with Node's access error.
        number = errno.EACCES if os.path.exists(absolute_path) else errno.ENOENT
        raise ToolError(os_error_message(OSError(number, os.strerror(number)), "access", absolute_path))
    try:
        with open(absolute_path, "rb") as file:
            return file.read()
    except IsADirectoryError as exc:
        raise ToolError(os_error_message(exc, "read", "")) from exc
    except OSError as exc:
        raise ToolError(os_error_message(exc, "open", absolute_path)) from exc


def _text_result(data: bytes, path: str, offset: Any, limit: Any) -> AgentToolResult:
    all_lines = data.decode("utf-8", errors="replace").split("\n")
    total = len(all_lines)
    start = max(0, int(offset) - 1) if offset else 0
    if start >= total:
        raise ToolError(f"Offset {js_number(offset)} is beyond end of file ({total} lines total)")
    user_limited: int | None = None
    if limit is not None:
        end = min(start + int(limit), total)
        selected = "\n".join(all_lines[start:end])
        user_limited = max(end - start, 0)
    else:
        selected = "\n".join(all_lines[start:])

    truncation = truncate_head(selected)
    first = start + 1
    details = None
    if truncation.first_line_exceeds_limit:
        size = format_size(len(all_lines[start].encode("utf-8")))
        text = (
            f"[Line {first} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        details = {"truncation": truncation.to_pi_json()}
    elif truncation.truncated:
        last = first + truncation.output_lines - 1
        by_bytes = truncation.truncated_by != "lines"
        limit_note = f" ({format_size(DEFAULT_MAX_BYTES)} limit)" if by_bytes else ""
        text = (
            f"{truncation.content}\n\n[Showing lines {first}-{last} of {total}{limit_note}. "
            f"Use offset={last + 1} to continue.]"
        )
        details = {"truncation": truncation.to_pi_json()}
    elif user_limited is not None and start + user_limited < total:
        remaining = total - (start + user_limited)
        next_offset = start + user_limited + 1
        notice = f"[{remaining} more lines in file. Use offset={next_offset} to continue.]"
        text = f"{truncation.content}\n\n{notice}"
    else:
        text = truncation.content
    return AgentToolResult(content=[TextContent(text=text)], details=details)


def create_read_tool(cwd: str | os.PathLike[str]) -> AgentTool:
    """The ``read`` tool, resolving paths against ``cwd``."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        path = params["path"]
        absolute_path = resolve_read_path(path, cwd)
        data = await abortable(asyncio.to_thread(_read_bytes, absolute_path), signal)
        mime_type = detect_image_mime_type(data[:16])
        if mime_type is not None:
            image = ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)
            return AgentToolResult(content=[TextContent(text=f"Read image file [{mime_type}]"), image])
        return _text_result(data, path, params.get("offset"), params.get("limit"))

    return AgentTool(name="read", label="read", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
