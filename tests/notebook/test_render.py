"""The readable fallback of every message: what a reader sees in text/plain and text/markdown."""

from __future__ import annotations

import base64
import re
from typing import Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_notebook.agent import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    from_pi_json,
    register_message_type,
)
from pi_notebook.ai import (
    AssistantMessage,
    Cost,
    ImageContent,
    PiModel,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_notebook.notebook.cell_message import CellError, NotebookCellMessage
from pi_notebook.notebook.render import MessagesView, message_markdown, message_text, messages_mimebundle

XSS = "<script>alert(1)</script>"


def assistant(*content, **kw):
    kw.setdefault("api", "anthropic-messages")
    kw.setdefault("provider", "anthropic")
    kw.setdefault("model", "claude-x")
    return AssistantMessage(content=list(content), **kw)


def both(message):
    return message_text(message), message_markdown(message)


def png(size: int) -> ImageContent:
    return ImageContent(data=base64.b64encode(b"\0" * size).decode(), mime_type="image/png")


def fenced_blocks(md: str) -> list[str]:
    """The contents of the top-level backtick fences of ``md`` (a small CommonMark-like reader)."""
    blocks, current, fence = [], [], None
    for line in md.split("\n"):
        if fence is None:
            m = re.match(r"^(`{3,})[^`]*$", line)
            if m:
                fence, current = m[1], []
        elif re.fullmatch(rf"`{{{len(fence)},}}\s*", line):
            blocks.append("\n".join(current))
            fence = None
        else:
            current.append(line)
    assert fence is None, "unclosed fence"
    return blocks


def outside_fences(md: str) -> str:
    kept, fence = [], None
    for line in md.split("\n"):
        if fence is None and (m := re.match(r"^(`{3,})[^`]*$", line)):
            fence = m[1]
        elif fence is not None and re.fullmatch(rf"`{{{len(fence)},}}\s*", line):
            fence = None
        elif fence is None:
            kept.append(line)
    return "\n".join(kept)


# --- user ----------------------------------------------------------------------------------------------


def test_user_text_and_image_placeholder():
    text, md = both(UserMessage(content=[TextContent(text="Plot the data"), png(12 * 1024)]))
    assert text.splitlines()[0] == "[user]"
    assert "Plot the data" in text and "[image: image/png, 12 KB]" in text
    assert md.startswith("**User**")
    assert "Plot the data" in md and r"\[image: image/png, 12 KB\]" in md
    assert png(12 * 1024).data not in md + text  # the image data itself is never dumped


def test_user_string_content_and_pi_json():
    assert "hello" in message_text(UserMessage(content="hello"))
    assert "hello" in message_markdown({"role": "user", "content": "hello", "timestamp": 1})


def test_small_and_large_image_sizes():
    assert "[image: image/png, 100 B]" in message_text(UserMessage(content=[png(100)]))
    assert "[image: image/png, 2.0 MB]" in message_text(UserMessage(content=[png(2 * 1024 * 1024)]))


# --- assistant -----------------------------------------------------------------------------------------


def test_assistant_thinking_text_tool_call_and_footer():
    usage = Usage(input=1234, output=56, cache_read=2000, cost=Cost(total=0.0123))
    m = assistant(
        ThinkingContent(thinking="Let me look\nat the file"),
        TextContent(text="Reading it now."),
        ToolCall(id="toolu_1", name="read", arguments={"path": "data.csv", "limit": 10}),
        stop_reason="toolUse",
        usage=usage,
    )
    text, md = both(m)
    assert "    (thinking) Let me look\n" in text and "at the file" in text
    assert "Reading it now." in text
    assert '→ read {"path": "data.csv", "limit": 10}' in text
    assert text.splitlines()[-1] == "· claude-x · toolUse · 1,234 in / 56 out · 2,000 cache read · $0.0123"
    assert "<details><summary>Thinking</summary>\n\nLet me look\nat the file\n\n</details>" in md
    assert '**→ read** `{"path": "data.csv", "limit": 10}`' in md
    assert md.endswith(r"<sub>claude-x · toolUse · 1,234 in / 56 out · 2,000 cache read · \$0.0123</sub>")
    assert "toolu_1" not in text + md  # ids change on every run; strict nbval compares the output


def test_footer_leaves_out_zero_usage_and_cost():
    text = message_text(assistant(TextContent(text="hi")))
    assert text.splitlines()[-1] == "· claude-x · stop"


def test_redacted_thinking():
    m = assistant(ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="ENC", redacted=True))
    text, md = both(m)
    assert "(thinking) [Reasoning redacted]" in text
    assert r"\[Reasoning redacted\]" in md and "<details>" not in md
    assert "ENC" not in text + md


@pytest.mark.parametrize("reason", ["error", "aborted"])
def test_error_and_aborted_are_marked(reason):
    m = assistant(TextContent(text=""), stop_reason=reason, error_message="529 overloaded")
    text, md = both(m)
    assert f"✗ {reason}: 529 overloaded" in text
    assert f"**✗ {reason}:** 529 overloaded" in md


def test_multiline_error_goes_in_a_fence():
    md = message_markdown(assistant(stop_reason="error", error_message='HTTP 400\n{"error": "<bad>"}'))
    assert '{"error": "<bad>"}' in fenced_blocks(md)[0]


def test_streaming_assistant_has_a_marker_and_no_footer():
    m = assistant(TextContent(text="Half an ans"))
    text = message_text(m, streaming=True)
    assert "(streaming…)" in text and "· claude-x" not in text
    assert "streaming…" in message_markdown(m, streaming=True)


# --- tool results --------------------------------------------------------------------------------------


def test_tool_result_text_images_and_error_marker():
    ok = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="a,b\n1,2")])
    text, md = both(ok)
    assert text.splitlines()[0] == "[tool result: read]" and "a,b\n1,2" in text
    assert md.startswith("**Tool result** · `read`") and "✗" not in md
    assert fenced_blocks(md) == ["a,b\n1,2"]

    err = ToolResultMessage(
        tool_call_id="c2",
        tool_name="bash",
        content=[TextContent(text="boom"), png(2048)],
        details={"secret_ui_only": 1},
        is_error=True,
    )
    text, md = both(err)
    assert text.splitlines()[0] == "[tool result: bash] (✗ error)"
    assert "✗ error" in md.splitlines()[0]
    assert "[image: image/png, 2 KB]" in text
    assert "secret_ui_only" not in text + md  # details are not shown


def test_tool_result_without_content():
    text = message_text(ToolResultMessage(tool_call_id="c", tool_name="ls"))
    assert "(no output)" in text


# --- bash ----------------------------------------------------------------------------------------------


def test_bash_execution_terminal_block():
    m = BashExecutionMessage(
        command="make", output="err", exit_code=2, truncated=True, full_output_path="/tmp/pi-bash-1.log"
    )
    text, md = both(m)
    assert text == "[shell]\n$ make\nerr\nexit 2 · truncated — full output: /tmp/pi-bash-1.log"
    assert "`$ make`" in md and fenced_blocks(md) == ["err"]
    assert "`exit 2`" in md and "`truncated — full output: /tmp/pi-bash-1.log`" in md
    assert "not sent to the LLM" not in md


def test_bash_excluded_cancelled_and_empty():
    m = BashExecutionMessage(command="sleep 9", cancelled=True, exclude_from_context=True)
    text, md = both(m)
    assert text.splitlines()[0] == "[shell] (not sent to the LLM)"
    assert "not sent to the LLM" in md.splitlines()[0]
    assert "cancelled" in text and "exit" not in text and "(no output)" in text
    assert "exit 0" in message_text(BashExecutionMessage(command="true", exit_code=0))


# --- notebook cell ---------------------------------------------------------------------------------------


def test_a_failing_cell_with_a_plot_reads_as_a_cell_its_output_picture_and_error():
    m = NotebookCellMessage(
        source="plot(x)\nd['b']",
        execution_count=7,
        output="drawn\n",
        images=[png(2048)],
        error=CellError(name="KeyError", value="'b'", traceback="Traceback (most recent call last)\nKeyError: 'b'"),
    )
    text, md = both(m)
    assert text.splitlines()[0] == "[notebook cell: In [7]] (✗ error)"
    assert "[image: image/png, 2 KB]" in text and "✗ error: KeyError: 'b'" in text
    assert fenced_blocks(md) == ["plot(x)\nd['b']", "drawn", "Traceback (most recent call last)\nKeyError: 'b'"]
    assert md.splitlines()[2] == "```python"


def test_a_private_cut_interrupted_cell_says_each():
    m = NotebookCellMessage(
        source=f"print({XSS!r})", output=XSS, cancelled=True, truncated=True, full_output_path="/tmp/c.log",
        omitted=["an image of 20 MB was left out"], exclude_from_context=True,
    )  # fmt: skip
    text, md = both(m)
    assert text.splitlines()[0] == "[notebook cell] (not sent to the LLM)"
    assert "cancelled · truncated — full output: /tmp/c.log" in text and "an image of 20 MB was left out" in text
    assert "<script>" not in outside_fences(md)
    assert "(no output)" in message_text(NotebookCellMessage(source="x = 1"))


def test_bash_multiline_command_is_fenced():
    md = message_markdown(BashExecutionMessage(command="for i in 1 2\ndo echo $i; done", exit_code=0))
    assert fenced_blocks(md)[0] == "$ for i in 1 2\ndo echo $i; done"


# --- custom, summaries, unknown roles ------------------------------------------------------------------


def test_custom_message_visible_and_hidden():
    shown = CustomMessage(custom_type="git-status", content="3 files changed")
    text, md = both(shown)
    assert text.splitlines() == ["[custom: git-status]", "3 files changed"]
    assert "hidden" not in md
    hidden = CustomMessage(custom_type="memo", content=[TextContent(text="remember X")], display=False)
    text, md = both(hidden)
    assert "(hidden — LLM only)" in text and "hidden — LLM only" in md and "remember X" in text


def test_summaries():
    text, md = both(BranchSummaryMessage(summary="Tried plan A.", from_id="a1b2c3d4"))
    assert "Branch summary (from a1b2c3d4)" in text and "Branch summary (from a1b2c3d4)" in md
    assert "Tried plan A." in md
    text, md = both(CompactionSummaryMessage(summary="Goal: X.", tokens_before=12345))
    assert "Compaction summary (12,345 tokens before)" in text and "Goal: X." in md


def test_opaque_message_shows_role_reason_and_raw_json():
    m = from_pi_json({"role": "weather", "city": "<Oslo>", "timestamp": 1})
    text, md = both(m)
    assert "'weather'" in text and "unknown role 'weather'" in text and '"city": "<Oslo>"' in text
    assert "not sent to the LLM" in text
    assert '"city": "<Oslo>"' in fenced_blocks(md)[0]
    assert "<Oslo>" not in outside_fences(md)


class WeatherNote(PiModel):
    role: Literal["testWeatherNote"] = "testWeatherNote"
    city: str


def test_a_role_an_app_registered_shows_its_name_and_json():
    register_message_type(WeatherNote, replace=True)  # no converter: UI only
    text, md = both(WeatherNote(city="<Oslo>"))
    assert text.splitlines()[0] == "[message: testWeatherNote] (not sent to the LLM)"
    assert '"city": "<Oslo>"' in text and '"city": "<Oslo>"' in fenced_blocks(md)[0]
    assert md.startswith("**Message** · `testWeatherNote` · *not sent to the LLM*")


def test_invalid_message_of_a_known_role_is_opaque_with_the_validation_error():
    text = message_text({"role": "bashExecution", "command": 5})
    assert "invalid 'bashExecution' message" in text


# --- untrusted content ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        assistant(TextContent(text=f"Sure! {XSS} & more")),
        assistant(ThinkingContent(thinking=XSS)),
        UserMessage(content=XSS),
        CustomMessage(custom_type=XSS, content=XSS),
        BranchSummaryMessage(summary=XSS, from_id=XSS),
        assistant(ToolCall(id="1", name=XSS, arguments={"x": XSS}), stop_reason="error", error_message=XSS),
        ToolResultMessage(tool_call_id="1", tool_name=XSS, content=[ImageContent(data="", mime_type=XSS)]),
    ],
)
def test_html_from_messages_is_escaped_in_markdown(message):
    md = message_markdown(message)
    assert "<script" not in md
    assert "&lt;script&gt;" in md


def test_html_in_code_stays_exact_inside_unbreakable_fences():
    m = ToolResultMessage(tool_call_id="1", tool_name="read", content=[TextContent(text=f"{XSS}\n```\nafter")])
    md = message_markdown(m)
    assert fenced_blocks(md) == [f"{XSS}\n```\nafter"]  # the inner ``` did not close our fence
    assert "<script" not in outside_fences(md)


def test_a_fence_in_output_cannot_close_ours():
    output = "````\n" + XSS + "\n`````````"
    md = message_markdown(BashExecutionMessage(command="cat x.md", output=output, exit_code=0))
    assert fenced_blocks(md) == [output]
    assert "<script" not in outside_fences(md)


def test_model_code_blocks_are_kept_readable_and_closed():
    text = "Try:\n```python\nif a < b:\n    print('<ok>')\n```\nand `x<y` inline, then\n~~~\nunclosed <b>"
    md = message_markdown(assistant(TextContent(text=text)))
    assert fenced_blocks(md) == ["if a < b:\n    print('<ok>')", "unclosed <b>"]
    assert "```python" in md
    assert "<code>x&lt;y</code>" in md
    assert "<b>" not in outside_fences(md) and "<ok>" not in outside_fences(md)


def test_list_item_fence_trick_cannot_smuggle_html():
    # "- ```" opens a fence inside a list item, so "  ```" closes it; the next line is plain Markdown.
    md = message_markdown(assistant(TextContent(text=f"- ```\n  x\n  ```\n{XSS}")))
    for line in outside_fences(md).split("\n"):
        assert "<script" not in line


def test_ansi_codes_are_removed():
    colored = "\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 50%\r100%"
    for m in (
        BashExecutionMessage(command="ls --color", output=colored, exit_code=0),
        ToolResultMessage(tool_call_id="1", tool_name="bash", content=[TextContent(text=colored)]),
        assistant(TextContent(text=colored)),
    ):
        for rendered in both(m):
            assert "\x1b" not in rendered and "\r" not in rendered
            assert "red" in rendered and "link" in rendered and "50%100%" in rendered


def test_markdown_syntax_in_names_is_neutralised():
    md = message_markdown(assistant(ToolCall(id="1", name="*bold*_[x](y)", arguments={})))
    assert r"**→ \*bold\*\_\[x\](y)**" in md


# --- bundles and the view ------------------------------------------------------------------------------


def run_messages():
    return [
        UserMessage(content="hi"),
        assistant(ToolCall(id="1", name="ls", arguments={}), stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="1", tool_name="ls", content=[TextContent(text="a.txt")]),
    ]


def test_mimebundle_has_text_and_markdown_in_order():
    bundle = messages_mimebundle(run_messages(), title="Run <1>")
    assert set(bundle) == {"text/plain", "text/markdown"}
    text = bundle["text/plain"]
    assert text.startswith("Run <1>\n\n[user]")
    assert text.index("[user]") < text.index("[assistant]") < text.index("[tool result: ls]")
    assert bundle["text/markdown"].startswith("### Run &lt;1&gt;\n\n**User**")


def test_mimebundle_of_nothing():
    assert messages_mimebundle([]) == {"text/plain": "(no messages)", "text/markdown": "*(no messages)*"}


def test_mimebundle_with_streaming_message_last():
    bundle = messages_mimebundle([UserMessage(content="q")], streaming=assistant(TextContent(text="partial")))
    assert bundle["text/plain"].endswith("[assistant] (streaming…)\npartial")


def test_rendering_is_deterministic():
    assert messages_mimebundle(run_messages()) == messages_mimebundle(run_messages())


def test_view_repr_is_stable_and_bundle_is_filtered():
    view = MessagesView(run_messages())
    assert repr(view) == "<3 messages: user, assistant, toolResult>"
    assert repr(MessagesView([UserMessage(content="x")])) == "<1 message: user>"
    assert repr(MessagesView([])) == "<0 messages>"
    many = MessagesView(run_messages() * 4)
    assert repr(many) == "<12 messages: 4 user, 4 assistant, 4 toolResult>"
    assert set(view._repr_mimebundle_()) == {"text/plain", "text/markdown"}
    assert set(view._repr_mimebundle_(include={"text/plain"})) == {"text/plain"}
    assert set(view._repr_mimebundle_(exclude={"text/plain"})) == {"text/markdown"}


def test_view_through_ipython_formatter():
    from IPython.core.interactiveshell import InteractiveShell

    data, _ = InteractiveShell.instance().display_formatter.format(MessagesView(run_messages()))
    assert data["text/plain"].startswith("[user]\nhi")
    assert data["text/markdown"].startswith("**User**")


TOKENS = ["<script>", "</script>", "<!--", "<details>", "</details>", "<sub>", "```", "````", "~~~", "`",
          "``", "```py`x`", "- ", "> ", "1. ", "\n", "\n\n", " ", "    ", "\t", "\\", "|", "&", "<", ">", "a",
          "---", "[x]: /u", "[x]", "*", "**", "_", "\x1b[31m", "\r"]  # fmt: skip
untrusted = st.lists(st.sampled_from(TOKENS), max_size=25).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(user=untrusted, thinking=untrusted, text=untrusted, name=untrusted, output=untrusted)
def test_rendered_markdown_never_contains_raw_html_from_messages(user, thinking, text, name, output):
    # Render with a real Markdown engine that passes raw HTML through, as notebook frontends do.
    mistune = pytest.importorskip("mistune")
    render = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url", "footnotes"])
    messages = [
        UserMessage(content=user),
        assistant(
            ThinkingContent(thinking=thinking),
            TextContent(text=text),
            ToolCall(id="1", name=name, arguments={"a": text}),
            stop_reason="error",
            error_message=name,
        ),
        ToolResultMessage(tool_call_id="1", tool_name=name, content=[TextContent(text=output)]),
        UserMessage(content="END"),
    ]
    html = render(messages_mimebundle(messages)["text/markdown"])
    assert "<script" not in html and "<!--" not in html and "<sub><sub>" not in html
    assert html.count("<details>") == (1 if _visible(thinking) else 0)
    assert html.count("<strong>User</strong>") == 2 and "<strong>Tool result</strong>" in html
    assert html.rstrip().endswith("<p>END</p>")  # nothing a message holds swallowed what follows


def _visible(s: str) -> bool:
    return bool(re.sub(r"\x1b\[[0-9;]*m|[\x00-\x08\x0b-\x1f]", "", s).strip())
