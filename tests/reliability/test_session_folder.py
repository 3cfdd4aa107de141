"""A session folder where no session file can be created is refused at once, and creating one failing later is
one line (#21, failure 5).

``%agent_config session_dir=/proc`` was accepted (the folder exists and, for root, ``os.access`` says yes); the
next ``%agent_session new`` failed with a ``FileNotFoundError`` traceback. Now the setting creates and removes a
file there before it is accepted, and ``%agent_session new`` / ``%%agent --new`` say in one line why no new
session file could be made (the folder replaced since, turned into a link to ``/proc``...), keeping the current
session. A real IPython shell, real folders; nothing is mocked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

import pi_notebook
from pi_notebook.ai import faux


def one_line_usage_error(shell, code: str, capsys) -> str:
    capsys.readouterr()
    result = shell.cell(code)
    out, err = capsys.readouterr()
    assert isinstance(result.error_in_exec, UsageError), (code, result.error_in_exec)
    text = str(result.error_in_exec)
    assert "\n" not in text and (err + out).strip() == f"UsageError: {text}", err + out
    return text


@pytest.mark.parametrize("folder", ["/proc", "/proc/self", "/sys"])
def test_a_folder_that_takes_no_files_is_refused_when_set(shell, capsys, folder):
    text = one_line_usage_error(shell, f"%agent_config session_dir={folder}", capsys)
    assert text.startswith(f"session_dir: cannot create a session file in {folder}: ")
    if folder.startswith("/proc"):
        assert text.endswith(": it takes no new files")
    assert shell.session.config.session_dir == ".pi_sessions"
    shell.cell("%agent_session new")  # before: a FileNotFoundError traceback here
    assert shell.session.file.path.parent == shell.notebook.parent / ".pi_sessions"


def test_a_folder_that_takes_files_is_accepted_and_left_as_it_was(shell, tmp_path):
    shell.cell(f"%agent_config session_dir={tmp_path / 'kept'}")
    assert shell.session.config.session_dir == str(tmp_path / "kept")
    assert list((tmp_path / "kept").iterdir()) == []  # the probe file is gone


def test_ipython_config_naming_proc_keeps_the_default_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.PiNotebook.session_dir = "/proc"
    ip = InteractiveShell.instance()
    old_config = ip.config
    ip.config = config
    try:
        capsys.readouterr()
        ip.run_line_magic("load_ext", "pi_notebook")
        err = capsys.readouterr().err
        assert err.strip() == (
            "pi_notebook: c.PiNotebook.session_dir = '/proc' is ignored (cannot create a session file in /proc: "
            "it takes no new files); using '.pi_sessions'"
        )
        assert pi_notebook.current_session().config.session_dir == ".pi_sessions"
    finally:
        ip.run_line_magic("unload_ext", "pi_notebook")
        ip.config = old_config


def _replace_by_a_file(folder: Path) -> None:
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.write_text("not a folder any more\n")


def _replace_by_a_link_to_proc(folder: Path) -> None:
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.symlink_to("/proc")


@pytest.mark.parametrize(
    ("change", "said"),
    [(_replace_by_a_file, "File exists ({folder})"), (_replace_by_a_link_to_proc, "No such file or directory")],
    ids=["a file in its place", "a link to /proc"],
)
def test_new_session_failing_later_is_one_line_and_keeps_the_current_session(shell, capsys, tmp_path, change, said):
    folder = tmp_path / "sessions"
    shell.cell(f"%agent_config session_dir={folder}")
    faux.set_responses(["first"])
    shell.agent("hello")
    current = shell.session.file.path
    change(folder)  # after the setting was accepted: another program, a cleanup script...

    # Before: a FileNotFoundError / FileExistsError traceback from deep in SessionFile.create.
    for code, what in [
        ("%agent_session new", "%agent_session new"),
        ("%%agent --model faux/faux-1 --tools none --new\nstart over", "%%agent --new"),
    ]:
        text = one_line_usage_error(shell, code, capsys)
        assert text.startswith(f"{what}: cannot create the session file {os.path.realpath(folder)}/analysis-")
        assert text.endswith(f": {said.format(folder=os.path.realpath(folder))}; the current session is kept")
        assert shell.session.file.path == current
        assert [m.role for m in shell.session.messages] == ["user", "assistant"] and len(faux.calls) == 1

    faux.set_responses(["still here"])
    shell.agent("and now?")  # the current session still records
    assert [m.role for m in shell.session.messages] == ["user", "assistant"] * 2
