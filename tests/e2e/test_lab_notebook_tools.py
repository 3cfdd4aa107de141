"""The agent works in the notebook (#23), in real JupyterLab and Chromium with a real kernel and a scripted model.

A user has a table ``df`` of items and prices and asks ``%%agent How many rows of df have a negative price?``. The
model looks at the namespace (``vars``), runs one line of Python in the kernel (``python``) and answers from its
result; the transcript draws the call as a cell the agent ran, with its output under it. Then ``%%agent Put the
cleaning code in a cell`` leaves a new cell below the agent's cell: not run, and nothing of it ran in the kernel.
The scripted (faux) model needs no approval.

Screenshots go to ``tests/e2e/_artifacts/``; ``PI_NOTEBOOK_UPDATE_SCREENSHOTS=1`` also refreshes the committed copy.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.lab import (
    chromium_page,
    open_notebook,
    run_cell,
    running_lab,
    set_notebook_width,
    wait_ran,
    write_notebook,
)

HERE = Path(__file__).parent
COUNT = "int((df['price'] < 0).sum())"
CLEAN = "clean = df[df['price'] >= 0]\nclean"
# The third reply is written from the python call's result, which the model receives as the last message.
SETUP = f"""%load_ext pi_notebook
%agent_config tools=read,bash,edit,write,python,vars,new_cell
import pi_notebook
from pi_notebook.ai import faux
faux.set_responses([
    [faux.tool_call("vars", {{}})],
    [faux.text("Counting them in the kernel."), faux.tool_call("python", {{"code": {COUNT!r}}})],
    lambda context: f"{{context.messages[-1].content[0].text}} rows of df have a negative price.",
    [faux.tool_call("new_cell", {{"source": {CLEAN!r}}})],
    "The cleaning code is in the cell below: read it, then run it.",
])"""
DATA = (
    "import numpy as np\n"
    "df = np.array([('tea', 3.5), ('cake', -1.0), ('jam', 2.25), ('scone', -0.5)],\n"
    "              dtype=[('item', 'U8'), ('price', 'f8')])"
)
CELLS = [
    SETUP,
    DATA,
    "%%agent --model faux/faux-1\nHow many rows of df have a negative price?",
    "%%agent --model faux/faux-1\nPut the cleaning code in a cell",
    "import pi_notebook, json\nprint(json.dumps({'roles': [m.role for m in pi_notebook.current_session().messages],"
    " 'clean': 'clean' in globals()}))",
]
ASK, CLEAN_CELL, DUMP = 2, 3, 4


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory, "tools") as server:
        yield server


def test_the_agent_reads_the_namespace_runs_python_and_hands_over_a_cell(lab):
    write_notebook(lab.root / "tools.ipynb", CELLS)
    with chromium_page(1280, 1000) as page:
        open_notebook(page, lab, "tools.ipynb")
        set_notebook_width(page)
        cells = page.locator(".jp-Notebook .jp-Cell")
        for index in (0, 1, ASK):
            run_cell(page, index)
            wait_ran(page, index)

        # How many rows of df have a negative price? vars, then python, then the answer from python's result
        asked = cells.nth(ASK)
        asked.locator(".pi-agentcell-result").first.wait_for(timeout=60_000)
        text = asked.text_content()
        assert "2 rows of df have a negative price." in text
        assert "df: numpy.ndarray, shape (4,)" in text and "fields: item (<U8), price (float64)" in text
        call = asked.locator(".pi-agentcell-call[data-tool=python]")
        assert call.locator(".pi-nbcell-prompt").inner_text() == "[agent]:"
        assert call.locator(".pi-nbcell-source").inner_text().strip() == COUNT
        result = asked.locator(".pi-agentcell-result")
        assert result.locator(".pi-nbcell-stream").inner_text().strip() == "2"
        assert result.locator(".pi-nbcell-error").count() == 0

        # Put the cleaning code in a cell: a new cell below, not run
        before = cells.count()
        run_cell(page, CLEAN_CELL)
        wait_ran(page, CLEAN_CELL)
        page.wait_for_function(f"() => document.querySelectorAll('.jp-Notebook .jp-Cell').length > {before}")
        added = cells.nth(CLEAN_CELL + 1)
        added.scroll_into_view_if_needed()
        assert added.locator(".jp-InputArea-editor").inner_text().strip() == CLEAN
        assert added.locator(".jp-InputPrompt").inner_text().strip() in ("[ ]:", "")  # never run
        assert added.locator(".jp-OutputArea-output").count() == 0
        agent = cells.nth(CLEAN_CELL)
        assert "The cleaning code is in the cell below" in agent.text_content()
        assert agent.locator(".pi-agentcell-call[data-tool=new_cell] .pi-nbcell-prompt").inner_text() == "[ ]:"

        # Nothing of the new cell ran, and the agent's python was a tool result, not a recorded cell
        dump = DUMP + 1  # (the new cell moved it down)
        run_cell(page, dump)
        wait_ran(page, dump)
        out = json.loads(cells.nth(dump).locator(".jp-OutputArea-output").text_content().strip().splitlines()[-1])
        assert out["clean"] is False
        assert out["roles"].count("notebookCell") == 1  # the DATA cell only
        assert out["roles"].count("toolResult") == 3

        page.mouse.move(0, 0)
        artifacts = HERE / "_artifacts"
        artifacts.mkdir(exist_ok=True)
        asked.scroll_into_view_if_needed()
        asked.screenshot(path=str(artifacts / "notebook-tools.png"))
        if os.environ.get("PI_NOTEBOOK_UPDATE_SCREENSHOTS") == "1":
            shutil.copyfile(artifacts / "notebook-tools.png", HERE / "screenshots" / "notebook-tools.png")
