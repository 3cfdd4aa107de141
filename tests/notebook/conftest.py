"""A real IPython shell with the extension loaded, in a temporary notebook folder."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from pi_notebook.ai import faux
from pi_notebook.notebook.widgets import TranscriptWidget


class Shell:
    """The shell plus helpers to run magics the way a cell does."""

    def __init__(self, ip: InteractiveShell, notebook):
        self.ip = ip
        self.notebook = notebook

    def cell(self, code: str, cell_id: str | None = None):
        self.ip.parent_header = {"metadata": {"cellId": cell_id}} if cell_id else {}
        return self.ip.run_cell(code, store_history=False)

    def agent(self, prompt: str, options: str = "--model faux/faux-1 --tools none", cell_id: str | None = None):
        return self.cell(f"%%agent {options}\n{prompt}", cell_id)

    @property
    def session(self):
        import pi_notebook

        return pi_notebook.current_session()


@pytest.fixture
def shell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setenv("PI_NOTEBOOK_MCP_CONFIG", str(tmp_path / "no-mcp.json"))  # not the developer's own servers
    faux.reset()
    ip = InteractiveShell.instance()
    notebook = tmp_path / "analysis.ipynb"
    ip.user_ns["__session__"] = str(notebook)
    ip.run_line_magic("load_ext", "pi_notebook")
    yield Shell(ip, notebook)
    ip.run_line_magic("unload_ext", "pi_notebook")
    ip.user_ns.pop("__session__", None)
    faux.reset()


@pytest.fixture
def statuses(shell, monkeypatch):
    """The status texts the live views of the cells were given (the shell acts as a front end's kernel)."""
    said: list[str] = []
    original = TranscriptWidget.set_status

    def record(self, text):
        said.append(text)
        original(self, text)

    monkeypatch.setattr(TranscriptWidget, "set_status", record)
    monkeypatch.setattr(shell.ip, "kernel", object(), raising=False)  # live views, as in Jupyter
    return said
