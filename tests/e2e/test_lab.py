"""In real JupyterLab and Chromium: every role rendered, the inspector's panes and layout, live streaming, the
stop button, no injected script running, and the quickstart notebook run top to bottom.

Screenshots (taken with the notebook 968 px wide) go to ``tests/e2e/_artifacts/`` (git-ignored), so a test run
leaves the git tree clean. The README shows the committed copies in ``tests/e2e/screenshots/``; refresh them
deliberately with ``PI_NOTEBOOK_UPDATE_SCREENSHOTS=1``."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.e2e.lab import (
    CHROMIUM,
    CHROMIUM_ARGS,
    Lab,
    fit_notebook_in_window,
    open_notebook,
    run_all,
    set_notebook_width,
    wait_all_cells_ran,
    wait_idle,
    write_notebook,
)

HERE = Path(__file__).parent
SCREENSHOTS = HERE / "screenshots"  # committed; the README shows them
ARTIFACTS = HERE / "_artifacts"  # every run's screenshots; git-ignored
NOTEBOOKS = HERE.parent.parent / "notebooks"
NOTEBOOK_WIDTH = 968
PWN = "window.__pwned = (window.__pwned || 0) + 1"

SETUP = "%load_ext pi_notebook\nimport pi_notebook\nfrom pi_notebook.ai import faux"

EVERY_ROLE = f'''
from pi_notebook.ai import *
from pi_notebook.agent import *
payload = '<img src=x onerror="{PWN}"><script>{PWN}</script>[click](javascript:{PWN})'
messages = [
    UserMessage(content=[TextContent(text="Why does **the test** fail? " + payload)]),
    AssistantMessage(
        content=[ThinkingContent(thinking="Let me read the test first."), TextContent(text="I will read it."),
                 ToolCall(id="call_1", name="read", arguments={{"path": "test_app.py"}})],
        api="faux", provider="faux", model="faux-1", stop_reason="toolUse",
        usage=Usage(input=1200, output=80, total_tokens=1280)),
    ToolResultMessage(tool_call_id="call_1", tool_name="read", is_error=True,
                      content=[TextContent(text="ENOENT: no such file " + payload)]),
    BashExecutionMessage(command="pytest -q", output="\\x1b[31m1 failed\\x1b[0m, 4 passed " + payload, exit_code=1),
    BashExecutionMessage(command="cat .env", output="TOKEN=hidden", exit_code=0, exclude_from_context=True),
    CustomMessage(custom_type="git-status", content="2 files changed", display=False),
    CustomMessage(custom_type="reminder", content="Tests must pass before merging."),
    BranchSummaryMessage(summary="Tried pinning pytest; abandoned.", from_id="a1b2c3d4"),
    CompactionSummaryMessage(summary="## Goal\\nFix the failing test.", tokens_before=48000),
    {{"role": "notebookCell", "source": "d = {{'a': 1}}\\nd['b']  # " + payload, "executionCount": 4,
     "output": "loaded " + payload, "error": {{"name": "KeyError", "value": "'b'",
     "traceback": "Traceback (most recent call last)\\nKeyError: 'b' " + payload}}, "timestamp": 0}},
    {{"role": "notification", "text": "build finished " + payload}},
    AssistantMessage(content=[TextContent(text="Half an ans")], api="faux", provider="faux", model="faux-1",
                     stop_reason="aborted", error_message="Request was aborted"),
]
pi_notebook.show(messages, show_hidden=True, title="Every role")
'''

AGENT_RUN = """
# a cell the user ran: it joins the history as a notebookCell (spaces: the request pane wraps code at them)
faux.set_responses([ [faux.tool_call("ls", {})], "There is one notebook here." ])
"""

INSPECT = "pi_notebook.inspect(pi_notebook.current_session())"


ROLES_CELLS = [
    SETUP, EVERY_ROLE, "%bash printf '\\033[32mok\\033[0m\\n'; exit 2", "%bash! echo private-token", AGENT_RUN,
    "%%agent --model faux/faux-1 --tools ls\nWhat is in this folder?", INSPECT,
]  # fmt: skip
LIVE_CELLS = [
    SETUP + "\nfaux.provider.tokens_per_second = 60\nfaux.provider.chunk_chars = 8",
    # numbered words: a reply repeating itself would be cut by the loop guard
    'faux.set_responses([" ".join(f"streaming word {i}." for i in range(60)),'
    ' " ".join(f"stop me {i}." for i in range(400)), "after the stop"])',
    "%%agent --model faux/faux-1 --tools none\nTalk slowly.",
    "%%agent --model faux/faux-1 --tools none\nTalk forever.",
    "%%agent --model faux/faux-1 --tools none\nStill there?",
]  # fmt: skip


def own_notebook(lab, request, cells) -> str:
    """A notebook (and so a session file) of this test alone: the tests pass in any order."""
    name = "nb-" + hashlib.sha1(request.node.name.encode()).hexdigest()[:8] + ".ipynb"  # no word a locator sees
    write_notebook(lab.root / name, cells)
    return name


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("root")
    home = tmp_path_factory.mktemp("home")
    server = Lab(root, home)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


def shot(page, locator, name: str, *, clip: dict | None = None, commit: bool = True) -> Path:
    """Screenshot ``locator`` (or the page's ``clip`` region) into the artifacts folder; with
    ``PI_NOTEBOOK_UPDATE_SCREENSHOTS=1`` also into the committed ``screenshots/`` (unless ``commit=False``)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    if locator is None:
        page.screenshot(path=str(path), clip=clip)
    else:
        locator.scroll_into_view_if_needed()
        locator.screenshot(path=str(path))
    if commit and os.environ.get("PI_NOTEBOOK_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(path, SCREENSHOTS / name)
    return path


# Words (2+ letters) of a <pre> that the browser split over two lines, and whether any line wrapped at all.
SPLIT_WORDS = """pre => {
  const split = [], range = document.createRange();
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.data.matchAll(/[A-Za-z]{2,}/g)) {
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) split.push(m[0]);
    }
  }
  range.selectNodeContents(pre);
  const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  return { split, wrapped: lines > pre.textContent.split("\\n").length };
}"""


def assert_inside(box, outer, what: str) -> None:
    assert box["x"] >= outer["x"] - 0.5 and box["x"] + box["width"] <= outer["x"] + outer["width"] + 0.5, (
        f"{what} is cut off: {box} not inside {outer}"
    )


def test_every_role_the_inspector_and_no_script_runs(lab, page, request):
    open_notebook(page, lab, own_notebook(lab, request, ROLES_CELLS))
    set_notebook_width(page, NOTEBOOK_WIDTH)
    run_all(page)
    wait_idle(page, timeout=120_000)
    page.wait_for_selector("[data-pane=request]", timeout=60_000)
    transcript = page.locator(".jp-OutputArea-output", has=page.locator("article[data-role]")).first
    roles = ("user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary")
    for role in (*roles, "notebookCell"):
        assert transcript.locator(f"article[data-role={role}]").count() >= 1, role
    assert transcript.locator("article[data-role=notification]").count() == 1  # unknown role: raw JSON fallback
    assert transcript.locator("article[data-role=bashExecution][data-visibility=ui]").count() == 1  # excluded
    assert transcript.locator("article[data-role=notification][data-visibility=ui]").count() == 1  # never sent
    assert transcript.locator("article[data-visibility=llm]").count() == 1  # display=False, shown with show_hidden
    text = transcript.inner_text()
    assert "Request was aborted" in text and "not sent to the llm" in text.lower()
    # the payloads are shown as text, never run
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".jp-OutputArea-output script").count() == 0
    assert page.locator(".jp-OutputArea-output [onerror]").count() == 0
    # the header counts all messages and the hidden ones (display: false; shown here, show_hidden=True)
    assert transcript.locator(".pi-count").inner_text() == "12 messages · 1 hidden (shown)"
    assert transcript.locator(".pi-transcript").evaluate("el => el.scrollWidth <= el.clientWidth")

    # %bash! is shown but marked; the agent run shows a tool call linked to its result
    assert page.locator("article[data-role=bashExecution][data-visibility=ui]").count() >= 2
    assert page.locator("article[data-role=toolResult]").count() >= 2

    inspector = page.locator(".jp-OutputArea-output", has=page.locator("[data-pane=request]")).first
    for pane in ("agent", "llm", "request"):
        assert inspector.locator(f"[data-pane={pane}]").count() >= 1, pane
    statuses = {inspector.locator(f"[data-status={s}]").count() for s in ("translated", "dropped", "passed")}
    assert 0 not in statuses  # bash → user (translated), %bash! (dropped), prompts (passed)
    assert "private-token" in " ".join(inspector.locator("[data-pane=agent]").all_inner_texts())
    request_text = inspector.locator("[data-pane=request]").first.inner_text()
    assert "private-token" not in request_text  # the excluded command never reaches the provider request
    check_inspector_layout(page, inspector)

    fit_notebook_in_window(page)  # a screenshot only shows what is inside the window
    page.mouse.move(0, 0)  # no hover or focus highlight
    page.evaluate("document.activeElement?.blur()")
    shot(page, transcript, "transcript.png")
    shot(page, inspector, "inspector.png")


def check_inspector_layout(page, inspector) -> None:
    """At a 968 px notebook: nothing overflows, JSON wraps between words, the request pane is as tall as the
    rows, and both token figures are shown, each saying where it comes from."""
    root = inspector.locator(".pi-inspector")
    inspector.scroll_into_view_if_needed()
    assert root.evaluate("el => [el.scrollWidth, el.clientWidth]") == [root.evaluate("el => el.clientWidth")] * 2
    viewport = {"x": 0, "width": page.viewport_size["width"]}
    for button in root.locator(".pi-copy").all():
        assert_inside(button.bounding_box(), viewport, "a copy button")
        assert_inside(button.bounding_box(), root.bounding_box(), "a copy button")
    assert_inside(root.locator("select[data-control=provider]").bounding_box(), root.bounding_box(), "the select")

    # (b) long JSON strings wrap at spaces: no word split over two lines (the system prompt does wrap)
    body = root.locator("pre.pi-request-json")
    result = body.evaluate(SPLIT_WORDS)
    assert result["wrapped"] and result["split"] == [], result
    row = root.locator(".pi-insp-row[data-status=translated]").first
    row.locator("[data-pane=agent]").click()
    assert row.get_attribute("aria-expanded") == "true"
    for box in row.locator(".pi-insp-expanded pre").all():
        assert box.evaluate(SPLIT_WORDS)["split"] == []
    row.locator("[data-pane=agent]").click()
    assert row.get_attribute("aria-expanded") == "false"

    # (c) the request pane is as tall as the rows beside it (they are taller than its 16em minimum here),
    # its JSON scrolls inside, and it has no empty space below the JSON
    pane = root.locator("[data-pane=request]").bounding_box()
    rows = root.locator(".pi-insp-rows-pane").bounding_box()
    assert abs(pane["height"] - rows["height"]) <= 2, (pane, rows)
    assert abs(body.bounding_box()["y"] + body.bounding_box()["height"] - pane["y"] - pane["height"]) <= 2
    assert body.evaluate("el => el.scrollHeight > el.clientHeight")

    # (d) the estimate and the provider-reported figure of the last reply, both visible and labelled
    estimate, reported = root.locator("[data-figure=estimate]"), root.locator("[data-figure=reported]")
    assert estimate.is_visible() and reported.is_visible()
    compaction = r"( · compacts at ~[\d,]+ tokens(; it would keep #\d+ on)?)?"  # where Pi's compaction would start
    assert re.fullmatch(
        r"~[\d,]+ / 128,000 tokens \([\d.]+%\) estimate: messages \+ system prompt \+ tools, chars/4" + compaction,
        estimate.inner_text(),
    ), estimate.inner_text()
    # the last reply is #6: two %bash, the cell that scripted the model, the prompt, a tool call, its result, it
    assert re.fullmatch(
        r"[\d,]+ tokens \([\d.]+%\) reported by the provider for the last reply \(#6\)", reported.inner_text()
    ), reported.inner_text()
    for figure in (estimate, reported):
        assert_inside(figure.bounding_box(), root.bounding_box(), "a token figure")

    # a narrow notebook (a side-by-side panel): one column, the request under the rows, still no overflow
    set_notebook_width(page, 560)
    assert root.evaluate("el => el.scrollWidth <= el.clientWidth")
    pane = root.locator("[data-pane=request]").bounding_box()
    rows = root.locator(".pi-insp-rows-pane").bounding_box()
    assert pane["y"] >= rows["y"] + rows["height"] - 1 and pane["height"] > 100, (pane, rows)
    for button in root.locator(".pi-copy").all():
        assert_inside(button.bounding_box(), root.bounding_box(), "a copy button")
    shot(page, inspector, "inspector-narrow.png", commit=False)
    set_notebook_width(page, NOTEBOOK_WIDTH)


def test_replies_stream_live_and_the_stop_button_stops(lab, page, request):
    open_notebook(page, lab, own_notebook(lab, request, LIVE_CELLS))
    set_notebook_width(page, NOTEBOOK_WIDTH)
    run_all(page)
    streaming = page.locator("article[data-role=assistant]")
    streaming.first.wait_for(timeout=60_000)  # the kernel starts, imports, and the first tokens arrive
    lengths = set()
    for _ in range(50):  # sample the reply while it streams
        lengths.add(len(streaming.first.inner_text()))
        if len(lengths) >= 4:
            break
        page.wait_for_timeout(100)
    assert len(lengths) >= 4, f"the reply did not grow while streaming: {sorted(lengths)}"
    # wait for the second (endless) reply to start, then press the stop button
    page.wait_for_function(
        "() => document.querySelectorAll('article[data-role=assistant]').length >= 2", timeout=60_000
    )
    page.wait_for_timeout(700)
    page.click("jp-button[data-command='notebook:interrupt-kernel'], button[data-command='notebook:interrupt-kernel']")
    wait_idle(page, timeout=60_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('article[data-role=assistant]')].some(a => /aborted/i.test(a.innerText))",
        timeout=30_000,
    )
    # Run All stopped at the interrupted cell: the last cell has not run; run it by hand and the agent answers
    last = page.locator(".jp-Cell").nth(4)
    assert "after the stop" not in last.inner_text()
    assert "Interrupted:" in page.locator(".jp-Cell").nth(3).inner_text()
    last.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    last.locator("article[data-role=assistant]", has_text="after the stop").wait_for(timeout=30_000)
    fit_notebook_in_window(page)
    page.mouse.move(0, 0)
    shot(page, page.locator(".jp-Notebook"), "streaming-stop.png")


@pytest.fixture(scope="module", autouse=True)
def _chromium_present():
    assert shutil.which("chromium") or Path(CHROMIUM).exists(), "install Debian's chromium (apt-get install chromium)"


def test_notebook_7_renders_the_same_views(lab, page, request):
    page.goto(f"{lab.url}/notebooks/{own_notebook(lab, request, ROLES_CELLS)}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    run_all(page)  # once: it waits for the kernel to be attached, and fails if Run All ran nothing
    page.wait_for_selector("[data-pane=request]", timeout=60_000)
    assert page.locator("article[data-role=bashExecution][data-visibility=ui]").count() >= 1
    assert page.locator("article[data-role=compactionSummary]").count() == 1
    assert page.evaluate("window.__pwned") is None


def test_a_saved_notebook_re_renders_without_a_kernel(lab, page):
    import httpx

    write_notebook(
        lab.root / "saved.ipynb",
        [SETUP, 'faux.set_responses(["A **saved** answer"])', "%%agent --model faux/faux-1 --tools none\nhello"],
    )
    open_notebook(page, lab, "saved.ipynb")
    run_all(page)
    wait_idle(page)
    page.locator("article[data-role=assistant]", has_text="saved answer").wait_for(timeout=30_000)
    page.keyboard.press("Control+s")
    page.wait_for_timeout(1500)
    for kernel in httpx.get(f"{lab.url}/api/kernels").json():  # no kernel any more
        httpx.delete(f"{lab.url}/api/kernels/{kernel['id']}")
    page.goto(f"{lab.url}/lab/workspaces/reopened/tree/saved.ipynb")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.locator("article[data-role=assistant]", has_text="saved answer").wait_for(timeout=30_000)
    assert page.locator("article[data-role=user]").count() == 1


def test_the_dark_theme_keeps_messages_readable(lab, page, request):
    open_notebook(page, lab, own_notebook(lab, request, ROLES_CELLS))
    set_notebook_width(page, NOTEBOOK_WIDTH)
    run_all(page)
    wait_idle(page, timeout=120_000)
    article = page.locator("article[data-role=user]").first
    article.wait_for(timeout=60_000)

    def luminance(css_color: str) -> float:
        r, g, b = (float(x) for x in re.findall(r"[\d.]+", css_color)[:3])
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255

    def colours():
        return article.evaluate(
            """el => {
                 let bg = 'rgba(0, 0, 0, 0)', node = el;
                 while (node && bg === 'rgba(0, 0, 0, 0)') {
                   bg = getComputedStyle(node).backgroundColor;
                   node = node.parentElement;
                 }
                 return [getComputedStyle(el).color, bg];
               }"""
        )

    light_text, light_bg = colours()
    assert luminance(light_text) < luminance(light_bg)
    set_theme(page, "JupyterLab Dark")
    try:
        dark_text, dark_bg = colours()
        assert luminance(dark_bg) < 0.35 and luminance(dark_text) > luminance(dark_bg) + 0.3  # light on dark
        fit_notebook_in_window(page)
        page.mouse.move(0, 0)
        transcript = page.locator(".jp-OutputArea-output", has=page.locator("article[data-role]")).first
        shot(page, transcript, "transcript-dark.png")
    finally:  # the theme is a saved setting of this Lab: the next tests expect the light one
        set_theme(page, "JupyterLab Light")


def set_theme(page, name: str) -> None:
    page.click("text=Settings")
    page.click("text=Theme")
    page.click(f"text={name}")
    light = "true" if "Light" in name else "false"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
    page.wait_for_timeout(500)


def test_the_quickstart_runs_top_to_bottom(lab, page):
    """notebooks/00-quickstart.ipynb (a copy, outputs cleared) with Run All: every cell runs, none fails."""
    folder = lab.root / "quickstart"
    shutil.copytree(NOTEBOOKS, folder, ignore=shutil.ignore_patterns(".pi_sessions", ".ipynb_checkpoints"))
    notebook = folder / "00-quickstart.ipynb"
    nb = json.loads(notebook.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nb["metadata"].pop("widgets", None)
    notebook.write_text(json.dumps(nb, indent=1))

    open_notebook(page, lab, "quickstart/00-quickstart.ipynb")
    set_notebook_width(page, NOTEBOOK_WIDTH)
    run_all(page)
    # generous: the local model may load (and answer) slowly on a small machine
    errors = wait_all_cells_ran(page, timeout=120_000)
    assert errors == [], errors
    # (the inspector's request panel may quote one: the local provider's worked example of a failing cell)
    assert page.locator(".jp-OutputArea-output:not(:has(.pi-inspector))", has_text="Traceback").count() == 0
    assert page.locator("article[data-role=assistant]").count() >= 1
    page.wait_for_selector("[data-pane=request]", timeout=30_000)

    fit_notebook_in_window(page)
    shot(page, page.locator(".jp-NotebookPanel"), "quickstart-full.png", commit=False)
    # The README's picture: from the first shell command to the agent's answer (the whole notebook if the
    # quickstart no longer has those cells).
    cells = page.locator(".jp-Notebook .jp-CodeCell").all()
    editors = [cell.locator(".jp-InputArea-editor") for cell in cells]  # none for a hidden source (check cells)
    sources = [e.inner_text().strip() if e.count() and e.is_visible() else "" for e in editors]
    first = next((i for i, src in enumerate(sources) if src.startswith("%bash")), None)
    last = next((i for i, src in enumerate(sources) if src.startswith("%%agent")), None)
    if first is None or last is None or last < first:
        shot(page, page.locator(".jp-Notebook"), "quickstart.png")
    else:
        top, bottom = cells[first].bounding_box(), cells[last].bounding_box()
        notebook = page.locator(".jp-Notebook").bounding_box()
        clip = {"x": notebook["x"], "y": top["y"] - 8, "width": notebook["width"]}
        clip["height"] = bottom["y"] + bottom["height"] + 8 - clip["y"]
        shot(page, None, "quickstart.png", clip=clip)
