"""Saved notebooks (#13): how big an executed notebook is on disk, against the session file it shows.

Every notebook is executed through a real kernel (nbclient, as ``jupyter nbconvert --execute`` runs it) and
written with nbformat, as Jupyter saves it; its outputs are never written by hand.

- P7: 10 short ``%%agent`` exchanges (a one-line prompt, a one-line reply: the bar is short ones, where what a
  notebook adds per cell weighs most) — the .ipynb against the session JSONL, ≤ 2×, saved three ways: by nbclient
  as ``nbconvert --execute`` and papermill save it (it keeps the state of every widget, also those the kernel
  closed); by JupyterLab itself (Run All, then Save, with "Save Widget State Automatically" on, in the browser
  tests' JupyterLab + Chromium); and without any widget state (P7b, for reference). Each row's note splits the
  file by part (widget state, the transcript's JSON, its HTML and the HTML's style, text/plain, cell metadata and
  sources), which says where a miss comes from. nbclient writes its own execution timings into every cell's
  metadata (``record_timing``, on by default: four timestamps a cell, about 0.4× the session file here): a
  reference row runs the same notebook with ``record_timing=False``, and the nbclient row's floor is 2× plus what
  the timings add, so it is at its floor exactly when the notebook without them is within 2×. A reference row
  keeps the longer exchanges measured before (10 cells of 10 messages: 4 tool calls and their results).
- P7c: 20 ``%bash echo hi`` cells: the .ipynb size.
- P7d: one ``%%agent`` cell whose prompt (a notebook variable, ``{prompt}``) is 5 MB: the .ipynb against the
  prompt's size.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .harness import Result, Stat, goal, measure

SETUP = "%load_ext pi_notebook\nfrom pi_notebook.ai import faux"


def _client_class() -> Any:
    from nbclient import NotebookClient

    class SavingClient(NotebookClient):
        """nbclient, except that a widget the kernel closed is not saved (JupyterLab disposes of its model)."""

        def handle_comm_msg(self, outs: Any, msg: dict[str, Any], cell_index: int) -> None:
            if msg["msg_type"] == "comm_close":
                self.widget_state.pop(msg["content"]["comm_id"], None)
                self.widget_buffers.pop(msg["content"]["comm_id"], None)
                return
            super().handle_comm_msg(outs, msg, cell_index)

    return SavingClient


def execute(
    folder: Path, cells: list[str], name: str = "saved", client: Any = None, **options: Any
) -> tuple[Path, Path]:
    """Run ``cells`` in a fresh kernel in ``folder`` (with ``client``, a NotebookClient class: by default one that
    drops the state of the widgets the kernel closed; ``options``: its traits, e.g. ``record_timing=False``);
    write the notebook with and without its widget state. Returns the two paths."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    saved = os.environ.pop("JPY_SESSION_NAME", None)  # headless, as nbconvert --execute runs
    try:
        (client or _client_class())(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}, **options
        ).execute()
    finally:
        if saved is not None:
            os.environ["JPY_SESSION_NAME"] = saved
    with_state = folder / f"{name}.ipynb"
    nbformat.write(nb, with_state)
    nb.metadata.pop("widgets", None)
    without = folder / f"{name}-no-state.ipynb"
    nbformat.write(nb, without)
    return with_state, without


def _nbclient() -> Any:
    from nbclient import NotebookClient

    return NotebookClient


def session_file(folder: Path) -> Path:
    (found,) = (folder / ".pi_sessions").glob("*.jsonl")
    return found


def agent_cells(cells: int) -> list[str]:
    """A setup cell scripting every reply, then ``cells`` %%agent cells of 10 messages each: the prompt, 4 tool
    calls and their results, the answer."""
    calls = [
        'faux.tool_call("ls", {})',
        'faux.tool_call("read", {"path": "notes.txt"})',
        'faux.tool_call("ls", {"path": "."})',
        'faux.tool_call("read", {"path": "todo.txt"})',
    ]
    replies = [*calls, '"The notes say to fix the parser, and the todo list has three items left."']
    setup = f"{SETUP}\nfaux.set_responses([{', '.join(replies)}] * {cells})"
    prompts = [
        f"%%agent --model faux/faux-1 --tools ls,read\nWhat do the notes in this folder say? ({i})"
        for i in range(cells)
    ]
    return [setup, *prompts]


def _files(folder: Path) -> None:
    (folder / "notes.txt").write_text("Fix the parser: it drops the last line of a file without a newline.\n" * 3)
    (folder / "todo.txt").write_text("- parser\n- docs\n- release\n")


def short_cells(count: int) -> list[str]:
    """A setup cell, then ``count`` one-line ``%%agent`` exchanges (a one-line prompt, a one-line reply)."""
    setup = f"{SETUP}\nfaux.set_responses(['The notes say to fix the parser before the release.'] * {count})"
    return [setup, *[f"%%agent --model faux/faux-1\nWhat do the notes say? ({i})" for i in range(count)]]


def parts(path: Path) -> str:
    """Where a saved notebook's bytes are: widget state, each output type of the cells (and the HTML's
    ``<style>``), cell metadata and sources, each as compact JSON; the rest is the file's indentation and keys."""
    import json

    nb = json.loads(path.read_text(encoding="utf-8"))
    sizes: dict[str, int] = {}

    def add(part: str, value: Any) -> None:
        sizes[part] = sizes.get(part, 0) + len(json.dumps(value, separators=(",", ":")))

    add("widget state", nb["metadata"].get("widgets", {}))
    for cell in nb["cells"]:
        add("cell metadata + source", [cell.get("metadata"), cell.get("source")])
        for output in cell.get("outputs", []):
            for mime, value in output.get("data", {}).items():
                add({"application/vnd.pi-notebook.transcript+json": "transcript JSON"}.get(mime, mime), value)
                if mime == "text/html":
                    add(" of which <style>", re.findall(r"<style>.*?</style>", "".join(value), re.DOTALL))
    rest = path.stat().st_size - sum(size for part, size in sizes.items() if not part.startswith(" "))
    shown = ", ".join(f"{part.strip()} {size:,} B" for part, size in sizes.items() if size > 2)
    return f"{shown}; the rest (the file's indentation, the notebook's own keys) {rest:,} B"


def size_row(rid: str, what: str, path: Path, jsonl: int, quick: bool, limit: float | None = 2.0) -> Result:
    size = path.stat().st_size
    row = Result(
        rid, what, "the session JSONL", Stat.of([size / 1e3]), Stat.of([jsonl / 1e3]), unit="kB",
        note=f".ipynb {size:,} B, session file {jsonl:,} B: {parts(path)}",
    )  # fmt: skip
    return row if limit is None else goal(row, limit, quick, on="ratio", noise=0)  # sizes do not vary


def lab_saved(folder_name: str, cells: list[str]) -> tuple[Path, Path]:
    """Run ``cells`` in JupyterLab (Run All) and save there (Ctrl+S, widget state saved automatically, as the
    browser tests' Lab is set): the saved notebook and its session file."""
    from tests.e2e.lab import open_notebook, run_all, wait_all_cells_ran, write_notebook

    from .bench_widgets import close_page, lab, new_page

    root = lab()["root"]
    path = write_notebook(root / f"{folder_name}.ipynb", cells)
    page = new_page()
    try:
        open_notebook(page, lab()["server"], path.name)
        run_all(page)
        assert wait_all_cells_ran(page) == [], "a cell failed in JupyterLab"
        page.wait_for_timeout(500)
        page.keyboard.press("Control+s")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
    finally:
        close_page(page)
    return path, root / ".pi_sessions" / f"{folder_name}.jsonl"


@measure("P7", "saved .ipynb sizes: 10 short %%agent exchanges (nbclient, JupyterLab), 20 %bash cells, a 5 MB prompt")
def saved_sizes(quick: bool) -> list[Result]:
    folder = Path(tempfile.mkdtemp(prefix="pi-bench-p7-"))
    results = []
    try:
        count = 3 if quick else 10
        short = folder / "short"
        short.mkdir()
        with_state, without = execute(short, short_cells(count), client=_nbclient())
        jsonl = session_file(short).stat().st_size
        what = f"{count} one-line %%agent exchanges: .ipynb"
        nbclient_row = size_row(
            "P7", f"{what} saved by nbclient (nbconvert --execute), widget state kept", with_state, jsonl, quick
        )
        results.append(nbclient_row)
        untimed = folder / "untimed"
        untimed.mkdir()
        untimed_nb, _ = execute(untimed, short_cells(count), client=_nbclient(), record_timing=False)
        untimed_row = size_row(
            "P7", f"{what} saved by nbclient with record_timing=False (reference: no timings in cell metadata)",
            untimed_nb, session_file(untimed).stat().st_size, quick, None,
        )  # fmt: skip
        results.append(untimed_row)
        # nbclient's timings are nbclient's: the row stands on 2× plus what they add, measured here
        nbclient_row.floor = 2.0 + (nbclient_row.ratio or 0) - (untimed_row.ratio or 0)
        nbclient_row.floor_note = "2× + nbclient's execution timings (the record_timing=False row)"
        lab_path, lab_session = lab_saved(f"p7-short-{count}", short_cells(count))
        lab_row = size_row(
            "P7", f"{what} saved by JupyterLab (widget state on)", lab_path, lab_session.stat().st_size, quick
        )
        results.append(lab_row)
        results.append(size_row("P7b", f"{what}, without widget state (nbclient)", without, jsonl, quick, None))

        agent = folder / "agent"
        agent.mkdir()
        _files(agent)
        cells = 2 if quick else 10
        with_state, _ = execute(agent, agent_cells(cells), client=_nbclient())
        what = f"{cells} %%agent cells of 10 messages (4 tool calls): .ipynb saved by nbclient, widget state kept"
        results.append(size_row("P7", what, with_state, session_file(agent).stat().st_size, quick, None))

        bash = folder / "bash"
        bash.mkdir()
        count = 5 if quick else 20
        _, bash_nb = execute(bash, [SETUP, *["%bash echo hi"] * count])
        size = bash_nb.stat().st_size
        row = Result(
            "P7c", f"{count} %bash echo hi cells: .ipynb size", "—", Stat.of([size / 1e3]), unit="kB",
            note=f"{size:,} B, {size / count:,.0f} B per cell",
        )  # fmt: skip
        results.append(goal(row, 100, quick, text="≤ 100 kB (20 cells)", noise=0))

        big = folder / "big"
        big.mkdir()
        mb = 0.5 if quick else 5
        prompt = ("The quick brown fox jumps over the lazy dog. " * 23 + "\n") * int(mb * 1e6 / 1036)
        (big / "prompt.txt").write_text(prompt)
        cells = [
            SETUP,
            "prompt = open('prompt.txt').read()\nfaux.set_responses(['Read it all.'])",
            "%%agent --model faux/faux-1 --tools none\n{prompt}",
        ]
        _, big_nb = execute(big, cells)
        size = big_nb.stat().st_size
        row = Result(
            "P7d", f"a {len(prompt) / 1e6:.1f} MB prompt: .ipynb size", "the prompt", Stat.of([size / 1e6]),
            Stat.of([len(prompt) / 1e6]), unit="MB", note=f".ipynb {size:,} B",
        )  # fmt: skip
        results.append(goal(row, 1.5, quick, on="ratio", noise=0))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results
