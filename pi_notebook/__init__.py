"""pi_notebook: Pi's two-layer agent message design (AgentMessage / Message) as a Jupyter extension.

``%load_ext pi_notebook`` registers ``%%agent``, ``%bash``, ``%bash!``, ``%agent_session`` and
``%agent_config``. The layers are importable on their own, as in Pi's packages: :mod:`pi_notebook.ai` (LLM
messages and providers), :mod:`pi_notebook.agent_core` (AgentMessage and its registry, the boundary, the loop)
and :mod:`pi_notebook.coding_agent` (the app's roles, session files, compaction, tools);
:mod:`pi_notebook.agent` re-exports the last two.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = [
    "__version__",
    "current_session",
    "export_html",
    "inspect",
    "load_ipython_extension",
    "record",
    "register_renderer",
    "show",
    "unload_ipython_extension",
]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt JupyterLab extension is (the labextension convention: ``jupyter labextension develop``,
    ``jupyter labextension list``); a wheel also installs it into ``share/jupyter/labextensions/pi-notebook``."""
    return [{"src": "labextension", "dest": "pi-notebook"}]


def load_ipython_extension(shell: Any) -> None:
    """Called by ``%load_ext pi_notebook``."""
    from .notebook.extension import load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """Called by ``%unload_ext pi_notebook``."""
    from .notebook.extension import unload

    unload(shell)


def current_session() -> Any:
    """The kernel's agent session: ``.messages``, ``.llm_messages()``, ``.file``, ``.agent``."""
    from .notebook.extension import current_session as get

    return get()


def record(message: Any) -> None:
    """Add any registered AgentMessage to the kernel's session."""
    current_session().record(message)


def show(messages_or_session: Any, *, show_hidden: bool = False, title: str | None = None) -> Any:
    """A transcript widget of messages (typed or Pi JSON), a session or a session file."""
    from .notebook.widgets import show as _show

    return _show(messages_or_session, show_hidden=show_hidden, title=title)


def inspect(session_or_messages: Any, model: Any = None) -> Any:
    """An inspector: each AgentMessage beside what the LLM gets, and the exact provider request bodies."""
    from .notebook.inspector import inspect as _inspect

    return _inspect(session_or_messages, model)


def export_html(session_or_messages: Any, path: Any, *, title: str | None = None) -> Any:
    """Write one self-contained, offline HTML page of a session or messages: transcript and inspector."""
    from .notebook.export import export_html as _export

    return _export(session_or_messages, path, title=title)


def register_renderer(role: str, module: Any) -> None:
    """Render ``role`` with a custom ES module (source or path) in transcripts created from now on."""
    from .notebook.widgets import register_renderer as _register

    _register(role, module)
