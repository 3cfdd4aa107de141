"""The magics through a real IPython shell: what they record, what the LLM then sees, and misuse."""

import _thread
import json
import threading
import time

from IPython.core.error import UsageError

from pi_notebook.agent import BashExecutionMessage, BranchSummaryMessage, CustomMessage, to_pi_json
from pi_notebook.ai import faux
from pi_notebook.coding_agent.session import SessionFile


def llm_texts(context):
    return [
        b.text for m in context.messages for b in (m.content if isinstance(m.content, list) else []) if b.type == "text"
    ]


def file_roles(path):
    roles = []
    for line in path.read_text().splitlines()[1:]:
        entry = json.loads(line)
        if entry["type"] == "message":
            roles.append(entry["message"]["role"])
    return roles


def test_bash_is_recorded_and_the_llm_sees_it_next_turn(shell):
    shell.cell("%bash echo hello from the shell")
    message = shell.session.messages[-1]
    assert isinstance(message, BashExecutionMessage)
    # the output is kept as the shell printed it, trailing newline included (as Pi's executor keeps it)
    assert (message.command, message.output, message.exit_code) == (
        "echo hello from the shell",
        "hello from the shell\n",
        0,
    )
    faux.set_responses(["I saw it."])
    shell.agent("What did the shell print?")
    assert "Ran `echo hello from the shell`\n```\nhello from the shell\n\n```" in llm_texts(faux.calls[-1])
    assert file_roles(shell.session.file.path) == ["bashExecution", "user", "assistant"]


def test_bash_bang_is_stored_and_shown_but_never_sent(shell):
    shell.cell("%bash! echo SECRET=hunter2")
    message = shell.session.messages[-1]
    assert message.exclude_from_context is True and message.output == "SECRET=hunter2\n"
    faux.set_responses(["ok"])
    shell.agent("hi")
    assert not any("hunter2" in t for t in llm_texts(faux.calls[-1]))
    assert "hunter2" in shell.session.file.path.read_text()  # stored, as Pi stores !! commands


def test_a_failing_command_is_recorded_not_raised(shell):
    result = shell.cell("%bash ls /no/such/dir; exit 3")
    assert result.error_in_exec is None
    message = shell.session.messages[-1]
    assert message.exit_code == 3 and "No such file" in message.output


def test_the_command_runs_exactly_as_typed(shell):
    shell.cell("%bash printf '%s|%s\\n' \"a  b\" c;echo $((1+2))")
    message = shell.session.messages[-1]
    assert message.command == "printf '%s|%s\\n' \"a  b\" c;echo $((1+2))"
    assert message.output == "a  b|c\n3\n"
    shell.cell("%bash --timeout=5 -- echo --timeout")
    assert shell.session.messages[-1].output == "--timeout\n"


def test_binary_output_is_sanitised(shell):
    shell.cell("%bash head -c 4000 /dev/urandom")
    output = shell.session.messages[-1].output
    assert output.encode("utf-8")  # valid text
    assert not any(ord(c) < 32 and c not in "\n\t" for c in output)


def test_bash_timeout_cancels(shell):
    shell.cell("%bash --timeout 0.5 sleep 20")
    message = shell.session.messages[-1]
    assert message.cancelled and message.exit_code is None


def interrupt_when(ready, timeout: float = 60.0) -> threading.Thread:
    """The stop button, pressed once ``ready()`` holds (not after a fixed delay: a busy machine starts late)."""

    def press() -> None:
        deadline = time.monotonic() + timeout
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.02)
        _thread.interrupt_main()

    thread = threading.Thread(target=press, daemon=True)
    thread.start()
    return thread


def test_interrupting_bash_escalates_and_records_cancelled(shell, tmp_path):
    started = tmp_path / "started"
    pressed = interrupt_when(started.exists)
    shell.cell(f"%bash trap '' INT; echo started; touch {started}; sleep 30")
    pressed.join()
    message = shell.session.messages[-1]
    assert message.cancelled and message.output == "started\n"


def test_agent_streams_and_records_every_message(shell):
    faux.set_responses([[faux.tool_call("ls", {}, id="c1")], "There is one file."])
    (shell.notebook.parent / "data.csv").write_text("a,b\n")
    shell.agent("What files are here?", "--model faux/faux-1 --tools ls")
    roles = [m.role for m in shell.session.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert "data.csv" in shell.session.messages[2].content[0].text
    assert file_roles(shell.session.file.path) == roles


def test_interrupting_a_streaming_agent_keeps_the_partial_reply_and_the_next_run_works(shell, monkeypatch):
    monkeypatch.setattr(faux.provider, "tokens_per_second", 40)  # a slow model, so the stop button lands mid-reply
    monkeypatch.setattr(faux.provider, "chunk_chars", 4)
    faux.set_responses(["word " * 200])

    def mid_reply() -> bool:
        partial = shell.session.agent.state.stream_message
        return partial is not None and any(getattr(b, "text", "") for b in partial.content)

    pressed = interrupt_when(mid_reply)
    shell.agent("Talk a lot")
    pressed.join()
    session = shell.session
    reply = session.messages[-1]
    assert reply.stop_reason == "aborted" and 0 < len(reply.content[0].text) < len("word " * 200)
    monkeypatch.setattr(faux.provider, "tokens_per_second", None)
    faux.set_responses(["back"])
    shell.agent("again")
    assert session.messages[-1].content[0].text == "back"
    assert file_roles(session.file.path) == ["user", "assistant", "user", "assistant"]


def test_prompt_interpolates_notebook_variables(shell):
    shell.ip.user_ns["city"] = "Lyon"
    faux.set_responses(["ok", "ok"])
    shell.agent("Weather in {city}? Use {{braces}}.")
    assert llm_texts(faux.calls[-1])[-1] == "Weather in Lyon? Use {braces}."
    result = shell.agent("Where is {nowhere}?")
    assert isinstance(result.error_in_exec, UsageError)


def test_options_are_applied_and_recorded(shell, tmp_path):
    (tmp_path / "system.md").write_text("You are terse.")
    faux.set_responses(["ok"])
    shell.agent("hi", "--model faux/faux-1 --system @system.md --tools read,ls --thinking high --max-turns 1 -q")
    call = faux.calls[-1]
    assert call.system_prompt == "You are terse." and [t.name for t in call.tools] == ["read", "ls"]
    context = SessionFile.open(shell.session.file.path, readonly=True).build_session_context()
    assert context.thinking_level == "high" and context.model == {"provider": "faux", "modelId": "faux-1"}


def test_bad_options_are_usage_errors(shell):
    for options in ("--tools rm", "--thinking extreme", "--model nosuch", "--model antropic/claude-99",
                    "--max-turns -1", "--system @/no/file"):  # fmt: skip
        result = shell.agent("hi", options)
        assert isinstance(result.error_in_exec, UsageError), options
    assert isinstance(shell.cell("%%agent\n   ").error_in_exec, UsageError)
    assert isinstance(shell.cell("%bash").error_in_exec, UsageError)
    assert isinstance(shell.cell("%bash --timeout -1 ls").error_in_exec, UsageError)


def test_new_starts_a_fresh_session_file(shell):
    faux.set_responses(["one", "two"])
    shell.agent("first")
    first_file = shell.session.file.path
    shell.agent("second", "--model faux/faux-1 --tools none --new")
    assert shell.session.file.path != first_file
    assert [m.role for m in shell.session.messages] == ["user", "assistant"]
    assert [m.role for m in faux.calls[-1].messages] == ["user"]


def test_rerunning_a_cell_branches_from_where_it_started(shell):
    faux.set_responses(["Paris.", "It is big.", "Lyon!"])
    shell.agent("Capital of France?", cell_id="cell-1")
    shell.agent("Tell me more.", cell_id="cell-2")
    shell.agent("Capital of France?", cell_id="cell-1")  # the user re-runs the first cell
    messages = shell.session.messages
    assert isinstance(messages[0], BranchSummaryMessage)
    assert "Tell me more." in messages[0].summary and "Paris." in messages[0].summary
    assert [m.role for m in messages[1:]] == ["user", "assistant"]
    # the LLM sees the summary of the abandoned branch, then the new turn only
    assert [m.role for m in faux.calls[-1].messages] == ["user", "user"]
    tree = SessionFile.open(shell.session.file.path, readonly=True)
    assert len(tree.entries) > len(tree.get_branch())  # the old branch is still in the file


def test_a_branch_summary_covers_custom_messages_and_the_files_of_summaries_inside_it(shell):
    faux.set_responses(["Paris.", "Noted.", "Lyon!"])
    shell.agent("Capital of France?", cell_id="cell-1")
    shell.session.record(CustomMessage(custom_type="ticket", content="Ticket 7 reopened"))
    shell.session.file.append_compaction("Earlier work.", None, 100, {"readFiles": ["old.py"], "modifiedFiles": []})
    shell.agent("Anything else?", cell_id="cell-2")
    shell.agent("Capital of France?", cell_id="cell-1")  # re-run: all of the above is abandoned
    summary = shell.session.messages[0]
    assert isinstance(summary, BranchSummaryMessage)
    assert "A ticket message: Ticket 7 reopened" in summary.summary  # as Pi: custom messages are summarised too
    assert "An earlier summary: Earlier work." in summary.summary
    assert "<read-files>\nold.py\n</read-files>" in summary.summary  # the nested compaction's files are kept
    entry = next(e for e in shell.session.file.entries if e.type == "branch_summary")
    assert entry.details["readFiles"] == ["old.py"]


def test_the_history_survives_reloading_the_extension(shell):
    faux.set_responses(["remembered"])
    shell.cell("%bash! echo private")
    shell.agent("Remember 42.")
    faux.set_responses([faux.message([], stop_reason="error", error_message="invalid request: bad schema")])
    shell.agent("And again?")
    before = [to_pi_json(m) for m in shell.session.messages]
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")  # what a restarted kernel does
    assert [to_pi_json(m) for m in shell.session.messages] == before
    assert shell.session.messages[-1].stop_reason == "error"


def test_record_and_llm_messages_python_api(shell):
    import pi_notebook

    pi_notebook.record(CustomMessage(custom_type="note", content="the user prefers metric units", display=False))
    assert pi_notebook.current_session().llm_messages()[-1].content[0].text == "the user prefers metric units"


def test_agent_session_and_config_magics(shell, capsys):
    faux.set_responses(["hello"])
    shell.agent("hi")
    shell.cell("%agent_session")
    out = capsys.readouterr().out
    assert str(shell.session.file.path) in out and "latest message: " in out
    shell.cell("%agent_session list")
    listing = capsys.readouterr().out
    assert "prompt: hi" in listing and "reply: hello" in listing
    first = shell.session.file.entries[0].id
    shell.cell(f"%agent_session label {first} start here")
    assert shell.session.file.get_label(first) == "start here"
    user_entry = next(e for e in shell.session.file.entries if getattr(e, "role", None) == "user")
    shell.cell(f"%agent_session branch {user_entry.id}")
    assert [m.role for m in shell.session.messages] == ["user"]
    assert isinstance(shell.cell("%agent_session branch nope").error_in_exec, UsageError)
    shell.cell("%agent_config default_model=faux/faux-1 tools=none max_turns=3")
    assert shell.session.config.default_model == "faux/faux-1" and shell.session.config.max_turns == 3
    assert isinstance(shell.cell("%agent_config tools=rm").error_in_exec, UsageError)
    assert isinstance(shell.cell("%agent_config colour=blue").error_in_exec, UsageError)


def test_compaction_happens_before_the_window_fills_and_is_recorded(shell):
    shell.cell("%agent_config reserve_tokens=100 keep_recent_tokens=60")
    shell.session.resolve_model = lambda spec: faux.model(context_window=400)

    def model(context):  # the same scripted model answers turns and writes summaries
        if "context summarization assistant" in (context.system_prompt or ""):
            return "## Goal\nLearn about A and B."
        return "An answer. " * 20

    faux.set_responses([model] * 10)
    for topic in "ABC":
        shell.agent(f"Tell me about {topic}. " * 30)
    summaries = [c for c in faux.calls if "summarization" in (c.system_prompt or "")]
    assert summaries and "<conversation>" in summaries[0].messages[0].content[0].text
    first = faux.calls[-1].messages[0].content[0].text
    assert first.startswith("The conversation history before this point was compacted") and "Learn about A" in first
    kinds = [json.loads(line)["type"] for line in shell.session.file.path.read_text().splitlines()]
    assert "compaction" in kinds
    reopened = SessionFile.open(shell.session.file.path, readonly=True).build_session_context()
    assert reopened.messages[0].role == "compactionSummary"
    assert len(shell.session.messages) == 6  # the kernel still shows and keeps the full history


def test_a_configured_model_writes_the_branch_summary(shell):
    shell.cell("%agent_config branch_summary_model=same")
    faux.set_responses(["Paris.", "## Goal\nFind the capital.", "Paris, again."])
    shell.agent("Capital of France?", cell_id="cell-1")
    shell.agent("Capital of France?", cell_id="cell-1")
    summary = shell.session.messages[0]
    assert isinstance(summary, BranchSummaryMessage) and "## Goal\nFind the capital." in summary.summary
    assert "context summarization assistant" in faux.calls[1].system_prompt


def test_settings_come_from_ipython_config_too(shell):
    from traitlets.config import Config

    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.config = Config({"PiNotebook": {"default_model": "faux/faux-1", "tools": "none"}})
    try:
        shell.ip.run_line_magic("load_ext", "pi_notebook")
        faux.set_responses(["configured"])
        shell.cell("%%agent\nhi")
        assert shell.session.messages[-1].content[0].text == "configured"
        assert faux.calls[-1].tools is None
    finally:
        shell.ip.config = Config()


def test_compaction_settings_fit_a_small_context_window(shell):
    shell.session.resolve_model = lambda spec: faux.model(context_window=2048)
    faux.set_responses(["short"])
    shell.agent("hi")
    settings = shell.session.compactor.settings
    assert settings.reserve_tokens == 512 and settings.keep_recent_tokens == 1024  # not Pi's 16,384 / 20,000


def test_what_compaction_keeps_fits_under_its_threshold_on_a_32k_window(shell):
    shell.session.resolve_model = lambda spec: faux.model(context_window=32_768)
    faux.set_responses(["short"])
    shell.agent("hi")
    settings = shell.session.compactor.settings
    # Pi's 20,000 kept tokens would sit above the 16,384-token threshold: every call would compact again.
    assert settings.reserve_tokens == 16_384 and settings.keep_recent_tokens == 8_192


def test_messages_rebuilt_from_their_own_entries_map_back_to_them(shell):
    # Compaction records the first kept message by entry id; after a reload, custom messages are rebuilt objects.
    faux.set_responses(["ok"])
    shell.agent("hi")  # a model_change entry comes first in the file
    note = CustomMessage(custom_type="note", content="remember this")
    shell.session.record(note)
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    session = shell.session
    rebuilt = session.messages[-1]
    assert rebuilt is not note and rebuilt.role == "custom"
    entry = session.file.entries[-1]
    assert entry.type == "custom_message" and session.writer.entry_id_of(rebuilt) == entry.id
    first_message = next(e.id for e in session.file.entries if e.type == "message")
    assert session.writer.entry_id_of(session.messages[0]) == first_message


def stop_notices(session):
    return [m for m in session.messages if isinstance(m, CustomMessage) and m.custom_type == "pi_notebook.run_stopped"]


def test_a_run_stopped_by_max_turns_says_so_in_the_cell_and_the_session(shell, capsys):
    faux.set_responses([lambda: [faux.tool_call("ls", {"path": f"dir{len(faux.calls)}"})]] * 5)
    shell.agent("Look around.", "--model faux/faux-1 --tools ls --max-turns 2")
    expected = (
        "Stopped after 2 turns (--max-turns 2) before the model gave an answer; run the cell again with a higher "
        "--max-turns or ask a narrower question."
    )
    notice = shell.session.messages[-1]
    roles = [m.role for m in shell.session.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant", "toolResult", "custom"]
    assert notice.custom_type == "pi_notebook.run_stopped" and notice.content == expected and notice.display
    assert notice.details == {"reason": "max_turns", "turns": 2, "maxTurns": 2}
    assert capsys.readouterr().out.count(expected) == 1  # shown once, in the cell's transcript
    entry = json.loads(shell.session.file.path.read_text().splitlines()[-1])
    assert entry["type"] == "custom_message" and entry["customType"] == "pi_notebook.run_stopped"
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")  # a restarted kernel still has it
    assert [m.content for m in stop_notices(shell.session)] == [expected]
    # the next run's model is told its previous run was cut short (a custom message, sent as Pi sends them)
    faux.set_responses(["Here is what I found."])
    shell.agent("And?")
    assert expected in llm_texts(faux.calls[-1])


def test_a_run_that_answers_leaves_no_notice(shell):
    faux.set_responses([[faux.tool_call("ls", {})], "Two files."])
    shell.agent("Look around.", "--model faux/faux-1 --tools ls --max-turns 2")
    assert stop_notices(shell.session) == [] and shell.session.messages[-1].role == "assistant"


def test_the_loop_guard_stops_a_repeating_model_with_one_notice(shell, capsys):
    faux.set_responses([lambda: [faux.tool_call("ls", {"path": "."})]] * 8)
    shell.agent("Look around.", "--model faux/faux-1 --tools ls")
    results = [m for m in shell.session.messages if m.role == "toolResult"]
    assert len(results) == 4 and "Step back" in results[2].content[0].text
    (notice,) = stop_notices(shell.session)
    assert notice.content.startswith("Stopped by the loop guard: the model called ls with the same arguments 4")
    assert notice.details["reason"] == "loop_guard" and len(faux.calls) == 4
    assert capsys.readouterr().out.count("Stopped by the loop guard") == 1


def test_a_retried_identical_error_is_shown_once_and_counted(shell, capsys, monkeypatch):
    import pi_notebook.coding_agent.recovery as recovery

    monkeypatch.setattr(recovery, "retry_delay_ms", lambda attempt, settings: 0)
    failure = faux.message([], stop_reason="error", error_message="503 service unavailable")
    faux.set_responses([failure, failure, failure, failure])  # the first try and Pi's 3 retries all fail
    shell.agent("hi")
    out = capsys.readouterr().out
    assert out.count("503 service unavailable") == 1 and "503 service unavailable (4×)" in out
    # display only: the session file keeps every attempt, as Pi's does
    assert file_roles(shell.session.file.path) == ["user", "assistant", "assistant", "assistant", "assistant"]
    faux.set_responses([failure, failure, "recovered"])
    shell.agent("again")
    out = capsys.readouterr().out
    assert "503 service unavailable (2×)" in out and out.count("503 service unavailable") == 1 and "recovered" in out


def test_a_restart_keeps_the_file_lists_of_earlier_compactions(shell):
    (shell.notebook.parent / "notes.txt").write_text("n\n")
    shell.cell("%agent_config reserve_tokens=100 keep_recent_tokens=60")
    first_call = [faux.message([faux.tool_call("read", {"path": "notes.txt"})], stop_reason="toolUse")]

    def model(context):
        if "context summarization assistant" in (context.system_prompt or ""):
            return "## Goal\nSummary."
        return first_call.pop() if first_call else "An answer. " * 20

    faux.set_responses([model] * 30)
    small = lambda spec: faux.model(context_window=400)  # noqa: E731
    shell.session.resolve_model = small
    shell.agent("Read notes.txt. " * 30, options="--tools read")
    for topic in "AB":
        shell.agent(f"Tell me about {topic}. " * 30, options="--tools read")

    def compactions():
        lines = [json.loads(line) for line in shell.session.file.path.read_text().splitlines()]
        return [e for e in lines if e["type"] == "compaction"]

    assert "notes.txt" in compactions()[-1]["details"]["readFiles"]
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    shell.session.resolve_model = small
    before = len(compactions())
    for topic in "CD":
        shell.agent(f"Tell me about {topic}. " * 30, options="--tools read")
    assert len(compactions()) > before  # compacted again after the restart, without the read in its history
    assert "notes.txt" in compactions()[-1]["details"]["readFiles"]
