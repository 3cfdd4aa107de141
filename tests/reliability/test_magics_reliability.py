"""The magics never leave a notebook stuck or half-recorded (#11 items 6, 11 and 12).

6. ``%agent_session open notes.py`` (not a session) was accepted; the next ``%bash`` ran its command, failed to
   record it, and every later magic failed. Such files are refused at ``open`` (the session is kept), and a
   command whose result cannot be recorded (session closed, read-only, not a session, deleted) does not run.
11. Stopping a running ``%bash`` recorded it as cancelled but did not stop "Run All"; ``%%agent`` did. Now both
    raise a ``KeyboardInterrupt`` after recording, shown in one line.
12. ``%agent_config`` accepted a ``session_dir`` that cannot be created (a 13-frame traceback later) and
    ``max_turns=-5``; IPython config strings like ``"false"`` stopped ``%load_ext``. Now every setting is checked
    when set, in one line, and a bad ``c.PiNotebook.x`` keeps the default with a one-line warning.

A real IPython shell (and one real Jupyter kernel), real session files, real commands; the faux model.
"""

import _thread
import json
import os
import queue
import subprocess
import threading
import time
import warnings

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

import pi_notebook
from pi_notebook.ai import faux
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_entries import SessionWarning


def shown_error(shell, code: str, capsys) -> tuple[BaseException | None, str]:
    """Run a cell; return its error and what IPython showed for it (a UsageError goes to stderr, the rest to
    stdout)."""
    capsys.readouterr()
    result = shell.cell(code)
    out, err = capsys.readouterr()
    return result.error_in_exec, (err + out).strip()


def one_line_usage_error(shell, code: str, capsys) -> str:
    """Run a cell that must fail with a one-line UsageError; return the error's text."""
    error, shown = shown_error(shell, code, capsys)
    assert isinstance(error, UsageError), (code, error)
    assert "\n" not in str(error) and shown == f"UsageError: {error}", shown
    return str(error)


# --- 6. files that are not sessions, and sessions that cannot record --------------------------------------


V1_SESSION = [  # Pi's first format: no version, entries without ids
    {"type": "session", "id": "old", "timestamp": "2024-01-01T00:00:00.000Z", "cwd": "/p"},
    {"type": "message", "timestamp": "2024-01-01T00:00:01.000Z", "message": {"role": "user", "content": "hi"}},
]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"print('hello')\n", "its first line is not JSON"),
        (b"", "it is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "it is not text"),
        (b'{"type":"message","id":"a1","message":{"role":"user","content":"hi"}}\n', "a 'message' entry"),
        (b"[1, 2]\n", "a JSON array"),
        ("\n".join(json.dumps(e) for e in V1_SESSION).encode() + b"\n", "version 1 session"),
    ],
    ids=["python", "empty", "binary", "headerless-jsonl", "json-array", "v1"],
)
def test_opening_a_file_that_is_not_a_session_is_refused_and_the_session_kept(shell, capsys, content, said):
    notes = shell.notebook.parent / "notes.py"
    notes.write_bytes(content)
    current = shell.session.file.path
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        message = one_line_usage_error(shell, "%agent_session open notes.py", capsys)
    assert said in message and message.endswith("the current session is kept")
    assert not [w for w in caught if issubclass(w.category, SessionWarning)]  # nothing else said
    assert shell.session.file.path == current and notes.read_bytes() == content  # the file is left as it was
    shell.cell("%bash echo still recorded")
    assert shell.session.messages[-1].output == "still recorded\n"


def test_a_session_another_kernel_holds_is_refused_in_one_line(shell, capsys):
    other = shell.notebook.parent / "other.jsonl"
    with SessionFile.create(other):  # another kernel writes it
        message = one_line_usage_error(shell, f"%agent_session open {other}", capsys)
    assert "already open for writing" in message and shell.session.file.path != other


@pytest.fixture
def unwritable():
    """Make a file this user cannot write: read-only, and for root (whom file modes do not stop) also immutable
    (``chattr +i``, undone after the test), so the refusal is the operating system's own in both cases."""
    made = []

    def make(path):
        path.chmod(0o444)
        if os.geteuid() == 0:
            subprocess.run(["chattr", "+i", str(path)], check=True)
            made.append(path)
        return path

    yield make
    for path in made:
        subprocess.run(["chattr", "-i", str(path)], check=False)


def test_a_session_file_this_user_cannot_write_is_refused_in_one_line(shell, capsys, unwritable):
    other = shell.notebook.parent / "other.jsonl"
    SessionFile.create(other).close()
    content = other.read_bytes()
    unwritable(other)
    message = one_line_usage_error(shell, f"%agent_session open {other}", capsys)
    assert "Permission denied" in message or "Operation not permitted" in message, message
    assert shell.session.file.path != other and other.read_bytes() == content


def _close(session):
    session.file.close()


def _read_only(session):
    session.switch_to(SessionFile.open(session.file.path, readonly=True))


def _not_a_session(session):  # through the Python API, which does not refuse it
    notes = session.file.path.with_name("notes.py")
    notes.write_text("x = 1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SessionWarning)
        session.switch_to(SessionFile.open(notes))


def _deleted(session):
    session.file.path.unlink()


@pytest.mark.parametrize(
    ("break_it", "said"),
    [
        (_close, "is closed"),
        (_read_only, "readonly=True"),
        (_not_a_session, "no valid session header"),
        (_deleted, "no longer exists"),
    ],
    ids=["closed", "read-only", "not-a-session", "deleted"],
)
def test_a_command_whose_result_cannot_be_recorded_does_not_run(shell, capsys, break_it, said):
    ran = shell.notebook.parent / "ran.txt"
    break_it(shell.session)
    for magic in ("%bash", "%bash!"):
        message = one_line_usage_error(shell, f"{magic} touch {ran}", capsys)
        assert message.startswith(f"{magic} not run: the session cannot record it") and said in message
    assert not ran.exists()
    faux.set_responses(["never asked"])
    message = one_line_usage_error(shell, "%%agent --model faux/faux-1 --tools none\nhi", capsys)
    assert message.startswith("%%agent not run") and faux.calls == []
    shell.cell("%agent_session new")  # the way out the error names
    shell.cell(f"%bash touch {ran}")
    assert ran.exists() and shell.session.messages[-1].command == f"touch {ran}"


def test_a_session_closed_while_the_command_runs_fails_in_one_line_and_later_magics_too(shell, capsys):
    session = shell.session
    timer = threading.Timer(0.3, session.file.close)
    timer.start()
    error, shown = shown_error(shell, "%bash sleep 1; echo done", capsys)
    timer.join()
    assert type(error).__name__ == "SessionWriteError" and "closed" in str(error)  # said, not silently lost
    assert shown.splitlines()[-1] == f"pi_notebook: {error}" and "Traceback" not in shown
    assert session.messages[-1].output == "done\n"  # kept in memory, as the kernel keeps a refused write
    assert one_line_usage_error(shell, "%bash echo again", capsys).startswith("%bash not run")


def test_labelling_in_a_read_only_session_is_one_line(shell, capsys):
    shell.cell("%bash echo one")
    entry = shell.session.file.leaf_id
    _read_only(shell.session)
    assert "readonly=True" in one_line_usage_error(shell, f"%agent_session label {entry} first", capsys)


# --- 11. stopping %bash stops "Run All" --------------------------------------------------------------------


@pytest.mark.parametrize("magic", ["%bash", "%bash!"])
def test_stopping_bash_records_it_and_stops_run_all_in_one_line(shell, capsys, magic):
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    error, shown = shown_error(shell, f"{magic} echo started; sleep 30", capsys)
    timer.join()
    assert isinstance(error, KeyboardInterrupt)  # what makes Jupyter's Run All stop at this cell
    message = shell.session.messages[-1]
    assert message.cancelled and message.output == "started\n"
    assert (
        shown.splitlines()[-1] == "Interrupted: the command was stopped; its output so far is recorded in the session."
    )
    assert "Traceback" not in shown and "most recent call" not in shown


def test_stopping_bash_twice_stops_waiting_in_one_line(shell, capsys):
    first = threading.Timer(0.5, _thread.interrupt_main)
    second = threading.Timer(0.8, _thread.interrupt_main)
    first.start(), second.start()
    error, shown = shown_error(shell, "%bash trap '' INT TERM; sleep 3", capsys)
    first.join(), second.join()
    assert isinstance(error, KeyboardInterrupt)
    assert shown.splitlines()[-1].startswith("Interrupted: interrupted twice") and "Traceback" not in shown


def test_a_real_kernel_reports_a_stopped_bash_as_an_interrupted_cell(tmp_path):
    import jupyter_client.manager as manager

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["JPY_SESSION_NAME"] = str(tmp_path / "work.ipynb")
    km, kc = manager.start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        kc.execute_interactive("%load_ext pi_notebook", timeout=60)
        msg_id = kc.execute("%bash echo started; sleep 30")
        time.sleep(2)
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = kc.get_shell_msg(timeout=30)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "CellInterrupted"
        assert len(reply["content"]["traceback"]) == 1
    except queue.Empty:
        pytest.fail("the kernel did not answer")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# --- 12. settings checked when set ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("max_turns=-5", "max_turns: must be 0 (no limit) or more, not -5"),
        ("max_turns=many", "max_turns: expected a whole number, not 'many'"),
        ("reserve_tokens=-1", "reserve_tokens: must be 0 or more tokens"),
        ("keep_recent_tokens=-1", "keep_recent_tokens: must be 0 or more tokens"),
        ("session_dir=notes.py/sessions", "session_dir: cannot create notes.py/sessions: Not a directory"),
        ("session_dir=", "session_dir: must name a folder"),
        ("compaction=maybe", "compaction: expected true or false"),
        ("thinking=lots", "thinking: must be one of off, minimal"),
        ("default_model=nosuch/x", "default_model: Unknown provider prefix 'nosuch'"),
        ("default_model=sonnet", "default_model: Model spec 'sonnet' has no provider prefix"),
        ("branch_summary_model=nosuch/x", "branch_summary_model: Unknown provider prefix"),
    ],
)
def test_a_bad_setting_is_refused_when_set_in_one_line(shell, capsys, setting, said):
    (shell.notebook.parent / "notes.py").write_text("x = 1\n")
    name = setting.partition("=")[0]
    before = getattr(shell.session.config, name)
    message = one_line_usage_error(shell, f"%agent_config {setting}", capsys)
    assert message.startswith(said)
    assert getattr(shell.session.config, name) == before


def test_a_session_dir_that_cannot_be_created_never_reaches_a_magic(shell, capsys):
    (shell.notebook.parent / "notes.py").write_text("x = 1\n")
    shell.cell("%agent_config session_dir=notes.py/sessions")
    shell.cell("%agent_session new")  # used to fail here, 13 frames deep
    assert shell.session.file.path.parent.name == ".pi_sessions"
    shell.cell(f"%agent_config session_dir={shell.notebook.parent / 'new' / 'kept'}")
    assert (shell.notebook.parent / "new" / "kept").is_dir()  # a folder that can be created is, when set


@pytest.mark.parametrize("word", ["False", "false", "0", "no", "off", "OFF"])
def test_yes_no_settings_take_every_spelling(shell, word):
    for name in ("compaction", "warm_up", "mask_secrets"):
        shell.cell(f"%agent_config {name}={word}")
        assert getattr(shell.session.config, name) is False, (name, word)
        shell.cell(f"%agent_config {name}=yes")
        assert getattr(shell.session.config, name) is True


def test_bad_ipython_config_keeps_the_default_with_one_line_each(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.py").write_text("x = 1\n")
    config = Config()
    config.PiNotebook.max_turns = -5
    config.PiNotebook.session_dir = "notes.py/sessions"
    config.PiNotebook.thinking = "lots"
    config.PiNotebook.reserve_tokens = "many"
    config.PiNotebook.compaction = "false"  # a word, as from a config file: accepted
    config.PiNotebook.default_model = "faux/faux-1"  # good values around bad ones are kept
    ip = InteractiveShell.instance()
    old_config = ip.config
    ip.config = config
    try:
        capsys.readouterr()
        ip.run_line_magic("load_ext", "pi_notebook")
        err = capsys.readouterr().err
        settings = pi_notebook.current_session().config
    finally:
        ip.run_line_magic("unload_ext", "pi_notebook")
        ip.config = old_config
    assert (settings.max_turns, settings.session_dir, settings.thinking) == (20, ".pi_sessions", "off")
    assert (settings.reserve_tokens, settings.compaction, settings.default_model) == (16384, False, "faux/faux-1")
    lines = err.strip().splitlines()
    assert [line.split(" = ")[0] for line in lines] == [
        "pi_notebook: c.PiNotebook.max_turns",
        "pi_notebook: c.PiNotebook.session_dir",
        "pi_notebook: c.PiNotebook.thinking",
        "pi_notebook: c.PiNotebook.reserve_tokens",
    ]
    assert (
        lines[0]
        == "pi_notebook: c.PiNotebook.max_turns = -5 is ignored (must be 0 (no limit) or more, not -5); using 20"
    )
