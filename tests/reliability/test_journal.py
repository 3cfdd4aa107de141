"""The journal of messages recorded during a run is removed once they are all in the session file, and a journal
left behind never brings a message back twice (#21, failure 7).

A ``%bash`` (or any ``record()``) while a run streams waits in ``<session>.jsonl.pending`` until the run ends.
Before: when writing failed at the end of the run and the backlog was written later, the journal stayed, and the
next kernel "recovered" the already-written message a second time, out of order; the same if the kernel died
between writing the messages and removing the journal.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from pi_notebook.ai import faux
from pi_notebook.coding_agent import AgentSession, BashExecutionMessage, SessionSettings
from pi_notebook.coding_agent.session_writer import journal_path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import asyncio, json, os, resource, signal, sys
    sys.dont_write_bytecode = True
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    from pi_notebook.ai import faux
    from pi_notebook.coding_agent import AgentSession, BashExecutionMessage, SessionSettings
    from pi_notebook.coding_agent.session_writer import journal_path

    session = AgentSession.open("s.jsonl", SessionSettings(default_model="faux/faux-1"))
    faux.set_responses(["An answer."])
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    journal = journal_path(session.file.path)

    def on_event(event):
        if event.type == "message_start" and event.message.role == "user":
            session.record(BashExecutionMessage(command="echo during", output="during", exit_code=0))
            # From now on the session file cannot grow (the journal, already written, is not touched again).
            resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize("s.jsonl"), hard))

    asyncio.run(session.prompt("A question?", tools=[], on_event=on_event))
    kept = journal.exists() and len(session.writer.unsaved)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    session.record(BashExecutionMessage(command="echo after", output="after", exit_code=0))  # the backlog first
    print(json.dumps({"kept_while_unwritten": bool(kept), "journal_after": journal.exists(),
                      "unsaved": len(session.writer.unsaved)}))
    session.close()
""")


def roles_and_commands(session: AgentSession) -> list[str]:
    return [m.command if m.role == "bashExecution" else m.role for m in session.messages]


def test_a_backlog_written_later_removes_the_journal_and_nothing_comes_back_twice(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"kept_while_unwritten": True, "journal_after": False, "unsaved": 0}
    again = AgentSession.open(tmp_path / "s.jsonl", cwd=str(tmp_path))  # the next kernel
    try:
        # Once each, in the order they joined the history (what was recorded during the run, after it).
        assert roles_and_commands(again) == ["user", "assistant", "echo during", "echo after"]
        assert again.note is None or "recovered" not in again.note
    finally:
        again.close()


def test_a_journal_left_by_a_kernel_that_died_after_writing_brings_nothing_back_twice(tmp_path, fresh_faux):
    session = AgentSession.open(tmp_path / "s.jsonl", SessionSettings(default_model="faux/faux-1"), cwd=str(tmp_path))
    during = BashExecutionMessage(command="echo during", output="during", exit_code=0)
    faux.set_responses(["An answer."])

    def on_event(event):
        if event.type == "message_start" and event.message.role == "user":
            session.record(during)

    asyncio.run(session.prompt("A question?", tools=[], on_event=on_event))
    journal = journal_path(session.file.path)
    assert not journal.exists()  # written at the end of the run: removed
    # The kernel died after writing the messages and before removing the journal:
    journal.write_text(json.dumps(during.to_pi_json()) + "\n", encoding="utf-8")
    session.close()
    again = AgentSession.open(tmp_path / "s.jsonl", cwd=str(tmp_path))
    try:
        assert [c for c in roles_and_commands(again) if c.startswith("echo")] == ["echo during"]
        assert not journal.exists()
    finally:
        again.close()


def test_a_journal_of_a_kernel_that_died_mid_run_is_still_recovered(tmp_path):
    path = tmp_path / "s.jsonl"
    AgentSession.open(path, cwd=str(tmp_path)).close()
    lost = BashExecutionMessage(command="echo lost", output="lost", exit_code=0)
    journal_path(path).write_text(json.dumps(lost.to_pi_json()) + "\n", encoding="utf-8")
    again = AgentSession.open(path, cwd=str(tmp_path))
    try:
        assert roles_and_commands(again) == ["echo lost"] and "recovered 1 message" in (again.note or "")
        assert not journal_path(path).exists()
    finally:
        again.close()
