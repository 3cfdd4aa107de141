"""In real JupyterLab and Chromium (#15): a row's what-if toggle changes the inspector's LLM pane and request pane,
with the changed lines marked, under a "preview — nothing stored" banner, while the session file stays as it was;
reset brings the stored view back; the compare view diffs two providers; the gauge and the rows show where the next
compaction would cut."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.e2e.lab import chromium_page, open_notebook, running_lab, write_notebook

ARTIFACTS = Path(__file__).parent / "_artifacts"
CELLS = [
    # keep_recent_tokens small: with a short history the next compaction would already cut somewhere
    "%load_ext pi_notebook\nimport pi_notebook\nfrom pi_notebook.ai import faux\n%agent_config keep_recent_tokens=8",
    "%bash echo SHELL-OUT-77",
    'faux.set_responses(["the first answer", "the second answer"])',
    "%%agent --model faux/faux-1 --tools none\nWhat did the shell say?",
    "%%agent --model faux/faux-1 --tools none\nAnd then?",
    "insp = pi_notebook.inspect(pi_notebook.current_session())\ninsp",
]
INSPECTOR_CELL = 5


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory, "whatif") as server:
        yield server


@pytest.fixture
def page(lab):
    with chromium_page(1400, 1000) as page:
        yield page


def run_cell(page, index: int) -> None:
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    prompt = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputPrompt")
    page.wait_for_function("el => /\\[\\d+\\]/.test(el.textContent)", arg=prompt.element_handle(), timeout=120_000)


def session_files(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.jsonl"))}


def test_what_if_preview_compare_and_cut_marker(lab, page):
    write_notebook(lab.root / "whatif.ipynb", CELLS)
    open_notebook(page, lab, "whatif.ipynb")
    for index in range(len(CELLS)):
        run_cell(page, index)
    # the live view (the saved form beside it is hidden while the widget lives)
    view = page.locator(".jp-Notebook .jp-Cell").nth(INSPECTOR_CELL).locator(".pi-inspector:visible").first
    view.locator("[data-pane=llm]", has_text="SHELL-OUT-77").first.wait_for(timeout=60_000)
    assert view.get_attribute("data-whatif") == "off"
    stored = session_files(lab.root)
    assert stored, "the notebook's session file"
    request = view.locator(".pi-request-json")
    before = request.inner_text()
    assert "SHELL-OUT-77" in before

    # exclude the %bash row (Pi's !!): a preview, asked from the kernel
    bash = view.locator(".pi-insp-row[data-role=bashExecution]").first
    bash.locator("[data-whatif=exclude]").click()
    page.wait_for_function("el => el.dataset.whatif === 'preview'", arg=view.element_handle(), timeout=30_000)
    banner = view.locator(".pi-whatif-banner")
    assert banner.is_visible() and "Preview — nothing stored" in banner.inner_text()
    bash = view.locator(".pi-insp-row[data-role=bashExecution]").first
    assert bash.get_attribute("data-status") == "dropped" and bash.get_attribute("data-diff") == "removed"
    assert bash.locator("[data-whatif=exclude]").get_attribute("aria-pressed") == "true"  # as stored, pressed
    llm = bash.locator("[data-pane=llm]")
    assert "no longer sent" in llm.inner_text()
    assert llm.evaluate("el => getComputedStyle(el).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    removed = request.locator("del.pi-diff-del")
    assert removed.count() >= 1 and "SHELL-OUT-77" in " ".join(removed.all_inner_texts())
    assert removed.first.evaluate("el => getComputedStyle(el).textDecorationLine") == "line-through"
    ARTIFACTS.mkdir(exist_ok=True)
    view.screenshot(path=str(ARTIFACTS / "inspector-whatif.png"))
    # nothing stored changed
    assert session_files(lab.root) == stored

    # compare: before / after the what-if, then two providers
    view.locator("[data-control=compare]").click()
    compare = view.locator("[data-pane=compare]")
    assert compare.locator("[data-control=compare-right]").input_value().startswith("whatif:")
    gone = compare.locator(".pi-cmp-row[data-kind=del] .pi-cmp-left", has_text="SHELL-OUT-77")
    assert gone.count() >= 1
    right = compare.locator("[data-control=compare-right]")
    other = next(
        v
        for v in right.locator("option").evaluate_all("os => os.map(o => o.value)")
        if v.startswith("now:") and v != compare.locator("[data-control=compare-left]").input_value()
    )
    right.select_option(other)
    assert compare.locator(".pi-cmp-row[data-kind=change]").count() >= 1
    assert compare.locator(".pi-cmp-row[data-kind=same]").count() >= 1
    view.screenshot(path=str(ARTIFACTS / "inspector-compare.png"))

    # reset: the stored view again
    view.locator("[data-control=whatif-reset]").click()
    assert view.get_attribute("data-whatif") == "off" and not banner.is_visible()
    assert request.inner_text() == before
    assert view.locator(".pi-insp-row[data-role=bashExecution]").first.get_attribute("data-status") == "translated"
    assert session_files(lab.root) == stored

    # the next compaction's cut (from the kernel's compaction state): a threshold mark, a cut line, marked rows
    assert view.locator(".pi-gauge-threshold").count() == 1
    assert view.locator(".pi-cut-line").count() == 1
    assert view.locator(".pi-insp-row[data-would-summarise=true]").count() >= 1
