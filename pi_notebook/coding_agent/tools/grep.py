"""The ``grep`` tool: search file contents (Pi's ``grep.ts``), with ripgrep if installed, else pure Python.

Matches come out as ``path:N: text`` and context lines as ``path-N- text``, paths relative to the searched
directory (or the file's name when a file was searched). At most ``limit`` matches (default 100), lines cut
to 500 characters, output cut at 50 KB; each limit hit adds a notice.

The fallback uses Python's ``re`` rather than Rust's regex syntax: the common syntax agrees, exotic
constructs (possessive quantifiers, ``\\p{Greek}``, look-around) differ; it searches the first 1 MB of a longer
line.

Only regular files are searched (:mod:`.files`): a FIFO, socket or device named as the path is refused in one
line (rg would wait on a FIFO, or read ``/dev/zero`` forever), and one met in a folder is skipped, as rg skips
it. The lines a result shows are read from the file again, streamed up to the last of them, never whole.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from ..truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line
from .errors import ToolError, abortable, check_aborted, is_aborted
from .files import BoundedReader, kind_of, open_regular, read_limit
from .paths import resolve_to_cwd
from .search import Glob, find_program, listing_result, special_ignore_file_above, walk

DEFAULT_LIMIT = 100

DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects "
    f".gitignore. Output is truncated to {DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB "
    f"(whichever is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
        "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
        "glob": {
            "type": "string",
            "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'",
        },
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as literal string instead of regex (default: false)",
        },
        "context": {
            "type": "number",
            "description": "Number of lines to show before and after each match (default: 0)",
        },
        "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"},
    },
    "required": ["pattern"],
}

Match = tuple[str, int]  # (absolute file path, 1-based line number)

_CHUNK = 1 << 16
_BINARY_SNIFF = 8192
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_SHOWN_LINE_BYTES = 4 * GREP_MAX_LINE_LENGTH + 8  # always more than the 500 characters a result shows of a line
_SEARCH_LINE_BYTES = 1 << 20
"""The fallback searches the first 1 MB of a line (rg searches all of it); a longer line is not held whole."""


def _lines(read: Callable[[int], bytes], keep: int, signal: Any, first: bytes = b"") -> Iterator[tuple[bytes, bool]]:
    """The lines of a file as Pi splits them (``\\r\\n``, ``\\r`` and ``\\n`` each end one; the text after the
    last break is a line too): the first ``keep`` bytes of each, and whether it had more. ``first`` is what was
    already read; ``read(n)`` reads on. Memory stays at one chunk and one kept line, however long the lines."""
    kept, longer, after_cr = bytearray(), False, False
    chunk = first or read(_CHUNK)
    while chunk:
        if after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]  # the second half of a CRLF that the last chunk ended in the middle of
        pos = 0
        for found in _LINE_BREAK.finditer(chunk):
            piece = chunk[pos : found.start()]
            room = keep - len(kept)
            kept += piece[:room]
            yield bytes(kept), longer or len(piece) > room
            kept, longer, pos = bytearray(), False, found.end()
        after_cr = chunk.endswith(b"\r")
        piece = chunk[pos:]
        room = keep - len(kept)
        kept += piece[: max(room, 0)]
        longer = longer or len(piece) > room
        check_aborted(signal)
        chunk = read(_CHUNK)
    yield bytes(kept), longer


def _open_text(path: str) -> tuple[BoundedReader, bytes] | None:
    """A regular file opened for reading, bounded (:mod:`.files`), with its first bytes; ``None`` if it is
    binary (a NUL in its first 8 KB, which rg skips too). Anything else raises ``OSError``."""
    file, info = open_regular(path)
    reader = BoundedReader(file, read_limit(info))
    try:
        head = reader.read(_BINARY_SNIFF)
    except BaseException:
        file.close()
        raise
    if b"\0" in head:
        file.close()
        return None
    return reader, head


def _shown_lines(path: str, numbers: set[int], signal: Any) -> dict[int, str] | None:
    """Lines ``numbers`` of the file (those it has), as much of each as a result shows; ``None`` if it cannot be
    read. The file is read up to the last of them only."""
    try:
        file, info = open_regular(path)
    except OSError:
        return None
    with file:
        reader = BoundedReader(file, read_limit(info))
        found: dict[int, str] = {}
        last = max(numbers)
        try:
            for number, (line, _) in enumerate(_lines(reader.read, _SHOWN_LINE_BYTES, signal), 1):
                if number in numbers:
                    found[number] = line.decode("utf-8", errors="replace")
                if number >= last:
                    break
        except OSError:
            return None
    return found


def _glob_filter(glob: str | None):
    """rg's ``--glob``: keep files matching it, or with a leading ``!`` drop those matching the rest."""
    if not glob:
        return lambda rel: True
    negated = glob.startswith("!")
    compiled = Glob.compile(glob[1:] if negated else glob)
    return lambda rel: compiled.matches(rel) != negated


def _python_matches(search_path: str, regex: re.Pattern[str], glob: str | None, limit: int, signal: Any) -> list[Match]:
    files: Iterable[tuple[str, str]]
    if os.path.isdir(search_path):
        walked = walk(search_path, should_stop=lambda: is_aborted(signal))
        files = ((path, rel) for path, rel, is_dir in walked if not is_dir)  # lazily: the limit stops the walk
        wanted = _glob_filter(glob)
    else:
        # An explicitly named file is always searched, as with rg.
        files, wanted = [(search_path, os.path.basename(search_path))], _glob_filter(None)
    matches: list[Match] = []
    for path, rel in files:
        if is_aborted(signal):
            break
        if os.path.islink(path) or not wanted(rel):
            continue  # rg does not follow symbolic links
        try:
            opened = _open_text(path)  # a FIFO, socket or device is skipped, as rg skips them
        except OSError:
            continue
        if opened is None:
            continue  # binary, which rg skips too
        reader, head = opened
        with reader.file:
            try:
                lines = _lines(reader.read, _SEARCH_LINE_BYTES, signal, head)
                for number, (line, _) in enumerate(lines, 1):
                    if regex.search(line.decode("utf-8", errors="replace")):
                        matches.append((path, number))
                        if len(matches) >= limit:
                            return matches
            except OSError:
                continue
    return matches


def _parse_rg_match(line: bytes) -> Match | None:
    """The file and line of an ``rg --json`` "match" event; ``None`` for other events."""
    if not line.startswith(b'{"type":"match"'):
        return None
    data = json.loads(line)["data"]
    path, number = data.get("path", {}).get("text"), data.get("line_number")
    # A path that is not valid UTF-8 arrives as base64 "bytes"; such files are left out.
    return (path, number) if path and isinstance(number, int) else None


async def _rg_matches(rg: str, args: list[str], limit: int) -> list[Match]:
    proc = await asyncio.create_subprocess_exec(
        rg,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr = asyncio.ensure_future(proc.stderr.read())
    matches: list[Match] = []
    pending = b""
    try:
        while len(matches) < limit and (chunk := await proc.stdout.read(65536)):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                match = _parse_rg_match(line)
                if match is not None:
                    matches.append(match)
                if len(matches) >= limit:
                    break
        stopped_early = len(matches) >= limit and proc.returncode is None
        if stopped_early:
            proc.kill()
        code = await proc.wait()
        message = (await stderr).decode("utf-8", errors="replace").strip()
    finally:
        if proc.returncode is None:
            proc.kill()  # aborted: don't leave rg running
        stderr.cancel()
    if not stopped_early and code not in (0, 1):
        raise ToolError(message or f"ripgrep exited with code {code}")
    return matches[:limit]


def _format_path(path: str, search_path: str, is_directory: bool) -> str:
    if is_directory:
        relative = os.path.relpath(path, search_path)
        if relative and not relative.startswith(".."):
            return relative.replace(os.sep, "/")
    return os.path.basename(path)


def _format(matches: list[Match], search_path: str, context: int, signal: Any) -> tuple[list[str], bool]:
    is_directory = os.path.isdir(search_path)
    wanted: dict[str, set[int]] = {}
    for path, number in matches:
        wanted.setdefault(path, set()).update(range(max(1, number - context), number + context + 1))
    shown = {path: _shown_lines(path, numbers, signal) for path, numbers in wanted.items()}
    output: list[str] = []
    any_cut = False
    for path, number in matches:
        name = _format_path(path, search_path, is_directory)
        lines = shown[path]
        if lines is None:
            output.append(f"{name}:{number}: (unable to read file)")
            continue
        first, last = max(1, number - context), number
        while last < number + context and last + 1 in lines:
            last += 1
        for current in range(first, last + 1):
            text, cut = truncate_line(lines.get(current, "").replace("\r", ""))
            any_cut = any_cut or cut
            output.append(f"{name}:{current}: {text}" if current == number else f"{name}-{current}- {text}")
    return output, any_cut


def create_grep_tool(cwd: str | os.PathLike[str]) -> AgentTool:
    """The ``grep`` tool, searching relative to ``cwd``."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        check_aborted(signal)
        pattern, glob = params["pattern"], params.get("glob")
        search_path = resolve_to_cwd(params.get("path") or ".", cwd)
        if not os.path.exists(search_path):
            raise ToolError(f"Path not found: {search_path}")
        mode = os.stat(search_path).st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            # rg and the fallback would wait on a FIFO for a writer, or read a device such as /dev/zero forever.
            raise ToolError(
                f"Cannot search {params.get('path')}: it is not a regular file or a directory ({kind_of(mode)})."
            )
        context = max(int(params.get("context") or 0), 0)
        limit = max(1, int(params["limit"] if params.get("limit") is not None else DEFAULT_LIMIT))

        rg = find_program("rg")
        # rg opens the ignore files of the folders above where it starts: a FIFO among them would make it wait for
        # a writer, so the walk here, which skips such files, searches instead (a few stat calls, not a walk).
        folder = search_path if stat.S_ISDIR(mode) else os.path.dirname(search_path)
        if rg is not None and special_ignore_file_above(folder) is None:
            args = ["--json", "--line-number", "--color=never", "--hidden"]
            if params.get("ignoreCase"):
                args.append("--ignore-case")
            if params.get("literal"):
                args.append("--fixed-strings")
            if glob:
                args += ["--glob", glob]
            args += ["--glob", "!.git"]  # unlike Pi: --hidden would search .git's contents too
            # -e keeps a pattern that starts with "-" from being read as a flag.
            matches = await abortable(_rg_matches(rg, [*args, "-e", pattern, search_path], limit), signal)
        else:
            source = re.escape(pattern) if params.get("literal") else pattern
            try:
                regex = re.compile(source, re.IGNORECASE if params.get("ignoreCase") else 0)
            except re.error as exc:
                raise ToolError(f"regex parse error: {exc}") from exc
            work = asyncio.to_thread(_python_matches, search_path, regex, glob, limit, signal)
            matches = await abortable(work, signal)
        if not matches:
            return AgentToolResult.text("No matches found")

        lines, any_cut = await abortable(asyncio.to_thread(_format, matches, search_path, context, signal), signal)
        check_aborted(signal)
        notices = []
        if len(matches) >= limit:
            notice = f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern"
            notices.append((notice, "matchLimitReached", limit))
        cut = f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        return listing_result(lines, notices, after=[(cut, "linesTruncated", True)] if any_cut else [])

    return AgentTool(name="grep", label="grep", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
