"""The ``read`` tool (Pi's ``read.ts``): a text file, head-truncated and paged, or an image.

Images (PNG, JPEG, GIF, WebP, recognised by their first bytes, not their name) come back as an image block
after a ``Read image file [<mime>]`` line. Pi also shrinks images to at most 2000×2000 px / 4.5 MB and
adds a note with the scale; that needs an image library, so it is not done here: images are sent as they are,
up to 20 MB (:data:`IMAGE_LIMIT`; a larger one is refused without being read).

Only regular files are read (:mod:`.files`): a FIFO (opening it would wait for a writer), a socket or a device
(``/dev/zero`` never ends) is refused in one line, and no more than ``max(size, 64 MB)`` bytes are read of a
file, so a ``/proc`` file (which says it holds 0 bytes) or a growing log cannot keep the tool reading.

Text is streamed, never loaded whole: one pass counts the file's lines (Pi's notices give the total) and
measures the requested lines, keeping only the bytes the limits can return. So a 1 GiB file costs one read
of it and a few MB of memory. Unlike Pi, a file with a NUL byte in its first 8000 bytes (git's test) is
refused as binary instead of being returned as mojibake, and text that is not valid UTF-8 (shown with
U+FFFD, as Pi shows it) gets a note saying so.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import errno
import os
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

from ...agent_core import AgentTool, AgentToolResult
from ...ai import ImageContent, TextContent
from ...ai.jstext import js_number
from ..truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head
from .errors import ToolError, abortable, check_aborted, os_error_message
from .files import BoundedReader, NotRegularFileError, open_regular, read_at_most, read_limit
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

_CHUNK = 1 << 20
_BINARY_SNIFF = 8000  # git calls a file binary if its first 8000 bytes hold a NUL
IMAGE_LIMIT = 20 << 20
"""The largest image read sends (20 MB, what OpenAI and Gemini take inline; Anthropic takes 5 MB). Pi shrinks
images to 4.5 MB; with no image library here they go as they are, and a larger one is refused, unread."""


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


class _Utf8Size:
    """The UTF-8 size of a byte stream once decoded with U+FFFD for bad bytes, as Pi measures its text.

    Fed piece by piece; a character split between pieces is carried over. Valid UTF-8 keeps its size.
    """

    def __init__(self) -> None:
        self.size = 0
        self.valid = True
        self._pending = b""

    def feed(self, piece: bytes, final: bool = False) -> None:
        data = self._pending + piece if self._pending else piece
        if data.isascii():
            self.size, self._pending = self.size + len(data), b""
            return
        try:
            _, used = codecs.utf_8_decode(data, "strict", final)
            self.size += used
        except UnicodeDecodeError:
            self.valid = False
            text, used = codecs.utf_8_decode(data, "replace", final)
            self.size += len(text.encode("utf-8"))
        self._pending = data[used:]


@dataclass
class _Scan:
    """What one pass over a text file found."""

    total_lines: int
    """Lines in the file (JS ``split("\\n")``: a final line break starts an empty last line)."""
    head: bytes
    """The first ``DEFAULT_MAX_BYTES + 1`` bytes of the selected lines (all of them if fewer)."""
    size: _Utf8Size
    """The size and validity of the selected lines, joined by ``\\n`` (Pi's ``totalBytes``)."""
    first_line: _Utf8Size
    """The size of the first selected line (for Pi's "Line N is <size>" notice)."""


def _skip_lines(chunk: bytes, pos: int, lines: int) -> tuple[int, int]:
    """Move past up to ``lines`` line breaks from ``pos``: ``(new position, line breaks passed)``."""
    available = chunk.count(b"\n", pos)
    if available < lines:
        return len(chunk), available
    for _ in range(lines):
        pos = chunk.index(b"\n", pos) + 1
    return pos, lines


def _scan(file: BoundedReader, chunk: bytes, start: int, stop: int | None, signal: Any) -> _Scan:
    """Count the file's lines and measure lines ``[start, stop)`` (to the end if ``stop`` is ``None``).

    ``chunk`` is what was already read from ``file``. Memory stays at one chunk plus the kept head.
    """
    newlines, head = 0, bytearray()
    size, first_line = _Utf8Size(), _Utf8Size()
    in_first_line = True
    while chunk:
        pos = 0
        while pos < len(chunk):
            if newlines < start:
                pos, passed = _skip_lines(chunk, pos, start - newlines)
            elif stop is None or newlines < stop:
                if stop is None:
                    after, passed = len(chunk), chunk.count(b"\n", pos)
                    end = after
                else:
                    after, passed = _skip_lines(chunk, pos, stop - newlines)
                    end = after - 1 if newlines + passed == stop else after  # the last line break is not selected
                piece = chunk[pos:end]
                size.feed(piece)
                if len(head) <= DEFAULT_MAX_BYTES:
                    head += piece[: DEFAULT_MAX_BYTES + 1 - len(head)]
                if in_first_line:
                    newline = piece.find(b"\n")
                    first_line.feed(piece if newline == -1 else piece[:newline])
                    in_first_line = newline == -1
                pos = after
            else:
                pos, passed = len(chunk), chunk.count(b"\n", pos)
            newlines += passed
        check_aborted(signal)
        chunk = file.read(_CHUNK)
    size.feed(b"", final=True)
    first_line.feed(b"", final=True)
    return _Scan(newlines + 1, bytes(head), size, first_line)


def _open(absolute_path: str, path: str) -> tuple[BinaryIO, os.stat_result]:
    if not os.access(absolute_path, os.R_OK):
        # Pi checks readability first (fs.access), so a missing file fails with Node's access error.
        number = errno.EACCES if os.path.exists(absolute_path) else errno.ENOENT
        raise ToolError(os_error_message(OSError(number, os.strerror(number)), "access", absolute_path))
    try:
        return open_regular(absolute_path)  # the caller closes it
    except NotRegularFileError as exc:
        if exc.is_dir:
            raise ToolError(os_error_message(OSError(errno.EISDIR, "is a directory"), "read", "")) from None
        # Opening a FIFO would wait for a writer, and a device such as /dev/zero never ends.
        raise ToolError(
            f"Cannot read {path}: it is not a regular file ({exc.kind}). read reads regular files only."
        ) from None
    except OSError as exc:
        raise ToolError(os_error_message(exc, "open", absolute_path)) from exc


def _read(absolute_path: str, path: str, offset: Any, limit: Any, signal: Any) -> AgentToolResult:
    opened, info = _open(absolute_path, path)
    with opened:
        file = BoundedReader(opened, read_limit(info))
        try:
            first = file.read(_CHUNK)
            mime_type = detect_image_mime_type(first[:16])
            if mime_type is not None:
                return _image(opened, first, info, path, mime_type)
            if b"\0" in first[:_BINARY_SNIFF]:
                size = format_size(info.st_size)
                raise ToolError(
                    f"Cannot read {path}: it is a binary file ({size}), not text: it has NUL bytes. read returns "
                    f"UTF-8 text and images (jpg, png, gif, webp). Inspect it with bash instead, e.g. "
                    f"`file {path}` or `xxd {path} | head`."
                )
            start = max(0, int(offset) - 1) if offset else 0
            stop = None if limit is None else start + max(int(limit), 0)
            scan = _scan(file, first, start, stop, signal)
        except IsADirectoryError as exc:
            raise ToolError(os_error_message(exc, "read", "")) from exc
        except OSError as exc:
            raise ToolError(os_error_message(exc, "read", absolute_path)) from exc
    result = _text_result(scan, path, offset, start, stop)
    if not file.cut:
        return result
    # More than the file said it held: a /proc or /sys file (they say 0), or a file growing as it is read.
    note = (
        f"[read stopped after {format_size(read_limit(info))}: {path} said it held {format_size(info.st_size)} "
        "but has more (a /proc or /sys file, or one still being written). Use bash for the rest.]"
    )
    return replace(result, content=[TextContent(text=f"{_text_of(result)}\n\n{note}")])


def _text_of(result: AgentToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _image(file: BinaryIO, first: bytes, info: os.stat_result, path: str, mime_type: str) -> AgentToolResult:
    """An image as Pi's read returns it; one larger than any provider takes is refused without reading it."""
    too_large = info.st_size > IMAGE_LIMIT
    data = first if too_large else first + read_at_most(file, IMAGE_LIMIT - len(first), info.st_size - len(first))
    if too_large or len(data) > IMAGE_LIMIT:
        raise ToolError(
            f"Cannot read {path}: it is an image ({mime_type}) larger than {format_size(IMAGE_LIMIT)}, the most "
            "read sends (providers refuse larger ones). Make a smaller copy with bash first."
        )
    image = ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)
    return AgentToolResult(content=[TextContent(text=f"Read image file [{mime_type}]"), image])


def _text_result(scan: _Scan, path: str, offset: Any, start: int, stop: int | None) -> AgentToolResult:
    total = scan.total_lines
    if start >= total:
        raise ToolError(f"Offset {js_number(offset)} is beyond end of file ({total} lines total)")
    end = total if stop is None else min(stop, total)
    truncation = truncate_head(scan.head.decode("utf-8", "replace"))
    if truncation.truncated:
        # The head holds enough of the selection to truncate it exactly; the totals are the selection's.
        truncation = replace(truncation, total_lines=end - start, total_bytes=scan.size.size)
    first = start + 1
    details = None
    if truncation.first_line_exceeds_limit:
        size = format_size(scan.first_line.size)
        text = (
            f"[Line {first} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        return AgentToolResult(content=[TextContent(text=text)], details={"truncation": truncation.to_pi_json()})
    if truncation.truncated:
        last = first + truncation.output_lines - 1
        by_bytes = truncation.truncated_by != "lines"
        limit_note = f" ({format_size(DEFAULT_MAX_BYTES)} limit)" if by_bytes else ""
        text = (
            f"{truncation.content}\n\n[Showing lines {first}-{last} of {total}{limit_note}. "
            f"Use offset={last + 1} to continue.]"
        )
        details = {"truncation": truncation.to_pi_json()}
    elif stop is not None and end < total:
        notice = f"[{total - end} more lines in file. Use offset={end + 1} to continue.]"
        text = f"{truncation.content}\n\n{notice}"
    else:
        text = truncation.content
    if not scan.size.valid:
        text += (
            f"\n\n[{path} is not valid UTF-8: its undecodable bytes are shown as \ufffd. "
            "edit keeps them as they are but cannot match them.]"
        )
    return AgentToolResult(content=[TextContent(text=text)], details=details)


def create_read_tool(cwd: str | os.PathLike[str]) -> AgentTool:
    """The ``read`` tool, resolving paths against ``cwd``."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        path = params["path"]
        absolute_path = resolve_read_path(path, cwd)
        work = asyncio.to_thread(_read, absolute_path, path, params.get("offset"), params.get("limit"), signal)
        return await abortable(work, signal)

    return AgentTool(name="read", label="read", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
