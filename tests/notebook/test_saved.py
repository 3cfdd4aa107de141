"""What a saved notebook keeps of a finished cell (#13): the saved form only, small, and the same everywhere."""

from __future__ import annotations

import json
from typing import Literal

import pytest

from pi_notebook.agent import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CustomMessage,
    register_message_type,
    to_pi_json,
)
from pi_notebook.ai import AssistantMessage, PiModel, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from pi_notebook.notebook.saved import STYLE, TRANSCRIPT_MIME, transcript_bundle
from tests.benchmarks.bench_saved import execute, session_file

SAVED_FORM = {TRANSCRIPT_MIME, "text/html", "text/plain"}


def test_a_notebook_executed_headless_keeps_each_cell_once_and_no_widget(tmp_path):
    cells = [
        "%load_ext pi_notebook\nfrom pi_notebook.ai import faux\nfaux.set_responses(['It is **done**.'])",
        "%%agent --model faux/faux-1 --tools none\nAre you there?",
        *["%bash echo hi"] * 3,
    ]
    with_state, _ = execute(tmp_path, cells)
    nb = json.loads(with_state.read_text())
    shown = [o for cell in nb["cells"][1:] for o in cell["outputs"] if o["output_type"] == "display_data"]
    assert len(shown) == 4 and all(set(o["data"]) == SAVED_FORM for o in shown)
    agent = {k: v if k == TRANSCRIPT_MIME else "".join(v) for k, v in shown[0]["data"].items()}
    assert [json.loads(m)["role"] for m in agent[TRANSCRIPT_MIME]["messages"]] == ["user", "assistant"]
    assert "It is **done**." in agent["text/html"] and agent["text/plain"].startswith(
        "user, assistant\nIt is **done**."
    )
    # the stylesheet once, in the first output (it applies to the whole page); the others keep their class names
    pages = ["".join(o["data"]["text/html"]) for o in shown]
    assert [page.count("<style>") for page in pages] == [1, 0, 0, 0] and STYLE in pages[0]
    assert all(page.startswith("<div class=pi-s><div class=") for page in pages[1:])
    # nbclient saves the last state of closed widgets: the cells emptied theirs before closing them
    models = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    assert all(len(json.dumps(model)) < 2_000 for model in models.values())
    assert with_state.stat().st_size < 30_000
    lines = [json.loads(line) for line in session_file(tmp_path).read_text().splitlines()]
    saved = [json.loads(m) for o in shown for m in o["data"][TRANSCRIPT_MIME]["messages"]]
    assert saved == [entry["message"] for entry in lines if entry.get("type") == "message"]  # the session, once


def test_a_long_text_is_whole_in_the_json_and_cut_in_the_fallbacks():
    text = "<script>alert(1)</script> " + "x" * 5_000_000
    bundle = transcript_bundle([to_pi_json(UserMessage(content=text))], ["both"])
    assert json.loads(bundle[TRANSCRIPT_MIME]["messages"][0])["content"] == text
    page = bundle["text/html"]
    assert len(page) < 5_000 and "more characters" in page and "&lt;script&gt;" in page
    assert page.count("<style>") == 1 and STYLE in page and "<script" not in page
    assert len(bundle["text/plain"]) < 1_000


# --- each role's saved text/html: the same header and text as text/plain, without an assistant's usage --------------


class SavedNote(PiModel):
    role: Literal["testSavedNote"] = "testSavedNote"
    city: str


def saved_html(message, level="both", show_hidden=False):
    data = to_pi_json(message) if hasattr(message, "to_pi_json") else message
    page = transcript_bundle([data], [level], show_hidden=show_hidden)["text/html"]
    return page.removeprefix(f"<div class=pi-s>{STYLE}").removesuffix("</div>")


def assistant(*content, **kw):
    return AssistantMessage(content=list(content), api="faux", provider="faux", model="faux-1", **kw)


@pytest.mark.parametrize(
    ("message", "html"),
    [
        (UserMessage(content="hi <b>"), "<div class=u><b>[user]</b><pre>hi &lt;b&gt;</pre></div>"),
        (
            assistant(TextContent(text="Done."), ToolCall(id="t1", name="ls", arguments={}), usage=Usage(input=12)),
            "<div><b>[assistant]</b><pre>Done.&#10;→ ls {}</pre></div>",
        ),
        (
            ToolResultMessage(tool_call_id="t1", tool_name="ls", content=[TextContent(text="a.txt")], is_error=True),
            "<div><b>[tool result: ls] (✗ error)</b><pre>a.txt</pre></div>",
        ),
        (
            BashExecutionMessage(command="ls", output="a\n", exit_code=0, exclude_from_context=True),
            "<div class=b><b>[shell] (not sent to the LLM)</b><pre>$ ls&#10;a&#10;exit 0</pre></div>",
        ),
        (
            BranchSummaryMessage(summary="Tried A.", from_id="ab12"),
            "<div class=s><b>[Branch summary (from ab12)]</b><pre>Tried A.</pre></div>",
        ),
        (
            CustomMessage(custom_type="git", content="3 files"),
            "<div class=c><b>[custom: git]</b><pre>3 files</pre></div>",
        ),
    ],
)
def test_each_role_has_its_look_label_and_text_and_an_assistant_no_usage(message, html):
    assert saved_html(message) == html
    folded = html[html.index("<b>") + 3 : html.index("</b>")]
    assert saved_html(message, "llm").startswith(f"<details class=h><summary>{folded} (hidden in the UI)</summary>")


def test_a_hidden_message_is_folded_under_its_label_unless_hidden_ones_are_shown():
    memo = CustomMessage(custom_type="memo", content="remember X", display=False)
    label = "[custom: memo] (hidden — LLM only)"
    assert saved_html(memo, "llm") == (
        f"<details class=h><summary>{label} (hidden in the UI)</summary><b>{label}</b><pre>remember X</pre></details>"
    )
    assert saved_html(memo, "llm", show_hidden=True) == f"<div class=c><b>{label}</b><pre>remember X</pre></div>"


def test_an_assistant_message_with_no_text_shows_no_usage_either():
    # The usage footer is the live view's and the JSON's; an empty answer used to show it as its text.
    empty = assistant(usage=Usage(input=10, output=0))
    assert saved_html(empty) == "<div><b>[assistant]</b></div>"
    bundle = transcript_bundle([to_pi_json(empty)], ["both"])
    assert "faux-1" not in bundle["text/plain"] and bundle["text/plain"].startswith("assistant\n")
    assert "faux-1 · stop" in transcript_bundle([to_pi_json(empty)], ["both"], full_text=True)["text/plain"]


def test_an_invalid_message_of_a_known_role_looks_unknown_not_like_that_role():
    html = saved_html({"role": "user", "content": 5, "timestamp": 1})
    assert html.startswith("<div><b>[unknown message: 'user'] (not sent to the LLM)</b><pre>reason:")


def test_a_role_an_app_registered_shows_its_name_and_escaped_json():
    register_message_type(SavedNote, replace=True)  # no converter: UI only
    html = saved_html(SavedNote(city="<Oslo>"))
    assert html.startswith("<div><b>[message: testSavedNote] (not sent to the LLM)</b><pre>{&#10;")
    assert '"city": "&lt;Oslo&gt;"' in html and "<Oslo>" not in html


class _Kernel:
    """The part of ipykernel's kernel that :func:`carries_stylesheet` reads: the request being answered."""

    def __init__(self) -> None:
        self.parent: dict = {}

    def get_parent(self, channel: str = "shell") -> dict:
        return self.parent


def test_the_stylesheet_goes_with_the_first_transcript_of_each_front_end_and_again_when_that_cell_reruns(monkeypatch):
    import IPython

    from pi_notebook.notebook import static_display

    kernel = _Kernel()
    monkeypatch.setattr(IPython, "get_ipython", lambda: type("Shell", (), {"kernel": kernel})())
    monkeypatch.setattr(static_display, "_style_carriers", {})

    def run(client: str, cell: str | None) -> bool:
        kernel.parent = {"header": {"session": client}, "metadata": {"cellId": cell} if cell else {}}
        return static_display.carries_stylesheet()

    # JupyterLab names its cells: the first cell carries it, and again when re-run (its new output replaces it)
    assert [run("lab", c) for c in ("c1", "c2", "c3", "c1", "c2")] == [True, False, False, True, False]
    assert run("console", "x1") and not run("console", "x2")  # another front end on the same kernel: its own
    # nbclient names no cell and runs each once: the first output only
    assert [run("nbclient", None) for _ in range(3)] == [True, False, False]
    kernel.parent = {}  # no request known (a display from outside any cell): always
    assert static_display.carries_stylesheet() and static_display.carries_stylesheet()
