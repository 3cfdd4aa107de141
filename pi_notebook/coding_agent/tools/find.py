"""The ``find`` tool: files whose name (or relative path) matches a glob (Pi's ``find.ts``), via fd or Python.

Results are paths relative to the searched directory, one per line, directories with a trailing ``/``; at
most ``limit`` of them (default 1000) and 50 KB, with a notice when a limit is hit. As with fd, a pattern
without ``/`` matches the name at any depth and is case-insensitive unless it has an uppercase letter.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from ...agent_core import AgentTool, AgentToolResult
from ..truncate import DEFAULT_MAX_BYTES
from .errors import ToolError, abortable, check_aborted, is_aborted
from .paths import resolve_to_cwd
from .search import (
    IGNORE_FILES,
    Glob,
    find_program,
    listing_result,
    special_ignore_file,
    special_ignore_file_above,
    walk,
)

DEFAULT_LIMIT = 1000

DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
        },
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"},
    },
    "required": ["pattern"],
}

_GLOB_SPECIAL = re.compile(r"([\\*?\[\]{}])")


def _python_find(search_path: str, pattern: str, limit: int, signal: Any) -> list[str]:
    glob = Glob.compile(pattern, ignore_case=not any(c.isupper() for c in pattern))
    results: list[str] = []
    for _, rel, is_dir in walk(search_path, should_stop=lambda: is_aborted(signal)):
        if glob.matches(rel):
            results.append(rel + "/" if is_dir else rel)
            if len(results) >= limit:
                break
    return results


def _gitignore_files(search_path: str) -> list[str] | None:
    """Every ``.gitignore`` under ``search_path``, to give fd; ``None`` if fd must not run there: an ignore file
    it would read is not a regular file (a FIFO would make it wait for a writer)."""
    found = []
    if special_ignore_file_above(search_path):
        return None
    for directory, subdirs, files in os.walk(search_path):
        subdirs[:] = sorted(d for d in subdirs if d not in (".git", "node_modules"))
        if any(name in files for name in IGNORE_FILES) and special_ignore_file(directory):
            return None
        if ".gitignore" in files:
            found.append(os.path.join(directory, ".gitignore"))
    return found


async def _fd_find(fd: str, search_path: str, pattern: str, limit: int, gitignores: list[str]) -> list[str]:
    # Unlike Pi, leave out .git (fd 8 lists its contents with --hidden), as the Python walk does.
    args = ["--glob", "--color=never", "--hidden", "--exclude", ".git", "--max-results", str(limit)]
    # Pi passes every .gitignore explicitly, so they apply outside a git repository too.
    for gitignore in gitignores:
        args += ["--ignore-file", gitignore]
    if "/" in pattern.rstrip("/"):
        # fd matches a glob against the name only; a pattern with a path needs the full path, anchored here.
        args.append("--full-path")
        pattern = _GLOB_SPECIAL.sub(r"\\\1", search_path.rstrip("/")) + "/" + pattern.lstrip("/")
    proc = await asyncio.create_subprocess_exec(
        fd,
        *args,
        "--",
        pattern,
        search_path,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()  # aborted: don't leave fd running
    output = stdout.decode("utf-8", errors="replace").strip()
    if proc.returncode != 0 and not output:
        message = stderr.decode("utf-8", errors="replace").strip()
        raise ToolError(message or f"fd exited with code {proc.returncode}")
    results = []
    for raw in output.split("\n"):
        line = raw.rstrip("\r").strip()
        if not line:
            continue
        trailing_slash = line.endswith(("/", "\\"))
        if line.startswith(search_path.rstrip("/") + "/"):
            relative = line[len(search_path.rstrip("/")) + 1 :]
        else:
            relative = os.path.relpath(line, search_path)
        results.append(relative + "/" if trailing_slash and not relative.endswith("/") else relative)
    return results


def create_find_tool(cwd: str | os.PathLike[str]) -> AgentTool:
    """The ``find`` tool, searching relative to ``cwd``."""

    async def execute(tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None):
        check_aborted(signal)
        pattern = params["pattern"]
        search_path = resolve_to_cwd(params.get("path") or ".", cwd)
        limit = int(params["limit"]) if params.get("limit") is not None else DEFAULT_LIMIT
        if not os.path.exists(search_path):
            raise ToolError(f"Path not found: {search_path}")
        if not os.path.isdir(search_path):
            raise ToolError(f"Not a directory: {search_path}")

        fd = find_program("fd", "fdfind")
        gitignores = None if fd is None else await abortable(asyncio.to_thread(_gitignore_files, search_path), signal)
        if fd is not None and gitignores is not None:
            results = await abortable(_fd_find(fd, search_path, pattern, limit, gitignores), signal)
        else:  # no fd, or an ignore file fd would wait on (the walk here skips it)
            results = await abortable(asyncio.to_thread(_python_find, search_path, pattern, limit, signal), signal)
        if not results:
            return AgentToolResult.text("No files found matching pattern")

        notices = []
        if len(results) >= limit:
            notice = f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"
            notices.append((notice, "resultLimitReached", limit))
        return listing_result(results, notices)

    return AgentTool(name="find", label="find", description=DESCRIPTION, parameters=PARAMETERS, execute=execute)
