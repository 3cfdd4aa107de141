"""The edit tool: exact and fuzzy matching, uniqueness, CRLF and BOM preserved, Pi's diff in details."""

from __future__ import annotations

from pi_notebook.ai.abort import AbortController
from pi_notebook.coding_agent.tools import create_edit_tool
from pi_notebook.coding_agent.tools.edit_diff import generate_diff_string, normalize_for_fuzzy_match

from .helpers import call, error_of, text_of


def edit(tmp_path, old: str, new: str, name: str = "f.txt"):
    return call(create_edit_tool(tmp_path), path=name, oldText=old, newText=new)


def test_exact_replacement_with_diff(tmp_path):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    result = edit(tmp_path, "b\n", "B\nB2\n")
    assert text_of(result) == "Successfully replaced text in f.txt."
    assert (tmp_path / "f.txt").read_text() == "a\nB\nB2\nc\n"
    assert result.details == {"diff": " 1 a\n-2 b\n+2 B\n+3 B2\n 3 c", "firstChangedLine": 2}


def test_diff_keeps_four_lines_of_context():
    old = "\n".join(str(i) for i in range(1, 21))
    diff, first = generate_diff_string(old, old.replace("10", "ten"))
    assert first == 10
    assert diff.splitlines() == ["    ...", *[f"  {i} {i}" for i in range(6, 10)], "-10 10", "+10 ten",
                                 *[f" {i} {i}" for i in range(11, 15)], "    ..."]  # fmt: skip


def test_fuzzy_match_of_quotes_dashes_spaces_and_trailing_whitespace(tmp_path):
    original = "keep  \nprint(\u201chello\u201d)  \nx = a \u2014 b\u00a0c\nkeep \u2018too\u2019  \n"
    (tmp_path / "f.txt").write_text(original)
    edit(tmp_path, 'print("hello")\nx = a - b c', 'print("bye")')
    # Only the matched lines are rewritten; others keep their exact bytes.
    assert (tmp_path / "f.txt").read_text() == 'keep  \nprint("bye")\nkeep \u2018too\u2019  \n'


def test_fuzzy_match_uses_nfkc(tmp_path):
    (tmp_path / "f.txt").write_text("value = \uff21\uff22\n")  # fullwidth AB
    edit(tmp_path, "value = AB", "value = 1")
    assert (tmp_path / "f.txt").read_text() == "value = 1\n"
    assert normalize_for_fuzzy_match("\ufb01x \u2013 \u201cq\u201d\t \nb") == 'fix - "q"\nb'


def test_crlf_and_bom_are_preserved(tmp_path):
    (tmp_path / "f.txt").write_bytes("\ufeffone\r\ntwo\r\nthree\r\n".encode())
    result = edit(tmp_path, "two\nthree", "2\n3")
    assert (tmp_path / "f.txt").read_bytes() == "\ufeffone\r\n2\r\n3\r\n".encode()
    assert result.details["diff"] == " 1 one\n-2 two\n-3 three\n+2 2\n+3 3"


def test_crlf_old_text_matches_too(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\n")
    edit(tmp_path, "a\r\nb", "c")
    assert (tmp_path / "f.txt").read_bytes() == b"c\r\n"


def test_not_found(tmp_path):
    (tmp_path / "f.txt").write_text("abc")
    assert error_of(create_edit_tool(tmp_path), path="f.txt", oldText="xyz", newText="q") == (
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."
    )


def test_must_be_unique_even_counting_fuzzy_matches(tmp_path):
    (tmp_path / "f.txt").write_text("x = 'a'\nx = \u2018a\u2019\n")
    assert error_of(create_edit_tool(tmp_path), path="f.txt", oldText="x = 'a'", newText="y") == (
        "Found 2 occurrences of the text in f.txt. "
        "The text must be unique. Please provide more context to make it unique."
    )


def test_identical_replacement(tmp_path):
    (tmp_path / "f.txt").write_text("same\n")
    assert error_of(create_edit_tool(tmp_path), path="f.txt", oldText="same", newText="same") == (
        "No changes made to f.txt. The replacement produced identical content. "
        "This might indicate an issue with special characters or the text not existing as expected."
    )


def test_missing_file(tmp_path):
    assert error_of(create_edit_tool(tmp_path), path="no.txt", oldText="a", newText="b") == "File not found: no.txt"


def test_abort(tmp_path):
    (tmp_path / "f.txt").write_text("a")
    controller = AbortController()
    controller.abort()
    message = error_of(create_edit_tool(tmp_path), signal=controller.signal, path="f.txt", oldText="a", newText="b")
    assert message == "Operation aborted"
    assert (tmp_path / "f.txt").read_text() == "a"
