"""Tests for pi_notebook.coding_agent.truncate against Pi's golden fixtures, plus behaviour and properties."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_notebook.coding_agent.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    TruncationResult,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi"
TRUNCATORS = {"truncateHead": truncate_head, "truncateTail": truncate_tail}


def _cases(filename: str) -> list:
    cases = json.loads((FIXTURES / filename).read_text(encoding="utf-8"))
    return [pytest.param(case, id=case["name"]) for case in cases]


@pytest.mark.parametrize("case", _cases("truncate.json"))
def test_truncate_fixture(case: dict) -> None:
    inp = case["input"]
    options = inp.get("options", {})
    kwargs = {}
    if "maxLines" in options:
        kwargs["max_lines"] = options["maxLines"]
    if "maxBytes" in options:
        kwargs["max_bytes"] = options["maxBytes"]
    assert TRUNCATORS[inp["function"]](inp["content"], **kwargs).to_pi_json() == case["expected"]


@pytest.mark.parametrize("case", _cases("truncate_helpers.json"))
def test_helpers_fixture(case: dict) -> None:
    inp = case["input"]
    if inp["function"] == "formatSize":
        assert format_size(inp["bytes"]) == case["expected"]
    else:
        assert inp["function"] == "truncateLine"
        args = [inp["maxChars"]] if "maxChars" in inp else []
        text, was_truncated = truncate_line(inp["line"], *args)
        assert {"text": text, "wasTruncated": was_truncated} == case["expected"]


def test_constants() -> None:
    assert (DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH) == (2000, 51200, 500)


def test_untruncated_content_is_returned_unchanged() -> None:
    content = "héllo\r\nwörld\n\n"
    for fn in (truncate_head, truncate_tail):
        result = fn(content)
        assert result.content is content
        assert not result.truncated and result.truncated_by is None
        assert (result.output_lines, result.output_bytes) == (4, len(content.encode()))


def test_head_never_splits_a_multibyte_character() -> None:
    # "€" is 3 bytes; 4 lines of it are 15 bytes, a limit of 13 must drop the last line whole.
    result = truncate_head("€\n€\n€\n€", max_bytes=13)
    assert result.content == "€\n€\n€"
    assert (result.output_lines, result.output_bytes, result.truncated_by) == (3, 11, "bytes")


def test_tail_of_huge_single_line_keeps_tail_bytes_as_valid_utf8() -> None:
    line = "日本語" * 400_000 + "END"  # ~3.6 MB, one line
    result = truncate_tail(line, max_bytes=100)
    assert result.last_line_partial and result.output_lines == 1
    assert line.endswith(result.content) and result.content.endswith("END")
    # 100 - 3 = 97 bytes are left for 3-byte characters: the cut lands on a boundary at 96.
    assert result.output_bytes == len(result.content.encode("utf-8")) == 99
    assert result.total_bytes == len(line.encode("utf-8"))


def test_tail_partial_line_with_emoji_stays_whole() -> None:
    result = truncate_tail("x\n" + "😀" * 10, max_bytes=10)
    assert result.content == "😀😀"
    assert result.output_bytes == 8


def test_tail_of_large_multiline_buffer() -> None:
    content = "".join(f"{i:07d}\n" for i in range(500_000))  # 4 MB of shell-like output
    result = truncate_tail(content)
    assert result.truncated_by == "lines" and result.output_lines == DEFAULT_MAX_LINES
    # The trailing newline makes "" the last line, so 1999 numbered lines are kept.
    assert result.content.startswith("0498001\n") and result.content.endswith("0499999\n")


def test_truncate_line_counts_utf16_code_units() -> None:
    assert truncate_line("😀😀", 4) == ("😀😀", False)
    assert truncate_line("😀😀", 3) == ("😀\ud83d... [truncated]", True)


def test_format_size_rounds_ties_up_like_js() -> None:
    assert format_size(1024 + 256 * 3) == "1.8KB"  # 1.75 -> up
    assert format_size(1024 * 1024 * 3 + 1024 * 1024 // 4) == "3.3MB"  # 3.25 -> up
    assert format_size(1024 * 1024 - 1) == "1024.0KB"


def _reference(content: str, head: bool, max_lines: int, max_bytes: int) -> TruncationResult:
    """Plain list-of-lines model of Pi's rules, to check the byte-scanning implementation."""
    lines = content.split("\n")
    size = len(content.encode())
    n, limits = len(lines), (max_lines, max_bytes)
    if n <= max_lines and size <= max_bytes:
        return TruncationResult(content, False, None, n, size, n, size, False, False, *limits)
    if head and len(lines[0].encode()) > max_bytes:
        return TruncationResult("", True, "bytes", n, size, 0, 0, False, True, *limits)
    kept: list[str] = []
    partial = False
    for line in lines if head else reversed(lines):
        if len(kept) >= max_lines:
            break
        if len("\n".join([*kept, line]).encode()) > max_bytes:
            if not head and not kept:
                raw = line.encode()[len(line.encode()) - max_bytes :]
                kept, partial = [raw.decode(errors="ignore")], True
            break
        kept.append(line)
    text = "\n".join(kept if head else reversed(kept))
    nbytes = len(text.encode())
    by = "lines" if len(kept) >= max_lines and nbytes <= max_bytes else "bytes"
    return TruncationResult(text, True, by, n, size, len(kept), nbytes, partial, False, *limits)


@given(
    content=st.text(alphabet=st.sampled_from("ab\n\r é€日😀"), max_size=60),
    head=st.booleans(),
    max_lines=st.integers(0, 8),
    max_bytes=st.integers(0, 40),
)
def test_truncation_properties(content: str, head: bool, max_lines: int, max_bytes: int) -> None:
    result = (truncate_head if head else truncate_tail)(content, max_lines=max_lines, max_bytes=max_bytes)
    assert result == _reference(content, head, max_lines, max_bytes)
    out = result.content
    assert content.startswith(out) if head else content.endswith(out)
    assert result.output_bytes == len(out.encode())
    assert result.truncated == (result.total_lines > max_lines or result.total_bytes > max_bytes)
    if result.truncated:
        assert result.output_bytes <= max_bytes and result.output_lines <= max_lines
