"""Output truncation helpers, matching Pi's ``coding-agent/src/core/tools/truncate.ts``.

Tool output is cut by two independent limits, a line count and a UTF-8 byte count; whichever is
hit first wins. ``truncate_head`` keeps whole leading lines (file reads), ``truncate_tail`` keeps
whole trailing lines (shell output) and only cuts inside a line when the last line alone is too big.

Lines are what JS ``split("\\n")`` gives, so ``"a\\n"`` is two lines (``"a"`` and ``""``). Both
functions work on the UTF-8 encoding of the input: ``"\\n"`` is one byte and never part of a
multibyte sequence, so every line boundary is a valid place to slice the bytes. That lets each call
do one encode and then only scan the lines it keeps, which is linear in the input size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..ai.jstext import js_length, js_slice

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 51200  # 50 KB
GREP_MAX_LINE_LENGTH = 500

# JS strings may hold lone UTF-16 surrogates. Node counts each as 3 UTF-8 bytes (it encodes them as
# U+FFFD), which is what "surrogatepass" gives too, so byte counts agree and no input makes us raise.
_ENCODING_ERRORS = "surrogatepass"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class TruncationResult:
    """Outcome of ``truncate_head`` / ``truncate_tail`` (Pi's ``TruncationResult``)."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_pi_json(self) -> dict[str, Any]:
        """Return the result as Pi's camelCase object (``truncatedBy`` is ``None`` → JSON null)."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def _measure(content: str, max_lines: int, max_bytes: int) -> tuple[bytes, TruncationResult]:
    # Encode once; the returned result describes the whole input, flagged truncated if over a limit,
    # so callers only replace the output fields.
    data = content.encode("utf-8", _ENCODING_ERRORS)
    lines, size = data.count(b"\n") + 1, len(data)
    over = lines > max_lines or size > max_bytes
    return data, TruncationResult(content, over, None, lines, size, lines, size, False, False, max_lines, max_bytes)


def _limited_by(kept_lines: int, kept_bytes: int, max_lines: int, max_bytes: int) -> Literal["lines", "bytes"]:
    # Pi reports "lines" whenever the kept output reached the line limit within the byte limit, even
    # when the byte limit is what actually stopped it (tail with maxLines 1 and a cut last line).
    return "lines" if kept_lines >= max_lines and kept_bytes <= max_bytes else "bytes"


def truncate_head(
    content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the leading whole lines of ``content`` that fit in ``max_lines`` and ``max_bytes``.

    Never returns a partial line: if the first line alone is over ``max_bytes`` the content is empty
    and ``first_line_exceeds_limit`` is set.
    """
    data, whole = _measure(content, max_lines, max_bytes)
    if not whole.truncated:
        return whole
    total_bytes = len(data)

    first_newline = data.find(b"\n")
    if (first_newline if first_newline != -1 else total_bytes) > max_bytes:
        return replace(
            whole,
            content="",
            truncated_by="bytes",
            output_lines=0,
            output_bytes=0,
            first_line_exceeds_limit=True,
        )

    # The kept output is always data[:end]: it includes the separators between the kept lines.
    kept = end = start = 0
    while kept < max_lines:
        newline = data.find(b"\n", start)
        line_end = total_bytes if newline == -1 else newline
        if line_end > max_bytes:
            break
        kept, end = kept + 1, line_end
        if newline == -1:
            break
        start = newline + 1
    return replace(
        whole,
        content=data[:end].decode("utf-8", _ENCODING_ERRORS),
        truncated_by=_limited_by(kept, end, max_lines, max_bytes),
        output_lines=kept,
        output_bytes=end,
    )


def truncate_tail(
    content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the trailing whole lines of ``content`` that fit in ``max_lines`` and ``max_bytes``.

    If the last line alone is over ``max_bytes``, keep as many of its final bytes as fit, starting
    at a character boundary (``last_line_partial``). A trailing newline makes the last line ``""``,
    so an oversized line before it gives empty content rather than a partial line.
    """
    data, whole = _measure(content, max_lines, max_bytes)
    if not whole.truncated:
        return whole
    total_bytes = len(data)

    # The kept output is always data[start:]; `line_end` is where the next (earlier) line ends.
    kept, start, line_end, partial = 0, total_bytes, total_bytes, False
    while kept < max_lines:
        newline = data.rfind(b"\n", 0, line_end)
        line_start = newline + 1
        if total_bytes - line_start > max_bytes:
            if kept == 0:
                # Cut inside the only line, then step forward past UTF-8 continuation bytes so the
                # result starts on a character boundary (never over max_bytes, may be under).
                start = min(total_bytes, max(line_start, total_bytes - max_bytes))
                while start < total_bytes and data[start] & 0xC0 == 0x80:
                    start += 1
                kept, partial = 1, True
            break
        kept, start = kept + 1, line_start
        if newline == -1:
            break
        line_end = newline
    output = data[start:].decode("utf-8", _ENCODING_ERRORS)
    if partial:
        # Pi rebuilds the cut line from a Buffer, which turns lone surrogates into U+FFFD.
        output = _LONE_SURROGATE.sub("\ufffd", output)
    return replace(
        whole,
        content=output,
        truncated_by=_limited_by(kept, total_bytes - start, max_lines, max_bytes),
        output_lines=kept,
        output_bytes=total_bytes - start,
        last_line_partial=partial,
    )


def format_size(n: int) -> str:
    """Format a byte count like Pi: ``"512B"``, ``"50.0KB"``, ``"5.3MB"`` (1 KB = 1024 bytes)."""
    if n < 1024:
        return f"{n}B"
    unit, suffix = (1024, "KB") if n < 1024 * 1024 else (1024 * 1024, "MB")
    # JS toFixed(1) rounds the exact value half up (1280 B = 1.25 KB -> "1.3KB"); Python's float
    # formatting rounds half to even ("1.2"), so round in exact integer tenths instead.
    tenths = (n * 10 + unit // 2) // unit
    return f"{tenths // 10}.{tenths % 10}{suffix}"


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut ``line`` to ``max_chars`` and append ``"... [truncated]"``; return ``(text, was_truncated)``.

    Length and cut point are in UTF-16 code units like JS ``length`` / ``slice``: an astral
    character (e.g. an emoji) counts 2, and a cut between its two halves leaves a lone surrogate.
    """
    if js_length(line) <= max_chars:
        return line, False
    # A negative max_chars slices from the end, as JS slice(0, -n) does.
    return js_slice(line, max_chars) + "... [truncated]", True


def cut_middle(text: str, keep_chars: int, why: str) -> str:
    """``text`` with its middle replaced by a marker, keeping ``keep_chars`` characters (2/3 head, 1/3 tail)."""
    if len(text) <= keep_chars:
        return text
    head, tail = keep_chars * 2 // 3, keep_chars // 3
    cut = len(text) - head - tail
    return f"{text[:head]}\n\n[… {cut:,} characters cut here: {why} …]\n\n{text[len(text) - tail :]}"
