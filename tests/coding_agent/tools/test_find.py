"""The find tool: the pure-Python walk always, fd too when it is installed; the shared glob rules."""

from __future__ import annotations

import shutil

import pytest

from pi_notebook.ai.abort import AbortController
from pi_notebook.coding_agent.tools import create_find_tool
from pi_notebook.coding_agent.tools.search import Glob, parse_gitignore

from .helpers import call, error_of, text_of

HAS_FD = bool(shutil.which("fd") or shutil.which("fdfind"))
BACKENDS = ["python", pytest.param("fd", marks=pytest.mark.skipif(not HAS_FD, reason="no fd"))]


@pytest.fixture(params=BACKENDS)
def find(request, monkeypatch, tmp_path):
    if request.param == "python":
        monkeypatch.setattr("pi_notebook.coding_agent.tools.find.find_program", lambda *names: None)
    return create_find_tool(tmp_path)


@pytest.fixture
def tree(tmp_path):
    for path in [
        "src/a.ts",
        "src/deep/b.ts",
        "src/deep/c.spec.ts",
        "README.md",
        ".config/x.ts",
        "build/o.ts",
    ]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git/HEAD.ts").write_text("")
    (tmp_path / ".gitignore").write_text("build/\n")
    return tmp_path


def lines(result) -> list[str]:
    return sorted(text_of(result).splitlines())


def test_name_glob_matches_at_any_depth_including_hidden(find, tree):
    expected = [".config/x.ts", "src/a.ts", "src/deep/b.ts", "src/deep/c.spec.ts"]
    assert lines(call(find, pattern="*.ts")) == expected


def test_path_globs(find, tree):
    assert lines(call(find, pattern="src/**/*.spec.ts")) == ["src/deep/c.spec.ts"]
    assert lines(call(find, pattern="**/*.md")) == ["README.md"]


def test_search_subdirectory(find, tree):
    assert lines(call(find, pattern="*.ts", path="src/deep")) == ["b.ts", "c.spec.ts"]


def test_directories_get_a_slash(find, tree):
    assert lines(call(find, pattern="deep")) == ["src/deep/"]


def test_no_results_limit_and_errors(find, tree):
    assert text_of(call(find, pattern="*.xyz")) == "No files found matching pattern"
    result = call(find, pattern="*.ts", limit=2)
    assert text_of(result).endswith("\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]")
    assert result.details == {"resultLimitReached": 2}
    assert error_of(find, pattern="*", path="nope") == f"Path not found: {tree}/nope"


def test_abort(find, tree):
    controller = AbortController()
    controller.abort()
    assert error_of(find, signal=controller.signal, pattern="*") == "Operation aborted"


def test_glob_rules():
    assert Glob.compile("*.py").matches("a/b/c.py") and not Glob.compile("*.py").matches("a/c.pyc")
    assert Glob.compile("src/*.py").matches("src/x.py") and not Glob.compile("src/*.py").matches("a/src/x.py")
    tests = Glob.compile("**/test_*.py")
    assert tests.matches("test_a.py") and tests.matches("t/test_a.py")
    assert Glob.compile("*.{js,ts}").matches("x.ts") and Glob.compile("[!a]*").matches("b")
    assert Glob.compile("*.PY", ignore_case=True).matches("x.py")


def test_gitignore_rules(tmp_path):
    rules = parse_gitignore("# comment\n*.log\n!keep.log\n/root-only\nbuild/\n\\#literal\n")
    assert [(r.negate, r.dir_only) for r in rules] == [(False, False), (True, False), (False, False),
                                                      (False, True), (False, False)]  # fmt: skip
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/.gitignore").write_text("*.tmp\n")
    for path in ["a.log", "keep.log", "root-only", "sub/root-only", "sub/x.tmp", "y.tmp", "#literal"]:
        (tmp_path / path).write_text("")
    (tmp_path / ".gitignore").write_text("*.log\n!keep.log\n/root-only\n\\#literal\n")
    from pi_notebook.coding_agent.tools.search import walk

    assert sorted(rel for _, rel, _ in walk(str(tmp_path))) == [
        ".gitignore", "keep.log", "sub", "sub/.gitignore", "sub/root-only", "y.tmp"
    ]  # fmt: skip
