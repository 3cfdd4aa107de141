"""A disk that is really full (``ENOSPC``), on real kernels: nothing recorded is lost, and the user reads one line.

The earlier case (``test_recording.py``) limits the file size (``EFBIG``). Here the notebook's folder is a 1 MiB
tmpfs (see :mod:`.full_disk`: where mounting is not permitted, each kernel's writes there fail with ``ENOSPC``
instead, and the test says so), filled by a filler file until the kernel answers ``ENOSPC``. Four things a kernel
writes there:

* the session file: the messages stay in memory, in order, the cell says so in one line, and they are written
  when there is room again (README, "Nothing recorded is lost");
* the full-output file of a large ``%bash`` output (``TMPDIR`` on the full disk);
* the notebook's pointer ``<session_dir>/<notebook>.current`` (``%agent_session open``);
* the copy a second kernel makes when another kernel holds the notebook's file.

What the user sees is what the front end shows: a cell's error is one line (IPython's ``_render_traceback_``),
never a Python traceback. (Two of these found bugs: an ``%%agent`` cell's anchor entry bypassed the writer's
backlog, and a full-output file that could not be written took the command's output with it.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_notebook.ai.types import UserMessage
from pi_notebook.coding_agent.session import SessionFile
from tests.reliability.test_real_kernel import SETUP, Kernel, Reply, _texts
from tests.reliability.test_reattach_restart import restart

NO_SPACE = "No space left on device"


def said(reply: Reply) -> list[str]:
    """Every line the cell showed (its text and its errors as the front end renders them)."""
    for error in reply.errors:
        assert len(error["traceback"]) == 1 and "Traceback" not in error["traceback"][0], error["traceback"]
    shown = [*reply.text, *(line for error in reply.errors for line in error["traceback"])]
    return [line for part in shown for line in part.splitlines() if line.strip()]


def one_line_about_the_disk(reply: Reply) -> str:
    (line,) = [line for line in said(reply) if NO_SPACE in line]
    return line


def stored(path) -> list[dict]:
    """The messages of the file's current branch, as a new kernel would read them (every line whole)."""
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])  # no torn or half-written line
    return [m.to_pi_json() for m in SessionFile.open(path, readonly=True).build_session_context().messages]


# --- the session file ----------------------------------------------------------------------------------------

# The file's last page is filled up to 16 bytes (with a ``custom`` entry, which is no message), as a file often
# ends: on the full disk every append then needs a page that is not there.
LAST_PAGE_FULL = """
import resource
file = pi_notebook.current_session().file
page, size = resource.getpagesize(), file.path.stat().st_size
file.append_custom_entry("test.padding", "")
overhead = file.path.stat().st_size - size
file.append_custom_entry("test.padding", "x" * ((-file.path.stat().st_size % page - overhead - 16) % page))
assert -file.path.stat().st_size % page == 16
"""


@pytest.mark.parametrize(
    "cell_id",
    [
        pytest.param(None, id="without a cell id"),
        pytest.param("c2", id="from a notebook cell"),  # its anchor entry goes through the writer's backlog too
    ],
)
def test_a_full_disk_keeps_the_messages_in_memory_says_so_in_one_line_and_writes_them_later(cell_id, full_disk):
    kernel = full_disk.kernel()
    kernel.run(SETUP)
    kernel.run("%bash echo before")
    kernel.run(LAST_PAGE_FULL)
    full_disk.fill(kernel)  # (what it is: full_disk.how)
    reply_text = " ".join(f"word{i}" for i in range(1500))
    prompt = "Tell me more. " + " ".join(f"p{i}" for i in range(1000))
    kernel.run(f"faux.set_responses([{reply_text!r}])")
    reply = kernel.watch(kernel.send(f"%%agent --model faux/faux-1 --tools none\n{prompt}", cell_id=cell_id))
    line = one_line_about_the_disk(reply)
    assert line.startswith("pi_notebook: could not write work.jsonl (No space left on device); 2 messages kept")
    assert "word0 word1 word2" in reply.output  # the reply is shown all the same
    reply = kernel.watch(kernel.send("%bash echo while-full", cell_id=cell_id and "c3"))
    assert one_line_about_the_disk(reply).startswith("pi_notebook: could not write work.jsonl (No space left")
    assert "while-full" in reply.output
    in_memory = kernel.messages()
    assert [m["role"] for m in in_memory] == ["bashExecution", "user", "assistant", "bashExecution"]

    full_disk.free(kernel)
    assert NO_SPACE not in kernel.run("%bash echo after")
    path = full_disk.folder / ".pi_sessions" / "work.jsonl"
    assert stored(path) == kernel.messages() == [*in_memory, kernel.messages()[-1]]
    assert _texts(stored(path)) == ["before\n", prompt, reply_text, "while-full\n", "after\n"]
    assert not list(path.parent.glob("*.pending"))


# --- the full-output file of %bash ----------------------------------------------------------------------------

LINES = 100_000  # `seq` prints 588,895 bytes: far past the 50 KB after which the full output goes to a file


@pytest.mark.parametrize("where", ["%bash", "the bash tool"])
def test_a_full_temp_folder_costs_only_the_full_output_file(where, full_disk, monkeypatch):
    tmp = full_disk.folder / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # where the kernel's shell executor writes full outputs
    work = full_disk.folder.parent / "work"  # the notebook and its session file: on a disk with room
    work.mkdir()
    kernel = Kernel(work)
    full_disk.kernels.append(kernel)  # shut down before the full disk is unmounted
    kernel.run(SETUP)
    full_disk.fill(kernel)
    if where == "%bash":  # the cell says it in one line, as the other notes: "pi_notebook: ..."
        reply = kernel.watch(kernel.send(f"%bash seq 1 {LINES}", cell_id="c1"))
        (message,) = kernel.messages()
        output, full, told = message["output"], message.get("fullOutputPath"), said(reply)
        assert message["exitCode"] == 0 and not message["cancelled"] and message["truncated"]
    else:  # the tool's result says it in one line, where it names the full output file otherwise
        kernel.run(f'faux.set_responses([[faux.tool_call("bash", {{"command": "seq 1 {LINES}"}})], "Counted."])')
        reply = kernel.watch(kernel.send("%%agent --model faux/faux-1 --tools bash\nCount.", cell_id="c1"))
        result = next(m for m in kernel.messages() if m["role"] == "toolResult")
        assert result["isError"] is False and "Counted." in reply.output
        (output,) = _texts([result])
        full, told = (result.get("details") or {}).get("fullOutputPath"), output.splitlines()
    assert not reply.errors
    assert f"\n{LINES}\n" in output + "\n"  # the tail is recorded as always
    assert len({line for line in told if NO_SPACE in line}) == 1, told[-5:]
    if full is not None:  # a file it names holds all of the output, or it names none
        assert Path(full).read_bytes().count(b"\n") == LINES


# --- the notebook's pointer -----------------------------------------------------------------------------------


def test_a_pointer_that_cannot_be_written_keeps_the_switch_and_says_where_a_restart_goes(full_disk, tmp_path):
    other = tmp_path / "elsewhere" / "kept.jsonl"  # not on the full disk
    with SessionFile.create(other, cwd=str(tmp_path)) as file:
        file.append_message(UserMessage(content="kept elsewhere", timestamp=1))
    kernel = full_disk.kernel()
    kernel.run(SETUP)
    kernel.run("%bash echo in-the-default", cell_id="c1")
    default = full_disk.folder / ".pi_sessions" / "work.jsonl"
    full_disk.fill(kernel)
    reply = kernel.watch(kernel.send(f"%agent_session open {other}", cell_id="c2"))
    assert not reply.errors
    line = one_line_about_the_disk(reply)
    assert line.startswith("pi_notebook: could not write work.current (No space left on device)")
    assert f"after a restart this notebook reopens {default}" in line and f"%agent_session open {other}" in line
    assert f"session file: {other}" in reply.output  # switched all the same
    assert "after-open" in kernel.run("%bash echo after-open", cell_id="c3")  # and recording there works
    assert sorted(p.name for p in default.parent.iterdir()) == ["work.jsonl"]  # no half-written pointer left

    restart(kernel)  # as the line said: back to the default session, and nothing of either is lost
    full_disk.fill(kernel)
    kernel.run(SETUP)
    assert kernel.run("%agent_session").splitlines()[0] == f"session file: {default}"
    assert _texts(kernel.messages()) == ["in-the-default\n"]
    assert _texts(stored(other)) == ["kept elsewhere", "after-open\n"]

    full_disk.free(kernel)  # with room again, the pointer is written and a restart comes back to it
    assert NO_SPACE not in kernel.run(f"%agent_session open {other}", cell_id="c4")
    restart(kernel)
    kernel.run(SETUP)
    assert kernel.run("%agent_session").splitlines()[0] == f"session file: {other}"


# --- the copy a second kernel makes -----------------------------------------------------------------------------


def test_a_second_kernel_with_no_room_for_its_copy_continues_the_history_elsewhere_and_it_comes_back(full_disk):
    first = full_disk.kernel()
    first.run(SETUP)
    first.run("%bash echo in-the-first", cell_id="c1")  # the first kernel holds the notebook's file
    first.run(LAST_PAGE_FULL)
    default = full_disk.folder / ".pi_sessions" / "work.jsonl"
    full_disk.fill(first)

    second = full_disk.kernel()
    full_disk.fill(second)
    reply = second.watch(second.send(SETUP))
    line = one_line_about_the_disk(reply)
    assert not reply.errors and "in use by another kernel" in line, said(reply)
    copy = full_disk.folder.parent / "home" / ".pi_notebook" / "sessions" / f"work-{second.pid}.jsonl"
    assert line.endswith(f"this kernel continues its history in {copy}")
    assert _texts(second.messages()) == ["in-the-first\n"]  # the notebook's history, continued
    assert "in-the-second" in second.run("%bash echo in-the-second", cell_id="c2")
    assert sorted(p.name for p in default.parent.iterdir()) == ["work.jsonl"]  # no empty copy left beside it
    second.shutdown()

    # A third kernel (the first still holds the file) takes that copy up again, full disk or not ...
    third = full_disk.kernel()
    full_disk.fill(third)
    loaded = third.run(SETUP)
    assert f"this kernel continues its history in {copy.name}" in loaded, loaded
    assert _texts(third.messages()) == ["in-the-first\n", "in-the-second\n"]
    third.shutdown()

    # ... and once no kernel holds it, the first kernel's restart merges it back into the notebook's file: when
    # there is room (a restart on the full disk opens the notebook's file and says the copy waits).
    first.shutdown()
    waiting = full_disk.kernel()
    full_disk.fill(waiting)
    loaded = waiting.run(SETUP)
    assert loaded.strip() == (
        f"pi_notebook: could not merge {copy.name} yet (No space left on device); it is merged at the next restart"
    )
    assert _texts(waiting.messages()) == ["in-the-first\n"] and copy.exists()
    waiting.shutdown()
    full_disk.free()
    last = full_disk.kernel()
    loaded = last.run(SETUP)
    assert "merged what another kernel recorded" in loaded and copy.name in loaded, loaded
    assert _texts(last.messages()) == ["in-the-first\n"]  # the first kernel's branch stays the current one
    everything = SessionFile.open(default, readonly=True).entries
    commands = [getattr(e.message, "command", None) for e in everything if e.type == "message"]
    assert commands.count("echo in-the-second") == 1 and commands.count("echo in-the-first") == 1
    assert not copy.exists() and copy.with_name(copy.name + ".merged").exists()


def test_an_empty_copy_a_full_disk_left_behind_does_not_stop_the_next_kernel(full_disk):
    # What a kernel that found no room for its copy used to leave (the header could not be written): a later
    # second kernel took it up as its copy, and %load_ext failed with a traceback ("no valid session header").
    first = full_disk.kernel()
    first.run(SETUP)
    first.run("%bash echo in-the-first", cell_id="c1")
    (full_disk.folder / ".pi_sessions" / "work-99999.jsonl").write_bytes(b"")
    second = full_disk.kernel()
    reply = second.watch(second.send(SETUP))
    assert not reply.errors, said(reply)
    assert said(reply) == [
        f"pi_notebook: {full_disk.folder / '.pi_sessions' / 'work.jsonl'} is in use by another kernel; this kernel "
        f"continues its history in work-{second.pid}.jsonl"
    ]
    assert _texts(second.messages()) == ["in-the-first\n"]
