"""File walking for ``grep`` and ``find`` when ripgrep / fd are not installed.

Pi shells out to ``rg`` and ``fd``. Where they are on PATH the tools do too; otherwise they fall back to
this pure-Python walk, which follows the same conventions closely enough for the model: hidden files are
included, ``.git`` is skipped, ``.gitignore`` files (the root's and nested ones) are honoured with the
common rules (``#`` comments, ``!`` negation, trailing ``/`` for directories, anchoring by ``/``, ``*``,
``?``, ``**``, ``[...]``; the first 1 MB of each), and symbolic links are not followed. Globs also accept
``{a,b}`` alternatives.

Also here: :func:`listing_result`, the byte-limited result with limit notices that find, grep and ls share.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...agent_core import AgentToolResult
from ..truncate import DEFAULT_MAX_BYTES, format_size, truncate_head
from .files import open_regular, read_at_most

GITIGNORE_LIMIT = 1 << 20
"""The most read of one ``.gitignore`` (1 MB, some 50,000 rules); the rest of a larger one is not applied."""


IGNORE_FILES = (".gitignore", ".ignore", ".rgignore", ".fdignore")
"""The ignore files rg and fd read in each folder they walk (and in the folders above where they start)."""


def special_ignore_file(directory: str, names: Sequence[str] = IGNORE_FILES) -> str | None:
    """An ignore file in ``directory`` that is not a regular file (a FIFO, or a link to ``/dev/zero``), if any:
    rg and fd open every ignore file they meet, and would wait on a FIFO for a writer."""
    for name in names:
        try:
            mode = os.stat(os.path.join(directory, name)).st_mode
        except OSError:
            continue  # missing, or a dangling link, which rg and fd skip
        if not stat.S_ISREG(mode):
            return os.path.join(directory, name)
    return None


def special_ignore_file_above(path: str) -> str | None:
    """:func:`special_ignore_file` of ``path`` (a folder) and each folder above it, ``.git/info/exclude``
    included: rg and fd read those before they walk. A few ``stat`` calls, not a walk of the tree."""
    folder = os.path.abspath(path)
    while True:
        found = special_ignore_file(folder) or special_ignore_file(os.path.join(folder, ".git", "info"), ["exclude"])
        parent = os.path.dirname(folder)
        if found or parent == folder:
            return found
        folder = parent


def find_program(*names: str) -> str | None:
    """The path of the first of ``names`` found on PATH (``fd`` is ``fdfind`` on Debian)."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def glob_to_regex(pattern: str) -> str:
    """Translate a gitignore-style glob to a regex over ``/``-separated paths (without anchors)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (close := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : close]
            negated = body[:1] in ("!", "^")
            body = body[1:] if negated else body
            out.append(("[^" if negated else "[") + body.replace("\\", "\\\\") + "]")
            i = close + 1
        elif pattern[i] == "{" and (close := pattern.find("}", i)) != -1:
            options = pattern[i + 1 : close].split(",")
            out.append("(?:" + "|".join(glob_to_regex(option) for option in options) + ")")
            i = close + 1
        elif pattern[i] == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Glob:
    """A glob as rg / fd / gitignore apply it: without a ``/`` it matches the name at any depth,
    with one it matches the path relative to the search (or ``.gitignore``) directory."""

    regex: re.Pattern[str]
    anchored: bool

    @classmethod
    def compile(cls, pattern: str, *, ignore_case: bool = False) -> Glob:
        """Compile ``pattern``; a leading ``/`` only anchors it."""
        anchored = "/" in pattern.rstrip("/")
        body = pattern.strip("/") if anchored else pattern.rstrip("/")
        return cls(re.compile(glob_to_regex(body), re.IGNORECASE if ignore_case else 0), anchored)

    def matches(self, rel_path: str) -> bool:
        """Whether the ``/``-separated relative path matches."""
        target = rel_path if self.anchored else rel_path.rpartition("/")[2]
        return self.regex.fullmatch(target) is not None


@dataclass(frozen=True)
class _IgnoreRule:
    glob: Glob
    negate: bool
    dir_only: bool


def parse_gitignore(text: str) -> list[_IgnoreRule]:
    """The rules of a ``.gitignore`` file, in order (a later match overrides an earlier one)."""
    rules = []
    for raw in text.splitlines():
        line = raw if raw.endswith("\\ ") else raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if line:
            rules.append(_IgnoreRule(Glob.compile(line), negate, dir_only))
    return rules


def _ignored(rule_sets: list[tuple[str, list[_IgnoreRule]]], rel_path: str, is_dir: bool) -> bool:
    ignored = False
    for base, rules in rule_sets:
        sub_path = rel_path[len(base) :]
        for rule in rules:
            if (is_dir or not rule.dir_only) and rule.glob.matches(sub_path):
                ignored = not rule.negate
    return ignored


def walk(root: str, *, should_stop: Callable[[], bool] | None = None) -> Iterator[tuple[str, str, bool]]:
    """Yield ``(absolute_path, relative_path, is_dir)`` under ``root``, depth first in name order.

    Skips ``.git`` and whatever the ``.gitignore`` files say; does not descend into symlinked directories.
    Unreadable directories are skipped (as rg and fd do, with a warning they print to stderr).
    """
    yield from _walk(root, "", [], should_stop)


def _read_gitignore(path: str) -> list[_IgnoreRule]:
    if not os.path.isfile(path):
        return []
    try:
        file, info = open_regular(path)  # a FIFO put there since the look cannot block the walk
        with file:
            text = read_at_most(file, GITIGNORE_LIMIT, info.st_size)[:GITIGNORE_LIMIT].decode("utf-8", "replace")
    except OSError:
        return []  # an unreadable .gitignore ignores nothing, as in git
    return parse_gitignore(text)


def _walk(
    root: str,
    rel_dir: str,
    rule_sets: list[tuple[str, list[_IgnoreRule]]],
    should_stop: Callable[[], bool] | None,
) -> Iterator[tuple[str, str, bool]]:
    directory = os.path.join(root, rel_dir) if rel_dir else root
    rules = _read_gitignore(os.path.join(directory, ".gitignore"))
    if rules:
        rule_sets = [*rule_sets, (rel_dir, rules)]
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if should_stop is not None and should_stop():
            return
        if entry.name == ".git":
            continue
        rel_path = rel_dir + entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if _ignored(rule_sets, rel_path, is_dir):
            continue
        yield entry.path, rel_path, is_dir
        if is_dir:
            yield from _walk(root, rel_path + "/", rule_sets, should_stop)


def listing_result(
    lines: list[str], notices: list[tuple[str, str, Any]], after: Sequence[tuple[str, str, Any]] = ()
) -> AgentToolResult:
    """The result of find / grep / ls: the lines cut at Pi's byte limit, then the notices in ``[... . ...]``.

    ``notices`` are ``(text, details key, details value)`` for each limit that was hit; the byte limit's notice
    and ``details["truncation"]`` are added here when the text had to be cut, followed by ``after``.
    """
    truncation = truncate_head("\n".join(lines), max_lines=sys.maxsize)
    if truncation.truncated:
        notices = [*notices, (f"{format_size(DEFAULT_MAX_BYTES)} limit reached", "truncation", truncation.to_pi_json())]
    notices = [*notices, *after]
    texts = [text for text, _, _ in notices]
    text = truncation.content + (f"\n\n[{'. '.join(texts)}]" if texts else "")
    return AgentToolResult.text(text, details={key: value for _, key, value in notices} or None)
