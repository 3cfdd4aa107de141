"""The write and ls tools."""

from __future__ import annotations

import os

from pi_notebook.ai.abort import AbortController
from pi_notebook.coding_agent.tools import create_ls_tool, create_write_tool

from .helpers import call, error_of, text_of


def test_write_creates_parents_and_reports_js_length(tmp_path):
    write = create_write_tool(tmp_path)
    result = call(write, path="deep/er/f.txt", content="héllo 👋\r\n")
    # JS string length: the emoji counts 2, the CR LF stays as given.
    assert text_of(result) == "Successfully wrote 10 bytes to deep/er/f.txt"
    assert (tmp_path / "deep/er/f.txt").read_bytes() == "héllo 👋\r\n".encode()
    call(write, path="deep/er/f.txt", content="new")
    assert (tmp_path / "deep/er/f.txt").read_text() == "new"


def test_write_error_reads_like_node(tmp_path):
    (tmp_path / "file").write_text("x")
    message = error_of(create_write_tool(tmp_path), path="file/sub.txt", content="x")
    assert message.startswith("EEXIST: file already exists, mkdir '") or message.startswith("ENOTDIR")


def test_write_abort(tmp_path):
    controller = AbortController()
    controller.abort()
    assert error_of(create_write_tool(tmp_path), signal=controller.signal, path="f", content="x") == "Operation aborted"
    assert not (tmp_path / "f").exists()


def test_ls_sorts_case_insensitively_marks_dirs_and_shows_dotfiles(tmp_path):
    for name in ["b.txt", "A.txt", ".hidden", "c"]:
        (tmp_path / name).write_text("")
    (tmp_path / "Dir").mkdir()
    os.symlink(tmp_path / "Dir", tmp_path / "link")
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    result = call(create_ls_tool(tmp_path))
    assert text_of(result) == ".hidden\nA.txt\nb.txt\nc\nDir/\nlink/"
    assert result.details is None


def test_ls_limit_and_empty(tmp_path):
    for i in range(5):
        (tmp_path / f"f{i}").write_text("")
    result = call(create_ls_tool(tmp_path), limit=3)
    assert text_of(result) == "f0\nf1\nf2\n\n[3 entries limit reached. Use limit=6 for more]"
    assert result.details == {"entryLimitReached": 3}
    (tmp_path / "empty").mkdir()
    assert text_of(call(create_ls_tool(tmp_path), path="empty")) == "(empty directory)"


def test_ls_byte_limit(tmp_path):
    for i in range(400):
        (tmp_path / f"{i:03d}{'x' * 200}").write_text("")
    text = text_of(call(create_ls_tool(tmp_path)))
    assert text.endswith("\n\n[50.0KB limit reached]")
    assert len(text.split("\n\n")[0].encode()) <= 51200


def test_ls_errors(tmp_path):
    ls = create_ls_tool(tmp_path)
    assert error_of(ls, path="nope") == f"Path not found: {tmp_path}/nope"
    (tmp_path / "f").write_text("")
    assert error_of(ls, path="f") == f"Not a directory: {tmp_path}/f"
    controller = AbortController()
    controller.abort()
    assert error_of(ls, signal=controller.signal) == "Operation aborted"
