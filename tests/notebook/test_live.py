"""LiveDisplay in a real IPython shell: one output, throttled updates, an exact final state."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import pytest
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

from pi_notebook.agent.agent import Agent
from pi_notebook.agent.tool import AgentTool, AgentToolResult
from pi_notebook.ai import AssistantMessage, TextContent, UserMessage
from pi_notebook.ai.providers import faux
from pi_notebook.notebook.live import LiveDisplay
from pi_notebook.notebook.render import messages_mimebundle


@dataclass
class Published:
    data: dict[str, Any]
    transient: dict[str, Any]
    update: bool


class RecordingPublisher(DisplayPublisher):
    """Records what a kernel would send to the frontend."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.calls: list[Published] = []

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
        self.calls.append(Published(data, dict(transient or {}), update))


@pytest.fixture
def published(monkeypatch) -> list[Published]:
    shell = InteractiveShell.instance()
    recorder = RecordingPublisher(shell=shell)
    monkeypatch.setattr(shell, "display_pub", recorder)
    return recorder.calls


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def reply(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], api="faux", provider="faux", model="faux-1")


PROMPT = UserMessage(content="Count to a thousand")


def test_one_display_created_then_updated_in_place(published):
    clock = FakeClock()
    live = LiveDisplay(clock=clock)
    assert live.show([PROMPT], reply("1")) is True
    clock.now += 0.2
    assert live.show([PROMPT], reply("1 2")) is True
    assert [c.update for c in published] == [False, True]
    ids = {c.transient["display_id"] for c in published}
    assert ids == {live.display_id} and live.display_id
    assert published[0].data == messages_mimebundle([PROMPT], streaming=reply("1"))
    assert "[assistant] (streaming…)\n1 2" in published[1].data["text/plain"]


def test_calls_that_come_too_soon_are_dropped_then_flushed(published):
    clock = FakeClock()
    live = LiveDisplay(min_interval=0.1, clock=clock)
    live.show([PROMPT], reply("a"))
    clock.now += 0.05
    assert live.show([PROMPT], reply("ab")) is False
    assert len(published) == 1
    assert live.flush() is True and "ab" in published[-1].data["text/plain"]
    assert live.flush() is False  # nothing pending any more
    clock.now += 0.125
    assert live.show([PROMPT], reply("abc")) is True
    assert len(published) == 3 and live.updates == 3


def test_a_thousand_rapid_calls_give_about_ten_updates_a_second_and_the_exact_final_state(published):
    live = LiveDisplay(min_interval=0.1)
    messages = [PROMPT]
    start = time.monotonic()
    text = ""
    for i in range(1000):
        text += f"{i} "
        live.show(messages, reply(text))
        time.sleep(0.0005)  # spread the calls over about half a second, like tokens arriving
    elapsed = time.monotonic() - start
    assert 2 <= len(published) <= elapsed / 0.1 + 2
    final = [PROMPT, reply(text.strip())]
    live.finish(final)
    assert published[-1].data == messages_mimebundle(final)
    assert published[-1].update is True
    assert len({c.transient["display_id"] for c in published}) == 1


def test_finish_writes_even_right_after_an_update(published):
    clock = FakeClock()
    live = LiveDisplay(clock=clock)
    live.show([PROMPT], reply("almost"))
    live.finish([PROMPT, reply("done")])
    assert len(published) == 2
    assert published[-1].data == messages_mimebundle([PROMPT, reply("done")])
    assert "streaming" not in published[-1].data["text/plain"]
    assert live.show([PROMPT], reply("late")) is False  # nothing changes after finish
    assert len(published) == 2


def test_quiet_mode_shows_nothing_until_finish(published):
    live = LiveDisplay(quiet=True)
    for i in range(50):
        live.show([PROMPT], reply(str(i)))
    assert published == []
    live.finish([PROMPT, reply("49")])
    assert len(published) == 1 and published[0].update is False
    assert published[0].data == messages_mimebundle([PROMPT, reply("49")])


def test_title_is_shown():
    bundle = messages_mimebundle([PROMPT], title="%%agent")
    assert bundle["text/plain"].startswith("%%agent")


def test_repr_is_stable():
    assert repr(LiveDisplay(quiet=True)) == "<LiveDisplay quiet, 0 updates>"


# --- following a real agent run ------------------------------------------------------------------------


@pytest.fixture
def fresh_faux():
    faux.reset()
    yield
    faux.reset()


def echo_tool() -> AgentTool:
    async def run(call_id, params, signal, on_update):
        return AgentToolResult.text(f"echo: {params['text']}")

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    return AgentTool(name="echo", description="echo", parameters=schema, execute=run)


def test_on_event_streams_an_agent_run_and_shows_only_that_run(published, fresh_faux):
    agent = Agent(faux.model(), tools=[echo_tool()])
    faux.set_responses(["First answer."])
    asyncio.run(agent.prompt("first question"))

    faux.set_responses([[faux.text("Let me echo."), faux.tool_call("echo", {"text": "hi"})], "It said hi."])
    live = LiveDisplay(min_interval=0)
    unsubscribe = agent.subscribe(live.on_event)
    asyncio.run(agent.prompt("second question"))
    unsubscribe()

    run = agent.state.messages[2:]
    assert [m.role for m in run] == ["user", "assistant", "toolResult", "assistant"]
    assert live.finished and published[-1].data == messages_mimebundle(run)
    assert all("first question" not in c.data["text/plain"] for c in published)
    streamed = [c.data["text/plain"] for c in published if "(streaming…)" in c.data["text/plain"]]
    assert streamed, "the assistant message was shown while it streamed"


def test_on_event_flushes_a_throttled_tool_call_before_the_tool_runs(published, fresh_faux):
    seen_when_tool_ran: list[str] = []

    async def slow(call_id, params, signal, on_update):
        seen_when_tool_ran.append(published[-1].data["text/plain"])
        return AgentToolResult.text("done")

    tool = AgentTool(name="slow", description="slow", parameters={"type": "object"}, execute=slow)
    faux.set_responses([[faux.tool_call("slow", {"n": 1})], "ok"])
    agent = Agent(faux.model(), tools=[tool])
    live = LiveDisplay(min_interval=3600)  # everything after the first write is throttled
    agent.subscribe(live.on_event)
    asyncio.run(agent.prompt("go"))
    assert '→ slow {"n": 1}' in seen_when_tool_ran[0]


def test_on_event_keeps_the_prompt_when_a_run_crashes(published, fresh_faux):
    def broken_convert(messages):
        raise RuntimeError("converter bug")

    agent = Agent(faux.model(), convert_to_llm=broken_convert)
    live = LiveDisplay(min_interval=0)
    agent.subscribe(live.on_event)
    asyncio.run(agent.prompt("hello"))
    final = published[-1].data["text/plain"]
    assert final.startswith("[user]\nhello") and "✗ error" in final


def test_a_throttled_state_is_a_snapshot(published):
    clock = FakeClock()
    live = LiveDisplay(clock=clock)
    done = [PROMPT]
    live.show(done, None)
    partial = reply("4")
    live.show(done, partial)  # throttled
    done.append(partial)  # the caller moves on before the flush
    live.flush()
    assert published[-1].data == messages_mimebundle([PROMPT], streaming=partial)


def test_without_a_shell_only_the_final_text_is_printed(monkeypatch, capsys):
    monkeypatch.setattr(InteractiveShell, "initialized", classmethod(lambda cls: False))
    live = LiveDisplay()
    live.show([PROMPT], reply("par"))
    live.finish([PROMPT, reply("full")])
    assert capsys.readouterr().out == messages_mimebundle([PROMPT, reply("full")])["text/plain"] + "\n"
