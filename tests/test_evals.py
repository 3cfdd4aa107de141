"""The offline eval scores what a user would notice: a real answer, the right tool, nothing written, no loop."""

from IPython.core.interactiveshell import InteractiveShell

from pi_notebook.ai import AssistantMessage, TextContent, ToolCall, UserMessage
from pi_notebook.evals import TASKS, check, run_task
from pi_notebook.evals.tasks import contains

READ = next(t for t in TASKS if t.name == "read-first")


def _reply(*blocks, stop="stop"):
    return AssistantMessage(content=list(blocks), api="local", provider="local", model="m", stop_reason=stop)


def _run(answer: str):
    call = _reply(ToolCall(id="c", name="read", arguments={"path": "demo/todo.txt"}), stop="toolUse")
    return [UserMessage(content=READ.prompt), call, _reply(TextContent(text=answer))]


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


def test_a_task_runs_through_the_real_magics_on_the_embedded_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    result = run_task(InteractiveShell.instance(), next(t for t in TASKS if t.name == "ls-question"), "local")
    assert result.passed, result.problems
    assert result.calls == ["ls {'path': 'demo'}"] and "todo.txt" in result.reply
