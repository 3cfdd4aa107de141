"""P3: ``%bash`` of a command printing 100 MB, and of ``seq 1000000``, against reading the same pipe to nothing.

*Ours* is the path a ``%bash`` cell takes in the kernel (``NotebookSession.run_bash`` without the one session
append): :func:`~pi_notebook.notebook.runner.run_blocking` runs
:func:`~pi_notebook.coding_agent.user_bash.run_user_bash` on the background loop, with an abort signal, secret masking
on (as configured by default) and the live tail posted to the main thread, which drains it as the magic does.
A made-up ``OPENAI_API_KEY`` is set for the whole measure, so the masker is armed as it is for a user with a
provider key in their environment (the full-output file is then scanned for it once).

*The baseline* is the least any reader must do: ``subprocess.Popen`` of the same ``bash -c`` command, stdout
(stderr merged) read with ``os.read(fd, 65536)`` until EOF into nothing.

P3c is how far the resident memory rises over the 100 MB command, from just before it: in a fresh process,
after a warm-up ``%bash``, the peak (``VmHWM``) is reset (``/proc/self/clear_refs``), the resident size
(``VmRSS``) read, the command run through the same kernel path, and the new peak read: peak − before. (Not
the peak after minus an earlier peak: the warm-up's imports would hide any growth below them.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .harness import Result, Stat, goal, measure, ratio_goal, timed

LINE = "The quick brown fox jumps over the lazy dog; 0123456789 and again, one line after another."
FAKE_KEY = "sk-bench-" + "0123456789abcdef" * 3


def big_command(size: int) -> str:
    """A fast producer of ``size`` bytes of plain text lines (so the reader, not the writer, is measured)."""
    return f"yes '{LINE}' | head -c {size}"


def baseline_read(command: str, cwd: str) -> int:
    """Read the command's merged output to nothing; return the byte count."""
    proc = subprocess.Popen(
        ["/bin/bash", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    fd, total = proc.stdout.fileno(), 0
    while data := os.read(fd, 65536):
        total += len(data)
    proc.wait()
    proc.stdout.close()
    return total


def kernel_bash(command: str, cwd: str) -> Any:
    """What ``%bash command`` runs in the kernel (``NotebookSession.run_bash``), minus recording the message."""
    from pi_notebook.ai import AbortController
    from pi_notebook.coding_agent.user_bash import run_user_bash
    from pi_notebook.notebook.runner import run_blocking

    controller = AbortController()
    shown: list[Any] = []

    async def go(post: Callable[[Any], None]) -> Any:
        return await run_user_bash(command, cwd=cwd, signal=controller.signal, post=post, mask_secrets=True)

    message, interrupted = run_blocking(go, on_event=shown.append, on_interrupt=lambda _: controller.abort())
    assert message is not None and not interrupted and message.exit_code == 0, message
    return message


def interleaved(
    baseline: Callable[[], Any], ours: Callable[[], Any], repeats: int, cleanup: Callable[[], None]
) -> tuple[Stat, Stat]:
    """:func:`.harness.compare` (one warm-up each, then baseline and ours interleaved), with ``cleanup()`` run
    untimed after each call of ours."""
    baseline()
    ours()
    cleanup()
    b, o = [], []
    for _ in range(repeats):
        b.append(timed(baseline))
        o.append(timed(ours))
        cleanup()
    return Stat.of(b), Stat.of(o)


def remove_full_outputs(folder: str) -> None:
    """Delete the full-output files (``pi-bash-*.log``) a run left in ``folder``: 100 MB each."""
    for path in Path(folder).glob("pi-bash-*.log"):
        path.unlink()


_RSS_SCRIPT = textwrap.dedent(
    """
    import gc, json, os, sys
    sys.path.insert(0, os.getcwd())
    from tests.benchmarks.bench_shell import kernel_bash

    def status_kb(key):
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith(key + ":"))

    cwd = sys.argv[1]
    kernel_bash("echo warm-up", cwd)
    gc.collect()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the peak (VmHWM) starts again from the resident size now
    before = status_kb("VmRSS")
    start_peak = status_kb("VmHWM")
    message = kernel_bash(sys.argv[2], cwd)
    peak = status_kb("VmHWM")
    print(json.dumps({"grew_kb": peak - before, "reset": start_peak - before, "before_kb": before,
                      "output_len": len(message.output)}))
    """
)


def rss_growth_mb(command: str, cwd: str, env: dict[str, str]) -> dict[str, Any]:
    """Peak RSS growth of a fresh process running ``command`` through the kernel path, from just before it:
    ``grew_kb`` (peak − before), ``before_kb``, ``reset`` (the peak right after the reset, − before: ~0)."""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, cwd, command],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


@measure("P3", "%bash of 100 MB of output, and of seq 1000000 (vs reading the pipe to nothing)")
def p3(quick: bool) -> list[Result]:
    size = 10_000_000 if quick else 100_000_000
    lines = 100_000 if quick else 1_000_000
    repeats = 1 if quick else 11
    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # Full-output files go to TMPDIR: keep them in the temporary folder.
            old_tmpdir, tempfile.tempdir = tempfile.tempdir, tmp
            try:
                results = []
                for row, command, what in (
                    ("P3", big_command(size), f"%bash printing {size // 1_000_000} MB"),
                    ("P3b", f"seq {lines}", f"%bash of seq {lines}"),
                ):
                    base, ours = interleaved(
                        lambda c=command: baseline_read(c, tmp),
                        lambda c=command: kernel_bash(c, tmp),
                        repeats,
                        cleanup=lambda: remove_full_outputs(tmp),
                    )
                    result = Result(row, what, "bash | os.read loop to nothing", ours, base)
                    results.append(ratio_goal(result, 2.0, quick))
                env = {**os.environ, "TMPDIR": tmp}
                runs = [rss_growth_mb(big_command(size), tmp, env) for _ in range(1 if quick else 3)]
                rss = Result(
                    "P3c", f"peak RSS − RSS before, %bash printing {size // 1_000_000} MB", "—",
                    Stat.of([r["grew_kb"] / 1024 for r in runs]), unit="MB",
                    note=f"RSS before: {runs[-1]['before_kb'] / 1024:.0f} MB; fresh process each run",
                )  # fmt: skip
                results.append(goal(rss, 30, quick, text="≤ 30 MB", noise=0.05))
                return results
            finally:
                tempfile.tempdir = old_tmpdir
    finally:
        if saved is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = saved
