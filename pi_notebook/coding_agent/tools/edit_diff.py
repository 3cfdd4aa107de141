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
    """Turn CRLF and lone CR line breaks into LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    """Turn LF line breaks back into ``ending``."""
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def strip_bom(content: str) -> tuple[str, str]:
    """Split a leading UTF-8 BOM off ``content``: ``(bom, text)``. The model never types the BOM."""
    return ("\ufeff", content[1:]) if content.startswith("\ufeff") else ("", content)


def _normalize_line(line: str) -> str:
    line = unicodedata.normalize("NFKC", line).rstrip(JS_WHITESPACE)
    line = _SINGLE_QUOTES.sub("'", line)
    line = _DOUBLE_QUOTES.sub('"', line)
    line = _DASHES.sub("-", line)
    return _SPACES.sub(" ", line)


def normalize_for_fuzzy_match(text: str) -> str:
    """NFKC, strip trailing whitespace per line, smart quotes / dashes / special spaces to ASCII.

    Works line by line, so line ``i`` of the result is the normalised line ``i`` of ``text``.
    """
    return "\n".join(_normalize_line(line) for line in text.split("\n"))


@dataclass(frozen=True)
class TextMatch:
    """Where ``old_text`` was found, and the edit that replacing it with ``new_text`` makes."""

    used_fuzzy_match: bool
    """Only the normalised texts matched."""
    matched_text: str
    """The text that was matched, in the space it was matched in (original or normalised)."""
    new_content: str
    """The content with the match replaced."""


def fuzzy_find_text(content: str, old_text: str) -> tuple[int, str, bool] | None:
    """Find ``old_text`` in ``content``: exactly, else fuzzily. Return ``(index, space, fuzzy)`` or ``None``.

    ``space`` is the text the index refers to: ``content`` itself, or its normalised form.
    """
    index = content.find(old_text)
    if index != -1:
        return index, content, False
    fuzzy_content = normalize_for_fuzzy_match(content)
    index = fuzzy_content.find(normalize_for_fuzzy_match(old_text))
    return (index, fuzzy_content, True) if index != -1 else None


def count_occurrences(content: str, old_text: str) -> int:
    """Non-overlapping occurrences of ``old_text`` in ``content``, both normalised (Pi's uniqueness rule)."""
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    fuzzy_content = normalize_for_fuzzy_match(content)
    if not fuzzy_old:
        # JS "abc".split("") has one part per character, so Pi counts length - 1.
        return max(len(fuzzy_content) - 1, 0)
    return fuzzy_content.count(fuzzy_old)


def replace_text(content: str, old_text: str, new_text: str) -> TextMatch | None:
    """Replace the first match of ``old_text`` (exact, else fuzzy) with ``new_text``; ``None`` if not found.

    All texts use LF line breaks. A fuzzy match replaces the lines it touches with their normalised form
    (with the replacement applied); all other lines are kept exactly.
    """
    found = fuzzy_find_text(content, old_text)
    if found is None:
        return None
    index, space, fuzzy = found
    length = len(normalize_for_fuzzy_match(old_text)) if fuzzy else len(old_text)
    matched = space[index : index + length]
    if not fuzzy:
        return TextMatch(False, matched, content[:index] + new_text + content[index + length :])

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
    original_lines = content.split("\n")
    original_start = sum(len(line) + 1 for line in original_lines[:first_line])
    original_end = sum(len(line) + 1 for line in original_lines[:last_line])
    if not ends_at_line_start:
        original_end += len(original_lines[last_line])
    region = space[region_start:index] + new_text + space[end:region_end]
    return TextMatch(True, matched, content[:original_start] + region + content[original_end:])


def generate_diff_string(old_content: str, new_content: str, context_lines: int = 4) -> tuple[str, int | None]:
    """Pi's line-numbered diff of two LF texts, and the first changed line number in the new text.

    Lines read ``+<n> text`` (added, new numbering), ``-<n> text`` (removed, old numbering) and
    `` <n> text`` (context); at most ``context_lines`` of context around each change, `` ... `` for gaps.
    """
    old_tokens, new_tokens = _line_tokens(old_content), _line_tokens(new_content)
    parts: list[tuple[str, list[str]]] = []
    matcher = difflib.SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(("=", old_tokens[i1:i2]))
            continue
        # Like jsdiff, a replacement is the removed lines followed by the added ones.
        if i2 > i1:
            parts.append(("-", old_tokens[i1:i2]))
        if j2 > j1:
            parts.append(("+", new_tokens[j1:j2]))

    width = len(str(max(old_content.count("\n"), new_content.count("\n")) + 1))
    gap = f" {'':>{width}} ..."
    output: list[str] = []
    old_no = new_no = 1
    last_was_change = False
    first_changed: int | None = None
    for i, (kind, tokens) in enumerate(parts):
        lines = [t[:-1] if t.endswith("\n") else t for t in tokens]
        if kind != "=":
            if first_changed is None:
                first_changed = new_no
            for line in lines:
                if kind == "+":
                    output.append(f"+{new_no:>{width}} {line}")
                    new_no += 1
                else:
                    output.append(f"-{old_no:>{width}} {line}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = i + 1 < len(parts) and parts[i + 1][0] != "="
        if last_was_change or next_is_change:
            skip_start = 0 if last_was_change else max(0, len(lines) - context_lines)
            shown = lines[skip_start:]
            skip_end = 0
            if not next_is_change and len(shown) > context_lines:
                skip_end = len(shown) - context_lines
                shown = shown[:context_lines]
            if skip_start:
                output.append(gap)
                old_no += skip_start
                new_no += skip_start
            for line in shown:
                output.append(f" {old_no:>{width}} {line}")
                old_no += 1
                new_no += 1
            if skip_end:
                output.append(gap)
                old_no += skip_end
                new_no += skip_end
        else:
            old_no += len(lines)
            new_no += len(lines)
        last_was_change = False
    return "\n".join(output), first_changed


def _line_tokens(text: str) -> list[str]:
    """Lines with their ``\\n`` kept (as jsdiff's ``diffLines`` compares them); no empty last token."""
    pieces = text.split("\n")
    tokens = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        tokens.append(pieces[-1])
    return tokens
