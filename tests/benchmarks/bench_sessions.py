"""P5, P5b, P5c: restoring and appending to Pi session files, against the least any reader or writer must do.

* **P5** restores a 10,000-entry session: ``SessionFile.open`` + ``build_session_context``, the path a restarted
  kernel takes. The file is written with ``SessionFile``'s own appends
  (:func:`.bench_session_load.write_session`: user turns, assistant replies with thinking and tool calls, tool
  results, ``!`` commands, extension messages, labels, a branch, and a compaction every 300 turns, as a long
  session has). *Baseline*: read the bytes, decode, split the lines, ``json.loads`` each one. A second row does
  the same on a session without compaction, where every message of the file is typed into the context (the
  message lines typed straight from their bytes, ``session_json``), ≤ 1.5×. Two reference rows split it: the
  open alone (no message typed) and the message lines typed alone (what the context adds); where it misses, the
  floor it stands on is the sum of their times (against its own baseline).
* **P5b** is ``%load_ext pi_notebook`` on a notebook whose session (``.pi_sessions/<name>.jsonl``, the
  notebook's default path) has 200,000 entries (quick: 20,000), in a fresh Python process each time: the
  wall time of the ``%load_ext`` (``pi_notebook`` and IPython already imported, so the attach is what is
  timed; the import time is in the note), and the growth of the process's resident memory (``VmRSS``) over it,
  against the file's size. The goal is absolute (≤ 5 s); for a busy machine, the same process then times
  ``json.loads`` of every line of the file as a reference (the ratio column).
* **P5c** is 10,000 ``append_message`` calls of Pi-JSON messages (each durable at once: one ``write`` on the
  file descriptor per entry) into a fresh session. *Baseline*: ``f.write(json.dumps(d) + "\\n"); f.flush()`` of
  the same dicts (also one ``write`` syscall per line).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path
from typing import Any

from pi_notebook.coding_agent.session import SessionFile
from pi_notebook.coding_agent.session_entries import SessionWarning

from .bench_session_load import write_session
from .harness import Result, Stat, compare, goal, measure, ratio_goal

ROOT = Path(__file__).resolve().parents[2]


# --- P5 ---------------------------------------------------------------------------------------------------


def read_every_line(path: Path) -> int:
    """The baseline: the bytes, decoded, split on newlines, every line through ``json.loads``."""
    count = 0
    for line in path.read_bytes().decode("utf-8").split("\n"):
        if line:
            json.loads(line)
            count += 1
    return count


def restore(path: Path) -> int:
    """What a restarted kernel does with its session file: open it, build the context at the leaf."""
    with SessionFile.open(path, readonly=True) as session:
        return len(session.build_session_context().messages)


@measure("P5", "restore a 10,000-entry session (SessionFile.open + build_session_context)")
def p5(quick: bool) -> list[Result]:
    entries, repeats = (2_000, 1) if quick else (10_000, 7)
    results = []
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("error", SessionWarning)  # the files written here must load cleanly
        for compactions, what in ((True, "with compactions (realistic)"), (False, "no compaction: all typed")):
            path = Path(tmp) / f"bench-{compactions}.jsonl"
            write_session(path, entries, compactions=compactions)
            messages = restore(path)
            base, ours = compare(lambda path=path: read_every_line(path), lambda path=path: restore(path), repeats)
            size = path.stat().st_size / 1e6
            result = Result(
                "P5",
                f"open + context, {entries:,} entries ({size:.1f} MB), {what}",
                "json.loads per line",
                ours,
                base,
                note=f"{messages:,} messages in the context",
            )
            if compactions:
                results.append(ratio_goal(result, 3.0, quick))
                continue
            results.append(ratio_goal(result, 1.5, quick, noise=0.10))
            results += _parts(path, repeats, result)
    return results


def _parts(path: Path, repeats: int, whole: Result) -> list[Result]:
    """The parts of an all-typed restore, each against its own interleaved baseline: the open alone (no message
    typed), the message lines typed alone (P1b's path), and the walk (the context built again, its messages
    typed already). Their times summed, against the whole's baseline, are the floor ``whole`` stands on if it
    misses."""
    from pi_notebook.coding_agent.session_json import message_from_line

    def open_only() -> int:
        with SessionFile.open(path, readonly=True) as session:
            return len(session.entries)

    lines = []
    for line in path.read_bytes().split(b"\n"):
        if line.startswith(b'{"type":"message"'):
            lines.append((line, json.loads(line)["message"]["role"]))
    session = SessionFile.open(path, readonly=True)
    try:
        session.build_session_context()  # every message typed once, kept by its entry
        base_o, opened = compare(lambda: read_every_line(path), open_only, repeats)
        base_t, typed = compare(
            lambda: read_every_line(path), lambda: [message_from_line(*ln) for ln in lines], repeats
        )
        base_w, walk = compare(lambda: read_every_line(path), session.build_session_context, repeats)
    finally:
        session.close()
    rows = [
        Result("P5", "open alone (no message typed), the same file", "json.loads per line", opened, base_o),
        Result("P5", f"its {len(lines):,} message lines typed alone", "json.loads per line", typed, base_t),
        Result("P5", "the context built again, messages typed already", "json.loads per line", walk, base_w),
    ]
    for row in rows:
        row.note = "reference: a part of the all-typed row"
    # The parts' own times against the whole's baseline: their baselines, timed while every message of the
    # session is held typed, run up to a fifth slower than the whole's (the collector has more to walk), so a sum
    # of the parts' ratios would set the floor below the time the parts take.
    whole.floor = sum(row.ours.median for row in rows) / (whole.baseline.median if whole.baseline else 1.0)
    whole.floor_note = "its three parts measured alone"
    return rows


# --- P5b --------------------------------------------------------------------------------------------------

ATTACH = textwrap.dedent("""
    import gc, json, sys, time
    start = time.perf_counter()
    from IPython.core.interactiveshell import InteractiveShell
    import pi_notebook.notebook.extension  # the imports %load_ext would do, outside the timed attach
    imported = time.perf_counter() - start

    def rss_mb(key="VmRSS"):
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    ip = InteractiveShell.instance()
    ip.user_ns["__session__"] = sys.argv[1]
    gc.collect()
    before = rss_mb()
    start = time.perf_counter()
    ip.run_line_magic("load_ext", "pi_notebook")
    seconds = time.perf_counter() - start
    after, peak = rss_mb(), rss_mb("VmHWM")
    session = pi_notebook.current_session()
    entries, messages = len(session.file.entries), len(session.messages)
    start = time.perf_counter()  # the reference, after the memory is measured: json.loads of every line
    for line in session.file.path.read_bytes().decode("utf-8").split("\\n"):
        if line:
            json.loads(line)
    baseline = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "growth_mb": after - before, "peak_mb": peak - before,
                      "imported": imported, "entries": entries, "messages": messages, "baseline": baseline}))
""")


def attach_once(notebook: Path) -> dict[str, Any]:
    """``%load_ext pi_notebook`` on ``notebook`` in a fresh Python process: its measurements."""
    out = subprocess.run(
        [sys.executable, "-c", ATTACH, str(notebook)],
        cwd=notebook.parent,
        capture_output=True,
        text=True,
        timeout=900,
        env={**_env(), "PYTHONPATH": str(ROOT)},
    )
    if out.returncode != 0:
        raise RuntimeError(f"the attach process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "JPY_SESSION_NAME"}
    env["HOME"] = env.get("HOME", "/tmp")
    return env


@measure("P5b", "%load_ext pi_notebook on a 200,000-entry session: wall time and memory")
def p5b(quick: bool) -> list[Result]:
    entries, repeats = (20_000, 1) if quick else (200_000, 3)
    with tempfile.TemporaryDirectory() as tmp:
        notebook = Path(tmp) / "analysis.ipynb"
        path = Path(tmp) / ".pi_sessions" / "analysis.jsonl"
        path.parent.mkdir()
        with warnings.catch_warnings():
            warnings.simplefilter("error", SessionWarning)
            write_session(path, entries)
        pristine = path.read_bytes()
        size = len(pristine) / 1e6
        runs = []
        for _ in range(repeats):
            runs.append(attach_once(notebook))
            path.write_bytes(pristine)  # %load_ext may append (a merge note); every run attaches to the same file
    seconds = Stat.of([r["seconds"] for r in runs])
    growth = Stat.of([r["growth_mb"] for r in runs])
    last = runs[-1]
    imported = sorted(r["imported"] for r in runs)[len(runs) // 2]
    time_row = Result(
        "P5b",
        f"%load_ext on a {entries:,}-entry session ({size:.0f} MB), fresh process",
        "json.loads per line (reference)",
        seconds,
        Stat.of([r["baseline"] for r in runs]),
        note=f"imports before it: {imported:.2f} s; {last['messages']:,} messages in the history",
    )
    memory_row = Result(
        "P5b",
        "RSS growth over that %load_ext, against the file size",
        "file size",
        growth,
        Stat.of([size]),
        unit="MB",
        note=f"peak (VmHWM) growth {sorted(r['peak_mb'] for r in runs)[len(runs) // 2]:,.0f} MB",
    )
    return [goal(time_row, 5.0, quick, text="≤ 5 s"), ratio_goal(memory_row, 3.0, quick, noise=0.05)]


# --- P5c --------------------------------------------------------------------------------------------------


def message_dicts(count: int, tmp: Path) -> list[dict[str, Any]]:
    """``count`` realistic Pi-JSON messages: the messages of a generated session (without compaction), in order,
    repeated as needed."""
    path = tmp / "source.jsonl"
    write_session(path, min(count, 10_000) + 300, compactions=False)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    messages = [line["message"] for line in lines if line.get("type") == "message"]
    return [messages[i % len(messages)] for i in range(count)]


@measure("P5c", "10,000 append_message calls, each written at once")
def p5c(quick: bool) -> list[Result]:
    count, repeats = (1_000, 1) if quick else (10_000, 7)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        messages = message_dicts(count, folder)
        runs = iter(range(1_000_000))

        def baseline() -> None:
            with open(folder / f"base-{next(runs)}.jsonl", "w", encoding="utf-8") as f:
                for d in messages:
                    f.write(json.dumps(d) + "\n")
                    f.flush()

        def ours() -> None:
            with SessionFile.create(folder / f"ours-{next(runs)}.jsonl", cwd=tmp) as session:
                for d in messages:
                    session.append_message(d)

        base, mine = compare(baseline, ours, repeats)
        size = sum(len(json.dumps(d)) for d in messages) / 1e6
        result = Result(
            "P5c",
            f"{count:,} append_message (Pi JSON, {size:.1f} MB)",
            "json.dumps + write + flush",
            mine,
            base,
        )
    return [ratio_goal(result, 2.0, quick)]
