"""A session file holding ``notebookCell`` entries, read by a program that does not know the role — as Pi reads it.

Pi's ``convertToLlm`` (``packages/coding-agent/src/core/messages.ts``) returns nothing for a role it does not know,
and its session manager keeps every message entry as written. A process here that imports the coding agent but
not the notebook app is such a reader: it must keep the entries (and write them back unchanged) and leave them out
of the LLM's context, while the notebook app, reading the same file, sends them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_notebook.coding_agent import AgentSession, BashExecutionMessage
from pi_notebook.notebook.cell_message import CellError, NotebookCellMessage

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_THE_APP = """
import json, sys
from pi_notebook.coding_agent import AgentSession
session = AgentSession.open(sys.argv[1], cwd=sys.argv[2])
try:
    print(json.dumps({
        "notebook_loaded": any(name.startswith("pi_notebook.notebook") for name in sys.modules),
        "roles": [m.role for m in session.messages],
        "sent": [m.to_pi_json() for m in session.llm_messages()],
    }))
finally:
    session.close()
"""


def test_a_reader_without_the_notebook_app_keeps_the_cells_and_leaves_them_out_of_the_context(tmp_path):
    folder = tmp_path / "sessions"
    session = AgentSession.open(folder, cwd=str(tmp_path))
    try:
        session.record(BashExecutionMessage(command="echo hi", output="hi\n", exit_code=0))
        session.record(
            NotebookCellMessage(
                source="d = {}\nd['b']", execution_count=2,
                error=CellError(name="KeyError", value="'b'", traceback="KeyError: 'b'"),
            )
        )  # fmt: skip
        ours = [m.to_pi_json() for m in session.llm_messages()]
    finally:
        session.close()
    assert "The cell failed with KeyError: 'b'" in json.dumps(ours)  # the notebook app sends the cell

    [file] = folder.glob("*.jsonl")
    before = file.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_THE_APP, str(folder), str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["notebook_loaded"] is False
    assert report["roles"] == ["bashExecution", "notebookCell"]  # kept, as written
    assert report["sent"] == [ours[0]]  # the shell command only: the unknown role is dropped, as Pi drops it
    assert file.read_bytes() == before  # and the file is not rewritten


def test_a_cell_weighs_what_it_sends_so_compaction_counts_it():
    # Pi's estimate counts its own roles only; an app's role counts as the messages it becomes, images included
    from pi_notebook.ai import ImageContent
    from pi_notebook.coding_agent.compaction import IMAGE_CHARS, estimate_tokens
    from pi_notebook.notebook.cell_message import notebook_cell_to_text

    cell = NotebookCellMessage(source="print('x' * 4000)", output="x" * 4000 + "\n", execution_count=1)
    assert estimate_tokens(cell) == -(-len(notebook_cell_to_text(cell)) // 4) > 1000
    plot = NotebookCellMessage(source="plot()", images=[ImageContent(data="iVBORw0KGgo=", mime_type="image/png")])
    assert estimate_tokens(plot) == -(-(len(notebook_cell_to_text(plot)) + IMAGE_CHARS) // 4)
    assert estimate_tokens(cell.model_copy(update={"exclude_from_context": True})) == 0  # never sent: weighs 0
