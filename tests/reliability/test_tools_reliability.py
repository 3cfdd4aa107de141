"""The file tools on files they were not written for: not UTF-8, binary, huge (issue #11, items 9 and 10).

``edit`` must never write back a lossy decode and must change only the edited span; ``read`` must stream,
holding only what its limits return, and say so plainly when a file is binary. Memory is measured with
``tracemalloc`` (every Python allocation, in every thread); there are no wall-clock asserts.
"""

from __future__ import annotations

import base64
import tracemalloc
import zlib

from pi_notebook.coding_agent.tools import create_edit_tool, create_read_tool
from pi_notebook.coding_agent.truncate import format_size

from ..coding_agent.tools.helpers import call, error_of, text_of

GIB = 1 << 30
MB = 1 << 20


def _peak(work):
    """Run ``work()``; return its result and the peak of Python memory allocated meanwhile, in bytes."""
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _png_with_text(text: bytes) -> bytes:
    """A real 1x1 PNG with a ``tEXt`` chunk holding ``text`` (its header has ``\\r\\n``, ``\\x1a`` and ``\\n``)."""
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    body = b"tEXtComment\0" + text
    chunk = len(body[4:]).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    return png[:33] + chunk + png[33:]


# --- edit: no lossy write-back, only the edited span changes -------------------------------------------------


def test_edit_of_a_latin1_file_keeps_its_other_bytes(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"caf\xe9 = 1\nx = 2\n")
    result = call(create_edit_tool(tmp_path), path="f.txt", oldText="x = 2", newText="x = 3")
    assert text_of(result) == "Successfully replaced text in f.txt."
    assert (tmp_path / "f.txt").read_bytes() == b"caf\xe9 = 1\nx = 3\n"
    assert result.details["diff"] == " 1 caf\ufffd = 1\n-2 x = 2\n+2 x = 3"


def test_edit_of_text_around_undecodable_bytes_fails_and_says_why(tmp_path):
    original = b"caf\xe9 = 1\nx = 2\n"
    (tmp_path / "f.txt").write_bytes(original)
    # What read showed the model: the Latin-1 byte as U+FFFD. Matching it would mean writing U+FFFD back.
    message = error_of(create_edit_tool(tmp_path), path="f.txt", oldText="caf\ufffd = 1", newText="cafe = 1")
    assert message.startswith("Could not find the exact text in f.txt.")
    assert "f.txt is not valid UTF-8" in message and "convert the file to UTF-8" in message
    assert (tmp_path / "f.txt").read_bytes() == original


def test_edit_inside_a_png_changes_only_the_edited_bytes(tmp_path):
    original = _png_with_text(b"hello")
    (tmp_path / "pic.png").write_bytes(original)
    call(create_edit_tool(tmp_path), path="pic.png", oldText="hello", newText="world")
    assert (tmp_path / "pic.png").read_bytes() == original.replace(b"hello", b"world")
    message = error_of(create_edit_tool(tmp_path), path="pic.png", oldText="nothere", newText="x")
    assert message.startswith("Could not find the exact text in pic.png.")
    assert (tmp_path / "pic.png").read_bytes() == original.replace(b"hello", b"world")


def test_edit_keeps_mixed_line_endings_and_lone_cr_outside_the_edit(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\nc\rd\r\ne\r\n")
    result = call(create_edit_tool(tmp_path), path="f.txt", oldText="d\ne", newText="D\nE")
    # The new line break takes the file's style (its first one, CRLF); nothing outside the match changes.
    assert (tmp_path / "f.txt").read_bytes() == b"a\r\nb\nc\rD\r\nE\r\n"
    assert result.details == {"diff": " 1 a\n 2 b\n 3 c\n-4 d\n-5 e\n+4 D\n+5 E", "firstChangedLine": 4}
    # Deleting the text between a lone CR and a LF must not join them into one CRLF (three lines stay three).
    (tmp_path / "g.txt").write_bytes(b"a\rb\nc")
    call(create_edit_tool(tmp_path), path="g.txt", oldText="b", newText="")
    assert (tmp_path / "g.txt").read_bytes() == b"a\n\nc"


def test_edit_with_a_fuzzy_match_keeps_crlf_and_bom(tmp_path):
    (tmp_path / "f.txt").write_bytes("\ufeffkeep \u2018q\u2019  \r\nx = \u201ca\u201d  \r\nend\n".encode())
    call(create_edit_tool(tmp_path), path="f.txt", oldText='x = "a"', newText='x = "b"')
    assert (tmp_path / "f.txt").read_bytes() == '\ufeffkeep \u2018q\u2019  \r\nx = "b"\r\nend\n'.encode()


def test_edit_of_a_large_file_holds_about_two_copies(tmp_path):
    lines = [f"line number {i} with some text\n" for i in range(1_000_000)]
    (tmp_path / "big.txt").write_text("".join(lines))
    size = (tmp_path / "big.txt").stat().st_size
    edit = create_edit_tool(tmp_path)
    result, peak = _peak(lambda: call(edit, path="big.txt", oldText="number 999998 with", newText="N 999998 with"))
    lines[999998] = "line N 999998 with some text\n"
    assert (tmp_path / "big.txt").read_text() == "".join(lines)
    assert result.details["firstChangedLine"] == 999999
    assert result.details["diff"].splitlines()[-3:] == [
        "- 999999 line number 999998 with some text",
        "+ 999999 line N 999998 with some text",
        " 1000000 line number 999999 with some text",
    ]
    assert peak < 3 * size, f"edit of a {size / MB:.0f} MB file peaked at {peak / MB:.0f} MB"


def test_edit_next_to_a_huge_line_keeps_the_diff_small(tmp_path):
    (tmp_path / "bundle.js").write_bytes(b"// v1\n" + b"x" * (32 * MB) + b"\n")
    result = call(create_edit_tool(tmp_path), path="bundle.js", oldText="// v1", newText="// v2")
    assert (tmp_path / "bundle.js").read_bytes()[:6] == b"// v2\n"
    diff = result.details["diff"].splitlines()
    assert diff[:2] == ["-1 // v1", "+1 // v2"]
    assert diff[2] == " 2 " + "x" * 10_000 + "... [truncated]"


# --- read: binary files, and streaming ----------------------------------------------------------------------


def test_read_of_a_binary_file_says_so_instead_of_returning_mojibake(tmp_path):
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 4000)
    message = error_of(create_read_tool(tmp_path), path="blob.bin")
    assert message.startswith("Cannot read blob.bin: it is a binary file (1000.0KB)")
    assert "xxd blob.bin | head" in message


def test_read_of_a_latin1_file_shows_its_text_and_notes_the_encoding(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"caf\xe9\nend")
    text = text_of(call(create_read_tool(tmp_path), path="f.txt"))
    assert text.startswith("caf\ufffd\nend\n\n[f.txt is not valid UTF-8")


def test_read_of_a_sparse_1gib_file_is_refused_as_binary_without_loading_it(tmp_path):
    with open(tmp_path / "sparse.bin", "wb") as file:
        file.truncate(GIB)
    read = create_read_tool(tmp_path)
    message, peak = _peak(lambda: error_of(read, path="sparse.bin"))
    assert message.startswith("Cannot read sparse.bin: it is a binary file (1024.0MB)")
    assert peak < 200 * MB, f"peak {peak / MB:.0f} MB"


def test_read_of_1gib_streams_and_reports_what_pi_reports(tmp_path):
    # 5000 short lines, then a hole of zero bytes to 1 GiB: line 5001 is one huge line of NULs.
    head = b"".join(b"line %d\n" % i for i in range(1, 5001))
    with open(tmp_path / "big.log", "wb") as file:
        file.write(head)
        file.truncate(GIB)
    read = create_read_tool(tmp_path)

    result, peak = _peak(lambda: call(read, path="big.log"))
    body, notice = text_of(result).split("\n\n")
    assert body.splitlines() == [f"line {i}" for i in range(1, 2001)]
    assert notice == "[Showing lines 1-2000 of 5001. Use offset=2001 to continue.]"
    truncation = result.details["truncation"]
    assert (truncation["totalLines"], truncation["totalBytes"], truncation["truncatedBy"]) == (5001, GIB, "lines")
    assert peak < 200 * MB, f"peak {peak / MB:.0f} MB"

    text = text_of(call(read, path="big.log", offset=4999, limit=1))
    assert text == "line 4999\n\n[2 more lines in file. Use offset=5000 to continue.]"

    # The huge single line: Pi's pointer to sed, with the line's real size.
    result, peak = _peak(lambda: call(read, path="big.log", offset=5001))
    size = format_size(GIB - len(head))
    assert text_of(result) == (
        f"[Line 5001 is {size}, exceeds 50.0KB limit. Use bash: sed -n '5001p' big.log | head -c 51200]"
    )
    assert peak < 200 * MB, f"peak {peak / MB:.0f} MB"
    assert error_of(read, path="big.log", offset=6000) == "Offset 6000 is beyond end of file (5001 lines total)"


def test_read_of_a_huge_single_text_line(tmp_path):
    (tmp_path / "min.js").write_bytes(b"x" * (64 * MB))
    result, peak = _peak(lambda: call(create_read_tool(tmp_path), path="min.js"))
    assert text_of(result) == "[Line 1 is 64.0MB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]"
    assert result.details["truncation"]["totalBytes"] == 64 * MB
    assert peak < 16 * MB, f"peak {peak / MB:.0f} MB"
