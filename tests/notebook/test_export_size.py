"""The HTML export's size and memory (issue #21, failure 3): the page holds each text of the session once, is at
most ``PAGE_RATIO`` times the session's size (plus the views' code), and is made in memory bounded by
``MEMORY_RATIO`` times the session's size, for a realistic session of prose and for one full of ``<x>`` markup.
The page's inspector is the live inspector's state, made without a widget. (Before the fix: 6.7× for prose and
26× for ``<x>``, a peak of 43× and 349× the session.)"""

from __future__ import annotations

import json
import random
import re
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

import pi_notebook
from pi_notebook.ai import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_notebook.coding_agent import BashExecutionMessage
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.notebook.export import page_state
from pi_notebook.notebook.inspector import InspectorWidget
from tests.e2e.test_export_browser import every_role
from tests.notebook.test_export import page_data, run_session

PAGE_RATIO = 3
"""The page, less the views' code, is at most this many times the session file's size (README)."""
MEMORY_RATIO = 10
"""Python's peak allocation while exporting, at most this many times the session file's size."""

WORDS = [
    "the", "model", "reads", "each", "message", "once", "and", "inspector", "shows", "what", "it", "gets;", "a",
    "tool", "result", "holds", "file,", "reply", "explains", "why", "test", "fails", "which", "line", "to",
    "change,", "then", "shell", "runs", "tests", "again",
]  # fmt: skip


def text(rnd: random.Random, chars: int, mark: str, markup: bool) -> str:
    """``chars`` characters of prose (``markup``: each word tagged, ``<x>word</x>``), starting with ``mark``."""
    words, size = [mark], len(mark)
    while size < chars:
        word = rnd.choice(WORDS)
        words.append(f"<x>{word}</x>" if markup else word)
        size += len(words[-1]) + 1
    return " ".join(words)


def write_session(path: Path, turns: int, *, markup: bool = False) -> list[str]:
    """A session file of ``turns`` turns as a coding session has them: a prompt, a reply with thinking and a tool
    call, the tool's result, a reply; a ``%bash`` every fourth turn. Returns each message's unique mark."""
    rnd = random.Random(21)
    marks: list[str] = []

    def mark(kind: str) -> str:
        marks.append(f"[{kind}{len(marks)}]")
        return marks[-1]

    def reply(content: list, stop_reason: str) -> AssistantMessage:
        return AssistantMessage(
            content=content, api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5",
            stop_reason=stop_reason, usage=Usage(input=12_000, output=400, cache_read=8_000, total_tokens=20_400),
        )  # fmt: skip

    with SessionFile.create(path, "/home/user/project") as file:
        file.append_model_change("anthropic", "claude-sonnet-4-5")  # as Pi starts a session
        for turn in range(turns):
            file.append_message(UserMessage(content=text(rnd, 400, mark("u"), markup)))
            thinking = ThinkingContent(thinking=text(rnd, 300, mark("t"), markup))
            answer = TextContent(text=text(rnd, 1_200, mark("a"), markup))
            call = ToolCall(id=f"call_{turn}", name="read", arguments={"path": f"src/module_{turn}.py"})
            file.append_message(reply([thinking, answer, call], "toolUse"))
            result = [TextContent(text=text(rnd, 2_500, mark("r"), markup))]
            file.append_message(ToolResultMessage(tool_call_id=f"call_{turn}", tool_name="read", content=result))
            file.append_message(reply([TextContent(text=text(rnd, 800, mark("f"), markup))], "stop"))
            if turn % 4 == 0:
                output = text(rnd, 1_000, mark("b"), markup)
                file.append_message(BashExecutionMessage(command="pytest -q", output=output, exit_code=1))
    return marks


def code_size(tmp_path: Path) -> int:
    """What a page weighs without a session: the views' code, the stylesheet, the header."""
    return pi_notebook.export_html([], tmp_path / "empty.html").stat().st_size


@pytest.mark.parametrize("markup", [False, True], ids=["prose", "markup"])
def test_the_page_holds_each_text_once_and_stays_within_three_times_the_session(shell, capsys, tmp_path, markup):
    source = tmp_path / "source.jsonl"
    marks = write_session(source, 120, markup=markup)  # about 0.7 MB of session
    session_size = source.stat().st_size
    # the next run's model as a user with a key has it (the local model's body re-renders the history as its own
    # chat: another copy of each text, which it is what that model is sent)
    assert shell.cell("%agent_config default_model=anthropic/claude-sonnet-4-5").success
    assert shell.cell(f"%agent_session open {source}").success
    capsys.readouterr()
    assert shell.cell("%agent_session export page.html").success
    assert "exported" in capsys.readouterr().out
    page = tmp_path / "page.html"
    text_of_page = page.read_text("utf-8")
    # Each text once. A prompt, a tool's result and a reply are sent as they are: once. A %bash output is also in
    # the text the LLM reads for it, and the text and thinking of a reply that thought are joined in what OpenAI's
    # Chat Completions is sent: another text each, so twice.
    counts = Counter({mark: text_of_page.count(mark) for mark in marks})
    assert {mark: n for mark, n in counts.items() if n != (1 if mark[1] in "urf" else 2)} == {}
    raw = json.loads(re.search(r'id="pi-export-state">(.*?)</script>', text_of_page, re.S).group(1))
    texts = [part for part in raw["parts"] if isinstance(part, str)]
    assert len(texts) == len(set(texts))  # no text twice
    ratio = (page.stat().st_size - code_size(tmp_path)) / session_size
    assert ratio <= PAGE_RATIO, f"{ratio:.2f}× the session"
    # and the page is the whole session: every message, its row and each provider's request body
    state = page_data(page)["pi-export-state"]
    messages = len([mark for mark in marks if mark[1] != "t"])  # a thinking block is in its reply
    assert len(state["transcript"]["messages"]) == messages == len(state["inspector"]["rows"])
    assert len(state["inspector"]["requests"]) >= 4


def test_the_page_is_made_in_memory_bounded_by_the_sessions_size(tmp_path):
    source = tmp_path / "source.jsonl"
    write_session(source, 500)  # about 3 MB
    session_size = source.stat().st_size
    with SessionFile.open(source, readonly=True) as file:
        file.build_session_context()  # loaded as an open session is, before the export
        tracemalloc.start()
        try:
            page = pi_notebook.export_html(file, tmp_path / "page.html")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak <= MEMORY_RATIO * session_size, f"peak {peak / session_size:.1f}× the session"
    assert page.stat().st_size - code_size(tmp_path) <= PAGE_RATIO * session_size


def test_a_reply_of_300_000_x_tags_costs_its_own_size():
    """The red team's case: 300,000 × ``<x>`` gave a 27.5 MB page and a 397 MB peak."""
    message = UserMessage(content="<x>" * 300_000)
    tracemalloc.start()
    try:
        page = pi_notebook.notebook.export.html_page([message])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(page.encode("utf-8")) < 900_000 + 400_000  # the text once, and the views' code
    assert peak < 8 * 900_000


def inspector_widget_state(source) -> dict:
    widget = InspectorWidget(source)
    try:
        return json.loads(json.dumps({key: getattr(widget, key) for key in PAGE_INSPECTOR_KEYS}))
    finally:
        widget.close()


PAGE_INSPECTOR_KEYS = (
    "rows", "requests", "provider", "context_window", "total_tokens", "overhead_tokens", "reported_usage",
    "model_name", "notes", "busy", "requests_before", "compaction",
)  # fmt: skip


def test_the_pages_inspector_is_the_inspectors_state(shell, tmp_path):
    run_session(shell)
    sources = [shell.session, every_role()]
    with SessionFile.open(shell.session.file.path, readonly=True) as file:
        sources.append(file)
        for source in sources:
            page = page_state(source)["inspector"]
            assert set(page) == set(PAGE_INSPECTOR_KEYS)
            assert page == inspector_widget_state(source)


def test_the_state_script_holds_no_end_tag_and_no_comment(tmp_path):
    messages = [UserMessage(content="</script><!-- <script>alert(1)</script> -->"), UserMessage(content="<x>" * 20)]
    text_of_page = pi_notebook.export_html(messages, tmp_path / "page.html").read_text("utf-8")
    state = re.search(r'<script type="application/json" id="pi-export-state">(.*?)</script>', text_of_page, re.S)
    assert "</" not in state.group(1) and "<!" not in state.group(1)
    assert "<x>" * 20 in state.group(1)  # written as it is: no escape makes it six times longer
