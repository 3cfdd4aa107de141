"""A disk that is really full, for the ``ENOSPC`` cases: a small tmpfs mounted under a test's tmp dir.

:class:`FullDisk` mounts a 1 MiB tmpfs (root, or ``CAP_SYS_ADMIN``), fills it with a filler file until the kernel
answers ``ENOSPC``, frees it by removing the filler, and unmounts it at the end, also when the test fails.
Filling leaves each file's last page partly free (tmpfs allocates whole pages): a write that must allocate a page
fails, a short append into that slack may still succeed, as on any real disk.

Where mounting is not permitted, the fallback is the same failure raised where it would be raised: inside the
process that writes (the kernel), every write to a file under the folder (``os.write`` and every file object
``open`` gives, ``pathlib`` and ``os.fdopen`` included) fails with ``OSError(ENOSPC)`` while the disk is "full".
:attr:`FullDisk.how` says which one a test ran on; ``PI_NOTEBOOK_TEST_FAKE_FULL_DISK=1`` forces the fallback.
"""

from __future__ import annotations

import errno
import io
import os
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
SIZE = "1m"
FORCE_FALLBACK = "PI_NOTEBOOK_TEST_FAKE_FULL_DISK"


def _mount(folder: Path) -> bool:
    """Mount a tmpfs of :data:`SIZE` on ``folder``; False where that is not permitted."""
    if os.environ.get(FORCE_FALLBACK) == "1" or os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0755", "tmpfs", str(folder)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.returncode == 0


class FullDisk:
    """A folder on a small filesystem that :meth:`fill` makes full and :meth:`free` frees again."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.mounted = _mount(folder)
        self.how = (
            f"a {SIZE} tmpfs mounted on {folder}"
            if self.mounted
            else "mounting not permitted: ENOSPC raised for writes under the folder in the writing process"
        )
        self.filler = folder / "filler"

    def fill(self, *kernels: Any) -> None:
        """Make the disk full (with the fallback: for these kernels, each a process that writes there)."""
        if self.mounted:
            fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                while True:
                    os.write(fd, b"\0" * 65536)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
            finally:
                os.close(fd)
            assert os.statvfs(self.folder).f_bavail == 0
        else:
            for kernel in kernels:
                kernel.run(f"{_IMPORT}\nfake_full({str(self.folder)!r})")

    def free(self, *kernels: Any) -> None:
        """Free the space again."""
        if self.mounted:
            self.filler.unlink(missing_ok=True)
        else:
            for kernel in kernels:
                kernel.run(f"{_IMPORT}\nfake_full(None)")

    def close(self) -> None:
        """Unmount (the processes using it must be gone); lazily, as a last resort, so nothing stays mounted."""
        if not self.mounted:
            return
        for _ in range(50):
            if subprocess.run(["umount", str(self.folder)], capture_output=True, check=False).returncode == 0:
                self.mounted = False
                return
            time.sleep(0.1)  # a kernel that was just shut down may still hold a file or its cwd there
        subprocess.run(["umount", "--lazy", str(self.folder)], capture_output=True, check=True)
        self.mounted = False
        raise AssertionError(f"{self.folder} was still busy after the kernels were shut down (unmounted lazily)")


# --- the fallback, run inside the kernel -------------------------------------------------------------------

_IMPORT = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom tests.reliability.full_disk import fake_full"
_full: list[str] = []  # the folder (with a trailing separator) whose files cannot be written, if any


def fake_full(folder: str | None) -> None:
    """In this process, make every write to a file under ``folder`` fail with ``ENOSPC`` (``None``: writes work
    again). Files opened before this call are covered too: the check is made at each write."""
    _install()
    _full[:] = [os.path.realpath(folder) + os.sep] if folder else []


def _refused(fd: int) -> bool:
    if not _full:
        return False
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return False
    return target.startswith(_full[0])


def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _FileIO(io.FileIO):
    def write(self, data: Any) -> int:
        if _refused(self.fileno()):
            raise _enospc()
        return super().write(data)


def _install() -> None:
    import builtins

    if getattr(os.write, "_full_disk", False):
        return
    real_write, real_open = os.write, io.open

    def write(fd: int, data: Any) -> int:
        if _refused(fd):
            raise _enospc()
        return real_write(fd, data)

    def open_(file: Any, mode: str = "r", buffering: int = -1, encoding: str | None = None, errors: str | None = None,
              newline: str | None = None, closefd: bool = True, opener: Any = None) -> Any:  # fmt: skip
        if not any(c in mode for c in "wax+"):
            return real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
        raw = _FileIO(file, mode.replace("b", "").replace("t", ""), closefd=closefd, opener=opener)
        if "b" in mode and buffering == 0:
            return raw
        size = io.DEFAULT_BUFFER_SIZE if buffering in (-1, 0, 1) else buffering
        buffered = (io.BufferedRandom if "+" in mode else io.BufferedWriter)(raw, size)
        if "b" in mode:
            return buffered
        return io.TextIOWrapper(buffered, encoding, errors, newline, line_buffering=buffering == 1)

    write._full_disk = True  # type: ignore[attr-defined]
    os.write = write
    io.open = builtins.open = open_
