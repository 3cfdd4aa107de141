"""The agent sees the notebook (#22), in real JupyterLab and Chromium with a real kernel and a scripted model.

A user runs a few cells — one defines a list, one draws a matplotlib plot, one fails with a ``KeyError`` — and asks
``%%agent What went wrong, and what does the plot show?``. The request the model receives holds the failing cell,
its traceback and the plot as an image block, and the inspector shows each of them (stored, translated, and in the
exact request). ``%agent_fix`` then puts a corrected cell below, which is not run.

Screenshots go to ``tests/e2e/_artifacts/`` (git-ignored); ``PI_NOTEBOOK_UPDATE_SCREENSHOTS=1`` also refreshes the
committed copy the README shows."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.lab import (
    chromium_page,
    fit_notebook_in_window,
    open_notebook,
    run_cell,
    running_lab,
    set_notebook_width,
    wait_ran,
    write_notebook,
)

pytest.importorskip("matplotlib")

HERE = Path(__file__).parent
ANSWER = "The last cell looked up the key 'b', which d does not have. The plot shows x rising then falling."
FIX = "d has no key 'b'; use get with a default.\n```python\nd = {'a': 1}\nprint(d.get('b', 0))\n```"
SETUP = f"""%load_ext pi_notebook
import pi_notebook
from pi_notebook.ai import faux
faux.set_responses([{ANSWER!r}, {FIX!r}])"""
CELLS = [
    SETUP,
    "x = [3, 1, 2]\nprint(sorted(x))",
    "import matplotlib.pyplot as plt\nplt.plot(x)\nplt.title('x by index')\nplt.show()",
    "d = {'a': 1}\nd['b']",
    "%%agent --model faux/faux-1 --tools none\nWhat went wrong, and what does the plot show?",
    # what the scripted model received (a cell of the extension's: not itself recorded)
    "from pi_notebook.ai import faux\nimport json\nprint(json.dumps([m.to_pi_json() for m in faux.calls[0].messages]))",
    "pi_notebook.inspect(pi_notebook.current_session())",
    "%agent_fix --model faux/faux-1",
]
AGENT, SENT, INSPECT, FIX_CELL = 4, 5, 6, 7


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory, "cells") as server:
        yield server


def test_what_went_wrong_and_what_the_plot_shows_then_agent_fix(lab):
    write_notebook(lab.root / "work.ipynb", CELLS)
    with chromium_page(1280, 1000) as page:
        open_notebook(page, lab, "work.ipynb")
        set_notebook_width(page)
        cells = page.locator(".jp-Notebook .jp-Cell")
        for index in range(len(CELLS) - 1):
            run_cell(page, index)
            wait_ran(page, index)
        assert "KeyError" in cells.nth(3).text_content()  # the user saw the cell fail
        cells.nth(2).locator(".jp-OutputArea-output img").first.wait_for(timeout=30_000)  # and the plot

        # The model received the three cells: the failing one with its traceback, the plot as a PNG image block
        sent = json.loads(cells.nth(SENT).locator(".jp-OutputArea-output").text_content().strip().splitlines()[-1])
        cell_messages = [m for m in sent if "Ran notebook cell" in json.dumps(m)]
        assert len(cell_messages) == 3 and sent[-1]["content"][0]["text"].startswith("What went wrong")
        texts = [m["content"][0]["text"] for m in cell_messages]
        assert "x = [3, 1, 2]" in texts[0] and "[1, 2, 3]" in texts[0]
        assert "KeyError: 'b'" in texts[2] and "d['b']" in texts[2] and "Traceback" in texts[2]
        plot = [b for b in cell_messages[1]["content"] if b["type"] == "image"]
        assert [b["mimeType"] for b in plot] == ["image/png"] and len(plot[0]["data"]) > 1000
        assert ANSWER in cells.nth(AGENT).text_content()

        # The inspector shows each: three notebookCell rows, translated; the plot drawn in the LLM pane; the
        # traceback and the image in the exact request
        inspector = cells.nth(INSPECT)
        inspector.scroll_into_view_if_needed()
        inspector.locator("[data-pane=request]").first.wait_for(timeout=60_000)
        rows = inspector.locator(".pi-insp-row[data-role=notebookCell]")
        assert rows.count() == 3
        assert {rows.nth(i).get_attribute("data-status") for i in range(3)} == {"translated"}
        assert rows.nth(1).locator("[data-pane=llm] img.pi-thumb").count() == 1
        assert "KeyError" in rows.nth(2).inner_text()
        request = inspector.locator("[data-pane=request]").first.inner_text()
        assert "The cell failed with KeyError: 'b'" in request and "image/png" in request

        # %agent_fix: a corrected cell below, not run
        before = cells.count()
        run_cell(page, FIX_CELL)
        wait_ran(page, FIX_CELL)
        page.wait_for_function(f"() => document.querySelectorAll('.jp-Notebook .jp-Cell').length > {before}")
        added = cells.nth(FIX_CELL + 1)
        added.scroll_into_view_if_needed()
        assert "d.get('b', 0)" in added.locator(".jp-InputArea-editor").inner_text()
        assert added.locator(".jp-InputPrompt").inner_text().strip() in ("[ ]:", "")  # never run by itself
        assert added.locator(".jp-OutputArea-output").count() == 0
        assert "no key 'b'" in cells.nth(FIX_CELL).text_content()

        fit_notebook_in_window(page)
        page.mouse.move(0, 0)
        artifacts = HERE / "_artifacts"
        artifacts.mkdir(exist_ok=True)
        inspector.scroll_into_view_if_needed()
        inspector.screenshot(path=str(artifacts / "notebook-cells.png"))
        if os.environ.get("PI_NOTEBOOK_UPDATE_SCREENSHOTS") == "1":
            shutil.copyfile(artifacts / "notebook-cells.png", HERE / "screenshots" / "notebook-cells.png")
