"""Text matching and diffs for the ``edit`` tool (Pi's ``edit-diff.ts``).

The model's ``oldText`` often differs from the file in ways it cannot see: trailing spaces, a curly quote
where it typed a straight one, an en dash, a no-break space, a compatibility character. So matching is
exact first, then *fuzzy*: both sides normalised with :func:`normalize_for_fuzzy_match`.

Pi then rewrites the whole file in its normalised form. Here only the lines the match touches are taken
from the normalised text; every other line keeps its exact bytes (trailing spaces, smart quotes and all).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass

from ...ai.jstext import JS_WHITESPACE  # JS trimEnd() whitespace, not str.isspace()

_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")


def detect_line_ending(content: str) -> str:
    """``"\\r\\n"`` if the first line break is CRLF, else ``"\\n"``."""
    lf = content.find("\n")
    return "\r\n" if lf > 0 and content[lf - 1] == "\r" else "\n"


def normalize_to_lf(text: str) -> str:
    """Turn CRLF and lone CR line breaks into LF (``text`` itself if it has no CR)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    """Turn LF line breaks back into ``ending``."""
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def strip_bom(content: str) -> tuple[str, str]:
    """Split a leading UTF-8 BOM off ``content``: ``(bom, text)``. The model never types the BOM."""
    return ("\ufeff", content[1:]) if content.startswith("\ufeff") else ("", content)


_LINE_END_SPACE = tuple(JS_WHITESPACE.replace("\n", ""))
_ASCII_LINE_END_SPACE = tuple(c for c in _LINE_END_SPACE if c.isascii())
_CHUNK = 1 << 16
MAX_DIFF_LINE = 10_000
"""Longer lines are cut in the diff (Pi shows them whole; a minified or binary file can have a 1 GB line)."""


def normalize_for_fuzzy_match(text: str) -> str:
    """NFKC, strip trailing whitespace per line, smart quotes / dashes / special spaces to ASCII.

    Line ``i`` of the result is the normalised line ``i`` of ``text``. Pi normalises line by line; doing the
    whole text at once gives the same result (NFKC never joins characters across a ``\\n``) without a list
    of all the lines, and returns ``text`` itself when nothing changes, so a large file is not copied.
    """
    text = _strip_line_ends(unicodedata.normalize("NFKC", text))
    if text.isascii():
        return text
    return _SPACES.sub(" ", _DASHES.sub("-", _DOUBLE_QUOTES.sub('"', _SINGLE_QUOTES.sub("'", text))))


def _strip_line_ends(text: str) -> str:
    """``text`` with the trailing JavaScript whitespace of each line removed (``trimEnd()`` per line)."""
    spaces = _ASCII_LINE_END_SPACE if text.isascii() else _LINE_END_SPACE
    if not text.endswith(spaces) and not any(space in text and space + "\n" in text for space in spaces):
        return text  # the common case, found by a few fast searches (most spaces are not in the text at all)
    pieces, pos = [], 0
    while pos < len(text):
        # A chunk ends before a line break; the next chunk starts with it (its first line is "").
        stop = text.find("\n", pos + _CHUNK)
        stop = len(text) if stop == -1 else stop
        pieces.append("\n".join(line.rstrip(JS_WHITESPACE) for line in text[pos:stop].split("\n")))
        pos = stop
    return "".join(pieces)


@dataclass(frozen=True)
class TextMatch:
    """Where ``old_text`` was found, and the edit that replacing it with ``new_text`` makes.

    The edit is a span of the content and its replacement, not the new content, so that a large file is
    not copied: the new content is ``content[:start] + replacement + content[end:]`` (see :meth:`apply`).
    """

    used_fuzzy_match: bool
    """Only the normalised texts matched."""
    matched_text: str
    """The text that was matched, in the space it was matched in (original or normalised)."""
    start: int
    """Where the replaced span of the content starts."""
    end: int
    """Where the replaced span of the content ends (exclusive)."""
    replacement: str
    """What replaces ``content[start:end]``."""

    def apply(self, content: str) -> str:
        """The content with the match replaced."""
        return content[: self.start] + self.replacement + content[self.end :]


def fuzzy_find_text(content: str, old_text: str, fuzzy_content: str | None = None) -> tuple[int, str, bool] | None:
    """Find ``old_text`` in ``content``: exactly, else fuzzily. Return ``(index, space, fuzzy)`` or ``None``.

    ``space`` is the text the index refers to: ``content`` itself, or its normalised form (pass it as
    ``fuzzy_content`` if already computed).
    """
    index = content.find(old_text)
    if index != -1:
        return index, content, False
    if fuzzy_content is None:
        fuzzy_content = normalize_for_fuzzy_match(content)
    index = fuzzy_content.find(normalize_for_fuzzy_match(old_text))
    return (index, fuzzy_content, True) if index != -1 else None


def count_occurrences(content: str, old_text: str, fuzzy_content: str | None = None) -> int:
    """Non-overlapping occurrences of ``old_text`` in ``content``, both normalised (Pi's uniqueness rule)."""
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    if fuzzy_content is None:
        fuzzy_content = normalize_for_fuzzy_match(content)
    if not fuzzy_old:
        # JS "abc".split("") has one part per character, so Pi counts length - 1.
        return max(len(fuzzy_content) - 1, 0)
    return fuzzy_content.count(fuzzy_old)


def replace_text(content: str, old_text: str, new_text: str, fuzzy_content: str | None = None) -> TextMatch | None:
    """Replace the first match of ``old_text`` (exact, else fuzzy) with ``new_text``; ``None`` if not found.

    All texts use LF line breaks. A fuzzy match replaces the lines it touches with their normalised form
    (with the replacement applied); all other lines are kept exactly.
    """
    found = fuzzy_find_text(content, old_text, fuzzy_content)
    if found is None:
        return None
    index, space, fuzzy = found
    length = len(normalize_for_fuzzy_match(old_text)) if fuzzy else len(old_text)
    matched = space[index : index + length]
    if not fuzzy:
        return TextMatch(False, matched, index, index + length, new_text)

    end = index + length
    region_start = space.rfind("\n", 0, index) + 1
    first_line = space.count("\n", 0, region_start)
    # The region ends where the match ends if that is a line start, else at the end of the match's last line.
    ends_at_line_start = end > region_start and space[end - 1] == "\n"
    if ends_at_line_start:
        region_end = end
    else:
        newline = space.find("\n", end)
        region_end = len(space) if newline == -1 else newline
    last_line = space.count("\n", 0, region_end)
    # Line i of the normalised text is line i of the content: find the same lines there.
    original_start = line_start(content, first_line)
    original_end = line_start(content, last_line - first_line, original_start)
    if not ends_at_line_start:
        newline = content.find("\n", original_end)
        original_end = len(content) if newline == -1 else newline
    region = space[region_start:index] + new_text + space[end:region_end]
    return TextMatch(True, matched, original_start, original_end, region)


def line_start(text: str, lines: int, pos: int = 0) -> int:
    """Where the line ``lines`` line breaks after position ``pos`` starts (``pos`` is a line start).

    Counts line breaks a chunk at a time, so a line far into a large text costs no Python loop per line.
    """
    while lines:
        stop = min(pos + _CHUNK, len(text))
        in_chunk = text.count("\n", pos, stop)
        if in_chunk < lines and stop < len(text):
            lines, pos = lines - in_chunk, stop
            continue
        for _ in range(lines):
            pos = text.index("\n", pos) + 1
        break
    return pos


def generate_diff_string(old_content: str, new_content: str, context_lines: int = 4) -> tuple[str, int | None]:
    """Pi's line-numbered diff of two LF texts, and the first changed line number in the new text.

    Lines read ``+<n> text`` (added, new numbering), ``-<n> text`` (removed, old numbering) and
    `` <n> text`` (context); at most ``context_lines`` of context around each change, `` ... `` for gaps.
    Only the span between the texts' common start and common end is diffed line by line.
    """
    start = _common_prefix(old_content, new_content)
    limit = min(len(old_content), len(new_content)) - start
    tail = _common_suffix(old_content, new_content, limit)
    replacement = new_content[start : len(new_content) - tail]
    return generate_edit_diff(old_content, start, len(old_content) - tail, replacement, context_lines)


def generate_edit_diff(
    content: str, start: int, end: int, replacement: str, context_lines: int = 4
) -> tuple[str, int | None]:
    """:func:`generate_diff_string` of ``content`` and ``content`` with ``[start:end]`` replaced.

    Neither the new content nor a list of all lines is built: only the lines the span touches are diffed,
    and of the lines around them only the context that is shown is read.
    """
    window_start = content.rfind("\n", 0, start) + 1
    newline = content.find("\n", end)
    window_end = len(content) if newline == -1 else newline + 1
    old_tokens = _line_tokens(content[window_start:window_end])
    new_tokens = _line_tokens(content[window_start:start] + replacement + content[end:window_end])

    # The equal lines around the window: counted, and read only as far as they can be shown.
    lines_before = content.count("\n", 0, window_start)
    breaks_after = lines_after = content.count("\n", window_end)
    if window_end < len(content) and not content.endswith("\n"):
        lines_after += 1  # a last line without a line break
    shown_before = _lines_before(content, window_start, min(lines_before, context_lines))
    shown_after = _lines_after(content, window_end, min(lines_after, context_lines))
    parts = [_Part("=", shown_before, hidden_before=lines_before - len(shown_before))]
    matcher = difflib.SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(_Part("=", _strip(old_tokens[i1:i2])))
            continue
        # Like jsdiff, a replacement is the removed lines followed by the added ones.
        if i2 > i1:
            parts.append(_Part("-", _strip(old_tokens[i1:i2])))
        if j2 > j1:
            parts.append(_Part("+", _strip(new_tokens[j1:j2])))
    parts.append(_Part("=", shown_after, hidden_after=lines_after - len(shown_after)))

    old_total = lines_before + content.count("\n", window_start, window_end) + breaks_after
    new_total = old_total - content.count("\n", start, end) + replacement.count("\n")
    return _render(_merge_equal(parts), len(str(max(old_total, new_total) + 1)), context_lines)


@dataclass
class _Part:
    """A run of lines of one kind: ``=`` (equal), ``-`` or ``+``. An equal run may leave lines out at
    either end (``hidden_before`` / ``hidden_after``), lines that are counted but never shown."""

    kind: str
    lines: list[str]
    hidden_before: int = 0
    hidden_after: int = 0

    @property
    def size(self) -> int:
        return self.hidden_before + len(self.lines) + self.hidden_after


def _merge_equal(parts: list[_Part]) -> list[_Part]:
    merged: list[_Part] = []
    for part in parts:
        if not part.size:
            continue
        last = merged[-1] if merged else None
        if last is not None and last.kind == part.kind == "=":
            last.lines = last.lines + part.lines
            last.hidden_after += part.hidden_before + part.hidden_after
        else:
            merged.append(part)
    return merged


def _render(parts: list[_Part], width: int, context_lines: int) -> tuple[str, int | None]:
    """Pi's diff lines for ``parts`` (``generateDiffString``'s output loop)."""
    gap = f" {'':>{width}} ..."
    output: list[str] = []
    old_no = new_no = 1
    last_was_change = False
    first_changed: int | None = None
    for i, part in enumerate(parts):
        if part.kind != "=":
            if first_changed is None:
                first_changed = new_no
            for line in part.lines:
                if part.kind == "+":
                    output.append(f"+{new_no:>{width}} {_clip(line)}")
                    new_no += 1
                else:
                    output.append(f"-{old_no:>{width}} {_clip(line)}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = i + 1 < len(parts) and parts[i + 1].kind != "="
        if last_was_change or next_is_change:
            skip_start = 0 if last_was_change else max(0, part.size - context_lines)
            shown = part.size - skip_start
            skip_end = 0
            if not next_is_change and shown > context_lines:
                skip_end, shown = shown - context_lines, context_lines
            if skip_start:
                output.append(gap)
                old_no += skip_start
                new_no += skip_start
            first = skip_start - part.hidden_before  # the hidden lines are never among those shown
            for line in part.lines[first : first + shown]:
                output.append(f" {old_no:>{width}} {_clip(line)}")
                old_no += 1
                new_no += 1
            if skip_end:
                output.append(gap)
                old_no += skip_end
                new_no += skip_end
        else:
            old_no += part.size
            new_no += part.size
        last_was_change = False
    return "\n".join(output), first_changed


def _strip(tokens: list[str]) -> list[str]:
    return [t[:-1] if t.endswith("\n") else t for t in tokens]


def _clip(line: str) -> str:
    return line if len(line) <= MAX_DIFF_LINE else line[:MAX_DIFF_LINE] + "... [truncated]"


def _lines_before(content: str, pos: int, count: int) -> list[str]:
    """The ``count`` lines that end just before ``pos`` (a line start), without their line breaks.

    Only as much of a line is copied as the diff can show (``MAX_DIFF_LINE``, plus one to know it is cut).
    """
    lines: list[str] = []
    for _ in range(count):
        start = content.rfind("\n", 0, pos - 1) + 1
        lines.append(content[start : min(pos - 1, start + MAX_DIFF_LINE + 1)])
        pos = start
    return lines[::-1]


def _lines_after(content: str, pos: int, count: int) -> list[str]:
    """The ``count`` lines from ``pos`` (a line start) on, without their line breaks (cut like above)."""
    lines: list[str] = []
    for _ in range(count):
        newline = content.find("\n", pos)
        end = len(content) if newline == -1 else newline
        lines.append(content[pos : min(end, pos + MAX_DIFF_LINE + 1)])
        pos = end + 1
    return lines


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix, compared a chunk at a time (never a copy of either)."""
    size, pos = min(len(a), len(b)), 0
    while pos < size:
        stop = min(pos + _CHUNK, size)
        if a[pos:stop] != b[pos:stop]:
            while stop - pos > 1:  # the first difference is in [pos, stop): halve it
                middle = (pos + stop) // 2
                if a[pos:middle] == b[pos:middle]:
                    pos = middle
                else:
                    stop = middle
            return pos
        pos = stop
    return size


def _common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest common suffix, at most ``limit``."""
    size, shift = 0, len(b) - len(a)
    while size < limit:
        step = min(_CHUNK, limit - size)
        low, high = len(a) - size - step, len(a) - size
        if a[low:high] != b[low + shift : high + shift]:
            while high - low > 1:  # the last difference is in [low, high): halve it
                middle = (low + high) // 2
                if a[middle:high] == b[middle + shift : high + shift]:
                    high = middle
                else:
                    low = middle
            return len(a) - high
        size += step
    return limit


def _line_tokens(text: str) -> list[str]:
    """Lines with their ``\\n`` kept (as jsdiff's ``diffLines`` compares them); no empty last token."""
    pieces = text.split("\n")
    tokens = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        tokens.append(pieces[-1])
    return tokens
