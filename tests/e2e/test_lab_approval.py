"""Approval in real JupyterLab and Chromium (#23): with ``%agent_config approve=bash,edit`` and a scripted model,
each call of those tools waits in its cell for a click.

Approve runs the command; Deny of an ``edit`` (shown as a coloured diff against the file) leaves the file as it
was on disk, and the model reads the denial with the user's reason; "Always this session" does not ask again; the
stop button while the prompt waits stops the run and nothing runs. The prompt is drawn (and says so to the
kernel) well within the time the kernel waits for a page; the saved notebook keeps the decisions as text, with no
prompt or buttons in it.

A screenshot of the diff prompt goes to ``tests/e2e/_artifacts/approval-diff.png``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.lab import chromium_page, open_notebook, run_cell, running_lab, wait_ran, write_notebook

HERE = Path(__file__).parent
SETUP = """%load_ext pi_notebook
%agent_config approve=bash,edit
import json, pi_notebook
from pi_notebook.ai import faux
pi_notebook.current_session().config.cells = 'off'
open('notes.txt', 'w').write('apples: 3\\npears: 5\\n')
faux.set_responses([
    [faux.tool_call('bash', {'command': 'echo approved > a.txt'})], 'A done.',
    [faux.tool_call('edit', {'path': 'notes.txt', 'oldText': 'pears: 5', 'newText': 'pears: 6'})],
    lambda context: 'The model read: ' + context.messages[-1].content[0].text,
    [faux.tool_call('bash', {'command': 'echo one > c1.txt'})], 'C1 done.',
    [faux.tool_call('bash', {'command': 'echo two > c2.txt'})], 'C2 done.',
    [faux.tool_call('edit', {'path': 'notes.txt', 'oldText': 'apples: 3', 'newText': 'apples: 4'})], 'never said',
])"""
AGENT = "%%agent --model faux/faux-1 --tools bash,edit\n"
CELLS = [
    SETUP,
    AGENT + "Write a.txt",
    AGENT + "Make it 6 pears",
    AGENT + "Write c1.txt",
    AGENT + "Write c2.txt",
    AGENT + "Make it 4 apples",
    "print(json.dumps({'decisions': [m.details.get('approval') for m in "
    "pi_notebook.current_session().messages if m.role == 'toolResult']}))",
]
APPROVE, DENY, ALWAYS, AGAIN, STOP, DUMP = range(1, 7)
# When each prompt's display reaches the page (the kernel's iopub message) and when the page has drawn it.
WATCH = """() => { window.__piPromptShown = []; window.__piPromptSeen = []; const known = new WeakSet();
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  kernel.iopubMessage.connect((_, msg) => {
    const text = msg.header.msg_type === 'display_data' && msg.content.data['text/plain'];
    if (text && text.startsWith('… waiting for your approval')) window.__piPromptShown.push(performance.now());
  });
  new MutationObserver(() => {
    for (const el of document.querySelectorAll('.pi-approval')) {
      if (!known.has(el)) { known.add(el); window.__piPromptSeen.push(performance.now()); }
    }
  }).observe(document.body, { childList: true, subtree: true }); }"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory, "approval") as server:
        yield server


def click(cell, verdict: str) -> None:
    cell.locator(f"button.pi-approval-button[data-verdict={verdict}]").click()


def test_each_call_waits_for_a_click_and_the_notebook_keeps_the_decisions_as_text(lab):
    root = lab.root
    write_notebook(root / "approval.ipynb", CELLS)
    with chromium_page(1280, 1000) as page:
        open_notebook(page, lab, "approval.ipynb")
        page.evaluate(WATCH)
        cells = page.locator(".jp-Notebook .jp-Cell")
        run_cell(page, 0)
        wait_ran(page, 0)

        # Approve: the prompt shows the command; the click runs it
        run_cell(page, APPROVE)
        prompt = cells.nth(APPROVE).locator(".pi-approval")
        prompt.wait_for(timeout=60_000)
        assert prompt.locator(".pi-approval-title").inner_text() == "The agent wants to run this command (bash)."
        assert prompt.locator("pre.pi-approval-command").inner_text() == "echo approved > a.txt"
        assert not (root / "a.txt").exists()  # the run waits
        click(cells.nth(APPROVE), "approve")
        wait_ran(page, APPROVE)
        assert (root / "a.txt").read_text() == "approved\n"
        text = cells.nth(APPROVE).inner_text()
        assert "A done." in text and "pi_notebook: you approved bash `echo approved > a.txt`" in text
        assert cells.nth(APPROVE).locator(".pi-approval").count() == 0  # no prompt left in the cell

        # Deny an edit: a coloured diff against the file; nothing changes on disk; the model reads why
        run_cell(page, DENY)
        prompt = cells.nth(DENY).locator(".pi-approval")
        prompt.wait_for(timeout=60_000)
        assert prompt.locator(".pi-approval-title").inner_text() == "The agent wants to edit notes.txt (edit)."
        assert prompt.locator(".pi-approval-del").inner_text().strip() == "-pears: 5"
        assert prompt.locator(".pi-approval-add").inner_text().strip() == "+pears: 6"
        colours = prompt.evaluate(
            "el => ['.pi-approval-del', '.pi-approval-add'].map(s => getComputedStyle(el.querySelector(s)).color)"
        )
        assert colours[0] != colours[1]
        artifacts = HERE / "_artifacts"
        artifacts.mkdir(exist_ok=True)
        page.mouse.move(0, 0)
        prompt.screenshot(path=str(artifacts / "approval-diff.png"))
        prompt.locator(".pi-approval-reason").fill("keep 5 pears")
        click(cells.nth(DENY), "deny")
        wait_ran(page, DENY)
        assert (root / "notes.txt").read_text() == "apples: 3\npears: 5\n"
        text = cells.nth(DENY).inner_text()
        assert "The model read: The user denied this call: it did not run. Their reason: keep 5 pears" in text
        assert "pi_notebook: you denied edit notes.txt: keep 5 pears" in text

        # Always this session: the next bash call does not ask
        run_cell(page, ALWAYS)
        cells.nth(ALWAYS).locator(".pi-approval").wait_for(timeout=60_000)
        click(cells.nth(ALWAYS), "always")
        wait_ran(page, ALWAYS)
        run_cell(page, AGAIN)
        wait_ran(page, AGAIN)
        assert (root / "c1.txt").read_text() == "one\n" and (root / "c2.txt").read_text() == "two\n"
        assert "C2 done." in cells.nth(AGAIN).inner_text()

        # The stop button while the prompt waits (bash no longer asks: an edit does): the run stops, nothing runs
        run_cell(page, STOP)
        cells.nth(STOP).locator(".pi-approval").wait_for(timeout=60_000)
        page.click(
            "jp-button[data-command='notebook:interrupt-kernel'], button[data-command='notebook:interrupt-kernel']"
        )
        wait_ran(page, STOP)
        text = cells.nth(STOP).inner_text()
        assert "the stop button ended the run while edit notes.txt waited for approval" in text
        assert "the run was aborted" in text and "never said" not in text
        assert (root / "notes.txt").read_text() == "apples: 3\npears: 5\n"

        run_cell(page, DUMP)
        wait_ran(page, DUMP)
        dump = json.loads(cells.nth(DUMP).locator(".jp-OutputArea-output").inner_text().strip().splitlines()[-1])
        assert [d and d["decision"] for d in dump["decisions"]] == ["approved", "denied", "approved", "approved",
                                                                     "stopped"]  # fmt: skip
        assert dump["decisions"][3] == {"decision": "approved", "asked": False, "always": True}
        shown, seen = page.evaluate("() => [window.__piPromptShown, window.__piPromptSeen]")
        delays = [round((s - a) / 1000, 3) for s, a in zip(seen, shown, strict=True)]
        print(f"\neach prompt drawn this long after its display reached the page: {delays} s")
        assert len(delays) == 4 and max(delays) < 0.5  # the kernel waits 0.8 s for a page to say it drew it

        page.keyboard.press("Control+s")
        page.wait_for_timeout(1500)

    saved = json.loads((root / "approval.ipynb").read_text())
    outputs = json.dumps([c.get("outputs", []) for c in saved["cells"]])
    assert "pi-approval" not in outputs and "Always this session" not in outputs
    assert "you approved bash `echo approved > a.txt`" in outputs and "you denied edit notes.txt" in outputs
    widgets = json.dumps(saved["metadata"].get("widgets", {}))
    assert "Always this session" not in widgets and "echo approved" not in widgets
