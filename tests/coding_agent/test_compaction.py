"""Compaction with Pi's rules, driven by the scripted faux provider: what the summariser and the model see."""

import asyncio
import time

import pytest

from pi_notebook.agent import (
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    OpaqueMessage,
    from_pi_json,
    to_pi_json,
)
from pi_notebook.agent_core.agent import Agent
from pi_notebook.ai import ImageContent, TextContent, ToolResultMessage, Usage, UserMessage, faux
from pi_notebook.coding_agent.compaction import (
    CompactionError,
    CompactionSettings,
    Compactor,
    CutPoint,
    calculate_context_tokens,
    compact,
    estimate_context_tokens,
    estimate_tokens,
    find_cut_point,
    generate_summary,
    should_compact,
)
from pi_notebook.coding_agent.compaction_prompts import (
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
    serialize_conversation,
)
from pi_notebook.coding_agent.session import SessionFile

IMAGE = ImageContent(data="aGk=", mime_type="image/png")
SETTINGS = CompactionSettings(reserve_tokens=500, keep_recent_tokens=150)  # threshold: 1500 of 2000


pytestmark = pytest.mark.usefixtures("fresh_faux")


def run(coro):
    return asyncio.run(coro)


def user(text):
    return UserMessage(content=[TextContent(text=text)])


def said(blocks, **fields):
    return faux.message(blocks, **fields)


def result(text, call_id="c1", name="read"):
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)])


def prompt_text(call):
    return call.messages[0].content[0].text


def recording(seen, reply):
    """A faux step that records the prompt and the options of the call it answers."""

    def step(context, options):
        seen.append((prompt_text(context), options))
        return reply(context) if callable(reply) else reply

    return step


def small_model(**overrides):
    return faux.model(context_window=2000, **overrides)


# --- estimates and the threshold -----------------------------------------------------------------------


def test_token_estimates_follow_pis_rules_per_role():
    assert estimate_tokens(UserMessage(content="hello")) == 2
    assert estimate_tokens(UserMessage(content=[TextContent(text="a" * 8), IMAGE])) == 2  # images not counted
    # UTF-16 units, as JS: three emoji are 6 units, not 3 characters
    assert estimate_tokens(UserMessage(content="😀😀😀")) == 2
    call = faux.tool_call("read", {"path": "a.txt"})  # 4 + len('{"path":"a.txt"}') = 20
    assert estimate_tokens(said([faux.text("abcd"), faux.thinking("abcdefgh"), call])) == 8
    shot = ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextContent(text="x" * 10), IMAGE])
    assert estimate_tokens(shot) == 1203  # ceil(4810 / 4)
    assert estimate_tokens(CustomMessage(custom_type="note", content=[IMAGE])) == 1200
    assert estimate_tokens(CustomMessage(custom_type="note", content="abc")) == 1
    assert estimate_tokens(BashExecutionMessage(command="ls", output="a.txt")) == 2
    assert estimate_tokens(CompactionSummaryMessage(summary="x" * 9, tokens_before=5)) == 3
    assert estimate_tokens(BranchSummaryMessage(summary="x" * 4, from_id="root")) == 1
    assert estimate_tokens(OpaqueMessage(raw={"role": "mystery", "text": "x" * 100}, reason="?")) == 0


def test_context_tokens_use_the_last_successful_usage_plus_estimates_after_it():
    assert calculate_context_tokens(Usage(input=1, output=2, cache_read=3, cache_write=4)) == 10
    assert calculate_context_tokens(Usage(input=1, output=2, total_tokens=7)) == 7
    answered = said("ok", usage=Usage(input=90, output=10, total_tokens=100))
    failed = said([], stop_reason="error", error_message="boom", usage=Usage(input=5000, total_tokens=5000))
    history = [user("x" * 8), answered, user("y" * 40), failed]
    assert estimate_context_tokens(history) == 100 + 10  # the failed response's usage is ignored
    assert estimate_context_tokens([user("x" * 8), said("abcd"), user("y" * 40)]) == 2 + 1 + 10  # none: all
    assert should_compact(1501, 2000, SETTINGS) and not should_compact(1500, 2000, SETTINGS)
    assert not should_compact(10**6, 2000, CompactionSettings(enabled=False))


# --- the cut -------------------------------------------------------------------------------------------


def test_the_cut_never_lands_on_a_tool_result_and_a_cut_inside_a_turn_is_a_split_turn():
    call = said([faux.tool_call("read", {"path": "a.py"}, id="c1")])
    # 10, 5, 100, 10, 10, 10 tokens
    messages = [user("q" * 40), call, result("r" * 400), said("s" * 40), user("u" * 40), said("v" * 40)]
    assert find_cut_point(messages, 15) == CutPoint(4, -1, False)  # at a user message
    assert find_cut_point(messages, 25) == CutPoint(3, 0, True)  # at an assistant: the turn began at 0
    # the budget is reached at the tool result: the cut moves forward to the next valid point
    assert find_cut_point(messages, 120) == CutPoint(3, 0, True)
    assert find_cut_point(messages, 10_000) == CutPoint(0, -1, False)  # everything fits: keep all
    assert find_cut_point([result("x")], 1) == CutPoint(0, -1, False)  # no valid cut point
    leading = [CompactionSummaryMessage(summary="old", tokens_before=1), *messages]
    assert find_cut_point(leading, 10_000, start=1) == CutPoint(1, -1, False)
    # a shell command starts a turn of its own (Pi: a split turn with an empty prefix)
    shell = [user("q"), said("a"), BashExecutionMessage(command="ls", output="x" * 40), said("b" * 40)]
    assert find_cut_point(shell, 15) == CutPoint(2, 2, True)


# --- what the summariser reads -------------------------------------------------------------------------


def test_the_conversation_is_serialized_as_pi_does_with_long_tool_results_truncated():
    calls = [
        faux.tool_call("read", {"path": "a.py", "offset": 10}),
        faux.tool_call("edit", {"b": [{"old": "x", "new": "é"}], "2": True, "1": None}),
    ]
    messages = [
        UserMessage(content="plain"),
        UserMessage(content=[TextContent(text="one"), IMAGE, TextContent(text="two")]),
        UserMessage(content=[IMAGE]),  # no text: left out
        said([faux.thinking("hmm"), faux.text("first"), faux.thinking("more"), faux.text("second"), *calls]),
        result("x" * 2500),
        result("😀" * 1001),  # 2002 UTF-16 units
    ]
    assert serialize_conversation(messages) == (
        "[User]: plain\n\n"
        "[User]: onetwo\n\n"
        "[Assistant thinking]: hmm\nmore\n\n"
        "[Assistant]: first\nsecond\n\n"
        '[Assistant tool calls]: read(path="a.py", offset=10); '
        'edit(1=null, 2=true, b=[{"old":"x","new":"é"}])\n\n'
        f"[Tool result]: {'x' * 2000}\n\n[... 500 more characters truncated]\n\n"
        f"[Tool result]: {'😀' * 1000}\n\n[... 2 more characters truncated]"
    )


def test_the_summary_request_has_pis_layout_budget_and_prompts():
    seen = []
    faux.set_responses([recording(seen, "THE SUMMARY"), recording(seen, "UPDATED")])
    history = [user("hi"), said("hello")]
    assert run(generate_summary(history, small_model(), 1000)) == "THE SUMMARY"
    first = faux.calls[0]
    assert first.system_prompt == SUMMARIZATION_SYSTEM_PROMPT and len(first.messages) == 1
    assert prompt_text(first) == (
        "<conversation>\n[User]: hi\n\n[Assistant]: hello\n</conversation>\n\n" + SUMMARIZATION_PROMPT
    )
    assert seen[0][1].max_tokens == 800 and seen[0][1].reasoning is None
    options = {"previous_summary": "OLD", "custom_instructions": "the tests"}
    run(generate_summary(history, small_model(reasoning=True), 1001, **options))
    assert prompt_text(faux.calls[1]) == (
        "<conversation>\n[User]: hi\n\n[Assistant]: hello\n</conversation>\n\n"
        "<previous-summary>\nOLD\n</previous-summary>\n\n"
        + UPDATE_SUMMARIZATION_PROMPT
        + "\n\nAdditional focus: the tests"
    )
    assert seen[1][1].max_tokens == 800 and seen[1][1].reasoning == "high"  # floor(0.8 × 1001)
    # spot checks of Pi's literal texts
    assert SUMMARIZATION_SYSTEM_PROMPT.startswith("You are a context summarization assistant. Your task is")
    assert "## Progress\n### Done\n- [x] [Completed tasks/changes]\n\n### In" in SUMMARIZATION_PROMPT
    assert UPDATE_SUMMARIZATION_PROMPT.startswith("The messages above are NEW conversation messages")
    assert TURN_PREFIX_SUMMARIZATION_PROMPT.endswith("Focus on what's needed to understand the kept suffix.")


def test_a_failed_summary_call_raises_a_compaction_error():
    faux.set_responses([said([], stop_reason="error", error_message="boom")])
    with pytest.raises(CompactionError, match=r"^Summarization failed: boom$"):
        run(generate_summary([user("hi")], small_model(), 1000))


# --- compact() -----------------------------------------------------------------------------------------


def worked_on_files():
    calls = [
        faux.tool_call("read", {"path": "src/a.py"}, id="c1"),
        faux.tool_call("write", {"path": "src/b.py", "content": "x"}, id="c2"),
        faux.tool_call("read", {"path": "src/b.py"}, id="c3"),
    ]
    return [
        user("read a.py and write b.py"), said(calls), result("a", "c1"), result("ok", "c2", "write"),
        result("b", "c3"), said("done"), user("n" * 600), said("fine"),  # kept: from the 150-token message
    ]  # fmt: skip


def test_compact_summarises_before_the_cut_and_appends_the_file_lists():
    faux.set_responses(["THE SUMMARY"])
    messages = worked_on_files()
    out = run(compact(messages, small_model(), SETTINGS, previous_details={"readFiles": ["z.py"]}))
    assert out.first_kept_index == 6 and out.tokens_before == estimate_context_tokens(messages)
    assert out.summary == (
        "THE SUMMARY\n\n<read-files>\nsrc/a.py\nz.py\n</read-files>\n\n<modified-files>\nsrc/b.py\n</modified-files>"
    )
    assert out.details == {"readFiles": ["src/a.py", "z.py"], "modifiedFiles": ["src/b.py"]}
    assert prompt_text(faux.calls[0]).startswith("<conversation>\n[User]: read a.py and write b.py\n\n")
    assert "[User]: nnnn" not in prompt_text(faux.calls[0])  # the kept part is not summarised


def answer_by_kind(context):
    return "PREFIX" if TURN_PREFIX_SUMMARIZATION_PROMPT in prompt_text(context) else "HISTORY"


def split_turn():
    return [
        user("first question"), said("first answer"),
        user("big task"), said([faux.tool_call("bash", {"command": "make"}, id="c1")]),
        result("m" * 800, "c1", "bash"),  # 200 tokens
        said([faux.tool_call("bash", {"command": "make test"}, id="c2")]),  # the cut: kept from here
        result("t" * 400, "c2", "bash"), said("all green"),
    ]  # fmt: skip


def test_a_split_turn_gets_its_own_summary_merged_as_pi_does():
    seen = []
    faux.set_responses([recording(seen, answer_by_kind)] * 2)
    out = run(compact(split_turn(), small_model(), SETTINGS))
    assert out.first_kept_index == 5
    assert out.summary == "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"
    (history_prompt, history_opts), (prefix_prompt, prefix_opts) = sorted(seen, key=lambda s: "big" in s[0])
    assert history_prompt.startswith("<conversation>\n[User]: first question\n\n[Assistant]: first answer\n")
    assert prefix_prompt == (
        '<conversation>\n[User]: big task\n\n[Assistant tool calls]: bash(command="make")\n\n'
        f"[Tool result]: {'m' * 800}\n</conversation>\n\n" + TURN_PREFIX_SUMMARIZATION_PROMPT
    )
    assert history_opts.max_tokens == 400 and prefix_opts.max_tokens == 250
    assert all(call.system_prompt == SUMMARIZATION_SYSTEM_PROMPT for call in faux.calls)


def test_a_split_turn_with_nothing_before_it_keeps_the_previous_summary():
    faux.set_responses([answer_by_kind])
    out = run(compact(split_turn()[2:], small_model(), SETTINGS))
    assert out.summary == "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"
    faux.set_responses([answer_by_kind])
    previous = CompactionSummaryMessage(summary="EARLIER", tokens_before=3000)
    out = run(compact([previous, *split_turn()[2:]], small_model(), SETTINGS))
    assert out.summary.startswith("EARLIER\n\n---\n\n") and out.first_kept_index == 4


def test_a_list_that_starts_with_a_summary_is_updated_with_the_update_prompt():
    faux.set_responses(["NEW"])
    previous = CompactionSummaryMessage(summary="OLD", tokens_before=3000)
    out = run(compact([previous, *worked_on_files()], small_model(), SETTINGS))
    assert out.summary.startswith("NEW\n\n") and out.first_kept_index == 7
    text = prompt_text(faux.calls[0])
    assert "<previous-summary>\nOLD\n</previous-summary>\n\n" + UPDATE_SUMMARIZATION_PROMPT in text
    assert "compacted into the following" not in text  # the old summary is not part of the conversation


def test_nothing_to_compact_is_an_error_and_makes_no_call():
    with pytest.raises(CompactionError, match="Nothing to compact"):
        run(compact([user("hi"), said("hello")], small_model(), SETTINGS))
    assert faux.calls == []


# --- the Compactor as transform_context ----------------------------------------------------------------


def wrapped(summary):
    return COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX


def texts(call):
    return [m.content[0].text for m in call.messages]


def long_history():
    """1604 estimated tokens with the next prompt: over the 1500 threshold of a 2000-token window."""
    return [user("A" * 2000), said("B" * 2000), user("C" * 2000),
            said("D" * 400, usage=Usage(input=1500, output=100, total_tokens=1600))]  # fmt: skip


def test_below_the_threshold_the_compactor_changes_nothing():
    compactor = Compactor(small_model(), SETTINGS)
    messages = [user("hi"), said("hello"), user("more")]
    out = run(compactor(messages))
    assert out == messages and all(a is b for a, b in zip(out, messages, strict=True)) and faux.calls == []


def test_above_the_threshold_the_llm_sees_the_summary_then_the_kept_messages_and_later_calls_reuse_it():
    model, stored = small_model(), []

    async def on_compaction(result, summary, first_kept):
        stored.append((result, summary, first_kept))

    history = long_history()
    compactor = Compactor(model, SETTINGS, on_compaction=on_compaction)
    agent = Agent(model, messages=history, transform_context=compactor)
    faux.set_responses(["THE SUMMARY", "answer", "second answer"])
    run(agent.prompt("next question"))
    summariser, llm = faux.calls
    assert prompt_text(summariser).startswith(f"<conversation>\n[User]: {'A' * 2000}\n\n[Assistant]: BBBB")
    assert "CCCC" not in prompt_text(summariser)
    assert [m.role for m in llm.messages] == ["user", "user", "assistant", "user"]
    assert texts(llm) == [wrapped("THE SUMMARY"), "C" * 2000, "D" * 400, "next question"]
    # the agent's own history is untouched; the compaction was reported once, kept from the 3rd message
    assert len(agent.messages) == 6 and agent.messages[:4] == history
    (result, summary, first_kept), *more = stored
    assert not more and first_kept is history[2] and result.first_kept_index == 2
    assert summary.summary == result.summary == "THE SUMMARY" and summary.tokens_before == 1604
    assert compactor.summary_message is summary and compactor.first_kept_message is history[2]
    # the next call reuses the summary: no second summarisation
    run(agent.prompt("and then?"))
    assert len(faux.calls) == 3 and prompt_text(faux.calls[2]) == wrapped("THE SUMMARY")
    roles = [m.role for m in faux.calls[2].messages]
    assert roles == ["user", "user", "assistant", "user", "assistant", "user"]
    assert len(stored) == 1


def test_when_the_compacted_context_grows_past_the_threshold_the_summary_is_updated():
    model, stored = small_model(), []
    compactor = Compactor(model, SETTINGS, on_compaction=lambda *args: stored.append(args))
    agent = Agent(model, messages=long_history(), transform_context=compactor)
    faux.set_responses(["THE SUMMARY", "answer", "SECOND SUMMARY", "final"])
    run(agent.prompt("next question"))
    run(agent.prompt("E" * 4000))  # 1000 tokens more
    update = faux.calls[2]
    assert "<previous-summary>\nTHE SUMMARY\n</previous-summary>\n\n" + UPDATE_SUMMARIZATION_PROMPT in (
        prompt_text(update)
    )
    assert prompt_text(update).startswith(f"<conversation>\n[User]: {'C' * 2000}\n\n[Assistant]: DDDD")
    assert texts(faux.calls[3]) == [wrapped("SECOND SUMMARY"), "E" * 4000]
    assert len(stored) == 2 and stored[1][2] is agent.messages[6]
    assert agent.messages[6].content[0].text == "E" * 4000


def test_usage_reported_before_the_compaction_does_not_trigger_another_one():
    model = small_model()
    compactor = Compactor(model, SETTINGS)
    agent = Agent(model, messages=long_history(), transform_context=compactor)
    faux.set_responses(["THE SUMMARY", said([], stop_reason="error", error_message="503 upstream")])
    run(agent.prompt("next question"))
    # retrying without the failed reply: the kept reply's 1600 tokens of usage measured the old context
    out = run(compactor(agent.messages[:-1]))
    assert out[0] is compactor.summary_message and len(faux.calls) == 2


def test_a_history_reloaded_as_equal_copies_still_finds_the_kept_part():
    model = small_model()
    compactor = Compactor(model, SETTINGS)
    agent = Agent(model, messages=long_history(), transform_context=compactor)
    faux.set_responses(["THE SUMMARY", "answer"])
    run(agent.prompt("next question"))
    copies = [from_pi_json(to_pi_json(m)) for m in agent.messages]
    out = run(compactor(copies))
    assert out[0] is compactor.summary_message and out[1:] == copies[2:] and out[1] is copies[2]
    assert len(faux.calls) == 2
    # a history without the kept part (e.g. after agent.reset()) starts afresh
    assert run(compactor([user("fresh start")]))[0].role == "user" and compactor.summary_message is None


def test_force_compacts_below_the_threshold_unless_there_is_nothing_to_summarise():
    compactor = Compactor(small_model(), SETTINGS)
    compactor.force()
    small = [user("hi"), said("hello")]
    assert run(compactor(small)) == small and faux.calls == []  # nothing before the kept part: no call
    faux.set_responses(["FORCED"])
    messages = [user("hi"), said("hello"), user("c" * 800)]
    assert run(compactor(messages)) == messages  # the force was used up above
    compactor.force()
    out = run(compactor(messages))
    assert out[0].summary == "FORCED" and out[1] is messages[2] and len(faux.calls) == 1


def test_a_failing_summary_ends_the_run_with_an_error_message_and_loses_nothing():
    model, stored = small_model(), []
    history = long_history()
    compactor = Compactor(model, SETTINGS, on_compaction=lambda *args: stored.append(args))
    agent = Agent(model, messages=history, transform_context=compactor)
    faux.set_responses([said([], stop_reason="error", error_message="overloaded_error")])
    run(agent.prompt("next question"))
    failed = agent.messages[-1]
    assert agent.messages[:4] == history and agent.messages[4].content[0].text == "next question"
    assert failed.stop_reason == "error" and failed.error_message == (
        "transform_context failed: CompactionError: Summarization failed: overloaded_error"
    )
    assert agent.state.error == failed.error_message and len(faux.calls) == 1  # the model was never called
    assert compactor.summary_message is None and stored == []
    # once the summariser answers, the same history compacts and the run goes on
    agent.replace_messages(agent.messages[:-1])
    faux.set_responses(["THE SUMMARY", "answer"])
    run(agent.continue_())
    assert agent.messages[-1].content[0].text == "answer" and len(stored) == 1


def test_on_compaction_stores_a_compaction_entry_that_a_new_kernel_resumes_from(tmp_path):
    model, history = small_model(), long_history()
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=tmp_path)
    entry_ids = {id(m): session.append_message(m).id for m in history}

    def store(event):
        if event.type == "message_end":
            entry_ids[id(event.message)] = session.append_message(event.message).id

    def on_compaction(result, summary, first_kept):
        first_kept_id = entry_ids[id(first_kept)]
        session.append_compaction(result.summary, first_kept_id, result.tokens_before, result.details)

    compactor = Compactor(model, SETTINGS, on_compaction=on_compaction)
    agent = Agent(model, messages=history, transform_context=compactor)
    agent.subscribe(store)
    faux.set_responses(["THE SUMMARY", "answer", "resumed"])
    run(agent.prompt("next question"))
    resumed = session.build_session_context().messages
    assert [m.role for m in resumed] == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert resumed[0].summary == "THE SUMMARY" and resumed[0].tokens_before == 1604
    session.close()
    # a fresh agent and compactor continue from the file without summarising again
    agent = Agent(model, messages=resumed, transform_context=Compactor(model, SETTINGS))
    run(agent.prompt("go on"))
    assert len(faux.calls) == 3 and prompt_text(faux.calls[2]) == wrapped("THE SUMMARY")


def test_stopping_a_run_during_its_compaction_aborts_the_summary_and_records_nothing(monkeypatch):
    # Pi passes the run's signal to transformContext: a compaction under way stops with the run.
    monkeypatch.setattr(faux.provider, "tokens_per_second", 50)  # a slow summary, so the stop lands mid-call
    recorded = []
    model = faux.model(context_window=2_000)
    compactor = Compactor(
        model,
        CompactionSettings(reserve_tokens=500, keep_recent_tokens=100),
        on_compaction=lambda *a: recorded.append(a),
    )
    agent = Agent(model, transform_context=compactor)
    history = [UserMessage(content="old question " * 200), faux.message([faux.text("old answer " * 200)])]
    agent.replace_messages(history)
    faux.set_responses(["## Goal\n" + "a long summary " * 200, "the answer"])

    async def go():
        run = asyncio.ensure_future(agent.prompt("new question"))
        while not faux.calls:  # the summary call has started
            await asyncio.sleep(0.01)
        agent.abort()
        await run

    started = time.monotonic()
    asyncio.run(go())
    assert time.monotonic() - started < 5  # not the ~15 s the whole summary would stream
    assert recorded == [] and compactor.summary_message is None  # nothing of the compaction is kept
    last = agent.messages[-1]
    assert last.role == "assistant" and last.stop_reason == "aborted"
    assert len(faux.calls) == 1  # the run stopped: no reply was asked for
