"""The loop guard: identical tool calls in a row, and replies whose tail repeats itself (not in Pi)."""

import asyncio

import pytest

from pi_notebook.agent import LoopGuardSettings, canonical_arguments, find_repeated_tail
from pi_notebook.agent_core.agent import Agent
from pi_notebook.agent_core.loop import AgentContext, AgentLoopConfig, run_agent_loop
from pi_notebook.agent_core.loop_guard import ordinal
from pi_notebook.agent_core.tool import AgentTool, AgentToolResult
from pi_notebook.ai import AbortController, TextContent, UserMessage, faux
from pi_notebook.ai.streaming import stream

pytestmark = pytest.mark.usefixtures("fresh_faux")

LS_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}
STEP_BACK = "Step back: answer from what you have, or try something different."


def run(coro):
    return asyncio.run(coro)


def counting_ls(outputs=None):
    """An ``ls`` tool that counts its runs; ``outputs`` (optional) gives each run's text in turn."""
    runs = []

    async def execute(call_id, params, signal, on_update):
        runs.append(params)
        text = outputs[len(runs) - 1] if outputs else "a.txt\nb.txt"
        return AgentToolResult.text(text)

    return AgentTool(name="ls", description="list", parameters=LS_SCHEMA, execute=execute), runs


def agent_with(tools=(), **kw):
    agent = Agent(faux.model(), tools=tools, **kw)
    events = []
    agent.subscribe(events.append)
    return agent, events


def results(agent):
    return [m for m in agent.messages if m.role == "toolResult"]


def text_of(message):
    return "\n".join(b.text for b in message.content if b.type == "text")


# --- identical tool calls ----------------------------------------------------------------------------------


def test_the_third_identical_call_gets_a_step_back_note_and_the_fourth_ends_the_run():
    faux.set_responses([lambda: [faux.tool_call("ls", {"path": "."})]] * 6 + ["never reached"])
    ls, runs = counting_ls()
    agent, events = agent_with([ls])
    run(agent.prompt("what is here?"))
    texts = [text_of(m) for m in results(agent)]
    assert texts[:2] == ["a.txt\nb.txt"] * 2
    assert texts[2] == (
        "a.txt\nb.txt\n\nNote: this is the 3rd identical call to ls with the same arguments; the result will not "
        f"change. {STEP_BACK}"
    )
    # the fourth is answered (so the history stays valid) but not run, and the run ends there
    assert len(runs) == 3 and len(faux.calls) == 4 and faux.provider.pending_count == 3
    assert results(agent)[3].is_error and texts[3].startswith("Not run: the 4th identical call to ls in a row")
    end = events[-1]
    assert end.type == "agent_end" and end.stop.reason == "loop_guard"
    assert end.stop.message.startswith("Stopped by the loop guard: the model called ls with the same arguments 4")
    assert end.stop.details == {"kind": "repeated_tool_call", "toolName": "ls", "count": 4}
    assert agent.state.stop == end.stop and agent.state.error is None and not agent.is_streaming
    # the note is what the model read on its next call
    assert faux.calls[3].messages[-1].content[0].text == texts[2]


def test_the_note_says_so_when_results_changed_and_tool_execution_end_carries_it():
    faux.set_responses([lambda: [faux.tool_call("ls", {})]] * 3 + ["done"])
    ls, _ = counting_ls(outputs=["one", "two", "three"])
    agent, events = agent_with([ls])
    run(agent.prompt("poll"))
    third = text_of(results(agent)[2])
    assert third == f"three\n\nNote: this is the 3rd identical call to ls with the same arguments in a row. {STEP_BACK}"
    ends = [e for e in events if e.type == "tool_execution_end"]
    assert ends[2].result.content[-1].text == third
    assert events[-1].stop is None and agent.messages[-1].content[0].text == "done"  # a third call is not a stop


def test_arguments_are_compared_canonically_and_a_different_call_breaks_the_streak():
    assert canonical_arguments({"path": "  a   b ", "limit": 5}) == canonical_arguments({"limit": 5, "path": "a b"})
    assert canonical_arguments({"x": [{"b": 1, "a": "p\n\tq"}]}) == '{"x":[{"a":"p q","b":1}]}'
    assert canonical_arguments({"path": "a"}) != canonical_arguments({"path": "b"})
    same = [{"path": "src", "limit": 5}, {"limit": 5, "path": "src "}, {"path": " src", "limit": 5}]
    faux.set_responses([[faux.tool_call("ls", args)] for args in same] + ["ok"])
    ls, _ = counting_ls()
    agent, _ = agent_with([ls])
    run(agent.prompt("p"))
    assert "3rd identical call to ls" in text_of(results(agent)[2])
    # interleaved calls never build a streak
    faux.set_responses([[faux.tool_call("ls", {"path": p})] for p in "abababab"] + ["ok"])
    agent, events = agent_with([ls])
    run(agent.prompt("p"))
    assert not any("Note:" in text_of(m) for m in results(agent)) and events[-1].stop is None


def test_identical_calls_in_one_reply_count_too_in_source_order():
    faux.set_responses([[faux.tool_call("ls", {"path": "x"}, id=f"c{i}") for i in range(5)], "never"])
    ls, runs = counting_ls()
    agent, events = agent_with([ls])
    run(agent.prompt("p"))
    by_id = {m.tool_call_id: text_of(m) for m in results(agent)}  # refused calls are answered first, as Pi
    assert "Note: this is the 3rd identical call" in by_id["c2"] and "Note" not in by_id["c1"]
    assert by_id["c3"].startswith("Not run: the 4th") and by_id["c4"].startswith("Not run: the 5th")
    assert len(runs) == 3 and events[-1].stop.reason == "loop_guard" and len(faux.calls) == 1


def test_the_guard_can_be_tuned_or_turned_off():
    faux.set_responses([lambda: [faux.tool_call("ls", {})]] * 6 + ["done"])
    ls, runs = counting_ls()
    agent, events = agent_with([ls], loop_guard=False)
    run(agent.prompt("p"))
    assert len(runs) == 6 and not any("Note:" in text_of(m) for m in results(agent))
    assert events[-1].stop is None and agent.messages[-1].content[0].text == "done"

    faux.set_responses([lambda: [faux.tool_call("ls", {})]] * 3 + ["done"])
    agent, events = agent_with([ls], loop_guard=LoopGuardSettings(note_at=2, stop_at=0))
    run(agent.prompt("p"))
    assert ["Note:" in text_of(m) for m in results(agent)] == [False, True, True]
    assert "2nd identical call" in text_of(results(agent)[1]) and events[-1].stop is None


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 103, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "103rd", "111th",
    ]  # fmt: skip


# --- degenerate text ---------------------------------------------------------------------------------------

DEGENERATE = "Here is what I will do. Your task is: [" + "Your task is: [" * 140  # ~512 tokens of it


def test_a_reply_that_repeats_itself_is_cut_while_streaming_and_the_run_stops():
    faux.set_responses([DEGENERATE, "never reached"])
    agent, events = agent_with()
    run(agent.prompt("what is my task?"))
    reply = agent.messages[-1]
    kept, note = reply.content[0].text.split("\n\n")
    assert kept == "Here is what I will do. Your task is: ["
    assert note.startswith('[Note: this reply repeated "Your task is: [" ') and note.endswith(f"{STEP_BACK}]")
    assert reply.stop_reason == "stop" and reply.error_message is None and agent.state.error is None
    # generation stopped early: the provider streamed ~16 characters per delta, far fewer than all of them
    updates = [e for e in events if e.type == "message_update"]
    assert len(updates) < len(DEGENERATE) // 16 // 2
    ended = [e.message for e in events if e.type == "message_end"][-1]
    assert ended is reply
    stop = events[-1].stop
    assert stop.reason == "loop_guard" and stop.details["kind"] == "repeated_text"
    assert stop.details["chunk"] == "Your task is: [" and 30 <= stop.details["repeats"] < 140
    assert faux.provider.pending_count == 1  # the run ended


def test_a_reply_that_repeats_itself_after_a_longer_turn_is_still_cut_while_streaming():
    # The guard looks every few characters of a growing text; a new turn starts counting again.
    tool, _ = counting_ls()
    faux.set_responses([[faux.text(PROSE * 3), faux.tool_call("ls", {})], DEGENERATE, "never reached"])
    agent, events = agent_with([tool])
    run(agent.prompt("what is my task?"))
    assert len(PROSE * 3) > len(DEGENERATE)
    reply = agent.messages[-1]
    assert reply.content[0].text.startswith("Here is what I will do. Your task is: [\n\n[Note: this reply")
    starts = [i for i, e in enumerate(events) if e.type == "message_start" and e.message.role == "assistant"]
    updates = [e for e in events[starts[-1] :] if e.type == "message_update"]
    assert len(updates) < len(DEGENERATE) // 16 // 2  # stopped early, as in a first turn


def test_a_cut_reply_is_what_the_model_sees_next_time():
    faux.set_responses([DEGENERATE, "Sorry, your task is to write tests."])
    agent, _ = agent_with()
    run(agent.prompt("what is my task?"))
    run(agent.prompt("again, please"))
    sent = faux.calls[-1].messages
    assert [m.role for m in sent] == ["user", "assistant", "user"]
    assert sent[1].content[0].text.startswith("Here is what I will do. Your task is: [\n\n[Note: this reply")


def test_repeating_thinking_is_cut_too():
    faux.set_responses([faux.message([faux.thinking("Let me think. " + "I need to check the file again. " * 40)])])
    agent, events = agent_with()
    run(agent.prompt("p"))
    thinking = agent.messages[-1].content[0].thinking
    assert thinking.startswith("Let me think. I need to check the file again.\n\n[Note: this reply repeated")
    assert events[-1].stop.reason == "loop_guard"


def test_a_provider_that_ignores_the_signal_still_gets_its_reply_cut_at_the_end():
    def deaf_stream(model, context, options):  # streams to the end whatever the signal says
        return stream(model, context, {k: v for k, v in options.items() if k != "signal"})

    faux.set_responses([DEGENERATE])
    context = AgentContext(messages=[])
    events = []
    prompt = UserMessage(content=[TextContent(text="p")])
    config = AgentLoopConfig(model=faux.model(), stream_fn=deaf_stream)
    run(run_agent_loop([prompt], context, config, events.append, AbortController().signal))
    text = context.messages[-1].content[0].text
    assert text.startswith(
        'Here is what I will do. Your task is: [\n\n[Note: this reply repeated "Your task is: [" 141'
    )
    # all 141 repetitions arrived (nothing stopped the stream); they are counted, then cut
    assert events[-1].stop.reason == "loop_guard" and events[-1].stop.details["repeats"] == 141


def test_turned_off_a_repeating_reply_is_left_alone():
    faux.set_responses([DEGENERATE])
    agent, events = agent_with(loop_guard=False)
    run(agent.prompt("p"))
    assert agent.messages[-1].content[0].text == DEGENERATE and events[-1].stop is None


def test_a_normal_long_reply_streams_to_the_end():
    faux.set_responses([PROSE + "\n\n" + TABLE + "\n\n" + CODE])
    agent, events = agent_with()
    run(agent.prompt("p"))
    assert agent.messages[-1].content[0].text == PROSE + "\n\n" + TABLE + "\n\n" + CODE and events[-1].stop is None


@pytest.mark.parametrize(
    "text, chunk",
    [
        (DEGENERATE, "Your task is: ["),
        (
            "Answer:\n" + "I will now call the tool to list the files.\n" * 20,
            "\nI will now call the tool to list the files.",
        ),
        ("Intro. " + ("The quick brown fox jumps over the lazy dog, again and again and again. " * 3) * 5, None),
        ("x" * 50 + "the the the the the cat " * 30, "the the the the the cat "),
        ("```python\n" + "print('still going')\n" * 100, "print('still going')\n"),  # long enough even in code
    ],
)
def test_degenerate_tails_are_found(text, chunk):
    tail = find_repeated_tail(text)
    assert tail is not None and tail.repeats >= 5
    found = tail.chunk(text)
    if chunk is not None:
        assert found == chunk
    kept = text[: tail.keep]
    assert kept.endswith(found) and not kept[: tail.start].endswith(found)  # one occurrence is kept
    assert len(text) - tail.keep >= 4 * tail.period


PROSE = (
    "Pandas reads the file in chunks when you pass chunksize, which keeps memory flat. Each chunk is a DataFrame, "
    "so you can filter it, aggregate it and append the partial results to a list. At the end, concatenate the "
    "list once: concatenating inside the loop copies the growing frame every time and is quadratic. If the file "
    "is compressed, pandas detects gzip, bz2, zip and xz from the extension. For very large files consider "
    "pyarrow's dataset API, which can push filters down to the reader and skip whole row groups. The same holds "
    "for Parquet, where the statistics of each row group let the reader skip what cannot match.\n\n"
    "In short: read in chunks, aggregate per chunk, concatenate once, and let the file format do the skipping."
)
TABLE = "| Day | Rain (mm) | Wind |\n|-----|-----------|------|\n" + "".join(
    f"| {d} | 0.0 | calm |\n" for d in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun") * 4
)
CODE = (
    "```python\n"
    "import numpy as np\n\n"
    "grid = [\n" + "    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],\n" * 16 + "]\n"
    "data = bytes([\n" + "    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,\n" * 32 + "])\n"
    "def test_a():\n    assert f(1) == 1\n\n\ndef test_b():\n    assert f(2) == 4\n\n\n"
    "print('=' * 80)\n"
    "# " + "-" * 400 + "\n"
    "```\n"
)
NEGATIVE = {
    "prose": PROSE,
    "table": TABLE,
    "table of identical rows": "| a | b | c |\n|---|---|---|\n" + "|   |   |   |\n" * 30 + "| 0 | 0 | 0 |\n" * 80,
    "a table of N/A": "| Model | Score | Notes |\n|---|---|---|\n" + "| N/A | N/A | N/A |\n" * 60,
    "code with a zero matrix, a zero byte array and rules": CODE,
    "code still streaming, cut inside the zero matrix": CODE[: CODE.index("]\n") - 3],
    "identical lines inside code": "```\n" + "    assert retry() is None\n" * 40,
    "numbered list": "".join(f"{i}. Check item number {i} of the list.\n" for i in range(1, 80)),
    "csv": "id,value\n" + "".join(f"{i},{i * i}\n" for i in range(300)),
    "a refrain": "Row, row, row your boat,\nGently down the stream.\n" * 4,
    "padding and blank lines": "Done." + " " * 600 + "\n" * 300 + "." * 1000,
    "dashes": "Result\n" + "-" * 2000,
    "a short text": "ok ok ok ok ok",
    "empty": "",
}


@pytest.mark.parametrize("name", list(NEGATIVE))
def test_normal_text_is_never_taken_for_a_loop(name):
    assert find_repeated_tail(NEGATIVE[name]) is None


@pytest.mark.parametrize("name", list(NEGATIVE))
def test_normal_text_is_never_taken_for_a_loop_while_it_streams(name):
    text = NEGATIVE[name]
    assert all(find_repeated_tail(text[:end]) is None for end in range(0, len(text) + 1, 7))
