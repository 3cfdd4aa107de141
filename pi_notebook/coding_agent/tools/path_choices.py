"""Tools for small models: the ``path`` argument limited to what exists under the working directory.

A 135M model invents paths (``/Users/me/Desktop/test-1.txt``, ``demonstration.txt``, a URL). Given the real
entries as a JSON-Schema ``enum``, a grammar-constrained provider (the ``local`` one) can only pick one of
them, and the schema check refuses anything else. Larger models keep Pi's free-form schema.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
from pathlib import Path

from ...agent_core import AgentTool

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


def mentioned_entries(text: str, cwd: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """(folders, files) that ``text`` names and that exist under ``cwd``, at any depth (``src/app/config.yaml``)."""
    root = Path(cwd).resolve()
    dirs: list[str] = []
    files: list[str] = []
    for word in dict.fromkeys(re.findall(r"[\w.-]+(?:/[\w.-]+)+/?|[\w-]+\.[\w]+", text or "")):
        candidate = (root / word.strip("/.") if word.endswith(".") else root / word.rstrip("/")).resolve()
        if root not in candidate.parents or any(part.startswith(".") for part in candidate.relative_to(root).parts):
            continue  # outside the working directory, or hidden
        rel = candidate.relative_to(root).as_posix()
        if candidate.is_dir():
            dirs.append(rel)
        elif candidate.is_file():
            files.append(rel)
    return dirs, files


def with_path_choices(tool: AgentTool, cwd: str | os.PathLike[str], prompt: str = "") -> AgentTool:
    """A copy of ``tool`` whose ``path`` parameter must name an existing entry: those near ``cwd`` (two levels)
    and any deeper one the ``prompt`` names. Tools without a path, or whose path may be new (``write``), are
    returned as they are."""
    kind = _KINDS.get(tool.name)
    props = (tool.parameters or {}).get("properties") or {}
    if kind is None or "path" not in props:
        return tool
    dirs, files = list_entries(cwd)
    named_dirs, named_files = mentioned_entries(prompt, cwd)
    dirs += [d for d in named_dirs if d not in dirs]
    files += [f for f in named_files if f not in files]
    choices = {"dirs": dirs, "files": files, "any": dirs + files}[kind]
    if not choices:
        return tool
    parameters = copy.deepcopy(tool.parameters)
    parameters["properties"]["path"]["enum"] = choices
    return dataclasses.replace(tool, parameters=parameters)
