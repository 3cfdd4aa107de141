"""The settings as a user of a real kernel gives them (#26 item 1): ``c.PiNotebook.x`` in the profile's
``ipython_config.py``, then IPython's ``%config`` in cells, each reaching the next ``%%agent``, a refused value said
in the cell, and ``%agent_config`` telling which value came from where, also after ``%reload_ext``. A real ipykernel
started by nbclient with ``IPYTHONDIR`` in a temporary folder; the scripted faux model answers."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

CONFIG_FILE = """c = get_config()
c.PiNotebook.default_model = "faux/faux-1"
c.PiNotebook.max_turns = 5
c.PiNotebook.cells = "off"
c.PiNotebook.thinking = "hard"
"""
LOOKING = (  # a new folder each call: the loop guard stops repeated calls
    "from pi_notebook.ai import faux\nfaux.reset()\n"
    'faux.set_responses([lambda: [faux.tool_call("ls", {"path": f"d{len(faux.calls)}"})]] * 10)'
)
CELLS = [
    "%load_ext pi_notebook",  # 0
    LOOKING,  # 1
    "%%agent --tools ls\nLook everywhere.",  # 2
    "import pi_notebook\n"
    "last = [m for m in pi_notebook.current_session().messages if m.role == 'assistant'][-1]\n"
    "print('calls', len(faux.calls), last.model)",  # 3
    "%config PiNotebook.max_turns = -1",  # 4
    "%config PiNotebook.max_turns = 2",  # 5
    LOOKING,  # 6
    "%%agent --tools ls\nLook again.",  # 7
    "print('calls', len(faux.calls))",  # 8
    "%agent_config warm_up=off",  # 9
    "%reload_ext pi_notebook",  # 10
    "%agent_config",  # 11
]


def text(cell) -> str:
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def row(output: str, name: str) -> list[str]:
    """``%agent_config``'s row for ``name``: [name, where from, value]."""
    line = next(line for line in output.splitlines() if line.startswith(f"{name} "))
    return [part.strip() for part in line.split("  ") if part.strip()]


def test_a_profile_config_file_then_percent_config_in_a_real_kernel(tmp_path, monkeypatch):
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_config.py").write_text(CONFIG_FILE)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("PI_NOTEBOOK_MCP_CONFIG", str(tmp_path / "no-mcp.json"))
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "JPY_SESSION_NAME"):
        monkeypatch.delenv(key, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    cells = nb.cells

    assert "c.PiNotebook.thinking = 'hard' is ignored (must be one of off, minimal" in text(cells[0])
    assert text(cells[3]) == "calls 5 faux-1\n"  # the file's model and max_turns
    said = text(cells[4])  # IPython's %config reports the refusal in the cell and goes on
    assert "PiNotebook.max_turns: must be 0 (no limit) or more, not -1; max_turns stays 5" in said
    assert said.count("\n") == 1
    assert text(cells[8]) == "calls 2\n"  # %config reached the next run

    table = text(cells[11])  # after %reload_ext: %config's values stay (IPython keeps them), %agent_config's go
    assert row(table, "default_model") == ["default_model", "config file", "'faux/faux-1'"]
    assert row(table, "cells") == ["cells", "config file", "'off'"]
    assert row(table, "max_turns") == ["max_turns", "%config", "2"]
    assert row(table, "thinking") == ["thinking", "default", "'off'"]
    assert row(table, "warm_up") == ["warm_up", "default", "True"]
    assert "is ignored" not in text(cells[10]).replace("c.PiNotebook.thinking = 'hard' is ignored", "")
