"""A lesson's exercises in real JupyterLab and Chromium, as a learner does them (#25): lesson 04 runs whole with
no error; each solution cell's source is hidden and each hint and solution is folded (``<details>``, closed); an
exercise answered wrong says what is wrong, with the hint, and answered right says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.lab import chromium_page, open_notebook, run_all, running_lab, wait_all_cells_ran

NOTEBOOKS = Path(__file__).resolve().parent.parent.parent / "notebooks"
LESSON = "04-the-boundary.ipynb"

_SOLUTIONS_HIDDEN = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter((w) => (w.model.getMetadata("tags") || []).includes("solution"))
  .map((w) => w.inputHidden)"""
_FOLDED = """() => {
  const widgets = window.jupyterapp.shell.currentWidget.content.widgets;
  const out = [];
  for (const w of widgets) {
    if (w.model.type !== "markdown" || !w.model.sharedModel.getSource().includes("<details>")) continue;
    w.node.scrollIntoView();
    for (const d of w.node.querySelectorAll(".jp-RenderedMarkdown details")) {
      out.push([d.querySelector("summary")?.textContent, d.open]);
    }
  }
  return out;
}"""
_ANSWER_AND_RUN = """async (answer) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const widgets = panel.content.widgets;
  const index = widgets.findIndex((w) => w.model.type === "code"
    && !(w.model.getMetadata("tags") || []).includes("solution")
    && w.model.sharedModel.getSource().includes("check_bash_text(answer)"));
  const cell = widgets[index];
  cell.model.sharedModel.setSource(cell.model.sharedModel.getSource().replace(/^answer = .*$/m, answer));
  panel.content.activeCellIndex = index;
  await window.jupyterapp.commands.execute("notebook:run-cell");
  return index;
}"""
_OUTPUT_OF = """(index) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
  const outputs = cell.model.outputs.toJSON();
  if (cell.model.executionState === "running" || !outputs.length) return null;
  return outputs.map((o) => o.output_type === "error" ? `${o.ename}: ${o.evalue}` : [].concat(o.text || "").join(""))
    .join("\\n");
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory, "lesson") as server:
        shutil.copytree(NOTEBOOKS / "demo", server.root / "demo")
        shutil.copy(NOTEBOOKS / LESSON, server.root / LESSON)
        yield server


def answer(page, text: str) -> str:
    """Put ``text`` in place of exercise 1's ``answer = ...`` line, run the cell, return what it printed."""
    index = page.evaluate(_ANSWER_AND_RUN, text)
    page.wait_for_timeout(300)
    return page.wait_for_function(_OUTPUT_OF, arg=index, timeout=60_000, polling=200).json_value()


def test_a_learner_runs_the_lesson_and_does_an_exercise(lab):
    with chromium_page() as page:
        open_notebook(page, lab, LESSON)
        run_all(page)
        assert wait_all_cells_ran(page) == []

        hidden = page.evaluate(_SOLUTIONS_HIDDEN)
        assert hidden == [True, True, True]
        folded = page.evaluate(_FOLDED)
        assert [summary for summary, _ in folded] == ["Hint", "Solution"] * 3
        assert not any(is_open for _, is_open in folded)

        wrong = answer(page, 'answer = "Ran `make lint`\\n```\\n\\n```"')
        assert "WrongAnswer: Exercise 1 (predict the text): line 2 is '```'; the LLM gets '(no output)'" in wrong
        assert "Hint: three rules apply" in wrong
        right = answer(page, 'answer = "Ran `make lint`\\n(no output)\\n\\nCommand exited with code 2"')
        assert "✓ Exercise 1 (predict the text)" in right
