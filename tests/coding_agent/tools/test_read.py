"""The read tool: text with Pi's paging notices, images by content, errors and paths as Pi writes them."""

from __future__ import annotations

import base64

from pi_notebook.ai import ImageContent
from pi_notebook.ai.abort import AbortController
from pi_notebook.coding_agent.tools import create_read_tool

from .helpers import call, error_of, text_of

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_reads_a_small_file_whole(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    result = call(create_read_tool(tmp_path), path="a.txt")
    assert text_of(result) == "one\ntwo\n" and result.details is None


def test_truncates_at_2000_lines_with_a_continue_notice(tmp_path):
    (tmp_path / "big.txt").write_text("\n".join(f"line {i}" for i in range(1, 2501)))
    read = create_read_tool(tmp_path)
    result = call(read, path="big.txt")
    body, notice = text_of(result).split("\n\n")
    assert body.splitlines()[-1] == "line 2000" and len(body.splitlines()) == 2000
    assert notice == "[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"
    assert result.details["truncation"]["truncatedBy"] == "lines"
    assert text_of(call(read, path="big.txt", offset=2001)).splitlines()[0] == "line 2001"


def test_truncates_at_50kb_with_the_limit_in_the_notice(tmp_path):
    (tmp_path / "wide.txt").write_text("\n".join("x" * 99 for _ in range(1000)))
    text = text_of(call(create_read_tool(tmp_path), path="wide.txt"))
    assert text.endswith("\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]")


def test_offset_and_limit_with_more_lines_left(tmp_path):
    (tmp_path / "a.txt").write_text("\n".join(str(i) for i in range(1, 11)))
    text = text_of(call(create_read_tool(tmp_path), path="a.txt", offset=3, limit=2))
    assert text == "3\n4\n\n[6 more lines in file. Use offset=5 to continue.]"
    assert text_of(call(create_read_tool(tmp_path), path="a.txt", offset=9, limit=5)) == "9\n10"


def test_offset_beyond_end(tmp_path):
    (tmp_path / "a.txt").write_text("1\n2")
    assert (
        error_of(create_read_tool(tmp_path), path="a.txt", offset=5) == "Offset 5 is beyond end of file (2 lines total)"
    )


def test_a_first_line_over_50kb_points_to_sed(tmp_path):
    (tmp_path / "min.js").write_text("short\n" + "y" * 60000 + "\nend")
    text = text_of(call(create_read_tool(tmp_path), path="min.js", offset=2))
    assert text == "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' min.js | head -c 51200]"


def test_images_are_detected_by_content(tmp_path):
    (tmp_path / "pic.dat").write_bytes(PNG_1PX)
    result = call(create_read_tool(tmp_path), path="pic.dat")
    assert text_of(result) == "Read image file [image/png]"
    image = result.content[1]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG_1PX
    (tmp_path / "fake.png").write_text("not an image")
    assert text_of(call(create_read_tool(tmp_path), path="fake.png")) == "not an image"


def test_other_image_signatures(tmp_path):
    read = create_read_tool(tmp_path)
    for name, data, mime in [
        ("a", b"\xff\xd8\xff\xe0" + b"\0" * 20, "image/jpeg"),
        ("b", b"GIF89a" + b"\0" * 20, "image/gif"),
        ("c", b"RIFF\x10\0\0\0WEBPVP8 " + b"\0" * 8, "image/webp"),
    ]:
        (tmp_path / name).write_bytes(data)
        assert text_of(call(read, path=name)) == f"Read image file [{mime}]"


def test_missing_file_and_directory_errors(tmp_path):
    read = create_read_tool(tmp_path)
    assert error_of(read, path="nope.txt") == f"ENOENT: no such file or directory, access '{tmp_path}/nope.txt'"
    (tmp_path / "dir").mkdir()
    assert error_of(read, path="dir") == "EISDIR: illegal operation on a directory, read"


def test_path_forms(tmp_path, monkeypatch):
    (tmp_path / "my file.txt").write_text("spaced")
    read = create_read_tool(tmp_path)
    assert text_of(call(read, path="@my file.txt")) == "spaced"
    assert text_of(call(read, path="my\u00a0file.txt")) == "spaced"
    assert text_of(call(read, path=str(tmp_path / "my file.txt"))) == "spaced"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert text_of(call(read, path="~/my file.txt")) == "spaced"


def test_macos_screenshot_names(tmp_path):
    (tmp_path / "Shot 10.15.32\u202fAM.png").write_text("shot")
    assert text_of(call(create_read_tool(tmp_path), path="Shot 10.15.32 AM.png")) == "shot"


def test_abort(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    controller = AbortController()
    controller.abort()
    assert error_of(create_read_tool(tmp_path), signal=controller.signal, path="a.txt") == "Operation aborted"
