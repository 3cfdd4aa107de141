"""What the kernel records survives a run in progress, a crash, and a file that cannot be written (#11 items 2, 3)."""

import json
import shutil
import subprocess
import sys
import textwrap
import threading

from pi_notebook.ai import faux
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.notebook.config import PiNotebook
from pi_notebook.notebook.kernel import NotebookSession


def file_messages(path):
    """(role, text) of every message entry in file order: commands by their command, others by their first text."""
    out = []
    for line in path.read_text().splitlines()[1:]:
        entry = json.loads(line)
        if entry["type"] != "message":
            continue
        m = entry["message"]
        if m["role"] == "bashExecution":
            out.append(("bashExecution", m["command"]))
        else:
            content = m["content"]
            out.append((m["role"], content if isinstance(content, str) else content[0].get("text", "")))
    return out


def test_a_command_run_while_the_agent_streams_is_durable_at_once_and_keeps_its_place(shell, monkeypatch, tmp_path):
    monkeypatch.setattr(faux.provider, "tokens_per_second", 40)
    monkeypatch.setattr(faux.provider, "chunk_chars", 4)
    faux.set_responses(["word " * 60])
    session = shell.session
    streaming = threading.Event()
    session.agent.subscribe(lambda e: streaming.set() if e.type == "message_update" else None)
    run = threading.Thread(target=lambda: session.run_prompt("Talk for a while.", model=faux.model(), tools=[]))
    run.start()  # the agent in a background thread, as a user may run it
    assert streaming.wait(10)
    shell.cell("%bash echo during-the-run")
    # A crash now must not lose it: a copy of the files as they are opens with the command in its history.
    crash = tmp_path / "crashed"
    crash.mkdir()
    for source in session.file.path.parent.iterdir():
        shutil.copy(source, crash / source.name)
    assert session.agent.is_streaming, "the run ended before the check: the test proves nothing"
    copy = crash / session.file.path.name
    reopened = NotebookSession(SessionFile.open(copy), PiNotebook(), cwd=str(tmp_path))
    assert [m.command for m in reopened.messages if m.role == "bashExecution"] == ["echo during-the-run"]
    assert "recovered 1 message" in reopened.note
    reopened.file.close()
    assert [c for role, c in file_messages(copy) if role == "bashExecution"] == ["echo during-the-run"]
    run.join(30)
    shell.cell("%bash echo after-the-run")
    # Pi's rule for the context (not inside the run's turns), and the order the user ran things in, in the file.
    assert [role for role, _ in file_messages(session.file.path)] == [
        "user", "assistant", "bashExecution", "bashExecution"
    ]  # fmt: skip
    assert [c for r, c in file_messages(session.file.path) if r == "bashExecution"] == [
        "echo during-the-run", "echo after-the-run"
    ]  # fmt: skip
    assert not list(session.file.path.parent.glob("*.pending"))


# Both scripts limit the size of the files the process may write (RLIMIT_FSIZE). They must not write bytecode:
# a module first imported under the limit would leave a cut .pyc in the checkout, which every later import of it
# (in any process) fails on ("marshal data too short").
SCRIPT = textwrap.dedent("""
    import json, resource, signal, sys
    sys.dont_write_bytecode = True
    from IPython.core.interactiveshell import InteractiveShell
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of a kill
    ip = InteractiveShell.instance()
    ip.user_ns["__session__"] = "analysis.ipynb"
    ip.run_line_magic("load_ext", "pi_notebook")
    import pi_notebook
    from pi_notebook.ai import faux
    session = pi_notebook.current_session()
    ip.run_cell("%bash echo before")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (session.file.path.stat().st_size + 40, hard))
    faux.set_responses(["The answer, " + "at some length. " * 30])
    result = ip.run_cell("%%agent --model faux/faux-1 --tools none\\nA question?")
    failed = type(result.error_in_exec).__name__
    try:
        session.check_saved()
        message = ""
    except Exception as e:
        message = str(e)
    in_memory = [m.role for m in session.messages]
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # writing works again
    ip.run_cell("%bash echo after")
    print(json.dumps({"failed": failed, "message": message, "in_memory": in_memory,
                      "path": str(session.file.path)}))
""")


def test_a_session_file_that_cannot_be_written_keeps_everything_and_writes_it_later(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "IPYTHONDIR": str(tmp_path / "ipython")}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["failed"] == "SessionWriteError"  # the cell fails, in one line
    assert report["message"].startswith("could not write analysis.jsonl (File too large); 2 messages kept in memory")
    assert report["in_memory"] == ["bashExecution", "user", "assistant"]
    path = tmp_path / ".pi_sessions" / "analysis.jsonl"
    assert str(path) == report["path"]
    # Once writing works, the next magic writes the backlog first, then its own message: nothing lost, in order.
    assert file_messages(path) == [
        ("bashExecution", "echo before"), ("user", "A question?"),
        ("assistant", "The answer, " + "at some length. " * 30), ("bashExecution", "echo after"),
    ]  # fmt: skip
    reopened = SessionFile.open(path, readonly=True)
    assert reopened.warnings == [] or all("cut" not in str(w) for w in reopened.warnings)
    assert [m.role for m in reopened.build_session_context().messages] == [
        "bashExecution", "user", "assistant", "bashExecution"
    ]  # fmt: skip


FAILED_APPEND = textwrap.dedent("""
    import json, os, resource, signal, sys
    sys.dont_write_bytecode = True
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    from pi_notebook.ai import UserMessage
    from pi_notebook.coding_agent.session import SessionFile
    f = SessionFile.create("s.jsonl", cwd=".")
    f.append_message(UserMessage(content="first"))
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize("s.jsonl") + 40, hard))  # room for part of a line
    try:
        f.append_message(UserMessage(content="second " * 20))
    except OSError as e:
        print(e.strerror)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    f.append_message(UserMessage(content="third"))
""")


def test_a_failed_append_leaves_no_part_of_its_line_behind(tmp_path):
    # A buffered writer would keep the refused bytes and write them with the next entry: a second copy of the
    # message on a sibling branch. The file must hold exactly what was appended successfully.
    out = subprocess.run([sys.executable, "-c", FAILED_APPEND], cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.strip() == "File too large", out.stderr[-2000:]
    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(line.startswith('{"type":') for line in lines)
    reopened = SessionFile.open(tmp_path / "s.jsonl", readonly=True)
    assert [m.content for m in reopened.build_session_context().messages] == ["first", "third"]
    assert reopened.warnings == []
