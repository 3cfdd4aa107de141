"""Two kernels on one notebook: neither fails to start, and no kernel's history goes missing (#11 item 5)."""

import json
import subprocess
import sys
import textwrap
import time

import pytest

import pi_notebook

KERNEL = textwrap.dedent("""
    import json, sys, time
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.user_ns["__session__"] = sys.argv[1]
    start_at = float(sys.argv[2])
    while time.time() < start_at:  # both kernels load the extension at the same moment
        pass
    result = ip.run_line_magic("load_ext", "pi_notebook")
    import os, pathlib
    import pi_notebook
    session = pi_notebook.current_session()
    if start_at:  # stay alive (holding the file) until the other kernel has loaded too, however slow it is
        here = pathlib.Path(sys.argv[1]).parent / "loaded"
        here.mkdir(exist_ok=True)
        (here / str(os.getpid())).touch()
        deadline = time.time() + 90
        while len(list(here.iterdir())) < 2 and time.time() < deadline:
            time.sleep(0.05)
    for cell in sys.argv[3:]:
        ip.run_cell(cell)
    commands = [m.command for m in session.messages if m.role == "bashExecution"]
    print(json.dumps({"path": str(session.file.path), "note": session.note, "commands": commands}))
""")


def kernel(notebook, *cells, start_at=0.0):
    return subprocess.Popen(
        [sys.executable, "-c", KERNEL, str(notebook), str(start_at), *cells],
        cwd=notebook.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def report(process):
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0 and "Traceback" not in err, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("attempt", range(3))
def test_two_kernels_starting_at_the_same_moment_both_start(tmp_path, attempt):
    notebook = tmp_path / "analysis.ipynb"
    start_at = time.time() + 3  # after both interpreters have imported IPython
    first, second = (kernel(notebook, "%bash echo hi", start_at=start_at) for _ in range(2))
    reports = [report(first), report(second)]
    paths = sorted(r["path"] for r in reports)
    default = str(tmp_path / ".pi_sessions" / "analysis.jsonl")
    assert default in paths and len(set(paths)) == 2  # one holds the notebook's file, the other a copy beside it
    noted = [r["note"] for r in reports if r["path"] != default]
    assert noted and "in use by another kernel" in noted[0]
    assert all(r["commands"][-1] == "echo hi" for r in reports)


def test_a_restarted_second_kernel_gets_its_history_back_and_the_first_merges_it(shell):
    shell.cell("%bash echo from-the-first-kernel")
    default = shell.session.file.path
    second = report(kernel(shell.notebook, "%bash echo from-the-second-kernel"))
    assert second["path"] != str(default)
    assert second["commands"] == ["echo from-the-first-kernel", "echo from-the-second-kernel"]
    shell.cell("%bash echo the-first-goes-on")
    # The second kernel restarts while the first still holds the file: its own history is back, and what the
    # first recorded meanwhile is there too, on a branch beside it.
    again = report(kernel(shell.notebook))
    assert again["path"] == second["path"]
    assert again["commands"] == ["echo from-the-first-kernel", "echo from-the-second-kernel"]
    # The first kernel restarts when the second is gone: the second's branch is merged into the notebook's file.
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    session = pi_notebook.current_session()
    assert session.file.path == default and "merged what another kernel recorded" in session.note
    assert [m.command for m in session.messages if m.role == "bashExecution"] == [
        "echo from-the-first-kernel", "echo the-first-goes-on"
    ]  # fmt: skip
    commands = [e.message.command for e in session.file.entries if getattr(e, "role", None) == "bashExecution"]
    assert "echo from-the-second-kernel" in commands
    assert not list(default.parent.glob("analysis-*.jsonl"))  # the copy is renamed .merged: not merged twice
    # and after one more restart nothing is merged again, and the current branch is still the first kernel's
    shell.ip.run_line_magic("unload_ext", "pi_notebook")
    shell.ip.run_line_magic("load_ext", "pi_notebook")
    session = pi_notebook.current_session()
    assert not (session.note or "").startswith("merged")
    assert [m.command for m in session.messages if m.role == "bashExecution"][-1] == "echo the-first-goes-on"
