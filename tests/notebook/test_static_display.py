"""``pi_notebook.show()`` and ``pi_notebook.inspect()`` run headless (nbclient, as ``jupyter nbconvert --execute``
runs a notebook): the saved notebook holds their saved form only (the JSON the JupyterLab extension draws,
``text/html`` for GitHub, ``text/plain``), no widget view and no copy of the widget code in its widget state; the
inspector still follows the converters, so ``insp.rows`` in a later cell answers for the new pipeline."""

from __future__ import annotations

import json

import nbformat
from nbclient import NotebookClient

from pi_notebook.notebook.static_display import DISCARDED_ESM, WIDGET_VIEW

CELLS = [
    "import pi_notebook\nfrom pi_notebook.coding_agent import BashExecutionMessage\n"
    "from pi_notebook.agent_core import message_type, register_message_type\n"
    "history = [BashExecutionMessage(command='make lint', output='E501 line too long', exit_code=2)]",
    "pi_notebook.show(history, title='A failed lint')",
    "insp = pi_notebook.inspect(history)\ninsp",
    "from pi_notebook.lessons.shows import shows\nshows(_, translated=[0], messages=1)  # check: _ is it",
    "mine = pi_notebook.notebook.widgets.TranscriptWidget(history)\nunshown = pi_notebook.inspect(history)\nmine",
    "pi_bash = message_type('bashExecution').to_llm\n"
    "register_message_type(BashExecutionMessage, to_llm=lambda m: None, replace=True)\n"
    "print([row['status'] for row in insp.rows])\n"
    "register_message_type(BashExecutionMessage, to_llm=pi_bash, replace=True)\n"
    "print([row['status'] for row in insp.rows])",
]
SAVED = {"application/vnd.pi-notebook.transcript+json", "application/vnd.pi-notebook.inspector+json"}


def test_a_headless_run_saves_the_static_forms_and_no_widget_code(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    for index, mime in (
        (1, "application/vnd.pi-notebook.transcript+json"),
        (2, "application/vnd.pi-notebook.inspector+json"),
    ):
        (shown,) = nb.cells[index].outputs
        assert WIDGET_VIEW not in shown["data"], index
        assert {mime, "text/html", "text/plain"} <= set(shown["data"]), index
    assert "make lint" in "".join(nb.cells[1].outputs[0]["data"]["text/html"])
    assert "translated" in "".join(nb.cells[2].outputs[0]["data"]["text/html"])
    # The detached inspector followed the converter set and put back: dropped, then translated again.
    assert nb.cells[5].outputs[0]["text"] == "['dropped']\n['translated']\n"
    assert nb.cells[3].outputs == []
    (mine,) = nb.cells[4].outputs  # a widget made with its comm shows its saved form too, then leaves
    assert WIDGET_VIEW not in mine["data"] and "make lint" in "".join(mine["data"]["text/html"])
    states = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    # show() and inspect() opened no comm (the inspector never shown included); the widget made directly left
    # its model and its layout's, emptied: no script, no message.
    assert len(states) == 2, list(states)
    for state in states.values():
        assert state["state"].get("_esm", DISCARDED_ESM) == DISCARDED_ESM
        assert not state["state"].get("_css")
    saved = json.dumps(nb.metadata.get("widgets", {}))
    assert "make lint" not in saved and len(saved) < 4_000
