"""The extension where ``fcntl`` and process groups do not exist (Windows), checked on Linux.

We have no Windows machine: ``tests/windows_sim.py`` hides the POSIX-only modules and functions before anything is
imported, puts thin stand-ins for Windows' own (``msvcrt.locking``, ``CTRL_BREAK_EVENT``, ``taskkill``) in their
place, and runs the notebook layer in a real IPython shell: ``%load_ext``, ``%bash`` (its output, its timeout, the
stop button), ``%%agent`` with the faux model calling the bash and python tools, the session file written, locked
against a second writer (in the same process and another one), closed and reopened.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_notebook.coding_agent import session_lock
from pi_notebook.coding_agent.tools import process_tree
from pi_notebook.coding_agent.tools.shell import _windows_bash

SIM = Path(__file__).with_name("windows_sim.py")

FAKE_TASKKILL = """\
#!{python}
# Stand-in for Windows' taskkill /T /F /PID <pid>: logs its arguments, then kills the tree under <pid>.
import os, signal, sys
with open(os.environ["PI_TASKKILL_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
root = int(sys.argv[sys.argv.index("/PID") + 1])
children = {{}}
for name in os.listdir("/proc"):
    if name.isdigit():
        try:
            stat = open(f"/proc/{{name}}/stat", "rb").read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(name))
tree, todo = [], [root]
while todo:
    pid = todo.pop()
    tree.append(pid)
    todo += children.get(pid, [])
for pid in tree:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
"""


@pytest.fixture(scope="module")
def windows_run(tmp_path_factory):
    """Run the scenario once; its report and the taskkill log."""
    tmp = tmp_path_factory.mktemp("windows")
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    taskkill = bin_dir / "taskkill"
    taskkill.write_text(FAKE_TASKKILL.format(python=sys.executable))
    taskkill.chmod(0o755)
    work = tmp / "notebook"
    work.mkdir()
    log = tmp / "taskkill.log"
    report = tmp / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "JPY_SESSION_NAME"}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PI_TASKKILL_LOG=str(log),
        IPYTHONDIR=str(tmp / "ipython"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    done = subprocess.run(
        [sys.executable, str(SIM), "scenario", str(report)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-6000:]
    return json.loads(report.read_text()), (log.read_text() if log.exists() else "")


def test_posix_process_control_is_really_gone(windows_run):
    report, _ = windows_run
    assert report["fcntl_import_fails"] and not report["killpg"]
    assert report["process_groups"] is False  # the Windows way was taken...
    assert report["lock_module"] == "msvcrt"  # ...for the lock too
    assert report["posix_modules_loaded"] == []  # nothing imported them after all


def test_bash_runs_and_is_recorded(windows_run):
    report, _ = windows_run
    assert report["bash_error"] is None
    assert report["bash"] == ["hello from a shell without process groups\n", 0, False]


def test_a_timeout_ends_the_tree_with_taskkill_after_ctrl_break(windows_run):
    report, log = windows_run
    output, exit_code, cancelled, seconds = report["timeout"]
    assert (output, exit_code, cancelled) == ("waiting\n", None, True)
    assert seconds < 10
    [line] = [line for line in log.splitlines() if line]  # once, for this command alone
    assert line.startswith("/T /F /PID ")


def test_the_stop_button_stops_bash_with_ctrl_break(windows_run):
    report, _ = windows_run
    output, cancelled, seconds = report["interrupt"]
    assert (output, cancelled) == ("started\n", True)
    assert seconds < 5


def test_agent_runs_its_tools(windows_run):
    report, _ = windows_run
    assert report["agent_error"] is None
    bash, python = report["tool_results"]
    assert bash == [False, "from the bash tool\n"]
    assert python[0] is True and "0.5" in python[1]  # stopped by its time limit, without SIGALRM
    assert report["last_reply"] == "Both ran."
    assert report["file_roles"] == report["roles"]


def test_the_session_file_is_locked_against_a_second_writer_but_not_a_reader(windows_run):
    report, _ = windows_run
    assert report["second_writer_here"] == "locked"
    assert report["second_writer_process"] == "locked"
    assert report["reader_messages"] > 0
    # The lock sits past the data: Windows' mandatory locks would otherwise make readers fail.
    assert report["locked_ranges"] and all(start > report["file_size"] for start, _ in report["locked_ranges"])
    assert report["writer_after_close"] > 0  # closing released it
    assert report["same_after_reopen"] and report["bash_after_reopen_error"] is None
    assert report["bash_after_reopen"] == "again\n"


def test_posix_keeps_its_own_way():
    """Here (Linux) nothing changed: process groups, flock."""
    assert process_tree.PROCESS_GROUPS is True
    assert process_tree.popen_options() == {"start_new_session": True}
    assert session_lock.fcntl is not None and session_lock._msvcrt is None


def test_bash_on_windows_is_found_as_pi_finds_it(tmp_path):
    git_bash = r"C:\Program Files\Git\bin\bash.exe"
    env = {"ProgramFiles": r"C:\Program Files", "ProgramFiles(x86)": r"C:\Program Files (x86)"}
    assert _windows_bash(env, exists=lambda p: p == git_bash, which=lambda name: None) == git_bash
    x86 = r"C:\Program Files (x86)\Git\bin\bash.exe"
    assert _windows_bash(env, exists=lambda p: p == x86, which=lambda name: None) == x86
    on_path = r"C:\msys64\usr\bin\bash.exe"
    assert _windows_bash(env, exists=lambda p: False, which=lambda name: on_path) == on_path
    with pytest.raises(FileNotFoundError) as missing:
        _windows_bash(env, exists=lambda p: False, which=lambda name: None)
    assert str(missing.value) == textwrap.dedent(
        r"""        No bash shell found. Options:
          1. Install Git for Windows: https://git-scm.com/download/win
          2. Add your bash to PATH (Cygwin, MSYS2, etc.)

        Searched Git Bash in:
          C:\Program Files\Git\bin\bash.exe
          C:\Program Files (x86)\Git\bin\bash.exe"""
    )


def test_the_shell_and_session_tests_pass_the_windows_way(tmp_path):
    """The executor's own tests (output, huge output in bounded memory, background children, timeouts, aborts) and
    the session file's, run with the POSIX functions hidden: the reading thread, Ctrl+Break and taskkill, msvcrt."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "taskkill").write_text(FAKE_TASKKILL.format(python=sys.executable))
    (bin_dir / "taskkill").chmod(0o755)
    tests = Path(__file__).parent
    run = "import sys; sys.path.insert(0, sys.argv[1]); import windows_sim; windows_sim.hide_posix(); import pytest; "
    run += "sys.exit(pytest.main(sys.argv[2:]))"
    files = ["coding_agent/tools/test_shell.py", "coding_agent/tools/test_bash_tool.py", "coding_agent/test_session.py"]
    # test_second_writer_is_refused's second process is a plain Linux one, with flock, which the stand-in msvcrt's
    # locks do not see: the scenario above checks a second process that has the stand-in.
    options = ["-k", "not test_second_writer_is_refused", "-q", "-p", "no:cacheprovider", "-p", "no:faulthandler"]
    env = dict(os.environ, PI_TASKKILL_LOG=str(tmp_path / "taskkill.log"), PYTHONDONTWRITEBYTECODE="1")
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        [sys.executable, "-c", run, str(tests), *(str(tests / f) for f in files), *options, f"--basetemp={tmp_path}/t"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
