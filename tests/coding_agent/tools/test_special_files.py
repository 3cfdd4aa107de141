"""The file tools on what is not a plain file: a FIFO, a socket, a device, a directory, ``/proc``, a huge file (#21,
failure 4).

Every tool answers each in one clear line (an error result for the model), never waits and never reads without a
bound. A call that could hang or read ``/dev/zero`` forever runs in a child process, with a timeout and a memory
limit, so a regression fails the test instead of hanging the suite or filling the machine's memory.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import sys
import textwrap
import tracemalloc

import pytest

from pi_notebook.coding_agent.tools import TOOL_FACTORIES

from .helpers import call, error_of, run_bounded, text_of

MB = 1 << 20
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_CHILD = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {root!r})
    from tests.coding_agent.tools.helpers import call, text_of
    from pi_notebook.coding_agent.tools import TOOL_FACTORIES
    if {python!r}:
        import pi_notebook.coding_agent.tools.find as find, pi_notebook.coding_agent.tools.grep as grep
        grep.find_program = find.find_program = lambda *names: None
    tool = TOOL_FACTORIES[{tool!r}]({cwd!r})
    try:
        outcome = ["ok", text_of(call(tool, **json.loads({params!r})))]
    except Exception as e:
        outcome = ["error", str(e)]
    print(json.dumps(outcome))
    """
)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # an unbounded read fails here, not the machine


def in_child(tool: str, cwd, *, python: bool = False, timeout: float = 60, **params) -> tuple[str, str]:
    """Call ``tool`` (with the pure-Python grep if ``python``) in a child process: ("ok"|"error", its text).
    A call still running after ``timeout`` seconds is killed and fails the test."""
    code = _CHILD.format(root=ROOT, python=python, tool=tool, cwd=str(cwd), params=json.dumps(params))
    done = run_bounded([sys.executable, "-c", code], timeout, f"{tool} {params}", preexec_fn=_limit_memory)
    assert done.returncode == 0, done.stderr[-2000:]
    kind, text = json.loads(done.stdout.strip().splitlines()[-1])
    return kind, text


@pytest.fixture
def odd(tmp_path):
    """A folder with a FIFO, a listening Unix socket and a text file; the socket is closed at the end."""
    os.mkfifo(tmp_path / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    server.listen()
    (tmp_path / "notes.txt").write_text("needle here\n")
    yield tmp_path
    server.close()


# --- read --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("fifo", "a FIFO"),
        ("sock", "a socket"),
        ("/dev/zero", "a character device"),
        ("/dev/null", "a character device"),
    ],
)
def test_read_refuses_what_is_not_a_regular_file_at_once(odd, path, kind):
    # Before: a FIFO waited for a writer until the stop button (and its thread forever).
    assert in_child("read", odd, path=path) == (
        "error",
        f"Cannot read {path}: it is not a regular file ({kind}). read reads regular files only.",
    )


def test_read_of_a_directory_keeps_pis_error(tmp_path):
    (tmp_path / "dir").mkdir()
    assert error_of(TOOL_FACTORIES["read"](tmp_path), path="dir") == "EISDIR: illegal operation on a directory, read"


def test_read_of_a_proc_file_reads_what_it_holds(tmp_path):
    # /proc files say they hold 0 bytes: they are regular files and are read as such.
    text = text_of(call(TOOL_FACTORIES["read"](tmp_path), path="/proc/self/status"))
    assert text.startswith("Name:\t") and "\nPid:\t" in text


def test_a_file_holding_more_than_it_says_is_read_up_to_a_bound_and_says_so(tmp_path, monkeypatch):
    # /proc/self/maps says 0 bytes and holds some KB; with the bound lowered to 1 KB (64 MB really) it is cut.
    monkeypatch.setattr("pi_notebook.coding_agent.tools.files.UNSIZED_LIMIT", 1024)
    text = text_of(call(TOOL_FACTORIES["read"](tmp_path), path="/proc/self/maps"))
    assert text.endswith(
        "[read stopped after 1.0KB: /proc/self/maps said it held 0B but has more (a /proc or /sys file, or one "
        "still being written). Use bash for the rest.]"
    )
    assert len(text.encode()) < 2048 + 300


def test_an_image_larger_than_20mb_is_refused_without_reading_it(tmp_path):
    with open(tmp_path / "huge.png", "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
        file.truncate(64 * MB)  # sparse: it costs nothing on disk
    tracemalloc.start()
    try:
        message = error_of(TOOL_FACTORIES["read"](tmp_path), path="huge.png")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert message == (
        "Cannot read huge.png: it is an image (image/png) larger than 20.0MB, the most read sends (providers "
        "refuse larger ones). Make a smaller copy with bash first."
    )
    assert peak < 8 * MB, f"peak {peak / MB:.0f} MB"  # before: all of it, then its base64


# --- edit, write -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind"), [("fifo", "a FIFO"), ("sock", "a socket"), ("/dev/zero", "a character device")]
)
def test_edit_refuses_what_is_not_a_regular_file_at_once(odd, path, kind):
    # Before: a FIFO waited for a writer; /dev/zero was read until the memory ran out.
    assert in_child("edit", odd, path=path, oldText="a", newText="b") == (
        "error",
        f"Cannot edit {path}: it is not a regular file ({kind}).",
    )


def test_edit_refuses_a_file_larger_than_128mb_before_reading_it(tmp_path):
    with open(tmp_path / "big.sql", "wb") as file:
        file.write(b"a = 1\n")
        file.truncate(129 * MB)
    tracemalloc.start()
    try:
        message = error_of(TOOL_FACTORIES["edit"](tmp_path), path="big.sql", oldText="a = 1", newText="a = 2")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert message == (
        "Cannot edit big.sql: it holds 129.0MB, more than the 128.0MB edit loads. Use bash (e.g. sed -i) for a "
        "file this large."
    )
    assert peak < 8 * MB and (tmp_path / "big.sql").read_bytes()[:6] == b"a = 1\n"


@pytest.mark.parametrize(
    ("path", "kind"), [("fifo", "a FIFO"), ("sock", "a socket"), ("/dev/null", "a character device")]
)
def test_write_refuses_what_is_not_a_regular_file_at_once(odd, path, kind):
    # Before: writing a FIFO waited for a reader.
    assert in_child("write", odd, path=path, content="x") == (
        "error",
        f"Cannot write {path}: it is not a regular file ({kind}).",
    )
    assert os.path.exists(odd / "fifo") and not os.path.isfile(odd / "fifo")


def test_write_and_edit_still_work_on_regular_files_and_report_a_directory_as_pi_does(tmp_path):
    write, edit = TOOL_FACTORIES["write"](tmp_path), TOOL_FACTORIES["edit"](tmp_path)
    assert text_of(call(write, path="a/b.txt", content="one\n")) == "Successfully wrote 4 bytes to a/b.txt"
    call(edit, path="a/b.txt", oldText="one", newText="two")
    assert (tmp_path / "a/b.txt").read_text() == "two\n"
    assert error_of(write, path="a", content="x") == f"EISDIR: illegal operation on a directory, open '{tmp_path}/a'"
    assert error_of(edit, path="a", oldText="x", newText="y") == "EISDIR: illegal operation on a directory, read"


# --- grep, find, ls ----------------------------------------------------------------------------------------

BACKENDS = [True, pytest.param(False, marks=pytest.mark.skipif(not shutil.which("rg"), reason="no rg"))]


@pytest.mark.parametrize("python", BACKENDS, ids=lambda p: "python" if p else "rg")
@pytest.mark.parametrize(("path", "kind"), [("fifo", "a FIFO"), ("/dev/zero", "a character device")])
def test_grep_refuses_a_fifo_or_device_named_as_its_path(odd, python, path, kind):
    # Before: rg and the fallback both waited on the FIFO, and read /dev/zero without end.
    assert in_child("grep", odd, python=python, pattern="needle", path=path) == (
        "error",
        f"Cannot search {path}: it is not a regular file or a directory ({kind}).",
    )


@pytest.mark.parametrize("python", BACKENDS, ids=lambda p: "python" if p else "rg")
def test_grep_skips_a_fifo_socket_and_device_link_in_a_folder(odd, python):
    os.symlink("/dev/zero", odd / "zero")  # not followed, as rg does not follow links
    # Before: the fallback opened the FIFO and waited for a writer.
    assert in_child("grep", odd, python=python, pattern="needle") == ("ok", "notes.txt:1: needle here")


@pytest.mark.parametrize("python", BACKENDS, ids=lambda p: "python" if p else "rg")
def test_grep_is_not_stopped_by_a_fifo_ignore_file_where_it_starts(odd, python):
    os.mkfifo(odd / ".gitignore")  # rg opens the ignore files of where it starts, and waited on this one
    os.mkfifo(odd / ".ignore")
    assert in_child("grep", odd, python=python, pattern="needle") == ("ok", "notes.txt:1: needle here")


@pytest.fixture(params=BACKENDS, ids=lambda p: "python" if p else "rg")
def grep(request, monkeypatch, tmp_path):
    if request.param:
        monkeypatch.setattr("pi_notebook.coding_agent.tools.grep.find_program", lambda *names: None)
    return TOOL_FACTORIES["grep"](tmp_path)


def test_grep_shows_the_lines_of_a_large_file_without_loading_it(grep, tmp_path):
    with open(tmp_path / "big.log", "wb") as file:
        file.write(b"first\nneedle " + b"x" * 3000 + b"\r\nafter\nlast\n" + b"y" * (64 * MB) + b"\nneedle at the end\n")
    tracemalloc.start()
    try:
        text = text_of(call(grep, pattern="needle", context=1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text.split("\n") == [
        "big.log-1- first",
        "big.log:2: needle " + "x" * 493 + "... [truncated]",
        "big.log-3- after",
        "big.log-5- " + "y" * 500 + "... [truncated]",
        "big.log:6: needle at the end",
        "big.log-7- ",
        "",
        "[Some lines truncated to 500 chars. Use read tool to see full lines]",
    ]
    assert peak < 16 * MB, f"peak {peak / MB:.0f} MB"  # before: the whole file, decoded and split


def test_grep_reads_a_crlf_split_between_two_reads_as_one_line_break(grep, tmp_path):
    (tmp_path / "f.txt").write_bytes(b"x" * 65535 + b"\r\nneedle\r\n")  # the CR ends the first 64 KB read
    assert text_of(call(grep, pattern="needle")) == "f.txt:2: needle"


@pytest.mark.parametrize("python", BACKENDS, ids=lambda p: "python" if p else "fd")
def test_find_and_ls_list_a_fifo_without_opening_it(odd, python):
    (odd / "sub").mkdir()
    os.mkfifo(odd / "sub" / ".gitignore")  # fd reads every ignore file it meets: a FIFO one made it wait
    names = ["fifo", "notes.txt", "sock", "sub/", "sub/.gitignore"]
    kind, text = in_child("find", odd, python=python, pattern="*")
    assert (kind, sorted(text.splitlines())) == ("ok", names)
    assert text_of(call(TOOL_FACTORIES["ls"](odd))).splitlines() == names[:4]
    assert error_of(TOOL_FACTORIES["ls"](odd), path="fifo") == f"Not a directory: {odd}/fifo"
