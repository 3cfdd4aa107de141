"""``%agent_session export`` and ``pi_notebook.export_html``, through a real IPython shell with the faux provider:
the HTML page's data and safety, the Pi session file (reopened by our loader, and Pi's own fixtures exported and
reopened), the Markdown transcript, and the errors (one line, nothing half-written). The page in Chromium, with
the network blocked: ``tests/e2e/test_export_browser.py``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from IPython.core.error import UsageError

import pi_notebook
from pi_notebook.agent_core import to_pi_json
from pi_notebook.ai import UserMessage, faux
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_entries import SessionWarning
from pi_notebook.notebook import export
from pi_notebook.notebook.export import ExportError, export_jsonl, export_session, script_json
from pi_notebook.notebook.packed import unpack
from tests.reliability.test_xss_fallbacks import CORPUS, markdown_problems, role_messages, scan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pi" / "sessions"
PAGE_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "dl", "dt", "dd", "details", "summary",
    "pre", "ul", "li", "b", "nav", "a", "section", "div", "noscript", "p", "script",
}  # fmt: skip
"""The elements an export page is made of (the views draw the rest, from JSON, in the browser)."""


def page_data(path: Path) -> dict:
    """The JSON a page embeds, by the id of its ``<script type="application/json">``; the views' state unpacked
    (the page holds each text once), as the page's boot script gives it to the views."""
    text = path.read_text("utf-8")
    found = re.findall(r'<script type="application/json" id="([\w-]+)">(.*?)</script>', text, re.S)
    data = {name: json.loads(body) for name, body in found}
    data["pi-export-state"] = unpack(data["pi-export-state"])
    return data


def run_session(shell) -> None:
    """A session with every kind of turn: a tool call and its result, thinking, %bash and %bash!."""
    faux.set_responses(
        [
            [faux.thinking("Let me look."), faux.text("Listing."), faux.tool_call("ls", {}, id="c1")],
            "There is one file.",
        ]
    )
    (shell.notebook.parent / "data.csv").write_text("a,b\n")
    shell.cell("%bash echo hello")
    shell.cell("%bash! echo private")
    assert shell.agent("What files are here?", "--model faux/faux-1 --tools ls").success


def run_export(shell, capsys, words: str):
    result = shell.cell(f"%agent_session export {words}")
    return result, capsys.readouterr().out


# --- HTML ---------------------------------------------------------------------------------------------------


def test_html_export_holds_the_transcript_and_every_providers_request(shell, capsys, tmp_path):
    run_session(shell)
    result, out = run_export(shell, capsys, "session.html")
    assert result.success and "exported 6 messages to session.html" in out
    page = tmp_path / "session.html"
    text = page.read_text("utf-8")
    data = page_data(page)
    transcript, inspector = data["pi-export-state"]["transcript"], data["pi-export-state"]["inspector"]
    assert transcript["messages"] == [to_pi_json(m) for m in shell.session.messages]
    assert transcript["visibility"] == ["both", "ui", "both", "both", "both", "both"]  # %bash! is UI only
    assert transcript["renderers"] == {}  # kernel code is not exported
    # the provider switch works without a kernel: a request body for each API the notebook speaks
    apis = {key.split(" ")[0] for key in inspector["requests"]}
    assert {"anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"} <= apis
    assert inspector["provider"] in inspector["requests"] and not inspector["busy"]
    assert len(inspector["rows"]) == 6
    assert set(data["pi-export-code"]) == {"static_model", "transcript", "inspector"}
    # Pi's header: the session, its model, the counts
    assert shell.session.file.header.id in text and "faux/faux-1" in text and "Tool calls</dt><dd>1<" in text
    # self-contained: no external script, stylesheet, frame or URL to load (the page's elements, as parsed: the
    # views' code inside the JSON holds such markup as text)
    assert not [(tag, name) for tag, attrs, _ in scan(text).elements for name, _ in attrs if name in ("src", "href")
                if tag != "a"]  # fmt: skip
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1)
    assert "default-src 'none'" in csp and "'unsafe-inline'" not in csp.split("style-src")[0]
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+' blob:;", csp)


def test_the_export_of_an_xss_session_keeps_every_payload_inside_its_json(tmp_path):
    messages = [m for group in role_messages().values() for m in group]
    path = pi_notebook.export_html(messages, tmp_path / "xss.html", title=CORPUS.splitlines()[0])
    text = path.read_text("utf-8")
    # the page has exactly its own elements: no payload became markup
    elements = scan(text).elements
    assert {tag for tag, _, _ in elements} <= PAGE_TAGS
    assert [tag for tag, _, _ in elements].count("script") == 3 and text.count("</script>") == 3
    assert not [name for _, attrs, _ in elements for name, _ in attrs if name.startswith("on")]
    assert not [value for _, attrs, _ in elements for name, value in attrs if name == "href" and value[:1] != "#"]
    data = page_data(path)
    assert data["pi-export-state"]["transcript"]["messages"] == [to_pi_json(m) for m in messages]
    title = re.search(r"<title>(.*?)</title>", text, re.S).group(1)
    assert "<" not in title  # escaped


def test_script_json_escapes_what_could_end_a_script():
    value = {"x": "</script><!-- <script> </SCRIPT & \u2028\u2029 \ud800 <x>", "</script>": 1, "<!--": "<"}
    text = script_json(value)
    # an HTML tokenizer leaves a script's data only at "</" (an end tag) or "<!" (a comment that could hide one)
    assert "</" not in text and "<!" not in text and not re.search("[\ud800-\udfff]", text)
    assert "<x>" in text and "<script>" in text  # nothing else is escaped: "<x>" costs what it weighs
    text.encode("utf-8")  # a lone surrogate, escaped, is valid UTF-8
    assert json.loads(text) == value


def test_export_html_from_a_session_file_and_from_messages(shell, tmp_path):
    run_session(shell)
    with SessionFile.open(shell.session.file.path, readonly=True) as file:
        page = pi_notebook.export_html(file, tmp_path / "from_file.html")
    messages = page_data(page)["pi-export-state"]["transcript"]["messages"]
    assert messages == [to_pi_json(m) for m in shell.session.messages]
    page = pi_notebook.export_html([UserMessage(content="just this")], tmp_path / "list.html", title="One")
    assert "<title>One</title>" in page.read_text("utf-8")


# --- Pi session file ----------------------------------------------------------------------------------------


def test_jsonl_export_is_the_current_branch_and_reopens_with_the_same_messages(shell, capsys, tmp_path):
    faux.set_responses(["Paris.", "It is big.", "Lyon!"])
    shell.agent("Capital of France?", cell_id="cell-1")
    shell.agent("Tell me more.", cell_id="cell-2")
    shell.agent("Capital of France?", cell_id="cell-1")  # re-run: a second branch
    first = shell.session.file.get_branch()[1]
    assert shell.cell(f"%agent_session label {first.id} start").success
    before = [to_pi_json(m) for m in shell.session.messages]
    source = shell.session.file
    result, out = run_export(shell, capsys, "branch.jsonl")
    assert result.success, out
    with SessionFile.open(tmp_path / "branch.jsonl", readonly=True) as copy:
        assert copy.header.id != source.header.id and copy.header.parent_session == str(source.path)
        assert copy.header.cwd == source.header.cwd
        assert [to_pi_json(m) for m in copy.build_session_context().messages] == before
        assert len(copy.entries) < len(source.entries)  # the abandoned branch is not in it
        assert copy.get_label(first.id) == "start"
    # --tree: every entry, ids and parents kept
    result, out = run_export(shell, capsys, "tree.jsonl --tree")
    assert result.success and "the whole tree" in out
    with SessionFile.open(tmp_path / "tree.jsonl", readonly=True) as copy:
        assert [(e.id, e.parent_id) for e in copy.entries] == [(e.id, e.parent_id) for e in source.entries]
        assert [to_pi_json(m) for m in copy.build_session_context().messages] == before
    # %agent_session open continues the export, with the same history
    assert shell.cell("%agent_session open branch.jsonl").success
    assert [to_pi_json(m) for m in shell.session.messages] == before


def _fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.jsonl"))


@pytest.mark.parametrize("fixture", _fixture_files(), ids=lambda p: p.stem)
def test_pis_own_session_files_export_and_reopen_the_same(fixture, tmp_path, recwarn):
    with SessionFile.open(fixture, readonly=True) as source:
        if source.header is None:
            with pytest.raises(ExportError, match="no session header"):
                export_jsonl(source, tmp_path / "x.jsonl")
            assert not (tmp_path / "x.jsonl").exists()
            return
        context = source.build_session_context()
        labels = {e.id: source.get_label(e.id) for e in source.get_branch()}
        for tree in (False, True):
            path = export_jsonl(source, tmp_path / f"{fixture.stem}-{tree}.jsonl", tree=tree)
            with SessionFile.open(path, readonly=True) as copy:
                # a clean v3 file, whatever the source had to repair (an entry type Pi may add later is kept as is)
                assert [w for w in copy.warnings if "unknown entry type" not in w] == []
                assert copy.file_version == 3
                got = copy.build_session_context()
                assert [to_pi_json(m) for m in got.messages] == [to_pi_json(m) for m in context.messages]
                assert (got.model, got.thinking_level) == (context.model, context.thinking_level)
                assert {i: copy.get_label(i) for i in labels} == labels
                if tree:
                    assert len(copy.entries) == len(source.entries)


def test_a_label_entry_that_does_not_validate_is_copied_as_written(tmp_path):
    # Such an entry loads as an UnknownEntry whose type is still "label": the branch export carried labels over
    # by that type and failed on the entry's missing target_id.
    lines = [
        {"type": "session", "version": 3, "id": "9d1f0c3e-0000-4000-8000-000000000001", "cwd": str(tmp_path)},
        {"type": "message", "id": "aaaaaaaa", "parentId": None, "message": {"role": "user", "content": "Hi."}},
        {"type": "label", "id": "bbbbbbbb", "parentId": "aaaaaaaa", "label": "no target"},
        {"type": "label", "id": "cccccccc", "parentId": "bbbbbbbb", "targetId": "aaaaaaaa", "label": "start"},
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    with pytest.warns(SessionWarning, match="invalid 'label' entry"), SessionFile.open(tmp_path / "s.jsonl") as source:
        path = export_jsonl(source, tmp_path / "branch.jsonl")
    with pytest.warns(SessionWarning, match="invalid 'label' entry"), SessionFile.open(path, readonly=True) as copy:
        assert [e.to_pi_json() for e in copy.entries] == lines[1:]
        assert copy.get_label("aaaaaaaa") == "start"


def test_messages_export_as_a_new_session(tmp_path):
    messages = [UserMessage(content="hello")]
    path = export_session(messages, tmp_path / "m.jsonl")
    with SessionFile.open(path, readonly=True) as copy:
        assert [to_pi_json(m) for m in copy.build_session_context().messages] == [to_pi_json(messages[0])]


# --- Markdown -----------------------------------------------------------------------------------------------


def test_markdown_export_is_readable_and_has_no_live_link(shell, capsys, tmp_path):
    run_session(shell)
    result, _ = run_export(shell, capsys, "session.md")
    assert result.success
    md = (tmp_path / "session.md").read_text("utf-8")
    assert md.startswith("### analysis.ipynb — agent session") and "There is one file." in md and "echo hello" in md
    messages = [m for group in role_messages().values() for m in group]
    md = export.export_markdown(messages, tmp_path / "xss.md").read_text("utf-8")
    assert markdown_problems(md) == []


# --- errors -------------------------------------------------------------------------------------------------


def test_errors_are_one_line_and_leave_nothing_half_written(shell, capsys, tmp_path, monkeypatch):
    run_session(shell)
    for words, said in [
        ("session.txt", "cannot export to '.txt'"),
        ("session", "without extension"),
        ("session.html --tree", "--tree is for a .jsonl"),
        ("", "usage: %agent_session"),
        ("a.html b.html", "usage: %agent_session"),
        ("no/such/folder/s.html", "cannot export to no/such/folder/s.html: no folder no/such/folder"),
    ]:
        result, _ = run_export(shell, capsys, words)
        assert isinstance(result.error_in_exec, UsageError), words
        assert said in str(result.error_in_exec) and "\n" not in str(result.error_in_exec), words
    own = shell.session.file.path
    result, _ = run_export(shell, capsys, str(own))  # replacing it would lose what the session appends next
    assert isinstance(result.error_in_exec, UsageError) and "the session's own file" in str(result.error_in_exec)
    assert shell.cell("%bash echo still recorded").success and "still recorded" in own.read_text("utf-8")
    (tmp_path / "dir.html").mkdir()
    result, _ = run_export(shell, capsys, "dir.html")
    assert isinstance(result.error_in_exec, UsageError) and "is a folder" in str(result.error_in_exec)
    # an existing file is replaced, as Pi's /export does
    (tmp_path / "old.md").write_text("old")
    assert run_export(shell, capsys, "old.md")[0].success
    assert "There is one file." in (tmp_path / "old.md").read_text("utf-8")
    # a failure while writing leaves the old file and no temporary file
    (tmp_path / "keep.html").write_text("keep")
    entries = sorted(os.listdir(tmp_path))

    def broken(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export.os, "replace", broken)
    for name in ("keep.html", "keep.jsonl"):
        result, _ = run_export(shell, capsys, name)
        assert isinstance(result.error_in_exec, UsageError) and "No space left on device" in str(result.error_in_exec)
    assert (tmp_path / "keep.html").read_text() == "keep" and sorted(os.listdir(tmp_path)) == entries


def test_missing_bundles_say_how_to_build_them(tmp_path, monkeypatch):
    monkeypatch.setattr(export, "STATIC", tmp_path)
    with pytest.raises(ExportError, match="npm run build"):
        pi_notebook.export_html([UserMessage(content="x")], tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()
