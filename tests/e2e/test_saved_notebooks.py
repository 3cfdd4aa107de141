"""Saved notebooks (#13), in real JupyterLab, Notebook 7 and Chromium: a notebook run with ``%%agent`` (the faux
provider), ``%bash`` and ``pi_notebook.inspect`` is saved, with and without widget state; the server is stopped and
a fresh one started; the notebook is reopened without running anything, and every transcript row
(``[data-role]``) and inspector pane (``[data-pane]``) renders, styled, from the saved outputs through the
prebuilt extension (``widgets/labextension``) — with no kernel that knows any widget."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import sync_playwright

from tests.e2e.lab import CHROMIUM, CHROMIUM_ARGS, Lab, open_notebook, run_all, wait_all_cells_ran, write_notebook

SETUP = "%load_ext pi_notebook\nimport pi_notebook\nfrom pi_notebook.ai import faux"
PWN = "window.__pwned = (window.__pwned || 0) + 1"
CELLS = [
    SETUP,
    f'faux.set_responses([faux.tool_call("ls", {{}}), "Saved **answer** <img src=x onerror=\\"{PWN}\\">"])',
    "%%agent --model faux/faux-1 --tools ls\nWhat is here? [x](javascript:alert(1))",
    "%bash echo hi",
    "%bash echo second",
    "pi_notebook.inspect(pi_notebook.current_session())",
    "%bash echo after the inspector",  # the open inspector follows; the saved file must hold that too
]
ROLES = ("notebookCell", "user", "assistant", "toolResult", "bashExecution")
OURS = {"application/vnd.pi-notebook.transcript+json", "text/html", "text/plain"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

ARTIFACTS = Path(__file__).resolve().parent / "_artifacts"  # every run's screenshots; git-ignored


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The notebook run and saved in JupyterLab (widget state saved: the Lab's setting), then a copy without
    widget state; the server that ran it is stopped. Returns the folder and the Lab home."""
    assert shutil.which("chromium") or Path(CHROMIUM).exists(), "install Debian's chromium (apt-get install chromium)"
    root, home = tmp_path_factory.mktemp("saved-root"), tmp_path_factory.mktemp("saved-home")
    write_notebook(root / "run.ipynb", CELLS)
    lab = Lab(root, home)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            open_notebook(page, lab, "run.ipynb")
            run_all(page)
            assert wait_all_cells_ran(page) == []
            page.wait_for_selector("[data-pane=request]:visible", timeout=60_000)
            page.wait_for_timeout(1500)  # the inspector's state, kept in its output after the last cell
            page.keyboard.press("Control+s")
            page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
            browser.close()
        for kernel in httpx.get(f"{lab.url}/api/kernels").json():
            httpx.delete(f"{lab.url}/api/kernels/{kernel['id']}")
    finally:
        lab.stop()
    nb = json.loads((root / "run.ipynb").read_text())
    shutil.copy(root / "run.ipynb", root / "with-state.ipynb")
    nb["metadata"].pop("widgets", None)
    (root / "no-state.ipynb").write_text(json.dumps(nb, indent=1))
    return root, home


def _outputs(path: Path) -> list[dict]:
    nb = json.loads(path.read_text())
    return [cell.get("outputs", []) for cell in nb["cells"]]


def test_the_saved_file_holds_the_saved_forms_and_no_transcript_widget(saved):
    root, _ = saved
    outputs = _outputs(root / "with-state.ipynb")
    for index in (2, 3, 4):  # %%agent and %bash: the saved form only
        (shown,) = [o for o in outputs[index] if o["output_type"] == "display_data"]
        assert set(shown["data"]) == OURS, index
    (inspector,) = outputs[5]
    assert {"application/vnd.pi-notebook.inspector+json", WIDGET_VIEW} <= set(inspector["data"])
    saved_rows = inspector["data"]["application/vnd.pi-notebook.inspector+json"]["rows"]
    # the cell that scripted the model (a notebookCell: the cells a user runs join the history), user, toolCall,
    # toolResult, answer, two %bash, and the %bash run after the inspector was displayed: the page wrote the live
    # view's latest state into the output when the notebook was saved
    assert [row["role"] for row in saved_rows][:2] == ["notebookCell", "user"]
    assert len(saved_rows) == 8
    state = json.loads((root / "with-state.ipynb").read_text())["metadata"]["widgets"]
    models = state["application/vnd.jupyter.widget-state+json"]["state"].values()
    assert {m["model_name"] for m in models} <= {"AnyModel", "LayoutModel"}
    assert sum(m["model_name"] == "AnyModel" for m in models) == 1  # the open inspector only
    assert (root / "no-state.ipynb").stat().st_size < 120_000


CHECK = """() => {
  // A saved output that shows the live view keeps its saved form hidden by Lumino (.lm-mod-hidden): not counted.
  const drawn = (sel) => [...document.querySelectorAll('.jp-OutputArea-output ' + sel)]
    .filter((el) => !el.closest('.lm-mod-hidden'));
  const rows = drawn('[data-role]');
  const panes = drawn('[data-pane]');
  const shown = (el) => el.getBoundingClientRect().height > 0 || el.closest('details:not([open])') !== null;
  return {
    roles: rows.map((el) => el.dataset.role),
    panes: panes.map((el) => el.dataset.pane),
    hidden: [...rows, ...panes].filter((el) => !shown(el) && !el.closest('[hidden]')).length, // not a closed pane
    unstyled: rows.filter((el) => getComputedStyle(el).borderLeftWidth !== '3px').length,
    inspectors: drawn('.pi-inspector').map((el) => getComputedStyle(el).containerType),
    text: document.querySelector('.jp-Notebook').innerText,
    pwned: window.__pwned ?? null,
  };
}"""


def _check(page, shot: str) -> dict:
    page.wait_for_selector(".jp-OutputArea-output [data-pane=request]:visible", timeout=60_000)
    page.wait_for_selector(".jp-OutputArea-output article[data-role=bashExecution]:visible", timeout=60_000)
    page.wait_for_timeout(500)
    found = page.evaluate(CHECK)
    for role in ROLES:
        assert role in found["roles"], (role, found["roles"])
    assert found["roles"].count("bashExecution") >= 2
    assert {"agent", "llm", "request"} <= set(found["panes"])
    assert found["hidden"] == 0 and found["unstyled"] == 0  # drawn, with the extension's stylesheet
    assert found["inspectors"] == ["inline-size"]
    assert "Saved answer" in found["text"] and "hi" in found["text"]
    assert "model not found" not in found["text"] and "Error displaying widget" not in found["text"]
    assert found["pwned"] is None
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{shot}.png", full_page=True)  # to look at (git-ignored)
    return found


@pytest.mark.parametrize("name", ["with-state.ipynb", "no-state.ipynb"])
def test_reopened_in_a_fresh_jupyterlab_and_notebook_7_without_running_anything(saved, name):
    root, home = saved
    lab = Lab(root, home)  # a new server: nothing of the run is left in it
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            open_notebook(page, lab, name)
            _check(page, f"saved-{name.removesuffix('.ipynb')}-lab")
            assert page.evaluate(  # nothing ran since the notebook was saved
                "(n) => [...window.jupyterapp.shell.currentWidget.content.widgets].every("
                "c => c.model.type !== 'code' || c.model.executionCount === null || c.model.executionCount <= n)",
                len(CELLS),
            )
            for kernel in httpx.get(f"{lab.url}/api/kernels").json():
                httpx.delete(f"{lab.url}/api/kernels/{kernel['id']}")
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(f"{lab.url}/tree")
            page.wait_for_selector(f"text={name}", timeout=60_000)
            page.goto(f"{lab.url}/notebooks/{name}")
            page.wait_for_selector(".jp-Notebook", timeout=60_000)
            _check(page, f"saved-{name.removesuffix('.ipynb')}-notebook7")
            browser.close()
    finally:
        lab.stop()


def test_jupyter_lists_the_extension_enabled_and_ok():
    out = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"], capture_output=True, text=True, timeout=120
    )
    listing = out.stdout + out.stderr
    line = next((x for x in listing.splitlines() if "pi-notebook" in x), "")
    assert "enabled" in line and "OK" in line, listing
