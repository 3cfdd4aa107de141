"""Run the notebook layer as on Windows, on Linux: a script for ``tests/test_windows_import.py`` (not a test module).

``python tests/windows_sim.py scenario REPORT`` first takes away what Windows does not have, then loads the
extension in a real IPython shell and uses it, writing what it saw to REPORT (JSON). Taken away before anything
else is imported: the modules ``fcntl``, ``termios``, ``pty``, ``tty``, ``resource`` (``import`` fails), the
process-group and POSIX-only functions of ``os`` (``killpg``, ``getpgid``, ``setsid``, ``pidfd_open``,
``set_blocking``...) and the POSIX-only names of ``signal`` (``SIGKILL``, ``SIGALRM``, ``setitimer``...).

Put in their place, so that the Windows code paths run rather than only import: stand-ins for what Windows has
and Linux does not, each as thin as it can be and none of them pi_notebook's code:

* ``msvcrt.locking`` (byte-range locks held by the handle, released on close): Linux's open-file-description
  locks (``F_OFD_SETLK``) on the same range, which behave alike (a second handle conflicts, in this process or
  another). It records each range locked.
* ``signal.CTRL_BREAK_EVENT``: ``SIGINT``, sent to the shell.
* ``taskkill``: a script on PATH (written by the test) that logs its arguments and kills the process tree.
* ``Popen.kill`` (Windows: ``TerminateProcess``): signal 9 by number, ``signal.SIGKILL`` being gone.

``python tests/windows_sim.py second-writer SESSION_FILE`` (the same set-up) tries to open the file for writing and
prints ``locked`` if it is refused.
"""

from __future__ import annotations

import errno
import importlib.abc
import os
import signal
import struct
import subprocess
import sys
import types

HIDDEN_MODULES = ("fcntl", "termios", "pty", "tty", "resource")
HIDDEN_OS = (
    "killpg", "getpgid", "setpgid", "getpgrp", "setpgrp", "setsid", "getsid", "tcgetpgrp", "tcsetpgrp",
    "pidfd_open", "fork", "forkpty", "openpty", "wait3", "wait4", "set_blocking", "get_blocking",
)  # fmt: skip
HIDDEN_SIGNAL = (
    "SIGKILL", "SIGALRM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGPIPE", "SIGSTOP", "SIGCONT",
    "setitimer", "getitimer", "alarm", "pause", "siginterrupt", "ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF",
)  # fmt: skip

LOCKED: list[tuple[int, int]] = []
"""(offset, length) of each range the stand-in msvcrt locked."""


class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in HIDDEN_MODULES:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden: Windows has none)", name=name)
        return None


def hide_posix() -> None:
    import fcntl as real_fcntl  # kept for the stand-in msvcrt only

    for name in HIDDEN_MODULES:
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, _Hide())
    for name in HIDDEN_OS:
        if hasattr(os, name):
            delattr(os, name)
    for name in HIDDEN_SIGNAL:
        if hasattr(signal, name):
            delattr(signal, name)

    msvcrt = types.ModuleType("msvcrt")
    msvcrt.LK_UNLCK, msvcrt.LK_LOCK, msvcrt.LK_NBLCK, msvcrt.LK_RLCK, msvcrt.LK_NBRLCK = 0, 1, 2, 3, 4

    def locking(fd: int, mode: int, nbytes: int) -> None:
        """From the file position, ``nbytes`` long; ``OSError(EACCES)`` if taken, as msvcrt raises for LK_NBLCK."""
        start = os.lseek(fd, 0, os.SEEK_CUR)
        kind = real_fcntl.F_UNLCK if mode == msvcrt.LK_UNLCK else real_fcntl.F_WRLCK
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks).
        request = struct.pack("hhqqi4x", kind, os.SEEK_SET, start, nbytes, 0)
        try:
            real_fcntl.fcntl(fd, real_fcntl.F_OFD_SETLK, request)
        except OSError as e:
            raise OSError(errno.EACCES, "Permission denied") from e
        if mode != msvcrt.LK_UNLCK:
            LOCKED.append((start, nbytes))

    msvcrt.locking = locking
    sys.modules["msvcrt"] = msvcrt
    signal.CTRL_BREAK_EVENT = signal.SIGINT
    subprocess.Popen.kill = lambda self: self.send_signal(9)


def scenario(report_path: str) -> None:
    import _thread
    import json
    import threading
    import time
    from pathlib import Path

    report: dict = {}
    try:
        import fcntl  # noqa: F401
    except ImportError:
        report["fcntl_import_fails"] = True
    report["killpg"] = hasattr(os, "killpg")

    from IPython.core.interactiveshell import InteractiveShell

    from pi_notebook.ai import faux
    from pi_notebook.coding_agent import session_lock
    from pi_notebook.coding_agent.session import SessionFile, SessionLockedError
    from pi_notebook.coding_agent.tools import process_tree

    report["process_groups"] = process_tree.PROCESS_GROUPS
    report["lock_module"] = getattr(session_lock._msvcrt, "__name__", None)

    ip = InteractiveShell.instance()
    ip.user_ns["__session__"] = str(Path.cwd() / "analysis.ipynb")
    ip.run_line_magic("load_ext", "pi_notebook")

    import pi_notebook

    session = pi_notebook.current_session()

    def cell(code: str):
        result = ip.run_cell(code, store_history=False)
        return None if result.error_in_exec is None else repr(result.error_in_exec)

    report["bash_error"] = cell("%bash echo hello from a shell without process groups")
    m = session.messages[-1]
    report["bash"] = [m.output, m.exit_code, m.cancelled]

    # The timeout: Ctrl+Break (the stand-in: SIGINT) is ignored, so taskkill /T /F ends the tree.
    started = time.monotonic()
    cell("%bash --timeout 0.5 trap '' INT; echo waiting; sleep 30")
    m = session.messages[-1]
    report["timeout"] = [m.output, m.exit_code, m.cancelled, time.monotonic() - started]

    # The stop button: Ctrl+Break stops a command that does not ignore it.
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    cell("%bash echo started; sleep 30")
    timer.join()
    m = session.messages[-1]
    report["interrupt"] = [m.output, m.cancelled, time.monotonic() - started]

    faux.set_responses(
        [
            [faux.tool_call("bash", {"command": "echo from the bash tool"}, id="c1")],
            [faux.tool_call("python", {"code": "while True: pass", "timeout": 0.5}, id="c2")],
            "Both ran.",
        ]
    )
    report["agent_error"] = cell("%%agent --model faux/faux-1 --tools bash,python\nRun them.")
    report["roles"] = [m.role for m in session.messages]
    results = [m for m in session.messages if m.role == "toolResult"]
    report["tool_results"] = [[r.is_error, "".join(getattr(b, "text", "") for b in r.content)] for r in results]
    report["last_reply"] = "".join(getattr(b, "text", "") for b in session.messages[-1].content)

    path = Path(session.file.path)
    report["file_roles"] = [
        json.loads(line)["message"]["role"]
        for line in path.read_text(encoding="utf-8").splitlines()[1:]
        if json.loads(line)["type"] == "message"
    ]
    report["file_size"] = path.stat().st_size
    report["locked_ranges"] = list(LOCKED)

    try:
        SessionFile.open(path).close()
        report["second_writer_here"] = "opened"
    except SessionLockedError:
        report["second_writer_here"] = "locked"
    with SessionFile.open(path, readonly=True) as reader:
        report["reader_messages"] = len(reader.entries)
    other = subprocess.run(
        [sys.executable, __file__, "second-writer", str(path)], capture_output=True, text=True, timeout=120
    )
    report["second_writer_process"] = other.stdout.strip() or other.stderr[-2000:]

    before = [m.role for m in session.messages]
    ip.run_line_magic("unload_ext", "pi_notebook")  # closes the file: the lock goes with it
    with SessionFile.open(path) as writer:
        report["writer_after_close"] = len(writer.entries)
    ip.run_line_magic("load_ext", "pi_notebook")  # what a restarted kernel does: the file reopened
    report["reopened_roles"] = [m.role for m in pi_notebook.current_session().messages]
    report["same_after_reopen"] = report["reopened_roles"] == before
    report["bash_after_reopen_error"] = cell("%bash echo again")
    report["bash_after_reopen"] = pi_notebook.current_session().messages[-1].output
    ip.run_line_magic("unload_ext", "pi_notebook")

    report["posix_modules_loaded"] = sorted(m for m in HIDDEN_MODULES if m in sys.modules)
    Path(report_path).write_text(json.dumps(report), encoding="utf-8")


def second_writer(path: str) -> None:
    from pi_notebook.coding_agent.session import SessionFile, SessionLockedError

    try:
        SessionFile.open(path).close()
    except SessionLockedError:
        print("locked")
        return
    print("opened")


if __name__ == "__main__":
    hide_posix()
    if sys.argv[1] == "scenario":
        scenario(sys.argv[2])
    else:
        second_writer(sys.argv[2])
