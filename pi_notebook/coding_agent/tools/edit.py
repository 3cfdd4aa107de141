"""The ``edit`` tool: replace one unique occurrence of a text in a file (Pi's ``edit.ts``).

Matching is exact, then fuzzy (see :mod:`.edit_diff`); the text must occur once. Line endings are matched
as LF, and a UTF-8 BOM is never part of the text. ``details`` holds Pi's line-numbered diff and the first
changed line.

Unlike Pi, which rewrites the whole file from its decoded text, only the bytes of the matched span are
replaced; every other byte of the file stays as it was. So a file that is not UTF-8 (Latin-1, a binary) is
never rewritten lossily: its undecodable bytes are kept as they are (they cannot be matched), and a file
with mixed line endings keeps them. Line breaks inside the new text take the file's style (its first line
break: CRLF stays CRLF), as in Pi. Nothing is written unless the edit succeeds.

Only a regular file of at most 128 MB (:data:`EDIT_LIMIT`) is edited; a FIFO, a socket or a device is refused
before it is opened (see :mod:`.files`), and a larger file is refused before it is read.
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
from typing import Any, BinaryIO

from ...agent_core import AgentTool, AgentToolResult
from ..truncate import format_size
from .edit_diff import (
    count_occurrences,
    detect_line_ending,
    generate_edit_diff,
    normalize_for_fuzzy_match,
    normalize_to_lf,
    replace_text,
    restore_line_endings,
    strip_bom,
)
from .errors import ToolError, abortable, check_aborted, os_error_message
from .files import NotRegularFileError, open_regular, read_at_most
from .paths import resolve_to_cwd

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

# Bytes that are not UTF-8 decode to lone surrogates U+DC80..U+DCFF ("surrogateescape") and encode back to
# the same bytes. Lone surrogates sent by the model become U+FFFD first, as Node writes them, so they can
# neither match nor write such bytes.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_CHUNK = 1 << 16
EDIT_LIMIT = 128 << 20
"""The largest file edit takes (128 MB): it holds about two copies of the file in memory, as Pi holds it whole."""


def _open(absolute_path: str, path: str) -> tuple[BinaryIO, bytes]:
    """The file opened for reading and writing in place, and its bytes: a regular file of at most
    :data:`EDIT_LIMIT` bytes (a FIFO would block, a device never end; a larger file is not loaded)."""
    try:
        file, info = open_regular(absolute_path, write=True)
    except NotRegularFileError as exc:
        if exc.is_dir:
            raise ToolError(os_error_message(OSError(errno.EISDIR, "is a directory"), "read", "")) from None
        raise ToolError(f"Cannot edit {path}: it is not a regular file ({exc.kind}).") from None
    except OSError as exc:
        raise ToolError(os_error_message(exc, "open", absolute_path)) from exc
    try:
        data = read_at_most(file, EDIT_LIMIT, info.st_size) if info.st_size <= EDIT_LIMIT else b""
        if info.st_size > EDIT_LIMIT or len(data) > EDIT_LIMIT:
            raise ToolError(
                f"Cannot edit {path}: it holds {format_size(max(info.st_size, len(data)))}, more than the "
                f"{format_size(EDIT_LIMIT)} edit loads. Use bash (e.g. sed -i) for a file this large."
            )
    except OSError as exc:
        file.close()
        raise ToolError(os_error_message(exc, "read", absolute_path)) from exc
    except BaseException:
        file.close()
        raise
    return file, data


def _decode(data: bytes) -> tuple[str, bool]:
    """The file's text, losslessly, and whether it is valid UTF-8."""
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape"), False


def _not_utf8_note(path: str) -> str:
    return (
        f" {path} is not valid UTF-8: its undecodable bytes (shown as \ufffd by read) cannot be matched and are "
        "kept as they are. Choose oldText without them, or convert the file to UTF-8 first (e.g. iconv)."
    )


def _file_offset(body: str, index: int) -> int:
    """The position in ``body`` of position ``index`` of ``normalize_to_lf(body)``.

    Only CRLF changes length when normalised (to one LF), so walk the text a chunk at a time, subtracting the
    CRLFs of each chunk, and then step over the CRLFs of the chunk that holds ``index``.
    """
    if "\r" not in body:
        return index
    pos = normalised = 0
    while True:
        stop = min(pos + _CHUNK, len(body))
        if stop < len(body) and body[stop - 1] == "\r" and body[stop] == "\n":
            stop += 1  # never split a CRLF
        size = stop - pos - body.count("\r\n", pos, stop)
        if normalised + size >= index or stop == len(body):
            break
        pos, normalised = stop, normalised + size
    while True:
        crlf = body.find("\r\n", pos, stop)
        if crlf == -1 or index <= normalised + crlf - pos:
            return pos + index - normalised
        normalised += crlf - pos + 1
        pos = crlf + 2


def _utf8_length(text: str, end: int) -> int:
    """The number of bytes ``text[:end]`` came from (``text`` decoded with surrogateescape)."""
    if text.isascii():
        return end
    return sum(
        len(text[pos : min(pos + _CHUNK, end)].encode("utf-8", "surrogateescape")) for pos in range(0, end, _CHUNK)
    )


def _splice(file: BinaryIO, data: bytes, start: int, end: int, replacement: bytes) -> None:
    """Replace ``data[start:end]`` with ``replacement`` in the file: write from ``start`` on, keep the rest."""
    with memoryview(data) as view:
        try:
            file.seek(start)
            file.write(replacement)
            if len(replacement) != end - start:
                file.write(view[end:])
                file.truncate()
            file.flush()
        except OSError as exc:
            raise ToolError(os_error_message(exc, "write")) from exc


def _edit(absolute_path: str, path: str, old_text: str, new_text: str, signal: Any) -> dict[str, Any]:
    if not os.access(absolute_path, os.R_OK | os.W_OK):
        raise ToolError(f"File not found: {path}")
    file, data = _open(absolute_path, path)
    with file:
        return _edit_open(file, data, path, old_text, new_text, signal)


def _edit_open(file: BinaryIO, data: bytes, path: str, old_text: str, new_text: str, signal: Any) -> dict[str, Any]:
    check_aborted(signal)
    raw, is_utf8 = _decode(data)

    bom, body = strip_bom(raw)
    ending = detect_line_ending(body)
    content = normalize_to_lf(body)
    old_text = normalize_to_lf(_LONE_SURROGATE.sub("\ufffd", old_text))
    new_text = normalize_to_lf(_LONE_SURROGATE.sub("\ufffd", new_text))
    fuzzy_content = normalize_for_fuzzy_match(content)
    match = replace_text(content, old_text, new_text, fuzzy_content)
    if match is None:
        raise ToolError(
            f"Could not find the exact text in {path}. "
            "The old text must match exactly including all whitespace and newlines."
            + ("" if is_utf8 else _not_utf8_note(path))
        )
    occurrences = count_occurrences(content, old_text, fuzzy_content)
    del fuzzy_content
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
    span_start, span_end = (_file_offset(body, i) for i in (match.start, match.end))
    replacement = restore_line_endings(match.replacement, ending)
    if (replacement or body[span_end : span_end + 1])[:1] == "\n":
        # A lone CR just before would join that LF into one CRLF line break: write it, and any lone CRs
        # before it that the same would happen to, as Pi writes every line break (in the file's style).
        crs = 0
        while crs < span_start and body[span_start - crs - 1] == "\r" and (crs == 0 or ending == "\n"):
            crs += 1
        span_start, replacement = span_start - crs, ending * crs + replacement
    span_start, span_end = span_start + len(bom), span_end + len(bom)
    start = _utf8_length(raw, span_start)
    end = start + _utf8_length(raw[span_start:span_end], span_end - span_start)
    _splice(file, data, start, end, replacement.encode("utf-8", "surrogateescape"))

    diff, first_changed_line = generate_edit_diff(content, match.start, match.end, match.replacement)
    details: dict[str, Any] = {"diff": diff if is_utf8 else _ESCAPED_BYTE.sub("\ufffd", diff)}
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
