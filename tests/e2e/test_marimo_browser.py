"""The transcript and the inspector in marimo (#26), in Debian's Chromium: ``marimo run`` serves
``tests/e2e/marimo_app.py`` headless on 127.0.0.1 (no token), which runs an ``AgentSession`` on the scripted faux
model and shows ``pi_notebook.show(session)`` and ``pi_notebook.inspect(session)`` through ``mo.ui.anywidget``.

- the transcript draws every message by its role (the shell commands, the prompt, the tool call, its result, the
  answer's markdown);
- the inspector draws its three columns and a row per message, and follows the session: a later cell's shell
  command adds a row (a comm update from the kernel);
- the inspector fits marimo's column: nothing of it is painted right of the output area, at marimo's usual width
  and at a narrow one, with a row's what-if preview open (asked from the page, answered by the kernel) on a long
  unbreakable line;
- neither widget writes an error to the console.

The screenshot goes to ``tests/e2e/_artifacts/``; ``PI_NOTEBOOK_UPDATE_SCREENSHOTS=1`` also refreshes the committed
``screenshots/marimo.png``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.lab import chromium_page, free_port, stop_server, wait_until_serving

APP = Path(__file__).with_name("marimo_app.py")
HERE = Path(__file__).parent

# What of an element's text or boxes is painted right of its column (marimo's output area), leaving out what a
# scroll or clip box inside the element hides (the request body scrolls; a select's text is cut with an ellipsis).
# Text is measured by ranges: a block's box may fit while a long word in it runs out.
OVERFLOW = """(el) => {
  const host = el.getRootNode().host;
  const column = el.closest(".output-area") || host.closest(".output-area");
  const limit = column.getBoundingClientRect().right + 0.5;
  const clipped = (node) => {
    for (let p = node.parentElement; p && p !== el; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== "visible" && p.getBoundingClientRect().right <= limit) return true;
    }
    return false;
  };
  const name = (e) => `${e.tagName.toLowerCase()}.${String(e.className).replace(/ /g, ".")}`;
  const out = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const right = Math.max(0, ...[...range.getClientRects()].map((r) => r.right));
    if (right > limit && !clipped(n)) out.push(`${name(n.parentElement)}: text +${Math.round(right - limit)} px`);
  }
  for (const e of [el, ...el.querySelectorAll("*")]) {
    const r = e.getBoundingClientRect();
    if (r.width && r.right > limit && !clipped(e)) out.push(`${name(e)}: box +${Math.round(r.right - limit)} px`);
  }
  const box = el.getBoundingClientRect(), col = column.getBoundingClientRect();
  return { width: box.width, column: col.width, left: box.left - col.left, overflow: out.slice(0, 8) };
}"""

# The inspector's three column heads, left to right: [text, left, right, visible].
COLUMNS = """(el) => [...el.querySelectorAll(".pi-insp-colheads > div")].map((d) => {
  const r = d.getBoundingClientRect();
  return [d.textContent, r.left, r.right, r.width > 0 && r.height > 0 && getComputedStyle(d).visibility === "visible"];
})"""


class Marimo:
    """``marimo run <app>`` on 127.0.0.1, without a token, in its own HOME (marimo's config and state) and TMPDIR
    (where the app's session folder goes)."""

    def __init__(self, app: Path, home: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
            "HOME": str(home),
            "TMPDIR": str(home),
            "MARIMO_SKIP_UPDATE_CHECK": "1",
            "PYTHONPATH": os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]),
        }
        marimo = [sys.executable, "-m", "marimo"]
        cmd = [*marimo, "run", str(app), "--headless", "--host", "127.0.0.1", "--port", str(self.port), "--no-token"]
        self.log = (home / "marimo.log").open("wb")
        self.process = subprocess.Popen(cmd, cwd=app.parent, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until_serving(self, "marimo", "/health", 60)

    def stop(self) -> None:
        stop_server(self)


@pytest.fixture(scope="module")
def marimo(tmp_path_factory):
    # Never skipped: a missing marimo is a missing install step (`pip install -e '.[dev]'` installs it).
    assert importlib.util.find_spec("marimo"), "marimo is not installed: pip install -e '.[dev]'"
    root = tmp_path_factory.mktemp("marimo-root")
    shutil.copy(APP, root / APP.name)  # served from a copy: marimo may write next to the notebook
    server = Marimo(root / APP.name, tmp_path_factory.mktemp("marimo-home"))
    try:
        yield server
    finally:
        server.stop()


def _fits(inspector) -> dict:
    measured = inspector.evaluate(OVERFLOW)
    assert measured["overflow"] == [], measured
    assert measured["left"] >= 0 and measured["width"] <= measured["column"], measured
    return measured


def test_transcript_and_inspector_render_in_marimo_and_the_inspector_fits_its_column(marimo):
    with chromium_page(1280, 1000) as page:
        console: list[str] = []
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
        page.goto(marimo.url)

        # the transcript (inside marimo's shadow roots: Playwright's locators go through them)
        transcript = page.locator(".pi-transcript").first
        transcript.locator("article[data-role]").nth(5).wait_for(timeout=40_000)
        roles = transcript.locator("article[data-role]").evaluate_all("els => els.map((a) => a.dataset.role)")
        assert roles == ["bashExecution", "bashExecution", "user", "assistant", "toolResult", "assistant"]
        articles = transcript.locator("article[data-role]")
        assert "echo 'pears: 5, apples: 3' > fruit.txt" in articles.nth(0).inner_text()
        assert "How many pears are in fruit.txt?" in articles.nth(2).inner_text()
        assert "pears: 5, apples: 3" in articles.nth(4).inner_text()
        assert articles.nth(5).locator("strong").inner_text() == "5 pears"  # the answer's markdown, drawn

        # the inspector: its three columns, a row per message, the later cell's command among them
        inspector = page.locator(".pi-inspector").first
        rows = inspector.locator(".pi-insp-row")
        rows.nth(6).wait_for(timeout=20_000)
        assert rows.count() == 7
        assert "wc -l fruit.txt" in rows.nth(6).inner_text()
        (stored, status, llm) = inspector.evaluate(COLUMNS)
        assert [stored[0], status[0], llm[0]] == ["AgentMessage (stored)", "status", "Message(s) for the LLM"]
        assert stored[3] and status[3] and llm[3]
        assert stored[2] <= status[1] and status[2] <= llm[1]  # side by side, not on top of each other
        assert rows.nth(0).locator("[data-pane=llm]").inner_text().startswith("user\nRan `echo 'pears: 5")
        assert inspector.locator("[data-pane=request] pre").first.is_visible()

        # it fits marimo's column, as drawn, and with the long line's what-if preview open
        wide = _fits(inspector)
        assert wide["column"] > 600  # marimo's usual column: the test measured something
        rows.nth(1).locator("button", has_text="drop").click()
        page.wait_for_function("el => el.dataset.whatif === 'preview'", arg=inspector.element_handle(), timeout=20_000)
        assert "no longer sent" in rows.nth(1).inner_text()
        _fits(inspector)

        # a narrow window (a phone, a side panel): still inside, and a row's buttons stay clickable
        page.set_viewport_size({"width": 480, "height": 1000})
        page.wait_for_timeout(400)
        narrow = _fits(inspector)
        assert narrow["width"] < 450
        buttons = rows.nth(0).locator("button")
        assert buttons.all_inner_texts() == ["exclude (!!)", "drop"]
        for button in buttons.all():  # clickable: not under the status column's badge
            button.click(trial=True, timeout=5_000)
        (HERE / "_artifacts").mkdir(exist_ok=True)
        inspector.screenshot(path=str(HERE / "_artifacts" / "marimo-narrow-inspector.png"))

        page.set_viewport_size({"width": 1280, "height": 1000})
        inspector.locator("[data-control=whatif-reset]").click()
        page.wait_for_function("el => el.dataset.whatif === 'off'", arg=inspector.element_handle(), timeout=20_000)
        _screenshot(page)
        assert console == []


def _screenshot(page) -> None:
    """Marimo's column, from the transcript to the end of the inspector (the window made as tall as marimo's page,
    which scrolls inside its own element)."""
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll('*')].map((e) => e.scrollHeight))")
    page.set_viewport_size({"width": 1280, "height": min(int(height), 4000)})
    page.wait_for_timeout(500)
    artifacts = HERE / "_artifacts"
    artifacts.mkdir(exist_ok=True)
    column = page.locator(".output-area").filter(has=page.locator(".pi-inspector")).bounding_box()
    top = page.locator(".pi-transcript").first.bounding_box()["y"] - 24
    bottom = page.locator(".pi-inspector").first.bounding_box()
    clip = {
        "x": column["x"] - 24,
        "y": top,
        "width": column["width"] + 48,
        "height": bottom["y"] + bottom["height"] + 24 - top,
    }
    page.screenshot(path=str(artifacts / "marimo.png"), clip=clip)
    if os.environ.get("PI_NOTEBOOK_UPDATE_SCREENSHOTS") == "1":
        shutil.copy(artifacts / "marimo.png", HERE / "screenshots" / "marimo.png")
