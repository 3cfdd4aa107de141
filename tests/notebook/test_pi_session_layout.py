"""Sessions shared with Pi, through a real IPython shell: ``%agent_session open [N]`` lists and opens Pi's
sessions for the kernel's directory, and ``session_layout = "pi"`` puts the notebook's sessions where
``pi -c`` and ``/resume`` look, as drafts until Pi can continue them without duplicating them."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from IPython.core.error import UsageError

import pi_notebook
from pi_notebook.agent_core import to_pi_json
from pi_notebook.ai import faux
from pi_notebook.coding_agent.pi_sessions import list_pi_sessions, pi_session_dir
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_entries import SessionWarning
from pi_notebook.notebook.config import PiNotebook

PI_FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi" / "sessions"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture(autouse=True)
def pi_home(tmp_path, monkeypatch):
    """Pi's agent dir in tmp_path: nothing real is read or written."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    return tmp_path / "agent"


@pytest.fixture
def pi_shell(shell):
    """The shell restarted with ``c.PiNotebook.session_layout = "pi"`` in its IPython config."""
    shell.ip.config.PiNotebook.session_layout = "pi"
    try:
        _restart(shell)
        yield shell
    finally:
        shell.ip.config.PiNotebook.pop("session_layout", None)


def _restart(shell):
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    return pi_notebook.current_session()


def _pi_file(cwd: str, fixture: str) -> Path:
    """A session file exactly as Pi wrote it, in Pi's folder for ``cwd``."""
    folder = pi_session_dir(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(PI_FIXTURES / fixture, folder / fixture))


def _pi_context(fixture: str) -> list[dict]:
    """The messages Pi's own loader gives for the file at its leaf."""
    cases = json.loads((PI_FIXTURES / "expected.json").read_text())
    return next(c for c in cases if c["file"] == fixture)["expected"]["messages"]


def _error(result) -> str:
    assert isinstance(result.error_in_exec, UsageError), result.error_in_exec
    return str(result.error_in_exec)


# --- %agent_session open -------------------------------------------------------------------------------


def test_open_lists_pis_sessions_for_this_directory_newest_first(shell, capsys):
    cwd = os.getcwd()
    _pi_file(cwd, "labels_session_info.jsonl")  # last activity 2026-03-01 18:01
    _pi_file(cwd, "compaction_single.jsonl")  # 2026-03-01 14:00, earlier
    _pi_file(str(Path(cwd) / "elsewhere"), "branch_summary.jsonl")  # another directory's session
    capsys.readouterr()
    shell.cell("%agent_session open")
    lines = capsys.readouterr().out.splitlines()
    assert cwd in lines[0] and str(pi_session_dir(cwd)) in lines[0]
    assert re.fullmatch(r"   1  \d{4}-\d\d-\d\d \d\d:\d\d     6 msgs  Name a cat\.", lines[1])
    assert re.fullmatch(r"   2  .*  Refactor utils\.py\.", lines[2])
    assert len(lines) == 4 and "Set up a Python project" not in "\n".join(lines)


def test_open_n_loads_that_session_and_the_notebook_continues_it(shell, capsys):
    cwd = os.getcwd()
    path = _pi_file(cwd, "labels_session_info.jsonl")
    shell.cell("%agent_session open 1")
    assert shell.session.file.path == path
    assert [to_pi_json(m) for m in shell.session.messages] == _pi_context("labels_session_info.jsonl")
    faux.set_responses(["Biscuit."])
    shell.agent("And a fourth?")
    tail = [json.loads(line)["message"] for line in path.read_text().splitlines()[-2:]]
    assert (tail[0]["role"], tail[0]["content"]) == ("user", [{"type": "text", "text": "And a fourth?"}])
    assert (tail[1]["role"], tail[1]["content"][0]["text"]) == ("assistant", "Biscuit.")
    capsys.readouterr()
    shell.cell("%agent_session open")
    assert capsys.readouterr().out.splitlines()[1].startswith("*  1")  # the open one is marked
    assert _restart(shell).file.path == path  # a restarted kernel comes back to it


def test_open_misuse_is_a_one_line_usage_error(shell, capsys):
    capsys.readouterr()
    shell.cell("%agent_session open")
    assert capsys.readouterr().out.startswith(f"no Pi sessions for {os.getcwd()}")
    assert _error(shell.cell("%agent_session open 1")).startswith("no Pi session 1 for")
    _pi_file(os.getcwd(), "compaction_single.jsonl")
    for word in ("0", "2"):
        message = _error(shell.cell(f"%agent_session open {word}"))
        assert "\n" not in message and "numbers: 1 to 1" in message
    assert _error(shell.cell("%agent_session open a b")).startswith("usage:")


@pytest.mark.filterwarnings("ignore::pi_notebook.coding_agent.session_entries.SessionWarning")
def test_a_file_pi_duplicated_opens_with_each_message_once(shell, capsys):
    # Pi continued a %bash-only file: the header and the command again, then its prompt and reply.
    cwd = os.getcwd()
    shell.cell("%bash echo one")
    shell.cell("%bash echo two")
    lines = shell.session.file.path.read_text().splitlines()
    pi_lines = (PI_FIXTURES / "labels_session_info.jsonl").read_text().splitlines()
    user, reply = (json.loads(line) for line in pi_lines if '"id":"348becc4"' in line or '"id":"e4c6ba30"' in line)
    user["parentId"] = json.loads(lines[-1])["id"]
    folder = pi_session_dir(cwd)
    folder.mkdir(parents=True)
    duplicated = lines + lines + [json.dumps(user), json.dumps(reply)]
    (folder / "dup.jsonl").write_text("\n".join(duplicated) + "\n")
    capsys.readouterr()
    shell.cell("%agent_session open 1")
    out = capsys.readouterr().out
    assert [m.role for m in shell.session.messages] == ["bashExecution", "bashExecution", "user", "assistant"]
    warnings = [line for line in out.splitlines() if line.startswith(("warning:", "..."))]
    assert 1 <= len(warnings) <= 6  # said, in a few lines however long the file


def test_a_long_list_of_loading_warnings_is_cut_short(shell, capsys):
    folder = pi_session_dir(os.getcwd())
    folder.mkdir(parents=True)
    lines = (PI_FIXTURES / "labels_session_info.jsonl").read_text().splitlines()
    (folder / "s.jsonl").write_text("\n".join([lines[0], *["{not json"] * 8, *lines[1:]]) + "\n")
    capsys.readouterr()
    with pytest.warns(SessionWarning):
        shell.cell("%agent_session open 1")
    out = capsys.readouterr().out.splitlines()
    assert [line.startswith("warning: line ") for line in out[:6]] == [True] * 5 + [False]
    assert out[5] == "... and 3 more warnings (current_session().file.warnings)"
    assert len(shell.session.file.warnings) == 8 and len(shell.session.messages) == 6


# --- session_layout = "pi" -----------------------------------------------------------------------------


def test_a_notebook_session_lands_in_pis_folder_named_as_pi_names_it(pi_shell, capsys):
    cwd = os.getcwd()
    draft = pi_shell.session.file.path
    folder = "--" + cwd[1:].replace("/", "-") + "--"  # written out: /tmp/x/y → --tmp-x-y--
    assert draft.parent == Path(os.environ["PI_CODING_AGENT_DIR"]) / "sessions" / folder
    assert draft.name.endswith(".jsonl.draft")
    pointer = pi_shell.notebook.parent / ".pi_sessions" / "analysis.current"
    assert pointer.read_text().strip() == str(draft)
    pi_shell.cell("%bash echo before any reply")
    assert pi_shell.session.file.path == draft and list_pi_sessions(cwd) == []  # Pi would duplicate it now
    capsys.readouterr()
    pi_shell.cell("%agent_session open")
    assert (
        capsys.readouterr().out.splitlines()[-1]
        == "this notebook's session is a draft: Pi lists it once it holds a reply"
    )
    faux.set_responses(["Hello."])
    pi_shell.agent("Hi there")
    published = pi_shell.session.file.path
    header = json.loads(published.read_text().splitlines()[0])
    stamp = header["timestamp"].replace(":", "-").replace(".", "-")
    assert published == draft.parent / f"{stamp}_{header['id']}.jsonl"
    assert re.fullmatch(rf"\d{{4}}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{{3}}Z_{UUID}\.jsonl", published.name)
    assert not draft.exists() and pointer.read_text().strip() == str(published)
    assert [s.path for s in list_pi_sessions(cwd)] == [published]  # what `pi -c` and /resume find
    entries = [json.loads(line) for line in published.read_text().splitlines()]
    assert [e["type"] for e in entries] == ["session", "message", "model_change", "message", "message"]
    assert len({e["id"] for e in entries}) == 5  # each once
    session = _restart(pi_shell)
    assert session.file.path == published
    assert [m.role for m in session.messages] == ["bashExecution", "user", "assistant"]


def test_new_sessions_follow_the_layout_set_at_run_time(shell):
    shell.cell("%agent_config session_layout=pi")
    shell.cell("%agent_session new")
    assert shell.session.file.path.parent == pi_session_dir(os.getcwd())
    assert shell.session.file.path.name.endswith(".jsonl.draft")
    shell.cell("%agent_config session_layout=notebook")
    shell.cell("%agent_session new")
    assert shell.session.file.path.parent == shell.notebook.parent / ".pi_sessions"


def test_a_session_held_by_another_kernel_continues_in_a_full_copy_never_a_bare_header(pi_shell):
    faux.set_responses(["Hello."])
    pi_shell.agent("Hi")
    published = pi_shell.session.file.path
    pi_shell.ip.run_line_magic("unload_ext", "pi_notebook")
    with SessionFile.open(published):  # another kernel has it
        pi_shell.ip.run_line_magic("load_ext", "pi_notebook")
        session = pi_notebook.current_session()
        # The copy holds the whole history (with its assistant reply), so Pi can continue it without writing it
        # twice: it is published under Pi's name at once, and never sits in Pi's folder as a bare header.
        copy = session.file.path
        assert session.note and copy != published and copy.name.endswith(".jsonl")
        assert [m.role for m in session.messages] == ["user", "assistant"]
        assert sorted(s.path for s in list_pi_sessions(os.getcwd())) == sorted([published, copy])
        assert all(len(p.read_text().splitlines()) > 1 for p in copy.parent.glob("*.jsonl*"))


def test_a_bad_session_layout_is_a_one_line_usage_error(shell):
    message = _error(shell.cell("%agent_config session_layout=tree"))
    assert message == "session_layout: session_layout must be notebook or pi, not 'tree'"
    with pytest.raises(ValueError, match="notebook or pi"):  # c.PiNotebook.session_layout is checked too
        PiNotebook(session_layout="tree")
