"""The offline eval scores what a user would notice: a real answer, the right tool, nothing written, no loop; its
notebook tasks run real code cells, recorded as the user's, and ask what only those cells say."""

import json

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from pi_notebook.agent_core import convert_to_llm
from pi_notebook.ai import AssistantMessage, TextContent, ToolCall, UserMessage
from pi_notebook.ai.providers.local_prompt import CELL_EXAMPLES, CELL_MARK, chat_messages
from pi_notebook.coding_agent.tools import create_ls_tool
from pi_notebook.evals import DEMO_FILES, NEWCOMER_FILES, NEWCOMER_TASKS, TASKS, check, run_task
from pi_notebook.evals.run import setup_cell, unrecorded
from pi_notebook.evals.tasks import contains
from pi_notebook.notebook.cell_message import CellError, NotebookCellMessage, notebook_cell_to_text
from pi_notebook.notebook.cell_recorder import is_own_cell
from pi_notebook.notebook.tools.namespace import user_variables

READ = next(t for t in TASKS if t.name == "read-first")


def _reply(*blocks, stop="stop"):
    return AssistantMessage(content=list(blocks), api="local", provider="local", model="m", stop_reason=stop)


def _run(answer: str):
    call = _reply(ToolCall(id="c", name="read", arguments={"path": "demo/todo.txt"}), stop="toolUse")
    return [UserMessage(content=READ.prompt), call, _reply(TextContent(text=answer))]


@pytest.fixture
def own_namespace(monkeypatch):
    """The shared IPython shell without the variables earlier tests left in it (put back after): a task runs in a
    fresh notebook, and the offline model's ``vars`` would otherwise be pointed at a stray ``city``."""
    shell = InteractiveShell.instance()
    for name in list(user_variables(shell)):
        monkeypatch.delitem(shell.user_ns, name)


def test_a_real_answer_after_the_right_tool_passes():
    assert check(READ, _run("The first item is: buy milk."), [])[0] == []


def test_what_a_user_would_call_a_failure_fails():
    assert "reply lacks any of ['milk']" in check(READ, _run("The first item is bread."), [])[0]
    assert check(READ, _run("Buy milk."), ["notes.txt"])[0] == ["wrote ['notes.txt']"]
    repeated = "Buy milk. " + "The answer is milk. " * 6
    assert "reply repeats itself" in check(READ, _run(repeated), [])[0]
    assert "reply echoes the prompt ('output of ')" in check(READ, _run("Output of read: milk"), [])[0]
    no_tool = [UserMessage(content=READ.prompt), _reply(TextContent(text="Buy milk."))]
    assert check(READ, no_tool, [])[0] == ["did not call read"]
    unanswered = _run("Buy milk.")[:2]
    assert check(READ, unanswered, [])[0][0] == "no final answer (toolUse)"


def test_words_are_matched_whole():
    assert contains("It has 3 lines.", "3 lines") and not contains("In 2023", "3")
    assert contains("Hi there", "hi") and not contains("this", "hi")


def test_a_task_runs_through_the_real_magics_on_the_embedded_model(tmp_path, monkeypatch, own_namespace):
    monkeypatch.chdir(tmp_path)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    result = run_task(InteractiveShell.instance(), next(t for t in TASKS if t.name == "ls-question"), "local")
    assert result.passed, result.problems
    assert result.calls == ["ls {'path': 'demo'}"] and "todo.txt" in result.reply


CELL_TASKS = [t for t in TASKS if t.kind == "cell"]
CELL_ERROR = next(t for t in TASKS if t.name == "cell-error")
CELL_OUTPUT = next(t for t in TASKS if t.name == "cell-output")


def _answer(task, text):
    return [UserMessage(content=task.prompt), _reply(TextContent(text=text))]


def test_the_notebook_tasks_ask_what_only_the_cells_above_say():
    assert [t.name for t in CELL_TASKS] == ["cell-print", "cell-error", "cell-variable", "cell-output"]
    examples = json.dumps(CELL_EXAMPLES)
    for task in CELL_TASKS:
        words = [w for group in task.expect_any for w in group]
        assert not any(contains(task.prompt, w) for w in words), task.name  # the question gives nothing away
        assert not any(contains(examples, w) for w in words), task.name  # a copied worked example is wrong
        assert all(not is_own_cell(cell) for cell in task.setup)  # plain code cells, recorded as the user's
    # what a cell printed and what its output says appear in no source: only a reply that read the output has them
    for name, word in (("cell-print", "1337"), ("cell-output", "thursday")):
        task = next(t for t in CELL_TASKS if t.name == name)
        assert task.expect_any == ((word,),) and word not in "".join(task.setup).lower()


def test_a_notebook_answer_passes_on_what_the_cell_says():
    assert check(CELL_ERROR, _answer(CELL_ERROR, "prices has no key 'plum'."), [])[0] == []
    assert check(CELL_ERROR, _answer(CELL_ERROR, "It failed with a KeyError."), [])[0] == []
    copied = "Cell [8] failed with NameError: name 'score' is not defined."
    assert check(CELL_ERROR, _answer(CELL_ERROR, copied), [])[0] == ["reply lacks any of ['plum', 'keyerror']"]
    # the user's own words are not the prompt's scaffolding; the scaffolding still is
    said = "The output of your cell says the meeting moved to Thursday."
    assert check(CELL_OUTPUT, _answer(CELL_OUTPUT, said), [])[0] == []
    assert "reply echoes the prompt ('output of ')" in check(READ, _run("The output of read says milk"), [])[0]


def test_the_local_model_gets_worked_cell_examples_written_as_the_role_writes_cells(tmp_path):
    ls = [create_ls_tool(str(tmp_path)).to_tool()]
    cell = NotebookCellMessage(source="x = 1", execution_count=1)
    assert notebook_cell_to_text(cell).startswith(CELL_MARK)
    [sent] = convert_to_llm([cell])
    question = UserMessage(content="Which variable did my cell define?")
    plain = chat_messages("", [question], ls)
    beside_cells = chat_messages("", [sent, question], ls)
    examples = [turn["content"] for turn in beside_cells[len(plain) - 1 : -1]]
    assert examples == [text for pair in CELL_EXAMPLES for text in pair]  # after the others, before the question
    assert chat_messages("", [sent, question], [])[0]["role"] == "user"  # no tools: no worked examples at all
    # each example shows its cells exactly as notebook_cell_to_text does
    traceback = "-" * 75 + (
        "\nNameError                                 Traceback (most recent call last)\nCell In[8], line 1\n"
        "----> 1 best = max(score)\nNameError: name 'score' is not defined"
    )
    cells = [
        [NotebookCellMessage(source='print("size:", 6 * 8)', execution_count=5, output="size: 48\n")],
        [NotebookCellMessage(source='labels = sorted(["b", "a"])', execution_count=6)],
        [
            NotebookCellMessage(source="scores = [8, 9, 10]", execution_count=7),
            NotebookCellMessage(
                source="best = max(score)",
                execution_count=8,
                error=CellError(name="NameError", value="name 'score' is not defined", traceback=traceback),
            ),
        ],
    ]
    for shown, (ask, _) in zip(cells, CELL_EXAMPLES, strict=True):
        assert ask.startswith("\n\n".join(notebook_cell_to_text(c) for c in shown) + "\n\n")


def test_a_notebook_task_runs_its_cells_in_the_shell_and_the_model_is_sent_them(fresh_faux, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ip = InteractiveShell.instance()
    fresh_faux.set_responses(["prices has no key 'plum'."])
    result = run_task(ip, CELL_ERROR, "faux/faux-1")
    assert result.passed, result.problems
    defined, failed = result.context
    assert [defined.role, failed.role] == ["notebookCell", "notebookCell"]
    assert failed.error.name == "KeyError" and failed.execution_count == defined.execution_count + 1
    sent = json.dumps([m.to_pi_json() for m in fresh_faux.calls[-1].messages])
    assert 'prices = {\\"apple\\": 120' in sent and "The cell failed with KeyError: 'plum'" in sent
    assert "prices" not in ip.user_ns  # the next task starts without what this one defined


def test_a_code_cell_that_was_not_recorded_fails_its_task(fresh_faux, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ip = InteractiveShell.instance()
    monkeypatch.setitem(ip.config, "PiNotebook", Config({"cells": "off"}))
    fresh_faux.set_responses(["prices has no key 'plum'."])
    result = run_task(ip, CELL_ERROR, "faux/faux-1")
    assert result.context == [] and result.problems == [
        f"setup cell {i} was not recorded as a notebookCell (is %agent_config cells=all?)" for i in (1, 2)
    ]
    assert unrecorded(next(t for t in TASKS if t.name == "history-build"), []) == []  # a %bash cell records itself


def test_a_notebook_task_runs_on_the_embedded_model(tmp_path, monkeypatch, own_namespace):
    monkeypatch.chdir(tmp_path)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    result = run_task(InteractiveShell.instance(), next(t for t in TASKS if t.name == "cell-variable"), "local")
    assert result.passed, (result.problems, result.reply)
    assert [m.role for m in result.context] == ["notebookCell", "notebookCell"] and result.calls == []


# --- the fresh newcomer set (#24): written before the prompt work, never tuned on ------------------------------

NEWCOMER = {t.name: t for t in NEWCOMER_TASKS}


def test_the_newcomer_set_is_fresh_and_asks_what_a_newcomer_trips_over():
    assert len(NEWCOMER_TASKS) >= 10 and len(NEWCOMER) == len(NEWCOMER_TASKS)
    assert not set(NEWCOMER) & {t.name for t in TASKS}
    kinds = {t.kind for t in NEWCOMER_TASKS}
    assert {"memory", "hidden", "read", "list"} <= kinds
    assert NEWCOMER["memory-name"].setup == ("%%agent\nMy name is Ada.",)
    assert NEWCOMER["hidden-print"].setup[0].startswith("%bash! ")
    # its files are its own: nothing of the project's demo folder
    assert not set(NEWCOMER_FILES) & set(DEMO_FILES)


def test_no_worked_example_of_the_local_prompt_holds_a_newcomer_answer():
    from pi_notebook.ai.providers import local_prompt

    shown = json.dumps([local_prompt.EXAMPLES, local_prompt.CELL_EXAMPLES, local_prompt.TOOL_RULES])
    shown += json.dumps([getattr(local_prompt, name) for name in dir(local_prompt) if name.endswith("_EXAMPLES")])
    for task in NEWCOMER_TASKS:
        if task.kind in ("hidden", "decline"):
            continue  # their expected words are the plain words of any refusal
        # (a one-digit answer is too common to keep out: "cell [5]"; its words are checked)
        words = [w for group in task.expect_any for w in group if len(w) > 1]
        assert not any(contains(shown, w) for w in words), (task.name, words)


def test_a_listing_answered_with_a_file_that_does_not_exist_fails():
    task = NEWCOMER["ls-photos"]
    call = _reply(ToolCall(id="c", name="ls", arguments={"path": "photos"}), stop="toolUse")
    run = [UserMessage(content=task.prompt), call]
    assert check(task, [*run, _reply(TextContent(text="beach.jpg, cat.png and captions.txt."))], [])[0] == []
    invented = check(task, [*run, _reply(TextContent(text="beach.jpg, cat.png and dog.png."))], [])[0]
    assert invented == ["reply names files that do not exist (dog.png)"]


def test_setup_agent_cells_run_the_model_under_test():
    assert setup_cell("%%agent\nMy name is Ada.", "local", 4) == "%%agent --model local --max-turns 4\nMy name is Ada."
    assert setup_cell("%bash ls photos", "local", 4) == "%bash ls photos"


def test_a_fresh_memory_task_runs_through_the_real_magics_on_a_scripted_model(fresh_faux, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fresh_faux.set_responses(["Nice to meet you, Ada.", "Your name is Ada."])
    result = run_task(InteractiveShell.instance(), NEWCOMER["memory-name"], "faux/faux-1", files=NEWCOMER_FILES)
    assert result.passed, result.problems
    assert [m.role for m in result.context] == ["user", "assistant"]  # the exchange before, in the history
    assert len(fresh_faux.calls) == 2


# --- the project set's memory and hidden-command tasks (#24) ---------------------------------------------------


def test_the_project_set_keeps_its_original_twenty_and_reports_them_apart():
    from pi_notebook.evals import report
    from pi_notebook.evals.run import TaskResult
    from pi_notebook.evals.tasks import ORIGINAL

    assert len(ORIGINAL) == 20 and ORIGINAL[:5] == ("capital", "arithmetic", "sky", "greeting", "fruit")
    kinds = [t.kind for t in TASKS]
    assert len(TASKS) == 33
    assert [kinds.count(k) for k in ("cell", "memory", "followup", "hidden", "vars")] == [4, 3, 2, 2, 2]
    results = [TaskResult(t, t.name != "read-call") for t in TASKS]
    assert report("local", results).endswith("median time to first text n/a; the original 20: 19/20")
    assert "original" not in report("local", results[:3])


def test_a_memory_task_runs_on_the_embedded_model(tmp_path, monkeypatch, own_namespace):
    """The exchange before reaches the offline model as a note it answers from (a real run: a few seconds)."""
    import time

    monkeypatch.chdir(tmp_path)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    start = time.monotonic()
    result = run_task(InteractiveShell.instance(), next(t for t in TASKS if t.name == "memory-city"), "local")
    assert result.passed, (result.problems, result.reply)
    assert [m.role for m in result.context] == ["user", "assistant"] and result.calls == []
    assert time.monotonic() - start < 60  # about 3 s on an idle 2-core machine


def test_a_notice_after_the_reply_is_not_a_run_cut_short():
    from pi_notebook.agent import CustomMessage
    from pi_notebook.coding_agent.agent_session import NOTICE, RUN_STOPPED
    from pi_notebook.coding_agent.context_fit import NOTICE_TYPE

    assert NOTICE == NOTICE_TYPE
    said = CustomMessage(custom_type=NOTICE, content="local/smollm2-135m sees only your previous prompt…")
    assert check(READ, [*_run("Buy milk."), said], [])[0] == []
    stopped = CustomMessage(custom_type=RUN_STOPPED, content="stopped after 4 turns")
    assert check(READ, [*_run("Buy milk."), stopped], [])[0] == ["no final answer (stop)"]


def test_a_vars_task_runs_on_the_embedded_model(tmp_path, monkeypatch, own_namespace):
    """A DataFrame read from a file in a cell: its columns are not in the cell, so the offline model must call
    ``vars`` for them (a real run: a few seconds)."""
    monkeypatch.chdir(tmp_path)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    task = next(t for t in TASKS if t.name == "vars-columns")
    assert "city" not in task.setup[0] and "temp" not in task.setup[0]
    result = run_task(InteractiveShell.instance(), task, "local")
    assert result.passed, (result.problems, result.reply)
    assert [c.split(" ", 1)[0] for c in result.calls] == ["vars"]
