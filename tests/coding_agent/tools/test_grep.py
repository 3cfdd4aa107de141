"""The grep tool: the pure-Python search always, ripgrep too when it is installed."""

from __future__ import annotations

import shutil

import pytest

from pi_notebook.ai.abort import AbortController
from pi_notebook.coding_agent.tools import create_grep_tool

from .helpers import call, error_of, text_of

BACKENDS = ["python", pytest.param("rg", marks=pytest.mark.skipif(not shutil.which("rg"), reason="no rg"))]


@pytest.fixture(params=BACKENDS)
def grep(request, monkeypatch, tmp_path):
    if request.param == "python":
        monkeypatch.setattr("pi_notebook.coding_agent.tools.grep.find_program", lambda *names: None)
    return create_grep_tool(tmp_path)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (tmp_path / "src/util.ts").write_text("export const main = 1;\n")
    (tmp_path / ".env").write_text("MAIN=1\n")
    (tmp_path / "blob.bin").write_bytes(b"main\0\x01\x02")
    (tmp_path / ".git").mkdir()  # skipped; rg also honours .gitignore only inside a repository
    (tmp_path / ".git/config").write_text("main = 1\n")
    return tmp_path


def test_matches_with_relative_paths(grep, tree):
    lines = sorted(text_of(call(grep, pattern="main")).splitlines())
    assert lines == ["src/app.py:3: def main():", "src/util.ts:1: export const main = 1;"]


def test_hidden_files_ignore_case_and_literal(grep, tree):
    assert ".env:1: MAIN=1" in text_of(call(grep, pattern="main", ignoreCase=True))
    assert text_of(call(grep, pattern="getcwd()", literal=True)) == "src/app.py:4:     return os.getcwd()"


def test_context_lines(grep, tree):
    text = text_of(call(grep, pattern="def main", context=1))
    assert text == "src/app.py-2- \nsrc/app.py:3: def main():\nsrc/app.py-4-     return os.getcwd()"


def test_glob_and_single_file(grep, tree):
    assert text_of(call(grep, pattern="main", glob="*.ts")) == "src/util.ts:1: export const main = 1;"
    assert text_of(call(grep, pattern="main", path="src/app.py")) == "app.py:3: def main():"


def test_gitignore_is_respected(grep, tree):
    (tree / ".gitignore").write_text("src/*.ts\n")
    assert text_of(call(grep, pattern="main")) == "src/app.py:3: def main():"


def test_no_matches_and_missing_path(grep, tree):
    assert text_of(call(grep, pattern="zzz")) == "No matches found"
    assert error_of(grep, pattern="x", path="nope") == f"Path not found: {tree}/nope"


def test_match_limit_notice(grep, tmp_path):
    (tmp_path / "f.txt").write_text("hit\n" * 5)
    result = call(grep, pattern="hit", limit=2)
    assert text_of(result) == (
        "f.txt:1: hit\nf.txt:2: hit\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"
    )
    assert result.details == {"matchLimitReached": 2}


def test_long_lines_and_byte_limit(grep, tmp_path):
    (tmp_path / "f.txt").write_text(("hit " + "x" * 600 + "\n") * 150)
    result = call(grep, pattern="hit", limit=1000)
    body, notice = text_of(result).split("\n\n")
    assert body.splitlines()[0] == "f.txt:1: hit " + "x" * 496 + "... [truncated]"
    assert notice == "[50.0KB limit reached. Some lines truncated to 500 chars. Use read tool to see full lines]"
    assert result.details["linesTruncated"] is True and result.details["truncation"]["truncated"]


def test_abort(grep, tree):
    controller = AbortController()
    controller.abort()
    assert error_of(grep, signal=controller.signal, pattern="main") == "Operation aborted"


def test_python_regex_error(monkeypatch, tmp_path):
    monkeypatch.setattr("pi_notebook.coding_agent.tools.grep.find_program", lambda *names: None)
    assert error_of(create_grep_tool(tmp_path), pattern="(").startswith("regex parse error:")
