"""What a real Jupyter kernel keeps when it is killed or interrupted (issue #11, the cases that already hold).

Each test starts a real ``ipykernel`` with ``jupyter_client`` in its own folder, loads the extension the way a
notebook does (``%load_ext pi_notebook``, ``JPY_SESSION_NAME`` naming the notebook) and checks what a user
notices: every message whose entry reached the file is back after ``kill -9``, a torn last line costs only
itself, an interrupted ``%bash`` leaves no process of its group behind (even one ignoring SIGINT and SIGTERM)
and is recorded as cancelled, and an interrupted ``%%agent`` keeps its partial reply as ``aborted``, with one
line saying so. Wall-clock bounds are loose (a busy 2-core machine); kernels are always shut down.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel

from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_entries import SessionWarning

SETUP = (
    "%load_ext pi_notebook\nimport json, pi_notebook\nfrom pi_notebook.ai import faux\n"
    "from pi_notebook.ai.types import UserMessage\npi_notebook.current_session().config.cells = 'off'"
)  # cells=off: these kernels' cells script the model; the recorded cells have their own tests (test_cells_real_kernel)
DUMP = "print(json.dumps([m.to_pi_json() for m in pi_notebook.current_session().messages]))"


# --- a kernel driven as a front end drives it ------------------------------------------------------------


@dataclass
class Reply:
    """What one execute request produced on iopub."""

    text: list[str] = field(default_factory=list)  # stream text and text/plain of displays
    errors: list[dict[str, Any]] = field(default_factory=list)  # error contents: ename, evalue, traceback
    comm: list[str] = field(default_factory=list)  # comm_msg payloads (live widget updates), as JSON
    idle: bool = False

    @property
    def output(self) -> str:
        return "".join(self.text)


class Kernel:
    def __init__(self, folder: Path):
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
        env["JPY_SESSION_NAME"] = str(folder / "work.ipynb")  # how Jupyter tells a kernel its notebook
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(folder), env=env, startup_timeout=120)
        self.closed = False

    @property
    def pid(self) -> int:
        return self.km.provisioner.pid

    def send(self, code: str, cell_id: str | None = None) -> str:
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}  # fmt: skip
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def watch(
        self, msg_id: str, reply: Reply | None = None, *, until: Callable[[Reply], bool] | None = None, timeout=120
    ) -> Reply:
        """Collect iopub messages of ``msg_id`` into ``reply`` until the kernel is idle (or ``until(reply)``)."""
        reply = reply or Reply()
        deadline = time.monotonic() + timeout
        while not reply.idle and not (until and until(reply)):
            try:
                message = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no idle within {timeout} s; so far: {reply.output[-500:]!r}") from None
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, body = message["msg_type"], message["content"]
            if kind == "stream":
                reply.text.append(body["text"])
            elif kind in ("display_data", "execute_result", "update_display_data"):
                reply.text.append(body["data"].get("text/plain", ""))
            elif kind == "error":
                reply.errors.append(body)
            elif kind == "comm_msg":
                reply.comm.append(json.dumps(body.get("data", {})))
            elif kind == "status" and body["execution_state"] == "idle":
                reply.idle = True
        return reply

    def run(self, code: str, cell_id: str | None = None, timeout: float = 120) -> str:
        reply = self.watch(self.send(code, cell_id), timeout=timeout)
        if reply.errors:
            error = reply.errors[0]
            raise AssertionError(f"{code!r} failed: {error['ename']}: {error['evalue']}")
        return reply.output

    def messages(self) -> list[dict[str, Any]]:
        """The session's messages (Pi JSON) as the kernel holds them."""
        return json.loads(self.run(DUMP).strip().splitlines()[-1])

    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)


@pytest.fixture
def kernels(tmp_path) -> Iterator[Callable[[], Kernel]]:
    """``start()`` a kernel in ``tmp_path``; every kernel started is shut down at the end, dead or alive."""
    started: list[Kernel] = []

    def start() -> Kernel:
        kernel = Kernel(tmp_path)
        started.append(kernel)
        return kernel

    try:
        yield start
    finally:
        for kernel in started:
            try:
                kernel.shutdown()
            except Exception as e:  # a kernel killed on purpose may already be gone
                warnings.warn(f"shutting down a test kernel: {e}", stacklevel=1)


# --- /proc: is anything of a process group still running? ----------------------------------------------------


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of a process, or ``None`` once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    state, ppid, pgrp = raw[raw.rfind(b")") + 2 :].split()[:3]
    return state.decode(), int(ppid), int(pgrp)


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def _running_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _descendants(root: int) -> list[int]:
    """Running (not zombie) processes below ``root``."""
    parents = {pid: stat for pid in _running_pids() if (stat := _stat(pid)) is not None}
    found, frontier = [], {root}
    while frontier:
        children = {pid for pid, (state, ppid, _) in parents.items() if ppid in frontier and state not in "ZX"}
        found += sorted(children)
        frontier = children
    return found


def _alive_in_group(pgid: int) -> list[int]:
    """Members of the process group that still run (zombies waiting for a reaper do not count)."""
    return [pid for pid in _running_pids() if (s := _stat(pid)) and s[2] == pgid and s[0] not in "ZX"]


def _wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"{what} within {timeout} s")


def _sleeps_of(kernel: Kernel, seconds: str) -> list[int]:
    return [pid for pid in _descendants(kernel.pid) if _cmdline(pid) == ["sleep", seconds]]


def _one_line(error: dict[str, Any]) -> str:
    """What the front end shows for an error: its traceback lines (IPython renders them as is)."""
    (line,) = error["traceback"]  # a single line, no Python traceback
    return line


# --- kill -9 while a cell records: nothing written is lost, a torn line costs only itself ---------------------


RECORD_LOOP = """
for i in range(100_000):
    size = (1_000, 50_000, 1_000_000)[i % 3]
    pi_notebook.record(UserMessage(content=f"probe {i} " + "x" * size))
"""


def _fully_written(data: bytes) -> tuple[list[dict[str, Any]], bytes]:
    """The entries of complete lines (newline-terminated, valid JSON), and the torn tail after them."""
    *lines, tail = data.split(b"\n")
    return [json.loads(line) for line in lines if line.strip()], tail


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in messages:
        content = m.get("content", m.get("output", ""))
        out.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return out


def test_kill_9_mid_append_loses_only_the_torn_line_and_appending_works_again(kernels, tmp_path):
    kernel = kernels()
    kernel.run(SETUP)
    kernel.run("%bash echo recorded before the crash", cell_id="c1")
    kernel.run('faux.set_responses(["Noted before the crash."])')
    assert "Noted before the crash." in kernel.run("%%agent --model faux/faux-1 --tools none\nRemember 42.", "c2")
    path = tmp_path / ".pi_sessions" / "work.jsonl"
    before = kernel.messages()
    assert [m["role"] for m in before] == ["bashExecution", "user", "assistant"]

    kernel.send(RECORD_LOOP, cell_id="c3")
    # Let the loop write a few dozen entries (a third of them 1 MB, so the kill may well land inside a write).
    _wait_for(lambda: path.read_bytes().count(b'"probe ') >= 40, 120, "40 probe entries written")
    os.kill(kernel.pid, signal.SIGKILL)
    _wait_for(lambda: not kernel.km.is_alive(), 30, "the killed kernel to be gone")

    data = path.read_bytes()
    entries, tail = _fully_written(data)
    if not tail or _parses(tail):  # the kill fell between two writes: cut the last line as a kill inside one does
        data = data if not tail else data + b"\n"
        cut = data.rfind(b"\n", 0, len(data) - 1) + 1
        path.write_bytes(data[: cut + (len(data) - cut) // 2])
        entries, tail = _fully_written(path.read_bytes())
    assert tail and not tail.endswith(b"}")  # a torn line, as a crash leaves it
    written = [e["message"] for e in entries if e["type"] == "message"]
    probes = [t for t in _texts(written) if t.startswith("probe ")]
    assert len(probes) >= 39 and [int(t.split()[1]) for t in probes] == list(range(len(probes)))

    kernel = kernels()  # a new kernel in the same folder, for the same notebook
    kernel.run(SETUP)
    after = kernel.messages()
    assert after == written  # every message whose line was complete, in order, and nothing else
    assert after[: len(before)] == before

    kernel.run("%bash echo recorded after the crash", cell_id="c4")
    kernel.run('pi_notebook.record(UserMessage(content="recorded after the crash"))')
    assert _texts(kernel.messages()[len(written) :]) == ["recorded after the crash\n", "recorded after the crash"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reopened = SessionFile.open(path, readonly=True)
    lost = [str(w.message) for w in caught if issubclass(w.category, SessionWarning)]
    assert len(lost) == 1 and "not valid JSON" in lost[0], lost  # the torn line, and only it
    context = [m.to_pi_json() for m in reopened.build_session_context().messages]
    assert context[: len(written)] == written
    assert _texts(context[len(written) :]) == ["recorded after the crash\n", "recorded after the crash"]
    # The new entries start on a line of their own: every line but the torn one parses.
    lines = [line for line in path.read_bytes().split(b"\n") if line.strip()]
    assert [line for line in lines if not _parses(line)] == [tail]


def test_the_user_is_told_of_a_torn_line_in_one_clear_line(kernels, tmp_path):
    path = tmp_path / ".pi_sessions" / "work.jsonl"
    with SessionFile.create(path, cwd=str(tmp_path)) as session:
        session.append_message({"role": "user", "content": "kept", "timestamp": 1})
        session.append_message({"role": "user", "content": "torn", "timestamp": 2})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])  # what kill -9 inside the last write leaves
    kernel = kernels()
    shown = kernel.run(SETUP)
    assert _texts(kernel.messages()) == ["kept"]
    lines = [line for line in shown.splitlines() if line.strip()]
    assert len(lines) == 1 and "line 3" in lines[0] and ".py:" not in lines[0], shown


# --- interrupting %bash: the whole process group goes, even when it ignores SIGINT and SIGTERM -------------


def test_interrupting_bash_that_ignores_int_and_term_kills_its_process_group(kernels):
    kernel = kernels()
    kernel.run(SETUP)
    # A foreground sleep, a background one and an orphan (its subshell exits): all ignore SIGINT and SIGTERM.
    command = "%bash trap '' INT TERM; (sleep 61 &); sleep 62 & sleep 60; echo never"
    msg_id = kernel.send(command, cell_id="c1")
    sleeps = _wait_for(
        lambda: (s := _sleeps_of(kernel, "60") + _sleeps_of(kernel, "62")) and len(s) == 2 and s,
        60,
        "two sleeps running under the kernel",
    )
    groups = {_stat(pid)[2] for pid in sleeps}
    assert len(groups) == 1 and kernel.pid not in groups  # one group of its own, not the kernel's
    (group,) = groups
    # The orphan was re-parented (to init or a subreaper) but stays in the group.
    sleeps += _wait_for(
        lambda: [p for p in _alive_in_group(group) if _cmdline(p) == ["sleep", "61"]], 30, "the orphaned sleep"
    )
    started = time.monotonic()
    kernel.km.interrupt_kernel()
    reply = kernel.watch(msg_id, timeout=60)
    took = time.monotonic() - started
    assert not _alive_in_group(group), [(_cmdline(p), _stat(p)) for p in _alive_in_group(group)]
    assert all(_stat(pid) is None or _stat(pid)[0] in "ZX" for pid in sleeps)
    assert took < 30  # SIGINT, SIGTERM, SIGKILL take about 3 s; a hang would take 60
    last = kernel.messages()[-1]
    assert last["role"] == "bashExecution" and last["cancelled"] is True and last.get("exitCode") is None
    assert "never" not in last["output"]
    assert "cancelled" in reply.output  # what the cell shows, and one line saying it was stopped
    (error,) = reply.errors
    assert error["ename"] == "CellInterrupted" and _one_line(error).startswith("Interrupted: "), error


def test_bash_timeout_with_trap_term_kills_the_group_and_records_cancelled(kernels):
    kernel = kernels()
    kernel.run(SETUP)
    started = time.monotonic()
    out = kernel.run("%bash --timeout 1 trap '' INT TERM; echo started; sleep 63 & sleep 64", cell_id="c1")
    assert time.monotonic() - started < 40
    assert not _sleeps_of(kernel, "63") and not _sleeps_of(kernel, "64")
    assert not [p for p in _running_pids() if _cmdline(p) in (["sleep", "63"], ["sleep", "64"])
                and _stat(p) and _stat(p)[0] not in "ZX"]  # fmt: skip
    last = kernel.messages()[-1]
    assert last["cancelled"] is True and last["output"].startswith("started")
    assert "cancelled" in out


# --- interrupting a streaming %%agent: the partial reply is kept, as aborted -------------------------------------


def test_interrupting_a_streaming_agent_keeps_the_partial_reply_as_aborted(kernels, tmp_path):
    kernel = kernels()
    kernel.run(SETUP)
    kernel.run(
        "faux.provider.tokens_per_second = 20\nfaux.provider.chunk_chars = 4\n"
        'faux.set_responses([" ".join(f"w{i}" for i in range(600))])'
    )
    msg_id = kernel.send("%%agent --model faux/faux-1 --tools none\nCount slowly.", cell_id="c1")
    # Wait until the live view shows part of the reply past "w12". Updates carry only the new text, so "w12"
    # itself may be split between two of them: wait for any whole word from w12 on in one update.
    past_w12 = re.compile(r"\bw(1[2-9]|[2-9]\d|\d{3})\b")
    reply = kernel.watch(msg_id, until=lambda r: any(past_w12.search(c) for c in r.comm), timeout=90)
    assert not reply.idle
    kernel.km.interrupt_kernel()
    reply = kernel.watch(msg_id, reply, timeout=60)
    (error,) = reply.errors
    assert error["ename"] == "CellInterrupted"
    assert _one_line(error) == "Interrupted: the run was aborted; everything said so far is kept in the session."
    user, partial = kernel.messages()[-2:]
    assert user["role"] == "user" and _texts([user]) == ["Count slowly."]
    assert partial["role"] == "assistant" and partial["stopReason"] == "aborted"
    text = "".join(b["text"] for b in partial["content"] if b["type"] == "text")
    full = " ".join(f"w{i}" for i in range(600))
    assert full.startswith(text) and "w12" in text and len(text) < len(full)  # what had arrived, exactly
    # The file holds the same partial reply: it survives a restart.
    kernel.shutdown()
    stored = SessionFile.open(tmp_path / ".pi_sessions" / "work.jsonl", readonly=True)
    assert stored.build_session_context().messages[-1].to_pi_json() == partial
