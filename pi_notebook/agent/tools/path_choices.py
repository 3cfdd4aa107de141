"""Tools for small models: the ``path`` argument limited to what exists under the working directory.

A 135M model invents paths (``/Users/me/Desktop/test-1.txt``, ``demonstration.txt``, a URL). Given the real
entries as a JSON-Schema ``enum``, a grammar-constrained provider (the ``local`` one) can only pick one of
them, and the schema check refuses anything else. Larger models keep Pi's free-form schema.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from pathlib import Path

from ..tool import AgentTool

SKIP_DIRS = {"node_modules", "__pycache__", ".git", ".venv", "venv", ".pi_sessions", ".ipynb_checkpoints"}
MAX_ENTRIES = 200
# Which entries each tool's path may name.
_KINDS = {"ls": "dirs", "read": "files", "find": "dirs", "grep": "any", "edit": "files"}


def list_entries(cwd: str | os.PathLike[str], depth: int = 2, limit: int = MAX_ENTRIES) -> tuple[list[str], list[str]]:
    """(folders, files) under ``cwd`` up to ``depth`` levels, relative, ``/``-separated, hidden ones skipped."""
    root = Path(cwd)
    dirs: list[str] = ["."]
    files: list[str] = []
    frontier = [root]
    for _ in range(depth):
        following = []
        for folder in frontier:
            try:
                children = sorted(folder.iterdir(), key=lambda p: p.name)
            except OSError:
                continue
            for child in children:
                if child.name.startswith(".") or child.name in SKIP_DIRS:
                    continue
                rel = child.relative_to(root).as_posix()
                if child.is_dir():
                    dirs.append(rel)
                    following.append(child)
                elif child.is_file():
                    files.append(rel)
                if len(dirs) + len(files) >= limit:
                    return dirs, files
        frontier = following
    return dirs, files


def with_path_choices(tool: AgentTool, cwd: str | os.PathLike[str]) -> AgentTool:
    """A copy of ``tool`` whose ``path`` parameter must name an existing entry (tools without a path, or
    whose path may be new, like ``write``, are returned as they are)."""
    kind = _KINDS.get(tool.name)
    props = (tool.parameters or {}).get("properties") or {}
    if kind is None or "path" not in props:
        return tool
    dirs, files = list_entries(cwd)
    choices = {"dirs": dirs, "files": files, "any": dirs + files}[kind]
    if not choices:
        return tool
    parameters = copy.deepcopy(tool.parameters)
    parameters["properties"]["path"]["enum"] = choices
    return dataclasses.replace(tool, parameters=parameters)
