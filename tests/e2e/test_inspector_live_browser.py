"""In real JupyterLab and Chromium (#15): the inspector already on screen answers a cell that replaces a converter,
within 0.5 s of that cell finishing, in the same output (nothing displayed again); a converter that raises shows its
error on its row while the other rows stay."""

from __future__ import annotations

import json

import pytest

from pi_notebook.notebook.inspector import PAGE_WORD_WAIT
from tests.e2e.lab import chromium_page, open_notebook, run_cell, running_lab, wait_ran, write_notebook

SETUP = "%load_ext pi_notebook\nimport pi_notebook\nfrom pi_notebook.ai import faux"
SHOUT = """from pi_notebook.agent import BashExecutionMessage, register_message_type
from pi_notebook.ai import TextContent, UserMessage

def shout(message):
    return UserMessage(content=[TextContent(text="SHOUTED " + message.output.upper())])

_ = register_message_type(BashExecutionMessage, to_llm=shout, replace=True)"""
BROKEN = """def on_strike(message):
    raise ValueError("converter on strike")

_ = register_message_type(BashExecutionMessage, to_llm=on_strike, replace=True)"""
CELLS = [
    SETUP,
    "%bash echo hello-live",
    'faux.set_responses(["a plain answer"])',
    "%%agent --model faux/faux-1 --tools none\nSay something.",
    "insp = pi_notebook.inspect(pi_notebook.current_session())\ninsp",
    SHOUT,
    BROKEN,
]
INSPECTOR_CELL, SHOUT_CELL, BROKEN_CELL = 4, 5, 6
LLM = "[data-pane=llm]:visible"  # the live view's (the saved form beside it is hidden while the widget lives)

# Times (performance.now()) at which the inspector's LLM pane first shows `wanted` and the cell `cell` finishes
# (its prompt shows an execution count), watched from before the cell is run.
WATCH = """([cell, inspector, wanted]) => {
  const cells = () => document.querySelectorAll('.jp-Notebook .jp-Cell');
  const t = (window.__times = {});
  const observer = new MutationObserver(() => {
    const now = performance.now();
    const panes = [...cells()[inspector].querySelectorAll('[data-pane=llm]')].filter(e => e.checkVisibility());
    const llm = panes.map(e => e.innerText).join('\\n');
    if (t.changed === undefined && llm.includes(wanted)) t.changed = now;
    const prompt = cells()[cell].querySelector('.jp-InputPrompt')?.textContent || '';
    if (t.finished === undefined && /\\[\\d+\\]/.test(prompt)) t.finished = now;
  });
  observer.observe(document.querySelector('.jp-Notebook'),
                   { subtree: true, childList: true, characterData: true, attributes: true });
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory, "live") as server:
        yield server


@pytest.fixture
def page(lab):
    with chromium_page(1280, 1000) as page:
        yield page


def test_the_open_inspector_follows_a_replaced_converter(lab, page):
    write_notebook(lab.root / "live.ipynb", CELLS)
    open_notebook(page, lab, "live.ipynb")
    for index in range(INSPECTOR_CELL + 1):
        run_cell(page, index)
        wait_ran(page, index, timeout=120_000)
    cells = page.locator(".jp-Notebook .jp-Cell")
    inspector = cells.nth(INSPECTOR_CELL)
    inspector.locator(LLM, has_text="hello-live").first.wait_for(timeout=60_000)
    assert "SHOUTED" not in " ".join(inspector.locator(LLM).all_inner_texts())
    outputs = inspector.locator(".jp-OutputArea-output")
    assert outputs.count() == 1
    outputs.first.evaluate("el => { window.__inspectorOutput = el; }")

    page.evaluate(WATCH, [SHOUT_CELL, INSPECTOR_CELL, "SHOUTED HELLO-LIVE"])
    run_cell(page, SHOUT_CELL)
    page.wait_for_function(
        "() => window.__times.changed !== undefined && window.__times.finished !== undefined", timeout=30_000
    )
    times = page.evaluate("window.__times")
    assert times["changed"] - times["finished"] <= 500, times  # (negative: it changed while the cell ran)

    # The same output, not a new display; the cell that changed the converter shows nothing
    assert outputs.count() == 1
    assert outputs.first.evaluate("el => el === window.__inspectorOutput")
    assert cells.nth(SHOUT_CELL).locator(".jp-OutputArea-output").count() == 0
    llm_texts = inspector.locator(LLM).all_inner_texts()
    assert any("SHOUTED HELLO-LIVE" in text for text in llm_texts)
    assert not any("Ran `echo hello-live`" in text for text in llm_texts)

    # A converter that raises: its row says what it raised, the others are traced as before, the view lives on
    run_cell(page, BROKEN_CELL)
    wait_ran(page, BROKEN_CELL)
    row = inspector.locator(".pi-insp-row:visible", has_text="ValueError: converter on strike")
    row.wait_for(timeout=10_000)
    assert row.count() == 1 and row.get_attribute("data-role") == "bashExecution"
    assert "not sent" in row.locator(LLM).inner_text()
    assert "a plain answer" in " ".join(inspector.locator(LLM).all_inner_texts())
    assert "converter raised" in inspector.inner_text()  # the note
    assert outputs.count() == 1 and outputs.first.evaluate("el => el === window.__inspectorOutput")


LONG_CELLS = [
    SETUP,
    """from pi_notebook.agent import BashExecutionMessage
session = pi_notebook.current_session()
for i in range(400):
    session.record(BashExecutionMessage(command=f"echo {i}", output=f"line {i}\\n", exit_code=0))""",
    "insp = pi_notebook.inspect(pi_notebook.current_session())\ninsp",
]
# Counts the display updates the kernel sends to this notebook (the whole history, when one is sent).
COUNT_UPDATES = """() => {
  window.__updates = 0;
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  kernel.iopubMessage.connect((_, msg) => {
    if (msg.header.msg_type === 'update_display_data') window.__updates++;
  });
}"""


def test_a_long_inspector_is_kept_in_the_saved_file_by_the_page_not_sent_again(lab, page):
    # A long history loads after its cell (first rows at once). The page's extension writes the live view's state
    # into the output when the notebook is saved and tells the kernel so: the kernel then sends no display update
    # of the whole history (megabytes, parsed and stored by the page), and the saved file still holds every row.
    write_notebook(lab.root / "long.ipynb", LONG_CELLS)
    open_notebook(page, lab, "long.ipynb")
    for index in (0, 1):
        run_cell(page, index)
        wait_ran(page, index, timeout=120_000)
    page.evaluate(COUNT_UPDATES)
    run_cell(page, 2)
    wait_ran(page, 2)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.pi-insp-count')].some(
             (c) => c.checkVisibility() && /^400 of 400 rows$/.test(c.textContent.replace(/,/g, '')))""",
        timeout=60_000,
    )
    page.wait_for_timeout(PAGE_WORD_WAIT * 1000 + 1500)  # when the kernel's display update would have come
    assert page.evaluate("window.__updates") == 0
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
    (output,) = json.loads((lab.root / "long.ipynb").read_text())["cells"][2]["outputs"]
    saved = output["data"]["application/vnd.pi-notebook.inspector+json"]
    assert len(saved["rows"]) == 400 and saved["requests"]
    assert saved["rows"][-1]["agent"]["command"] == "echo 399"


RELOAD_CELLS = [
    SETUP,
    "%bash echo before-reload",
    "insp = pi_notebook.inspect(pi_notebook.current_session())\ninsp",
    "%bash echo after-reload",
]
VISIBLE_COUNT = """(wanted) => [...document.querySelectorAll('.pi-insp-count')].some(
  (c) => c.checkVisibility() && c.textContent.startsWith(wanted))"""


def test_after_a_page_reload_the_open_inspector_is_live_again(lab, page):
    # The page's widget manager comes after the outputs are drawn: the inspector's live view must still come (not
    # stay on its saved form), and follow the next cell.
    write_notebook(lab.root / "reload.ipynb", RELOAD_CELLS)
    open_notebook(page, lab, "reload.ipynb")
    for index in (0, 1, 2):
        run_cell(page, index)
        wait_ran(page, index, timeout=120_000)
    page.wait_for_function(VISIBLE_COUNT, arg="1 of 1 rows", timeout=60_000)
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
    page.reload()
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.wait_for_function(
        "() => (document.querySelector('#jp-main-statusbar')?.textContent || '').includes('Idle')", timeout=60_000
    )
    page.wait_for_function(VISIBLE_COUNT, arg="1 of 1 rows", timeout=60_000)
    run_cell(page, 3)
    wait_ran(page, 3)
    page.wait_for_function(VISIBLE_COUNT, arg="2 of 2 rows", timeout=30_000)  # live: it followed the cell
    visible = page.evaluate(
        "() => [...document.querySelectorAll('.pi-inspector')].filter((e) => e.checkVisibility()).length"
    )
    assert visible == 1  # the live view only, not the saved form beside it
