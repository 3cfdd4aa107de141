"""What a tool call would do, shown before it runs (:mod:`.approval`): the command for ``bash``, the code for
``python``, and for ``edit`` and ``write`` a unified diff against the file on disk, computed without writing.

The edit is computed by the ``edit`` tool's own matching (:func:`~.tools.edit_diff.replace_text`: exact, then
fuzzy), on the file's text with LF line breaks, as the tool sees it; a ``write`` is diffed from the file's
current text, or from ``/dev/null`` when there is none. When the call would fail (the text to replace is not in
the file, or occurs twice; the path is a folder), the preview says so in :attr:`Preview.note`. Nothing here
writes, and no file is read past :data:`READ_LIMIT`.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .tools.edit_diff import count_occurrences, normalize_to_lf, replace_text, strip_bom
from .tools.files import FileTooLargeError, NotRegularFileError, read_regular
from .tools.paths import resolve_to_cwd
from .truncate import format_size

READ_LIMIT = 16 << 20
"""The largest file diffed (16 MB); a larger one is named, and only the change asked for is shown."""
DIFF_LINES = 2000
"""The most lines of a diff shown; the rest is counted in one line."""
LINE_CHARS = 2000
"""The most characters of one line shown (a minified file's line can be megabytes)."""
MATCH_BUDGET = 4_000_000
"""Pairs of changed lines compared one by one; past it the changed middle is shown as replaced whole (a correct
diff, not a minimal one), so that rewriting a large file cannot keep the approval waiting."""

Kind = Literal["command", "code", "diff", "arguments"]
_Op = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class Preview:
    """What a call would do, as text."""

    kind: Kind
    """``command`` (bash), ``code`` (python), ``diff`` (edit, write) or ``arguments`` (any other tool: JSON)."""
    text: str
    """The command, the code, the unified diff, or the arguments."""
    path: str | None = None
    """The file an ``edit`` or ``write`` changes, as the model named it."""
    note: str = ""
    """What the text does not say: the call would fail, the file would be created, it is too large to diff."""


def preview_call(name: str, args: dict[str, Any], cwd: str | os.PathLike[str]) -> Preview:
    """What the tool ``name`` would do with ``args`` (validated) in ``cwd``; reads files, writes nothing."""
    if name == "bash" and isinstance(args.get("command"), str):
        timeout = args.get("timeout")
        return Preview("command", args["command"], note=f"timeout: {timeout} s" if timeout else "")
    if name == "python" and isinstance(args.get("code"), str):
        return Preview("code", args["code"])
    if name == "edit" and all(isinstance(args.get(k), str) for k in ("path", "oldText", "newText")):
        return _edit(args["path"], args["oldText"], args["newText"], cwd)
    if name == "write" and all(isinstance(args.get(k), str) for k in ("path", "content")):
        return _write(args["path"], args["content"], cwd)
    return Preview("arguments", json.dumps(args, indent=2, ensure_ascii=False, default=str))


def _read_text(absolute: str, path: str) -> tuple[str | None, str, bool]:
    """The file's text (BOM stripped, undecodable bytes as U+FFFD), or ``None`` with why and whether the tools
    would fail on it (a missing file, a folder) rather than only not being diffed here (too large)."""
    try:
        data = read_regular(absolute, READ_LIMIT)
    except FileNotFoundError:
        return None, f"{path} does not exist", True
    except NotRegularFileError as e:
        return None, f"{path} is {e.kind}", True
    except FileTooLargeError as e:
        return None, f"{path} holds {format_size(e.size)}, more than the {format_size(READ_LIMIT)} diffed", False
    except OSError as e:
        return None, f"{path} cannot be read ({e.strerror or e})", True
    return strip_bom(data.decode("utf-8", "replace"))[1], "", False


def _edit(path: str, old_text: str, new_text: str, cwd: str | os.PathLike[str]) -> Preview:
    old_text, new_text = normalize_to_lf(old_text), normalize_to_lf(new_text)
    # The change asked for, when it cannot be shown in the file (as whole lines: no end-of-file marks).
    old_lines, new_lines = (t if t.endswith("\n") else t + "\n" for t in (old_text, new_text))
    asked = unified_diff(old_lines, new_lines, f"{path} (the text to replace)", f"{path} (its replacement)")
    content, problem, fails = _read_text(resolve_to_cwd(path, cwd), path)
    if content is None:
        outcome = "the edit would fail" if fails else "shown: the text to replace and its replacement"
        return Preview("diff", asked, path, f"{problem}: {outcome}")
    content = normalize_to_lf(content)
    match = replace_text(content, old_text, new_text)
    if match is None:
        return Preview("diff", asked, path, f"the text to replace is not in {path}: the edit would fail")
    count = count_occurrences(content, old_text)
    if count > 1:
        return Preview("diff", asked, path, f"the text to replace occurs {count} times in {path}: the edit would fail")
    diff = unified_diff(content, match.apply(content), f"a/{path}", f"b/{path}")
    if not diff:
        return Preview("diff", "", path, "the replacement changes nothing: the edit would fail")
    fuzzy = "matched ignoring differences of trailing spaces, quotes or dashes" if match.used_fuzzy_match else ""
    return Preview("diff", diff, path, fuzzy)


def _write(path: str, content: str, cwd: str | os.PathLike[str]) -> Preview:
    absolute = resolve_to_cwd(path, cwd)
    if not os.path.lexists(absolute):
        return Preview("diff", unified_diff("", content, "/dev/null", f"b/{path}"), path, f"{path} would be created")
    old, problem, fails = _read_text(absolute, path)
    if old is None:
        outcome = "the write would fail" if fails else "it would be replaced by this"
        return Preview("diff", unified_diff("", content, "/dev/null", f"b/{path}"), path, f"{problem}: {outcome}")
    diff = unified_diff(old, content, f"a/{path}", f"b/{path}")
    return Preview("diff", diff, path, "" if diff else f"{path} already holds exactly this text")


class _Ops(difflib.SequenceMatcher):
    """The standard library's hunk grouping over opcodes computed here."""

    def __init__(self, ops: list[_Op]):
        super().__init__(None, [], [])
        self._ops = ops

    def get_opcodes(self) -> list[_Op]:  # type: ignore[override]
        return self._ops


def unified_diff(old: str, new: str, old_label: str, new_label: str, context: int = 3) -> str:
    """The unified diff (``git diff`` style, ``\\ No newline at end of file`` included) of two texts; ``""`` if
    they are equal. At most :data:`DIFF_LINES` lines, the rest counted."""
    a, b = _lines(old), _lines(new)
    if a == b:
        return ""
    lines = [f"--- {old_label}\n", f"+++ {new_label}\n"]
    for group in _Ops(_opcodes(a, b)).get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        lines.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += _marked(" ", a[i1:i2])
                continue
            lines += _marked("-", a[i1:i2])
            lines += _marked("+", b[j1:j2])
        if len(lines) > DIFF_LINES:
            break
    if len(lines) > DIFF_LINES:
        rest = len(lines) - DIFF_LINES
        lines = [*lines[:DIFF_LINES], f"... the diff goes on ({rest}+ more lines not shown)\n"]
    return "".join(lines)


def _opcodes(a: Sequence[str], b: Sequence[str]) -> list[_Op]:
    """The edit from ``a`` to ``b``: the common head and tail cut first, the middle matched line by line unless it
    is too large (:data:`MATCH_BUDGET`)."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    end_a, end_b = len(a) - tail, len(b) - tail
    if (end_a - head) * (end_b - head) <= MATCH_BUDGET:
        matcher = difflib.SequenceMatcher(None, a[head:end_a], b[head:end_b], autojunk=False)
        middle = [(t, i1 + head, i2 + head, j1 + head, j2 + head) for t, i1, i2, j1, j2 in matcher.get_opcodes()]
    else:
        middle = [("replace", head, end_a, head, end_b)]
    ops = [("equal", 0, head, 0, head), *middle, ("equal", end_a, len(a), end_b, len(b))]
    return [op for op in ops if op[2] > op[1] or op[4] > op[3]]


def _range(start: int, stop: int) -> str:
    """A hunk header's ``start,length`` (1-based; an empty side names the line before it)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _lines(text: str) -> list[str]:
    """The lines of ``text``, each with its ``\\n`` (only LF breaks a line, as in ``diff``)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _marked(mark: str, lines: Sequence[str]) -> Iterator[str]:
    for line in lines:
        body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        if len(body) > LINE_CHARS:
            body = f"{body[:LINE_CHARS]} ... ({len(body) - LINE_CHARS:,} more characters)"
        yield mark + body + "\n" + ("" if end else "\\ No newline at end of file\n")
