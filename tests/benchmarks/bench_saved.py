"""Saved notebooks (#13): how big an executed notebook is on disk, against the session file it shows.

Every notebook is executed through a real kernel (nbclient, as ``jupyter nbconvert --execute`` runs it) and
written with nbformat, as Jupyter saves it; its outputs are never written by hand.

- P7: 10 ``%%agent`` cells (100 messages, the faux provider with tools) — the .ipynb against the session JSONL,
  with the widget state a front end saves ("Save Widget State Automatically") and without any. nbclient keeps the
  state of a widget the kernel closed, which JupyterLab drops with the model: the state saved here is that of the
  widgets still open, as JupyterLab would save it (the browser test saves it in JupyterLab itself).
- P7c: 20 ``%bash echo hi`` cells: the .ipynb size.
- P7d: one ``%%agent`` cell whose prompt (a notebook variable, ``{prompt}``) is 5 MB: the .ipynb against the
  prompt's size.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .harness import Result, Stat, measure

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


def execute(folder: Path, cells: list[str], name: str = "saved") -> tuple[Path, Path]:
    """Run ``cells`` in a fresh kernel in ``folder``; write the notebook with and without its widget state.
    Returns the two paths."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    saved = os.environ.pop("JPY_SESSION_NAME", None)  # headless, as nbconvert --execute runs
    try:
        _client_class()(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        if saved is not None:
            os.environ["JPY_SESSION_NAME"] = saved
    with_state = folder / f"{name}.ipynb"
    nbformat.write(nb, with_state)
    nb.metadata.pop("widgets", None)
    without = folder / f"{name}-no-state.ipynb"
    nbformat.write(nb, without)
    return with_state, without


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


@measure("P7", "saved .ipynb sizes: 10 %%agent cells, 20 %bash cells, a 5 MB prompt")
def saved_sizes(quick: bool) -> list[Result]:
    folder = Path(tempfile.mkdtemp(prefix="pi-bench-p7-"))
    results = []
    try:
        agent = folder / "agent"
        agent.mkdir()
        _files(agent)
        cells = 2 if quick else 10
        with_state, without = execute(agent, agent_cells(cells))
        jsonl = session_file(agent).stat().st_size
        what = f"{cells} %%agent cells ({cells * 10} messages) .ipynb"
        for rid, path, goal, limit, how in (
            ("P7", with_state, "≤ 2×", 2.0, "with the widget state JupyterLab would save"),
            ("P7b", without, "≤ 1.5×", 1.5, "without widget state"),
        ):
            size = path.stat().st_size
            row = Result(
                rid, f"{what}, {how}", "the session JSONL", Stat.of([size / 1e3]), Stat.of([jsonl / 1e3]),
                unit="kB", goal=goal, note=f".ipynb {size:,} B, session file {jsonl:,} B",
            )  # fmt: skip
            row.met = None if quick else size / jsonl <= limit
            results.append(row)

        bash = folder / "bash"
        bash.mkdir()
        count = 5 if quick else 20
        _, bash_nb = execute(bash, [SETUP, *["%bash echo hi"] * count])
        size = bash_nb.stat().st_size
        row = Result(
            "P7c", f"{count} %bash echo hi cells: .ipynb size", "—", Stat.of([size / 1e3]), unit="kB",
            goal="≤ 100 kB (20 cells)", note=f"{size:,} B, {size / count:,.0f} B per cell",
        )  # fmt: skip
        row.met = None if quick else size <= 100_000
        results.append(row)

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
            Stat.of([len(prompt) / 1e6]), unit="MB", goal="≤ 1.5×", note=f".ipynb {size:,} B",
        )  # fmt: skip
        row.met = None if quick else size / len(prompt) <= 1.5
        results.append(row)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results
