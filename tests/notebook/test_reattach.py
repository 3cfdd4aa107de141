"""A restarted kernel reattaches to the session the notebook used last, not always to the default file."""

import pi_notebook


def _restart(shell):
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    return pi_notebook.current_session()


def _commands(session):
    return [m.command for m in session.messages if m.role == "bashExecution"]


def test_after_agent_session_new_a_restart_comes_back_to_the_new_session(shell):
    shell.cell("%bash echo in-the-default-session")
    default = shell.session.file.path
    shell.cell("%agent_session new")
    fresh = shell.session.file.path
    assert fresh != default
    shell.cell("%bash echo in-the-new-session")
    session = _restart(shell)
    assert session.file.path == fresh
    assert _commands(session) == ["echo in-the-new-session"]


def test_after_agent_new_a_restart_comes_back_to_that_session(shell):
    shell.agent("first question")
    shell.agent("second question", options="--model faux/faux-1 --tools none --new")
    fresh = shell.session.file.path
    session = _restart(shell)
    assert session.file.path == fresh
    assert [m.content[0].text for m in session.messages if m.role == "user"] == ["second question"]


def test_opening_the_default_file_again_forgets_the_pointer(shell):
    default = shell.session.file.path
    shell.cell("%bash echo one")
    shell.cell("%agent_session new")
    shell.cell(f"%agent_session open {default}")
    assert not list(default.parent.glob("*.current"))
    assert _restart(shell).file.path == default


def test_a_pointer_to_a_deleted_session_falls_back_to_the_default(shell):
    default = shell.session.file.path
    shell.cell("%agent_session new")
    fresh = shell.session.file.path
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    fresh.unlink()
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    assert pi_notebook.current_session().file.path == default
