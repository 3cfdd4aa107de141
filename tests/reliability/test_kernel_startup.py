"""%load_ext always starts, says what it found in one line each, and never follows a pointer to a non-session."""

import shutil

import pi_notebook
from pi_notebook.ai import UserMessage


def restart(shell):
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    return pi_notebook.current_session()


def test_a_damaged_line_is_told_once_in_one_line_and_costs_only_itself(shell, capsys):
    shell.cell("%bash echo one")
    shell.cell("%bash echo two")
    path = shell.session.file.path
    lines = path.read_text().splitlines()
    lines.insert(2, '{"type": "message", "id": "torn')  # a line cut in the middle of the file
    path.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    session = restart(shell)
    shown = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(shown) == 1 and shown[0].startswith("pi_notebook: ") and "line 3" in shown[0], shown
    assert [m.command for m in session.messages if m.role == "bashExecution"] == ["echo one", "echo two"]
    shell.cell("%agent_session")
    assert "warning: line 3: not valid JSON" in capsys.readouterr().out  # %agent_session lists them all


def test_a_session_folder_that_cannot_be_created_records_elsewhere_and_says_so(shell, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shutil.rmtree(tmp_path / ".pi_sessions")
    (tmp_path / ".pi_sessions").write_text("a file where the session folder should be")
    capsys.readouterr()
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    out = capsys.readouterr().out
    session = pi_notebook.current_session()
    assert session.file.path.parent == tmp_path / "home" / ".pi_notebook" / "sessions"
    assert out.count("\n") == 1 and "cannot write" in out and "exists" in out, out
    shell.cell("%bash echo still-recorded")
    assert "still-recorded" in session.file.path.read_text()


def test_a_pointer_to_a_file_that_is_not_a_session_is_not_followed(shell, tmp_path):
    shell.cell("%bash echo in-the-default")
    default = shell.session.file.path
    notes = tmp_path / "notes.py"
    notes.write_text("print('not a session')\n")
    (default.parent / "analysis.current").write_text(str(notes) + "\n")  # what an old version could leave
    session = restart(shell)
    assert session.file.path == default
    assert notes.read_text() == "print('not a session')\n"


def test_a_session_whose_file_was_closed_can_still_switch_and_keeps_the_message(shell):
    session = shell.session
    old = session.file.path
    session.file.close()  # e.g. closed from another cell by mistake
    session.record(UserMessage(content="said while the file was closed", timestamp=1))
    assert session.messages[-1].content == "said while the file was closed"
    shell.cell("%agent_session new")  # not stuck: the new file takes what the old one could not
    session = pi_notebook.current_session()
    assert session.file.path != old
    assert "said while the file was closed" in session.file.path.read_text()
