"""An open inspector follows the pipeline (#15): a re-registered converter or a session's transform_context shows at
once in the inspector already on screen; a converter that raises marks its rows; where compaction would cut."""

from __future__ import annotations

import gc
import weakref

import pytest
from IPython.utils.capture import capture_output

from pi_notebook.agent import Agent, BashExecutionMessage, message_type, register_message_type, to_pi_json
from pi_notebook.ai import TextContent, ToolResultMessage, UserMessage, faux
from pi_notebook.coding_agent.compaction import CompactionSettings, Compactor
from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.notebook.inspector import inspect

pytestmark = pytest.mark.usefixtures("fresh_faux")


def user(text):
    return UserMessage(content=[TextContent(text=text)])


def shouted(message):
    return user(f"SHELL SAID: {message.output.upper()}")


@pytest.fixture
def bash_converter():
    """The bashExecution converter as it was, put back after the test (the registry is process-wide)."""
    original = message_type("bashExecution").to_llm
    yield original
    register_message_type(BashExecutionMessage, to_llm=original, replace=True)


def texts(widget):
    return [row["produced_text"] for row in widget.rows]


def test_a_replaced_converter_changes_every_open_inspector_at_once(bash_converter):
    history = [user("what is here?"), BashExecutionMessage(command="ls", output="a.txt", exit_code=0)]
    first, second = inspect(history), inspect(list(history))
    assert "Ran `ls`" in texts(first)[1]
    before = first.requests[first.provider]

    register_message_type(BashExecutionMessage, to_llm=shouted, replace=True)

    for widget in (first, second):
        assert texts(widget)[1] == "SHELL SAID: A.TXT"
        assert widget.rows[1]["status"] == "translated"
    assert first.requests[first.provider] != before  # the request body follows
    assert "SHELL SAID: A.TXT" in str(first.requests[first.provider])

    register_message_type(BashExecutionMessage, to_llm=bash_converter, replace=True)
    assert "Ran `ls`" in texts(first)[1]


def test_in_a_notebook_the_inspector_on_screen_answers_without_a_new_display(shell, bash_converter):
    shell.cell("%bash echo hello")
    shell.cell("import pi_notebook\nfrom pi_notebook.notebook.inspector import inspect")
    shell.cell("insp = inspect(pi_notebook.current_session())")
    insp = shell.ip.user_ns["insp"]
    assert "hello" in texts(insp)[0] and "Ran `echo hello`" in texts(insp)[0]
    shell.ip.user_ns["shouted"] = shouted
    with capture_output() as out:
        result = shell.cell(
            "from pi_notebook.agent import BashExecutionMessage, register_message_type\n"
            "_ = register_message_type(BashExecutionMessage, to_llm=shouted, replace=True)"
        )
    assert result.success and out.outputs == [] and out.stdout == ""  # nothing displayed again
    assert texts(insp)[0] == "SHELL SAID: HELLO\n"
    assert insp.comm is not None  # the same widget, still open


def test_a_closed_inspector_stops_listening_and_is_not_kept_alive(bash_converter):
    widget = inspect([BashExecutionMessage(command="ls", output="x", exit_code=0)])
    rows = widget.rows
    widget.close()
    register_message_type(BashExecutionMessage, to_llm=shouted, replace=True)
    assert widget.rows == rows  # closed: not traced again
    ref = weakref.ref(widget)
    del widget
    gc.collect()
    assert ref() is None


def test_registering_what_is_already_registered_changes_nothing(bash_converter):
    from pi_notebook.agent_core import registry_version

    version = registry_version()
    register_message_type(BashExecutionMessage, to_llm=bash_converter)  # a cell that runs again
    assert registry_version() == version


def test_a_session_transform_is_shown_at_once_and_used_by_the_next_run(shell):
    shell.cell("%bash echo secret-ish")
    faux.set_responses(["noted"])
    shell.agent("first")
    session = shell.session
    insp = inspect(session)
    assert [r["status"] for r in insp.rows][:1] == ["translated"]

    session.transform_context = lambda messages: [m for m in messages if m.role != "bashExecution"]

    assert insp.rows[0]["role"] == "bashExecution" and insp.rows[0]["status"] == "dropped"
    assert insp.rows[0]["reason"] == "removed by transform_context"
    assert "secret-ish" not in str(insp.requests[insp.provider])
    assert any(m.role == "bashExecution" for m in session.messages)  # nothing stored changed

    faux.set_responses(["ok"])
    shell.agent("second")
    sent = faux.calls[-1].messages
    assert "secret-ish" not in str([to_pi_json(m) for m in sent])  # the agent ran it, before its own stages

    session.transform_context = None
    assert insp.rows[0]["status"] == "translated"


def test_compare_keeps_the_bodies_from_before_a_pipeline_change(shell, bash_converter):
    shell.cell("%bash echo secret-ish")
    insp = inspect(shell.session)
    shown = insp.requests[insp.provider]
    assert insp.requests_before == {}  # nothing changed yet
    shell.cell("%bash echo more")  # the history grew: not a pipeline change
    assert insp.requests_before == {}
    grown = insp.requests[insp.provider]

    shell.session.transform_context = lambda messages: [m for m in messages if m.role != "bashExecution"]
    assert insp.requests_before[insp.provider] == grown != shown  # what compare shows as "before the change"
    assert "secret-ish" in str(insp.requests_before[insp.provider]) and "secret-ish" not in str(insp.requests)

    register_message_type(BashExecutionMessage, to_llm=shouted, replace=True)  # another change: the last bodies
    assert "secret-ish" not in str(insp.requests_before[insp.provider])


def test_a_failing_transform_is_a_note_and_the_rows_stay(shell):
    shell.cell("%bash echo hi")
    insp = inspect(shell.session)

    def broken(messages):
        raise KeyError("nope")

    shell.session.transform_context = broken
    assert insp.rows[0]["status"] == "translated"
    assert any("transform_context failed: KeyError" in note for note in insp.notes)


def test_a_raising_converter_marks_its_rows_and_the_others_stay(bash_converter):
    history = [
        user("question"),
        BashExecutionMessage(command="ls", output="a", exit_code=0),
        BashExecutionMessage(command="pwd", output="/tmp", exit_code=0),
        faux.message("answer"),
    ]
    widget = inspect(history)

    def picky(message):
        if message.command == "pwd":
            raise ValueError("no pwd here")
        return shouted(message)

    register_message_type(BashExecutionMessage, to_llm=picky, replace=True)

    statuses = [(r["index"], r["status"]) for r in widget.rows]
    assert statuses == [(0, "passed"), (1, "translated"), (2, "error"), (3, "passed")]
    error = widget.rows[2]
    assert error["reason"] == "ValueError: no pwd here" and error["llm"] == [] and error["tokens"] == 0
    assert widget.rows[1]["produced_text"] == "SHELL SAID: A"
    assert any("converter raised" in note for note in widget.notes)
    body = str(widget.requests[widget.provider])
    assert "SHELL SAID: A" in body and "/tmp" not in body  # the request of what did convert
    assert widget.comm is not None

    register_message_type(BashExecutionMessage, to_llm=bash_converter, replace=True)
    assert [r["status"] for r in widget.rows] == ["passed", "translated", "translated", "passed"]
    assert not any("converter raised" in note for note in widget.notes)


def test_a_raising_converter_still_fails_the_agent_run(shell, bash_converter):
    shell.cell("%bash echo hi")

    def boom(message):
        raise ValueError("broken converter")

    register_message_type(BashExecutionMessage, to_llm=boom, replace=True)
    faux.set_responses(["never sent"])
    shell.agent("go")
    last = shell.session.messages[-1]
    assert last.role == "assistant" and last.stop_reason == "error"
    assert "convert_to_llm failed: ValueError: broken converter" in last.error_message
    assert faux.calls == []


def sized(role, tokens, **extra):
    """A message of exactly ``tokens`` estimated tokens (chars / 4)."""
    text = "x" * (4 * tokens)
    if role == "user":
        return user(text)
    if role == "assistant":
        return faux.message(text)
    return ToolResultMessage(tool_call_id="t1", tool_name="read", content=[TextContent(text=text)], **extra)


def test_the_compaction_cut_is_pis_cut_point():
    history = [
        sized("user", 100),
        sized("assistant", 100),
        sized("toolResult", 100),  # where the budget is reached; a tool result is never cut at
        sized("assistant", 100),
        sized("user", 100),
        sized("assistant", 100),
    ]
    model = faux.model(context_window=10_000)
    settings = CompactionSettings(reserve_tokens=1_000, keep_recent_tokens=350)
    agent = Agent(model, transform_context=Compactor(model, settings))
    agent.replace_messages(history)
    widget = inspect(agent)
    assert widget.compaction == {
        "threshold": 9_000, "cut": 3, "summarise": [0, 1, 2], "enabled": True,
        "reserve_tokens": 1_000, "keep_recent_tokens": 350,
    }  # fmt: skip
    assert inspect(history).compaction == {}  # a plain list does not compact


def test_a_notebook_session_reports_its_settings(shell):
    shell.cell("%agent_config reserve_tokens=2000 keep_recent_tokens=30")
    for word in ("one", "two", "three"):
        shell.cell(f"%bash echo {word * 40}")
    widget = inspect(shell.session)
    state = widget.compaction
    window = widget.context_window
    assert state["threshold"] == window - 2000 and state["enabled"] is True
    assert state["cut"] == 2 and state["summarise"] == [0, 1]  # the last output alone is over 30 tokens


def test_summarised_rows_are_under_their_summary(tmp_path):
    file = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    first = file.append_message(user("old question"))
    file.append_message(faux.message("old answer"))
    kept = file.append_message(user("kept question"))
    file.append_compaction("They asked an old question.", kept.id, 500)
    file.append_message(faux.message("kept answer"))
    newer = file.append_message(user("newer question"))
    file.append_compaction("Old and kept questions.", newer.id, 600)
    file.append_message(faux.message("newest answer"))

    widget = inspect(file)
    rows = widget.rows
    assert [r["role"] for r in rows] == ["compactionSummary", "user", "assistant"]
    covered = rows[0]["covered"]
    # The last compaction replaced what the first one kept and what followed, up to its own first kept entry.
    assert [m["role"] for m in covered] == ["user", "assistant"]
    assert covered[0]["content"][0]["text"] == "kept question"
    assert covered[1]["content"][0]["text"] == "kept answer"
    assert "old question" not in str(covered)  # that one is under the first summary, superseded
    assert "covered" not in rows[1]
    assert first.id != kept.id


def test_an_agents_inspector_follows_its_pipeline_when_set_anew():
    # A hand-made Agent: setting agent.transform_context or agent.convert_to_llm re-traces its open inspectors
    # at once (no refresh()); the agent's stored history stays as it is; a closed inspector stops following.
    history = [user("first turn"), user("second turn"), BashExecutionMessage(command="ls", output="a", exit_code=0)]
    agent = Agent(faux.model(), messages=list(history))
    insp = inspect(agent)
    assert [row["status"] for row in insp.rows] == ["passed", "passed", "translated"]

    agent.transform_context = lambda messages: messages[-2:]
    # The next call's transform sees the history and the next prompt: it keeps the shell command and that prompt.
    assert [row["status"] for row in insp.rows] == ["dropped", "dropped", "translated"]
    assert insp.requests_before  # compare: the bodies from before the change

    agent.convert_to_llm = lambda messages: [user("everything, said once")]
    assert [row["produced_text"] for row in insp.rows if row["llm"]] == ["everything, said once"]
    assert agent.messages == history

    insp.close()
    rows = insp.rows
    agent.transform_context = None
    assert insp.rows == rows
    with pytest.raises(TypeError, match="must be callable"):
        agent.convert_to_llm = None
