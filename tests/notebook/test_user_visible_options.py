"""What a user sets in a cell reaches the model, and the session commands do what they say.

Each test fails if the behaviour it names breaks: the thinking level in the provider's options, the turn cap,
opening a session another tool wrote, and the fallback when another kernel holds the notebook's file.
"""

import json
import subprocess
import sys
import textwrap

from pi_notebook.ai import faux


def test_the_thinking_level_of_a_cell_reaches_the_provider(shell):
    faux.set_responses(["a", "b", "c"])
    shell.agent("think hard", "--model faux/faux-1 --tools none --thinking high")
    shell.agent("no thinking", "--model faux/faux-1 --tools none --thinking off")
    shell.cell("%agent_config thinking=low")
    shell.agent("the configured default")
    assert [options.reasoning for options in faux.call_options] == ["high", None, "low"]


def test_without_max_turns_a_run_stops_at_the_default_cap_of_20(shell):
    faux.set_responses([lambda: [faux.tool_call("ls", {"path": f"dir{len(faux.calls)}"})]] * 30)
    shell.agent("Look everywhere.", "--model faux/faux-1 --tools ls")
    assert len(faux.calls) == 20
    notice = shell.session.messages[-1]
    assert notice.custom_type == "pi_notebook.run_stopped" and notice.details["maxTurns"] == 20


def test_open_path_continues_a_session_written_elsewhere(shell, tmp_path):
    faux.set_responses(["Paris.", "About 2.1 million."])
    shell.agent("Capital of France?")
    elsewhere = shell.session.file.path
    shell.cell("%agent_session new")
    assert shell.session.messages == []
    shell.cell(f"%agent_session open {elsewhere}")
    assert [m.role for m in shell.session.messages] == ["user", "assistant"]
    shell.agent("How many people live there?")
    sent = [m.content[0].text if not isinstance(m.content, str) else m.content for m in faux.calls[-1].messages]
    assert sent == ["Capital of France?", "Paris.", "How many people live there?"]
    lines = [json.loads(line) for line in elsewhere.read_text().splitlines()]
    assert [e["message"]["role"] for e in lines if e["type"] == "message"] == ["user", "assistant"] * 2


def test_a_file_held_by_another_kernel_is_left_alone_and_this_kernel_continues_its_history(shell, capsys):
    shell.cell("%bash echo from-the-first-kernel")
    path = shell.session.file.path
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    holder = subprocess.Popen(  # another kernel: a real process holding the writer's lock on the file
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from pi_notebook.coding_agent.session import SessionFile
            held = SessionFile.open({str(path)!r})
            print("holding", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "holding"
        capsys.readouterr()
        shell.ip.run_line_magic("load_ext", "pi_notebook")
        out = capsys.readouterr().out
        assert f"{path} is in use by another kernel" in out
        session = shell.session
        assert session.file.path != path and session.file.path.parent == path.parent
        assert [m.command for m in session.messages if m.role == "bashExecution"] == ["echo from-the-first-kernel"]
        shell.cell("%bash echo from-the-second-kernel")
        recorded = session.file.path.read_text()
        assert "from-the-second-kernel" in recorded and "from-the-second-kernel" not in path.read_text()
    finally:
        holder.communicate("")
