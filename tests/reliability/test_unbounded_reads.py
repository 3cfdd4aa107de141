"""What a notebook reads for a prompt or a tool is a regular file, read with a bound (#21, failure 4).

``%%agent --system @/dev/zero`` read until the memory ran out (a bare ``MemoryError`` at 3 GB under a limit, the
OOM killer without one); ``--system @fifo`` and the agent's tools on a FIFO waited until the stop button. Now each
is refused at once in one line: a ``UsageError`` naming the path and why for ``--system``, an error result the
model reads for a tool.

A real IPython shell with the extension loaded, the faux model. A cell that could wait forever or read without
end runs in a child process (a real shell there too), with a timeout and a memory limit: a regression fails the
test instead of hanging the suite or filling the machine.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import textwrap
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from pi_notebook.ai import faux

from ..coding_agent.tools.helpers import run_bounded

ROOT = Path(__file__).resolve().parent.parent.parent
MB = 1 << 20

_CHILD = textwrap.dedent(
    """
    import json, os, sys
    sys.path.insert(0, {root!r})
    os.chdir({folder!r})
    from IPython.core.interactiveshell import InteractiveShell
    import pi_notebook
    from pi_notebook.ai import faux
    ip = InteractiveShell.instance()
    ip.user_ns["__session__"] = os.path.join({folder!r}, "work.ipynb")
    ip.run_line_magic("load_ext", "pi_notebook")
    before = str(pi_notebook.current_session().file.path)
    exec({setup!r})
    result = ip.run_cell({cell!r}, store_history=False)
    error = result.error_in_exec
    session = pi_notebook.current_session()
    print("RESULT " + json.dumps({{
        "error": [type(error).__name__, str(error)] if error else None,
        "switched": str(session.file.path) != before,
        "messages": [m.to_pi_json() for m in session.messages],
    }}))
    """
)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a read without end fails here, not the machine


def run_in_child_shell(folder: Path, cell: str, setup: str = "", timeout: float = 90) -> tuple[dict, str]:
    """Run ``cell`` in a real IPython shell in a child process (in ``folder``, the notebook ``work.ipynb``): what
    it left (its error, whether the session switched, the session's messages) and what the shell showed."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN")) and k != "JPY_SESSION_NAME"}
    env["HOME"] = str(folder / "home")
    code = _CHILD.format(root=str(ROOT), folder=str(folder), setup=setup, cell=cell)
    done = run_bounded([sys.executable, "-c", code], timeout, repr(cell), env=env, preexec_fn=_limit_memory)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, (done.stdout[-2000:], done.stderr[-3000:])
    return json.loads(lines[-1].removeprefix("RESULT ")), done.stdout + done.stderr


def assert_one_line_usage_error(outcome: dict, shown: str) -> str:
    """The cell failed with a one-line UsageError, shown as that one line and nothing else (no traceback)."""
    assert outcome["error"] is not None and outcome["error"][0] == "UsageError", outcome
    text = outcome["error"][1]
    assert "\n" not in text and "Traceback" not in shown, shown
    assert f"UsageError: {text}" in shown.splitlines(), shown
    return text


# --- --system @path ----------------------------------------------------------------------------------------


def test_system_prompt_from_a_fifo_is_refused_at_once_and_nothing_changes(tmp_path):
    os.mkfifo(tmp_path / "prompt.fifo")
    # --new would start a new session: a refused option must leave the current one as it is.
    outcome, shown = run_in_child_shell(tmp_path, "%%agent --model faux/faux-1 --new --system @prompt.fifo\nhi")
    text = assert_one_line_usage_error(outcome, shown)
    assert text == "--system @prompt.fifo: prompt.fifo is not a regular file (a FIFO)"
    assert not outcome["switched"] and outcome["messages"] == []


def test_system_prompt_from_dev_zero_is_refused_without_reading_it(tmp_path):
    # Before: read until MemoryError (here at the child's 3 GB limit; on a real kernel, the OOM killer).
    outcome, shown = run_in_child_shell(tmp_path, "%%agent --model faux/faux-1 --system @/dev/zero\nhi")
    text = assert_one_line_usage_error(outcome, shown)
    assert text == "--system @/dev/zero: /dev/zero is not a regular file (a character device)"
    assert outcome["messages"] == []


def one_line_usage_error(shell, cell: str, capsys) -> str:
    capsys.readouterr()
    result = shell.cell(cell)
    out, err = capsys.readouterr()
    assert isinstance(result.error_in_exec, UsageError), result.error_in_exec
    text = str(result.error_in_exec)
    assert "\n" not in text and (err + out).strip() == f"UsageError: {text}", err + out
    return text


def test_a_system_prompt_file_over_1mb_is_refused_naming_the_limit(shell, capsys, tmp_path):
    (tmp_path / "huge.md").write_bytes(b"Be terse. " * (MB // 10 + 1))  # just over 1 MB
    text = one_line_usage_error(shell, "%%agent --model faux/faux-1 --system @huge.md\nhi", capsys)
    assert text == (
        "--system @huge.md: huge.md is larger than 1,048,576 bytes (1 MB), the most a system prompt file may hold"
    )
    assert shell.session.messages == [] and faux.calls == []


def test_a_system_prompt_file_of_1mb_proc_files_and_home_paths_are_read(shell, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "prompt.md").write_text("You are terse.")
    (tmp_path / "limit.md").write_bytes(b"x" * MB)
    faux.set_responses(["a", "b", "c"])
    shell.agent("hi", "--model faux/faux-1 --tools none --system @~/prompt.md")
    shell.agent("hi", "--model faux/faux-1 --tools none --system @limit.md")
    shell.agent("hi", "--model faux/faux-1 --tools none --system @/proc/self/status")  # says 0 bytes, holds some
    prompts = [call.system_prompt for call in faux.calls]
    assert prompts[0] == "You are terse." and prompts[1] == "x" * MB and prompts[2].startswith("Name:\t")


def test_a_system_prompt_file_that_is_not_utf8_is_one_line(shell, capsys, tmp_path):
    (tmp_path / "latin1.md").write_bytes(b"Soyez bref, caf\xe9.")
    # Before: a UnicodeDecodeError traceback.
    text = one_line_usage_error(shell, "%%agent --model faux/faux-1 --system @latin1.md\nhi", capsys)
    assert text == "--system @latin1.md: latin1.md is not UTF-8 text (at byte 15)"


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("@folder", "--system @folder: folder is not a regular file (a directory)"),
        ("@missing.md", "--system @missing.md: missing.md: No such file or directory"),
        ("@", "--system @PATH needs a file's path after the @"),
    ],
)
def test_other_system_prompt_paths_are_one_line(shell, capsys, tmp_path, option, said):
    (tmp_path / "folder").mkdir()
    assert one_line_usage_error(shell, f"%%agent --model faux/faux-1 --system {option}\nhi", capsys) == said


# --- the agent's tools, in a real %%agent run --------------------------------------------------------------

_TOOL_CALLS = """
faux.set_responses([
    [
        faux.tool_call("read", {"path": "pipe"}, id="r"),
        faux.tool_call("grep", {"pattern": "x", "path": "pipe"}, id="g"),
        faux.tool_call("edit", {"path": "/dev/zero", "oldText": "a", "newText": "b"}, id="e"),
        faux.tool_call("write", {"path": "pipe", "content": "x"}, id="w"),
    ],
    "Those are not files I can use.",
])
"""


def test_the_agents_tools_on_a_fifo_or_a_device_answer_at_once_with_an_error_result(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    # Before: the first call waited on the FIFO until the stop button (and /dev/zero was read until memory ran out).
    outcome, shown = run_in_child_shell(
        tmp_path, "%%agent --model faux/faux-1 --tools read,grep,edit,write\nLook at pipe.", setup=_TOOL_CALLS
    )
    assert outcome["error"] is None, shown
    messages = outcome["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] + ["toolResult"] * 4 + ["assistant"]
    results = {m["toolCallId"]: (m["isError"], m["content"][0]["text"]) for m in messages if m["role"] == "toolResult"}
    assert results == {
        "r": (True, "Cannot read pipe: it is not a regular file (a FIFO). read reads regular files only."),
        "g": (True, "Cannot search pipe: it is not a regular file or a directory (a FIFO)."),
        "e": (True, "Cannot edit /dev/zero: it is not a regular file (a character device)."),
        "w": (True, "Cannot write pipe: it is not a regular file (a FIFO)."),
    }
    assert messages[-1]["content"][0]["text"] == "Those are not files I can use."
