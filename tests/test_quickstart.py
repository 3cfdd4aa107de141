"""The quickstart, run as a newcomer runs it (a fresh copy, every cell in order, offline), ends in real answers:
every ``%%agent`` prompt it sends gets an assistant reply with text as its last message, never an error, a
turn-limit notice or an unanswered tool call; and the answers are right (the folder's files, the first todo item,
and the value of a variable defined in a cell above, read through the ``vars`` tool)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from pi_notebook.coding_agent.agent_session import NOTICE
from pi_notebook.coding_agent.session import SessionFile

ROOT = Path(__file__).resolve().parent.parent


def test_every_agent_cell_of_the_quickstart_ends_in_an_answer(tmp_path, monkeypatch):
    for key in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)  # offline: the embedded model only
    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder, ignore=shutil.ignore_patterns(".pi_sessions", ".ipynb_checkpoints"))
    path = folder / "00-quickstart.ipynb"
    nb = nbformat.read(path, as_version=4)
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))  # as JupyterLab tells the kernel which notebook it runs
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    prompts = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%agent")]
    assert len(prompts) >= 2
    (session_path,) = (folder / ".pi_sessions").glob("*.jsonl")
    messages = SessionFile.open(session_path).build_session_context().messages
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    assert len(starts) == len(prompts)
    answers = []
    for start, end in zip(starts, [*starts[1:], len(messages)], strict=True):
        # the session's notices to the user (what the offline model is not sent) follow the reply, and the cells
        # run before the next prompt (notebookCell messages) are not part of this run
        run = [m for m in messages[start:end] if getattr(m, "custom_type", None) != NOTICE and m.role != "notebookCell"]
        last = run[-1]
        assert last.role == "assistant", f"{run[0].content} ended with {last.role}"
        text = "".join(b.text for b in last.content if b.type == "text").strip()
        assert last.stop_reason == "stop" and text, f"{run[0].content} got {last.stop_reason}: {last.error_message}"
        answers.append(text)
    # the answers are right: the listing names the files, the first todo item is milk
    # (the 135M model names two of demo/'s three files: it must name no file that is not there, and not echo the
    # tool output's scaffolding, which once padded its answer with the whole listing)
    demo = {p.name for p in (folder / "demo").iterdir()}
    named = set(re.findall(r"[\w-]+\.\w+", answers[0]))
    assert len(named & demo) >= 2 and named <= demo, answers[0]
    assert "output of" not in answers[0].lower(), answers[0]
    assert "milk" in answers[1].lower(), answers[1]
    # the question about a variable defined in a cell above is answered through the vars tool, with its value
    (asked,) = [i for i, c in enumerate(prompts) if "total" in c.source]
    calls = [
        b.name for m in messages[starts[asked] :] if m.role == "assistant" for b in m.content if b.type == "toolCall"
    ]
    assert "vars" in calls, calls
    assert "58" in answers[asked], answers[asked]  # total = the characters of demo/todo.txt's lines
