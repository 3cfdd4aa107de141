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


def test_very_small_models_see_the_notebook_context_and_only_the_current_exchange():
    from pi_notebook.ai import ToolCall
    from pi_notebook.coding_agent.context_fit import latest_exchange

    bash = BashExecutionMessage(command="ls demo", output="todo.txt")
    note = CustomMessage(custom_type="x", content="context", display=False)
    old_q, old_a = (
        UserMessage(content="What files are there?"),
        AssistantMessage(content=[TextContent(text="The files are: todo.txt")], api="a", provider="p", model="m"),
    )
    new_q = UserMessage(content="What does demo/todo.txt say?")
    call = AssistantMessage(content=[ToolCall(id="c", name="read", arguments={})], api="a", provider="p", model="m")
    result = ToolResultMessage(tool_call_id="c", tool_name="read", content=[TextContent(text="Buy milk.")])
    history = [bash, old_q, old_a, note, new_q, call, result]
    assert latest_exchange(history) == [bash, note, new_q, call, result]
    assert latest_exchange([bash]) == [bash]
