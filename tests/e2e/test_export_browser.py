"""The exported HTML page in real Chromium, opened from ``file://`` as a double-click does, with the network
blocked: nothing is fetched, every role and the inspector's three panes render, the provider switch and the
filters work, and a session made of the XSS corpus runs none of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

import pi_notebook
from pi_notebook.agent_core import from_pi_json
from pi_notebook.ai import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_notebook.coding_agent import BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from tests.e2e.lab import CHROMIUM, CHROMIUM_ARGS
from tests.reliability.test_xss_fallbacks import MARKER, role_messages

LOCAL = ("file:", "blob:", "data:")

# Kept by the page as it loads: what CSP refused (a sanitiser miss would show here) and any dialog.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI || "-"}`.trim());
});
"""


@pytest.fixture(scope="module", autouse=True)
def _chromium_present():
    assert shutil.which("chromium") or Path(CHROMIUM).exists(), "install Debian's chromium (apt-get install chromium)"


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:  # closes the browser on exit
        yield p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


class Opened:
    """A page opened offline: every request it made, the ones the route refused, dialogs and errors."""

    def __init__(self, browser, path: Path):
        self.context = browser.new_context(viewport={"width": 1280, "height": 1000})
        self.requests: list[str] = []
        self.refused: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []

        def route(r):
            if r.request.url.startswith(LOCAL):
                r.continue_()
            else:
                self.refused.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        self.context.add_init_script(WATCH)
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready=true]", timeout=30_000)
        self.page.wait_for_selector("[data-pane=request]", timeout=30_000)

    def assert_nothing_fetched(self, *, handlers_refused: bool = False) -> None:
        """Nothing left the machine, nothing was refused but (``handlers_refused``) inline event handlers: the
        sanitiser (DOMPurify) parses HTML in an inert document that inherits the page's CSP, and Chromium reports
        the handlers it meets there as refused even though that document never runs anything."""
        assert self.refused == []
        assert [u for u in self.requests if not u.startswith(LOCAL)] == []
        violations = self.page.evaluate("window.__violations")
        errors = self.errors
        if handlers_refused:
            violations = [v for v in violations if v != "script-src-attr inline"]
            errors = [e for e in errors if not e.startswith("Executing inline event handler violates")]
        assert violations == []
        assert errors == [] and self.dialogs == []


def every_role() -> list:
    return [
        UserMessage(content=[TextContent(text="Why does **the test** fail?")]),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="Let me read the test first."),
                TextContent(text="I will read it."),
                ToolCall(id="call_1", name="read", arguments={"path": "test_app.py"}),
            ],
            api="faux",
            provider="faux",
            model="faux-1",
            stop_reason="toolUse",
            usage=Usage(input=1200, output=80, total_tokens=1280),
        ),
        ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="def test_app(): ...")]),
        BashExecutionMessage(command="pytest -q", output="\x1b[31m1 failed\x1b[0m, 4 passed", exit_code=1),
        BashExecutionMessage(command="cat .env", output="TOKEN=x", exit_code=0, exclude_from_context=True),
        CustomMessage(custom_type="git-status", content="2 files changed", display=False),
        CustomMessage(custom_type="reminder", content="Tests must pass before merging."),
        BranchSummaryMessage(summary="Tried pinning pytest; abandoned.", from_id="a1b2c3d4"),
        CompactionSummaryMessage(summary="## Goal\nFix the failing test.", tokens_before=48000),
        from_pi_json({"role": "notification", "content": "a role nobody registered", "timestamp": 1}),
    ]


def test_the_export_opens_offline_with_every_role_and_a_working_inspector(browser, tmp_path):
    path = pi_notebook.export_html(every_role(), tmp_path / "session.html", title="Every role")
    opened = Opened(browser, path)
    page = opened.page
    try:
        transcript = page.locator("#pi-transcript")
        for role in ("user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary",
                     "compactionSummary", "notification"):  # fmt: skip
            assert transcript.locator(f"article[data-role={role}]").count() >= 1, role
        assert transcript.locator(".pi-count").inner_text() == "10 messages · 1 hidden"  # display=False...
        transcript.locator(".pi-hidden-checkbox").check()  # ...shown with "show hidden", with no kernel
        assert transcript.locator(".pi-count").inner_text() == "10 messages · 1 hidden (shown)"
        assert transcript.locator("article[data-visibility=llm]").is_visible()
        assert "Let me read the test first." in transcript.text_content()  # thinking, collapsed

        inspector = page.locator("#pi-inspector")
        for pane in ("agent", "llm", "request"):
            assert inspector.locator(f"[data-pane={pane}]").count() >= 1, pane
        # the provider switch changes the request pane
        request = inspector.locator("[data-pane=request] pre").first
        select = inspector.locator("[data-control=provider]")
        providers = select.locator("option").all_inner_texts()
        assert len(providers) >= 4 and not select.is_disabled()
        first = request.inner_text()
        google = next(p for p in providers if p.startswith("google-generative-ai"))
        select.select_option(google)
        assert request.inner_text() != first and '"contents"' in request.inner_text()
        # the filters: by role, then by text
        rows = inspector.locator(".pi-insp-count")
        assert rows.inner_text().startswith("10 of 10 rows")
        inspector.locator("[data-control=role]").select_option("bashExecution")
        assert rows.inner_text().startswith("2 of 10 rows")
        inspector.locator("[data-control=role]").select_option("")
        inspector.locator("[data-control=search]").fill("pinning pytest")
        page.wait_for_function("document.querySelector('.pi-insp-count').textContent.startsWith('1 of 10')")
        opened.assert_nothing_fetched()
        assert "Every role" in page.locator(".pi-export-head h1").inner_text()
    finally:
        opened.context.close()


def test_an_export_of_the_xss_corpus_runs_none_of_it(browser, tmp_path):
    messages = [m for group in role_messages().values() for m in group]
    path = pi_notebook.export_html(messages, tmp_path / "xss.html")
    opened = Opened(browser, path)
    page = opened.page
    try:
        assert page.locator("article[data-role]").count() >= len(messages) - 1  # one is display=False
        # no link or source drawn from the corpus could run or load anything if followed
        urls = page.evaluate(
            """() => [...document.querySelectorAll('*')].flatMap((el) => [...el.attributes]
                 .filter((a) => /^(href|src|action|formaction|srcdoc|xlink:href|data|poster|background)$/.test(a.name))
                 .map((a) => a.value))"""
        )
        safe = ("#", "https:", "http:", "mailto:", "data:image/")
        assert [u for u in urls if not u.startswith(safe)] == []
        assert page.evaluate(f"window.{MARKER}") is None
        assert (
            page.evaluate(
                """() => [...document.querySelectorAll('*')].flatMap((el) =>
                 [...el.attributes].filter((a) => a.name.startsWith('on')).map((a) => el.tagName + ' ' + a.name))"""
            )
            == []
        )
        assert page.locator("body script").count() == 3  # the page's own: two JSON, one boot
        opened.assert_nothing_fetched(handlers_refused=True)
    finally:
        opened.context.close()
