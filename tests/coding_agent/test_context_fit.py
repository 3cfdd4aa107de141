"""A message larger than the window is cut for the LLM (never in storage), and named once."""

import asyncio

from pi_notebook.agent import BashExecutionMessage, CustomMessage
from pi_notebook.ai import AssistantMessage, TextContent, ToolResultMessage, UserMessage, get_model
from pi_notebook.coding_agent.compaction import CompactionSettings, Compactor, compact_digest
from pi_notebook.coding_agent.context_fit import ContextFitter, fit_messages

WINDOW = 2048  # one message may take a fifth: ~409 tokens, ~1,600 characters


def _big(n=20_000):
    return "".join(f"line {i}\n" for i in range(n // 7))


def test_only_messages_over_a_fifth_of_the_window_are_cut_and_the_cut_is_marked():
    small = UserMessage(content="hello")
    bash = BashExecutionMessage(command="cat big.log", output="START\n" + _big() + "END\n")
    fitted, oversized = fit_messages([small, bash], WINDOW)
    assert fitted[0] is small and [o.message for o in oversized] == [bash]
    cut = fitted[1].output
    assert cut.startswith("START\n") and cut.endswith("END\n") and len(cut) < 2_000
    assert "characters cut here: this message is larger than the model's 2,048-token context window allows" in cut
    assert bash.output.startswith("START") and len(bash.output) > 19_000  # the stored message is unchanged


def test_tool_results_custom_messages_and_prompts_are_cut_but_replies_are_not():
    result = ToolResultMessage(tool_call_id="c", tool_name="read", content=[TextContent(text=_big())])
    custom = CustomMessage(custom_type="x", content=_big(), display=True)
    reply = AssistantMessage(content=[TextContent(text=_big())], api="a", provider="p", model="m")
    fitted, oversized = fit_messages([result, custom, reply], WINDOW)
    assert len(fitted[0].content[0].text) < 2_000 and len(fitted[1].content) < 2_000
    assert fitted[2] is reply and len(oversized) == 2
    assert "The result of the read tool is about" in oversized[0].describe("local/smollm2-135m")


def test_the_fitter_names_each_message_once_and_hands_out_the_same_copy():
    named = []
    fitter = ContextFitter(get_model("faux/faux-1", context_window=WINDOW), on_oversized=named.append)
    bash = BashExecutionMessage(command="seq 1 100000", output=_big())
    first = asyncio.run(fitter([bash, UserMessage(content="hi")]))
    second = asyncio.run(fitter([bash, UserMessage(content="again")]))
    assert len(named) == 1 and named[0].message is bash
    assert first[0] is second[0] and fitter.original_of(first[0]) is bash


def test_a_digest_compaction_needs_no_model_and_lists_what_happened():
    history = [
        UserMessage(content="What is in notes.txt?"),
        BashExecutionMessage(command="cat notes.txt", output="three tasks"),
        AssistantMessage(content=[TextContent(text="It lists three tasks.")], api="a", provider="p", model="m"),
        UserMessage(content="And now? " + "z" * 400),
    ]
    result = compact_digest(history, CompactionSettings(keep_recent_tokens=50))
    assert result.first_kept_index == 3
    assert result.summary.startswith("Earlier in this conversation (listed without a model):\n")
    assert "The user asked: What is in notes.txt?" in result.summary
    assert "The user ran `cat notes.txt`" in result.summary
    assert "The assistant answered: It lists three tasks." in result.summary


def test_a_digest_compactor_compacts_on_force_without_calling_any_model():
    model = get_model("faux/faux-1", context_window=WINDOW)  # no faux responses queued: a model call would fail
    compactor = Compactor(model, CompactionSettings(reserve_tokens=512, keep_recent_tokens=50), digest=True)
    history = [UserMessage(content=f"question {i} " + "y" * 400) for i in range(6)]
    compactor.force()
    view = asyncio.run(compactor(history))
    assert view[0].role == "compactionSummary" and "question 0" in view[0].summary
    assert len(view) < len(history)


def test_very_small_models_see_the_notebook_context_the_prompt_before_and_the_current_exchange():
    from pi_notebook.ai import ToolCall
    from pi_notebook.coding_agent.context_fit import latest_exchange, refers_back

    def reply(*blocks, stop="stop"):
        return AssistantMessage(content=list(blocks), api="a", provider="p", model="m", stop_reason=stop)

    bash = BashExecutionMessage(command="ls demo", output="todo.txt")
    note = CustomMessage(custom_type="x", content="context", display=False)
    notice = CustomMessage(custom_type="pi_notebook.notice", content="said to the user", display=True)
    first_q, first_a = UserMessage(content="Hello."), reply(TextContent(text="Hi!"))
    old_q = UserMessage(content="What files are there?")
    old_call = reply(ToolCall(id="l", name="ls", arguments={}), stop="toolUse")
    old_result = ToolResultMessage(tool_call_id="l", tool_name="ls", content=[TextContent(text="todo.txt")])
    old_a = reply(TextContent(text="The files are: todo.txt"))
    new_q = UserMessage(content="What does demo/todo.txt say?")
    call = reply(ToolCall(id="c", name="read", arguments={}), stop="toolUse")
    result = ToolResultMessage(tool_call_id="c", tool_name="read", content=[TextContent(text="Buy milk.")])
    history = [first_q, first_a, bash, old_q, old_call, old_result, old_a, note, notice, new_q, call, result]
    # the notebook's context (not the notices to the user), the current exchange
    assert latest_exchange(history) == [bash, note, new_q, call, result]
    assert latest_exchange([bash]) == [bash]
    assert latest_exchange([bash, new_q]) == [bash, new_q]
    # and the prompt before (not its answer, nor its tool calls) when the new one may refer back to it
    back = UserMessage(content="Which files did I ask about?")
    assert latest_exchange([*history[:-3], back]) == [bash, old_q, note, back]
    assert [refers_back(t) for t in ("What is my name?", "What did I say?", "Say it again", "What is 2 + 2?")] == [
        True, True, True, False,
    ]  # fmt: skip


def test_the_small_models_stage_shows_the_prompt_before_as_a_note_and_says_once_what_it_leaves_out():
    from pi_notebook.coding_agent.context_fit import EARLIER, HIDDEN_NOTE, LeftOut

    said = []
    fitter = ContextFitter(get_model("faux/faux-1"), on_oversized=said.append, latest_only=True)
    hidden = BashExecutionMessage(command="echo $TOKEN", output="s3cret", exclude_from_context=True)
    old_q = UserMessage(content="My name is Ada.")
    old_a = AssistantMessage(content=[TextContent(text="Hi Ada!")], api="a", provider="p", model="m")
    new_q = UserMessage(content="What is my name?")  # refers back ("my"): the prompt before is sent, as a note
    history = [old_q, old_a, hidden, new_q]
    assert fitter.preview(history)[0].content == EARLIER + "My name is Ada."
    assert said == []  # a preview says nothing
    first = asyncio.run(fitter(history))
    second = asyncio.run(fitter(history))
    earlier, kept_hidden, note, prompt = first
    assert earlier.content == EARLIER + "My name is Ada." and earlier.timestamp == old_q.timestamp
    assert kept_hidden is hidden and note.content == HIDDEN_NOTE and "s3cret" not in str(note)
    assert "echo" not in note.content and prompt is new_q
    assert [a is b for a, b in zip(first, second, strict=True)] == [True] * 4  # the same copies every call
    assert fitter.original_of(earlier) is old_q and fitter.original_of(note) is hidden
    assert len(said) == 1 and isinstance(said[0], LeftOut)
    assert said[0].describe("local/smollm2-135m").startswith("local/smollm2-135m sees only the current exchange")
    assert asyncio.run(fitter([old_q, old_a, UserMessage(content="What is 2 + 2?")]))[0].content == "What is 2 + 2?"


def test_the_trace_says_in_plain_words_what_the_small_models_stage_leaves_out():
    from pi_notebook.coding_agent.context_fit import LEFT_OUT
    from pi_notebook.coding_agent.context_pipeline import ContextPipeline
    from pi_notebook.coding_agent.trace import trace_boundary

    old_q = UserMessage(content="Hello.", timestamp=1)
    old_a = AssistantMessage(content=[TextContent(text="Hi!")], api="a", provider="p", model="m", timestamp=2)
    history = [old_q, old_a, UserMessage(content="My name is Ada.", timestamp=3), UserMessage(content="Name?")]
    small = ContextPipeline(get_model("faux/faux-1"), CompactionSettings(enabled=False), small=True)
    rows = trace_boundary(history, small).rows  # the stage says why (its left_out)
    assert small.left_out == LEFT_OUT
    assert LEFT_OUT.startswith("not sent: the offline model sees only the current exchange")
    assert [(r.index, r.status, r.reason) for r in rows[:3]] == [(i, "dropped", LEFT_OUT) for i in range(3)]
    assert trace_boundary(history, small.preview, left_out=small.left_out).rows[1].reason == LEFT_OUT  # or a view
    # any other transform keeps the trace's own words (yours may leave messages out for reasons of its own)
    assert trace_boundary(history, lambda m: m[2:]).rows[0].reason == "removed by transform_context"
    assert ContextPipeline(get_model("faux/faux-1"), CompactionSettings(), small=False).left_out is None
