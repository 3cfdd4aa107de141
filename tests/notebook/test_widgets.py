"""TranscriptWidget: JSON state, fallbacks in every display, stable reprs, throttled live updates."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from pi_notebook.agent import Agent, BashExecutionMessage, CustomMessage, to_pi_json
from pi_notebook.ai import TextContent, UserMessage, faux
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.notebook import widgets
from pi_notebook.notebook.render import messages_mimebundle
from pi_notebook.notebook.saved import TRANSCRIPT_MIME
from pi_notebook.notebook.widgets import TranscriptWidget, register_renderer, show

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

pytestmark = pytest.mark.usefixtures("fresh_faux")


def user(text):
    return UserMessage(content=[TextContent(text=text)])


def sample():
    return [
        user("list the files"),
        faux.message("Here they are."),
        BashExecutionMessage(command="cat .env", output="x", exit_code=0, exclude_from_context=True),
        CustomMessage(custom_type="ext", content="quiet note", display=False),
    ]


@pytest.fixture
def no_renderers(monkeypatch):
    monkeypatch.setattr(widgets, "_renderers", {})


def count_sends(widget):
    sent = []
    widget.comm.send = lambda *args, **kwargs: sent.append(kwargs.get("data", args[0] if args else None))
    return sent


def test_state_is_pi_json_with_visibility(no_renderers):
    messages = sample()
    w = show(messages, title="Run 1")
    assert w.messages == [to_pi_json(m) for m in messages]
    assert w.visibility == ["both", "both", "ui", "llm"]
    assert w.title == "Run 1" and w.show_hidden is False and w.streaming is None and w.renderers == {}
    state = w.get_state()
    assert {"messages", "visibility", "streaming", "show_hidden", "title", "renderers"} <= set(state)
    json.dumps(state["messages"])  # plain JSON all the way down


def test_show_accepts_pi_json_one_message_an_agent_and_a_session_file(tmp_path):
    messages = sample()
    as_json = [to_pi_json(m) for m in messages]
    assert show(as_json).messages == as_json
    assert show(as_json[0]).messages == as_json[:1]
    assert show(Agent(faux.model(), messages=messages)).messages == as_json
    file = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    for m in messages[:3]:
        file.append_message(m)
    try:
        assert show(file).messages == as_json[:3]
    finally:
        file.close()
    with pytest.raises(TypeError, match="expected messages"):
        show("not messages")


def test_no_api_key_reaches_the_state():
    agent = Agent(faux.model(), messages=sample(), api_key="sk-test-SECRET-123")
    w = show(agent)
    assert "SECRET" not in json.dumps(w.get_state(), default=str)


def test_repr_is_stable_and_has_no_address():
    assert repr(show(sample())) == repr(show(sample())) == "<TranscriptWidget: 4 messages>"
    assert repr(show([user("x")])) == "<TranscriptWidget: 1 message>"
    w = show([user("x")])
    w.set_streaming(faux.message("part"))
    assert repr(w) == "<TranscriptWidget: 1 message, streaming>" and "0x" not in repr(w)


def test_mimebundle_has_the_view_and_its_saved_form():
    messages = [*sample(), user("<script>alert('x')</script> & <b>bold</b>")]
    w = show(messages, title="T <i>")
    data, _ = w._repr_mimebundle_()
    assert set(data) == {WIDGET_MIME, TRANSCRIPT_MIME, "text/plain", "text/html"}  # no markdown: html is safer
    saved = data[TRANSCRIPT_MIME]
    assert [json.loads(m) for m in saved["messages"]] == [to_pi_json(m) for m in messages]  # each message once
    assert saved["title"] == "T <i>" and saved["visibility"] == {"2": "ui", "3": "llm"}  # not both
    expected = messages_mimebundle([to_pi_json(m) for m in messages], title="T <i>")
    assert data["text/plain"] == expected["text/plain"]  # every message, as text
    page = data["text/html"]
    assert "<script" not in page and "&lt;script&gt;alert('x')&lt;/script&gt;" in page
    assert "<b>bold</b>" not in page and "&lt;i&gt;" in page
    # the hidden custom message is collapsed unless show_hidden
    assert "<details class=h><summary>[custom: ext]" in page
    w.show_hidden = True
    assert "<details" not in w._repr_mimebundle_()[0]["text/html"]
    only, _ = w._repr_mimebundle_(include=["text/plain"])
    assert set(only) == {"text/plain"}
    assert "text/html" not in w._repr_mimebundle_(exclude=["text/html"])[0]


def test_a_streaming_message_is_live_only():
    w = show([user("hi")])
    w.set_streaming(faux.message("typing <now>"))
    assert w.streaming["role"] == "assistant" and w.streaming["content"][0]["text"] == "typing <now>"
    data, _ = w._repr_mimebundle_()
    assert len(data[TRANSCRIPT_MIME]["messages"]) == 1 and "typing" not in data["text/html"]  # saved: finished ones
    w.set_streaming(None)
    assert w.streaming is None


def test_renderer_registry_feeds_new_widgets(no_renderers, tmp_path):
    register_renderer("bashExecution", "export default function render(message, el) {}")
    js = tmp_path / "note.js"
    js.write_text("export default function render(message, el) { el.textContent = message.text; }")
    register_renderer("note", js)
    register_renderer("other", str(js))
    w = show([])
    assert w.renderers["bashExecution"] == "export default function render(message, el) {}"
    assert w.renderers["note"] == w.renderers["other"] == js.read_text()
    with pytest.raises(FileNotFoundError):
        register_renderer("x", str(tmp_path / "missing.js"))
    with pytest.raises(ValueError):
        register_renderer("", "export default {}")
    with pytest.raises(ValueError):
        register_renderer("x", "   ")


def test_front_end_module_is_the_build_or_a_text_fallback():
    esm = str(TranscriptWidget()._esm)
    built = widgets.STATIC / "transcript.js"
    if built.is_file():
        assert esm == built.read_text(encoding="utf-8")
    else:
        assert esm == widgets._FALLBACK_TRANSCRIPT_ESM
    assert "export default" in widgets._FALLBACK_TRANSCRIPT_ESM and "textContent" in widgets._FALLBACK_TRANSCRIPT_ESM
    assert widgets.static_asset("no-such-file.js", "FALLBACK") == "FALLBACK"
    assert isinstance(widgets.static_asset("transcript.js", "x"), Path) == built.is_file()


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_thousand_updates_in_one_second_send_at_most_thirty_one():
    clock = FakeClock()
    w = TranscriptWidget([user("go")], clock=clock)
    sent = count_sends(w)
    changes = []
    w.observe(lambda change: changes.append(change), names=["streaming"])
    for i in range(1000):
        clock.now += 0.001  # 1,000 tokens in one second
        w.update(streaming=faux.message("x" * (i + 1)))
    assert 25 <= len(sent) <= 31 and len(changes) == len(sent) and w.updates == len(sent)
    final = [user("go"), faux.message("x" * 1000)]
    w.finish(final)
    assert w.messages == [to_pi_json(m) for m in final] and w.streaming is None
    assert len(sent) <= 32  # one batched comm message for the final state


def test_rapid_updates_with_the_real_clock_stay_under_thirty_per_second():
    w = TranscriptWidget([user("go")])
    sent = count_sends(w)
    start = time.monotonic()
    for i in range(1000):
        w.update(streaming=faux.message("y" * (i + 1)))
        if i % 50 == 0:
            time.sleep(0.005)
    elapsed = time.monotonic() - start
    assert len(sent) <= 30 * elapsed + 2
    w.flush()
    assert w.streaming["content"][0]["text"] == "y" * 1000  # the newest state, exactly


def test_unchanged_state_sends_nothing_and_hold_sync_batches():
    w = show([user("a")])
    sent = count_sends(w)
    w.set_messages(list(w.messages))  # equal Pi JSON
    assert sent == []
    w.set_messages([user("a"), user("b")])
    assert len(sent) == 1 and set(sent[0]["state"]) == {"messages", "visibility"}


def test_following_an_agent_run_ends_with_its_exact_history():
    faux.set_responses(["a reply that streams in several chunks of text"])
    agent = Agent(faux.model(), messages=[user("earlier")])
    w = show(agent)
    agent.subscribe(w.on_event)
    asyncio.run(agent.prompt("and now?"))
    assert w.messages == [to_pi_json(m) for m in agent.messages] and w.streaming is None
    assert [m["role"] for m in w.messages] == ["user", "user", "assistant"]
